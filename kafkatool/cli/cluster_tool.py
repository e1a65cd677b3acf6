"""`kafkatool cluster`: Kafka's kafka-cluster.sh cluster-id."""

from __future__ import annotations

import sys

import typer

from kafkatool.cli.app import EXIT_CODES_HELP, app, handle_errors
from kafkatool.cli.cluster_options import DEFAULT_TIMEOUT, BootstrapServer, CommandConfig, Timeout
from kafkatool.cli.kraft_options import BootstrapController, kraft_channel
from kafkatool.cli.render import check_format, render_json

cluster_app = typer.Typer(
    name="cluster",
    help="""The cluster as a whole, as kafka-cluster.sh shows it.

\b
Examples:
  kafkatool cluster cluster-id --bootstrap-server kafka1:9092
  kafkatool cluster cluster-id --bootstrap-controller ctrl1:9093
""",
    no_args_is_help=True,
    context_settings={"help_option_names": ["-h", "--help"]},
)
app.add_typer(cluster_app, name="cluster")

CLUSTER_ID_HELP = """Print the cluster id as `kafka-cluster.sh cluster-id` does (DescribeCluster, or Metadata on brokers
before 2.8): `Cluster ID: <id>`.  --format json: {"cluster_id": ...}.

\b
Examples:
  kafkatool cluster cluster-id --bootstrap-server kafka1:9092
  kafkatool cluster cluster-id --bootstrap-controller ctrl1:9093 --format json
"""


@cluster_app.command("cluster-id", help=CLUSTER_ID_HELP + "\n" + EXIT_CODES_HELP)
@handle_errors
def cluster_id(
    output_format: str = typer.Option("text", "--format", help="text (Kafka's) or json."),
    bootstrap_server: BootstrapServer = None,
    bootstrap_controller: BootstrapController = None,
    command_config: CommandConfig = None,
    timeout: Timeout = DEFAULT_TIMEOUT,
) -> None:
    from kafkatool.cluster.quorum import cluster_id as get_cluster_id

    fmt = check_format(output_format, ("text", "json"))
    with kraft_channel(
        bootstrap_server, bootstrap_controller, command_config, timeout, "cluster cluster-id"
    ) as channel:
        cid = get_cluster_id(channel)
    if fmt == "json":
        render_json({"cluster_id": cid})
    elif cid is None:
        sys.stdout.write("No cluster ID found. The Kafka version is probably too old.\n")
    else:
        sys.stdout.write(f"Cluster ID: {cid}\n")
