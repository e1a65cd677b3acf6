"""`kafkatool transactions`: Kafka's kafka-transactions.sh (list, describe, describe-producers, find-hanging, abort)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import typer

from kafkatool.cli.app import EXIT_CODES_HELP, app, handle_errors
from kafkatool.cli.cluster_options import DEFAULT_TIMEOUT, BootstrapServer, CommandConfig, Timeout
from kafkatool.cli.errors import EXIT_FINDINGS, CliError
from kafkatool.cli.kraft_options import KafkaFormat, kraft_channel
from kafkatool.cli.render import check_format, render_json, render_rows

transactions_app = typer.Typer(
    name="transactions",
    help="""Transactions and the producers behind them, as Kafka's kafka-transactions.sh shows them
(ListTransactions and DescribeProducers, Kafka 3.0+ / 2.8+), and the abort of a hanging transaction.

Kafka's text byte for byte (--format json|ndjson|csv|table for rows).  Where Kafka's tool fails it prints
its line ("...: <cause>. Enable debug logging for additional detail.") and exits 1, as Kafka's does.

\b
Examples:
  kafkatool transactions list --bootstrap-server kafka1:9092
  kafkatool transactions describe --transactional-id payments-tx --bootstrap-server kafka1:9092
  kafkatool transactions find-hanging --broker-id 1 --bootstrap-server kafka1:9092
  kafkatool transactions abort --topic orders --partition 0 --start-offset 7 --bootstrap-server kafka1:9092
""",
    no_args_is_help=True,
    context_settings={"help_option_names": ["-h", "--help"]},
)
app.add_typer(transactions_app, name="transactions")


@contextmanager
def _session(bootstrap: str | None, command_config: Path | None, timeout: float, thing: str) -> Iterator[Any]:
    """A broker channel; Kafka's tool failures print its own line and exit 1."""
    from kafkatool.cluster.transactions import TransactionsToolError

    with kraft_channel(bootstrap, None, command_config, timeout, thing, controllers=False) as channel:
        try:
            yield channel
        except TransactionsToolError as exc:
            sys.stdout.flush()
            sys.stderr.write(f"{exc}\n")
            raise typer.Exit(EXIT_FINDINGS) from None


#: the one partition describe-producers and abort are about
_TOPIC = typer.Option(None, "--topic", help="Topic (required).")
_PARTITION = typer.Option(None, "--partition", help="Partition (required).")


def _need_partition(command: str, topic: str | None, partition: int | None) -> tuple[str, int]:
    """--topic and --partition, or one line saying both are required."""
    if topic is None or partition is None:
        raise CliError(f"transactions {command}: --topic and --partition are required")
    return topic, partition


LIST_HELP = """List transactions on every broker (ListTransactions): transactional id, coordinator, producer id, state.

--duration-filter MS: only transactions running longer than MS (Kafka 3.8+ brokers).

\b
Examples:
  kafkatool transactions list --bootstrap-server kafka1:9092
  kafkatool transactions list --bootstrap-server kafka1:9092 --duration-filter 60000 --format csv
"""


@transactions_app.command("list", help=LIST_HELP + "\n" + EXIT_CODES_HELP)
@handle_errors
def list_cmd(
    duration_filter: int | None = typer.Option(
        None, "--duration-filter", metavar="MS", help="Only transactions running longer than this."
    ),
    output_format: KafkaFormat = "text",
    bootstrap_server: BootstrapServer = None,
    command_config: CommandConfig = None,
    timeout: Timeout = DEFAULT_TIMEOUT,
) -> None:
    from kafkatool.cluster import transactions as tx

    fmt = check_format(output_format)
    with _session(bootstrap_server, command_config, timeout, "transactions list") as channel:
        listings = tx.list_transactions(
            channel, duration_filter if duration_filter is None or duration_filter >= 0 else None
        )
    if fmt == "text":
        sys.stdout.write(tx.list_text(listings))
    else:
        render_rows(
            [
                {
                    "transactional_id": x.transactional_id,
                    "coordinator": x.coordinator,
                    "producer_id": x.producer_id,
                    "state": x.state,
                }
                for x in listings
            ],
            fmt,
            ["transactional_id", "coordinator", "producer_id", "state"],
        )


DESCRIBE_HELP = """Describe one transactional id at its coordinator (DescribeTransactions).

\b
Examples:
  kafkatool transactions describe --transactional-id payments-tx --bootstrap-server kafka1:9092
  kafkatool transactions describe --transactional-id payments-tx --bootstrap-server kafka1:9092 --format json
"""


@transactions_app.command("describe", help=DESCRIBE_HELP + "\n" + EXIT_CODES_HELP, no_args_is_help=True)
@handle_errors
def describe(
    transactional_id: str = typer.Option(None, "--transactional-id", help="The transactional id (required)."),
    output_format: KafkaFormat = "text",
    bootstrap_server: BootstrapServer = None,
    command_config: CommandConfig = None,
    timeout: Timeout = DEFAULT_TIMEOUT,
) -> None:
    from kafkatool.cluster import transactions as tx

    fmt = check_format(output_format)
    if not transactional_id:
        raise CliError("transactions describe: --transactional-id is required")
    with _session(bootstrap_server, command_config, timeout, "transactions describe") as channel:
        d = tx.describe_transaction(channel, transactional_id)
    if fmt == "text":
        sys.stdout.write(tx.describe_text(d))
        return
    row = {
        "coordinator": d.coordinator,
        "transactional_id": d.transactional_id,
        "producer_id": d.producer_id,
        "producer_epoch": d.producer_epoch,
        "state": d.state,
        "timeout_ms": d.timeout_ms,
        "start_time_ms": d.start_time_ms,
        "partitions": [f"{t}-{p}" for t, p in d.partitions],
    }
    render_json(row) if fmt == "json" else render_rows([row], fmt)


PRODUCERS_HELP = """The active producers of one partition, on its leader or on --broker-id's replica (DescribeProducers).

\b
Examples:
  kafkatool transactions describe-producers --topic orders --partition 0 --bootstrap-server kafka1:9092
  kafkatool transactions describe-producers --topic orders --partition 0 --broker-id 2 --bootstrap-server kafka1:9092
"""

PRODUCER_COLUMNS = [
    "producer_id",
    "producer_epoch",
    "coordinator_epoch",
    "last_sequence",
    "last_timestamp",
    "txn_start_offset",
]


def _producer_row(p: Any) -> dict[str, Any]:
    return {c: getattr(p, c) for c in PRODUCER_COLUMNS}


@transactions_app.command(
    "describe-producers", help=PRODUCERS_HELP + "\n" + EXIT_CODES_HELP, no_args_is_help=True
)
@handle_errors
def describe_producers(
    topic: str | None = _TOPIC,
    partition: int | None = _PARTITION,
    broker_id: int | None = typer.Option(None, "--broker-id", help="Ask this replica instead of the leader."),
    output_format: KafkaFormat = "text",
    bootstrap_server: BootstrapServer = None,
    command_config: CommandConfig = None,
    timeout: Timeout = DEFAULT_TIMEOUT,
) -> None:
    from kafkatool.cluster import transactions as tx

    fmt = check_format(output_format)
    topic, partition = _need_partition("describe-producers", topic, partition)
    on = f"broker {broker_id}" if broker_id is not None else "leader"
    with _session(bootstrap_server, command_config, timeout, "transactions describe-producers") as channel:
        got = tx.describe_producers(
            channel,
            [(topic, partition)],
            broker_id,
            f"Failed to describe producers for partition {topic}-{partition} on {on}",
        )
    producers = got.get((topic, partition), [])
    if fmt == "text":
        sys.stdout.write(tx.producers_text(producers))
    else:
        render_rows([_producer_row(p) for p in producers], fmt, PRODUCER_COLUMNS)


HANGING_HELP = """Find hanging transactions: open transactions on partitions older than the maximum transaction
timeout whose coordinator no longer counts the partition in them (unknown producer, no such
transactional id, or a partition it does not list), as kafka-transactions.sh find-hanging does.
Needs --broker-id (its replicas) or --topic (optionally --partition) to limit the search.

--log-dir DIR (no cluster): from a partition's log and producer snapshots alone (a copied log dir),
the open transactions, their first offset, producer, age (against --now) and the last stable offset
they hold back, as the broker computes it; --at OFFSET|TIME reads the log only up to that point.
Exit 1 when one is hanging (open longer than --max-transaction-timeout) or a log is damaged.

\b
Examples:
  kafkatool transactions find-hanging --broker-id 1 --bootstrap-server kafka1:9092
  kafkatool transactions find-hanging --topic orders --max-transaction-timeout 5 --bootstrap-server kafka1:9092
  kafkatool transactions find-hanging --log-dir /var/lib/kafka/data/orders-3
"""


@transactions_app.command("find-hanging", help=HANGING_HELP + "\n" + EXIT_CODES_HELP, no_args_is_help=True)
@handle_errors
def find_hanging(
    broker_id: int | None = typer.Option(None, "--broker-id", help="Search this broker's replicas."),
    topic: str | None = typer.Option(None, "--topic", help="Search this topic (required with --partition)."),
    partition: int | None = typer.Option(None, "--partition", help="Only this partition of --topic."),
    max_transaction_timeout: int = typer.Option(
        15,
        "--max-transaction-timeout",
        metavar="MINUTES",
        help="Transactions open longer than this are candidates.",
    ),
    log_dir: Path | None = typer.Option(
        None,
        "--log-dir",
        metavar="DIR",
        help="A partition's log dir (or a broker's), read offline (no cluster).",
    ),
    at: str | None = typer.Option(
        None, "--at", help="With --log-dir: read up to this offset (included) or ISO-8601 time."
    ),
    now: str | None = typer.Option(
        None, "--now", help="With --log-dir: the time ages are measured against (ISO-8601; default: now)."
    ),
    output_format: KafkaFormat = "text",
    bootstrap_server: BootstrapServer = None,
    command_config: CommandConfig = None,
    timeout: Timeout = DEFAULT_TIMEOUT,
) -> None:
    from kafkatool.cluster import transactions as tx

    fmt = check_format(output_format)
    # -- offline: `--log-dir` is served by kafkatool.cli.transactions_offline when that module is installed --------
    if log_dir is not None:
        if bootstrap_server:
            raise CliError("transactions find-hanging: --log-dir reads files; give no --bootstrap-server")
        from kafkatool.cli import transactions_offline

        code = transactions_offline.find_hanging_log_dir(
            log_dir, topic, partition, at, now, max_transaction_timeout, fmt
        )
        if code:
            raise typer.Exit(code)
        return
    # -- live ---------------------------------------------------------------------------------------------------
    if topic is None and broker_id is None:
        sys.stderr.write(
            "The `find-hanging` command requires either --topic or --broker-id to limit the scope of the "
            "search\n"
        )
        raise typer.Exit(EXIT_FINDINGS)
    if partition is not None and topic is None:
        sys.stderr.write("The --partition argument requires --topic to be provided\n")
        raise typer.Exit(EXIT_FINDINGS)
    with _session(bootstrap_server, command_config, timeout, "transactions find-hanging") as channel:
        found = tx.find_hanging(channel, broker_id, topic, partition, max_transaction_timeout * 60000)
    if fmt == "text":
        sys.stdout.write(tx.hanging_text(found))
    else:
        render_rows(
            [{"topic": h.topic, "partition": h.partition, **_producer_row(h.producer)} for h in found],
            fmt,
            ["topic", "partition", *PRODUCER_COLUMNS],
        )


ABORT_HELP = """Abort a hanging transaction on one partition: an ABORT marker written by the partition's leader
(WriteTxnMarkers), as kafka-transactions.sh abort does.  Name the transaction by --start-offset (the
open transaction's first offset, Kafka 3.0+ brokers: the producer is looked up with DescribeProducers)
or by --producer-id, --producer-epoch and --coordinator-epoch.

Without --execute nothing is written: the command prints the transaction it would abort (a dry run).
With --execute it aborts it and prints nothing, as Kafka's tool.

\b
Examples:
  kafkatool transactions abort --topic orders --partition 0 --start-offset 7 --bootstrap-server kafka1:9092
  kafkatool transactions abort --topic orders --partition 0 --start-offset 7 --execute --bootstrap-server kafka1:9092
  kafkatool transactions abort --topic orders --partition 1 --producer-id 1002 --producer-epoch 0 --coordinator-epoch -1 --execute --bootstrap-server kafka1:9092
"""


@transactions_app.command("abort", help=ABORT_HELP + "\n" + EXIT_CODES_HELP, no_args_is_help=True)
@handle_errors
def abort(
    topic: str | None = _TOPIC,
    partition: int | None = _PARTITION,
    start_offset: int | None = typer.Option(
        None, "--start-offset", help="First offset of the open transaction."
    ),
    producer_id: int | None = typer.Option(None, "--producer-id", help="Producer id (with the two epochs)."),
    producer_epoch: int | None = typer.Option(None, "--producer-epoch", help="Producer epoch."),
    coordinator_epoch: int | None = typer.Option(
        None, "--coordinator-epoch", help="Coordinator epoch (-1 reads as 0)."
    ),
    execute: bool = typer.Option(False, "--execute", help="Write the abort marker (otherwise only show it)."),
    output_format: KafkaFormat = "text",
    bootstrap_server: BootstrapServer = None,
    command_config: CommandConfig = None,
    timeout: Timeout = DEFAULT_TIMEOUT,
) -> None:
    from kafkatool.cluster import transactions as tx

    fmt = check_format(output_format)
    topic, partition = _need_partition("abort", topic, partition)

    def kafka_error(message: str) -> None:
        sys.stderr.write(message + "\n")
        raise typer.Exit(EXIT_FINDINGS)

    if start_offset is None and producer_id is None:
        kafka_error(
            "The transaction to abort must be identified either with --start-offset (for brokers on 3.0 or "
            "above) or with --producer-id, --producer-epoch, and --coordinator-epoch (for older brokers)"
        )
    spec = None
    if start_offset is None:
        if producer_epoch is None:
            kafka_error("Missing required argument --producer-epoch")
        if coordinator_epoch is None:
            kafka_error("Missing required argument --coordinator-epoch")
        spec = tx.AbortSpec(
            topic,
            partition,
            int(producer_id or 0),
            int(producer_epoch or 0),
            max(0, int(coordinator_epoch or 0)),
        )
    with _session(bootstrap_server, command_config, timeout, "transactions abort") as channel:
        if spec is None:
            spec = tx.abort_spec_for_offset(channel, topic, partition, int(start_offset or 0))
        if execute:
            tx.abort(channel, spec)
    if execute:
        return
    if fmt == "text":
        sys.stdout.write(f"Would abort {spec}; nothing written (add --execute to abort it).\n")
    else:
        row = {
            "topic": spec.topic,
            "partition": spec.partition,
            "producer_id": spec.producer_id,
            "producer_epoch": spec.producer_epoch,
            "coordinator_epoch": spec.coordinator_epoch,
            "executed": False,
        }
        render_json(row) if fmt == "json" else render_rows([row], fmt)
