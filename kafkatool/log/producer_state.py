"""Producer and transaction state as the broker rebuilds it on recovery (Kafka's `ProducerStateManager`).

`.txnindex` entries depend on the transactions still open when a segment starts, so they are built
per partition (`TxnIndexState`): from the newest valid producer snapshot at or before the first
segment and a header-only walk of the log up to it, exactly as the broker rebuilds producer state.

The log cleaner's questions (each producer's last batch, the first open transaction) are answered
by `ProducerStates`, fed batch by batch as the cleaner loads a log.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from kafkatool.log.checkpoint import read_offset_checkpoint
from kafkatool.log.errors import CheckpointError, CorruptRecordError, CorruptSnapshotError
from kafkatool.log.files import (
    LOG_START_CHECKPOINT,
    SNAPSHOT_SUFFIX,
    MappedFile,
    SegmentFiles,
    parse_partition_dir,
)
from kafkatool.log.index import AbortedTxn
from kafkatool.log.record import CONTROL_ABORT, CONTROL_COMMIT, NO_TIMESTAMP
from kafkatool.log.records import Batch, BatchScan
from kafkatool.log.segment import (
    TXN_ABORT,
    TXN_COMMIT,
    TXN_START,
    SegmentWalk,
    control_record_type,
)
from kafkatool.log.snapshot import read_producer_snapshot

# ---------------------------------------------------------------------------------------------
# partition context: log start offset, producer snapshots, transactions open at a segment's start
# ---------------------------------------------------------------------------------------------


def read_checkpoint_offset(log_dir: Path, name: str, topic_partition: tuple[str, int]) -> int | None:
    """A partition's entry in one of the log dir's offset checkpoints (None when absent or unreadable)."""
    path = log_dir / name
    if not path.is_file() or path.stat().st_size == 0:
        return None
    try:
        return read_offset_checkpoint(path).get(topic_partition)
    except (CheckpointError, OSError, UnicodeDecodeError):
        return None


def partition_log_start(partition_dir: Path, segments: Sequence[SegmentFiles]) -> int:
    """The broker's log start offset: the checkpoint's, but never below the first segment's base."""
    first = segments[0].base_offset if segments else 0
    tp = parse_partition_dir(partition_dir.name)
    cp = read_checkpoint_offset(partition_dir.parent, LOG_START_CHECKPOINT, tp) if tp else None
    return max(first, cp or 0)


def snapshot_files(partition_dir: Path) -> list[tuple[int, Path]]:
    """(offset, path) of the producer snapshots of a partition dir, in offset order."""
    out = []
    for entry in os.scandir(partition_dir):
        name = entry.name
        if name.endswith(SNAPSHOT_SUFFIX) and name[: -len(SNAPSHOT_SUFFIX)].isdigit():
            out.append((int(name[: -len(SNAPSHOT_SUFFIX)]), Path(entry.path)))
    out.sort()
    return out


class TxnIndexBuilder:
    """The aborted-transaction index as ProducerStateManager feeds it during recovery.

    `ongoing` maps a producer id to the first offset of its open transaction.  An ABORT marker gives
    an entry whose last stable offset is the first offset of the earliest transaction still open
    (after this one completes), or the marker's offset + 1 when none is.  A transactional batch starts
    a transaction only when its producer has none open, so the superset of starts a walk records is
    harmless; a marker without an open transaction completes one that starts at the marker.
    """

    def __init__(self, ongoing: dict[int, int] | None = None) -> None:
        self.ongoing = dict(ongoing or {})

    def apply(self, kind: str, producer_id: int, offset: int) -> AbortedTxn | None:
        if kind == TXN_START:
            self.ongoing.setdefault(producer_id, offset)
            return None
        first = self.ongoing.pop(producer_id, offset)
        if kind != TXN_ABORT:
            return None
        lso = min(self.ongoing.values(), default=offset + 1)
        return AbortedTxn(0, producer_id, first, offset, lso)


def _txn_events_of(buf: bytes, start_offset: int, until_offset: int) -> Iterable[tuple[str, int, int]]:
    """Transaction events of batches with base offsets in [start_offset, until_offset), headers only."""
    scan = BatchScan(buf)
    for b in scan:
        if b.base_offset >= until_offset:
            return
        if b.magic < 2 or b.base_offset < start_offset or b.producer_id < 0:
            continue
        if b.is_control:
            try:
                ctype = control_record_type(buf, b.position, len(buf))
            except CorruptRecordError:
                return
            if ctype == CONTROL_ABORT:
                yield TXN_ABORT, b.producer_id, b.base_offset
            elif ctype == CONTROL_COMMIT:
                yield TXN_COMMIT, b.producer_id, b.base_offset
        elif b.is_transactional:
            yield TXN_START, b.producer_id, b.base_offset


def open_transactions_at(
    partition_dir: Path, segments: Sequence[SegmentFiles], offset: int, log_start: int | None = None
) -> dict[int, int]:
    """Producers with a transaction open at `offset` (producer id -> first offset), as the broker finds
    them: the newest valid snapshot in (log start, offset], then the log from there up to offset."""
    if log_start is None:
        log_start = partition_log_start(partition_dir, segments)
    state = TxnIndexBuilder()
    from_offset = log_start
    for snap_offset, path in reversed(snapshot_files(partition_dir)):
        if snap_offset > offset or snap_offset <= log_start:
            continue
        try:
            entries = read_producer_snapshot(path.read_bytes())
        except (CorruptSnapshotError, OSError):
            continue  # the broker deletes it and tries the next older one
        state.ongoing = {
            e.producer_id: e.current_txn_first_offset
            for e in entries
            if e.current_txn_first_offset >= 0 and e.last_offset >= log_start
        }
        from_offset = snap_offset
        break
    for i, seg in enumerate(segments):
        nxt = segments[i + 1].base_offset if i + 1 < len(segments) else None
        if seg.base_offset >= offset:
            break
        if nxt is not None and nxt <= from_offset:
            continue
        if not seg.log.exists():
            continue
        with MappedFile(seg.log) as mf:
            for ev in _txn_events_of(mf.buf, from_offset, offset):
                state.apply(*ev)
    return state.ongoing


class TxnIndexState:
    """Builds `.txnindex` contents for walked segments of one partition, in offset order.

    The open transactions at a run's first segment are read from snapshots and the log only when the
    run holds an ABORT marker (otherwise every segment of the run has an empty index anyway).
    """

    def __init__(
        self, partition_dir: Path, segments: Sequence[SegmentFiles], log_start: int | None = None
    ) -> None:
        self.partition_dir = partition_dir
        self.segments = list(segments)
        self.log_start = log_start
        self._order = {s.base_offset: i for i, s in enumerate(self.segments)}

    def entries(self, scans: Sequence[SegmentWalk]) -> dict[int, list[AbortedTxn]]:
        """Aborted-transaction entries per segment base offset for the given scans."""
        out: dict[int, list[AbortedTxn]] = {s.base_offset: [] for s in scans}
        ordered = sorted(scans, key=lambda s: s.base_offset)
        runs: list[list[SegmentWalk]] = []
        for s in ordered:
            i = self._order.get(s.base_offset)
            prev = runs[-1][-1] if runs else None
            if prev is not None and i is not None and self._order.get(prev.base_offset) == i - 1:
                runs[-1].append(s)
            else:
                runs.append([s])
        for run in runs:
            if not any(kind == TXN_ABORT for s in run for kind, _p, _o in s.txn_events):
                continue
            start = run[0].base_offset
            builder = TxnIndexBuilder(
                open_transactions_at(self.partition_dir, self.segments, start, self.log_start)
            )
            for s in run:
                for ev in s.txn_events:
                    entry = builder.apply(*ev)
                    if entry is not None:
                        out[s.base_offset].append(entry)
        return out


# ---------------------------------------------------------------------------------------------
# each producer's last batch, as the log cleaner needs it
# ---------------------------------------------------------------------------------------------


@dataclass
class ProducerLast:
    """What the producer state manager remembers of a producer, as far as the cleaner cares."""

    epoch: int
    last_data_offset: int = -1  # last offset of its last data batch in the current epoch, -1 if none
    last_sequence: int = -1  # last sequence of that batch (what Kafka 2.1 compares)
    last_timestamp: int = NO_TIMESTAMP
    ongoing_txn_first_offset: int = -1


class ProducerStates:
    """ProducerStateManager's view of a log read in offset order, as far as the cleaner cares: each
    producer's epoch, last data batch and open transaction.  A new epoch forgets the old batches; an
    ABORT or COMMIT marker ends the transaction (an emptied marker ends nothing)."""

    def __init__(self) -> None:
        self.producers: dict[int, ProducerLast] = {}

    def update(self, b: Batch, ctype: int | None) -> None:
        """Apply a batch of a producer (b.producer_id >= 0); ctype is a control batch's record type."""
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

    @property
    def first_unstable_offset(self) -> int | None:
        """The first offset of the earliest open transaction, None when none is open."""
        firsts = [p.ongoing_txn_first_offset for p in self.producers.values() if p.ongoing_txn_first_offset >= 0]
        return min(firsts) if firsts else None

    def active(self, now_ms: int, expiration_ms: int) -> dict[int, ProducerLast]:
        """Producers the broker still tracks: not expired, or inside a transaction."""
        return {
            pid: p
            for pid, p in self.producers.items()
            if p.ongoing_txn_first_offset >= 0 or now_ms - p.last_timestamp < expiration_ms
        }
