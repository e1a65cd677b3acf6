"""`kafkatool offsets owners`: partition owners of ZooKeeper-era consumer groups, VerifyConsumerRebalance's check."""

from __future__ import annotations

import sys

import typer

from kafkatool.cli.app import handle_errors
from kafkatool.cli.cluster_options import DEFAULT_TIMEOUT, Timeout, ZooKeeper, cluster_from_options
from kafkatool.cli.errors import EXIT_FINDINGS, CliError
from kafkatool.cli.offsets import offsets_app
from kafkatool.cli.render import check_format, render_rows

OWNERS_HELP = """Which consumer thread owns each partition of a ZooKeeper-era consumer group (offsets in ZooKeeper).

Reads /consumers/GROUP/ids (registered consumers and their subscriptions), /consumers/GROUP/owners/TOPIC/PARTITION and /brokers/topics. --verify checks what Kafka's VerifyConsumerRebalance checked: for every topic a registered consumer subscribes to, every partition has an owner, and the owner is a thread of a consumer registered in /consumers/GROUP/ids; it prints the problems and "Rebalance operation successful !" or "Rebalance operation failed !".

\b
Status per partition: ok, no-owner, not-a-member (a stale or foreign owner), not-subscribed (owner znodes for a topic no registered consumer subscribes to).
Rows (--format json|ndjson|csv): topic, partition, owner, status.
Exit codes: 0 ok; 1 --verify found a problem; 2 usage; 3 ZooKeeper unreachable.

\b
Examples:
  kafkatool offsets owners --zookeeper zk1:2181/kafka --group old-app
  kafkatool offsets owners --zookeeper zk1:2181 --group old-app --verify
  kafkatool offsets owners --zookeeper zk1:2181 --group old-app --format json
"""


@offsets_app.command("owners", help=OWNERS_HELP, no_args_is_help=True)
@handle_errors
def owners(
    group: str = typer.Option(None, "--group", help="The consumer group (required)."),
    verify: bool = typer.Option(False, "--verify", help="Check the owners as VerifyConsumerRebalance did; exit 1 on failure."),
    output_format: str = typer.Option("text", "--format", help="text, json, ndjson, csv or table."),
    zookeeper: ZooKeeper = None,
    timeout: Timeout = DEFAULT_TIMEOUT,
) -> None:
    from kafkatool.cluster.zkowners import owners_text, read_owners

    if not group:
        raise CliError('offsets owners: Missing required argument "--group"')
    check_format(output_format)
    if not zookeeper:
        from kafkatool.cli.profiles import with_profile

        zookeeper = with_profile(None, None, None)[0]
        if not zookeeper:
            raise CliError("offsets owners: --zookeeper is required (partition owners exist only in ZooKeeper)")
    with cluster_from_options(zookeeper, None, None, timeout, thing="offsets owners") as cluster:
        report = read_owners(cluster, group)
    if output_format == "text":
        sys.stdout.write(owners_text(report, verify))
    else:
        render_rows([r.row() for r in report.rows], output_format)
    if verify and not report.ok:
        sys.stdout.flush()
        raise typer.Exit(EXIT_FINDINGS)
