"""Build `.index` / `.timeindex` contents with the broker's rules.

Two broker paths append index entries and they differ by one detail: `LogSegment.append` (live
writes) checks the bytes written since the last entry, `LogSegment.recover` (startup rebuild) checks
the position of the batch against the position of the last entry.  Both give an entry only when the
distance *exceeds* index.interval.bytes, keyed by the batch's last offset and its start position,
and feed the time index the running maximum timestamp.  Closing a segment adds a final time entry.

Recovery is strict the way the broker's indexes are: an offset entry that does not exceed the last one,
or a time entry whose offset goes backwards, raises `IndexOffsetError` (Kafka's InvalidOffsetException,
on which the broker empties the segment).  The live-append rule keeps skipping such entries silently
because test-data writers rely on it.
"""

from __future__ import annotations

import struct

NO_TIMESTAMP = -1

_OFFSET_ENTRY = struct.Struct(">ii")
_TIME_ENTRY = struct.Struct(">qi")


class IndexOffsetError(ValueError):
    """An index entry the broker's OffsetIndex/TimeIndex would refuse (InvalidOffsetException)."""


class IndexBuilder:
    """Accumulates index entries for one segment, encoded as the files hold them.

    The entries are kept as the `.index` / `.timeindex` bytes themselves (8 and 12 bytes an entry), not
    as Python objects: a 1 GiB segment has a quarter of a million entries, which as tuples took ~55 MB
    (issue 14).  The last entry of each index is kept decoded for the checks; the compiled walk
    (`kafkatool._speedups.walk_v2_run`) appends to the same bytearrays and fields.
    """

    def __init__(self, base_offset: int, index_interval: int = 4096) -> None:
        self.base_offset = base_offset
        self.index_interval = index_interval
        self.offset_index = bytearray()  # the `.index` contents: (offset - base, position) int32 pairs
        self.time_index = bytearray()  # the `.timeindex` contents: (timestamp int64, offset - base int32)
        self.last_index_offset = -1  # absolute offset of the last `.index` entry (when there is one)
        self.last_time_timestamp = NO_TIMESTAMP  # the last `.timeindex` entry (when there is one)
        self.last_time_offset = -1
        self.max_timestamp = NO_TIMESTAMP
        self.offset_of_max_timestamp = -1
        self._bytes_since_last = 0
        self._last_entry_position = 0
        self._strict = False

    def _add_time(self, timestamp: int, offset: int) -> None:
        self.time_index += _TIME_ENTRY.pack(timestamp, offset - self.base_offset)
        self.last_time_timestamp = timestamp
        self.last_time_offset = offset

    def _maybe_time_entry(self, timestamp: int, offset: int) -> None:
        has_time = bool(self.time_index)
        if self._strict and has_time and offset < self.last_time_offset:
            raise IndexOffsetError(
                f"Attempt to append a time index entry at offset {offset} below the last offset "
                f"{self.last_time_offset} of the time index"
            )
        if timestamp > (self.last_time_timestamp if has_time else NO_TIMESTAMP):
            self._add_time(timestamp, offset)

    def _append_offset(self, offset: int, position: int) -> None:
        if not self.offset_index or offset > self.last_index_offset:
            self.offset_index += _OFFSET_ENTRY.pack(offset - self.base_offset, position)
            self.last_index_offset = offset

    def _track_max(self, max_timestamp: int, offset: int) -> None:
        if max_timestamp > self.max_timestamp:
            self.max_timestamp = max_timestamp
            self.offset_of_max_timestamp = offset

    def on_append(
        self, last_offset: int, position: int, max_timestamp: int, offset_of_max_timestamp: int, size: int
    ) -> None:
        """LogSegment.append: entry when bytes since the last entry exceed the interval."""
        self._track_max(max_timestamp, offset_of_max_timestamp)
        if self._bytes_since_last > self.index_interval:
            self._append_offset(last_offset, position)
            self._maybe_time_entry(self.max_timestamp, self.offset_of_max_timestamp)
            self._bytes_since_last = 0
        self._bytes_since_last += size

    def on_recover(self, last_offset: int, position: int, max_timestamp: int) -> None:
        """LogSegment.recover: entry when the batch starts more than the interval past the last entry.

        Called once per batch on the hottest path of `verify`/`recover`, hence the inlined tracking.
        """
        if max_timestamp > self.max_timestamp:
            self.max_timestamp = max_timestamp
            self.offset_of_max_timestamp = last_offset
        if position - self._last_entry_position > self.index_interval:
            self._recover_entry(last_offset, position)

    def _recover_entry(self, last_offset: int, position: int) -> None:
        self._strict = True
        if self.offset_index and last_offset <= self.last_index_offset:
            raise IndexOffsetError(
                f"Attempt to append an offset ({last_offset}) to position {len(self.offset_index) // 8} no "
                f"larger than the last offset appended ({self.last_index_offset})"
            )
        self.offset_index += _OFFSET_ENTRY.pack(last_offset - self.base_offset, position)
        self.last_index_offset = last_offset
        ts = self.max_timestamp
        if self.time_index:
            if self.offset_of_max_timestamp < self.last_time_offset:
                self._maybe_time_entry(ts, self.offset_of_max_timestamp)  # raises IndexOffsetError
            if ts > self.last_time_timestamp:
                self._add_time(ts, self.offset_of_max_timestamp)
        elif ts > NO_TIMESTAMP:
            self._add_time(ts, self.offset_of_max_timestamp)
        self._last_entry_position = position

    def finish_on_close(self) -> None:
        """LogSegment.close / onBecomeInactiveSegment: record the segment's max timestamp."""
        if self.max_timestamp != NO_TIMESTAMP or self.offset_of_max_timestamp != -1:
            self._maybe_time_entry(self.max_timestamp, self.offset_of_max_timestamp)

    def offset_index_bytes(self) -> bytes:
        return bytes(self.offset_index)

    def time_index_bytes(self) -> bytes:
        return bytes(self.time_index)
