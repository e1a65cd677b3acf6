"""Offline log compaction with the semantics of Kafka's log cleaner (3.x: `Cleaner`, `LogCleanerManager`).

Why offline: operators have partitions the broker never cleans (uncleanable logs, a cleaner thread that
died, huge dirty ratios, backups on disk).  This package is the broker's cleaner run by hand, so what it
keeps is exactly what the broker would keep:

- the cleanable range runs from `cleaner-offset-checkpoint` (else the log start) to the first uncleanable
  offset: the least of the last stable offset (open transactions, high watermark), the active segment and
  the first segment younger than `min.compaction.lag.ms`, rounded down to a segment base;
- a key → latest-offset map (`OffsetMap`, bounded by the dedupe buffer) covers the dirty range up to where
  the map fills; everything up to the map's last offset is recopied, in groups of segments whose sizes fit
  `segment.bytes` / `segment.index.bytes` and whose offsets fit an int32 span;
- a record survives when no later record has its key; keyless records go; tombstones stay until their v2
  batch's delete horizon (stamped `now + delete.retention.ms` on the first clean, as KIP-534 does) or, for
  v0/v1 data, until their segment is older than the last clean segment minus `delete.retention.ms`;
- aborted transactional data goes at once; transaction markers stay while their transaction's data does
  and until their horizon; each producer's last batch stays (emptied) so its sequence survives; the last
  batch of the cleaned range stays (emptied) so the last offset is not lost;
- offsets, order, magic and codec never change; untouched batches are copied byte for byte.

`kafka_version="2.1"` applies Kafka 2.1's rules instead (before KIP-534): tombstones and transaction
markers of every format expire with their segment's age, no horizon is stamped, the range's last batch is
not kept, transaction state is per segment and the last stable offset ignores the high watermark.  A
real 2.1 broker's cleaner output is the test of both (fixtures `cleaned/kafka-2.1.1`).

Writing follows the broker: `<base>.log.cleaned` + indexes → `.swap` → old segments `.deleted` → final
names (`kafkatool.ops.safety.replace_segments`, crash-safe at every step), the cleaned segment keeps the
mtime of the last segment it replaces, and `cleaner-offset-checkpoint` records where cleaning stopped.

The units, one of Kafka's concepts each: `config` (topic settings), `manager` (the log as the cleaner sees
it and its cleanable range: LogCleanerManager), `offsetmap` (SkimpyOffsetMap), `transactions`
(CleanedTransactionMetadata), `cleaner` (Cleaner: the offset-map pass and the retention judgement),
`keys` (records' offsets and keys decoded without their values), `decoded` (what the first pass
decoded, reused by the second), `scan` (the walks over batch headers, runs of them compiled), `writer`
(read chunks, segment groups, the `.cleaned` segment), `stats`
(counts and results), `estimate` (a dry run over many partitions).  Each producer's last batch comes
from `kafkatool.log.producer_state`.  This module is the entry point: `compact_partition`.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path

from kafkatool.log.checkpoint import read_offset_checkpoint, write_offset_checkpoint
from kafkatool.log.files import CLEANER_CHECKPOINT, TEMP_SUFFIXES, parse_partition_dir
from kafkatool.ops.compact.cleaner import Cleaner
from kafkatool.ops.compact.config import CompactConfig, CompactInputError, check_config, parse_config
from kafkatool.ops.compact.manager import CleanableRange, PartitionLog, cleanable_range
from kafkatool.ops.compact.offsetmap import OffsetMap
from kafkatool.ops.compact.stats import CleanerStats, CompactionResult, GroupResult
from kafkatool.ops.compact.transactions import TransactionTracker
from kafkatool.ops.compact.writer import group_segments
from kafkatool.ops.safety import (
    LogDirLock,
    finish_interrupted_swaps,
    is_locked,
    log_dir_of,
    read_consistently,
)

METADATA_TOPIC = "__cluster_metadata"


def _temp_files(partition_dir: Path) -> list[str]:
    return sorted(n for n in os.listdir(partition_dir) if n.endswith(TEMP_SUFFIXES))


def compact_partition(
    partition_dir: Path,
    cfg: CompactConfig | None = None,
    *,
    now_ms: int | None = None,
    dry_run: bool = False,
    offset_map: OffsetMap | None = None,
    first_dirty_offset: int | None = None,
    until_offset: int | None = None,
    progress: Callable[[int], None] | None = None,
) -> CompactionResult:
    """Run one pass of the Kafka cleaner over a partition directory.

    A real run takes the log dir's lock (refusing while a broker holds it), first finishes swaps a crash
    left behind (as the broker's startup would), then writes cleaned segments through Kafka's swap
    protocol and updates `cleaner-offset-checkpoint`.  A dry run writes nothing and takes no lock.
    `first_dirty_offset` overrides the checkpoint; `until_offset` caps the range like a last stable offset.
    """
    cfg = check_config(cfg or CompactConfig())
    now = int(time.time() * 1000) if now_ms is None else now_ms
    t0 = time.perf_counter()
    partition_dir = Path(partition_dir)
    if not partition_dir.is_dir():
        if partition_dir.exists():
            raise CompactInputError(f"{partition_dir}: not a directory")
        raise FileNotFoundError(2, "No such file or directory", str(partition_dir))
    log_dir = log_dir_of(partition_dir)
    if dry_run:  # no lock: a segment swapped or truncated under the read (a broker's cleaner) reads it again
        result = read_consistently(
            lambda: _compact(partition_dir, cfg, now, True, offset_map, first_dirty_offset, until_offset, progress),
            [partition_dir],
        )
        result.locked = is_locked(log_dir)
        result.resolved_temp_files = _temp_files(partition_dir)
    else:
        with LogDirLock(log_dir):
            resolved: list[str] = []
            if _temp_files(partition_dir):
                res = finish_interrupted_swaps(partition_dir)
                resolved = res.deleted + [f"{a} -> {b}" for a, b in res.renamed]
            result = _compact(partition_dir, cfg, now, False, offset_map, first_dirty_offset, until_offset, progress)
            result.resolved_temp_files = resolved
    result.elapsed_s = time.perf_counter() - t0
    return result


def _compact(
    partition_dir: Path,
    cfg: CompactConfig,
    now: int,
    dry_run: bool,
    offset_map: OffsetMap | None,
    first_dirty_offset: int | None,
    until_offset: int | None,
    progress: Callable[[int], None] | None,
) -> CompactionResult:
    if parse_partition_dir(partition_dir.name) == (METADATA_TOPIC, 0):
        raise CompactInputError(
            f"{partition_dir}: {METADATA_TOPIC} is not a compacted topic (KRaft keeps it short with snapshots); "
            "its keyless records would all be removed"
        )
    log = PartitionLog(partition_dir, progress=progress)
    rng = cleanable_range(log, cfg, now, first_dirty_offset=first_dirty_offset, until_offset=until_offset)
    omap = offset_map if offset_map is not None else OffsetMap(cfg.dedupe_buffer_size, cfg.dedupe_buffer_load_factor)
    clean_segs = log.segments_in(0, rng.first_dirty_offset)
    legacy_horizon = clean_segs[-1].mtime_ms - cfg.delete_retention_ms if clean_segs else 0
    delay = log.max_compaction_delay_ms(rng.first_dirty_offset, now, cfg.max_compaction_lag_ms)
    result = CompactionResult(
        partition=log.name,
        dir=str(partition_dir),
        dry_run=dry_run,
        now_ms=now,
        segments=len(log.segments),
        size_bytes=log.size,
        log_start_offset=log.log_start_offset,
        log_end_offset=log.log_end_offset,
        first_dirty_offset=rng.first_dirty_offset,
        first_uncleanable_offset=rng.first_uncleanable_offset,
        end_offset=rng.first_dirty_offset,
        clean_bytes=rng.clean_bytes,
        cleanable_bytes=rng.cleanable_bytes,
        dirty_ratio=rng.dirty_ratio,
        max_compaction_delay_ms=delay,
        broker_would_clean=(delay > 0 and rng.cleanable_bytes > 0) or rng.dirty_ratio > cfg.min_cleanable_dirty_ratio,
        legacy_delete_horizon_ms=legacy_horizon,
        map_slots=omap.slots,
        map_entries=0,
        map_full=False,
        cleaned=False,
    )
    if rng.first_uncleanable_offset <= rng.first_dirty_offset:
        result.reason = _why_nothing(log, rng, cfg)
        return result
    cleaner = Cleaner(log, cfg, now, omap, dry_run=dry_run, progress=progress)
    cleaner.build_offset_map(rng.first_dirty_offset, rng.first_uncleanable_offset)
    end_offset = omap.latest_offset + 1
    keyless = result.keyless_records = cleaner.stats.map_keyless
    if keyless and not cfg.policy_confirmed:
        note = (
            f"{keyless} keyless records in the dirty range: brokers refuse keyless records for "
            "cleanup.policy=compact topics, so this is probably not a compacted topic, and compacting "
            "would delete them"
        )
        if not dry_run:
            raise CompactInputError(f"{log.name}: {note}; give --config cleanup.policy=compact to compact anyway")
        result.warnings.append(note)
    result.map_entries = omap.size
    result.map_full = cleaner.map_full
    result.end_offset = max(end_offset, rng.first_dirty_offset)
    if end_offset <= rng.first_dirty_offset:
        result.reason = (
            f"the offset map ({omap.slots} slots) filled before one batch was mapped: raise the dedupe buffer size"
        )
        return result
    txn = TransactionTracker()
    producers = log.active_producers(now, cfg.producer_id_expiration_ms)
    groups = group_segments(log.segments_in(0, end_offset), rng.first_uncleanable_offset, cfg)
    for group in groups:
        result.groups.append(
            cleaner.clean_group(group, txn, legacy_horizon, rng.first_uncleanable_offset, producers)
        )
    result.stats = cleaner.stats
    result.cleaned = True
    if not dry_run:
        path = log.log_dir / CLEANER_CHECKPOINT
        offsets = read_offset_checkpoint(path) if path.is_file() else {}
        offsets[(log.topic, log.partition)] = end_offset
        write_offset_checkpoint(path, offsets)
        result.checkpoint_written = True
    return result


def _why_nothing(log: PartitionLog, rng: CleanableRange, cfg: CompactConfig) -> str:
    if len(log.segments) == 1:
        return "only the active segment, which is never cleaned"
    if rng.first_dirty_offset >= log.active.base_offset:
        return f"already clean up to the active segment (cleaner checkpoint {rng.first_dirty_offset})"
    lso = log.last_stable_offset
    if lso <= rng.first_dirty_offset or rng.first_uncleanable_offset <= rng.first_dirty_offset:
        if log.first_unstable_offset is not None and log.first_unstable_offset <= rng.first_dirty_offset + 1:
            return f"an open transaction starts at offset {log.first_unstable_offset}"
        if cfg.min_compaction_lag_ms > 0:
            return f"no dirty segment is older than min.compaction.lag.ms={cfg.min_compaction_lag_ms}"
    return "nothing cleanable between the cleaner checkpoint and the first uncleanable offset"


__all__ = [
    "CleanableRange",
    "Cleaner",
    "CleanerStats",
    "CompactConfig",
    "CompactInputError",
    "CompactionResult",
    "GroupResult",
    "PartitionLog",
    "TransactionTracker",
    "cleanable_range",
    "compact_partition",
    "parse_config",
]
