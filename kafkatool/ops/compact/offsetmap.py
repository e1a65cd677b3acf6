"""The log cleaner's bounded key → latest-offset map, sized and filled the way Kafka's SkimpyOffsetMap is.

Why a flat table and not a dict: this map is the only cleaner structure that grows with the data, and Kafka
bounds it by `log.cleaner.dedupe.buffer.size`.  Each slot holds MD5(key) (16 bytes) and an offset (8 bytes),
24 bytes, in `memory // 24` slots; the map counts as full at `load_factor` (0.9) of its slots, and the
cleaner stops mapping there.  Keeping the same accounting gives the same cleaning range as the broker for
the same buffer size, and keeping the same layout makes the memory real: a numpy zero-filled table, whose
untouched pages the kernel never allocates.

Why the table may be smaller than the buffer: keys land on random slots, so even a few keys touch every
page of a full-size table, and the kernel zeroing those pages was 15% of a clean.  When the caller knows
how many keys can come at most (`reserve`: the cleaner passes the dirty range's offset span), the table
has twice that many slots (never more than the buffer's); fullness is still counted against the buffer's
slots, so the cleaning range does not change, and should more keys come after all the table grows
(to at most the buffer's slots).  Lookups give the same answers whatever the table's size.

Probing follows SkimpyOffsetMap (successive 4-byte windows of the digest, then linear steps), but keys are
handled a chunk at a time (vectorised rounds of probing) because a per-key Python loop would dominate the
cleaner's run time; with the compiled core, puts run one key at a time in C (`offset_map_put`), the
numpy rounds staying the reference.  The two place racing keys in different slots of a probe path, which
no lookup can tell apart.  Offsets are stored +1 so that a zeroed slot means "empty".
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from kafkatool.log.core import speedups

try:  # CPython's built-in MD5 is about twice as fast as OpenSSL's for short keys
    from _md5 import md5 as _md5  # type: ignore[import-not-found]
except ImportError:  # pragma: no cover - builds without the module
    from hashlib import md5 as _md5

HASH_SIZE = 16
BYTES_PER_ENTRY = HASH_SIZE + 8
DEFAULT_LOAD_FACTOR = 0.9
_INT32_MIN = -(2**31)
_NOT_PUT, _PUT, _LATEST = 0, 1, 2  # what offset tracking knows of a record
MIN_TABLE_SLOTS = 1024  # the smallest table `reserve` makes
TABLE_LOAD = 0.5  # a reserved table has 1 / TABLE_LOAD slots a key: probes stay short
GROW_LOAD = 0.75  # a table smaller than the buffer grows (x4) before it holds more than this share


KEY_HASH = _md5  # what keys are digested with (a hashlib-style constructor), for decoders that digest


def digest_array(key_digests: list[bytes]) -> np.ndarray:
    """Digests made with KEY_HASH as an (n, 16) uint8 array (what `get_many`/`put_until_full` take)."""
    return np.frombuffer(b"".join(key_digests), dtype=np.uint8).reshape(-1, HASH_SIZE)


def digest(key: bytes) -> bytes:
    """MD5 of a key: what the map stores instead of the key."""
    return _md5(key).digest()


def digests(keys: Iterable[bytes]) -> np.ndarray:
    """MD5 digests of keys as an (n, 16) uint8 array."""
    blob = b"".join([_md5(k).digest() for k in keys])
    return np.frombuffer(blob, dtype=np.uint8).reshape(-1, HASH_SIZE)


class OffsetMapFullError(Exception):
    """A put would exceed the map's capacity (callers check `is_full` first, as the cleaner does)."""


class OffsetMap:
    """MD5(key) → offset for the dirty section of one log, bounded by `memory` bytes."""

    def __init__(self, memory: int, load_factor: float = DEFAULT_LOAD_FACTOR) -> None:
        self.slots = int(memory) // BYTES_PER_ENTRY
        if self.slots * load_factor <= 1:
            raise ValueError(
                f"offset map of {memory} bytes holds {self.slots} entries: too small to fit even a single "
                "key, so cleaning could never make progress (raise the dedupe buffer size)"
            )
        self.load_factor = load_factor
        self.max_entries = int(self.slots * load_factor)
        # one 24-byte row a slot: the digest's two halves, then offset + 1 (0 = empty slot); a probe
        # reads one row, so one cache line, where separate arrays cost a memory access each.  `_cap`
        # rows, allocated at the first use (see `reserve`).
        self._cap = self.slots
        self._tab_rows: np.ndarray | None = None
        self.size = 0
        self.latest_offset = -1
        self.lookups = 0
        self.probes = 0
        self._track: np.ndarray | None = None  # see track_offsets
        self._track_first = 0
        self._track_last = -1

    # -- bookkeeping ------------------------------------------------------------------------
    def clear(self) -> None:
        """Forget every entry (before mapping another log).

        The table is dropped, not filled: the next one is allocated at its first use, zero-filled by the
        kernel page by page, so clearing a large, mostly unused map costs nothing and keeps the resident
        size at what is really used.  It has the buffer's slots again unless `reserve` says otherwise.
        """
        self._tab_rows = None
        self._cap = self.slots
        self.size = 0
        self.latest_offset = -1
        self._track = None

    @property
    def is_full(self) -> bool:
        return self.size >= self.max_entries

    @property
    def utilization(self) -> float:
        return self.size / self.slots

    @property
    def memory(self) -> int:
        """The configured buffer size, rounded down to whole slots: what the map may occupy at most."""
        return self.slots * BYTES_PER_ENTRY

    @property
    def table_bytes(self) -> int:
        """Bytes of the slot table as it is now (at most `memory`)."""
        return self._cap * BYTES_PER_ENTRY

    def reserve(self, max_keys: int) -> None:
        """Size the table of an empty map for at most `max_keys` keys (more still fit: it grows)."""
        if self.size == 0:
            self._tab_rows = None
            self._cap = min(self.slots, max(MIN_TABLE_SLOTS, int(max_keys / TABLE_LOAD) + 1))

    @property
    def _tab(self) -> np.ndarray:
        if self._tab_rows is None:
            self._tab_rows = np.zeros((self._cap, 3), dtype=np.uint64)
        return self._tab_rows

    def _room(self) -> int:
        """Entries the table may hold before it must grow (the buffer's limit once it is full size)."""
        if self._cap >= self.slots:
            return self.max_entries
        return min(self.max_entries, int(self._cap * GROW_LOAD))

    def _grow(self, needed: int) -> None:
        """Move every entry to a table 4x larger (or the buffer's size) with room for `needed` entries."""
        cap = self._cap
        while True:
            cap = min(self.slots, cap * 4)
            if cap >= self.slots or needed <= int(cap * GROW_LOAD):
                break
        old = self._tab
        used = old[old[:, 2] != 0]
        self._cap = cap
        self._tab_rows = None
        self.size = 0
        if len(used):
            d8 = np.ascontiguousarray(used[:, :2]).view(np.uint8).reshape(-1, HASH_SIZE)
            self._insert(d8, np.ascontiguousarray(used[:, :2]), np.ascontiguousarray(used[:, 2]))

    def update_latest_offset(self, offset: int) -> None:
        """Record the last offset the map covers (an assignment, as in Kafka)."""
        self.latest_offset = offset

    # -- which records are their key's latest, by offset (optional) -------------------------
    def track_offsets(self, first: int, end: int) -> bool:
        """Also remember, for the records at offsets [first, end), which were put and which are still
        their key's latest: `latest_by_offset` then answers for them without their keys.

        Why: the cleaner's second pass asks, for every record, whether it is its key's latest; for
        records the first pass put here that is known by offset alone, and hashing the key again (and
        probing) was the costliest part of that pass.  One byte an offset; if that is more than 1/16 of
        the map's memory tracking stays off (False).  It also turns itself off when puts do not come in
        strictly increasing offsets (an offset would not name one record), or on `put`/`clear`.
        """
        self._track = None
        if end <= first or end - first > self.memory // 16:
            return False
        self._track = np.zeros(end - first, dtype=np.uint8)
        self._track_first = first
        self._track_last = first - 1
        return True

    @property
    def tracks_offsets(self) -> bool:
        """Whether `latest_by_offset` knows every record put since `track_offsets` (tracking still on)."""
        return self._track is not None

    def latest_by_offset(self, offsets: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(put, latest) for records named by offset: `put` where tracking knows the record was put in the
        map, `latest` where it is still its key's latest offset (both False where not known)."""
        state = np.zeros(len(offsets), dtype=np.uint8)
        track = self._track
        if track is not None and len(offsets):
            at = np.asarray(offsets, dtype=np.int64) - self._track_first
            inside = (at >= 0) & (at < len(track))
            state[inside] = track.take(at[inside])
        return state != _NOT_PUT, state == _LATEST

    def _note_puts(self, consumed: np.ndarray, latest: np.ndarray, replaced: np.ndarray) -> None:
        """Tracking for one put_until_full: `consumed` offsets were put, `latest` are now their keys'
        latest, `replaced` are not any more."""
        track = self._track
        if track is None or not len(consumed):
            return
        first = self._track_first
        increasing = consumed[0] > self._track_last and bool(np.all(consumed[1:] > consumed[:-1]))
        if not increasing or consumed[-1] >= first + len(track):
            self._track = None
            return
        track[consumed - first] = _PUT
        track[replaced - first] = _PUT
        track[latest - first] = _LATEST
        self._track_last = int(consumed[-1])

    # -- probing ----------------------------------------------------------------------------
    def _probe(self, d8: np.ndarray, attempt: int) -> np.ndarray:
        """Slot of each digest at an attempt: a 4-byte window of the digest, linear past its end."""
        w = min(attempt, HASH_SIZE - 4)
        v = np.ascontiguousarray(d8[:, w : w + 4]).view(">i4").ravel().astype(np.int64)
        if attempt > HASH_SIZE - 4:
            v = v + (attempt - (HASH_SIZE - 4))
        v = np.where(v == _INT32_MIN, 0, np.abs(v))  # Kafka's Utils.abs
        return v % self._cap

    def _find(self, d8: np.ndarray, h: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """For each digest: its slot if present (found=True, with the stored offset + 1), else the first
        empty slot on its path (stored 0).

        Rows are gathered with `take`: numpy's general fancy indexing of 2-d arrays is several times
        slower, and these gathers are most of the map's work.
        """
        n = len(h)
        slot = np.empty(n, dtype=np.int64)
        found = np.zeros(n, dtype=bool)
        stored = np.zeros(n, dtype=np.uint64)
        pending = np.arange(n)
        attempt = 0
        tab = self._tab
        while pending.size:
            s = self._probe(d8.take(pending, axis=0) if attempt else d8, attempt)
            rows = tab.take(s, axis=0)
            occupied = rows[:, 2] != 0
            hp = h.take(pending, axis=0) if attempt else h
            match = occupied & (rows[:, 0] == hp[:, 0]) & (rows[:, 1] == hp[:, 1])
            done = match | ~occupied
            slot[pending[done]] = s[done]
            found[pending[match]] = True
            stored[pending[match]] = rows[match, 2]
            self.probes += int(pending.size)
            pending = pending[~done]
            attempt += 1
            if attempt > self.slots + HASH_SIZE:  # pragma: no cover - impossible below the load factor
                raise RuntimeError("offset map probing did not terminate")
        return slot, found, stored

    @staticmethod
    def _split(d8: np.ndarray) -> np.ndarray:
        return np.ascontiguousarray(d8).view(np.uint64).reshape(-1, 2)

    @staticmethod
    def _distinct(h: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """First index of each distinct digest and each row's group (sorting 8-byte halves is fast)."""
        _, first, inverse = np.unique(h[:, 0], return_index=True, return_inverse=True)
        inverse = inverse.ravel()
        if not np.array_equal(h[first[inverse], 1], h[:, 1]):  # two digests share their first 8 bytes
            keys = np.ascontiguousarray(h).view(np.dtype((np.void, HASH_SIZE))).ravel()
            _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
            inverse = inverse.ravel()
        return first, inverse

    # -- lookups ----------------------------------------------------------------------------
    def get_many(self, d8: np.ndarray) -> np.ndarray:
        """Latest offset of each digest, -1 where the key is not in the map."""
        if len(d8) == 0:
            return np.empty(0, dtype=np.int64)
        self.lookups += len(d8)
        _, found, stored = self._find(d8, self._split(d8))
        return np.where(found, stored.astype(np.int64) - 1, -1)

    def get(self, key: bytes) -> int:
        return int(self.get_many(digests([key]))[0])

    # -- inserts ----------------------------------------------------------------------------
    def put_until_full(self, d8: np.ndarray, offsets: np.ndarray) -> int:
        """Put keys in log order until the map is full; return how many were consumed.

        The cleaner checks `size < max_entries` before every put (even of a key already mapped) and
        stops at the first record that fails it, so a chunk is consumed up to that record exactly.
        """
        n = len(offsets)
        if n == 0:
            return 0
        if speedups is not None:
            return self._put_compiled(d8, offsets)
        h = self._split(d8)
        first, inverse = self._distinct(h)
        slot, found, old = self._find(d8.take(first, axis=0), h.take(first, axis=0))
        is_new = np.zeros(n, dtype=bool)
        is_new[first[~found]] = True
        new_before = np.cumsum(is_new) - is_new
        allowed = self.size + new_before < self.max_entries
        k = n if bool(allowed.all()) else int(np.argmin(allowed))
        if k == 0:
            return 0
        last = np.full(len(first), -1, dtype=np.int64)
        last[inverse[:k]] = np.arange(k)  # repeated indices: the last assignment wins
        reps = np.flatnonzero(last >= 0)  # distinct keys present in the consumed prefix
        offsets = np.asarray(offsets, dtype=np.int64)
        value = (offsets[last[reps]] + 1).astype(np.uint64)
        existing = found[reps]
        if self._track is not None:
            self._note_puts(offsets[:k], value.astype(np.int64) - 1, old[reps[existing]].astype(np.int64) - 1)
        self._tab.ravel()[slot[reps[existing]] * 3 + 2] = value[existing]
        fresh = reps[~existing]
        if fresh.size:
            rows = first[fresh]
            self._insert(d8.take(rows, axis=0), h.take(rows, axis=0), value[~existing])
        return k

    def _put_compiled(self, d8: np.ndarray, offsets: np.ndarray) -> int:
        """put_until_full with the compiled core: key by key, the table grown whenever it must."""
        assert speedups is not None
        digests = np.ascontiguousarray(d8, dtype=np.uint8)
        offsets = np.ascontiguousarray(offsets, dtype=np.int64)
        done = 0
        n = len(offsets)
        while True:
            track = self._track
            k, self.size, probes, last = speedups.offset_map_put(
                self._tab, digests[done:], offsets[done:], self.size, self._room(), track,
                self._track_first, self._track_last,
            )
            self.probes += probes
            if track is not None:
                if last is None:
                    self._track = None
                else:
                    self._track_last = last
            done += k
            if done == n or self.size >= self.max_entries:
                return done
            self._grow(self.size + 1)

    def _insert(self, d8: np.ndarray, h: np.ndarray, stored: np.ndarray) -> None:
        """Place digests known to be absent into empty slots (several may race for one slot).

        Every racer writes its own claim (a value above any offset + 1) into the slot; the one whose
        claim stays has won it, without sorting the contenders.  Every digest that does not win a slot
        moves to its next attempt, so all pending digests are always at the same attempt number.
        """
        m = len(h)
        if self.size + m > self.max_entries:
            raise OffsetMapFullError(f"{m} new keys do not fit: {self.size} of {self.max_entries} used")
        if self.size + m > self._room():
            self._grow(self.size + m)
        flat = self._tab.ravel()  # slot i's row is flat[3i : 3i + 3]
        claims = np.uint64(2**64 - 1) - np.arange(m, dtype=np.uint64)
        pending = np.arange(m)
        attempt = 0
        while pending.size:
            s = self._probe(d8.take(pending, axis=0), attempt)
            empty = np.flatnonzero(flat[s * 3 + 2] == 0)
            won = np.zeros(pending.size, dtype=bool)
            if empty.size:
                contested = s[empty] * 3 + 2
                mine = claims[pending[empty]]
                flat[contested] = mine
                kept = flat[contested] == mine
                winners = pending[empty[kept]]
                taken = contested[kept]
                won_h = h.take(winners, axis=0)
                flat[taken - 2] = won_h[:, 0]
                flat[taken - 1] = won_h[:, 1]
                flat[taken] = stored.take(winners)
                won[empty[kept]] = True
            self.probes += int(pending.size)
            pending = pending[~won]
            attempt += 1
            if attempt > self.slots + HASH_SIZE:  # pragma: no cover
                raise RuntimeError("offset map insertion did not terminate")
        self.size += m

    def put(self, key: bytes, offset: int) -> None:
        """Map one key to offset (an update never fails; a new key at capacity raises OffsetMapFullError)."""
        self._track = None  # offsets put one by one are not tracked
        d8 = digests([key])
        h = self._split(d8)
        slot, found, _ = self._find(d8, h)
        if found[0]:
            self._tab[slot[0], 2] = np.uint64(offset + 1)
        else:
            self._insert(d8, h, np.array([offset + 1], dtype=np.uint64))
