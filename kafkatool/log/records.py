"""Log entries framed, walked and CRC-checked: the batch header of every format (Kafka's
`FileLogInputStream`, `FileChannelRecordBatch`; kafka-python's `memory_records.py`).

One reader serves every command: a `Batch` is what Kafka calls a shallow entry (a v2 batch, or a
v0/v1 message that may be a compressed wrapper).  Its header is parsed eagerly with one
`struct.unpack_from`; CRC checks and record decoding happen only when asked, so a shallow walk costs
one unpack per batch.  Records are decoded by the format's module: `default_records` (v2) and
`legacy_records` (v0/v1); `record` holds `Record` and the shared constants.  `read_frame` and the
`*_error` functions are the one frame parser and the one set of Kafka's messages for a damaged frame;
the broker's recovery walk (`kafkatool.log.segment`) uses them too."""

from __future__ import annotations

import struct
import zlib
from collections.abc import Callable, Iterator
from typing import TypeVar

from kafkatool.log import crc as _crc32c
from kafkatool.log.codecs import Codec, decompress, lz4_into_scratch
from kafkatool.log.core import speedups
from kafkatool.log.default_records import decode_v2_records
from kafkatool.log.errors import CorruptRecordError
from kafkatool.log.legacy_records import legacy_message, legacy_value, read_wrapper_into, rebase_offsets
from kafkatool.log.record import (
    ATTR_CODEC_MASK,
    ATTR_CONTROL,
    ATTR_DELETE_HORIZON,
    ATTR_LOG_APPEND_TIME,
    ATTR_TRANSACTIONAL,
    HEADER_SIZE_UP_TO_MAGIC,
    LEGACY_ATTR_LOG_APPEND_TIME,
    LOG_ENTRY,
    LOG_OVERHEAD,
    NO_SEQUENCE,
    NO_TIMESTAMP,
    TS_CREATE,
    TS_LOG_APPEND,
    TS_NONE,
    V0_OVERHEAD,
    V1_OVERHEAD,
    V2_HEADER_SIZE,
    Record,
    increment_sequence,
)

_V2_HEADER = struct.Struct(">qiibIhiqqqhii")
# the 61-byte v2 header, the fields a recovery walk reads: offset size ple magic crc attrs lastDelta maxTs pid
V2_WALK_HEADER = struct.Struct(">qiibIhi8xqq10x")
_LEGACY_V0 = struct.Struct(">Ibbi")  # crc magic attributes keyLen
_LEGACY_V1 = struct.Struct(">Ibbqi")  # crc magic attributes timestamp keyLen


T = TypeVar("T")


class Batch:
    """A shallow entry of a log: a v2 record batch or a v0/v1 (possibly wrapper) message.

    `buf` is the whole file buffer (mmap or bytes) and `position` the batch's first byte in it; the
    batch bytes are `buf[position:position+size]`.
    """

    __slots__ = (
        "buf",
        "position",
        "size",
        "magic",
        "base_offset",
        "last_offset",
        "crc",
        "attributes",
        "codec",
        "timestamp_type",
        "base_timestamp",
        "max_timestamp",
        "producer_id",
        "producer_epoch",
        "base_sequence",
        "partition_leader_epoch",
        "count",
        "view",
    )

    buf: bytes
    position: int
    size: int
    magic: int
    base_offset: int
    last_offset: int
    crc: int
    attributes: int
    codec: int
    timestamp_type: int
    base_timestamp: int
    max_timestamp: int
    producer_id: int
    producer_epoch: int
    base_sequence: int
    partition_leader_epoch: int
    count: int | None
    view: memoryview | None  # shared view of buf (set by BatchScan) so CRC checks slice without copying

    # -- flags -------------------------------------------------------------------------------
    @property
    def is_transactional(self) -> bool:
        return self.magic >= 2 and bool(self.attributes & ATTR_TRANSACTIONAL)

    @property
    def is_control(self) -> bool:
        return self.magic >= 2 and bool(self.attributes & ATTR_CONTROL)

    @property
    def has_delete_horizon(self) -> bool:
        return self.magic >= 2 and bool(self.attributes & ATTR_DELETE_HORIZON)

    @property
    def delete_horizon_ms(self) -> int | None:
        """The v2 delete horizon (stamped by the cleaner), or None when the bit is clear."""
        return self.base_timestamp if self.has_delete_horizon else None

    @property
    def last_sequence(self) -> int:
        if self.magic < 2 or self.base_sequence == NO_SEQUENCE:
            return NO_SEQUENCE
        return increment_sequence(self.base_sequence, self.last_offset - self.base_offset)

    @property
    def next_offset(self) -> int:
        return self.last_offset + 1

    @property
    def end(self) -> int:
        """File position just past this batch."""
        return self.position + self.size

    def raw(self) -> bytes:
        """The batch's bytes exactly as on disk."""
        return bytes(self.buf[self.position : self.position + self.size])

    # -- integrity -------------------------------------------------------------------------
    def compute_crc(self) -> int:
        """CRC the format defines: CRC-32C from attributes on (v2), CRC32 from magic on (v0/v1)."""
        start = self.position
        end = start + self.size
        mv = self.view
        if mv is None:
            mv = memoryview(self.buf)
        if self.magic >= 2:
            if self.size < V2_HEADER_SIZE:
                return -1
            return _crc32c.crc32c(mv[start + 21 : end])
        return zlib.crc32(mv[start + 16 : end])

    def is_valid(self) -> bool:
        """Kafka's isValid: big enough for its header and the stored CRC matches."""
        if self.magic >= 2:
            return self.size >= V2_HEADER_SIZE and self.crc == self.compute_crc()
        return self.crc == self.compute_crc()

    def validate(self) -> None:
        """Raise CorruptRecordError unless is_valid()."""
        if not self.is_valid():
            raise CorruptRecordError(
                f"batch at position {self.position} (offset {self.last_offset}) is corrupt: "
                f"stored crc {self.crc}, computed crc {self.compute_crc()}",
                self.position,
            )

    # -- records ---------------------------------------------------------------------------
    def records_data(self) -> bytes:
        """The (decompressed) bytes holding the records of a v2 batch, or of a legacy wrapper's set."""
        if self.magic >= 2:
            start = self.position + V2_HEADER_SIZE
            end = self.position + self.size
            if self.codec == Codec.NONE:
                return bytes(self.buf[start:end])
            return decompress(self.codec, bytes(self.buf[start:end]), 2)
        value = legacy_value(self.buf, self.position + LOG_OVERHEAD, self.size - LOG_OVERHEAD)
        if value is None:
            return b""
        return decompress(self.codec, value, self.magic) if self.codec else value

    def records(self) -> list[Record]:
        """Decode every record (decompressing as needed).  Raises CorruptRecordError on damage."""
        if self.magic >= 2:
            return self._v2_records()
        return self._legacy_records()

    def __iter__(self) -> Iterator[Record]:
        return iter(self.records())

    def _v2_records(self) -> list[Record]:
        count = self.count or 0
        if count < 0:
            raise CorruptRecordError(f"Found invalid record count {count} in magic v2 batch", self.position)
        if self.size < V2_HEADER_SIZE:
            raise CorruptRecordError(
                f"batch at position {self.position} is {self.size} bytes, smaller than the 61-byte header",
                self.position,
            )
        if count == 0:  # DefaultRecordBatch.iterator(): no records, nothing to decompress
            return []
        ts = self.max_timestamp if self.timestamp_type == TS_LOG_APPEND else None
        if speedups is not None:
            recs = self.in_place(decode_v2_records)
            if recs is not None:
                return recs
        data = self.records_data()
        return decode_v2_records(data, count, self.base_offset, self.base_timestamp, ts, self.base_sequence)

    def in_place(self, fn: Callable[..., T], *extra: object) -> T | None:
        """`fn(records, count, base_offset, base_timestamp, log_append_ts, base_sequence, *extra)` on a
        valid-looking v2 batch's record bytes where they lie (uncompressed) or decompressed into this
        thread's reused buffer (LZ4), as a view valid during the call; None where neither applies
        (other codecs, legacy formats, no records, an LZ4 frame that did not decompress), and the
        caller goes the `records()` way, which also reports any damage.

        For compiled readers that copy whatever they keep: a new bytes object a batch (the batch
        copied, or a codec's fresh output) cost fresh memory on every batch of a long scan."""
        count = self.count or 0
        if (
            self.magic < 2
            or count <= 0
            or self.size < V2_HEADER_SIZE
            or self.codec not in (Codec.NONE, Codec.LZ4)
        ):
            return None
        ts = self.max_timestamp if self.timestamp_type == TS_LOG_APPEND else None
        with (
            memoryview(self.buf) as whole,
            whole[self.position + V2_HEADER_SIZE : self.position + self.size] as raw,
        ):
            data = raw if self.codec == Codec.NONE else lz4_into_scratch(raw)
            if data is None:
                return None
            with data:
                return fn(data, count, self.base_offset, self.base_timestamp, ts, self.base_sequence, *extra)

    def _legacy_records(self) -> list[Record]:
        recs: list[Record] = []
        try:
            return self._legacy_records_into(recs)
        except CorruptRecordError as err:
            # v1 offsets are only known once the whole wrapper is read (Kafka reads it whole too)
            err.partial = recs if self.magic == 0 else []
            raise

    def _legacy_records_into(self, recs: list[Record]) -> list[Record]:
        if self.codec == Codec.NONE:
            return [
                legacy_message(self.buf, self.position, self.size, self.timestamp_type, self.max_timestamp)
            ]
        wrapper_ts = self.max_timestamp if self.timestamp_type == TS_LOG_APPEND else None
        read_wrapper_into(
            recs, self.records_data(), self.magic, self.timestamp_type, wrapper_ts, self.position
        )
        return rebase_offsets(recs, self.magic, self.last_offset)

    def __repr__(self) -> str:
        return (
            f"Batch(magic={self.magic}, base_offset={self.base_offset}, last_offset={self.last_offset}, "
            f"position={self.position}, size={self.size}, codec={Codec(self.codec).label})"
        )


def _new_batch() -> Batch:
    return Batch.__new__(Batch)


def size_field_error(size: int, path: str | None = None) -> str:
    """FileLogInputStream's message for a size field below the smallest message (a file walk names it)."""
    text = f"Found record size {size} smaller than minimum record overhead ({V0_OVERHEAD})"
    return text if path is None else f"{text} in file {path}."


def crc_error(stored: int, computed: int) -> str:
    """Kafka's ensureValid message for a batch or message whose stored CRC does not match."""
    return f"Record is corrupt (stored crc = {stored}, computed crc = {computed})"


def v2_overhead_error(batch_size: int) -> str:
    """DefaultRecordBatch.ensureValid's message for a v2 batch smaller than its own header."""
    return (
        f"Record batch is corrupt (the size {batch_size} is smaller than the minimum allowed overhead "
        f"{V2_HEADER_SIZE})"
    )


def v1_overhead_error(size: int) -> str:
    """The recovery walk's message for a v1 message too short to hold its timestamp."""
    return f"Record is corrupt (size {size} is below the v1 message overhead {V1_OVERHEAD})"


def read_frame(buf: bytes, pos: int, end: int, path: str | None = None) -> tuple[int, int, int] | None:
    """The framing of the entry at pos, as Kafka's FileLogInputStream.nextBatch reads it:
    (offset, size field, magic).

    Returns None when fewer bytes remain than the entry needs (a partial tail).  Raises
    CorruptRecordError (`size_field_error`, naming `path` when given) when the size field is below
    the smallest possible message.
    """
    if pos + HEADER_SIZE_UP_TO_MAGIC >= end:
        return None
    offset, size = LOG_ENTRY.unpack_from(buf, pos)
    if size < V0_OVERHEAD:
        raise CorruptRecordError(size_field_error(size, path), pos)
    if pos > end - LOG_OVERHEAD - size:
        return None
    return offset, size, buf[pos + 16]


def read_batch_header(buf: bytes, pos: int, end: int) -> Batch | None:
    """Parse the shallow entry at pos (its frame as `read_frame` reads it), then its header.

    Returns None when fewer bytes remain than the entry needs (a partial tail).  Raises
    CorruptRecordError when the size field is below the smallest possible message, or below the
    smallest message of its magic.
    """
    # read_frame, inlined: a call less per batch is 8% of a header walk (every command's hot path)
    if pos + HEADER_SIZE_UP_TO_MAGIC >= end:
        return None
    offset, size = LOG_ENTRY.unpack_from(buf, pos)
    if size < V0_OVERHEAD:
        raise CorruptRecordError(size_field_error(size), pos)
    if pos > end - LOG_OVERHEAD - size:
        return None
    magic = buf[pos + 16]
    b = _new_batch()
    b.buf = buf
    b.view = None
    b.position = pos
    b.size = size + LOG_OVERHEAD
    b.magic = magic
    if magic >= 2:
        if size + LOG_OVERHEAD < V2_HEADER_SIZE:
            raise CorruptRecordError(
                f"Found v2 batch size {size + LOG_OVERHEAD} smaller than the record batch overhead "
                f"({V2_HEADER_SIZE})",
                pos,
            )
        (
            _bo,
            _len,
            b.partition_leader_epoch,
            _m,
            b.crc,
            attrs,
            last_delta,
            b.base_timestamp,
            b.max_timestamp,
            b.producer_id,
            b.producer_epoch,
            b.base_sequence,
            b.count,
        ) = _V2_HEADER.unpack_from(buf, pos)
        b.base_offset = offset
        b.last_offset = offset + last_delta
        b.attributes = attrs
        b.codec = attrs & ATTR_CODEC_MASK
        b.timestamp_type = TS_LOG_APPEND if attrs & ATTR_LOG_APPEND_TIME else TS_CREATE
        return b
    # v0 / v1 message
    if magic == 1:
        if size < V1_OVERHEAD:
            raise CorruptRecordError(
                f"Found record size {size} smaller than minimum record overhead ({V1_OVERHEAD}) for magic v1",
                pos,
            )
        crc, _m, attrs, ts, _klen = _LEGACY_V1.unpack_from(buf, pos + LOG_OVERHEAD)
        b.timestamp_type = TS_LOG_APPEND if attrs & LEGACY_ATTR_LOG_APPEND_TIME else TS_CREATE
        b.max_timestamp = ts
    else:
        crc, _m, attrs, _klen = _LEGACY_V0.unpack_from(buf, pos + LOG_OVERHEAD)
        b.timestamp_type = TS_NONE
        b.max_timestamp = NO_TIMESTAMP
    b.crc = crc
    b.attributes = attrs
    b.codec = attrs & ATTR_CODEC_MASK
    b.base_offset = offset
    b.last_offset = offset
    b.base_timestamp = b.max_timestamp
    b.producer_id = -1
    b.producer_epoch = -1
    b.base_sequence = NO_SEQUENCE
    b.partition_leader_epoch = -1
    b.count = None
    return b


def iter_batches(buf: bytes, start: int = 0, end: int | None = None) -> Iterator[Batch]:
    """Walk the shallow entries of a log buffer from start to end, stopping at a partial tail.

    After the iterator is exhausted the caller can compare the last batch's end with `end` to see
    trailing bytes; damage inside a size field raises CorruptRecordError with its position.
    """
    if end is None:
        end = len(buf)
    pos = start
    while True:
        b = read_batch_header(buf, pos, end)
        if b is None:
            return
        yield b
        pos += b.size


class BatchScan:
    """A batch walk that remembers where it stopped and why, for dump/verify/recover.

    Iterate it for batches; afterwards `valid_bytes` is the end of the last complete batch and
    `error` the CorruptRecordError that stopped the walk (None for a clean or partial tail).
    """

    def __init__(
        self, buf: bytes, start: int = 0, end: int | None = None, release: Callable[[int], None] | None = None
    ) -> None:
        self.buf = buf
        self.start = start
        self.end = len(buf) if end is None else end
        self.valid_bytes = start
        self.error: CorruptRecordError | None = None
        self.release = release  # e.g. MappedFile.release: keeps resident memory flat on big files
        self.jump_to: int | None = None  # set while iterating: the walk goes on from there (see __iter__)

    def __iter__(self) -> Iterator[Batch]:
        pos = self.start
        end = self.end
        buf = self.buf
        release = self.release
        view = memoryview(buf)
        while True:
            try:
                b = read_batch_header(buf, pos, end)
            except CorruptRecordError as exc:
                self.error = exc
                return
            if b is None:
                return
            b.view = view
            if release is not None:
                release(pos)
            pos += b.size
            self.valid_bytes = pos
            yield b
            if self.jump_to is not None:  # the caller walked on past pos by itself (dump-log's compiled run)
                pos = self.valid_bytes = self.jump_to
                self.jump_to = None

    @property
    def trailing_bytes(self) -> int:
        return self.end - self.valid_bytes


_FRAME = struct.Struct(">qiiBI")  # offset, size, partitionLeaderEpoch|crc(v0/v1), magic, crc(v2)


def verify_crcs(buf: bytes, start: int = 0, end: int | None = None) -> tuple[int, int, int | None]:
    """Walk batch frames checking every CRC without building Batch objects (the 2+ GB/s path; the
    compiled core walks v2 frames, this loop finishes from the first legacy message).

    Returns (batches checked, valid bytes, position of the first batch whose CRC fails or None).
    Stops at the first bad CRC, a corrupt size field or a partial tail, as broker recovery does.
    """
    if end is None:
        end = len(buf)
    pos = start
    n = 0
    if speedups is not None and 0 <= start and end <= len(buf):
        # the compiled walk; it hands a legacy message (zlib's CRC) back to the loop below
        n, pos, bad = speedups.verify_crcs(buf, start, end)
        if bad != -1:
            return n, pos, bad
    view = memoryview(buf)
    crc32c = _crc32c.crc32c
    crc32 = zlib.crc32
    unpack = _FRAME.unpack_from
    while pos + HEADER_SIZE_UP_TO_MAGIC < end:
        if pos + 21 > end:
            break
        _off, size, legacy_crc, magic, v2_crc = unpack(buf, pos)
        total = size + LOG_OVERHEAD
        if size < V0_OVERHEAD or pos + total > end:
            break
        if magic >= 2:
            ok = total >= V2_HEADER_SIZE and crc32c(view[pos + 21 : pos + total]) == v2_crc
        else:
            ok = crc32(view[pos + 16 : pos + total]) == (legacy_crc & 0xFFFFFFFF)
        if not ok:
            return n, pos, pos
        n += 1
        pos += total
    return n, pos, None
