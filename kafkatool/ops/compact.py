"""Offline log compaction with the semantics of Kafka's log cleaner (3.x: `Cleaner`, `LogCleanerManager`).

Why offline: operators have partitions the broker never cleans (uncleanable logs, a cleaner thread that
died, huge dirty ratios, backups on disk).  This module is the broker's cleaner run by hand, so what it
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
"""

from __future__ import annotations

import heapq
import os
import struct
import time
from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict, dataclass, field, replace
from itertools import compress
from pathlib import Path
from typing import Any, cast

import numpy as np

from kafkatool.log.checkpoint import read_offset_checkpoint, write_offset_checkpoint
from kafkatool.log.errors import CorruptIndexError, CorruptRecordError
from kafkatool.log.files import (
    CLEANED_SUFFIX,
    CLEANER_CHECKPOINT,
    LOG_START_CHECKPOINT,
    REPLICATION_CHECKPOINT,
    TEMP_SUFFIXES,
    TXN_INDEX_SUFFIX,
    MappedFile,
    SegmentFiles,
    list_segments,
    parse_partition_dir,
    segment_name,
)
from kafkatool.log.index import (
    OFFSET_ENTRY_SIZE,
    TIME_ENTRY_SIZE,
    AbortedTxn,
    encode_txn_index,
    read_txn_index,
)
from kafkatool.log.records import TS_LOG_APPEND, Batch, BatchKeyColumns, BatchScan, Record, decode_key_columns
from kafkatool.log.writer import SegmentWriter, encode_legacy_batch, encode_v2_batch
from kafkatool.ops.offsetmap import KEY_HASH, OffsetMap, digest_array
from kafkatool.ops.safety import (
    LogDirLock,
    finish_interrupted_swaps,
    is_locked,
    log_dir_of,
    read_consistently,
    replace_segments,
)

INT32_MAX = 2**31 - 1
NO_TIMESTAMP = -1
METADATA_TOPIC = "__cluster_metadata"
MAP_KEYS_PER_PUT = 32768  # keys hashed and put into the offset map per vectorised call
MAP_BYTES_PER_PUT = 8 * 1024 * 1024  # ...or fewer, to bound the decompressed batches held at once
RECORDS_PER_JUDGEMENT = 32768  # records decoded and judged per vectorised round while cleaning
CLEAN_BYTES_PER_JUDGEMENT = 4 * 1024 * 1024  # ...or fewer, to bound the decoded records held at once
CONTROL_ABORT = 0
CONTROL_COMMIT = 1
_CONTROL_KEY = struct.Struct(">hh")

# Batch retention decisions (MemoryRecords.RecordFilter.BatchRetention)
# batch, retention, discard records, empty-txn marker, records (a control batch's; others are decoded later)
_Plan = tuple[Batch, int, bool, bool, list[Record] | None]
DELETE = 0  # drop the batch without looking at its records
RETAIN_EMPTY = 1  # keep the batch even if no record survives (a 61-byte header)
DELETE_EMPTY = 2  # keep the batch only if a record survives


class CompactInputError(ValueError):
    """Bad settings or a directory that is not a partition: the caller's input is wrong."""


# ---------------------------------------------------------------------------------------------------
# Settings
# ---------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CompactConfig:
    """Topic and cleaner settings, defaulting to Kafka's defaults."""

    segment_bytes: int = 1073741824  # segment.bytes: a cleaned group never exceeds it
    segment_index_bytes: int = 10485760  # segment.index.bytes
    index_interval_bytes: int = 4096  # index.interval.bytes: index density of cleaned segments
    delete_retention_ms: int = 86400000  # delete.retention.ms: how long tombstones and markers stay
    min_compaction_lag_ms: int = 0  # min.compaction.lag.ms: younger segments are not cleaned
    max_compaction_lag_ms: int = 2**63 - 1  # max.compaction.lag.ms: reported by --estimate only
    min_cleanable_dirty_ratio: float = 0.5  # min.cleanable.dirty.ratio: would the broker pick this log?
    max_message_bytes: int = 1048588  # max.message.bytes: how far the read buffer may grow
    dedupe_buffer_size: int = 134217728  # log.cleaner.dedupe.buffer.size: offset map memory
    dedupe_buffer_load_factor: float = 0.9  # log.cleaner.io.buffer.load.factor
    io_buffer_size: int = 524288  # log.cleaner.io.buffer.size: read chunk = half of it (one thread)
    message_max_bytes: int = 1048588  # message.max.bytes (broker): the cleaner's largest I/O buffer
    producer_id_expiration_ms: int = 86400000  # producer.id.expiration.ms: older producers are gone
    kafka_version: str = "3"  # whose cleaner rules: "3" (Kafka 3.1+, KIP-534) or "2.1"
    policy_confirmed: bool = False  # cleanup.policy=compact was given: compact even with keyless records

    @property
    def read_buffer_size(self) -> int:
        return self.io_buffer_size // 2

    @property
    def before_kip534(self) -> bool:
        """Kafka 2.1's rules: no delete horizons, tombstones and markers expire with their segment's age."""
        return self.kafka_version == "2.1"


# Kafka names (topic configs and the broker defaults they fall back to) → (field, parser)
_INT = int
CONFIG_NAMES: dict[str, tuple[str, Callable[[str], Any]]] = {
    "segment.bytes": ("segment_bytes", _INT),
    "log.segment.bytes": ("segment_bytes", _INT),
    "segment.index.bytes": ("segment_index_bytes", _INT),
    "log.index.size.max.bytes": ("segment_index_bytes", _INT),
    "index.interval.bytes": ("index_interval_bytes", _INT),
    "log.index.interval.bytes": ("index_interval_bytes", _INT),
    "delete.retention.ms": ("delete_retention_ms", _INT),
    "log.cleaner.delete.retention.ms": ("delete_retention_ms", _INT),
    "min.compaction.lag.ms": ("min_compaction_lag_ms", _INT),
    "log.cleaner.min.compaction.lag.ms": ("min_compaction_lag_ms", _INT),
    "max.compaction.lag.ms": ("max_compaction_lag_ms", _INT),
    "log.cleaner.max.compaction.lag.ms": ("max_compaction_lag_ms", _INT),
    "min.cleanable.dirty.ratio": ("min_cleanable_dirty_ratio", float),
    "log.cleaner.min.cleanable.ratio": ("min_cleanable_dirty_ratio", float),
    "max.message.bytes": ("max_message_bytes", _INT),
    "message.max.bytes": ("message_max_bytes", _INT),
    "log.cleaner.dedupe.buffer.size": ("dedupe_buffer_size", _INT),
    "log.cleaner.io.buffer.load.factor": ("dedupe_buffer_load_factor", float),
    "log.cleaner.io.buffer.size": ("io_buffer_size", _INT),
    "producer.id.expiration.ms": ("producer_id_expiration_ms", _INT),
}
# Topic settings that exist but do not change what compaction keeps: accepted so that a topic's whole
# config can be pasted, and ignored.
IGNORED_CONFIG_NAMES = frozenset(
    {
        "compression.type",
        "compression.gzip.level",
        "compression.lz4.level",
        "compression.zstd.level",
        "retention.ms",
        "retention.bytes",
        "local.retention.ms",
        "local.retention.bytes",
        "file.delete.delay.ms",
        "flush.messages",
        "flush.ms",
        "follower.replication.throttled.replicas",
        "leader.replication.throttled.replicas",
        "message.downconversion.enable",
        "message.format.version",
        "message.timestamp.type",
        "message.timestamp.difference.max.ms",
        "message.timestamp.before.max.ms",
        "message.timestamp.after.max.ms",
        "min.insync.replicas",
        "preallocate",
        "remote.storage.enable",
        "segment.jitter.ms",
        "segment.ms",
        "unclean.leader.election.enable",
        "log.cleaner.threads",
        "log.cleaner.enable",
        "log.cleaner.backoff.ms",
        "log.cleaner.io.max.bytes.per.second",
    }
)


def parse_config(pairs: Iterable[str], base: CompactConfig | None = None) -> CompactConfig:
    """Apply `key=value` settings (Kafka's names) to base; raise CompactInputError on anything wrong."""
    values: dict[str, Any] = {}
    for key, raw in _split_settings(pairs):
        if key == "cleanup.policy":
            policies = {p.strip() for p in raw.replace("[", "").replace("]", "").split(",") if p.strip()}
            if "compact" not in policies:
                raise CompactInputError(
                    f"--config cleanup.policy={raw}: the broker never compacts such a topic "
                    "(give cleanup.policy=compact to compact it anyway)"
                )
            values["policy_confirmed"] = True
            continue
        if key in IGNORED_CONFIG_NAMES:
            continue
        if key not in CONFIG_NAMES:
            known = ", ".join(sorted(CONFIG_NAMES))
            raise CompactInputError(f"--config {key}: not a setting compaction uses (known: {known})")
        name, parse = CONFIG_NAMES[key]
        try:
            values[name] = parse(raw)
        except ValueError:
            raise CompactInputError(f"--config {key}={raw}: not a valid number") from None
    return check_config(replace(base or CompactConfig(), **values))


def _split_settings(pairs: Iterable[str]) -> Iterator[tuple[str, str]]:
    """key=value items, comma-separated as kafka-configs takes them: a piece without `=` continues the
    previous value (`cleanup.policy=compact,delete`), and `[a,b]` brackets keep their commas."""
    items: list[str] = []
    for pair in pairs:
        depth = 0
        piece = ""
        for ch in pair + ",":
            if ch == "," and depth == 0:
                piece = piece.strip()
                if piece:
                    if "=" in piece or not items:
                        items.append(piece)
                    else:
                        items[-1] += "," + piece
                piece = ""
                continue
            depth += ch == "["
            depth -= ch == "]"
            piece += ch
    for item in items:
        if "=" not in item:
            raise CompactInputError(f"--config {item!r}: expected key=value")
        key, _, raw = item.partition("=")
        yield key.strip(), raw.strip()


KAFKA_VERSIONS = ("3", "2.1")


def check_config(cfg: CompactConfig) -> CompactConfig:
    """Reject settings the broker would reject (same lower bounds as Kafka's config definitions)."""
    if cfg.kafka_version not in KAFKA_VERSIONS:
        raise CompactInputError(f"kafka version {cfg.kafka_version!r}: cleaner rules exist for 3 and 2.1")
    minimums = {
        "segment_bytes": 14,
        "segment_index_bytes": 4,
        "index_interval_bytes": 0,
        "delete_retention_ms": 0,
        "min_compaction_lag_ms": 0,
        "max_compaction_lag_ms": 1,
        "max_message_bytes": 0,
        "io_buffer_size": 0,
        "message_max_bytes": 0,
        "producer_id_expiration_ms": 1,
    }
    for name, low in minimums.items():
        if getattr(cfg, name) < low:
            raise CompactInputError(f"{_kafka_name(name)}={getattr(cfg, name)}: must be at least {low}")
    if not 0 <= cfg.min_cleanable_dirty_ratio <= 1:
        raise CompactInputError(f"min.cleanable.dirty.ratio={cfg.min_cleanable_dirty_ratio}: must be in [0, 1]")
    if not 0 < cfg.dedupe_buffer_load_factor <= 1:
        raise CompactInputError(
            f"log.cleaner.io.buffer.load.factor={cfg.dedupe_buffer_load_factor}: must be in (0, 1]"
        )
    if (cfg.dedupe_buffer_size // 24) * cfg.dedupe_buffer_load_factor <= 1:
        raise CompactInputError(
            f"log.cleaner.dedupe.buffer.size={cfg.dedupe_buffer_size}: too small to map even one key "
            "(24 bytes a key, filled to the load factor)"
        )
    return cfg


def _kafka_name(field_name: str) -> str:
    for key, (name, _) in CONFIG_NAMES.items():
        if name == field_name and not key.startswith("log."):
            return key
    return next(k for k, (n, _) in CONFIG_NAMES.items() if n == field_name)


# ---------------------------------------------------------------------------------------------------
# The log as the cleaner sees it
# ---------------------------------------------------------------------------------------------------


@dataclass
class Segment:
    """One segment: sizes and times the cleaner's decisions use, filled by `PartitionLog`'s scan."""

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


@dataclass
class ProducerLast:
    """What the producer state manager remembers of a producer, as far as the cleaner cares."""

    epoch: int
    last_data_offset: int = -1  # last offset of its last data batch in the current epoch, -1 if none
    last_sequence: int = -1  # last sequence of that batch (what Kafka 2.1 compares)
    last_timestamp: int = NO_TIMESTAMP
    ongoing_txn_first_offset: int = -1


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


def control_type(batch: Batch) -> int | None:
    """Type of a control batch's record (0 ABORT, 1 COMMIT, ...), None for an emptied control batch."""
    recs = batch.records()
    if not recs or recs[0].key is None or len(recs[0].key) < 4:
        return None
    return _CONTROL_KEY.unpack_from(recs[0].key)[1]


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
        self.segments: list[Segment] = []
        for sf in list_segments(self.dir):
            self.segments.append(
                Segment(
                    sf,
                    _file_size(sf.log),
                    _mtime_ms(sf.log),
                    _file_size(sf.index) // OFFSET_ENTRY_SIZE * OFFSET_ENTRY_SIZE,
                    _file_size(sf.timeindex) // TIME_ENTRY_SIZE * TIME_ENTRY_SIZE,
                )
            )
        if not self.segments:
            raise CompactInputError(f"{self.dir}: no segments (no <offset>.log files)")
        self.producers: dict[int, ProducerLast] = {}
        self._txn_index: dict[int, list[AbortedTxn]] = {}
        self._scan(progress)
        self.log_end_offset = self.segments[-1].next_offset
        start = self._checkpointed(LOG_START_CHECKPOINT)
        self.log_start_offset: int = self.segments[0].base_offset if start is None else start
        self.cleaner_checkpoint = self._checkpointed(CLEANER_CHECKPOINT)
        self.high_watermark = self._checkpointed(REPLICATION_CHECKPOINT)

    @property
    def name(self) -> str:
        return f"{self.topic}-{self.partition}"

    @property
    def active(self) -> Segment:
        return self.segments[-1]

    @property
    def size(self) -> int:
        return sum(s.size for s in self.segments)

    def _checkpointed(self, name: str) -> int | None:
        path = self.log_dir / name
        if not path.is_file():
            return None
        return read_offset_checkpoint(path).get((self.topic, self.partition))

    # -- scan --------------------------------------------------------------------------------
    def _scan(self, progress: Callable[[int], None] | None) -> None:
        aborts: list[tuple[int, int]] = []  # (producer id, marker offset) of aborts that still have data
        txn_data: set[int] = set()  # producers with transactional batches since their last marker
        for seg in self.segments:
            seg.next_offset = seg.base_offset
            with MappedFile(seg.files.log) as mf:
                scan = BatchScan(mf.buf)
                for b in scan:
                    if not b.is_valid():
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
                        self._track_producer(b, ctype)
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

    def _track_producer(self, b: Batch, ctype: int | None) -> None:
        """ProducerStateManager's view: a new epoch forgets the old batches; markers end transactions."""
        st = self.producers.get(b.producer_id)
        if st is None:
            st = self.producers[b.producer_id] = ProducerLast(b.producer_epoch)
        if b.producer_epoch != st.epoch:
            st.epoch = b.producer_epoch
            st.last_data_offset = -1
            st.last_sequence = -1
        if b.is_control:
            if ctype in (CONTROL_ABORT, CONTROL_COMMIT):
                st.ongoing_txn_first_offset = -1
        else:
            st.last_data_offset = b.last_offset
            st.last_sequence = b.last_sequence
            if b.is_transactional and st.ongoing_txn_first_offset < 0:
                st.ongoing_txn_first_offset = b.base_offset
        st.last_timestamp = b.max_timestamp

    # -- offsets ------------------------------------------------------------------------------
    @property
    def first_unstable_offset(self) -> int | None:
        firsts = [p.ongoing_txn_first_offset for p in self.producers.values() if p.ongoing_txn_first_offset >= 0]
        return min(firsts) if firsts else None

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
        return {
            pid: p
            for pid, p in self.producers.items()
            if p.ongoing_txn_first_offset >= 0 or now_ms - p.last_timestamp < expiration_ms
        }

    def _floor(self, offset: int) -> int | None:
        lo = None
        for i, s in enumerate(self.segments):
            if s.base_offset <= offset:
                lo = i
            else:
                break
        return lo

    def segments_in(self, start: int, end: int) -> list[Segment]:
        """Kafka's logSegments(from, to): from the segment holding `start` to the last based below `end`."""
        if start >= end:
            return []
        first = self._floor(start)
        segs = self.segments if first is None else self.segments[first:]
        return [s for s in segs if s.base_offset < end]

    def txn_index(self, seg: Segment) -> list[AbortedTxn]:
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


# ---------------------------------------------------------------------------------------------------
# Transactions during a cleaning pass
# ---------------------------------------------------------------------------------------------------


class TransactionTracker:
    """CleanedTransactionMetadata: which batches belong to aborted transactions, which markers may go."""

    def __init__(self) -> None:
        self._pending: list[tuple[int, int, AbortedTxn]] = []  # min-heap by first offset
        self._seq = 0
        self.ongoing_committed: set[int] = set()
        self.ongoing_aborted: dict[int, list[Any]] = {}  # pid -> [txn, last observed batch offset]
        self.cleaned_index: list[AbortedTxn] | None = None

    def add_aborted(self, txns: Iterable[AbortedTxn]) -> None:
        for t in txns:
            heapq.heappush(self._pending, (t.first_offset, self._seq, t))
            self._seq += 1

    def _consume_up_to(self, offset: int) -> None:
        while self._pending and self._pending[0][0] <= offset:
            txn = heapq.heappop(self._pending)[2]
            self.ongoing_aborted.setdefault(txn.producer_id, [txn, None])

    def on_control_batch(self, b: Batch, ctype: int | None) -> bool:
        """True when the marker may be discarded (its transaction left no data behind)."""
        self._consume_up_to(b.last_offset)
        if ctype is None:
            return True  # an emptied control batch
        if ctype == CONTROL_ABORT:
            meta = self.ongoing_aborted.pop(b.producer_id, None)
            if meta is not None and meta[1] is not None:
                if self.cleaned_index is not None:
                    self.cleaned_index.append(meta[0])
                return False
            return True
        if ctype == CONTROL_COMMIT:
            if b.producer_id in self.ongoing_committed:
                self.ongoing_committed.discard(b.producer_id)
                return False
            return True
        return False

    def on_batch(self, b: Batch) -> bool:
        """True when the batch belongs to an aborted transaction."""
        self._consume_up_to(b.last_offset)
        if not b.is_transactional:
            return False
        meta = self.ongoing_aborted.get(b.producer_id)
        if meta is not None:
            meta[1] = b.last_offset
            return True
        self.ongoing_committed.add(b.producer_id)
        return False


# ---------------------------------------------------------------------------------------------------
# Results
# ---------------------------------------------------------------------------------------------------


@dataclass
class CleanerStats:
    """Counts of one cleaning pass (what the broker's cleaner logs, plus what --estimate reports)."""

    bytes_read: int = 0
    bytes_written: int = 0
    records_read: int = 0
    records_written: int = 0
    batches_read: int = 0
    batches_written: int = 0
    map_bytes_read: int = 0
    map_records_read: int = 0
    map_keyless: int = 0  # keyless data records in the dirty range (a compacted topic has none)
    tombstones_read: int = 0
    tombstones_written: int = 0
    keyless_dropped: int = 0
    aborted_batches: int = 0
    aborted_bytes: int = 0
    empty_batches_written: int = 0
    horizons_stamped: int = 0


@dataclass
class GroupResult:
    """One group of segments cleaned into one segment."""

    base_offset: int
    sources: list[int]
    bytes_before: int
    bytes_after: int
    records_before: int
    records_after: int


@dataclass
class CompactionResult:
    """What compacting one partition did (or, dry, would do)."""

    partition: str
    dir: str
    dry_run: bool
    now_ms: int
    segments: int
    size_bytes: int
    log_start_offset: int
    log_end_offset: int
    first_dirty_offset: int
    first_uncleanable_offset: int
    end_offset: int  # cleaned up to (exclusive): the new cleaner-offset-checkpoint
    clean_bytes: int
    cleanable_bytes: int
    dirty_ratio: float
    max_compaction_delay_ms: int
    broker_would_clean: bool  # the broker's choice: ratio above min.cleanable.dirty.ratio, or overdue
    legacy_delete_horizon_ms: int
    map_slots: int
    map_entries: int
    map_full: bool
    cleaned: bool
    reason: str = ""
    keyless_records: int = 0  # keyless data records in the dirty range (a compacted topic has none)
    warnings: list[str] = field(default_factory=list)
    groups: list[GroupResult] = field(default_factory=list)
    stats: CleanerStats = field(default_factory=CleanerStats)
    checkpoint_written: bool = False
    locked: bool = False
    resolved_temp_files: list[str] = field(default_factory=list)
    elapsed_s: float = 0.0

    @property
    def map_utilization(self) -> float:
        return self.map_entries / self.map_slots if self.map_slots else 0.0

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["map_utilization"] = round(self.map_utilization, 6)
        d["dirty_ratio"] = round(self.dirty_ratio, 6)
        return d


# ---------------------------------------------------------------------------------------------------
# What the offset-map pass decoded, for the cleaning pass
# ---------------------------------------------------------------------------------------------------


class DecodedRecords:
    """The records the offset-map pass decoded in the dirty range, so cleaning need not decode them again.

    Why: on a first clean most of the log is dirty, and decoding every record a second time was a fifth
    of the cleaner's time.  Noted per offset of the dirty range: known, null key, null value (one byte);
    and per segment, the file positions of the batches noted.  Only a v2 batch whose records are exactly
    its offsets base..last is noted, and cleaning recognises it by its position in the same segment file
    (the bytes the first pass read), so the flags are that batch's.  Overlapping batches (a damaged log)
    turn noting off.  At most `budget` bytes of flags and as many of positions; what is not noted is
    simply decoded again.
    """

    KNOWN, NULL_KEY, NULL_VALUE = 1, 2, 4

    def __init__(self, first: int, end: int, budget: int) -> None:
        self.first = first
        self.flags: np.ndarray | None = np.zeros(end - first, dtype=np.uint8) if 0 < end - first <= budget else None
        self.positions: dict[int, array[int]] = {}  # segment base offset -> positions of noted batches (8 bytes)
        self.batches_left = budget // 8

    def note(self, segment: int, batches: list[Batch], cols: BatchKeyColumns) -> None:
        """Note the decoded batches (cols = decode_key_columns(batches)) that qualify."""
        flags = self.flags
        if flags is None or not batches or self.batches_left <= 0:
            return
        counts = np.diff(cols.starts)
        base = np.array([b.base_offset for b in batches], dtype=np.int64)
        last = np.array([b.last_offset for b in batches], dtype=np.int64)
        v2 = np.array([b.magic >= 2 for b in batches], dtype=bool)
        dense = v2 & (counts > 0) & (counts == last - base + 1) & (base >= self.first)
        dense &= last < self.first + len(flags)
        first_rec = np.asarray(cols.starts[:-1])
        k = np.arange(len(cols)) - np.repeat(first_rec, counts)
        exact = cols.offsets == np.repeat(base, counts) + k  # each record at base + its index
        whole = np.flatnonzero(counts > 0)
        dense[whole] &= np.logical_and.reduceat(exact, first_rec[whole])
        noted = np.flatnonzero(dense)[: self.batches_left]
        if not noted.size:
            return
        dense[:] = False
        dense[noted] = True
        rec = np.repeat(dense, counts)
        at = cols.offsets[rec] - self.first
        if bool(flags[at].any()):  # an offset noted twice: a damaged log, note nothing more
            self.flags = None
            self.positions = {}
            return
        flags[at] = (
            self.KNOWN
            | (cols.null_keys[rec].astype(np.uint8) * self.NULL_KEY)
            | (cols.null_values[rec].astype(np.uint8) * self.NULL_VALUE)
        )
        self.positions.setdefault(segment, array("q")).extend(batches[i].position for i in noted.tolist())
        self.batches_left -= noted.size

    def knows(self, segment: int, b: Batch) -> bool:
        """Whether b (a batch of that segment) was noted."""
        positions = self.positions.get(segment)
        if not positions or self.flags is None:
            return False
        i = bisect_left(positions, b.position)
        return i < len(positions) and positions[i] == b.position

    def columns(self, batches: list[Batch]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(offsets, null keys, null values) of the records of noted batches, in order."""
        assert self.flags is not None
        counts = np.array([b.last_offset - b.base_offset + 1 for b in batches], dtype=np.int64)
        base = np.array([b.base_offset for b in batches], dtype=np.int64)
        offsets = np.repeat(base, counts) + (np.arange(int(counts.sum())) - np.repeat(np.cumsum(counts) - counts, counts))
        flags = self.flags.take(offsets - self.first)
        return offsets, (flags & self.NULL_KEY) != 0, (flags & self.NULL_VALUE) != 0


# ---------------------------------------------------------------------------------------------------
# Writing a cleaned segment
# ---------------------------------------------------------------------------------------------------


class CleanedSegment:
    """The `.cleaned` segment a group is copied into, indexed as LogSegment.append does.

    In a dry run nothing is written and only the size is kept.
    """

    def __init__(self, partition_dir: Path, base_offset: int, index_interval: int, write: bool) -> None:
        self.dir = partition_dir
        self.base_offset = base_offset
        self.size = 0
        self.aborted: list[AbortedTxn] = []
        self.writer = SegmentWriter(partition_dir, base_offset, index_interval, CLEANED_SUFFIX) if write else None

    def append(
        self, data: bytes | memoryview, largest_offset: int, max_timestamp: int, offset_of_max_timestamp: int
    ) -> None:
        if self.writer is not None:  # a view of the source segment is written without a copy
            self.writer.append(data, largest_offset, max_timestamp, offset_of_max_timestamp)  # type: ignore[arg-type]
        self.size += len(data)

    def close(self, mtime_ms: int) -> None:
        """Finish the indexes (onBecomeInactiveSegment), write the txn index, take the old mtime."""
        if self.writer is None:
            return
        self.writer.close()
        if self.aborted:
            (self.dir / segment_name(self.base_offset, TXN_INDEX_SUFFIX + CLEANED_SUFFIX)).write_bytes(
                encode_txn_index(self.aborted)
            )
        t = mtime_ms / 1000
        for suffix in (".log", ".index", ".timeindex"):
            path = self.dir / segment_name(self.base_offset, suffix + CLEANED_SUFFIX)
            os.utime(path, (t, t))

    def discard(self) -> None:
        """Remove whatever was written (cleaning of this group failed)."""
        if self.writer is not None:
            try:
                self.writer.close()
            except OSError:
                pass
        for suffix in (".log", ".index", ".timeindex", ".txnindex"):
            (self.dir / segment_name(self.base_offset, suffix + CLEANED_SUFFIX)).unlink(missing_ok=True)


# ---------------------------------------------------------------------------------------------------
# The cleaner
# ---------------------------------------------------------------------------------------------------


def _grow(capacity: int, needed: int, cfg: CompactConfig) -> int:
    """The cleaner's buffer growth (growBuffersOrFail/growBuffers) until a batch of `needed` bytes fits."""
    while capacity < needed:
        target = needed if capacity >= cfg.max_message_bytes else cfg.max_message_bytes
        limit = max(target, cfg.message_max_bytes)
        capacity = min(capacity * 2, limit) if capacity < limit else needed
    return capacity


def read_chunks(buf: bytes, size: int, cfg: CompactConfig, start: int = 0) -> Iterator[list[Batch]]:
    """The batches of a segment in the chunks the cleaner reads them (whole batches filling its buffer).

    Chunking matters only for index density: each chunk is one append to the cleaned segment.  The buffer
    grows for a batch that does not fit and stays grown until the end of the segment, as in Kafka.
    """
    capacity = cfg.read_buffer_size
    pos = start
    scan_end = size
    while pos < scan_end:
        chunk: list[Batch] = []
        used = 0
        for b in BatchScan(buf, pos, min(scan_end, pos + capacity)):
            chunk.append(b)
            used = b.end - pos
        if not chunk:
            nxt = next(iter(BatchScan(buf, pos, scan_end)), None)
            if nxt is None:  # partial tail (the scan at open time refuses those)
                return
            capacity = _grow(capacity, nxt.size, cfg)
            continue
        yield chunk
        pos += used


def _decode_planned(pending: list[tuple[int, list[_Plan]]]) -> None:
    """Decode the planned data batches only to raise the error of the first damaged one, if any."""
    decode_key_columns([p[0] for _, plans in pending for p in plans if p[4] is None])


class _Pieces:
    """The bytes of one output chunk: batches kept whole are views of the segment, and consecutive
    ones are one view, so a chunk that keeps everything is written straight from the mapped file."""

    def __init__(self) -> None:
        self.parts: list[bytes | memoryview] = []
        self.view: memoryview | None = None
        self.start = self.end = -1

    def add_batch(self, b: Batch) -> None:
        if self.view is not None and b.position == self.end:
            self.end = b.end
            return
        self._flush()
        self.view = b.view if b.view is not None else memoryview(b.buf)
        self.start, self.end = b.position, b.end

    def add(self, data: bytes) -> None:
        self._flush()
        self.parts.append(data)

    def _flush(self) -> None:
        if self.view is not None:
            self.parts.append(self.view[self.start : self.end])
            self.view = None

    def joined(self) -> bytes | memoryview | None:
        self._flush()
        if not self.parts:
            return None
        return self.parts[0] if len(self.parts) == 1 else b"".join(self.parts)


class Cleaner:
    """One cleaning pass over one partition (Kafka's Cleaner.doClean), writing or only measuring."""

    def __init__(
        self,
        log: PartitionLog,
        cfg: CompactConfig,
        now_ms: int,
        offset_map: OffsetMap,
        *,
        dry_run: bool = False,
        progress: Callable[[int], None] | None = None,
    ) -> None:
        self.log = log
        self.cfg = cfg
        self.now = now_ms
        self.map = offset_map
        self.dry_run = dry_run
        self.progress = progress
        self.stats = CleanerStats()
        self.map_full = False
        self.decoded: DecodedRecords | None = None  # filled by build_offset_map, read by cleaning

    # -- building the offset map ------------------------------------------------------------
    def build_offset_map(self, start: int, end: int) -> None:
        """Map key → latest offset over [start, end), stopping where the map fills (buildOffsetMap)."""
        self.map.clear()
        self.map.track_offsets(start, end)  # lets cleaning judge the records mapped here by offset
        self.decoded = DecodedRecords(start, end, self.map.memory // 16)
        dirty = self.log.segments_in(start, end)
        txn = TransactionTracker()
        txn.add_aborted(self.log.collect_aborted(start, end))
        for i, seg in enumerate(dirty):
            next_start = dirty[i + 1].base_offset if i + 1 < len(dirty) else end
            if self._map_segment(seg, start, next_start, txn):
                self.map_full = True
                return

    def _map_segment(self, seg: Segment, start: int, next_start: int, txn: TransactionTracker) -> bool:
        """buildOffsetMapForSegment.  Keys go to the map MAP_KEYS_PER_PUT at a time (the fill point is
        still exact to the record), because numpy calls cost the same for 200 keys as for 50,000; the
        batches' keys are decoded together too, without their values (`decode_key_columns`)."""
        to_decode: list[Batch] = []  # batches whose keys go to the map, in log order
        decoded: list[bool] = []  # for every batch read since the last put: is it in to_decode?
        lasts: list[int] = []  # last offset of each of those batches
        records = 0
        pending_bytes = 0
        st = self.stats
        with MappedFile(seg.files.log) as mf:
            for b in BatchScan(mf.buf, 0, seg.size):
                pending_bytes += b.size
                if b.last_offset < start:
                    continue  # before the dirty range: the broker starts at the index entry for it
                if b.is_control:
                    txn.on_control_batch(b, control_type(b))
                    st.map_records_read += 1
                    decoded.append(False)
                elif txn.on_batch(b):
                    st.map_records_read += b.count or 0
                    decoded.append(False)
                else:
                    to_decode.append(b)
                    records += b.count or 0
                    decoded.append(True)
                lasts.append(b.last_offset)
                if records >= MAP_KEYS_PER_PUT or pending_bytes >= MAP_BYTES_PER_PUT:
                    if self._map_put(seg, to_decode, decoded, lasts, start, pending_bytes):
                        return True
                    to_decode, decoded, lasts, records, pending_bytes = [], [], [], 0, 0
            if self._map_put(seg, to_decode, decoded, lasts, start, pending_bytes):
                return True
        if not self.cfg.before_kip534:
            self.map.update_latest_offset(next_start - 1)  # offset gaps at a segment's end (Kafka 3.x)
        return False

    def _map_put(
        self, seg: Segment, batches: list[Batch], decoded: list[bool], lasts: list[int], start: int, size: int
    ) -> bool:
        """Put the batches' keys (keyed records from `start` on) until the map fills; the map covers every
        batch read before the one that filled it."""
        st = self.stats
        cols = decode_key_columns(batches)
        if self.decoded is not None:
            self.decoded.note(seg.base_offset, batches, cols)
        st.map_records_read += len(cols)
        st.map_keyless += int(cols.null_keys.sum())
        wanted = ~cols.null_keys & (cols.offsets >= start)
        digests = cols.keys(wanted, KEY_HASH)
        if len(digests) == len(cols):
            offsets, ends = cols.offsets, cols.starts[1:]
        else:
            offsets = cols.offsets[wanted]
            ends = np.concatenate(([0], np.cumsum(wanted)))[cols.starts[1:]].tolist()
        bounds: list[int] = []  # keys collected up to each batch (a batch without keys adds none)
        it = iter(ends)
        bound = 0
        for has_keys in decoded:
            if has_keys:
                bound = next(it)
            bounds.append(bound)
        omap = self.map
        consumed = omap.put_until_full(digest_array(cast("list[bytes]", digests)), offsets) if digests else 0
        full = consumed < len(digests)
        covered = lasts[: bisect_right(bounds, consumed)] if full else lasts
        if covered:
            omap.update_latest_offset(covered[-1])
        st.map_bytes_read += size
        if self.progress:
            self.progress(size)
        return full

    # -- grouping ---------------------------------------------------------------------------
    def group_segments(self, segments: list[Segment], first_uncleanable: int) -> list[list[Segment]]:
        """groupSegmentsBySize: consecutive segments whose log and index sizes and offset span fit."""
        groups: list[list[Segment]] = []
        i = 0
        n = len(segments)
        while i < n:
            group = [segments[i]]
            log_size = segments[i].size
            index_size = segments[i].index_bytes
            time_size = segments[i].time_index_bytes
            i += 1
            while i < n:
                s = segments[i]
                last_offset = segments[i + 1].base_offset - 1 if i + 1 < n else first_uncleanable - 1
                if not (
                    log_size + s.size <= self.cfg.segment_bytes
                    and index_size + s.index_bytes <= self.cfg.segment_index_bytes
                    and time_size + s.time_index_bytes <= self.cfg.segment_index_bytes
                    and ((s.size == 0 and not self.cfg.before_kip534) or last_offset - group[-1].base_offset <= INT32_MAX)
                ):
                    break
                group.append(s)
                log_size += s.size
                index_size += s.index_bytes
                time_size += s.time_index_bytes
                i += 1
            groups.append(group)
        return groups

    # -- cleaning ---------------------------------------------------------------------------
    def clean_group(
        self,
        group: list[Segment],
        txn: TransactionTracker,
        legacy_delete_horizon_ms: int,
        upper_bound_offset: int,
        producers: dict[int, ProducerLast],
    ) -> GroupResult:
        """cleanSegments: copy a group into one cleaned segment and (unless dry) swap it in."""
        out = CleanedSegment(self.log.dir, group[0].base_offset, self.cfg.index_interval_bytes, not self.dry_run)
        txn.cleaned_index = out.aborted
        records_before = self.stats.records_read
        records_after = self.stats.records_written
        try:
            for i, seg in enumerate(group):
                if self.cfg.before_kip534:  # Kafka 2.1: fresh transaction state for every segment
                    upper = group[i + 1].base_offset if i + 1 < len(group) else self.map.latest_offset + 1
                    txn = TransactionTracker()
                    txn.cleaned_index = out.aborted
                else:
                    upper = group[i + 1].base_offset if i + 1 < len(group) else seg.next_offset
                txn.add_aborted(self.log.collect_aborted(seg.base_offset, upper))
                retain_deletes = seg.mtime_ms > legacy_delete_horizon_ms  # the segment-age rule
                self._clean_into(seg, out, txn, retain_deletes, producers, upper_bound_offset)
            out.close(group[-1].mtime_ms)
        except BaseException:
            out.discard()
            raise
        if not self.dry_run:
            replace_segments(self.log.dir, [out.base_offset], [s.base_offset for s in group])
        return GroupResult(
            out.base_offset,
            [s.base_offset for s in group],
            sum(s.size for s in group),
            out.size,
            self.stats.records_read - records_before,
            self.stats.records_written - records_after,
        )

    def _batch_retention(
        self,
        b: Batch,
        txn: TransactionTracker,
        producers: dict[int, ProducerLast],
        upper_bound_offset: int,
        retain_segment_deletes: bool,
    ) -> tuple[int, bool, bool, int | None]:
        """checkBatchRetention: (retention, discard its records, marker of an empty txn, control type)."""
        ctype: int | None = None
        old = self.cfg.before_kip534
        if b.is_control:
            ctype = control_type(b)
            can_discard = txn.on_control_batch(b, ctype)
            horizon = b.delete_horizon_ms
            if old:
                discard = can_discard and not retain_segment_deletes
            else:
                discard = can_discard and horizon is not None and horizon <= self.now
        else:
            can_discard = txn.on_batch(b)
            discard = can_discard
            if can_discard:
                self.stats.aborted_batches += 1
                self.stats.aborted_bytes += b.size
        last_of_producer = False
        if b.magic >= 2 and b.producer_id >= 0:
            p = producers.get(b.producer_id)
            if p is None:
                pass
            elif old:
                last_of_producer = p.last_sequence == b.last_sequence
            elif p.last_data_offset >= 0:
                last_of_producer = b.last_offset == p.last_data_offset
            else:
                last_of_producer = b.is_control and b.producer_epoch == p.epoch
        if last_of_producer:
            retention = RETAIN_EMPTY
        elif b.next_offset == upper_bound_offset and not old:
            retention = RETAIN_EMPTY  # keep the round's last offset even if nothing else survives
        elif discard:
            retention = DELETE
        else:
            retention = DELETE_EMPTY
        return retention, discard, can_discard and b.is_control, ctype

    def _clean_into(
        self,
        seg: Segment,
        out: CleanedSegment,
        txn: TransactionTracker,
        retain_segment_deletes: bool,
        producers: dict[int, ProducerLast],
        upper_bound_offset: int,
    ) -> None:
        """cleanInto: filter a segment chunk by chunk (each chunk one append to the cleaned segment).

        Batch decisions run in log order as Kafka's do; the records of several chunks are then decoded,
        looked up and judged together before their chunks are written.
        """
        st = self.stats
        pending: list[tuple[int, list[_Plan]]] = []
        pending_bytes = 0
        pending_records = 0
        with MappedFile(seg.files.log) as mf:
            for chunk in read_chunks(mf.buf, seg.size, self.cfg):
                plans: list[_Plan] = []
                chunk_bytes = 0
                try:
                    for b in chunk:
                        chunk_bytes += b.size
                        st.bytes_read += b.size
                        st.batches_read += 1
                        retention, discard, empty_txn_marker, _ = self._batch_retention(
                            b, txn, producers, upper_bound_offset, retain_segment_deletes
                        )
                        if retention == DELETE:
                            st.records_read += b.count or 0
                            continue
                        recs = None  # decoded in _write_chunks, but a control batch's record now
                        if b.is_control:
                            recs = b.records()
                            st.records_read += len(recs)
                        else:
                            pending_records += b.count or 0
                        plans.append((b, retention, discard, empty_txn_marker, recs))
                except Exception:
                    # a damaged batch planned before this one would have stopped the cleaner first
                    _decode_planned([*pending, (chunk_bytes, plans)])
                    raise
                pending.append((chunk_bytes, plans))
                pending_bytes += chunk_bytes
                if pending_records >= RECORDS_PER_JUDGEMENT or pending_bytes >= CLEAN_BYTES_PER_JUDGEMENT:
                    self._write_chunks(seg, pending, out, retain_segment_deletes)
                    pending, pending_bytes, pending_records = [], 0, 0
            if pending:
                self._write_chunks(seg, pending, out, retain_segment_deletes)

    def _write_chunks(
        self, seg: Segment, pending: list[tuple[int, list[_Plan]]], out: CleanedSegment, retain_segment_deletes: bool
    ) -> None:
        """filterTo for planned chunks: keep records, copy or rebuild batches, append each chunk.

        The records of all data batches are decoded together, without values (`decode_key_columns`;
        batches the offset-map pass decoded are not decoded again, see `DecodedRecords`), and
        shouldRetainRecord is evaluated with numpy over all of them at once: a record stays if it is past
        the map, or keyed, not older than its key's mapped offset, and either has a value or its
        tombstone is still retained.  Whether a record is its key's latest is known by offset for the
        records the map was built from (`OffsetMap.latest_by_offset`); only the others have their key
        digested and looked up.  A batch that keeps every record is copied from the segment as it is
        (consecutive ones as one piece); only a batch that loses records is decoded in full and rebuilt.
        """
        st = self.stats
        old = self.cfg.before_kip534
        now = self.now
        latest = self.map.latest_offset
        horizons: list[int | None] = []  # each planned batch's delete horizon
        batches: list[Batch] = []  # the data batches, whose records are decoded here
        judged: list[bool] = []  # ...whether their records are judged one by one (not discarded)
        retained: list[bool] = []  # ...whether their tombstones are still retained
        for _, plans in pending:
            for b, _retention, discard, _marker, recs in plans:
                if b.magic >= 2 and not old:
                    horizon = b.delete_horizon_ms
                    retain_deletes = horizon is None or now < horizon
                else:
                    horizon = b.delete_horizon_ms if b.magic >= 2 else None
                    retain_deletes = retain_segment_deletes
                horizons.append(horizon)
                if recs is None:
                    batches.append(b)
                    judged.append(not discard)
                    retained.append(retain_deletes)
        columns = self._record_columns(seg, batches)
        offsets, null_keys, tombstone, starts, counts = columns[:5]
        st.records_read += len(offsets)
        judged_rec = np.repeat(np.array(judged, dtype=bool), counts)
        keyed = ~null_keys
        in_map = judged_rec & keyed & (offsets <= latest)
        # records the map was built from are known by offset; only the others need their key looked up
        put, put_latest = self.map.latest_by_offset(offsets)
        latest_of_key = in_map & put & put_latest
        lookup = in_map & ~put
        if bool(lookup.any()):
            cols, decoded_rec = columns[5], columns[6]
            if bool((lookup & ~decoded_rec).any()):  # noted records are all in the map: cannot happen
                columns = self._record_columns(seg, batches, use_noted=False)
                cols, decoded_rec = columns[5], columns[6]
            mapped = self.map.get_many(digest_array(cast("list[bytes]", cols.keys(lookup[decoded_rec], KEY_HASH))))
            latest_of_key[lookup] = offsets[lookup] >= mapped
        past_map = offsets > latest
        st.keyless_dropped += int((judged_rec & ~keyed & ~past_map).sum())
        st.tombstones_read += int(tombstone.sum())
        retain_rec = np.repeat(np.array(retained, dtype=bool), counts)
        keep = judged_rec & (past_map | (latest_of_key & (~tombstone | retain_rec)))
        bounds = np.asarray(starts)
        kept_total = np.concatenate(([0], np.cumsum(keep)))
        kept_counts = (kept_total[bounds[1:]] - kept_total[bounds[:-1]]).tolist()
        tomb_total = np.concatenate(([0], np.cumsum(keep & tombstone)))
        kept_tombstones = (tomb_total[bounds[1:]] - tomb_total[bounds[:-1]]).tolist()
        plan_no = 0
        data_no = 0
        for chunk_bytes, plans in pending:
            pieces = _Pieces()
            max_offset = -1
            max_ts = NO_TIMESTAMP
            shallow = -1
            for b, retention, discard, empty_txn_marker, recs in plans:
                horizon = horizons[plan_no]
                plan_no += 1
                if recs is not None:  # a control batch: its marker stays unless it may be discarded
                    n = len(recs)
                    n_kept = 0 if discard else n
                    tombstones = 0
                    st.tombstones_read += sum(1 for r in recs if r.value is None)
                else:
                    first = starts[data_no]
                    n = starts[data_no + 1] - first
                    n_kept = kept_counts[data_no]
                    tombstones = kept_tombstones[data_no]
                    data_no += 1
                if n_kept:
                    stamp = b.magic >= 2 and (tombstones or empty_txn_marker) and horizon is None and not old
                    if n_kept == n and not stamp:
                        pieces.add_batch(b)
                        ts, ts_offset, largest = b.max_timestamp, b.last_offset, b.last_offset
                    else:
                        if recs is None:
                            recs = b.records()
                        kept = recs if n_kept == n else list(compress(recs, keep[first : first + n].tolist()))
                        if stamp:
                            horizon = now + self.cfg.delete_retention_ms
                            st.horizons_stamped += 1
                        rebuilt, ts, ts_offset = self._rebuild(b, kept, horizon)
                        pieces.add(rebuilt)
                        largest = kept[-1].offset
                    st.records_written += n_kept
                    st.tombstones_written += tombstones
                elif retention == RETAIN_EMPTY and b.magic >= 2:
                    pieces.add(_encode_like(b, [], max_timestamp=b.max_timestamp))
                    ts, ts_offset, largest = b.max_timestamp, b.last_offset, b.last_offset
                    st.empty_batches_written += 1
                else:
                    continue
                st.batches_written += 1
                if ts > max_ts:
                    max_ts, shallow = ts, ts_offset
                max_offset = max(max_offset, largest)
            written = pieces.joined()
            if written is not None:
                out.append(written, max_offset, max_ts, shallow)
                st.bytes_written += len(written)
            if self.progress:
                self.progress(chunk_bytes)

    def _record_columns(
        self, seg: Segment, batches: list[Batch], use_noted: bool = True
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[int], np.ndarray, BatchKeyColumns, np.ndarray]:
        """Offsets, null keys, null values, batch starts and counts of the batches' records, in order,
        plus the decoded columns of those not noted by the offset-map pass and which records they are.

        Batches the first pass noted (`DecodedRecords`) are not decoded again; notes are used only while
        the map still tracks offsets, so their records' retention is known without their keys.
        """
        noted = self.decoded if use_noted and self.map.tracks_offsets else None
        known = np.array([noted is not None and noted.knows(seg.base_offset, b) for b in batches], dtype=bool)
        cols = decode_key_columns([b for b, k in zip(batches, known.tolist(), strict=True) if not k])
        counts = np.zeros(len(batches), dtype=np.int64)
        counts[~known] = np.diff(cols.starts)
        if noted is None or not known.any():
            return cols.offsets, cols.null_keys, cols.null_values, cols.starts, counts, cols, np.ones(len(cols), bool)
        known_batches = list(compress(batches, known.tolist()))
        counts[known] = [b.last_offset - b.base_offset + 1 for b in known_batches]
        known_rec = np.repeat(known, counts)
        n = int(counts.sum())
        offsets = np.empty(n, dtype=np.int64)
        null_keys = np.empty(n, dtype=bool)
        null_values = np.empty(n, dtype=bool)
        offsets[known_rec], null_keys[known_rec], null_values[known_rec] = noted.columns(known_batches)
        offsets[~known_rec], null_keys[~known_rec], null_values[~known_rec] = cols.offsets, cols.null_keys, cols.null_values
        starts = [0, *np.cumsum(counts).tolist()]
        return offsets, null_keys, null_values, starts, counts, cols, ~known_rec

    @staticmethod
    def _rebuild(b: Batch, kept: list[Record], horizon: int | None) -> tuple[bytes, int, int]:
        """buildRetainedRecordsInto: the batch's surviving records in its own magic, codec and header.

        Returns the bytes and MemoryRecordsBuilder.info(): the max timestamp and its shallow offset.
        """
        if b.magic >= 2:
            data = _encode_like(b, kept, codec=b.codec, delete_horizon_ms=horizon)
            if b.timestamp_type == TS_LOG_APPEND:
                return data, b.max_timestamp, b.last_offset
            return data, max(r.timestamp for r in kept), b.last_offset
        lat = b.max_timestamp if b.timestamp_type == TS_LOG_APPEND else None
        data = encode_legacy_batch(kept, magic=b.magic, codec=b.codec, log_append_time=lat)
        if lat is not None:
            return data, lat, kept[-1].offset
        ts = max(r.timestamp for r in kept) if b.magic >= 1 else NO_TIMESTAMP
        return data, ts, kept[-1].offset


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
    groups = cleaner.group_segments(log.segments_in(0, end_offset), rng.first_uncleanable_offset)
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


def _encode_like(b: Batch, records: list, **overrides: Any) -> bytes:
    """A v2 batch with b's header fields (offsets, producer state, flags) around `records`."""
    return encode_v2_batch(
        records,
        b.base_offset,
        timestamp_type=b.timestamp_type,
        producer_id=b.producer_id,
        producer_epoch=b.producer_epoch,
        base_sequence=b.base_sequence,
        partition_leader_epoch=b.partition_leader_epoch,
        is_transactional=b.is_transactional,
        is_control=b.is_control,
        last_offset=b.last_offset,
        **overrides,
    )
