"""`kafkatool offsets`: group offsets and lag (in messages and in time), live or from log segments.

`kafkatool offsets --group G ...` describes (kafka-consumer-groups --describe, ConsumerOffsetChecker);
the subcommands live in modules of their own that register on `offsets_app` (kafkatool.cli.main's
SUBCOMMAND_MODULES): `export` (offsets_export), `reset` (offsets_reset), `end` (offsets_end, GetOffsetShell),
`watch`, `owners`, `groups`/`share`, `streams` and `list`.  This module holds what they share: the
typer app, the options every subcommand spells the same way (`_GROUP`, `_BOOTSTRAP`, `_TIMEOUT`...),
the source checks, and the connections (`_brokers`, `_zookeeper`) with their error translation.

The work is in `kafkatool.cluster.groups` (cluster access), `kafkatool.ops.offsets_log` (offline
replay) and `kafkatool.ops.offsets_report` (rows, Kafka's texts, file formats); this module parses
options, opens connections and renders.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import typer

from kafkatool.cli.app import app, handle_errors
from kafkatool.cli.cluster_options import DEFAULT_TIMEOUT, CommandConfig, cluster_errors
from kafkatool.cli.errors import EXIT_FAILURE, EXIT_FINDINGS, EXIT_USAGE, CliError
from kafkatool.cli.kafka_shapes import KafkaShapesGroup
from kafkatool.cli.progress import progress
from kafkatool.cli.render import check_format, render_rows
from kafkatool.release import text_release

DESCRIBE_HELP = """Committed offsets, log-end offsets and lag of consumer groups, live or from log segments.

\b
Sources (exactly one kind):
  --bootstrap-server B    Kafka-stored groups; text is kafka-consumer-groups --describe of the
                          brokers' release (3.3 or 4.0; --kafka-release chooses)
  --zookeeper Z           ZooKeeper-stored groups (old consumers); text is ConsumerOffsetChecker;
                          log-end offsets from the brokers registered in ZooKeeper (or --bootstrap-server)
  --log-dir DIR           offline: replay __consumer_offsets-* segments (no broker needed)

--time-lag adds the timestamp of the record at each committed offset and its age; --sample SECONDS
also measures consume and produce rates over that many seconds and estimates the time to drain;
--max-time-lag measures the time lag even without --time-lag (the table stays Kafka's).
A coordinator that dies or moves is looked up again until --timeout, which bounds the whole command.
Nothing is ever consumed or committed as the group.
kafka-consumer-groups.sh's shapes work too: --describe [--offsets] (this view), --list (offsets list),
--reset-offsets (offsets reset); --delete and --delete-offsets are refused (nothing is ever deleted).

\b
Examples:
  kafkatool offsets --bootstrap-server kafka:9092 --group orders-app
  kafkatool offsets --bootstrap-server kafka:9092 --all-groups --members --verbose
  kafkatool offsets --bootstrap-server kafka:9092 --group orders-app --state
  kafkatool offsets --bootstrap-server kafka:9092 --group orders-app --time-lag --sample 10
  kafkatool offsets --zookeeper zk:2181/kafka --group old-app --broker-info
  kafkatool offsets --log-dir /var/lib/kafka --group orders-app
  kafkatool offsets --log-dir /var/lib/kafka --group orders-app --history --format ndjson
  kafkatool offsets --bootstrap-server kafka:9092 --all-groups --max-lag 10000 --format json
  kafkatool offsets export --bootstrap-server kafka:9092 --group orders-app > orders-app.csv
  kafkatool offsets reset --bootstrap-server kafka:9092 --group orders-app --from-file orders-app.csv --execute
  kafkatool offsets end --bootstrap-server kafka:9092 --topic orders --time -2

Exit codes: 0 ok; 1 lag over --max-lag/--max-time-lag, damaged __consumer_offsets records, or a reset
refused because the group is active; 2 usage or input error (unknown group, bad file); 3 cluster or
I/O failure.
"""

offsets_app = typer.Typer(
    name="offsets",
    cls=KafkaShapesGroup,  # kafka-consumer-groups.sh's --list / --describe / --reset-offsets too
    help=DESCRIBE_HELP,
    invoke_without_command=True,
    no_args_is_help=True,
    context_settings={"help_option_names": ["-h", "--help"]},
)
app.add_typer(offsets_app, name="offsets")

TEXT_FORMATS = ("text", "json", "ndjson", "csv", "table")

# -- shared options ---------------------------------------------------------------------------------
_GROUP = typer.Option(None, "--group", "-g", help="Consumer group (repeat for several).")
_ALL_GROUPS = typer.Option(False, "--all-groups", help="Every group of the source.")
_BOOTSTRAP = typer.Option(None, "--bootstrap-server", metavar="HOST:PORT[,HOST:PORT…]",
                          help="Brokers (Admin API); with --zookeeper only used to read log-end offsets.")
_ZOOKEEPER = typer.Option(None, "--zookeeper", metavar="HOST:PORT[,…][/CHROOT]",
                          help="ZooKeeper of a Kafka 0.8–2.x cluster: groups of the old (ZooKeeper) consumer.")
_TOPIC = typer.Option(None, "--topic", "-t", help="Only these topics (repeat or comma-separate).")
_TIMEOUT = typer.Option(DEFAULT_TIMEOUT, "--timeout", metavar="SECONDS",
                        help="Limit for the command's cluster work as a whole, retries after a coordinator "
                             "moved included (--sample's wait not counted).")


def _split(values: list[str] | None) -> list[str]:
    return [v.strip() for item in values or [] for v in item.split(",") if v.strip()]


@contextmanager
def _translate(thing: str = "offsets") -> Iterator[None]:
    """Cluster errors as the other cluster commands report them; plan/file errors -> exit 2."""
    from kafkatool.ops.offsets_report import OffsetsFileError, ResetError

    try:
        with cluster_errors(thing):
            yield
    except (OffsetsFileError, ResetError) as exc:
        raise CliError(str(exc), EXIT_USAGE) from None


@contextmanager
def _brokers(bootstrap: str | None, command_config: Path | None, timeout: float, deadline: float, zk: Any = None,
             optional: bool = False) -> Iterator[Any]:
    """An Admin connection: to --bootstrap-server, else to the brokers registered in ZooKeeper.

    `optional` (ZooKeeper-stored groups, whose offsets live in ZooKeeper): when no broker answers,
    say so once on stderr and yield None; log-end offsets and lag are then unknown.
    """
    from kafkatool.cluster.connect import ClusterError, ZkDataError
    from kafkatool.cluster.groups import BrokerOffsets

    try:
        if not bootstrap and zk is not None:
            brokers = zk.brokers()
            if not brokers:
                raise ClusterError("no brokers registered in ZooKeeper (/brokers/ids is empty); give --bootstrap-server")
            bootstrap = ",".join(f"{b.host}:{b.port}" for b in brokers.values())
        assert bootstrap
        b = BrokerOffsets.connect(bootstrap, command_config, timeout, deadline=deadline)
    except ZkDataError:
        raise
    except ClusterError as exc:
        if not optional:
            raise
        sys.stderr.write(f"kafkatool: note: {exc}: log-end offsets and lag are unknown\n")
        yield None
        return
    if zk is None:  # Kafka-stored groups: kafka-consumer-groups' text of the brokers' release, unless asked
        from kafkatool import release
        from kafkatool.cluster.versions import client_release

        release.observe_broker(client_release(b.admin))
    try:
        yield b
    finally:
        b.close()


@contextmanager
def _zookeeper(connect: str, timeout: float) -> Iterator[Any]:
    from kafkatool import release
    from kafkatool.cluster.groups import ZkGroups

    z = ZkGroups.connect(connect, timeout)
    release.observe_broker(z.cluster.broker_release)  # a ZooKeeper cluster's text: its brokers' (zkrelease)
    try:
        yield z
    finally:
        z.close()


def _profile(zookeeper: str | None, bootstrap: str | None, command_config: Path | None, log_dirs: object) -> tuple:
    """Fill in --cluster/KAFKATOOL_CLUSTER's connection unless the source was given (or is --log-dir)."""
    if log_dirs:
        return zookeeper, bootstrap, command_config
    from kafkatool.cli.profiles import with_profile

    return with_profile(zookeeper, bootstrap, command_config)


def _check_source(bootstrap: str | None, zookeeper: str | None, log_dirs: list[Path] | None, offline_ok: bool = True) -> str:
    kinds = [k for k, v in (("bootstrap", bootstrap), ("zookeeper", zookeeper), ("log-dir", log_dirs)) if v]
    if "log-dir" in kinds and len(kinds) > 1:
        raise CliError("--log-dir reads segments offline: do not combine it with --bootstrap-server or --zookeeper")
    if not kinds:
        raise CliError("give --bootstrap-server, --zookeeper" + (" or --log-dir" if offline_ok else ""))
    if "log-dir" in kinds and not offline_ok:
        raise CliError("--log-dir is not supported here: this needs a live cluster")
    if "zookeeper" in kinds:
        return "zookeeper"
    return kinds[0]


def _check_groups(groups: list[str], all_groups: bool, what: str = "offsets") -> None:
    if all_groups and groups:
        raise CliError("give --group or --all-groups, not both")
    if not all_groups and not groups:
        raise CliError(f"{what}: give --group G (repeatable) or --all-groups")


def _check_timeout(timeout: float) -> float:
    """The command's deadline (monotonic): --timeout bounds its cluster work from the start."""
    if not timeout > 0:
        raise CliError("--timeout must be positive")
    return time.monotonic() + timeout


def _read_log_dirs(log_dirs: list[Path], groups: list[str] | None, quiet: bool, offsets_partitions: int | None,
                   on_event: Any = None) -> Any:
    from kafkatool.ops.offsets_log import offsets_partition_dirs, replay_log_dirs

    for d in log_dirs:
        if not d.exists():
            raise CliError(f"{d}: no such file or directory", EXIT_USAGE)
        if not d.is_dir():
            raise CliError(f"{d}: not a directory", EXIT_USAGE)
    dirs = [p for d in log_dirs for p in offsets_partition_dirs(d)]
    if not dirs:
        raise CliError(f"{', '.join(map(str, log_dirs))}: no __consumer_offsets-* partition directories", EXIT_USAGE)
    total = sum(f.stat().st_size for p in dirs for f in p.glob("*.log"))
    with progress("reading __consumer_offsets", total, quiet=quiet, unit_bytes=True) as bar:
        return replay_log_dirs(log_dirs, groups, on_event, offsets_partitions, bar.advance)


def _emit_chunks(chunks: list[tuple[str, str]]) -> None:
    """("out" | "err", text) pieces, each written (and flushed) in turn."""
    for stream, text in chunks:
        _emit(text) if stream == "out" else _emit("", text)


def _emit(out: str, err: str = "") -> None:
    if out:
        sys.stdout.write(out)
        sys.stdout.flush()
    if err:
        sys.stderr.write(err)
        sys.stderr.flush()


# --------------------------------------------------------------------------------------------------
# describe (the group's callback)


@offsets_app.callback()
@handle_errors
def describe(
    ctx: typer.Context,
    group: list[str] = _GROUP,
    all_groups: bool = _ALL_GROUPS,
    bootstrap_server: str = _BOOTSTRAP,
    zookeeper: str = _ZOOKEEPER,
    log_dir: list[Path] = typer.Option(None, "--log-dir", help="Broker log dir(s) holding __consumer_offsets-* (offline)."),
    command_config: CommandConfig = None,
    topic: list[str] = _TOPIC,
    members: bool = typer.Option(False, "--members", help="Members of the group (kafka-consumer-groups --members)."),
    verbose: bool = typer.Option(False, "--verbose", help="With --members: each member's partitions."),
    state: bool = typer.Option(False, "--state", help="Coordinator, assignment strategy, state and member count."),
    broker_info: bool = typer.Option(False, "--broker-info", help="ZooKeeper groups: print the brokers asked (ConsumerOffsetChecker)."),
    time_lag: bool = typer.Option(False, "--time-lag", help="Timestamp of the record at each committed offset, and its age (text: kafkatool's own table)."),
    sample: float = typer.Option(None, "--sample", help="Measure consume/produce rates over SECONDS and estimate time to drain (implies --time-lag)."),
    max_lag: int = typer.Option(None, "--max-lag", help="Exit 1 when any partition lags more than N messages."),
    max_time_lag: float = typer.Option(None, "--max-time-lag", help="Exit 1 when any partition's time lag exceeds SECONDS."),
    history: bool = typer.Option(False, "--history", help="Offline: every commit with its commit time, oldest first."),
    offsets_partitions: int = typer.Option(None, "--offsets-partitions", help="Offline: __consumer_offsets partition count, to read only the groups' partitions."),
    fetch_bytes: int = typer.Option(2048, "--fetch-bytes", help="Time lag: bytes fetched per partition at first (a compressed batch cut short is fetched again whole)."),
    output_format: str = typer.Option("text", "--format", help="text (Kafka's output), json, ndjson, csv or table."),
    timeout: float = _TIMEOUT,
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bar."),
) -> None:
    if ctx.invoked_subcommand is not None:
        return
    fmt = check_format(output_format, TEXT_FORMATS)
    groups = list(dict.fromkeys(_split(group)))
    topics = _split(topic) or None
    deadline = _check_timeout(timeout)
    zookeeper, bootstrap_server, command_config = _profile(zookeeper, bootstrap_server, command_config, log_dir)
    source = _check_source(bootstrap_server, zookeeper, log_dir)
    if history and source != "log-dir":
        raise CliError("--history reads the log: it needs --log-dir")
    if not history:
        _check_groups(groups, all_groups)
    elif groups and all_groups:
        raise CliError("give --group or --all-groups, not both")
    if members and state:
        raise CliError("choose at most one of --members and --state")
    if verbose and not members:
        raise CliError("--verbose goes with --members")
    if (members or state) and source == "zookeeper":
        raise CliError("--members and --state describe Kafka-stored groups: use --bootstrap-server")
    if state and source == "log-dir":
        raise CliError("--state needs the coordinator: use --bootstrap-server")
    if broker_info and source != "zookeeper":
        raise CliError("--broker-info goes with --zookeeper (ConsumerOffsetChecker)")
    if sample is not None and not sample > 0:
        raise CliError("--sample must be a positive number of seconds")
    if (time_lag or sample) and source == "log-dir":
        raise CliError("--time-lag and --sample read records from the brokers: use --bootstrap-server or --zookeeper")
    if fetch_bytes < 1:
        raise CliError("--fetch-bytes must be positive")
    if sample is not None:
        time_lag = True
    # --max-time-lag needs the time lag even when the table shown is Kafka's (no --time-lag).
    measure_time_lag = time_lag or max_time_lag is not None
    if max_time_lag is not None and source == "log-dir":
        raise CliError("--max-time-lag reads records from the brokers: use --bootstrap-server or --zookeeper")
    from kafkatool.ops import offsets_report as rep

    with _translate():
        if source == "log-dir":
            _describe_offline(log_dir, groups if groups and not all_groups else None, topics, members, verbose,
                              history, offsets_partitions, fmt, quiet)
            return
        if source == "zookeeper":
            from kafkatool.cluster.groups import KafkaGroups

            with _zookeeper(zookeeper, timeout) as zk, \
                    _brokers(bootstrap_server, command_config, timeout, deadline, zk, optional=True) as bo:
                names = zk.list_groups() if all_groups else groups
                if bo is None and measure_time_lag:
                    raise CliError("--time-lag, --sample and --max-time-lag read records and no broker answered",
                                   EXIT_FAILURE)
                kg = KafkaGroups(bo) if bo is not None else None

                def gather() -> list[Any]:
                    return rep.gather_zookeeper(zk, bo, names, topics, kg)

                reports = _collect(gather, bo, measure_time_lag, sample, fetch_bytes)
                broker_map = {b.id: f"{b.host}:{b.port}" for b in zk.brokers().values()} if broker_info else None
        else:
            from kafkatool.cluster.groups import KafkaGroups

            with _brokers(bootstrap_server, command_config, timeout, deadline) as bo:
                kg = KafkaGroups(bo)
                names = kg.list_groups() if all_groups else groups

                def gather() -> list[Any]:
                    return rep.gather_kafka(kg, bo, names, topics, text_release())

                reports = _collect(gather, bo, measure_time_lag, sample, fetch_bytes)
            broker_map = None
    _render_describe(reports, source, fmt, members, verbose, state, time_lag, sample is not None, broker_map)
    _exit_for(reports, groups if not all_groups else [], max_lag, max_time_lag)


def _collect(gather: Any, brokers: Any, time_lag: bool, sample: float | None, fetch_bytes: int) -> list[Any]:
    from kafkatool.ops import offsets_report as rep

    if sample is not None:
        first = rep.sample_key(gather())
        start = time.monotonic()
        brokers.pause(sample)  # --timeout bounds the cluster work, not the wait asked for
        time.sleep(sample)
        reports = gather()
        rep_elapsed = time.monotonic() - start
        for r in reports:
            rep.apply_rates(r.rows, first, rep_elapsed)
    else:
        reports = gather()
    if time_lag:
        rep.add_time_lag(reports, brokers, int(time.time() * 1000), fetch_bytes)
    return list(reports)


def _columns(time_lag: bool, rates: bool) -> list[str]:
    from kafkatool.ops import offsets_report as rep

    return rep.ROW_COLUMNS + (rep.TIME_COLUMNS if time_lag else []) + (rep.RATE_COLUMNS if rates else [])


def _render_describe(reports: list[Any], source: str, fmt: str, members: bool, verbose: bool, state: bool,
                     time_lag: bool, rates: bool, broker_map: dict[int, str] | None) -> None:
    from kafkatool.ops import offsets_report as rep

    if fmt != "text":
        if members:
            render_rows((m.as_row() for r in reports if r.state is not None for m in r.members), fmt,
                        ["group", "consumer_id", "group_instance_id", "host", "client_id", "partitions", "assignment"])
        elif state:
            render_rows((_state_row(r).as_row() for r in reports), fmt,
                        ["group", "coordinator_id", "coordinator", "assignment_strategy", "state", "members"])
        else:
            render_rows((row.as_row() for r in reports for row in r.rows), fmt, _columns(time_lag, rates))
        return
    if time_lag:
        _emit(rep.format_time_lag([row for r in reports for row in r.rows], rates))
        return
    if source == "zookeeper":
        for r in reports:
            if r.state is None:
                continue
            _emit(rep.format_offset_checker(r.rows, broker_map))
        return
    kafka40 = text_release().at_least("4.0")  # 4.0: each group's state line written before its table
    if members:
        member_groups = [(r.group, r.state, r.members if r.state is not None else None) for r in reports]
        if kafka40:
            _emit_chunks(rep.members_chunks_40(member_groups, verbose, text_release()))
        else:
            _emit(*rep.format_members(member_groups, verbose))
    elif state:
        states = [_state_row(r) for r in reports if r.state is not None]
        if kafka40:
            _emit_chunks(rep.state_chunks_40(states))
        else:
            _emit(*rep.format_state(states))
    else:
        groups = [(r.group, r.state, r.rows if r.state is not None else None) for r in reports]
        if kafka40:
            _emit_chunks(rep.describe_chunks(groups))
        else:
            _emit(*rep.format_describe(groups))
    pending = [(r.group, r.pending) for r in reports if r.pending]
    for g, n in pending:
        sys.stderr.write(f"kafkatool: note: group '{g}' has {n} transactional offset commit(s) still pending (not counted)\n")


def _state_row(r: Any) -> Any:
    from kafkatool.ops.offsets_report import StateRow

    return StateRow(r.group, r.coordinator_id, r.coordinator, r.protocol, r.state or "Dead", len(r.members))


def _exit_for(reports: list[Any], requested: list[str], max_lag: int | None, max_time_lag: float | None,
              problems: list[str] | None = None) -> None:
    missing = [r.group for r in reports if r.group in requested and (r.state is None or r.state == "Dead")]
    over = []
    for r in reports if max_lag is not None or max_time_lag is not None else ():  # (a row per partition)
        for row in r.rows:
            if max_lag is not None and row.lag is not None and row.lag > max_lag:
                over.append(f"{row.group} {row.topic}-{row.partition} lag {row.lag}")
            elif max_time_lag is not None and row.time_lag_ms is not None and row.time_lag_ms > max_time_lag * 1000:
                over.append(f"{row.group} {row.topic}-{row.partition} time lag {row.time_lag_ms / 1000:g}s")
    if problems:
        for p in problems[:20]:
            sys.stderr.write(f"kafkatool: {p}\n")
        raise typer.Exit(EXIT_FINDINGS)
    if missing:
        raise CliError(f"group {', '.join(repr(g) for g in missing)}: does not exist", EXIT_USAGE)
    if over:
        more = f" (and {len(over) - 1} more)" if len(over) > 1 else ""
        raise CliError(f"lag over the limit: {over[0]}{more}", EXIT_FINDINGS)


def _describe_offline(log_dirs: list[Path], groups: list[str] | None, topics: list[str] | None, members: bool,
                      verbose: bool, history: bool, offsets_partitions: int | None, fmt: str, quiet: bool) -> None:
    from kafkatool.ops import offsets_report as rep

    if history:
        events: list[Any] = []
        keep = set(topics or [])
        st = _read_log_dirs(log_dirs, groups, quiet, offsets_partitions, events.append)
        events = [e for e in events if not keep or e.topic in keep]
        if fmt == "text":
            _emit(rep.format_history(events))
        else:
            from dataclasses import asdict

            render_rows((asdict(e) for e in events), fmt,
                        ["kind", "group", "topic", "partition", "offset", "metadata", "commit_timestamp",
                         "log_partition", "log_offset", "record_timestamp", "producer_id"])
        _exit_for([], [], None, None, st.problems)
        return
    st = _read_log_dirs(log_dirs, groups, quiet, offsets_partitions)
    reports = rep.gather_offline(st, log_dirs, groups, topics, text_release())
    from kafkatool import release

    if fmt == "text" and release.explicit() is None and any(len(r.rows) > 1 for r in reports):
        # The segments' record versions are the same from Kafka 2.1 to 4.x for classic groups: they
        # cannot tell which tool's row order the cluster's own tool would print, so say which one this is.
        sys.stderr.write(f"kafkatool: note: offline: rows in Kafka {text_release()}'s order (the segments do not "
                         "show the release that wrote them; --kafka-release 3.3 prints a 2.x/3.x cluster's)\n")
    _render_describe(reports, "log-dir", fmt, members, verbose, False, False, False, None)
    _exit_for(reports, groups or [], None, None, st.problems)
