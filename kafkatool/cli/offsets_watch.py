"""`kafkatool offsets watch`: lag status per partition and group over a window, Burrow's way."""

from __future__ import annotations

import sys
import time
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

WATCH_HELP = """Lag status over a window of commits, per partition and group, as Burrow evaluates it.

Per partition, over its last --window commits: OK when the lag was zero at some point; REWIND when
the committed offset went backwards; STOP when the last commit is older than the window's own span;
STALL when the offset did not move while lag stayed; WARN when the offset moves but lag never
shrinks; else OK.  A group is ERR when a partition is STOP, STALL or REWIND, WARN when one is WARN.

Live (--bootstrap-server or --zookeeper): samples every --interval seconds, --window times; each
sample is a window entry (OffsetFetch has no commit times, so a stopped consumer shows as STALL).
Offline (--log-dir): the commit history in __consumer_offsets, each commit with its commit time and
the lag at that time when the topic's partitions are in the log dirs too (else lag unknown:
UNKNOWN unless REWIND or STOP); judged at --now (default: the newest commit).

\b
Output: text (a line per partition, then per group), or --format ndjson (samples as they are taken,
then {"type":"partition",…} and {"type":"group",…} objects), json, csv, table.
Exit codes: 0 every group OK; 1 a group WARN; 4 a group ERR; 2 usage; 3 cluster unreachable.

\b
Examples:
  kafkatool offsets watch --bootstrap-server kafka:9092 --group orders-app --interval 30 --window 10
  kafkatool offsets watch --bootstrap-server kafka:9092 --all-groups --interval 5 --window 6 --format ndjson
  kafkatool offsets watch --log-dir /var/lib/kafka --all-groups --window 10
"""

PARTITION_COLUMNS = ("group", "topic", "partition", "status", "commits", "complete", "first_offset", "last_offset",
                     "first_lag", "last_lag", "first_commit_ms", "last_commit_ms")


def _text(statuses: list[Any]) -> str:
    head = ["GROUP", "TOPIC", "PARTITION", "STATUS", "COMMITS", "OFFSETS", "LAG"]
    body = []
    for g in statuses:
        for p in g.partitions:
            r = p.row()
            body.append([r["group"], r["topic"], str(r["partition"]), r["status"], str(r["commits"]),
                         f"{r['first_offset']}..{r['last_offset']}",
                         f"{_n(r['first_lag'])}..{_n(r['last_lag'])}"])
    out = aligned_text(head, body)
    for g in statuses:
        w = g.worst
        worst = f" (worst: {w.topic}-{w.partition} {w.status})" if w is not None and g.status != "OK" else ""
        out += f"Group {g.group}: {g.status}{worst}\n"
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
    log_dir: list[Path] = typer.Option(None, "--log-dir", help="Broker log dir(s) with __consumer_offsets-* (offline)."),
    command_config: CommandConfig = None,
    topic: list[str] = _TOPIC,
    window: int = typer.Option(10, "--window", help="Commits (offline) or samples (live) a window holds."),
    interval: float = typer.Option(10.0, "--interval", help="Live: seconds between samples."),
    now: int = typer.Option(None, "--now", help="Offline: judge at this time in ms (default: the newest commit)."),
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
    zookeeper, bootstrap_server, command_config = _profile(zookeeper, bootstrap_server, command_config, log_dir)
    source = _check_source(bootstrap_server, zookeeper, log_dir)
    if now is not None and source != "log-dir":
        raise CliError("--now judges a history read offline: it goes with --log-dir")
    wanted = None if all_groups else set(groups)
    if source == "log-dir":
        from kafkatool.ops.offsets_log import replay_log_dirs

        for d in log_dir or []:
            if not d.is_dir():
                raise CliError(f"{d}: no such directory", EXIT_USAGE)
        events: list[Any] = []
        with _translate():
            replay_log_dirs(log_dir or [], None if wanted is None else sorted(wanted), events.append)
        windows, newest = ls.windows_from_history(events, ls.EndOffsetsAt(log_dir or []), wanted)
        judged_at = now if now is not None else newest
    else:
        # --timeout bounds the cluster work; the waits between samples come on top of it
        deadline += (window - 1) * interval
        windows = _sample(source, bootstrap_server, zookeeper, command_config, timeout, deadline, groups, all_groups,
                          window, interval, fmt)
        judged_at = int(time.time() * 1000)
    if topics is not None:
        windows = {k: v for k, v in windows.items() if k[1] in topics}
    statuses = ls.evaluate_groups(windows, window, judged_at)
    if wanted:
        missing = sorted(wanted - {g.group for g in statuses})
        for g in missing:
            sys.stderr.write(f"kafkatool: offsets watch: group {g} has no committed offsets\n")
    _render(statuses, fmt)
    code = ls.exit_code(statuses)
    if code:
        raise typer.Exit(code)


def _sample(source: str, bootstrap: str | None, zookeeper: str | None, command_config: Any, timeout: float,
            deadline: float,
            groups: list[str], all_groups: bool, window: int, interval: float, fmt: str) -> dict:
    from kafkatool.cluster.groups import KafkaGroups
    from kafkatool.ops import lagstatus as ls
    from kafkatool.ops import offsets_report as rep

    samples = ls.SampleWindows()
    with _translate():
        if source == "zookeeper":
            assert zookeeper is not None
            with _zookeeper(zookeeper, timeout) as zk, _brokers(bootstrap, command_config, timeout, deadline, zk) as bo:
                names = zk.list_groups() if all_groups else groups
                kg = KafkaGroups(bo)
                _take(samples, lambda: rep.gather_zookeeper(zk, bo, names, None, kg), window, interval, fmt)
        else:
            with _brokers(bootstrap, command_config, timeout, deadline) as bo:
                kg = KafkaGroups(bo)
                names = kg.list_groups() if all_groups else groups
                _take(samples, lambda: rep.gather_kafka(kg, bo, names, None), window, interval, fmt)
    return samples.windows


def _take(samples: Any, gather: Any, window: int, interval: float, fmt: str) -> None:
    for i in range(window):
        if i:
            time.sleep(interval)
        taken = int(time.time() * 1000)
        for report in gather():
            for r in report.rows:
                if r.topic is None or r.partition is None:
                    continue
                samples.add((r.group, r.topic, r.partition), r.current_offset, r.lag, taken)
                if fmt == "ndjson":
                    sys.stdout.write(dumps({"type": "sample", "sample": i + 1, "time_ms": taken, "group": r.group,
                                            "topic": r.topic, "partition": r.partition,
                                            "offset": r.current_offset, "lag": r.lag}) + "\n")
        if fmt == "ndjson":
            sys.stdout.flush()


def _render(statuses: list[Any], fmt: str) -> None:
    if fmt == "text":
        sys.stdout.write(_text(statuses))
    elif fmt == "ndjson":
        for g in statuses:
            for p in g.partitions:
                sys.stdout.write(dumps({"type": "partition", **p.row()}) + "\n")
            sys.stdout.write(dumps({"type": "group", **g.row()}) + "\n")
    elif fmt == "json":
        sys.stdout.write(dumps({"groups": [{**g.row(), "partition_statuses": [p.row() for p in g.partitions]}
                                           for g in statuses]}) + "\n")
    else:
        render_rows([p.row() for g in statuses for p in g.partitions], fmt, PARTITION_COLUMNS)
