"""`kafkatool features`: Kafka's kafka-features.sh describe."""

from __future__ import annotations

import sys

import typer

from kafkatool.cli.app import EXIT_CODES_HELP, app, handle_errors
from kafkatool.cli.cluster_options import DEFAULT_TIMEOUT, BootstrapServer, CommandConfig, Timeout
from kafkatool.cli.kraft_options import BootstrapController, KafkaFormat, kraft_channel
from kafkatool.cli.render import check_format, render_rows

features_app = typer.Typer(
    name="features",
    help="""Feature flags (metadata.version, kraft.version, transaction.version, ...), as kafka-features.sh shows them.

\b
Examples:
  kafkatool features describe --bootstrap-server kafka1:9092
  kafkatool features describe --bootstrap-controller ctrl1:9093 --format json
""",
    no_args_is_help=True,
    context_settings={"help_option_names": ["-h", "--help"]},
)
app.add_typer(features_app, name="features")

DESCRIBE_HELP = """Describe the feature flags as `kafka-features.sh describe` does (ApiVersions v3, Kafka 2.4+): each
feature the broker (or controller) supports, in name order, its supported range, its finalized level
and the finalized features' epoch.  metadata.version levels print as release names (3.3-IV3, 4.0-IV3,
...), in the text of the release's tool (--kafka-release, else the peer's; 4.3+ pads columns).

--format json|ndjson|csv|table: rows feature, supported_min, supported_max, finalized_level, epoch.

\b
Examples:
  kafkatool features describe --bootstrap-server kafka1:9092
  kafkatool features describe --bootstrap-controller ctrl1:9093
  kafkatool features describe --bootstrap-server kafka1:9092 --format csv
"""


@features_app.command("describe", help=DESCRIBE_HELP + "\n" + EXIT_CODES_HELP)
@handle_errors
def describe(
    output_format: KafkaFormat = "text",
    bootstrap_server: BootstrapServer = None,
    bootstrap_controller: BootstrapController = None,
    command_config: CommandConfig = None,
    timeout: Timeout = DEFAULT_TIMEOUT,
) -> None:
    from kafkatool import release
    from kafkatool.cluster import features as ft

    fmt = check_format(output_format)
    with kraft_channel(
        bootstrap_server, bootstrap_controller, command_config, timeout, "features describe"
    ) as channel:
        meta = ft.describe_features(channel)
        text_release = release.text_release()
    if fmt == "text":
        sys.stdout.write(ft.describe_text(meta, text_release))
    else:
        render_rows(
            ft.feature_rows(meta),
            fmt,
            ["feature", "supported_min", "supported_max", "finalized_level", "epoch"],
        )
