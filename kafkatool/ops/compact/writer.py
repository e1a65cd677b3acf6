"""Reading a segment in the cleaner's chunks, grouping segments, and writing a cleaned segment.

Kafka's `Cleaner.groupSegmentsBySize`, the cleaner's read buffer growth, and the `.cleaned` segment that
`LogSegment.append` indexes; the judgement of what survives is `cleaner.py`'s.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

from kafkatool.log.files import (
    CLEANED_SUFFIX,
    TXN_INDEX_SUFFIX,
    segment_name,
)
from kafkatool.log.index import (
    AbortedTxn,
    encode_txn_index,
)
from kafkatool.log.records import Batch
from kafkatool.log.writer import SegmentWriter
from kafkatool.ops.compact.config import CompactConfig
from kafkatool.ops.compact.manager import CleanerSegment
from kafkatool.ops.compact.scan import CleanerScan

INT32_MAX = 2**31 - 1


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
        for b in CleanerScan(buf, pos, min(scan_end, pos + capacity)):
            chunk.append(b)
            used = b.end - pos
        if not chunk:
            nxt = next(iter(CleanerScan(buf, pos, scan_end)), None)
            if nxt is None:  # partial tail (the scan at open time refuses those)
                return
            capacity = _grow(capacity, nxt.size, cfg)
            continue
        yield chunk
        pos += used


class ChunkPieces:
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


def group_segments(segments: list[CleanerSegment], first_uncleanable: int, cfg: CompactConfig) -> list[list[CleanerSegment]]:
    """groupSegmentsBySize: consecutive segments whose log and index sizes and offset span fit."""
    groups: list[list[CleanerSegment]] = []
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
                log_size + s.size <= cfg.segment_bytes
                and index_size + s.index_bytes <= cfg.segment_index_bytes
                and time_size + s.time_index_bytes <= cfg.segment_index_bytes
                and ((s.size == 0 and not cfg.before_kip534) or last_offset - group[-1].base_offset <= INT32_MAX)
            ):
                break
            group.append(s)
            log_size += s.size
            index_size += s.index_bytes
            time_size += s.time_index_bytes
            i += 1
        groups.append(group)
    return groups
