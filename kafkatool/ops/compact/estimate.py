"""`compact --estimate`: what a cleaning pass would reclaim, per partition, without writing anything.

Why a dry run of the real cleaner rather than a sampling heuristic: operators decide from this number
whether to stop a broker and compact by hand, so it must be what `compact` would really do with the same
settings (same dirty range, same offset-map limit, same tombstone and transaction rules).  Rebuilt
batches are encoded (and compressed) to measure them; nothing touches the disk and no lock is taken, so
it can run beside a live broker.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from kafkatool.log.errors import LogFormatError
from kafkatool.log.files import META_PROPERTIES, list_partition_dirs, parse_partition_dir
from kafkatool.ops.compact import CompactConfig, CompactInputError, CompactionResult, compact_partition
from kafkatool.ops.compact.offsetmap import OffsetMap

# The stable row schema of --estimate (also the column order of table and csv output).
ESTIMATE_COLUMNS = [
    "partition",
    "segments",
    "size_bytes",
    "first_dirty_offset",
    "end_offset",
    "dirty_ratio",
    "broker_would_clean",
    "records",
    "records_reclaimable",
    "bytes_reclaimable",
    "reclaimable_pct",
    "distinct_keys",
    "tombstones",
    "tombstones_reclaimable",
    "aborted_txn_bytes",
    "map_full",
    "warning",
    "error",
]


def partition_dirs(paths: Iterable[Path]) -> Iterator[Path]:
    """Partition directories named by paths: each is a partition dir, or a log dir holding them."""
    for p in paths:
        p = Path(p)
        if not p.exists():
            raise FileNotFoundError(2, "No such file or directory", str(p))
        if not p.is_dir():
            raise CompactInputError(f"{p}: not a directory")
        if parse_partition_dir(p.name) is not None and not (p / META_PROPERTIES).exists():
            yield p
            continue
        found = list_partition_dirs(p)
        if not found:
            raise CompactInputError(f"{p}: neither a partition directory nor a log dir holding any")
        yield from found


def estimate_row(result: CompactionResult) -> dict[str, Any]:
    """The --estimate row of one dry-run result (see ESTIMATE_COLUMNS)."""
    st = result.stats
    reclaim = st.bytes_read - st.bytes_written
    return {
        "partition": result.partition,
        "segments": result.segments,
        "size_bytes": result.size_bytes,
        "first_dirty_offset": result.first_dirty_offset,
        "end_offset": result.end_offset,
        "dirty_ratio": round(result.dirty_ratio, 4),
        "broker_would_clean": result.broker_would_clean,
        "records": st.records_read,
        "records_reclaimable": st.records_read - st.records_written,
        "bytes_reclaimable": reclaim,
        "reclaimable_pct": round(100.0 * reclaim / result.size_bytes, 2) if result.size_bytes else 0.0,
        "distinct_keys": result.map_entries,
        "tombstones": st.tombstones_read,
        "tombstones_reclaimable": st.tombstones_read - st.tombstones_written,
        "aborted_txn_bytes": st.aborted_bytes,
        "map_full": result.map_full,
        "warning": f"{result.keyless_records} keyless records: not a compacted topic?" if result.keyless_records else None,
        "error": None,
    }


def error_row(partition_dir: Path, message: str) -> dict[str, Any]:
    return {c: None for c in ESTIMATE_COLUMNS} | {"partition": partition_dir.name, "error": message}


def estimate(
    paths: Iterable[Path],
    cfg: CompactConfig,
    *,
    now_ms: int | None = None,
    progress: Callable[[int], None] | None = None,
) -> Iterator[tuple[Path, CompactionResult | None, str | None]]:
    """Dry-run the cleaner over every partition named by paths: (dir, result, error) for each.

    A damaged partition gives an error entry instead of stopping the others.  One offset map (the
    configured buffer) is reused for all partitions, as a cleaner thread does.
    """
    now = int(time.time() * 1000) if now_ms is None else now_ms
    omap = OffsetMap(cfg.dedupe_buffer_size, cfg.dedupe_buffer_load_factor)
    for d in partition_dirs(paths):
        try:
            yield d, compact_partition(d, cfg, now_ms=now, dry_run=True, offset_map=omap, progress=progress), None
        except (LogFormatError, CompactInputError, OSError) as exc:
            yield d, None, str(exc)
