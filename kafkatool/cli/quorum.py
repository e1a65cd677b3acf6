"""`kafkatool quorum`: the KRaft metadata quorum, as Kafka's kafka-metadata-quorum.sh describes it."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from kafkatool.cli.app import EXIT_CODES_HELP, app, handle_errors
from kafkatool.cli.cluster_options import DEFAULT_TIMEOUT, BootstrapServer, CommandConfig, Timeout
from kafkatool.cli.errors import CliError
from kafkatool.cli.kraft_options import BootstrapController, KafkaFormat, kraft_channel
from kafkatool.cli.render import check_format, render_json, render_rows

quorum_app = typer.Typer(
    name="quorum",
    help="""The KRaft metadata quorum, as Kafka's kafka-metadata-quorum.sh describes it.

\b
Examples:
  kafkatool quorum describe --status --bootstrap-server kafka1:9092
  kafkatool quorum describe --replication --bootstrap-controller ctrl1:9093
""",
    no_args_is_help=True,
    context_settings={"help_option_names": ["-h", "--help"]},
)
app.add_typer(quorum_app, name="quorum")

DESCRIBE_HELP = """Describe the KRaft metadata quorum as `kafka-metadata-quorum.sh describe` does (DescribeQuorum, Kafka 3.3+).

--status: cluster id, leader, epoch, high watermark, the largest follower lag, voters and observers.
--replication: one row per voter and observer: log end offset, lag behind the leader, last fetch and
last caught-up times (--human-readable: "N ms ago", Kafka 3.6+).  The text is the release's tool's
(--kafka-release, else the release of the broker or controller asked): 3.9+ prints directory ids
and controller endpoints.  Ask a broker (--bootstrap-server) or a controller (--bootstrap-controller;
a controller older than 3.7, which Kafka's tools cannot reach, is answered with 3.7's text).

--format json|ndjson|csv|table: with --replication one row per replica (node_id, directory_id,
log_end_offset, lag, last_fetch_timestamp, last_caught_up_timestamp, status, endpoints); with
--status one object (cluster_id, leader_id, leader_epoch, high_watermark, max_follower_lag,
max_follower_lag_time_ms, voters, observers).

\b
Examples:
  kafkatool quorum describe --status --bootstrap-server kafka1:9092
  kafkatool quorum describe --replication --bootstrap-controller ctrl1:9093
  kafkatool quorum describe --replication --human-readable --bootstrap-server kafka1:9092
  kafkatool quorum describe --replication --bootstrap-server kafka1:9092 --format json
  kafkatool quorum describe --log-dir /var/lib/kafka/meta

--log-dir DIR (no cluster): one node's view from its metadata log dir: quorum-state (leader, epoch,
vote), the log's start and end offsets, the snapshot ids, kraft.version, the voters (KRaftVoters
records: dynamic quorums have no controller.quorum.voters) and meta.properties' ids, in --status's
layout; exit 1 when the metadata log is damaged (what was read is shown, the damage on stderr).
"""


@quorum_app.command("describe", help=DESCRIBE_HELP + "\n" + EXIT_CODES_HELP, no_args_is_help=True)
@handle_errors
def describe(
    status: bool = typer.Option(False, "--status", help="The quorum's status (leader, epoch, lag, voters)."),
    replication: bool = typer.Option(False, "--replication", help="One row per voter and observer."),
    human_readable: bool = typer.Option(
        False, "--human-readable", help='Times as "N ms ago" (--replication).'
    ),
    log_dir: Path | None = typer.Option(
        None, "--log-dir", metavar="DIR", help="A controller's metadata log dir, read offline (no cluster)."
    ),
    output_format: KafkaFormat = "text",
    bootstrap_server: BootstrapServer = None,
    bootstrap_controller: BootstrapController = None,
    command_config: CommandConfig = None,
    timeout: Timeout = DEFAULT_TIMEOUT,
) -> None:
    fmt = check_format(output_format)
    # -- offline: a node's metadata log dir, read from the files (kafkatool.cli.quorum_offline) -----------------
    if log_dir is not None:
        if bootstrap_server or bootstrap_controller:
            raise CliError(
                "quorum describe: --log-dir reads files; give no --bootstrap-server/--bootstrap-controller"
            )
        if replication or human_readable:
            raise CliError("quorum describe: --log-dir describes one node's view (--status); "
                           "--replication needs the live leader")
        from kafkatool.cli import quorum_offline

        code = quorum_offline.describe_log_dir(log_dir, fmt)
        if code:
            raise typer.Exit(code)
        return
    if status == replication:
        raise CliError("quorum describe: give exactly one of --status or --replication")
    if human_readable and not replication:
        raise CliError("quorum describe: --human-readable applies to --replication only")
    # -- live ------------------------------------------------------------------------------------------------------
    from kafkatool import release
    from kafkatool.cluster import quorum as q
    from kafkatool.cluster.kraft_channel import need

    with kraft_channel(
        bootstrap_server, bootstrap_controller, command_config, timeout, "quorum describe"
    ) as channel:
        text_release = release.text_release()
        if human_readable and text_release < q.HUMAN_READABLE_SINCE:
            raise CliError(
                f"quorum describe: --human-readable: Kafka {text_release}'s tool has no such option "
                f"(it came with {q.HUMAN_READABLE_SINCE})"
            )
        need(
            channel, "describe the metadata quorum", q.DESCRIBE_QUORUM
        )  # before DescribeCluster: name what lacks
        cluster = q.cluster_id(channel) if status else ""
        info = q.describe_quorum(channel)
        if status:
            if fmt == "text":
                sys.stdout.write(q.status_text(info, cluster, text_release))
            elif fmt == "json":
                render_json(q.status_row(info, cluster))
            else:
                render_rows([q.status_row(info, cluster)], fmt)
        elif fmt == "text":
            sys.stdout.write(q.replication_text(info, text_release, human_readable))
        else:
            render_rows(q.quorum_rows(info), fmt)
