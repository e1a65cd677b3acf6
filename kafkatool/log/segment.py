"""One segment's log as the broker's recovery reads it (Kafka's `LogSegment.recover`).

`walk_segment` walks a segment's log as `LogSegment.recover` does, for `index verify`, `index rebuild`,
`recover` and salvage: it validates every batch as recovery does (size fields, the outer CRC without
decompressing, offsets within int32 of the segment's base), stops where the broker would truncate,
and builds the `.index`/`.timeindex` contents with the recovery rule (`IndexBuilder.on_recover`,
then the final time entry a recovered or closed segment gets).  It also collects what recovery feeds
to the producer-state manager and the leader-epoch cache: transaction starts and end markers (for
`.txnindex`, see `kafkatool.log.producer_state`) and leader-epoch changes.

Frames are read with `kafkatool.log.records`' parser and messages (`read_frame`, `crc_error`,
`v2_overhead_error`); a whole v2 batch takes a one-unpack fast path over the same header layout.
With the compiled core (`kafkatool.log.core`), runs of plain v2 batches are walked in C
(`walk_v2_run`: CRC, offsets, the same index entries), which stops before any batch that needs more
and leaves it to this code, so every message and decision stays here.
"""

from __future__ import annotations

import array
import struct
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from kafkatool.log import crc as _crc32c
from kafkatool.log.core import speedups
from kafkatool.log.errors import CorruptRecordError
from kafkatool.log.files import (
    INDEX_SUFFIX,
    TIME_INDEX_SUFFIX,
    TXN_INDEX_SUFFIX,
    MappedFile,
    SegmentFiles,
    offset_from_name,
)
from kafkatool.log.index import DEFAULT_INDEX_INTERVAL, TXN_ENTRY_SIZE, AbortedTxn, encode_txn_index
from kafkatool.log.indexer import IndexBuilder, IndexOffsetError
from kafkatool.log.record import (
    CONTROL_ABORT,
    CONTROL_COMMIT,
    LOG_OVERHEAD,
    V1_OVERHEAD,
    V2_HEADER_SIZE,
    control_type_of,
)
from kafkatool.log.records import (
    V2_WALK_HEADER,
    crc_error,
    read_batch_header,
    read_frame,
    v1_overhead_error,
    v2_overhead_error,
)

INT32_MAX = 2**31 - 1
ATTR_TRANSACTIONAL = 0x10
ATTR_CONTROL = 0x20
DEFAULT_MAX_MESSAGE_SIZE = 5 * 1024 * 1024
RELEASE_STEP = 32 * 1024 * 1024

# Why a walk stopped (SegmentWalk.stop).
STOP_END = "end"  # every byte belongs to a valid batch
STOP_PARTIAL = "partial"  # the last batch (or its header) runs past the end of the file
STOP_CORRUPT = "corrupt"  # Kafka's CorruptRecordException: a size field or a CRC is wrong
STOP_OVERFLOW = "offset_overflow"  # an offset not within int32 of the base: the broker splits the segment
STOP_INVALID_OFFSET = "invalid_offset"  # offsets go back where an index entry lands: the broker empties it

TXN_START = "start"
TXN_ABORT = "abort"
TXN_COMMIT = "commit"

_U32 = struct.Struct(">I")
_I64 = struct.Struct(">q")

# ---------------------------------------------------------------------------------------------
# the recovery walk
# ---------------------------------------------------------------------------------------------


@dataclass
class SegmentWalk:
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
    # the rebuilt `.index` / `.timeindex` contents, encoded (8 and 12 bytes an entry: compact, issue 14)
    offset_index: bytes = b""
    time_index: bytes = b""
    max_timestamp: int = -1
    has_v2: bool = False
    # (kind, producer id, offset): transaction starts (a superset: see TxnIndexState) and end markers
    txn_events: list[tuple[str, int, int]] = field(default_factory=list)
    # (epoch, start offset) the leader-epoch cache is assigned while recovering this segment
    epochs: list[tuple[int, int]] = field(default_factory=list)
    # per-batch arrays, filled when walk_segment(record_batches=True)
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
        return self.offset_index

    def time_index_bytes(self) -> bytes:
        return self.time_index

    @property
    def aborts(self) -> list[tuple[int, int]]:
        """(producer id, marker offset) of the ABORT markers in the valid part."""
        return [(pid, off) for kind, pid, off in self.txn_events if kind == TXN_ABORT]


def control_record_type(buf: bytes, pos: int, end: int) -> int | None:
    """ControlRecordType of a control batch's record (None for an empty, fully cleaned batch)."""
    batch = read_batch_header(buf, pos, end)
    if batch is None:
        raise CorruptRecordError("control batch runs past the end of the file", pos)
    if not batch.count:
        return None  # an empty batch the cleaner kept: no marker to apply
    records = batch.records()
    if not records:
        return None
    ctype = control_type_of(records[0].key)
    if ctype is None:
        raise CorruptRecordError(f"control record at offset {records[0].offset} has an invalid key", pos)
    return ctype


def walk_segment(
    buf: bytes,
    base_offset: int,
    index_interval: int = DEFAULT_INDEX_INTERVAL,
    *,
    latest_epoch: int | None = None,
    open_txns: set[int] | None = None,
    record_batches: bool = False,
    release: Callable[[int], None] | None = None,
    path: str = "",
) -> SegmentWalk:
    """Walk a segment's log as LogSegment.recover does and return what it found and would build.

    `latest_epoch` is the leader-epoch cache's latest epoch before this segment (epochs above it are
    assigned at their batch's base offset); `open_txns` carries the producers with a transaction
    started in earlier walked segments, so that only real starts are recorded.  `path` names the file
    in Kafka's size-field message.
    """
    end = len(buf)
    scan = SegmentWalk(base_offset, end, index_interval)
    builder = IndexBuilder(base_offset, index_interval)
    on_recover = builder.on_recover
    unpack_full = V2_WALK_HEADER.unpack_from
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
    walk_run = None if speedups is None else speedups.walk_v2_run
    arrays = (scan.positions, scan.last_offsets, scan.max_timestamps) if record_batches else None
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
                if walk_run is not None:
                    # The compiled core walks plain v2 batches (CRC, offsets, index entries) and stops
                    # before anything else, which the Python code below then handles as before.
                    n, pos, run_last = walk_run(
                        buf,
                        pos,
                        end,
                        next_release,
                        base_offset,
                        -1 if latest_epoch is None else latest_epoch,
                        builder,
                        arrays,
                    )
                    if n:
                        count += n
                        last = run_last
                        has_v2 = True
                        if pos >= next_release:
                            release(pos)  # type: ignore[misc]
                            next_release = pos + RELEASE_STEP
                        continue
                # Fast path: a whole v2 batch (one unpack for the header).  Anything else - legacy
                # messages, short or cut batches, bad sizes - takes the careful path below, which
                # follows FileLogInputStream.nextBatch (records.read_frame) and ensureValid step by step.
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
                        error = crc_error(crc, computed)
                        break
                    last_off = offset + delta
                else:
                    try:
                        frame = read_frame(buf, pos, end, path)
                    except CorruptRecordError as exc:
                        stop = STOP_CORRUPT
                        error = str(exc)
                        break
                    if frame is None:
                        if pos < end:
                            stop = STOP_PARTIAL
                        break
                    offset, size, magic = frame
                    bend = pos + LOG_OVERHEAD + size
                    if magic >= 2:
                        if size + LOG_OVERHEAD < V2_HEADER_SIZE:
                            stop = STOP_CORRUPT
                            error = v2_overhead_error(size + LOG_OVERHEAD)
                            break
                        _o, _s, ple, _m, crc, attrs, delta, max_ts, pid = unpack_full(buf, pos)
                        computed = crc32c(mv[pos + 21 : bend])
                        if computed != crc:
                            stop = STOP_CORRUPT
                            error = crc_error(crc, computed)
                            break
                        last_off = offset + delta
                    else:
                        (crc,) = _U32.unpack_from(buf, pos + 12)
                        computed = crc32(mv[pos + 16 : bend])
                        if computed != crc:
                            stop = STOP_CORRUPT
                            error = crc_error(crc, computed)
                            break
                        if magic == 1:
                            if size < V1_OVERHEAD:
                                stop = STOP_CORRUPT
                                error = v1_overhead_error(size)
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
                                ctype = control_record_type(buf, batch_pos, end)
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
        first = _I64.unpack_from(buf, 0)[0]
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
    # bytes once here (the builder is dropped), not a copy per caller of offset_index_bytes()
    scan.offset_index = bytes(builder.offset_index)
    scan.time_index = bytes(builder.time_index)
    scan.max_timestamp = builder.max_timestamp
    if stop == STOP_PARTIAL and scan.error is None:
        scan.error = f"{end - pos} bytes of an incomplete batch at the end of the file"
    return scan


def walk_segment_file(
    path: Path,
    base_offset: int | None = None,
    index_interval: int = DEFAULT_INDEX_INTERVAL,
    **kw: object,
) -> SegmentWalk:
    """walk_segment on a `.log` file (memory-mapped; resident memory stays flat on big files)."""
    if base_offset is None:
        base_offset = offset_from_name(path.name)
    with MappedFile(path) as mf:
        return walk_segment(
            mf.buf,
            base_offset,
            index_interval,
            release=mf.release,
            path=str(path.absolute()),
            **kw,  # type: ignore[arg-type]
        )


# ---------------------------------------------------------------------------------------------
# the index files recovery leaves
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
    seg: SegmentFiles, scan: SegmentWalk, aborted: list[AbortedTxn] | None, txn_exists: bool | None = None
) -> dict[Path, bytes | None]:
    """The index files recovery leaves for a walked segment (None: the file should not exist).

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
