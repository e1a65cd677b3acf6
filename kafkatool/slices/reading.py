"""Read the batches of one slice through byte-range reads, applying filters and a corruption policy.

This is the only loop that turns slice bytes into `kafkatool.log` batches and records, for the Spark
data source and the single-process scanner alike, so both engines skip, stop and fail on exactly the
same bytes.  Reads go through `storage.RangeReader` in windows (no mmap: the file may be on S3).
"""

from __future__ import annotations

import struct
from collections.abc import Iterator

from kafkatool.log.codecs import Codec
from kafkatool.log.errors import CorruptRecordError, LogFormatError
from kafkatool.log.record import LOG_OVERHEAD, V2_HEADER_SIZE, Record
from kafkatool.log.records import Batch, read_batch_header
from kafkatool.slices import storage
from kafkatool.slices.planning import NO_FILTER, ScanFilter, Slice

READ_WINDOW = 1024 * 1024  # bytes per read (1 MiB walks faster than bigger reads: cache-friendly)
SPARSE_BATCH = 256 * 1024  # with headers_only, batches above this size are skipped over, not read
SPARSE_WINDOW = 64 * 1024  # with headers_only, smaller reads waste less of the next big batch
ON_CORRUPT = ("fail", "skip")
CORRUPT_MARK = "[kafkatool:corrupt]"

_SIZE_FIELD = struct.Struct(">i")


class CorruptSegmentError(LogFormatError):
    """Damage met while reading with on_corrupt='fail'.

    The message starts with CORRUPT_MARK so a driver can recognise it inside the text of a Spark task
    failure and report it as a finding rather than a crash.
    """

    def __init__(self, location: str, position: int, reason: str) -> None:
        super().__init__(f"{CORRUPT_MARK} {location}: position {position}: {reason}")
        self.location = location
        self.position = position
        self.reason = reason


def check_policy(on_corrupt: str) -> str:
    if on_corrupt not in ON_CORRUPT:
        raise ValueError(f"on_corrupt must be one of {', '.join(ON_CORRUPT)}, got {on_corrupt!r}")
    return on_corrupt


def _orders_offsets(b: Batch) -> bool:
    """True when base_offset is the batch's first offset (not so for v0/v1 compressed wrappers)."""
    return b.magic >= 2 or b.codec == Codec.NONE


def read_slice(
    slc: Slice,
    flt: ScanFilter = NO_FILTER,
    on_corrupt: str = "fail",
    verify_crc: bool = False,
    window: int = READ_WINDOW,
    headers_only: bool = False,
) -> Iterator[tuple[int, Batch]]:
    """(absolute position, batch) for every batch starting inside the slice that the filter may want.

    A partial batch at the end of the file ends the slice quietly (a torn last write, as the broker
    sees it).  A size field below the minimum is damage: 'fail' raises CorruptSegmentError, 'skip'
    ends the slice (nothing after it can be framed).  With verify_crc a CRC mismatch is damage too;
    'skip' steps over that one batch.

    headers_only promises the caller will look at batch headers and nothing else (no CRC, records or
    raw bytes): batches bigger than SPARSE_BATCH are then not read, only their 61-byte headers.
    """
    skip = check_policy(on_corrupt) == "skip"
    sparse = headers_only and not verify_crc
    if sparse:
        window = min(window, SPARSE_WINDOW)
    min_offset, max_offset, min_ts = flt.min_offset, flt.max_offset, flt.min_timestamp
    with storage.RangeReader(slc.log) as reader:
        pos = slc.start
        buf = b""
        buf_start = pos
        refilled_at = -1
        while pos < slc.end:
            rel = pos - buf_start
            try:
                b = read_batch_header(buf, rel, len(buf))
                if b is None:
                    head = reader.read(pos, LOG_OVERHEAD) if refilled_at != pos else b""
                    size = _SIZE_FIELD.unpack_from(head, 8)[0] if len(head) == LOG_OVERHEAD else None
                    if size is None or size > reader.size - pos - LOG_OVERHEAD:
                        # No whole batch here.  At the end of the file that is a torn last write, which
                        # the broker truncates; before a later slice's start the size field is damaged.
                        if slc.end >= reader.size or skip:
                            return
                        raise CorruptSegmentError(
                            slc.log, pos, f"batch size {size} runs past the end of the file ({reader.size} bytes)"
                        )
                    if sparse and size > SPARSE_BATCH:
                        # Only the header: the bounds say where the batch ends, nothing past it is read.
                        buf = reader.read(pos, V2_HEADER_SIZE)
                        buf_start = pos
                        b = read_batch_header(buf, 0, LOG_OVERHEAD + size)
                    else:
                        buf = reader.read(pos, max(min(window, slc.end - pos), LOG_OVERHEAD + max(size, 0)))
                        buf_start = refilled_at = pos
                        continue
            except CorruptRecordError as exc:
                if skip:
                    return
                raise CorruptSegmentError(slc.log, pos, str(exc)) from None
            assert b is not None
            pos += b.size
            if verify_crc and not b.is_valid():
                if skip:
                    continue
                raise CorruptSegmentError(
                    slc.log, b.position + buf_start, f"CRC mismatch: stored {b.crc}, computed {b.compute_crc()}"
                )
            if min_offset is not None and b.last_offset < min_offset:
                continue
            if max_offset is not None and b.base_offset > max_offset and _orders_offsets(b):
                return
            if min_ts is not None and b.max_timestamp < min_ts and _orders_offsets(b):
                continue
            yield b.position + buf_start, b


def decode_records(b: Batch, position: int, location: str, on_corrupt: str = "fail") -> list[Record] | None:
    """The batch's records, or None when they cannot be decoded and the policy is 'skip'."""
    try:
        return b.records()
    except CorruptRecordError as exc:
        if on_corrupt == "skip":
            return None
        raise CorruptSegmentError(location, position, f"cannot decode records: {exc}") from None


def uncompressed_size(b: Batch, position: int, location: str, on_corrupt: str = "fail") -> int | None:
    """Bytes the batch would take stored uncompressed (None if it cannot be decompressed and 'skip').

    v2: the 61-byte header plus the decompressed records; a v0/v1 wrapper: its inner message set
    (what those messages take as plain log entries); uncompressed batches: their size.
    """
    if b.codec == Codec.NONE:
        return b.size
    try:
        data = b.records_data()
    except CorruptRecordError as exc:
        if on_corrupt == "skip":
            return None
        raise CorruptSegmentError(location, position, f"cannot decompress: {exc}") from None
    return V2_HEADER_SIZE + len(data) if b.magic >= 2 else len(data)
