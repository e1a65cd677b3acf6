"""Open (and hanging) transactions of a partition, from its log and producer snapshots alone.

A broker knows a partition's open transactions from its producer state (Kafka's
`ProducerStateManager`): rebuilt at startup from the newest producer snapshot (`<offset>.snapshot`,
the state of every offset below it) and the log after it.  A transactional data batch opens its
producer's transaction at the batch's first offset unless one is open; a COMMIT or ABORT marker
closes it; a new producer epoch forgets the old batches.  The partition's first unstable offset is
the smallest first offset of the open transactions, and the last stable offset (LSO) a
read_committed consumer can read up to is that (or, with none open, the log end / high watermark):
one transaction left open holds every read_committed consumer of the partition back.

`find_open` does the same from the files of a copied partition dir, up to any offset or time, and
reports each open transaction with its producer, first offset, last timestamp, age against a given
"now" and whether it is older than the longest transaction timeout (what `kafka-transactions.sh
find-hanging` calls hanging).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kafkatool.log.errors import CorruptRecordError, CorruptSnapshotError
from kafkatool.log.files import (
    REPLICATION_CHECKPOINT,
    MappedFile,
    SegmentFiles,
    is_partition_dir,
    list_partition_dirs,
    list_segments,
    parse_partition_dir,
)
from kafkatool.log.producer_state import partition_log_start, read_checkpoint_offset, snapshot_files
from kafkatool.log.record import CONTROL_ABORT, CONTROL_COMMIT, control_type_of
from kafkatool.log.records import Batch, BatchScan
from kafkatool.log.snapshot import read_producer_snapshot

DEFAULT_MAX_TXN_TIMEOUT_MS = (
    15 * 60 * 1000
)  # transaction.max.timeout.ms's default, as kafka-transactions uses

ROW_COLUMNS = (
    "topic",
    "partition",
    "producerId",
    "producerEpoch",
    "coordinatorEpoch",
    "startOffset",
    "lastOffset",
    "startTimestamp",
    "lastTimestamp",
    "ageMs",
    "durationMin",
    "lastStableOffset",
    "logEndOffset",
    "hanging",
)


class TxnInputError(ValueError):
    """A path that is neither a partition dir nor a log dir holding partition dirs."""


@dataclass
class Producer:
    """What the producer state manager keeps of one producer (the parts transactions need)."""

    producer_id: int
    epoch: int
    coordinator_epoch: int = -1
    last_sequence: int = -1
    last_timestamp: int = -1
    txn_first_offset: int = -1
    txn_last_offset: int = -1
    txn_start_timestamp: int | None = None  # the open transaction's first batch's max timestamp


@dataclass
class PartitionTxns:
    """One partition's transactions as of a point."""

    path: str
    topic: str
    partition: int
    log_start_offset: int
    log_end_offset: int  # the next offset after the last batch considered
    high_watermark: int | None  # from the log dir's replication-offset-checkpoint (newest data only)
    producers: dict[int, Producer] = field(default_factory=dict)
    snapshot: str | None = None  # the producer snapshot the state started from
    damage: str | None = None  # where reading stopped early, and why

    @property
    def open(self) -> list[Producer]:
        return sorted(
            (p for p in self.producers.values() if p.txn_first_offset >= 0),
            key=lambda p: (p.txn_first_offset, p.producer_id),
        )

    @property
    def first_unstable_offset(self) -> int | None:
        firsts = [p.txn_first_offset for p in self.open]
        return min(firsts) if firsts else None

    @property
    def last_stable_offset(self) -> int:
        """What a broker computes: the first unstable offset, else the high watermark (or log end)."""
        fuo = self.first_unstable_offset
        bound = (
            self.log_end_offset
            if self.high_watermark is None
            else min(self.high_watermark, self.log_end_offset)
        )
        return bound if fuo is None else min(fuo, bound)


def partition_dirs(path: Path, topic: str | None = None, partition: int | None = None) -> list[Path]:
    """The partition dirs a path names: itself, or those of a log dir (filtered by topic/partition)."""
    if not path.exists():
        raise FileNotFoundError(2, "No such file or directory", str(path))
    if not path.is_dir():
        raise TxnInputError(f"{path}: not a directory (give a partition dir or a log dir)")
    dirs = [path] if is_partition_dir(path) and list_segments(path) else list_partition_dirs(path)
    if not dirs:
        raise TxnInputError(f"{path}: no partition dirs (topic-N) with log segments here")
    out = []
    for d in dirs:
        tp = parse_partition_dir(d.name)
        if tp and (topic is None or tp[0] == topic) and (partition is None or tp[1] == partition):
            out.append(d)
    return out


def _batches(segments: list[SegmentFiles], start: int, damage: list[str]) -> Iterator[tuple[Batch, Any]]:
    """Header-only batches from `start` on, with each control batch's marker type (None for data)."""
    for i, seg in enumerate(segments):
        nxt = segments[i + 1].base_offset if i + 1 < len(segments) else None
        if (nxt is not None and nxt <= start) or not seg.log.exists():
            continue
        with MappedFile(seg.log) as mf:
            scan = BatchScan(mf.buf)
            for b in scan:
                if b.last_offset < start:
                    continue
                ctype = None
                if b.is_control:
                    try:
                        recs = b.records()
                    except CorruptRecordError as exc:
                        damage.append(f"{seg.log}: byte {b.position}: {exc}")
                        return
                    ctype = control_type_of(recs[0].key) if recs else None
                yield b, ctype
            if scan.error is not None:
                damage.append(f"{seg.log}: byte {scan.valid_bytes}: {scan.error}")
                return
            if scan.trailing_bytes:
                damage.append(
                    f"{seg.log}: byte {scan.valid_bytes}: {scan.trailing_bytes} trailing byte(s) "
                    "do not hold a whole batch (a torn write)"
                )
                return


def offset_at_time(pdir: Path, time_ms: int) -> int:
    """The last offset before the first batch appended after `time_ms` (-1 when there is none)."""
    damage: list[str] = []
    segments = list_segments(pdir)
    last = partition_log_start(pdir, segments) - 1
    for b, _ in _batches(segments, 0, damage):
        if b.max_timestamp > time_ms:
            break
        last = b.last_offset
    return last


def read_partition(pdir: Path, upto: int | None = None) -> PartitionTxns:
    """Producer state of a partition dir after offset `upto` (None: the whole log), as a broker rebuilds it."""
    topic, part = parse_partition_dir(pdir.name) or (pdir.name, -1)
    segments = list_segments(pdir)
    log_start = partition_log_start(pdir, segments)
    hw = (
        None
        if upto is not None
        else read_checkpoint_offset(pdir.parent, REPLICATION_CHECKPOINT, (topic, part))
    )
    st = PartitionTxns(str(pdir), topic, part, log_start, log_start, hw)
    start = log_start
    for snap_offset, path in reversed(snapshot_files(pdir)):
        if snap_offset < log_start or (upto is not None and snap_offset > upto + 1):
            continue
        try:
            entries = read_producer_snapshot(path.read_bytes())
        except (CorruptSnapshotError, OSError):
            continue  # the broker deletes a bad snapshot and tries the next older one
        for e in entries:
            st.producers[e.producer_id] = Producer(
                e.producer_id,
                e.producer_epoch,
                e.coordinator_epoch,
                e.last_sequence,
                e.timestamp,
                e.current_txn_first_offset,
                e.last_offset if e.current_txn_first_offset >= 0 else -1,
            )
        start, st.snapshot, st.log_end_offset = snap_offset, path.name, snap_offset
        break
    damage: list[str] = []
    for b, ctype in _batches(segments, start, damage):
        if upto is not None and b.base_offset > upto:
            break
        st.log_end_offset = b.last_offset + 1
        if b.magic < 2 or b.producer_id < 0:
            continue
        p = st.producers.get(b.producer_id)
        if p is None:
            p = st.producers[b.producer_id] = Producer(b.producer_id, b.producer_epoch)
        if b.producer_epoch != p.epoch:
            p.epoch, p.last_sequence = b.producer_epoch, -1
        p.last_timestamp = b.max_timestamp
        if b.is_control:
            if ctype in (CONTROL_ABORT, CONTROL_COMMIT):
                p.txn_first_offset, p.txn_last_offset, p.txn_start_timestamp = -1, -1, None
                p.coordinator_epoch = _coordinator_epoch(b, p.coordinator_epoch)
            continue
        p.last_sequence = b.last_sequence
        if b.is_transactional:
            if p.txn_first_offset < 0:
                p.txn_first_offset, p.txn_start_timestamp = b.base_offset, b.max_timestamp
            p.txn_last_offset = b.last_offset
    st.damage = damage[0] if damage else None
    _fill_start_times(st, segments)
    return st


def _coordinator_epoch(b: Batch, default: int) -> int:
    try:
        recs = b.records()
        value = recs[0].value if recs else None
    except CorruptRecordError:
        return default
    if value is None or len(value) < 6:
        return default
    return int.from_bytes(value[2:6], "big", signed=True)


def _fill_start_times(st: PartitionTxns, segments: list[SegmentFiles]) -> None:
    """A transaction opened before the snapshot: its start time is its first batch's, if the log holds it."""
    wanted = {p.txn_first_offset: p for p in st.open if p.txn_start_timestamp is None}
    if not wanted:
        return
    damage: list[str] = []
    for b, _ in _batches(segments, min(wanted), damage):
        p = wanted.pop(b.base_offset, None)
        if p is not None:
            p.txn_start_timestamp = b.max_timestamp
        if not wanted or b.base_offset > max(wanted, default=-1):
            return


def rows(
    st: PartitionTxns, now_ms: int, max_txn_timeout_ms: int = DEFAULT_MAX_TXN_TIMEOUT_MS
) -> list[dict[str, Any]]:
    """One row per open transaction (see `ROW_COLUMNS`): durations as kafka-transactions computes them
    (from the producer's last timestamp), the age from the transaction's first batch."""
    lso = st.last_stable_offset
    out = []
    for p in st.open:
        idle = now_ms - p.last_timestamp
        out.append(
            {
                "topic": st.topic,
                "partition": st.partition,
                "producerId": p.producer_id,
                "producerEpoch": p.epoch,
                "coordinatorEpoch": p.coordinator_epoch,
                "startOffset": p.txn_first_offset,
                "lastOffset": p.txn_last_offset,
                "startTimestamp": p.txn_start_timestamp,
                "lastTimestamp": p.last_timestamp,
                "ageMs": None if p.txn_start_timestamp is None else now_ms - p.txn_start_timestamp,
                "durationMin": idle // 60000,
                "lastStableOffset": lso,
                "logEndOffset": st.log_end_offset,
                "hanging": idle >= max_txn_timeout_ms,
            }
        )
    return out
