"""`kafkatool elect`: kafka-leader-election (Admin API) and the ZooKeeper preferred-replica election."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from kafkatool.cli.app import app, handle_errors
from kafkatool.cli.cluster_options import (
    DEFAULT_TIMEOUT,
    BootstrapServer,
    Timeout,
    ZooKeeper,
    cluster_from_options,
)
from kafkatool.cli.errors import EXIT_FAILURE, EXIT_FINDINGS, EXIT_USAGE, CliError
from kafkatool.cli.render import check_format, render_json, render_rows

HELP = """Move partition leadership to the preferred replica (or elect a leader for leaderless partitions), as Kafka's kafka-leader-election.sh and kafka-preferred-replica-election.sh do.

With --bootstrap-server the controller runs the election (ElectLeaders) and the output is kafka-leader-election's. With --zookeeper (Kafka 0.8–2.x) the request is written to /admin/preferred_replica_election, which is refused while an election is in progress; only preferred elections exist there, and the output is Kafka 2.x's kafka-preferred-replica-election.

--dry-run changes nothing: it lists the partitions not led by their preferred replica (preferred) or without a leader (unclean), and each broker's leader imbalance, the ratio the controller compares with leader.imbalance.per.broker.percentage. It exits 1 when it finds any such partition.

Exit codes: 0 done; 1 election in progress, or --dry-run findings; 2 bad input; 3 cluster failure or partitions that could not be elected.

\b
Examples:
  kafkatool elect --bootstrap-server k1:9092 --election-type preferred --all-topic-partitions
  kafkatool elect --bootstrap-server k1:9092 --election-type unclean --topic orders --partition 3
  kafkatool elect --zookeeper zk1:2181/kafka --election-type preferred --path-to-json-file parts.json
  kafkatool elect --zookeeper zk1:2181 --election-type preferred --all-topic-partitions --dry-run
  kafkatool elect --bootstrap-server k1:9092 --election-type preferred --all-topic-partitions --dry-run --format json
"""


@app.command("elect", help=HELP, no_args_is_help=True)
@handle_errors
def elect(
    election_type: str = typer.Option(None, "--election-type", help="preferred or unclean (required)."),
    all_topic_partitions: bool = typer.Option(False, "--all-topic-partitions", help="Every partition of every topic."),
    topic: str | None = typer.Option(None, "--topic", help="One topic (with --partition)."),
    partition: int | None = typer.Option(None, "--partition", help="Partition of --topic."),
    path_to_json_file: Path | None = typer.Option(
        None, "--path-to-json-file", metavar="FILE", help='Partitions as {"partitions":[{"topic":"foo","partition":1}]}.'
    ),
    dry_run: bool = typer.Option(False, "--dry-run", help="Report what an election would change; change nothing."),
    imbalance_threshold: float = typer.Option(
        10.0, "--imbalance-threshold", metavar="PERCENT", help="leader.imbalance.per.broker.percentage to flag brokers against (--dry-run)."
    ),
    output_format: str = typer.Option("text", "--format", help="text, json, ndjson, csv or table."),
    bootstrap_server: BootstrapServer = None,
    zookeeper: ZooKeeper = None,
    command_config: Path | None = typer.Option(
        None, "--command-config", "--admin.config", metavar="FILE",
        help="Java client properties (Kafka's kafka-leader-election.sh calls it --admin.config)."),
    timeout: Timeout = DEFAULT_TIMEOUT,
) -> None:
    from kafkatool.cluster.elect import (
        ELECTION_TYPES,
        ElectionInputError,
        parse_election_json,
        select_partitions,
    )

    if election_type is None:
        raise CliError('elect: Missing required argument "--election-type" (preferred or unclean)')
    election_type = election_type.lower()
    if election_type not in ELECTION_TYPES:
        raise CliError(f"elect: --election-type: {election_type!r} is not one of preferred, unclean")
    check_format(output_format)
    if not 0 <= imbalance_threshold <= 100:
        raise CliError(
            f"elect: --imbalance-threshold: {imbalance_threshold:g} is not a percentage between 0 and 100")
    try:
        json_parts = None
        if path_to_json_file is not None:
            if not path_to_json_file.is_file():
                raise CliError(f"{path_to_json_file}: no such file", EXIT_USAGE)
            json_parts = parse_election_json(path_to_json_file.read_text("utf-8"))
        parts = select_partitions(all_topic_partitions, topic, partition, json_parts)
    except ElectionInputError as exc:
        raise CliError(f"elect: {exc}") from None
    with cluster_from_options(zookeeper, bootstrap_server, command_config, timeout, thing="elect") as cluster:
        if dry_run:
            _dry_run(cluster, election_type, parts, imbalance_threshold, output_format)
        elif cluster.kind == "zookeeper":
            _elect_zk(cluster, election_type, parts, output_format)
        else:
            _elect_admin(cluster, election_type, parts, output_format)


def _states(cluster, parts):  # type: ignore[no-untyped-def]
    """Partition states for `parts` (all when None); unknown topics simply have none."""
    from kafkatool.cluster.backend import UnknownTopicsError

    if parts is None:
        return cluster.partition_states()
    states = {}
    for t in sorted({tp.topic for tp in parts}):
        try:
            states.update(cluster.partition_states([t]))
        except UnknownTopicsError:
            pass
    return states


def _dry_run(cluster, election_type: str, parts, threshold: float, fmt: str) -> None:  # type: ignore[no-untyped-def]
    from kafkatool.cluster.elect import dry_run_text, preferred_report, unclean_report

    states = _states(cluster, parts)
    _refuse_missing(parts, states)
    brokers = cluster.brokers()
    not_preferred, imbalance = preferred_report(states, brokers, parts)
    leaderless = unclean_report(states, brokers, parts)
    findings = not_preferred if election_type == "preferred" else leaderless
    if fmt == "text":
        sys.stdout.write(dry_run_text(election_type, not_preferred, imbalance, leaderless, threshold))
    elif fmt == "json":
        render_json({
            "election_type": election_type,
            "partitions": [f.row() for f in findings],
            "brokers": [b.row(threshold) for b in imbalance] if election_type == "preferred" else [],
        })
    else:
        render_rows([f.row() for f in findings], fmt)
    if findings:
        raise typer.Exit(EXIT_FINDINGS)


def _refuse_missing(parts, states) -> None:  # type: ignore[no-untyped-def]
    """Named partitions that do not exist are an input error, never silently left out."""
    missing = [tp for tp in parts or [] if tp not in states]
    if missing:
        plural = "" if len(missing) == 1 else "s"
        raise CliError(f"elect: no such partition{plural}: {', '.join(map(str, missing))}", EXIT_USAGE)


def _elect_zk(cluster, election_type: str, parts, fmt: str) -> None:  # type: ignore[no-untyped-def]
    from kafkatool.cluster.elect import zk_election_order, zk_election_text

    if election_type != "preferred":
        raise CliError("elect: unclean leader election needs --bootstrap-server (Kafka 2.4+ brokers)", EXIT_USAGE)
    states = _states(cluster, parts)
    requested = sorted(states) if parts is None else parts
    ordered = zk_election_order(requested)
    valid = [tp for tp in ordered if tp in states]
    invalid = [tp for tp in ordered if tp not in states]
    if not valid:
        _refuse_missing(parts, states)
        raise CliError("elect: the cluster has no partitions to elect leaders for", EXIT_USAGE)
    cluster.elect_leaders("preferred", valid)  # the znode lists them in Kafka's order too
    if fmt == "text":
        sys.stdout.write(zk_election_text(requested, set(states)))
    else:
        rows = [{"topic": tp.topic, "partition": tp.partition, "election_type": "preferred", "status": "requested", "error": None}
                for tp in valid]
        rows += [{"topic": tp.topic, "partition": tp.partition, "election_type": "preferred", "status": "skipped",
                  "error": "partition does not exist"} for tp in invalid]
        render_rows(rows, fmt)


def _elect_admin(cluster, election_type: str, parts, fmt: str) -> None:  # type: ignore[no-untyped-def]
    from kafkatool.cluster.elect import admin_election_text, election_rows

    result = cluster.elect_leaders(election_type, parts)
    text, failed = admin_election_text(election_type, result, cluster.text_release())
    if fmt == "text":
        sys.stdout.write(text)
    else:
        rows = election_rows(election_type, result)
        render_rows(rows, fmt)
    if failed:
        sys.stdout.flush()
        raise CliError(f"elect: {failed} replica(s) could not be elected", EXIT_FAILURE)
