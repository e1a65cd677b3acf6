"""What the offset-map pass decoded, kept for the cleaning pass so it need not decode it again."""

from __future__ import annotations

from array import array

import numpy as np

from kafkatool.log.records import Batch
from kafkatool.ops.compact.keys import BatchKeyColumns


class DecodedRecords:
    """The records the offset-map pass decoded in the dirty range, so cleaning need not decode them again.

    Why: on a first clean most of the log is dirty, and decoding every record a second time was a fifth
    of the cleaner's time.  Noted per offset of the dirty range: known, null key, null value (one byte);
    and per segment, the file positions of the batches noted.  Only a v2 batch whose records are exactly
    its offsets base..last is noted, and cleaning recognises it by its position in the same segment file
    (the bytes the first pass read), so the flags are that batch's.  Overlapping batches (a damaged log)
    turn noting off.  At most `budget` bytes of flags and as many of positions; what is not noted is
    simply decoded again.
    """

    KNOWN, NULL_KEY, NULL_VALUE = 1, 2, 4

    def __init__(self, first: int, end: int, budget: int) -> None:
        self.first = first
        self.flags: np.ndarray | None = np.zeros(end - first, dtype=np.uint8) if 0 < end - first <= budget else None
        self.positions: dict[int, array[int]] = {}  # segment base offset -> positions of noted batches (8 bytes)
        self.batches_left = budget // 8

    def note(self, segment: int, batches: list[Batch], cols: BatchKeyColumns) -> None:
        """Note the decoded batches (cols = decode_key_columns(batches)) that qualify."""
        flags = self.flags
        if flags is None or not batches or self.batches_left <= 0:
            return
        counts = np.diff(cols.starts)
        base = np.array([b.base_offset for b in batches], dtype=np.int64)
        last = np.array([b.last_offset for b in batches], dtype=np.int64)
        v2 = np.array([b.magic >= 2 for b in batches], dtype=bool)
        dense = v2 & (counts > 0) & (counts == last - base + 1) & (base >= self.first)
        dense &= last < self.first + len(flags)
        first_rec = np.asarray(cols.starts[:-1])
        k = np.arange(len(cols)) - np.repeat(first_rec, counts)
        exact = cols.offsets == np.repeat(base, counts) + k  # each record at base + its index
        whole = np.flatnonzero(counts > 0)
        dense[whole] &= np.logical_and.reduceat(exact, first_rec[whole])
        noted = np.flatnonzero(dense)[: self.batches_left]
        if not noted.size:
            return
        dense[:] = False
        dense[noted] = True
        rec = np.repeat(dense, counts)
        at = cols.offsets[rec] - self.first
        if bool(flags[at].any()):  # an offset noted twice: a damaged log, note nothing more
            self.flags = None
            self.positions = {}
            return
        flags[at] = (
            self.KNOWN
            | (cols.null_keys[rec].astype(np.uint8) * self.NULL_KEY)
            | (cols.null_values[rec].astype(np.uint8) * self.NULL_VALUE)
        )
        self.positions.setdefault(segment, array("q")).extend(batches[i].position for i in noted.tolist())
        self.batches_left -= noted.size

    def knows_many(self, segment: int, batches: list[Batch]) -> np.ndarray:
        """Whether each batch (of that segment) was noted, as a bool array: one search for all of them."""
        positions = self.positions.get(segment)
        if not positions or self.flags is None or not batches:
            return np.zeros(len(batches), dtype=bool)
        noted = np.frombuffer(positions, dtype=np.int64)
        wanted = np.fromiter((b.position for b in batches), dtype=np.int64, count=len(batches))
        at = np.searchsorted(noted, wanted)
        return noted[np.minimum(at, len(noted) - 1)] == wanted

    def columns(self, batches: list[Batch]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(offsets, null keys, null values) of the records of noted batches, in order."""
        assert self.flags is not None
        counts = np.array([b.last_offset - b.base_offset + 1 for b in batches], dtype=np.int64)
        base = np.array([b.base_offset for b in batches], dtype=np.int64)
        offsets = np.repeat(base, counts) + (np.arange(int(counts.sum())) - np.repeat(np.cumsum(counts) - counts, counts))
        flags = self.flags.take(offsets - self.first)
        return offsets, (flags & self.NULL_KEY) != 0, (flags & self.NULL_VALUE) != 0
