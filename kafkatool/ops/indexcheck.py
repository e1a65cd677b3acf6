"""Index files checked against their log, and rebuilt exactly as a broker's recovery writes them.

`scan_segment` is the broker's `LogSegment.recover` walk, shared by `index verify`, `index rebuild`
and `recover`: it validates every batch as recovery does (size fields, the outer CRC without
decompressing, offsets within int32 of the segment's base), stops where the broker would truncate,
and builds the `.index`/`.timeindex` contents with the recovery rule (`IndexBuilder.on_recover`,
then the final time entry a recovered or closed segment gets).  It also collects what recovery feeds
to the producer-state manager and the leader-epoch cache: transaction starts and end markers (for
`.txnindex`) and leader-epoch changes.

`.txnindex` entries depend on the transactions still open when a segment starts, so they are built
per partition (`TxnIndexState`): from the newest valid producer snapshot at or before the first
segment and a header-only walk of the log up to it, exactly as the broker rebuilds producer state.

Verification (`verify_segment`) is the broker's index sanity checks plus DumpLogSegments'
cross-checks, made cheap: the scan records every batch's position, last offset and max timestamp in
compact arrays, so each index entry is checked with a binary search instead of a log read.
"""

from __future__ import annotations

import array
import os
import struct
import zlib
from bisect import bisect_left
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from kafkatool.log import crc as _crc32c
from kafkatool.log.checkpoint import atomic_write, read_offset_checkpoint
from kafkatool.log.errors import CheckpointError, CorruptIndexError, CorruptRecordError, CorruptSnapshotError
from kafkatool.log.files import (
    INDEX_SUFFIX,
    LOG_START_CHECKPOINT,
    LOG_SUFFIX,
    SNAPSHOT_SUFFIX,
    TIME_INDEX_SUFFIX,
    TXN_INDEX_SUFFIX,
    MappedFile,
    SegmentFiles,
    list_partition_dirs,
    list_segments,
    offset_from_name,
    parse_partition_dir,
)
from kafkatool.log.index import (
    DEFAULT_INDEX_INTERVAL,
    TXN_ENTRY_SIZE,
    AbortedTxn,
    OffsetEntry,
    OffsetIndex,
    TimeEntry,
    TimeIndex,
    encode_txn_index,
    read_txn_index,
)
from kafkatool.log.indexer import IndexBuilder, IndexOffsetError
from kafkatool.log.records import BatchScan, read_batch_header
from kafkatool.log.snapshot import read_producer_snapshot
from kafkatool.ops.safety import crash_point

INT32_MAX = 2**31 - 1
LOG_OVERHEAD = 12
HEADER_SIZE_UP_TO_MAGIC = 17
V0_OVERHEAD = 14
V1_OVERHEAD = 22
V2_HEADER_SIZE = 61
ATTR_TRANSACTIONAL = 0x10
ATTR_CONTROL = 0x20
CONTROL_ABORT = 0
CONTROL_COMMIT = 1
DEFAULT_MAX_MESSAGE_SIZE = 5 * 1024 * 1024
RELEASE_STEP = 32 * 1024 * 1024

# Why a walk stopped (SegmentScan.stop).
STOP_END = "end"  # every byte belongs to a valid batch
STOP_PARTIAL = "partial"  # the last batch (or its header) runs past the end of the file
STOP_CORRUPT = "corrupt"  # Kafka's CorruptRecordException: a size field or a CRC is wrong
STOP_OVERFLOW = "offset_overflow"  # an offset not within int32 of the base: the broker splits the segment
STOP_INVALID_OFFSET = "invalid_offset"  # offsets go back where an index entry lands: the broker empties it

TXN_START = "start"
TXN_ABORT = "abort"
TXN_COMMIT = "commit"

_LOG_ENTRY = struct.Struct(">qi")
_V2_REST = struct.Struct(
    ">ibIhiqqqhii"
)  # from byte 12: ple magic crc attrs lastDelta baseTs maxTs pid epoch seq count
_V2_FULL = struct.Struct(">qiibIhi8xqq10x")  # the 61-byte v2 header, the fields recovery reads
_U32 = struct.Struct(">I")
_I64 = struct.Struct(">q")
_CONTROL_KEY = struct.Struct(">hh")
_OFFSET_ENTRY = struct.Struct(">ii")
_TIME_ENTRY = struct.Struct(">qi")


# ---------------------------------------------------------------------------------------------
# the recovery walk
# ---------------------------------------------------------------------------------------------


@dataclass
class SegmentScan:
    """What LogSegment.recover finds in one segment's log, and the indexes it would write."""

    base_offset: int
    size: int
    index_interval: int = DEFAULT_INDEX_INTERVAL
    valid_bytes: int = 0
    batches: int = 0
    first_offset: int | None = None
    last_offset: int | None = None
    stop: str = STOP_END
    error: str | None = None  # Kafka's message for the batch that stopped the walk
    error_position: int | None = None
    offset_entries: list[tuple[int, int]] = field(default_factory=list)
    time_entries: list[tuple[int, int]] = field(default_factory=list)
    max_timestamp: int = -1
    has_v2: bool = False
    # (kind, producer id, offset): transaction starts (a superset: see TxnIndexState) and end markers
    txn_events: list[tuple[str, int, int]] = field(default_factory=list)
    # (epoch, start offset) the leader-epoch cache is assigned while recovering this segment
    epochs: list[tuple[int, int]] = field(default_factory=list)
    # per-batch arrays, filled when scan_segment(record_batches=True)
    positions: array.array = field(default_factory=lambda: array.array("q"))
    last_offsets: array.array = field(default_factory=lambda: array.array("q"))
    max_timestamps: array.array = field(default_factory=lambda: array.array("q"))

    @property
    def truncated_bytes(self) -> int:
        """Bytes recovery removes from the end of the file."""
        return self.size - self.valid_bytes

    @property
    def next_offset(self) -> int:
        """LogSegment.readNextOffset after recovery: last valid offset + 1, or the base when empty."""
        return self.base_offset if self.last_offset is None else self.last_offset + 1

    @property
    def clean(self) -> bool:
        return self.stop == STOP_END

    def offset_index_bytes(self) -> bytes:
        base = self.base_offset
        pack = _OFFSET_ENTRY.pack
        return b"".join([pack(o - base, p) for o, p in self.offset_entries])

    def time_index_bytes(self) -> bytes:
        base = self.base_offset
        pack = _TIME_ENTRY.pack
        return b"".join([pack(t, o - base) for t, o in self.time_entries])

    @property
    def aborts(self) -> list[tuple[int, int]]:
        """(producer id, marker offset) of the ABORT markers in the valid part."""
        return [(pid, off) for kind, pid, off in self.txn_events if kind == TXN_ABORT]


def _control_type(buf: bytes, pos: int, end: int) -> int | None:
    """ControlRecordType of a control batch's record (None for an empty, fully cleaned batch)."""
    batch = read_batch_header(buf, pos, end)
    if batch is None:
        raise CorruptRecordError("control batch runs past the end of the file", pos)
    if not batch.count:
        return None  # an empty batch the cleaner kept: no marker to apply
    records = batch.records()
    if not records:
        return None
    key = records[0].key
    if key is None or len(key) < 4:
        raise CorruptRecordError(f"control record at offset {records[0].offset} has an invalid key", pos)
    return _CONTROL_KEY.unpack_from(key, 0)[1]


def scan_segment(
    buf: bytes,
    base_offset: int,
    index_interval: int = DEFAULT_INDEX_INTERVAL,
    *,
    latest_epoch: int | None = None,
    open_txns: set[int] | None = None,
    record_batches: bool = False,
    release: Callable[[int], None] | None = None,
    path: str = "",
) -> SegmentScan:
    """Walk a segment's log as LogSegment.recover does and return what it found and would build.

    `latest_epoch` is the leader-epoch cache's latest epoch before this segment (epochs above it are
    assigned at their batch's base offset); `open_txns` carries the producers with a transaction
    started in earlier scanned segments, so that only real starts are recorded.  `path` names the file
    in Kafka's size-field message.
    """
    end = len(buf)
    scan = SegmentScan(base_offset, end, index_interval)
    builder = IndexBuilder(base_offset, index_interval)
    on_recover = builder.on_recover
    unpack_entry = _LOG_ENTRY.unpack_from
    unpack_v2 = _V2_REST.unpack_from
    unpack_full = _V2_FULL.unpack_from
    crc32c = _crc32c.crc32c
    crc32 = zlib.crc32
    limit = base_offset + INT32_MAX
    open_txns = set() if open_txns is None else open_txns
    events = scan.txn_events
    epochs = scan.epochs
    if record_batches:
        add_pos = scan.positions.append
        add_last = scan.last_offsets.append
        add_ts = scan.max_timestamps.append
    next_release = RELEASE_STEP if release is not None else 1 << 62
    pos = 0
    first: int | None = None
    last: int | None = None
    count = 0
    has_v2 = False
    stop = STOP_END
    error: str | None = None
    with memoryview(buf) as mv:
        try:
            while True:
                # Fast path: a whole v2 batch (one unpack for the header).  Anything else - legacy
                # messages, short or cut batches, bad sizes - takes the careful path below, which
                # follows FileLogInputStream.nextBatch and ensureValid step by step.
                if pos + V2_HEADER_SIZE <= end:
                    offset, size, ple, magic, crc, attrs, delta, max_ts, pid = unpack_full(buf, pos)
                    fast = (
                        magic == 2
                        and size >= V2_HEADER_SIZE - LOG_OVERHEAD
                        and pos + LOG_OVERHEAD + size <= end
                    )
                else:
                    fast = False
                if fast:
                    bend = pos + LOG_OVERHEAD + size
                    computed = crc32c(mv[pos + 21 : bend])
                    if computed != crc:
                        stop = STOP_CORRUPT
                        error = f"Record is corrupt (stored crc = {crc}, computed crc = {computed})"
                        break
                    last_off = offset + delta
                else:
                    if pos + HEADER_SIZE_UP_TO_MAGIC >= end:
                        if pos < end:
                            stop = STOP_PARTIAL
                        break
                    offset, size = unpack_entry(buf, pos)
                    if size < V0_OVERHEAD:
                        stop = STOP_CORRUPT
                        error = (
                            f"Found record size {size} smaller than minimum record overhead ({V0_OVERHEAD}) "
                            f"in file {path}."
                        )
                        break
                    if pos > end - LOG_OVERHEAD - size:
                        stop = STOP_PARTIAL
                        break
                    bend = pos + LOG_OVERHEAD + size
                    magic = buf[pos + 16]
                    if magic >= 2:
                        if size + LOG_OVERHEAD < V2_HEADER_SIZE:
                            stop = STOP_CORRUPT
                            error = (
                                f"Record batch is corrupt (the size {size + LOG_OVERHEAD} is smaller than the "
                                f"minimum allowed overhead {V2_HEADER_SIZE})"
                            )
                            break
                        ple, _m, crc, attrs, delta, _bts, max_ts, pid, _pe, _bs, _n = unpack_v2(buf, pos + 12)
                        computed = crc32c(mv[pos + 21 : bend])
                        if computed != crc:
                            stop = STOP_CORRUPT
                            error = f"Record is corrupt (stored crc = {crc}, computed crc = {computed})"
                            break
                        last_off = offset + delta
                    else:
                        (crc,) = _U32.unpack_from(buf, pos + 12)
                        computed = crc32(mv[pos + 16 : bend])
                        if computed != crc:
                            stop = STOP_CORRUPT
                            error = f"Record is corrupt (stored crc = {crc}, computed crc = {computed})"
                            break
                        if magic == 1:
                            if size < V1_OVERHEAD:
                                stop = STOP_CORRUPT
                                error = (
                                    f"Record is corrupt (size {size} is below the v1 message overhead "
                                    f"{V1_OVERHEAD})"
                                )
                                break
                            (max_ts,) = _I64.unpack_from(buf, pos + 18)
                        else:
                            max_ts = -1
                        last_off = offset
                        ple = -1
                        pid = -1
                        attrs = 0
                if last_off > limit or last_off < base_offset:
                    stop = STOP_OVERFLOW
                    error = (
                        f"offset {last_off} of the batch at position {pos} cannot be stored relative to the "
                        f"segment's base offset {base_offset} (the broker splits such a segment)"
                    )
                    break
                on_recover(last_off, pos, max_ts)
                if record_batches:
                    add_pos(pos)
                    add_last(last_off)
                    add_ts(max_ts)
                batch_pos = pos
                pos = bend
                count += 1
                last = last_off
                if magic >= 2:
                    has_v2 = True
                    if ple >= 0 and (latest_epoch is None or ple > latest_epoch):
                        epochs.append((ple, offset))
                        latest_epoch = ple
                    if pid >= 0 and attrs & (ATTR_TRANSACTIONAL | ATTR_CONTROL):
                        if attrs & ATTR_CONTROL:
                            try:
                                ctype = _control_type(buf, batch_pos, end)
                            except CorruptRecordError as exc:
                                # The broker has already counted this batch as valid bytes here.
                                stop = STOP_CORRUPT
                                error = f"invalid control batch at position {batch_pos}: {exc}"
                                break
                            if ctype in (CONTROL_ABORT, CONTROL_COMMIT):
                                open_txns.discard(pid)
                                events.append(
                                    (TXN_ABORT if ctype == CONTROL_ABORT else TXN_COMMIT, pid, offset)
                                )
                        elif pid not in open_txns:
                            open_txns.add(pid)
                            events.append((TXN_START, pid, offset))
                if pos >= next_release:
                    release(pos)  # type: ignore[misc]
                    next_release = pos + RELEASE_STEP
        except IndexOffsetError as exc:
            # LogSegment.recover throws; Log.recoverLog then truncates the segment to its base offset.
            stop = STOP_INVALID_OFFSET
            error = f"Found invalid offset during recovery: {exc}"
            scan.error_position = pos
            pos = 0
            first = last = None
            count = 0
            builder = IndexBuilder(base_offset, index_interval)
            events.clear()
            epochs.clear()
    if stop == STOP_INVALID_OFFSET:
        pass
    elif stop != STOP_END:
        scan.error_position = pos
    if count and first is None:
        first = _LOG_ENTRY.unpack_from(buf, 0)[0]
    scan.valid_bytes = pos
    scan.batches = count
    scan.first_offset = first
    scan.last_offset = last
    scan.stop = stop
    scan.error = error
    scan.has_v2 = has_v2
    if stop != STOP_INVALID_OFFSET:
        try:
            builder.finish_on_close()
        except IndexOffsetError as exc:
            # The final maybeAppend of LogSegment.recover threw: same outcome as above.
            scan.stop = STOP_INVALID_OFFSET
            scan.error = f"Found invalid offset during recovery: {exc}"
            scan.error_position = pos
            scan.valid_bytes = 0
            scan.batches = 0
            scan.first_offset = scan.last_offset = None
            builder = IndexBuilder(base_offset, index_interval)
            events.clear()
            epochs.clear()
    scan.offset_entries = builder.offset_entries
    scan.time_entries = builder.time_entries
    scan.max_timestamp = builder.max_timestamp
    if stop == STOP_PARTIAL and scan.error is None:
        scan.error = f"{end - pos} bytes of an incomplete batch at the end of the file"
    return scan


def scan_segment_file(
    path: Path,
    base_offset: int | None = None,
    index_interval: int = DEFAULT_INDEX_INTERVAL,
    **kw: object,
) -> SegmentScan:
    """scan_segment on a `.log` file (memory-mapped; resident memory stays flat on big files)."""
    if base_offset is None:
        base_offset = offset_from_name(path.name)
    with MappedFile(path) as mf:
        return scan_segment(
            mf.buf,
            base_offset,
            index_interval,
            release=mf.release,
            path=str(path.absolute()),
            **kw,  # type: ignore[arg-type]
        )


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
    a transaction only when its producer has none open, so the superset of starts a scan records is
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
                ctype = _control_type(buf, b.position, len(buf))
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
    """Builds `.txnindex` contents for scanned segments of one partition, in offset order.

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

    def entries(self, scans: Sequence[SegmentScan]) -> dict[int, list[AbortedTxn]]:
        """Aborted-transaction entries per segment base offset for the given scans."""
        out: dict[int, list[AbortedTxn]] = {s.base_offset: [] for s in scans}
        ordered = sorted(scans, key=lambda s: s.base_offset)
        runs: list[list[SegmentScan]] = []
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
# targets: files, partition dirs, log dirs
# ---------------------------------------------------------------------------------------------

SEGMENT_FILE_SUFFIXES = (LOG_SUFFIX, INDEX_SUFFIX, TIME_INDEX_SUFFIX, TXN_INDEX_SUFFIX)


class TargetError(ValueError):
    """A path that is not a segment file, a partition dir or a log dir."""


@dataclass
class PartitionTarget:
    """One partition dir and the segments a command should look at (all when `whole`)."""

    dir: Path
    segments: list[SegmentFiles]
    whole: bool
    files: list[Path] = field(default_factory=list)  # explicit files given (for dump)


def _looks_like_partition_dir(path: Path) -> bool:
    try:
        names = os.listdir(path)
    except OSError:
        return False
    if any(n.endswith(SEGMENT_FILE_SUFFIXES) and n[:20].isdigit() for n in names):
        return True
    if any(parse_partition_dir(n) and (path / n).is_dir() for n in names):
        return False
    return parse_partition_dir(path.name) is not None


def resolve_targets(paths: Sequence[str | os.PathLike[str]]) -> list[PartitionTarget]:
    """Group segment files, partition dirs and log dirs into per-partition targets (order kept)."""
    targets: dict[Path, PartitionTarget] = {}
    for raw in paths:
        p = Path(raw)
        if not p.exists():
            raise FileNotFoundError(2, "No such file or directory", str(raw))
        if p.is_dir():
            dirs = [p] if _looks_like_partition_dir(p) else list_partition_dirs(p)
            if not dirs:
                raise TargetError(
                    f"{raw}: not a log dir or a partition dir (no segment files, no partition dirs)"
                )
            for d in dirs:
                key = d.resolve()
                t = targets.get(key)
                if t is None:
                    targets[key] = PartitionTarget(d, list_segments(d), True)
                else:
                    t.whole = True
                    t.segments = list_segments(d)
            continue
        name = p.name
        if not (name.endswith(SEGMENT_FILE_SUFFIXES) and name.split(".", 1)[0].isdigit()):
            raise TargetError(f"{raw}: not a segment file (.log, .index, .timeindex or .txnindex)")
        d = p.parent
        key = d.resolve()
        seg = SegmentFiles(d, offset_from_name(name))
        t = targets.setdefault(key, PartitionTarget(d, [], False))
        if not t.whole and seg not in t.segments:
            t.segments.append(seg)
            t.segments.sort(key=lambda s: s.base_offset)
        t.files.append(p)
    return list(targets.values())


# ---------------------------------------------------------------------------------------------
# verify
# ---------------------------------------------------------------------------------------------


@dataclass
class Finding:
    """One problem in one file; `kind` is stable for JSON consumers (see README)."""

    kind: str
    message: str
    entry: int | None = None
    position: int | None = None
    offset: int | None = None


@dataclass
class FileCheck:
    """The verdict on one file of a segment."""

    file: str
    type: str  # log | index | timeindex | txnindex
    exists: bool = True
    bytes: int = 0
    entries: int | None = None  # index entries, or batches for a log
    findings: list[Finding] = field(default_factory=list)
    note: str | None = None  # something worth knowing that is not a problem

    @property
    def ok(self) -> bool:
        return not self.findings

    def row(self) -> dict[str, object]:
        return {
            "file": self.file,
            "type": self.type,
            "status": "ok" if self.ok else ("missing" if not self.exists else "problems"),
            "bytes": self.bytes if self.exists else None,
            "entries": self.entries,
            "problems": len(self.findings),
            "findings": [
                {k: v for k, v in vars(f).items() if v is not None or k in ("kind", "message")}
                for f in self.findings
            ],
            "note": self.note,
        }


def _check_log(seg: SegmentFiles, scan: SegmentScan) -> FileCheck:
    fc = FileCheck(str(seg.log), "log", bytes=scan.size, entries=scan.batches)
    if scan.stop == STOP_END:
        return fc
    pos = scan.error_position
    lost = scan.size - (pos or 0)
    if scan.stop == STOP_PARTIAL:
        msg = (
            f"incomplete batch at position {pos}: {lost} bytes at the end of the file "
            "(recovery truncates them)"
        )
    elif scan.stop == STOP_INVALID_OFFSET:
        msg = f"{scan.error} (recovery empties this segment)"
    elif scan.stop == STOP_OVERFLOW:
        msg = scan.error or "offset overflow"
    else:
        msg = (
            f"corrupt batch at position {pos}: {scan.error}; {lost} bytes from there to the end are not readable "
            "(recovery truncates them)"
        )
    fc.findings.append(Finding(scan.stop, msg, position=pos, offset=scan.next_offset))
    return fc


def _sanity_findings(index: OffsetIndex | TimeIndex, fc: FileCheck) -> int:
    """The broker's sanity check and a crashed broker's preallocated zero tail, for either index;
    returns the number of entries in use (before the zero tail)."""
    try:
        index.sanity_check()
    except CorruptIndexError as exc:
        fc.findings.append(Finding("index_sanity", str(exc)))
    used = index.used_entries()
    if used < index.entries:
        fc.findings.append(
            Finding(
                "trailing_zero_entries",
                f"{index.entries - used} zero entries at the end (a crashed broker's preallocated index)",
                entry=used,
            )
        )
    return used


def _check_offset_index(seg: SegmentFiles, scan: SegmentScan, index_interval: int, strict: bool) -> FileCheck:
    path = seg.index
    if not path.exists():
        fc = FileCheck(str(path), "index", exists=False)
        fc.findings.append(Finding("missing", "no such file: the broker rebuilds it from the log on start"))
        return fc
    data = path.read_bytes()
    idx = OffsetIndex(data, seg.base_offset, path)
    fc = FileCheck(str(path), "index", bytes=len(data), entries=idx.entries)
    if scan.clean and data == scan.offset_index_bytes():
        return fc  # exactly what recovery builds from this log: consistent by construction
    used = _sanity_findings(idx, fc)
    positions = scan.positions
    lasts = scan.last_offsets
    prev_off = prev_pos = None
    base = seg.base_offset
    entries = [OffsetEntry(base + rel, pos) for rel, pos in struct.iter_unpack(">ii", data[: used * 8])]
    for i, e in enumerate(entries):
        where = f"entry {i} (offset {e.offset}, position {e.position})"
        if prev_off is not None and prev_pos is not None and (e.offset <= prev_off or e.position <= prev_pos):
            fc.findings.append(
                Finding(
                    "index_not_increasing",
                    f"{where} does not follow entry {i - 1} (offset {prev_off}, position {prev_pos})",
                    entry=i,
                    position=e.position,
                    offset=e.offset,
                )
            )
        prev_off, prev_pos = e.offset, e.position
        j = bisect_left(positions, e.position)
        if j >= len(positions) or positions[j] != e.position:
            if e.position >= scan.valid_bytes:
                msg = f"{where} points past the valid log ({scan.valid_bytes} bytes)"
                fc.findings.append(
                    Finding("index_past_log", msg, entry=i, position=e.position, offset=e.offset)
                )
            else:
                msg = f"{where}: no batch starts at that position"
                fc.findings.append(
                    Finding("index_mismatch", msg, entry=i, position=e.position, offset=e.offset)
                )
            continue
        if strict:
            if lasts[j] != e.offset:
                fc.findings.append(
                    Finding(
                        "index_mismatch",
                        f"{where}: the batch at that position has last offset {lasts[j]}",
                        entry=i,
                        position=e.position,
                        offset=e.offset,
                    )
                )
            continue
        # What lookups rely on: every batch before the position ends below the offset, and the offset
        # is reached before the next entry's position (brokers index the first offset (<= 0.10), the
        # base offset (0.11-1.1) or the last offset of a whole append (2.0+, the cleaner)).
        if j > 0 and lasts[j - 1] >= e.offset:
            fc.findings.append(
                Finding(
                    "index_mismatch",
                    f"{where}: the batch before that position already reaches offset "
                    f"{lasts[j - 1]}, so lookups from this entry miss it",
                    entry=i,
                    position=e.position,
                    offset=e.offset,
                )
            )
            continue
        nxt_pos = entries[i + 1].position if i + 1 < len(entries) else None
        k = (bisect_left(positions, nxt_pos) - 1) if nxt_pos is not None else len(positions) - 1
        if k >= j and lasts[k] < e.offset:
            fc.findings.append(
                Finding(
                    "index_mismatch",
                    f"{where}: the log between this entry and the next ends at offset "
                    f"{lasts[k]}, below the indexed offset",
                    entry=i,
                    position=e.position,
                    offset=e.offset,
                )
            )
    if not fc.findings and scan.clean and data != scan.offset_index_bytes():
        fc.note = f"valid, but not what recovery writes with index.interval.bytes {index_interval}"
    return fc


def _check_time_index(seg: SegmentFiles, scan: SegmentScan, index_interval: int, strict: bool) -> FileCheck:
    path = seg.timeindex
    if not path.exists():
        fc = FileCheck(str(path), "timeindex", exists=False)
        fc.findings.append(
            Finding("missing", "no such file: time lookups in this segment find nothing until it is rebuilt")
        )
        return fc
    data = path.read_bytes()
    tidx = TimeIndex(data, seg.base_offset, path)
    fc = FileCheck(str(path), "timeindex", bytes=len(data), entries=tidx.entries)
    if scan.clean and data == scan.time_index_bytes():
        return fc  # exactly what recovery builds from this log
    used = _sanity_findings(tidx, fc)
    lasts = scan.last_offsets
    max_ts = scan.max_timestamps
    prev_ts: int | None = None
    prev_off: int | None = None
    no_ts = False
    base = seg.base_offset
    for i, (ts, rel) in enumerate(struct.iter_unpack(">qi", data[: used * 12])):
        e = TimeEntry(ts, base + rel)
        if prev_ts is not None and e.timestamp <= prev_ts:
            fc.findings.append(
                Finding(
                    "time_out_of_order",
                    f"entry {i} (timestamp {e.timestamp}, offset {e.offset}): timestamp not above the previous "
                    f"entry's {prev_ts}",
                    entry=i,
                    offset=e.offset,
                )
            )
        if prev_off is not None and e.offset < prev_off:
            fc.findings.append(
                Finding(
                    "time_out_of_order",
                    f"entry {i} (timestamp {e.timestamp}, offset {e.offset}): offset below the previous entry's "
                    f"{prev_off}",
                    entry=i,
                    offset=e.offset,
                )
            )
        prev_ts, prev_off = e.timestamp, e.offset
        # The batch holding the offset.  Kafka's tool (--strict) wants the batch's last offset here, but
        # 2.x brokers index the offset of the record with the max timestamp; both name the same batch.
        j = bisect_left(lasts, e.offset)
        if strict and j < len(lasts) and lasts[j] != e.offset:
            fc.findings.append(
                Finding(
                    "time_offset_not_found",
                    f"entry {i} (timestamp {e.timestamp}, offset {e.offset}): no batch ends at that offset "
                    f"(found log offset {lasts[j]})",
                    entry=i,
                    offset=e.offset,
                )
            )
        elif j >= len(lasts):
            fc.findings.append(
                Finding(
                    "time_offset_not_found",
                    f"entry {i} (timestamp {e.timestamp}, offset {e.offset}): no batch holds that offset (the "
                    f"valid log ends at offset {lasts[-1] if lasts else scan.base_offset - 1})",
                    entry=i,
                    offset=e.offset,
                )
            )
        elif max_ts[j] == -1 and not strict:
            no_ts = True  # a v0 batch: the log holds no timestamps to check against
        elif max_ts[j] != e.timestamp:
            fc.findings.append(
                Finding(
                    "time_mismatch",
                    f"entry {i} (timestamp {e.timestamp}, offset {e.offset}): the max timestamp of the batch "
                    f"holding that offset (last offset {lasts[j]}) is {max_ts[j]}",
                    entry=i,
                    position=scan.positions[j],
                    offset=e.offset,
                )
            )
    if no_ts:
        fc.note = "entries name v0 messages, which hold no timestamps to check (0.10 brokers indexed the producer's)"
    elif not fc.findings and scan.clean and data != scan.time_index_bytes():
        fc.note = f"valid, but not what recovery writes with index.interval.bytes {index_interval}"
    return fc


def _check_txn_index(seg: SegmentFiles, scan: SegmentScan) -> FileCheck | None:
    path = seg.txnindex
    aborts = scan.aborts
    if not path.exists():
        if not aborts:
            return None
        fc = FileCheck(str(path), "txnindex", exists=False)
        fc.findings.append(
            Finding(
                "missing",
                f"missing, but the log holds {len(aborts)} ABORT markers (read_committed "
                "consumers would see aborted records)",
            )
        )
        return fc
    data = path.read_bytes()
    whole = len(data) - len(data) % TXN_ENTRY_SIZE
    entries = read_txn_index(data[:whole])
    fc = FileCheck(str(path), "txnindex", bytes=len(data), entries=len(entries))
    if whole != len(data):
        fc.findings.append(
            Finding(
                "txn_index_size",
                f"{len(data)} bytes is not a multiple of the {TXN_ENTRY_SIZE}-byte entry: the last "
                f"{len(data) - whole} bytes are a cut entry",
                entry=len(entries),
            )
        )
    seen: set[tuple[int, int]] = set()
    for i, e in enumerate(entries):
        if e.version > 0:
            fc.findings.append(
                Finding("txn_index_sanity", f"entry {i}: unknown version {e.version}", entry=i)
            )
        if e.last_offset < seg.base_offset:
            fc.findings.append(
                Finding(
                    "txn_index_sanity",
                    f"Last offset of aborted transaction {e} in index {path.absolute()} is less than start offset "
                    f"{seg.base_offset}",
                    entry=i,
                    offset=e.last_offset,
                )
            )
        if e.first_offset > e.last_offset:
            fc.findings.append(
                Finding(
                    "txn_index_sanity",
                    f"entry {i}: first offset {e.first_offset} is above last offset {e.last_offset}",
                    entry=i,
                    offset=e.first_offset,
                )
            )
        seen.add((e.producer_id, e.last_offset))
    wanted = set(aborts)
    for pid, off in sorted(seen - wanted, key=lambda t: t[1]):
        fc.findings.append(
            Finding(
                "txn_unexpected",
                f"entry for producer {pid} ending at offset {off}, but the log has no ABORT marker of that "
                "producer there",
                offset=off,
            )
        )
    for pid, off in sorted(wanted - seen, key=lambda t: t[1]):
        fc.findings.append(
            Finding(
                "txn_missing",
                f"no entry for the ABORT marker of producer {pid} at offset {off}",
                offset=off,
            )
        )
    return fc


def verify_segment(
    seg: SegmentFiles, index_interval: int = DEFAULT_INDEX_INTERVAL, strict: bool = False
) -> list[FileCheck]:
    """Check a segment's log and its index files the way the broker and DumpLogSegments do.

    By default an index entry is checked for what lookups need (every broker version's entries pass);
    `strict` applies DumpLogSegments' rule (the entry is the last offset of the batch at its position,
    a time entry names a batch's last offset), which 0.10 and 2.x brokers' own indexes fail.
    """
    if not seg.log.exists():
        checks = []
        for suffix, kind in (
            (INDEX_SUFFIX, "index"),
            (TIME_INDEX_SUFFIX, "timeindex"),
            (TXN_INDEX_SUFFIX, "txnindex"),
        ):
            p = seg.path(suffix)
            if p.exists():
                fc = FileCheck(str(p), kind, bytes=p.stat().st_size)
                fc.findings.append(
                    Finding("orphan", "no log file beside it: the broker deletes this index on start")
                )
                checks.append(fc)
        return checks
    scan = scan_segment_file(seg.log, seg.base_offset, index_interval, record_batches=True)
    out = [
        _check_log(seg, scan),
        _check_offset_index(seg, scan, index_interval, strict),
        _check_time_index(seg, scan, index_interval, strict),
    ]
    txn = _check_txn_index(seg, scan)
    if txn is not None:
        out.append(txn)
    return out


def verify_targets(
    targets: Sequence[PartitionTarget],
    index_interval: int = DEFAULT_INDEX_INTERVAL,
    on_segment: Callable[[SegmentFiles], None] | None = None,
    strict: bool = False,
) -> list[FileCheck]:
    """verify_segment over every segment of the targets, plus orphan index files of whole partitions."""
    out: list[FileCheck] = []
    for t in targets:
        segs = list(t.segments)
        if t.whole:
            bases = {s.base_offset for s in segs}
            for name in sorted(os.listdir(t.dir)):
                if name.endswith((INDEX_SUFFIX, TIME_INDEX_SUFFIX, TXN_INDEX_SUFFIX)) and name[:20].isdigit():
                    b = offset_from_name(name)
                    if b not in bases:
                        bases.add(b)
                        segs.append(SegmentFiles(t.dir, b))
            segs.sort(key=lambda s: s.base_offset)
        for seg in segs:
            out.extend(verify_segment(seg, index_interval, strict))
            if on_segment is not None:
                on_segment(seg)
    return out


# ---------------------------------------------------------------------------------------------
# rebuild
# ---------------------------------------------------------------------------------------------


@dataclass
class IndexChange:
    """An index file rebuild would write (or found already right)."""

    file: str
    type: str
    old_bytes: int | None  # None: the file does not exist
    new_bytes: int
    old_entries: int | None
    new_entries: int
    changed: bool

    def row(self) -> dict[str, object]:
        return dict(vars(self))


def rebuilt_files(
    seg: SegmentFiles, scan: SegmentScan, aborted: list[AbortedTxn] | None, txn_exists: bool | None = None
) -> dict[Path, bytes | None]:
    """The index files recovery leaves for a scanned segment (None: the file should not exist).

    `.txnindex` is written when it has entries or already exists (the broker empties, never deletes
    it); `txn_exists` overrides looking at the directory (previews through pending swaps).
    """
    if txn_exists is None:
        txn_exists = seg.txnindex.exists()
    out: dict[Path, bytes | None] = {
        seg.index: scan.offset_index_bytes(),
        seg.timeindex: scan.time_index_bytes(),
    }
    txn = encode_txn_index(aborted or [])
    out[seg.txnindex] = txn if (txn or txn_exists) else None
    return out


def index_changes(
    files: dict[Path, bytes | None], actual: Callable[[Path], Path | None] | None = None
) -> list[IndexChange]:
    """Compare wanted index contents with the files on disk (`actual` maps a name to the file now
    holding it, for previews through swaps not yet completed)."""
    sizes = {INDEX_SUFFIX: 8, TIME_INDEX_SUFFIX: 12, TXN_INDEX_SUFFIX: TXN_ENTRY_SIZE}
    out = []
    for path, data in files.items():
        suffix = path.suffix
        esize = sizes[suffix]
        kind = suffix[1:]
        real = actual(path) if actual is not None else path
        old = real.read_bytes() if real is not None and real.exists() else None
        if data is None and old is None:
            continue
        new = data or b""
        out.append(
            IndexChange(
                str(path),
                kind,
                None if old is None else len(old),
                len(new),
                None if old is None else len(old) // esize,
                len(new) // esize,
                old != data,
            )
        )
    return out


def write_index_files(files: dict[Path, bytes | None], step: str = "index-file-written") -> list[Path]:
    """Write the changed index files, each beside the old and renamed over it (atomic, fsynced)."""
    written = []
    for path, data in files.items():
        if data is None:
            continue
        if path.exists() and path.read_bytes() == data:
            continue
        atomic_write(path, data)
        written.append(path)
        crash_point(step)
    return written


@dataclass
class RebuildResult:
    changes: list[IndexChange] = field(default_factory=list)
    findings: list[FileCheck] = field(default_factory=list)  # logs that are corrupt past their valid part

    @property
    def changed(self) -> list[IndexChange]:
        return [c for c in self.changes if c.changed]


def rebuild_target(
    target: PartitionTarget,
    index_interval: int = DEFAULT_INDEX_INTERVAL,
    dry_run: bool = False,
    on_segment: Callable[[SegmentFiles], None] | None = None,
) -> RebuildResult:
    """Rebuild `.index`/`.timeindex`/`.txnindex` of a target's segments as broker recovery does.

    Only the valid part of a damaged log is indexed (what recovery keeps); the damage is reported so
    the caller can point at `recover`.  The caller holds the log dir's lock.
    """
    res = RebuildResult()
    all_segments = list_segments(target.dir)
    scans: list[tuple[SegmentFiles, SegmentScan]] = []
    open_txns: set[int] = set()
    prev_base: int | None = None
    order = {s.base_offset: i for i, s in enumerate(all_segments)}
    for seg in target.segments:
        if not seg.log.exists():
            raise FileNotFoundError(2, "No such file or directory", str(seg.log))
        i = order.get(seg.base_offset)
        if prev_base is None or i is None or order.get(prev_base) != i - 1:
            open_txns = set()
        scan = scan_segment_file(seg.log, seg.base_offset, index_interval, open_txns=open_txns)
        scans.append((seg, scan))
        prev_base = seg.base_offset
        if not scan.clean:
            res.findings.append(_check_log(seg, scan))
        if on_segment is not None:
            on_segment(seg)
    aborted = TxnIndexState(target.dir, all_segments).entries([s for _, s in scans])
    for seg, scan in scans:
        files = rebuilt_files(seg, scan, aborted.get(seg.base_offset))
        res.changes.extend(index_changes(files))
        if not dry_run:
            write_index_files(files, "rebuild-index-written")
    return res


# ---------------------------------------------------------------------------------------------
# dump (Kafka's text through dump-log's dumper)
# ---------------------------------------------------------------------------------------------


def index_files_of(target: PartitionTarget) -> list[Path]:
    """The index files to dump for a target: the files given, or every index file of its segments."""
    out: list[Path] = []
    if target.files and not target.whole:
        for f in target.files:
            if f.name.endswith(LOG_SUFFIX):
                base = offset_from_name(f.name)
                seg = SegmentFiles(f.parent, base)
                out.extend(p for p in (seg.index, seg.timeindex, seg.txnindex) if p.exists())
            else:
                out.append(f)
        return out
    names = sorted(
        n
        for n in os.listdir(target.dir)
        if n.endswith((INDEX_SUFFIX, TIME_INDEX_SUFFIX, TXN_INDEX_SUFFIX)) and n[:20].isdigit()
    )
    order = {INDEX_SUFFIX: 0, TIME_INDEX_SUFFIX: 1, TXN_INDEX_SUFFIX: 2}
    names.sort(key=lambda n: (offset_from_name(n), order[n[n.index(".") :]]))
    return [target.dir / n for n in names]


def dump_index_files(paths: Sequence[Path], output: str, out: BinaryIO, err: BinaryIO) -> int:
    """Dump index files as `kafka-dump-log.sh --files` does (text), or as dump-log's JSON objects.

    Returns dump-log's exit code (0 ok, 1 a file could not be read to the end, 2 bad input).
    """
    from kafkatool.ops.dumplog import DumpOptions, dump_files

    result = dump_files([str(p) for p in paths], DumpOptions(output=output), out, err)
    return result.exit_code
