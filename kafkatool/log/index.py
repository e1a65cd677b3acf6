"""Offset, time and transaction index files: read, look up, sanity-check and write.

The lookup follows the broker's AbstractIndex exactly (a warm section of the last 8 KiB is searched
first), because dump-log's verification output depends on which entry a lookup lands on, even in
damaged indexes.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from kafkatool.log.errors import CorruptIndexError

OFFSET_ENTRY_SIZE = 8
TIME_ENTRY_SIZE = 12
TXN_ENTRY_SIZE = 34
WARM_BYTES = 8192
DEFAULT_INDEX_INTERVAL = 4096
DEFAULT_MAX_INDEX_SIZE = 10 * 1024 * 1024

_OFFSET_ENTRY = struct.Struct(">ii")
_TIME_ENTRY = struct.Struct(">qi")
_TXN_ENTRY = struct.Struct(">hqqqq")


@dataclass(frozen=True)
class OffsetEntry:
    offset: int
    position: int


@dataclass(frozen=True)
class TimeEntry:
    timestamp: int
    offset: int


@dataclass(frozen=True)
class AbortedTxn:
    version: int
    producer_id: int
    first_offset: int
    last_offset: int
    last_stable_offset: int


class _Index:
    """Common part of the two sparse indexes: fixed-size entries relative to a base offset."""

    entry_size = 0

    def __init__(self, data: bytes, base_offset: int, path: Path | None = None) -> None:
        self.data = data
        self.base_offset = base_offset
        self.path = path
        self.length = len(data)
        self.entries = self.length // self.entry_size

    @classmethod
    def open(cls, path: Path, base_offset: int | None = None):  # type: ignore[no-untyped-def]
        from kafkatool.log.files import offset_from_name

        if base_offset is None:
            base_offset = offset_from_name(path.name)
        return cls(path.read_bytes(), base_offset, path)

    def _key(self, i: int) -> int:
        raise NotImplementedError

    def slot_for(self, target: int, smallest_upper: bool = False) -> int:
        """Slot of the largest entry <= target (or smallest >= target); -1 if none.

        Mirrors AbstractIndex.indexSlotRangeFor: search the warm tail first, then the rest.
        """
        n = self.entries
        if n == 0:
            return -1
        warm = WARM_BYTES // self.entry_size
        first_hot = max(0, n - 1 - warm)
        if self._key(first_hot) < target:
            return self._search(target, first_hot, n - 1, smallest_upper)
        if self._key(0) > target:
            return 0 if smallest_upper else -1
        return self._search(target, 0, first_hot, smallest_upper)

    def _search(self, target: int, lo: int, hi: int, smallest_upper: bool) -> int:
        while lo < hi:
            mid = (lo + hi + 1) >> 1
            k = self._key(mid)
            if k > target:
                hi = mid - 1
            elif k < target:
                lo = mid
            else:
                return mid
        if smallest_upper:
            if self._key(lo) == target:
                return lo
            return lo + 1 if lo + 1 < self.entries else -1
        return lo


class OffsetIndex(_Index):
    """`.index`: relative offset (int32) → file position (int32)."""

    entry_size = OFFSET_ENTRY_SIZE

    def _key(self, i: int) -> int:
        return self.base_offset + _OFFSET_ENTRY.unpack_from(self.data, i * 8)[0]

    def entry(self, i: int) -> OffsetEntry:
        rel, pos = _OFFSET_ENTRY.unpack_from(self.data, i * 8)
        return OffsetEntry(self.base_offset + rel, pos)

    def __iter__(self):  # type: ignore[no-untyped-def]
        for i in range(self.entries):
            yield self.entry(i)

    def lookup(self, offset: int) -> OffsetEntry:
        """Entry with the largest offset <= offset, or (base, 0) — as OffsetIndex.lookup."""
        slot = self.slot_for(offset)
        if slot == -1:
            return OffsetEntry(self.base_offset, 0)
        return self.entry(slot)

    @property
    def last_offset(self) -> int:
        return self.entry(self.entries - 1).offset if self.entries else self.base_offset

    def used_entries(self) -> int:
        """Entries before the first zero entry a crashed broker's preallocation leaves behind."""
        for i in range(1, self.entries):
            if _OFFSET_ENTRY.unpack_from(self.data, i * 8)[0] == 0:
                return i
        return self.entries

    def sanity_check(self) -> None:
        """The broker's OffsetIndex.sanityCheck; raises CorruptIndexError with Kafka's wording."""
        path = self.path.absolute() if self.path else "<index>"
        if self.entries != 0 and self.last_offset < self.base_offset:
            raise CorruptIndexError(
                f"Corrupt index found, index file ({path}) has non-zero size but the last offset is "
                f"{self.last_offset} which is less than the base offset {self.base_offset}."
            )
        if self.length % self.entry_size != 0:
            raise CorruptIndexError(
                f"Index file {path} is corrupt, found {self.length} bytes which is neither positive nor "
                f"a multiple of {self.entry_size}."
            )


class TimeIndex(_Index):
    """`.timeindex`: timestamp (int64) → relative offset (int32)."""

    entry_size = TIME_ENTRY_SIZE

    def _key(self, i: int) -> int:
        return _TIME_ENTRY.unpack_from(self.data, i * 12)[0]

    def entry(self, i: int) -> TimeEntry:
        ts, rel = _TIME_ENTRY.unpack_from(self.data, i * 12)
        return TimeEntry(ts, self.base_offset + rel)

    def __iter__(self):  # type: ignore[no-untyped-def]
        for i in range(self.entries):
            yield self.entry(i)

    def last_entry(self) -> TimeEntry:
        return self.entry(self.entries - 1) if self.entries else TimeEntry(-1, self.base_offset)

    def used_entries(self) -> int:
        for i in range(1, self.entries):
            if _TIME_ENTRY.unpack_from(self.data, i * 12)[1] == 0:
                return i
        return self.entries

    def lookup(self, timestamp: int) -> TimeEntry:
        """Entry with the largest timestamp <= timestamp, or (-1, base) — as TimeIndex.lookup."""
        slot = self.slot_for(timestamp)
        if slot == -1:
            return TimeEntry(-1, self.base_offset)
        return self.entry(slot)

    def sanity_check(self) -> None:
        """The broker's TimeIndex.sanityCheck; raises CorruptIndexError with Kafka's wording."""
        path = self.path.absolute() if self.path else "<timeindex>"
        last = self.last_entry()
        if self.entries != 0 and last.timestamp < self.entry(0).timestamp:
            raise CorruptIndexError(
                f"Corrupt time index found, time index file ({path}) has non-zero size but the last "
                f"timestamp is {last.timestamp} which is less than the first timestamp {self.entry(0).timestamp}"
            )
        if self.entries != 0 and last.offset < self.base_offset:
            raise CorruptIndexError(
                f"Corrupt time index found, time index file ({path}) has non-zero size but the last offset "
                f"is {last.offset} which is less than the first offset {self.base_offset}"
            )
        if self.length % self.entry_size != 0:
            raise CorruptIndexError(
                f"Time index file {path} is corrupt, found {self.length} bytes which is neither positive nor "
                f"a multiple of {self.entry_size}."
            )


def read_txn_index(data: bytes) -> list[AbortedTxn]:
    """Entries of a `.txnindex`; raises CorruptIndexError when the size is not a multiple of 34."""
    if len(data) % TXN_ENTRY_SIZE:
        raise CorruptIndexError(
            f"transaction index is {len(data)} bytes, not a multiple of the {TXN_ENTRY_SIZE}-byte entry size"
        )
    return [AbortedTxn(*_TXN_ENTRY.unpack_from(data, i)) for i in range(0, len(data), TXN_ENTRY_SIZE)]


def encode_offset_index(base_offset: int, entries: Iterable[tuple[int, int]]) -> bytes:
    """Bytes of an `.index` for (absolute offset, position) entries."""
    return b"".join(_OFFSET_ENTRY.pack(off - base_offset, pos) for off, pos in entries)


def encode_time_index(base_offset: int, entries: Iterable[tuple[int, int]]) -> bytes:
    """Bytes of a `.timeindex` for (timestamp, absolute offset) entries."""
    return b"".join(_TIME_ENTRY.pack(ts, off - base_offset) for ts, off in entries)


def encode_txn_index(entries: Iterable[AbortedTxn]) -> bytes:
    return b"".join(
        _TXN_ENTRY.pack(e.version, e.producer_id, e.first_offset, e.last_offset, e.last_stable_offset)
        for e in entries
    )
