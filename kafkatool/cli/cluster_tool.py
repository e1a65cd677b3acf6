"""`kafkatool cluster`: Kafka's kafka-cluster.sh cluster-id and api-versions (kafka-broker-api-versions.sh)."""

from __future__ import annotations

import sys

import typer

from kafkatool.cli.app import EXIT_CODES_HELP, app, handle_errors
from kafkatool.cli.cluster_options import DEFAULT_TIMEOUT, BootstrapServer, CommandConfig, Timeout
from kafkatool.cli.kraft_options import BootstrapController, KafkaFormat, kraft_channel
from kafkatool.cli.render import check_format, render_json

cluster_app = typer.Typer(
    name="cluster",
    help="""The cluster as a whole, as kafka-cluster.sh shows it.

\b
Examples:
  kafkatool cluster cluster-id --bootstrap-server kafka1:9092
  kafkatool cluster cluster-id --bootstrap-controller ctrl1:9093
  kafkatool cluster api-versions --bootstrap-server kafka1:9092
  kafkatool cluster list-endpoints --bootstrap-controller ctrl1:9093
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


API_VERSIONS_HELP = """Each broker's ApiVersions as kafka-broker-api-versions.sh prints them (4.4: kafka-cluster.sh
api-versions): per broker, every request with the broker's version range and the version the release's
Java client would use ([usable: N]), UNSUPPORTED where the broker lacks one the client knows.  The text
and broker order are the release's tool's (--kafka-release, else the broker's).

--format json|ndjson|csv|table: one row per broker and request (broker, host, port, api_key, name,
min_version, max_version, usable, error).

\b
Examples:
  kafkatool cluster api-versions --bootstrap-server kafka1:9092
  kafkatool cluster api-versions --bootstrap-server kafka1:9092 --format csv
"""


@cluster_app.command("api-versions", help=API_VERSIONS_HELP + "\n" + EXIT_CODES_HELP)
@handle_errors
def api_versions(
    output_format: KafkaFormat = "text",
    bootstrap_server: BootstrapServer = None,
    command_config: CommandConfig = None,
    timeout: Timeout = DEFAULT_TIMEOUT,
) -> None:
    from kafkatool import release
    from kafkatool.cli.render import render_rows
    from kafkatool.cluster import api_versions as av

    fmt = check_format(output_format)
    with kraft_channel(
        bootstrap_server, None, command_config, timeout, "cluster api-versions", controllers=False
    ) as channel:
        found = av.node_versions(channel, timeout)
        text_release = release.text_release()
    if fmt == "text":
        sys.stdout.write(av.api_versions_text(found, text_release))
        return
    apis = av.client_apis(text_release)
    rows = []
    for v in sorted(found, key=lambda v: v.node.id):
        if v.table is None:
            rows.append(
                {
                    "broker": v.node.id,
                    "host": v.node.host,
                    "port": v.node.port,
                    "api_key": None,
                    "name": None,
                    "min_version": None,
                    "max_version": None,
                    "usable": None,
                    "error": v.error,
                }
            )
            continue
        for key in sorted(set(v.table) | set(apis)):
            lo, hi = v.table.get(key, (None, None))
            name, oldest, latest = apis.get(key, (None, None, None))
            usable = None
            if (
                lo is not None
                and hi is not None
                and oldest is not None
                and latest is not None
                and oldest <= hi
                and lo <= latest
            ):
                usable = min(latest, hi)
            rows.append(
                {
                    "broker": v.node.id,
                    "host": v.node.host,
                    "port": v.node.port,
                    "api_key": key,
                    "name": name,
                    "min_version": lo,
                    "max_version": hi,
                    "usable": usable,
                    "error": None,
                }
            )
    render_rows(
        rows,
        fmt,
        ["broker", "host", "port", "api_key", "name", "min_version", "max_version", "usable", "error"],
    )


LIST_ENDPOINTS_HELP = """List the brokers' endpoints (or, through --bootstrap-controller, the controllers') as
`kafka-cluster.sh list-endpoints` does (DescribeCluster v1+, Kafka 3.7+): id, host, port, rack, state
(fenced or unfenced) and endpoint type.  --include-fenced-brokers lists fenced brokers too (Kafka 4.0+).
--format json|ndjson|csv|table: rows id, host, port, rack, fenced, endpoint_type.

\b
Examples:
  kafkatool cluster list-endpoints --bootstrap-server kafka1:9092 --include-fenced-brokers
  kafkatool cluster list-endpoints --bootstrap-controller ctrl1:9093
"""


@cluster_app.command("list-endpoints", help=LIST_ENDPOINTS_HELP + "\n" + EXIT_CODES_HELP)
@handle_errors
def list_endpoints(
    include_fenced_brokers: bool = typer.Option(
        False, "--include-fenced-brokers", help="Fenced brokers too."
    ),
    output_format: KafkaFormat = "text",
    bootstrap_server: BootstrapServer = None,
    bootstrap_controller: BootstrapController = None,
    command_config: CommandConfig = None,
    timeout: Timeout = DEFAULT_TIMEOUT,
) -> None:
    from kafkatool.cli.render import render_rows
    from kafkatool.cluster import endpoints as ep

    fmt = check_format(output_format)
    with kraft_channel(
        bootstrap_server, bootstrap_controller, command_config, timeout, "cluster list-endpoints"
    ) as channel:
        nodes = ep.list_endpoints(channel, include_fenced_brokers)
        controllers = channel.kind == "controller"
    if fmt == "text":
        sys.stdout.write(ep.endpoints_text(nodes, controllers))
    else:
        render_rows(
            [
                {
                    "id": n.id,
                    "host": n.host,
                    "port": n.port,
                    "rack": n.rack,
                    "fenced": n.fenced,
                    "endpoint_type": "controller" if controllers else "broker",
                }
                for n in nodes
            ],
            fmt,
            ["id", "host", "port", "rack", "fenced", "endpoint_type"],
        )
