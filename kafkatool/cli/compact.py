"""`kafkatool compact`: the broker's log cleaner run offline, and `--estimate` of what it would reclaim."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import typer

from kafkatool.cli.app import app, handle_errors
from kafkatool.cli.errors import EXIT_FAILURE, EXIT_FINDINGS, EXIT_USAGE, CliError

HELP = """Compact partitions offline exactly as Kafka's log cleaner would, or
estimate what it would reclaim.

One pass of the broker's cleaner (Kafka 3.x semantics).  The dirty range
starts at the log dir's cleaner-offset-checkpoint.  The latest record of
every key survives; keyless records go; tombstones stay until
delete.retention.ms after their first clean (v2 delete horizon, v0/v1 by
segment age); aborted transactions go; the active segment and segments
newer than min.compaction.lag.ms are left alone.  Offsets, order, message
format and codec never change.  Cleaned segments replace the old ones
through Kafka's .cleaned -> .swap -> .deleted renames (a crash at any step
leaves a loadable directory) and cleaner-offset-checkpoint is updated.
Refuses while a broker holds the log dir's .lock.

--kafka-version 2.1 applies Kafka 2.1's rules instead (before KIP-534:
tombstones and transaction markers of every format expire with their
segment's age and no delete horizon is stamped).

Settings use Kafka's names in --config (repeatable or comma-separated);
the options override them.  Settings that do not change what compaction
keeps (retention.ms, compression.type, ...) are accepted and ignored.

--estimate takes partition dirs or whole log dirs, writes nothing and
takes no lock (safe beside a running broker); per partition it reports
the dirty ratio, whether the broker would clean it, records and bytes
reclaimable, distinct keys, tombstones and aborted-transaction bytes.

\b
Formats: text (compact default), table (--estimate default), json,
ndjson, csv.
Exit codes: 0 done or nothing to clean; 1 a partition is corrupt (run
`kafkatool recover`); 2 bad option, setting or path; 3 log dir locked by
a broker, or an I/O error.

\b
Examples:
  kafkatool compact /var/lib/kafka/orders-0 \\
      --config segment.bytes=1073741824,delete.retention.ms=86400000
  kafkatool compact orders-0 --dry-run
  kafkatool compact orders-0 --min-compaction-lag-ms 3600000 \\
      --buffer-size 512MiB
  kafkatool compact --estimate /var/lib/kafka --format json
  kafkatool compact backup/cmp-0 --now 1795287820600 \\
      --config delete.retention.ms=1000
"""

def parse_size(text: str, option: str) -> int:
    """A byte count (`kafkatool.sizes`: 134217728, 128MiB, 1g) given to option."""
    from kafkatool.sizes import SizeError, parse_size

    try:
        return parse_size(text)
    except SizeError as exc:
        raise CliError(f"{option}: {exc}") from None


def _check_buffer_fits(size: int) -> None:
    """The offset map is allocated up front: refuse a buffer this machine cannot hold (a MemoryError later)."""
    from kafkatool.cli.inputs import physical_memory

    ram = physical_memory()
    if ram is not None and size > ram:
        raise CliError(f"--buffer-size (log.cleaner.dedupe.buffer.size) {size} bytes: exceeds the memory available ({ram} bytes of RAM)")


def _settings(config: list[str], kafka_version: str, overrides: dict[str, Any]) -> Any:
    from kafkatool.ops.compact import CompactConfig, CompactInputError, parse_config

    pairs = list(config or [])
    pairs += [f"{k}={v}" for k, v in overrides.items() if v is not None]
    try:
        return parse_config(pairs, CompactConfig(kafka_version=kafka_version))
    except CompactInputError as exc:
        raise CliError(str(exc).replace("kafka version", "--kafka-version"), EXIT_USAGE) from None


def _n(v: int) -> str:
    return f"{v:,}"


def _pct(part: int, whole: int) -> str:
    return f"{100.0 * (1 - part / whole):.1f}%" if whole else "0.0%"


def _text(result: Any, out: Any) -> None:
    r = result
    st = r.stats
    verb = "Would clean" if r.dry_run else "Cleaned"
    w = out.write
    if not r.cleaned:
        w(f"{r.partition}: nothing to clean: {r.reason}\n")
        return
    w(
        f"{verb} {r.partition}: offsets [{r.first_dirty_offset}, {r.end_offset}) mapped, "
        f"{len(r.groups)} segment group(s) recopied from offset {r.groups[0].base_offset if r.groups else 0}"
        f" (first uncleanable offset {r.first_uncleanable_offset})\n"
    )
    if r.dry_run:
        for g in r.groups:
            src = f"{g.sources[0]}" if len(g.sources) == 1 else f"{g.sources[0]}..{g.sources[-1]} ({len(g.sources)})"
            w(
                f"  segments {src} -> {g.base_offset}: {_n(g.bytes_before)} -> {_n(g.bytes_after)} bytes, "
                f"{_n(g.records_before)} -> {_n(g.records_after)} records\n"
            )
    w(f"  Start size: {_n(st.bytes_read)} bytes ({_n(st.records_read)} records)\n")
    w(f"  End size: {_n(st.bytes_written)} bytes ({_n(st.records_written)} records)\n")
    w(
        f"  {_pct(st.bytes_written, st.bytes_read)} size reduction "
        f"({_pct(st.records_written, st.records_read)} fewer records)\n"
    )
    dropped = st.tombstones_read - st.tombstones_written
    w(
        f"  Tombstones: {_n(st.tombstones_read)} read, {_n(dropped)} removed; keyless records removed: "
        f"{_n(st.keyless_dropped)}; aborted transaction batches removed: {_n(st.aborted_batches)} "
        f"({_n(st.aborted_bytes)} bytes)\n"
    )
    full = " (full: cleaning stopped where it filled)" if r.map_full else ""
    w(
        f"  Offset map: {_n(r.map_entries)} keys, {100 * r.map_utilization:.1f}% of {_n(r.map_slots)} slots"
        f"{full}\n"
    )
    topic, _, part = r.partition.rpartition("-")
    checkpoint = f"cleaner-offset-checkpoint: {topic} {part} {r.end_offset}"
    w(f"  {'Would write ' if r.dry_run else 'Wrote '}{checkpoint}\n")
    if r.resolved_temp_files:
        verb = "Would first finish" if r.dry_run else "Finished"
        w(f"  {verb} an interrupted swap: {', '.join(r.resolved_temp_files)}\n")
    for warning in r.warnings:
        w(f"  Warning: {warning}\n")
    if r.dry_run and r.locked:
        w("  Note: the log dir is locked by a running broker; a real run would refuse\n")


@app.command("compact", help=HELP, no_args_is_help=True)
@handle_errors
def compact(
    paths: list[Path] = typer.Argument(..., help="Partition directories (with --estimate: log dirs too)."),
    estimate: bool = typer.Option(False, "--estimate", help="Only report what cleaning would reclaim."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Report exactly what would change; write nothing."),
    config: list[str] = typer.Option(
        [], "--config", help="Topic/cleaner setting key=value with Kafka's names (repeatable, comma-separated)."
    ),
    segment_bytes: str = typer.Option(None, "--segment-bytes", help="segment.bytes: largest cleaned segment."),
    delete_retention_ms: int = typer.Option(
        None, "--delete-retention-ms", help="delete.retention.ms: how long tombstones and markers stay."
    ),
    min_compaction_lag_ms: int = typer.Option(
        None, "--min-compaction-lag-ms", help="min.compaction.lag.ms: leave younger segments alone."
    ),
    buffer_size: str = typer.Option(
        None, "--buffer-size", help="log.cleaner.dedupe.buffer.size: offset map memory (default 128MiB)."
    ),
    now: int = typer.Option(None, "--now", help="Current time in epoch ms (to reproduce a past run)."),
    kafka_version: str = typer.Option(
        "3", "--kafka-version", help="Whose cleaner rules: 3 (Kafka 3.1+, default) or 2.1 (before KIP-534)."
    ),
    output_format: str = typer.Option(None, "--format", help="text, table, json, ndjson or csv."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bar."),
) -> None:
    from kafkatool.cli.render import check_format

    fmt = output_format or ("table" if estimate else "text")
    check_format(fmt)
    if estimate and fmt == "text":
        fmt = "table"
    if estimate and dry_run:
        raise CliError("--estimate and --dry-run: --estimate never writes; give one of them")
    if now is not None and now < 0:
        raise CliError(f"--now {now}: must be an epoch time in milliseconds")
    if delete_retention_ms is not None and delete_retention_ms < 0:
        raise CliError(f"--delete-retention-ms {delete_retention_ms}: must not be negative")
    if min_compaction_lag_ms is not None and min_compaction_lag_ms < 0:
        raise CliError(f"--min-compaction-lag-ms {min_compaction_lag_ms}: must not be negative")
    cfg = _settings(
        config,
        kafka_version,
        {
            "segment.bytes": parse_size(segment_bytes, "--segment-bytes") if segment_bytes else None,
            "delete.retention.ms": delete_retention_ms,
            "min.compaction.lag.ms": min_compaction_lag_ms,
            "log.cleaner.dedupe.buffer.size": parse_size(buffer_size, "--buffer-size") if buffer_size else None,
        },
    )
    _check_buffer_fits(cfg.dedupe_buffer_size)
    if estimate:
        _estimate(paths, cfg, now, fmt, quiet)
        return
    _compact(paths, cfg, now, dry_run, fmt, quiet)


def _compact(paths: list[Path], cfg: Any, now: int | None, dry_run: bool, fmt: str, quiet: bool) -> None:
    from kafkatool.cli.progress import progress
    from kafkatool.cli.render import render_json, render_rows
    from kafkatool.log.errors import CheckpointError, LogFormatError
    from kafkatool.ops.compact import CompactInputError, compact_partition
    from kafkatool.ops.compact.offsetmap import OffsetMap
    from kafkatool.ops.safety import LogDirLockedError

    omap = OffsetMap(cfg.dedupe_buffer_size, cfg.dedupe_buffer_load_factor)
    results = []
    for path in paths:
        try:
            with progress(f"compact {path.name}", None, quiet=quiet, unit_bytes=True) as bar:
                result = compact_partition(path, cfg, now_ms=now, dry_run=dry_run, offset_map=omap, progress=bar.advance)
        except LogDirLockedError as exc:
            raise CliError(f"{path}: {exc}", EXIT_FAILURE) from None
        except CompactInputError as exc:
            raise CliError(str(exc), EXIT_USAGE) from None
        except CheckpointError as exc:
            raise CliError(f"{path}: {exc}", EXIT_USAGE) from None
        except LogFormatError as exc:
            raise CliError(f"{path}: {exc}", EXIT_FINDINGS) from None
        results.append(result)
        if fmt == "text":
            _text(result, sys.stdout)
            sys.stdout.flush()
    if fmt == "json":
        render_json([r.to_dict() for r in results])
    elif fmt in ("ndjson", "csv", "table"):
        render_rows((_summary_row(r) for r in results), fmt, columns=SUMMARY_COLUMNS)


SUMMARY_COLUMNS = [
    "partition", "dry_run", "cleaned", "first_dirty_offset", "end_offset", "groups", "bytes_read", "bytes_written",
    "records_read", "records_written", "tombstones_removed", "aborted_bytes", "map_entries", "map_full", "reason",
]


def _summary_row(r: Any) -> dict[str, Any]:
    st = r.stats
    return {
        "partition": r.partition,
        "dry_run": r.dry_run,
        "cleaned": r.cleaned,
        "first_dirty_offset": r.first_dirty_offset,
        "end_offset": r.end_offset,
        "groups": len(r.groups),
        "bytes_read": st.bytes_read,
        "bytes_written": st.bytes_written,
        "records_read": st.records_read,
        "records_written": st.records_written,
        "tombstones_removed": st.tombstones_read - st.tombstones_written,
        "aborted_bytes": st.aborted_bytes,
        "map_entries": r.map_entries,
        "map_full": r.map_full,
        "reason": r.reason or None,
    }


def _estimate(paths: list[Path], cfg: Any, now: int | None, fmt: str, quiet: bool) -> None:
    from kafkatool.cli.progress import progress
    from kafkatool.cli.render import render_rows
    from kafkatool.ops.compact import CompactInputError
    from kafkatool.ops.compact.estimate import (
        ESTIMATE_COLUMNS,
        error_row,
        estimate,
        estimate_row,
        partition_dirs,
    )

    try:
        dirs = list(partition_dirs(paths))
    except CompactInputError as exc:
        raise CliError(str(exc), EXIT_USAGE) from None
    rows = []
    errors = 0
    with progress("estimate", None, quiet=quiet, unit_bytes=True) as bar:
        for d, result, error in estimate(dirs, cfg, now_ms=now, progress=bar.advance):
            if result is None:
                errors += 1
                rows.append(error_row(d, error or "failed"))
            else:
                rows.append(estimate_row(result))
    render_rows(rows, fmt, columns=ESTIMATE_COLUMNS, title="compaction estimate")
    if errors:
        sys.stdout.flush()
        raise CliError(f"{errors} partition(s) could not be estimated (see the error column)", EXIT_FINDINGS)
