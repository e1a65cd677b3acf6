"""`kafkatool log-dirs`: where the bytes are — per partition, topic or log dir, offline from disk or live."""

from __future__ import annotations

import datetime as _dt
import sys
from pathlib import Path

import typer

from kafkatool.cli.app import app, handle_errors
from kafkatool.cli.errors import EXIT_USAGE, CliError
from kafkatool.cli.render import aligned_text, check_format, render_rows

HELP = """Sizes, segment counts, offset ranges and time spans of the partitions in log dirs on disk;
or, with --describe --bootstrap-server, Kafka's `kafka-log-dirs.sh --describe` (DescribeLogDirs).

Per partition: the log's size as the broker counts it (its .log files; `index_bytes` beside it),
segments, log start/end offsets, the oldest and newest record timestamps (first batch; the last
segment's largest timestamp, as retention sees it), and with --retention-ms/--retention-bytes the
segments and bytes the broker's next retention pass would delete.  --by topic or --by log_dir sums
the rows.  Replicas being moved between log dirs (`.future` dirs) are marked is_future.

\b
Columns (--format json|ndjson|csv): log_dir, topic, partition, is_future, size, index_bytes,
segments, log_start_offset, log_end_offset, oldest_timestamp, newest_timestamp,
reclaimable_segments, reclaimable_bytes, problem (ms timestamps; null when unknown).

\b
Live (--describe --bootstrap-server; not with PATHs): the text of Kafka's tool byte for byte
(the release's: --kafka-release, else the broker's), or with --format rows per broker, log dir
and replica (broker, log_dir, topic, partition, is_future, size, offset_lag, error), or with
--by topic|log_dir|broker their sums.  Exit 2 when --broker-list names unknown brokers (Kafka's
ERROR line: on stdout as 3.3 prints it, on stderr as 4.0 does).

\b
Examples:
  kafkatool log-dirs /var/lib/kafka/data
  kafkatool log-dirs --describe --bootstrap-server kafka1:9092
  kafkatool log-dirs --describe --bootstrap-server kafka1:9092 --broker-list 1,2 --topic-list orders
  kafkatool log-dirs --describe --bootstrap-server kafka1:9092 --format csv --by topic
  kafkatool log-dirs /var/lib/kafka/data /mnt/disk2/kafka --by topic
  kafkatool log-dirs /var/lib/kafka/data --retention-ms 604800000 --by topic --format csv
  kafkatool log-dirs /var/lib/kafka/data/orders-0 --format json
"""

COLUMNS = ("log_dir", "topic", "partition", "is_future", "size", "index_bytes", "segments", "log_start_offset",
           "log_end_offset", "oldest_timestamp", "newest_timestamp", "reclaimable_segments", "reclaimable_bytes",
           "problem")


def _human(n: int | None) -> str:
    if n is None:
        return "-"
    value = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if value < 1024 or unit == "TiB":
            return f"{int(value)} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return str(n)


def _when(ms: int | None) -> str:
    if ms is None:
        return "-"
    return _dt.datetime.fromtimestamp(ms / 1000, _dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _text(rows: list[dict], by: str) -> str:
    if by == "partition":
        head = ["LOG-DIR", "PARTITION", "SIZE", "SEGMENTS", "START", "END", "OLDEST", "NEWEST", "RECLAIMABLE"]
        body = [[r["log_dir"], f"{r['topic']}-{r['partition']}" + (" (future)" if r["is_future"] else ""),
                 _human(r["size"]), str(r["segments"]),
                 "-" if r["log_start_offset"] is None else str(r["log_start_offset"]),
                 "-" if r["log_end_offset"] is None else str(r["log_end_offset"]),
                 _when(r["oldest_timestamp"]), _when(r["newest_timestamp"]), _human(r["reclaimable_bytes"])]
                for r in rows]
    else:
        head = [by.upper().replace("_", "-"), "PARTITIONS", "SIZE", "SEGMENTS", "OLDEST", "NEWEST", "RECLAIMABLE"]
        body = [[str(r[by]), str(r["partitions"]), _human(r["size"]), str(r["segments"]),
                 _when(r["oldest_timestamp"]), _when(r["newest_timestamp"]), _human(r["reclaimable_bytes"])]
                for r in rows]
    return aligned_text(head, body)


LIVE_COLUMNS = ("broker", "log_dir", "topic", "partition", "is_future", "size", "offset_lag", "error")


def _split(values: list[str] | None) -> list[str]:
    return [v for item in values or [] for v in item.split(",") if v]


def _live_sums(rows: list[dict], by: str) -> list[dict]:
    """Live rows summed by topic, by broker or by (broker, log dir); future replicas counted apart."""
    groups: dict[tuple, dict] = {}
    for r in rows:
        if r["topic"] is None:
            continue
        key = {"topic": (r["topic"],), "broker": (r["broker"],), "log_dir": (r["broker"], r["log_dir"])}[by]
        g = groups.setdefault(key, {**dict(zip(("broker", "log_dir") if by == "log_dir" else (by,), key,
                                                strict=True)), "partitions": 0, "size": 0, "future_size": 0})
        if r["is_future"]:
            g["future_size"] += r["size"]
        else:
            g["partitions"] += 1
            g["size"] += r["size"]
    return sorted(groups.values(), key=lambda g: (-g["size"], [str(g[k]) for k in g if k not in
                                                                ("partitions", "size", "future_size")]))


def _describe_live(bootstrap_server: str | None, command_config: Path | None, timeout: float,
                   broker_list: list[str] | None, topic_list: list[str] | None, by: str, output_format: str) -> None:
    from kafkatool.cli.cluster_options import cluster_from_options
    from kafkatool.cluster import logdirs as live

    if not bootstrap_server:
        raise CliError("log-dirs: --describe needs --bootstrap-server", EXIT_USAGE)
    wanted_brokers: list[int] | None = None
    if broker_list:
        try:
            wanted_brokers = [int(b) for b in _split(broker_list)]
        except ValueError:
            raise CliError(f"--broker-list: {','.join(broker_list)!r} is not a list of broker ids", EXIT_USAGE) \
                from None
    topics = _split(topic_list)
    with cluster_from_options(None, bootstrap_server, command_config, timeout, "log-dirs") as opened:
        from kafkatool.cluster.admin import AdminCluster

        assert isinstance(opened, AdminCluster)  # --bootstrap-server only: DescribeLogDirs is an Admin API
        cluster = opened
        text = cluster.text_release()
        choice = live.choose_brokers(cluster.node_ids(), wanted_brokers, text)
        if choice.missing:
            line = live.missing_brokers_line(choice)
            if live.tools_in_scala(text):
                sys.stdout.write(line + "\n")
                raise CliError(f"log-dirs: --broker-list: no broker {','.join(map(str, choice.missing))} "
                               "in the cluster", EXIT_USAGE)
            raise CliError(f"log-dirs: {line}", EXIT_USAGE)  # 4.0: a TerseException, on stderr
        if output_format == "text" and by == "partition":
            sys.stdout.write(live.QUERYING + "\n")
            sys.stdout.flush()
        described = cluster.describe_log_dirs(choice.existing)
    if output_format == "text" and by != "partition":  # sums asked for: our text, not Kafka's JSON
        sums = _live_sums(live.rows(described, topics), by)
        keys = [k for k in (sums[0] if sums else {"partitions": 0}) if k not in ("partitions", "size", "future_size")]
        sys.stdout.write(aligned_text([k.upper().replace("_", "-") for k in keys] + ["PARTITIONS", "SIZE", "FUTURE"],
                                      [[str(g[k]) for k in keys] + [str(g["partitions"]), _human(g["size"]),
                                                                    _human(g["future_size"])] for g in sums]))
        return
    if output_format == "text":
        text_out = live.describe_text(described, choice, topics, text)
        sys.stdout.write(text_out[len(live.QUERYING) + 1:])
        return
    rows = live.rows(described, topics)
    if by == "partition":
        render_rows(rows, output_format, LIVE_COLUMNS)
    else:
        render_rows(_live_sums(rows, by), output_format)


@app.command("log-dirs", help=HELP, no_args_is_help=True)
@handle_errors
def log_dirs(
    paths: list[Path] = typer.Argument(None, help="Log dirs (or partition dirs) on disk (offline mode)."),
    describe: bool = typer.Option(False, "--describe", help="Live: DescribeLogDirs, as kafka-log-dirs.sh."),
    bootstrap_server: str = typer.Option(None, "--bootstrap-server", metavar="HOST:PORT[,HOST:PORT…]",
                                         help="Live: brokers to bootstrap from."),
    broker_list: list[str] = typer.Option(None, "--broker-list", help="Live: only these broker ids (0,1,2)."),
    topic_list: list[str] = typer.Option(None, "--topic-list", help="Live: only these topics (a,b)."),
    command_config: Path = typer.Option(None, "--command-config", metavar="FILE",
                                        help="Live: Java client properties (security, client.id)."),
    timeout: float = typer.Option(30.0, "--timeout", metavar="SECONDS", help="Live: limit for each cluster call."),
    by: str = typer.Option("partition", "--by", help="partition, topic or log_dir (live: broker too)."),
    topic: list[str] = typer.Option(None, "--topic", help="Only these topics (repeat or comma-separate)."),
    retention_ms: int = typer.Option(None, "--retention-ms", help="retention.ms to forecast deletion with (-1: none)."),
    retention_bytes: int = typer.Option(None, "--retention-bytes", help="retention.bytes to forecast with (-1: none)."),
    now: int = typer.Option(None, "--now", help="The time retention is judged at, in ms (default: now)."),
    output_format: str = typer.Option("text", "--format", help="text, table, json, ndjson or csv."),
) -> None:
    from kafkatool.ops.logdirs import LogDirsInputError, Retention, aggregate, scan_log_dirs

    check_format(output_format, ("text", "table", "json", "ndjson", "csv"))
    live = describe or bootstrap_server or broker_list or topic_list or command_config
    if live:
        if paths:
            raise CliError("log-dirs: give log dir PATHs (offline) or --describe --bootstrap-server (live), "
                           "not both", EXIT_USAGE)
        if not describe:
            raise CliError("log-dirs: the live mode needs --describe (as kafka-log-dirs.sh)", EXIT_USAGE)
        offline_only = [n for n, v in (("--retention-ms", retention_ms), ("--retention-bytes", retention_bytes),
                                       ("--now", now), ("--topic", topic)) if v]
        if offline_only:
            raise CliError(f"log-dirs: {', '.join(offline_only)} apply to log dirs on disk, not to --describe",
                           EXIT_USAGE)
        if by not in ("partition", "topic", "log_dir", "broker"):
            raise CliError(f"--by: {by!r} is not one of partition, topic, log_dir, broker", EXIT_USAGE)
        if timeout <= 0:
            raise CliError(f"--timeout: {timeout:g} is not a positive number of seconds", EXIT_USAGE)
        _describe_live(bootstrap_server, command_config, timeout, broker_list, topic_list, by, output_format)
        return
    if not paths:
        raise CliError("log-dirs: give log dir PATHs, or --describe --bootstrap-server", EXIT_USAGE)
    if by not in ("partition", "topic", "log_dir"):
        raise CliError(f"--by: {by!r} is not one of partition, topic, log_dir", EXIT_USAGE)
    for name, value in (("--retention-ms", retention_ms), ("--retention-bytes", retention_bytes)):
        if value is not None and value < -1:
            raise CliError(f"{name}: {value} is below -1 (-1 means no limit)", EXIT_USAGE)
    if now is not None and now < 0:
        raise CliError(f"--now: {now} is not a time in ms since the epoch", EXIT_USAGE)
    retention = None
    if retention_ms is not None or retention_bytes is not None:
        retention = Retention(None if retention_ms in (None, -1) else retention_ms,
                              None if retention_bytes in (None, -1) else retention_bytes)
    topics = {t for item in topic or [] for t in item.split(",") if t} or None
    try:
        usages = scan_log_dirs(paths, retention, now, topics)
    except LogDirsInputError as exc:
        raise CliError(str(exc), EXIT_USAGE) from None
    rows = aggregate(usages, by)
    if output_format == "text":
        sys.stdout.write(_text(rows, by))
    else:
        render_rows(rows, output_format, COLUMNS if by == "partition" else None)
