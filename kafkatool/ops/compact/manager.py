"""The log as the cleaner sees it and what of it is cleanable (Kafka's `LogCleanerManager` role).

`PartitionLog` loads a partition the way a broker does for the cleaner's questions (segment sizes and
times, producers' last batches, open transactions); `cleanable_range` answers where cleaning may start and
must stop (`LogCleanerManager.cleanableOffsets`).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from kafkatool.log.checkpoint import read_offset_checkpoint
from kafkatool.log.errors import CorruptIndexError, CorruptRecordError
from kafkatool.log.files import (
    CLEANER_CHECKPOINT,
    LOG_START_CHECKPOINT,
    REPLICATION_CHECKPOINT,
    MappedFile,
    SegmentFiles,
    list_segments,
    parse_partition_dir,
)
from kafkatool.log.index import (
    OFFSET_ENTRY_SIZE,
    TIME_ENTRY_SIZE,
    AbortedTxn,
    read_txn_index,
)
from kafkatool.log.producer_state import ProducerLast, ProducerStates
from kafkatool.log.record import CONTROL_ABORT, CONTROL_COMMIT, NO_TIMESTAMP
from kafkatool.log.records import verify_crcs
from kafkatool.ops.compact.config import CompactConfig, CompactInputError
from kafkatool.ops.compact.scan import CleanerScan
from kafkatool.ops.compact.transactions import control_type
from kafkatool.ops.safety import log_dir_of

CRC_WINDOW = 4 * 1024 * 1024  # bytes of batches whose CRCs loading checks in one call, ahead of the walk


@dataclass
class CleanerSegment:
    """One segment as the cleaner weighs it: its files, and the sizes and times its decisions use
    (filled by `PartitionLog._load`).  `SegmentFiles` is only where a segment's files are."""

    files: SegmentFiles
    size: int
    mtime_ms: int
    index_bytes: int
    time_index_bytes: int
    next_offset: int = 0
    max_timestamp: int = NO_TIMESTAMP
    first_batch_timestamp: int = NO_TIMESTAMP
    batches: int = 0

    @property
    def base_offset(self) -> int:
        return self.files.base_offset

    @property
    def largest_timestamp(self) -> int:
        """LogSegment.largestTimestamp: the newest record time, or the mtime when records have none."""
        return self.max_timestamp if self.max_timestamp >= 0 else self.mtime_ms


def _mtime_ms(path: Path) -> int:
    try:
        return os.stat(path).st_mtime_ns // 1_000_000
    except FileNotFoundError:
        return 0


def _file_size(path: Path) -> int:
    try:
        return os.stat(path).st_size
    except FileNotFoundError:
        return 0


class PartitionLog:
    """A partition directory read the way a broker loads it, for the cleaner's questions.

    Opening it scans every batch header once: CRC check (a corrupt log is refused: `recover` first), each
    segment's next offset and newest timestamp, the producers' last batches, open transactions and the
    abort markers.  An abort whose transaction still has batches must be in a `.txnindex`, or its data
    would be kept as committed (once the cleaner has removed the data it also drops the entry, so an
    abort marker without data needs none).
    """

    def __init__(self, partition_dir: Path, *, progress: Callable[[int], None] | None = None) -> None:
        self.dir = Path(partition_dir)
        if not self.dir.is_dir():
            if self.dir.exists():
                raise CompactInputError(f"{self.dir}: not a directory")
            raise FileNotFoundError(2, "No such file or directory", str(self.dir))
        parsed = parse_partition_dir(self.dir.name)
        if parsed is None:
            raise CompactInputError(f"{self.dir}: not a partition directory (expected <topic>-<partition>)")
        self.topic, self.partition = parsed
        self.log_dir = log_dir_of(self.dir)
        self.segments: list[CleanerSegment] = []
        for sf in list_segments(self.dir):
            self.segments.append(
                CleanerSegment(
                    sf,
                    _file_size(sf.log),
                    _mtime_ms(sf.log),
                    _file_size(sf.index) // OFFSET_ENTRY_SIZE * OFFSET_ENTRY_SIZE,
                    _file_size(sf.timeindex) // TIME_ENTRY_SIZE * TIME_ENTRY_SIZE,
                )
            )
        if not self.segments:
            raise CompactInputError(f"{self.dir}: no segments (no <offset>.log files)")
        self.producer_states = ProducerStates()
        self._txn_index: dict[int, list[AbortedTxn]] = {}
        self._load(progress)
        self.log_end_offset = self.segments[-1].next_offset
        start = self._checkpointed(LOG_START_CHECKPOINT)
        self.log_start_offset: int = self.segments[0].base_offset if start is None else start
        self.cleaner_checkpoint = self._checkpointed(CLEANER_CHECKPOINT)
        self.high_watermark = self._checkpointed(REPLICATION_CHECKPOINT)

    @property
    def name(self) -> str:
        return f"{self.topic}-{self.partition}"

    @property
    def active(self) -> CleanerSegment:
        return self.segments[-1]

    @property
    def size(self) -> int:
        return sum(s.size for s in self.segments)

    def _checkpointed(self, name: str) -> int | None:
        path = self.log_dir / name
        if not path.is_file():
            return None
        return read_offset_checkpoint(path).get((self.topic, self.partition))

    # -- load --------------------------------------------------------------------------------
    def _load(self, progress: Callable[[int], None] | None) -> None:
        aborts: list[tuple[int, int]] = []  # (producer id, marker offset) of aborts that still have data
        txn_data: set[int] = set()  # producers with transactional batches since their last marker
        for seg in self.segments:
            seg.next_offset = seg.base_offset
            with MappedFile(seg.files.log) as mf:
                scan = CleanerScan(mf.buf, release=mf.release)  # resident memory flat whatever the segment size
                checked = 0  # the batches before this position have good CRCs
                for b in scan:
                    end = b.position + b.size
                    if end > checked:  # the CRCs of a window of batches in one call (compiled when built)
                        _n, valid, bad = verify_crcs(mf.buf, b.position, min(scan.end, max(end, b.position + CRC_WINDOW)))
                        checked = valid if bad is None else bad
                    if end > checked and not b.is_valid():
                        raise CorruptRecordError(
                            f"{seg.files.log}: the batch at position {b.position} (offsets {b.base_offset}.."
                            f"{b.last_offset}) fails its CRC check: run `kafkatool recover` first",
                            b.position,
                        )
                    if not seg.batches:
                        seg.first_batch_timestamp = b.max_timestamp
                    seg.batches += 1
                    seg.next_offset = b.last_offset + 1
                    if b.max_timestamp > seg.max_timestamp:
                        seg.max_timestamp = b.max_timestamp
                    if b.magic >= 2 and b.producer_id >= 0:
                        ctype = control_type(b) if b.is_control else None
                        if ctype == CONTROL_ABORT and b.producer_id in txn_data:
                            aborts.append((b.producer_id, b.last_offset))  # needs its .txnindex entry
                        if ctype in (CONTROL_ABORT, CONTROL_COMMIT):  # an emptied marker ends nothing
                            txn_data.discard(b.producer_id)
                        elif not b.is_control and b.is_transactional:
                            txn_data.add(b.producer_id)
                        self.producer_states.update(b, ctype)
                if scan.error is not None or scan.trailing_bytes:
                    why = str(scan.error) if scan.error else f"{scan.trailing_bytes} bytes of a partial batch"
                    raise CorruptRecordError(
                        f"{seg.files.log}: damaged at position {scan.valid_bytes} ({why}): "
                        "run `kafkatool recover` first",
                        scan.valid_bytes,
                    )
            if progress:
                progress(seg.size)
        if aborts:
            indexed = {(t.producer_id, t.last_offset) for s in self.segments for t in self.txn_index(s)}
            missing = [a for a in aborts if a not in indexed]
            if missing:
                pid, off = missing[0]
                raise CorruptIndexError(
                    f"{self.dir}: the transaction index lacks the aborted transaction of producer {pid} "
                    f"ending at offset {off} ({len(missing)} missing): its data would be kept as committed; "
                    "run `kafkatool recover` to rebuild the .txnindex files first"
                )

    # -- offsets ------------------------------------------------------------------------------
    @property
    def first_unstable_offset(self) -> int | None:
        return self.producer_states.first_unstable_offset

    @property
    def last_stable_offset(self) -> int:
        """The high watermark (checkpointed, else the log end) capped by the first open transaction."""
        lso = self.log_end_offset if self.high_watermark is None else min(self.high_watermark, self.log_end_offset)
        unstable = self.first_unstable_offset
        return lso if unstable is None else min(lso, unstable)

    def cleaning_bound(self, cfg: CompactConfig) -> int:
        """The offset cleaning stops at for transactions: Kafka 2.1 used only the first unstable offset."""
        if cfg.before_kip534:
            unstable = self.first_unstable_offset
            return self.log_end_offset if unstable is None else unstable
        return self.last_stable_offset

    def max_compaction_delay_ms(self, first_dirty: int, now_ms: int, max_lag_ms: int) -> int:
        """LogCleanerManager.maxCompactionDelay: how overdue the oldest dirty segment is (0 if not)."""
        firsts = [
            s.first_batch_timestamp
            for s in self.segments_in(first_dirty, self.active.base_offset)
            if s.first_batch_timestamp > 0
        ]
        clean_until = now_ms - max(max_lag_ms, 0)
        earliest = min(firsts) if firsts else 2**63 - 1
        return clean_until - earliest if earliest < clean_until else 0

    def active_producers(self, now_ms: int, expiration_ms: int) -> dict[int, ProducerLast]:
        """Producers the broker still tracks: not expired, or inside a transaction."""
        return self.producer_states.active(now_ms, expiration_ms)

    def _floor(self, offset: int) -> int | None:
        lo = None
        for i, s in enumerate(self.segments):
            if s.base_offset <= offset:
                lo = i
            else:
                break
        return lo

    def segments_in(self, start: int, end: int) -> list[CleanerSegment]:
        """Kafka's logSegments(from, to): from the segment holding `start` to the last based below `end`."""
        if start >= end:
            return []
        first = self._floor(start)
        segs = self.segments if first is None else self.segments[first:]
        return [s for s in segs if s.base_offset < end]

    def txn_index(self, seg: CleanerSegment) -> list[AbortedTxn]:
        if seg.base_offset not in self._txn_index:
            path = seg.files.txnindex
            self._txn_index[seg.base_offset] = read_txn_index(path.read_bytes()) if path.is_file() else []
        return self._txn_index[seg.base_offset]

    def collect_aborted(self, start: int, upper: int) -> list[AbortedTxn]:
        """UnifiedLog.collectAbortedTransactions: from the segment holding start, until an entry's last
        stable offset reaches upper."""
        first = self._floor(start)
        out: list[AbortedTxn] = []
        for seg in self.segments if first is None else self.segments[first:]:
            for txn in self.txn_index(seg):
                if txn.last_offset >= start and txn.first_offset < upper:
                    out.append(txn)
                if txn.last_stable_offset >= upper:
                    return out
        return out


@dataclass(frozen=True)
class CleanableRange:
    """LogCleanerManager.cleanableOffsets and LogToClean for one log."""

    first_dirty_offset: int
    first_uncleanable_offset: int  # rounded down to a segment base, as LogToClean does
    checkpoint_reset: bool  # the checkpoint was missing or out of range and the log start was used
    clean_bytes: int
    cleanable_bytes: int

    @property
    def dirty_ratio(self) -> float:
        total = self.clean_bytes + self.cleanable_bytes
        return self.cleanable_bytes / total if total else 0.0


def cleanable_range(
    log: PartitionLog,
    cfg: CompactConfig,
    now_ms: int,
    *,
    first_dirty_offset: int | None = None,
    until_offset: int | None = None,
) -> CleanableRange:
    """Where cleaning may start and must stop (`until_offset` caps it like a last stable offset)."""
    checkpoint = log.cleaner_checkpoint if first_dirty_offset is None else first_dirty_offset
    start = log.log_start_offset
    if checkpoint is None or checkpoint < start or checkpoint > log.log_end_offset:
        first_dirty, reset = start, checkpoint is not None
    else:
        first_dirty, reset = checkpoint, False
    limits = [log.cleaning_bound(cfg), log.active.base_offset]
    if until_offset is not None:
        limits.append(until_offset)
    if cfg.min_compaction_lag_ms > 0:
        for s in log.segments_in(first_dirty, log.active.base_offset):
            if s.largest_timestamp > now_ms - cfg.min_compaction_lag_ms:
                limits.append(s.base_offset)
                break
    uncleanable = max(first_dirty, min(limits))
    later = log.segments_in(uncleanable, log.active.base_offset)
    first_uncleanable = later[0].base_offset if later else log.active.base_offset
    clean_bytes = sum(s.size for s in log.segments_in(-1, first_dirty))
    cleanable_bytes = sum(s.size for s in log.segments_in(min(first_dirty, first_uncleanable), first_uncleanable))
    return CleanableRange(first_dirty, first_uncleanable, reset, clean_bytes, cleanable_bytes)
