"""Find the data past a log's damage, and write what is readable into a separate directory.

Broker recovery truncates a segment at its first bad batch and deletes every later segment, although
most of those bytes are usually fine.  Before `recover` truncates, `scan_damaged` resynchronises past
the damage: it looks at every byte position for a batch that frames correctly (a size that fits, a
known magic, offsets above everything kept so far and within the segment's int32 range) *and* whose
CRC matches, then walks on normally from there.  A random match needs a 32-bit CRC to agree, so what
it finds is real data.  A v2 batch whose only damage is its length field (which the v2 CRC does not
cover) is repaired: if the bytes from its start to the next valid batch have the stored CRC, that is
the batch, with its length rewritten.

`write_salvage` writes the batches found, unchanged (apart from a repaired length), into segments of
a partition dir under OUTDIR with indexes built by the recovery rule, and reports the exact byte
ranges and offset ranges that could not be read.
"""

from __future__ import annotations

import json
import os
import re
import struct
import zlib
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

from kafkatool.log import crc as _crc32c
from kafkatool.log.checkpoint import fsync_dir
from kafkatool.log.files import INDEX_SUFFIX, LOG_SUFFIX, TIME_INDEX_SUFFIX, MappedFile, segment_name
from kafkatool.log.record import LOG_OVERHEAD, V0_OVERHEAD, V1_OVERHEAD, V2_HEADER_SIZE
from kafkatool.log.segment import INT32_MAX, walk_segment

REPORT_NAME = "salvage-report.json"

_LOG_ENTRY = struct.Struct(">qi")
_V2_FIELDS = struct.Struct(">IhiqqqhiI")  # from byte 17: crc attrs lastDelta baseTs maxTs pid epoch seq count
_U32 = struct.Struct(">I")
_I64 = struct.Struct(">q")
_MAGIC = re.compile(rb"[\x00-\x02]")
_NON_ZERO = re.compile(rb"[^\x00]")


@dataclass
class SalvagedBatch:
    """A valid batch found in a damaged or doomed file."""

    source: str  # file name it was found in
    position: int
    size: int
    base_offset: int
    last_offset: int
    max_timestamp: int
    magic: int
    repaired: str | None = None  # what was fixed to make it valid (only a v2 length field)


@dataclass
class FileSalvage:
    """What a resynchronising walk of [start, end) of one file found."""

    file: str
    base_offset: int
    start: int
    end: int
    batches: list[SalvagedBatch] = field(default_factory=list)
    tail_zero: bool = False  # the unreadable tail is all zero bytes (preallocated or zero-filled)
    tail_last: int | None = None  # last offset of the cut batch the tail starts with, when its header says

    @property
    def lost_ranges(self) -> list[tuple[int, int]]:
        """Byte ranges [a, b) of [start, end) not covered by a salvaged batch."""
        out = []
        cur = self.start
        for b in self.batches:
            if b.position > cur:
                out.append((cur, b.position))
            cur = max(cur, b.position + b.size)
        if cur < self.end:
            out.append((cur, self.end))
        return out

    @property
    def salvaged_bytes(self) -> int:
        return sum(b.size for b in self.batches)


def _legacy_first_offset(buf: bytes, pos: int, last: int) -> int:
    """First offset of a v0/v1 compressed wrapper (its own offset is the last inner offset)."""
    from kafkatool.log.errors import LogFormatError
    from kafkatool.log.records import read_batch_header

    try:
        batch = read_batch_header(buf, pos, len(buf))
        if batch is None or not batch.codec:
            return last
        records = batch.records()
    except (LogFormatError, ValueError, OSError):
        return last
    return records[0].offset if records else last


def _batch_at(
    buf: bytes, pos: int, end: int, seg_base: int, min_offset: int
) -> tuple[int, int, int, int, int] | None:
    """(size, base offset, last offset, max timestamp, magic) of a valid batch at pos, or None."""
    if pos < 0 or pos + LOG_OVERHEAD + V0_OVERHEAD > end:
        return None
    offset, size = _LOG_ENTRY.unpack_from(buf, pos)
    if size < V0_OVERHEAD or pos + LOG_OVERHEAD + size > end:
        return None
    if offset < min_offset or offset < seg_base or offset - seg_base > INT32_MAX:
        return None
    magic = buf[pos + 16]
    bend = pos + LOG_OVERHEAD + size
    if magic == 2:
        if size + LOG_OVERHEAD < V2_HEADER_SIZE:
            return None
        crc, _attrs, delta, _bts, max_ts, _pid, _pe, _seq, _count = _V2_FIELDS.unpack_from(buf, pos + 17)
        if delta < 0 or offset + delta - seg_base > INT32_MAX:
            return None
        with memoryview(buf) as mv:
            if _crc32c.crc32c(mv[pos + 21 : bend]) != crc:
                return None
        return size + LOG_OVERHEAD, offset, offset + delta, max_ts, 2
    if magic in (0, 1):
        if magic == 1 and size < V1_OVERHEAD:
            return None
        (crc,) = _U32.unpack_from(buf, pos + 12)
        with memoryview(buf) as mv:
            if zlib.crc32(mv[pos + 16 : bend]) != crc:
                return None
        max_ts = _I64.unpack_from(buf, pos + 18)[0] if magic == 1 else -1
        first = _legacy_first_offset(buf, pos, offset) if buf[pos + 17] & 0x07 else offset
        return size + LOG_OVERHEAD, first, offset, max_ts, magic
    return None


def _resync(buf: bytes, frm: int, end: int, seg_base: int, min_offset: int) -> int | None:
    """The first position >= frm where a valid batch starts, or None."""
    p = frm
    while p + LOG_OVERHEAD + V0_OVERHEAD <= end:
        m = _MAGIC.search(buf, p + 16)
        if m is None:
            return None
        p = m.start() - 16
        if p + LOG_OVERHEAD + V0_OVERHEAD > end:
            return None
        if buf[p + 8 : p + 12] == b"\x00\x00\x00\x00":
            # A zero size field: skip the whole zero run it sits in (zeroed regions are common damage).
            nz = _NON_ZERO.search(buf, p + 12)
            if nz is None:
                return None
            p = max(p + 1, nz.start() - 11)
            continue
        if _batch_at(buf, p, end, seg_base, min_offset) is not None:
            return p
        p += 1
    return None


def _repair_length(
    buf: bytes, pos: int, nxt: int, seg_base: int, min_offset: int
) -> tuple[int, int, int, int] | None:
    """A v2 batch at pos whose bytes up to nxt carry its stored CRC: (size, base, last, max ts)."""
    size = nxt - pos
    if size < V2_HEADER_SIZE or pos + 17 + _V2_FIELDS.size > len(buf) or buf[pos + 16] != 2:
        return None
    offset, _stored_len = _LOG_ENTRY.unpack_from(buf, pos)
    if offset < min_offset or offset < seg_base or offset - seg_base > INT32_MAX:
        return None
    crc, _attrs, delta, _bts, max_ts, _pid, _pe, _seq, _count = _V2_FIELDS.unpack_from(buf, pos + 17)
    if delta < 0:
        return None
    with memoryview(buf) as mv:
        if _crc32c.crc32c(mv[pos + 21 : nxt]) != crc:
            return None
    return size, offset, offset + delta, max_ts


def scan_damaged(buf: bytes, name: str, seg_base: int, start: int, min_offset: int) -> FileSalvage:
    """Every valid batch in buf[start:], resynchronising after each damaged stretch."""
    end = len(buf)
    res = FileSalvage(name, seg_base, start, end)
    pos = start
    while pos < end:
        found = _batch_at(buf, pos, end, seg_base, min_offset)
        if found is not None:
            size, base, last, max_ts, magic = found
            res.batches.append(SalvagedBatch(name, pos, size, base, last, max_ts, magic))
            pos += size
            min_offset = last + 1
            continue
        nxt = _resync(buf, pos + 1, end, seg_base, min_offset)
        for stop in [nxt if nxt is not None else end]:
            rep = _repair_length(buf, pos, stop, seg_base, min_offset)
            if rep is not None:
                size, base, last, max_ts = rep
                stored = _LOG_ENTRY.unpack_from(buf, pos)[1]
                res.batches.append(
                    SalvagedBatch(
                        name,
                        pos,
                        size,
                        base,
                        last,
                        max_ts,
                        2,
                        repaired=f"length field {stored} rewritten to {size - LOG_OVERHEAD}",
                    )
                )
                min_offset = last + 1
                break
        if nxt is None:
            break
        pos = nxt
    lost = res.lost_ranges
    if lost and lost[-1][1] == end:
        a = lost[-1][0]
        res.tail_zero = not any(buf[a:end])
        if not res.tail_zero and a + 27 <= end:
            # A cut last batch still names its offsets in its header.
            offset = _LOG_ENTRY.unpack_from(buf, a)[0]
            magic = buf[a + 16]
            if offset >= min_offset and offset - seg_base <= INT32_MAX and magic in (0, 1, 2):
                delta = struct.unpack_from(">i", buf, a + 23)[0] if magic == 2 else 0
                if delta >= 0:
                    res.tail_last = offset + delta
    return res


def scan_file(path: Path, seg_base: int, start: int = 0, min_offset: int | None = None) -> FileSalvage:
    with MappedFile(path) as mf:
        return scan_damaged(
            mf.buf, path.name, seg_base, start, seg_base if min_offset is None else min_offset
        )


def lost_offset_ranges(
    kept_next_offset: int, salvages: Sequence[FileSalvage], next_bases: Sequence[int | None]
) -> list[tuple[int, int | None]]:
    """Offset ranges [a, b] no readable batch holds, from the first offset recovery drops onwards.

    `next_bases[i]` is the base offset of the segment after salvages[i]'s file (None for the last):
    the offsets of an unreadable tail end before it.  For the last file, a cut batch's header bounds
    the range; otherwise the range is open (b None): the tail held offsets from a on, how many is
    unknown.  A tail of zero bytes held nothing.  Gaps between readable batches are reported too
    (compaction also leaves gaps, so there they are "not present", not necessarily lost).
    """
    out: list[tuple[int, int | None]] = []
    cur = kept_next_offset
    for fs, nxt in zip(salvages, next_bases, strict=True):
        for b in fs.batches:
            if b.base_offset > cur:
                out.append((cur, b.base_offset - 1))
            cur = max(cur, b.last_offset + 1)
        lost = fs.lost_ranges
        tail = bool(lost) and lost[-1][1] == fs.end
        if nxt is not None:
            if cur < nxt:
                out.append((cur, nxt - 1))
            cur = max(cur, nxt)
        elif tail and not fs.tail_zero:
            if fs.tail_last is None:
                out.append((cur, None))
            elif fs.tail_last >= cur:
                out.append((cur, fs.tail_last))
    return out


@dataclass
class SalvageReport:
    """What `recover --salvage` wrote for one partition."""

    partition: str
    out_dir: str
    files: list[FileSalvage]
    segments_written: list[str] = field(default_factory=list)
    lost_offsets: list[tuple[int, int | None]] = field(default_factory=list)

    def to_json(self) -> dict[str, object]:
        return {
            "partition": self.partition,
            "out_dir": self.out_dir,
            "segments_written": self.segments_written,
            "batches": sum(len(f.batches) for f in self.files),
            "bytes": sum(f.salvaged_bytes for f in self.files),
            "files": [
                {
                    "file": f.file,
                    "scanned_from": f.start,
                    "scanned_to": f.end,
                    "salvaged_batches": len(f.batches),
                    "salvaged_bytes": f.salvaged_bytes,
                    "salvaged_offsets": _offset_spans(f.batches),
                    "repaired": [asdict(b) for b in f.batches if b.repaired],
                    "lost_byte_ranges": [list(r) for r in f.lost_ranges],
                }
                for f in self.files
            ],
            "lost_offset_ranges": [list(r) for r in self.lost_offsets],
        }


def _offset_spans(batches: Sequence[SalvagedBatch]) -> list[list[int]]:
    """Contiguous offset spans [first, last] covered by batches."""
    spans: list[list[int]] = []
    for b in batches:
        if spans and b.base_offset == spans[-1][1] + 1:
            spans[-1][1] = b.last_offset
        else:
            spans.append([b.base_offset, b.last_offset])
    return spans


def write_salvage(
    out_partition_dir: Path, sources: Sequence[tuple[Path, FileSalvage]], index_interval: int
) -> list[str]:
    """Write the salvaged batches of each source file as one segment in out_partition_dir.

    Each segment is named after its first batch's base offset; indexes follow the recovery rule.
    Files are fsynced.  Returns the segment file names written.
    """
    out_partition_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for path, fs in sources:
        if not fs.batches:
            continue
        base = fs.batches[0].base_offset
        parts = []
        with MappedFile(path) as mf:
            for b in fs.batches:
                data = bytes(mf.buf[b.position : b.position + b.size])
                if b.repaired:
                    data = data[:8] + struct.pack(">i", b.size - LOG_OVERHEAD) + data[12:]
                parts.append(data)
        log = b"".join(parts)
        scan = walk_segment(log, base, index_interval)
        if not scan.clean:  # cannot happen: every batch was validated; refuse to write a bad segment
            raise ValueError(f"salvaged data of {path.name} does not validate: {scan.error}")
        for suffix, data in (
            (LOG_SUFFIX, log),
            (INDEX_SUFFIX, scan.offset_index_bytes()),
            (TIME_INDEX_SUFFIX, scan.time_index_bytes()),
        ):
            target = out_partition_dir / segment_name(base, suffix)
            with open(target, "wb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
        written.append(segment_name(base, LOG_SUFFIX))
    fsync_dir(out_partition_dir)
    return written


def write_report(out_dir: Path, reports: Sequence[SalvageReport]) -> Path:
    """`salvage-report.json` at the top of OUTDIR (outside any partition dir)."""
    path = out_dir / REPORT_NAME
    data = json.dumps([r.to_json() for r in reports], indent=2) + "\n"
    with open(path, "w", encoding="utf-8") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    fsync_dir(out_dir)
    return path
