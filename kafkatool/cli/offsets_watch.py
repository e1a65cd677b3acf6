"""`kafkatool offsets watch`: lag status per partition and group over a window, Burrow's way."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import typer

from kafkatool.cli.app import handle_errors
from kafkatool.cli.cluster_options import DEFAULT_TIMEOUT, CommandConfig, Timeout
from kafkatool.cli.errors import EXIT_USAGE, CliError
from kafkatool.cli.offsets import (
    _ALL_GROUPS,
    _BOOTSTRAP,
    _GROUP,
    _TOPIC,
    _ZOOKEEPER,
    _brokers,
    _check_groups,
    _check_source,
    _check_timeout,
    _profile,
    _split,
    _translate,
    _zookeeper,
    offsets_app,
)
from kafkatool.cli.render import aligned_text, check_format, dumps, render_rows

WATCH_HELP = """Lag status over a window of commits, per partition and group: Burrow's rules in Burrow's order.

Per partition, over its last --window commits: OK when the current lag is zero; STOP when the last
commit is older than the window's own span (and the consumer was not caught up a moment ago); OK
when the lag was zero at some commit; REWIND when the committed offset went backwards; STALL when
it never moved while there is lag; WARN when it moves but the lag never decreased; else OK.  The
comparing rules need two commits.  A group is ERR when a partition is STOP, STALL or REWIND, WARN
when one is WARN.

Evidence (the `evidence` field, the EVIDENCE column): live, `commits` — __consumer_offsets read as
it is written, each commit with its commit time, the history already in the log filling the
windows at once; where that topic cannot be read, `samples` — committed offsets sampled every
--interval seconds (no commit times: no STOP).  Live runs last --window rounds --interval apart,
re-reading the end offsets and, with --all-groups, the group list every round.  Offline
(--log-dir), `log` — the commit history on disk, cut at --now (default: the newest commit).

\b
Output: text (a line per partition, then per group), or --format ndjson (commits, samples and each
change of status as they happen, then {"type":"partition",…} and {"type":"group",…}), json, csv, table.
Exit codes: 0 every group OK; 1 a group WARN; 4 a group ERR; 2 usage; 3 cluster unreachable.

\b
Examples:
  kafkatool offsets watch --bootstrap-server kafka:9092 --group orders-app --interval 30 --window 10
  kafkatool offsets watch --bootstrap-server kafka:9092 --all-groups --interval 5 --window 6 --format ndjson
  kafkatool offsets watch --log-dir /var/lib/kafka --all-groups --window 10 --now 1700000330000
"""

PARTITION_COLUMNS = (
    "group",
    "topic",
    "partition",
    "status",
    "evidence",
    "commits",
    "complete",
    "first_offset",
    "last_offset",
    "first_lag",
    "last_lag",
    "current_lag",
    "first_commit_ms",
    "last_commit_ms",
)

# The clock the live rounds wait on and every verdict is judged at (tests put their own here).
CLOCK: Any = None


def _clock() -> Any:
    from kafkatool.ops.lagstatus import SystemClock

    return CLOCK if CLOCK is not None else SystemClock()


def _text(statuses: list[Any]) -> str:
    head = ["GROUP", "TOPIC", "PARTITION", "STATUS", "EVIDENCE", "COMMITS", "OFFSETS", "LAG"]
    body = []
    for g in statuses:
        for p in g.partitions:
            r = p.row()
            body.append(
                [
                    r["group"],
                    r["topic"],
                    str(r["partition"]),
                    r["status"],
                    r["evidence"],
                    str(r["commits"]),
                    f"{r['first_offset']}..{r['last_offset']}",
                    f"{_n(r['first_lag'])}..{_n(r['last_lag'])}",
                ]
            )
    out = aligned_text(head, body)
    for g in statuses:
        w = g.worst
        worst = f" (worst: {w.topic}-{w.partition} {w.status})" if w is not None and g.status != "OK" else ""
        out += f"Group {g.group}: {g.status}{worst} on {g.evidence}\n"
    return out


def _n(v: int | None) -> str:
    return "?" if v is None else str(v)


@offsets_app.command("watch", help=WATCH_HELP, no_args_is_help=True)
@handle_errors
def watch(
    group: list[str] = _GROUP,
    all_groups: bool = _ALL_GROUPS,
    bootstrap_server: str = _BOOTSTRAP,
    zookeeper: str = _ZOOKEEPER,
    log_dir: list[Path] = typer.Option(
        None, "--log-dir", help="Broker log dir(s) with __consumer_offsets-* (offline)."
    ),
    command_config: CommandConfig = None,
    topic: list[str] = _TOPIC,
    window: int = typer.Option(
        10, "--window", help="Commits a window holds; live, also the number of rounds."
    ),
    interval: float = typer.Option(10.0, "--interval", help="Live: seconds between rounds."),
    now: int = typer.Option(
        None,
        "--now",
        help="Offline: judge at this time in ms, on the history up to it (default: the newest commit).",
    ),
    output_format: str = typer.Option("text", "--format", help="text, json, ndjson, csv or table."),
    timeout: Timeout = DEFAULT_TIMEOUT,
) -> None:
    from kafkatool.ops import lagstatus as ls

    fmt = check_format(output_format, ("text", "json", "ndjson", "csv", "table"))
    groups = list(dict.fromkeys(_split(group)))
    topics = set(_split(topic)) or None
    _check_groups(groups, all_groups, "watch")
    deadline = _check_timeout(timeout)
    if not 1 <= window <= 10_000:
        raise CliError(f"--window: {window} is not between 1 and 10000", EXIT_USAGE)
    if not 0 < interval <= 86_400:
        raise CliError(f"--interval: {interval:g} is not between 0 and 86400 seconds", EXIT_USAGE)
    if now is not None and now < 0:
        raise CliError(f"--now: {now} is not a time in ms since the epoch", EXIT_USAGE)
    zookeeper, bootstrap_server, command_config = _profile(
        zookeeper, bootstrap_server, command_config, log_dir
    )
    source = _check_source(bootstrap_server, zookeeper, log_dir)
    if now is not None and source != "log-dir":
        raise CliError("--now judges a history read offline: it goes with --log-dir")
    wanted = None if all_groups else set(groups)
    if source == "log-dir":
        statuses = _offline(log_dir or [], wanted, topics, window, now)
    else:
        # --timeout bounds the cluster work; the waits between rounds come on top of it
        deadline += (window - 1) * interval
        statuses = _live(
            source,
            bootstrap_server,
            zookeeper,
            command_config,
            timeout,
            deadline,
            groups,
            all_groups,
            topics,
            window,
            interval,
            fmt,
        )
    if wanted:
        missing = sorted(wanted - {g.group for g in statuses})
        for g in missing:
            sys.stderr.write(f"kafkatool: offsets watch: group {g} has no committed offsets\n")
    _render(statuses, fmt)
    code = ls.exit_code(statuses)
    if code:
        raise typer.Exit(code)


def _offline(
    log_dir: list[Path], wanted: set[str] | None, topics: set[str] | None, window: int, now: int | None
) -> list[Any]:
    from kafkatool.ops import lagstatus as ls
    from kafkatool.ops.offsets_log import replay_log_dirs

    for d in log_dir:
        if not d.is_dir():
            raise CliError(f"{d}: no such directory", EXIT_USAGE)
    events: list[Any] = []
    with _translate():
        replay_log_dirs(log_dir, None if wanted is None else sorted(wanted), events.append)
    ends = ls.EndOffsetsAt(log_dir)
    windows, newest = ls.windows_from_history(events, ends, wanted, until_ms=now)
    if topics is not None:
        windows = {k: v for k, v in windows.items() if k[1] in topics}
    judged_at = now if now is not None else newest
    return ls.evaluate_groups(
        windows, window, judged_at, evidence=ls.LOG, current_lags=ls.current_lags_at(windows, ends, judged_at)
    )


def _emitter(fmt: str) -> Any:
    def emit(event: dict) -> None:
        if fmt == "ndjson":
            sys.stdout.write(dumps(event) + "\n")
            sys.stdout.flush()

    return emit


def _live(
    source: str,
    bootstrap: str | None,
    zookeeper: str | None,
    command_config: Any,
    timeout: float,
    deadline: float,
    groups: list[str],
    all_groups: bool,
    topics: set[str] | None,
    window: int,
    interval: float,
    fmt: str,
) -> list[Any]:
    from kafkatool.cluster.commit_log import CommitLogUnavailable, CommitTail
    from kafkatool.cluster.groups import KafkaGroups
    from kafkatool.ops import lagstatus as ls
    from kafkatool.ops import offsets_report as rep
    from kafkatool.ops.lagwatch import CommitWatch, watch_samples

    clock, emit = _clock(), _emitter(fmt)
    with _translate():
        if source == "zookeeper":
            assert zookeeper is not None
            with (
                _zookeeper(zookeeper, timeout) as zk,
                _brokers(bootstrap, command_config, timeout, deadline, zk) as bo,
            ):
                kg = KafkaGroups(bo)
                names = (lambda: zk.list_groups()) if all_groups else (lambda: groups)
                samples = watch_samples(
                    lambda ns: rep.gather_zookeeper(zk, bo, ns, None, kg),
                    names,
                    window,
                    interval,
                    clock,
                    emit,
                )
        else:
            with _brokers(bootstrap, command_config, timeout, deadline) as bo:
                kg = KafkaGroups(bo)
                tail = CommitTail(bo, None if all_groups else set(groups))
                try:
                    tail.open()
                except CommitLogUnavailable as exc:
                    sys.stderr.write(
                        f"kafkatool: note: __consumer_offsets cannot be read ({exc}): "
                        "judging on committed offsets sampled every --interval\n"
                    )
                else:
                    cw = CommitWatch(
                        tail,
                        bo,
                        window,
                        clock,
                        groups=None if all_groups else set(groups),
                        topics=topics,
                        list_groups=kg.list_groups if all_groups else None,
                        emit=emit,
                    )
                    return cw.run(window, interval)
                names = kg.list_groups if all_groups else (lambda: groups)
                samples = watch_samples(
                    lambda ns: rep.gather_kafka(kg, bo, ns, None), names, window, interval, clock, emit
                )
    windows = samples.windows
    if topics is not None:
        windows = {k: v for k, v in windows.items() if k[1] in topics}
    return ls.evaluate_groups(windows, window, clock.now_ms(), evidence=ls.SAMPLES)


def _render(statuses: list[Any], fmt: str) -> None:
    if fmt == "text":
        sys.stdout.write(_text(statuses))
    elif fmt == "ndjson":
        for g in statuses:
            for p in g.partitions:
                sys.stdout.write(dumps({"type": "partition", **p.row()}) + "\n")
            sys.stdout.write(dumps({"type": "group", **g.row()}) + "\n")
    elif fmt == "json":
        sys.stdout.write(
            dumps(
                {
                    "groups": [
                        {**g.row(), "partition_statuses": [p.row() for p in g.partitions]} for g in statuses
                    ]
                }
            )
            + "\n"
        )
    else:
        render_rows([p.row() for g in statuses for p in g.partitions], fmt, PARTITION_COLUMNS)
