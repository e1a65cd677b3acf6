"""`kafkatool log-dirs`: where the bytes are — per partition, topic or log dir, offline from disk."""

from __future__ import annotations

import datetime as _dt
import sys
from pathlib import Path

import typer

from kafkatool.cli.app import app, handle_errors
from kafkatool.cli.errors import EXIT_USAGE, CliError
from kafkatool.cli.render import aligned_text, check_format, render_rows

HELP = """Sizes, segment counts, offset ranges and time spans of the partitions in log dirs on disk.

Per partition: the log's size as the broker counts it (its .log files; `index_bytes` beside it),
segments, log start/end offsets, the oldest and newest record timestamps (first batch; the last
segment's largest timestamp, as retention sees it), and with --retention-ms/--retention-bytes the
segments and bytes the broker's next retention pass would delete.  --by topic or --by log_dir sums
the rows.  Replicas being moved between log dirs (`.future` dirs) are marked is_future.

\\b
Columns (--format json|ndjson|csv): log_dir, topic, partition, is_future, size, index_bytes,
segments, log_start_offset, log_end_offset, oldest_timestamp, newest_timestamp,
reclaimable_segments, reclaimable_bytes, problem (ms timestamps; null when unknown).

\\b
Examples:
  kafkatool log-dirs /var/lib/kafka/data
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


@app.command("log-dirs", help=HELP, no_args_is_help=True)
@handle_errors
def log_dirs(
    paths: list[Path] = typer.Argument(..., help="Log dirs (or partition dirs) on disk."),
    by: str = typer.Option("partition", "--by", help="partition, topic or log_dir."),
    topic: list[str] = typer.Option(None, "--topic", help="Only these topics (repeat or comma-separate)."),
    retention_ms: int = typer.Option(None, "--retention-ms", help="retention.ms to forecast deletion with (-1: none)."),
    retention_bytes: int = typer.Option(None, "--retention-bytes", help="retention.bytes to forecast with (-1: none)."),
    now: int = typer.Option(None, "--now", help="The time retention is judged at, in ms (default: now)."),
    output_format: str = typer.Option("text", "--format", help="text, table, json, ndjson or csv."),
) -> None:
    from kafkatool.ops.logdirs import LogDirsInputError, Retention, aggregate, scan_log_dirs

    check_format(output_format, ("text", "table", "json", "ndjson", "csv"))
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
