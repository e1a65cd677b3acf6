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

from kafkatool.log.index import encode_offset_index, encode_time_index

NO_TIMESTAMP = -1


class IndexOffsetError(ValueError):
    """An index entry the broker's OffsetIndex/TimeIndex would refuse (InvalidOffsetException)."""


class IndexBuilder:
    """Accumulates index entries for one segment."""

    def __init__(self, base_offset: int, index_interval: int = 4096) -> None:
        self.base_offset = base_offset
        self.index_interval = index_interval
        self.offset_entries: list[tuple[int, int]] = []
        self.time_entries: list[tuple[int, int]] = []
        self.max_timestamp = NO_TIMESTAMP
        self.offset_of_max_timestamp = -1
        self._bytes_since_last = 0
        self._last_entry_position = 0
        self._strict = False

    def _maybe_time_entry(self, timestamp: int, offset: int) -> None:
        last_ts = self.time_entries[-1][0] if self.time_entries else NO_TIMESTAMP
        if self._strict and self.time_entries and offset < self.time_entries[-1][1]:
            raise IndexOffsetError(
                f"Attempt to append a time index entry at offset {offset} below the last offset "
                f"{self.time_entries[-1][1]} of the time index"
            )
        if timestamp > last_ts:
            self.time_entries.append((timestamp, offset))

    def _append_offset(self, offset: int, position: int) -> None:
        if not self.offset_entries or offset > self.offset_entries[-1][0]:
            self.offset_entries.append((offset, position))

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
        if self.offset_entries and last_offset <= self.offset_entries[-1][0]:
            raise IndexOffsetError(
                f"Attempt to append an offset ({last_offset}) to position {len(self.offset_entries)} no "
                f"larger than the last offset appended ({self.offset_entries[-1][0]})"
            )
        self.offset_entries.append((last_offset, position))
        ts = self.max_timestamp
        time_entries = self.time_entries
        if time_entries:
            last_ts, last_off = time_entries[-1]
            if self.offset_of_max_timestamp < last_off:
                self._maybe_time_entry(ts, self.offset_of_max_timestamp)  # raises IndexOffsetError
            if ts > last_ts:
                time_entries.append((ts, self.offset_of_max_timestamp))
        elif ts > NO_TIMESTAMP:
            time_entries.append((ts, self.offset_of_max_timestamp))
        self._last_entry_position = position

    def finish_on_close(self) -> None:
        """LogSegment.close / onBecomeInactiveSegment: record the segment's max timestamp."""
        if self.max_timestamp != NO_TIMESTAMP or self.offset_of_max_timestamp != -1:
            self._maybe_time_entry(self.max_timestamp, self.offset_of_max_timestamp)

    def offset_index_bytes(self) -> bytes:
        return encode_offset_index(self.base_offset, self.offset_entries)

    def time_index_bytes(self) -> bytes:
        return encode_time_index(self.base_offset, self.time_entries)
