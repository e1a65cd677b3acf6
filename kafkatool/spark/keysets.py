"""One task's distinct keys of a cut partition, packed as sorted fixed-width numpy blocks, and their exact merge.

Why (the summary's profile on a log whose keys are all distinct): every key of a partition cut across
tasks must reach the driver for an exact distinct count, and the driver's check whether two tasks saw
the same key ran after the last task, on one core: Arrow's hash table over the variable-length keys
took ~0.5 us a key.  Here each task groups its keys by length and sorts each group: keys of up to 8
bytes become one uint64 each (zero-padded: within one length the padding is the same, so the number is
the key), longer ones a fixed-width numpy bytes column; the (offset, payload) of each key's latest
record follows the same order.  The driver then only concatenates each length's sorted runs, sorts
them (a stable sort merges presorted runs) and looks for equal neighbours.  Where some key was read by
two tasks it picks, per key, the record that `kafkatool.ops.scan.Scan.add` keeps (the greatest
(offset, payload)), with a lexicographic sort: exact, with no dict of the keys.

Keys are bytes (None keys are keyless records, counted apart by `Scan`); b"" is a key of length 0.
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

WORD = 8  # keys up to this many bytes pack into one uint64


@dataclass
class PackedKeys:
    """One task's distinct keys of one unit: per key length, (keys, latest offsets less `offset_base`,
    latest payloads), sorted by key; `latest_sum` is the sum of all latest payloads (the answer when no
    key is shared).  Offsets and payloads are uint32 where they fit: a third less to pickle and move."""

    blocks: dict[int, tuple[Any, Any, Any]]
    latest_sum: int
    offset_base: int = 0

    def __len__(self) -> int:
        return sum(len(b[0]) for b in self.blocks.values())


def _column(block: Any, length: int) -> Any:
    """An (n, length) uint8 block as one comparable value per row: uint64 up to WORD bytes (big-endian:
    the order of the bytes, so keys written in order need no sort), else raw bytes."""
    import numpy as np

    n = block.shape[0]
    if length <= WORD:
        padded = np.zeros((n, WORD), dtype=np.uint8)
        padded[:, :length] = block
        return padded.view(">u8").ravel().astype(np.uint64)
    # void, not bytes ('S'): numpy compares void rows as raw memory, NUL bytes included
    return np.ascontiguousarray(block).view(np.dtype((np.void, length))).ravel()


def pack(keys: Sequence[bytes], offsets: array, payloads: array) -> PackedKeys:
    """Distinct keys with their latest record's offset and payload bytes (same order), packed."""
    import numpy as np

    n = len(keys)
    offs = np.frombuffer(offsets, dtype=np.int64) if n else np.zeros(0, np.int64)
    pays = np.frombuffer(payloads, dtype=np.int64) if n else np.zeros(0, np.int64)
    latest_sum = int(pays.sum())
    if not n:
        return PackedKeys({}, latest_sum)
    base = int(offs.min())
    offs = _narrow(offs - base)
    pays = _narrow(pays)
    lengths = np.frombuffer(array("q", map(len, keys)), dtype=np.int64)
    lo, hi = int(lengths.min()), int(lengths.max())
    groups: list[tuple[int, Any]] = []  # (length, the rows of keys of that length)
    if lo == hi:
        groups.append((lo, None))
    else:  # one sort by length, then each length's rows (no pass over all keys per length)
        by_length = np.argsort(lengths, kind="stable")
        cuts = np.flatnonzero(np.diff(lengths[by_length])) + 1
        for rows in np.split(by_length, cuts):
            groups.append((int(lengths[rows[0]]), rows))
    blocks = {}
    for length, rows in groups:
        if rows is None:
            block = np.frombuffer(b"".join(keys), dtype=np.uint8).reshape(n, length)
            o, p = offs, pays
        else:  # the keys of this length joined again: no index array of length x keys
            joined = b"".join(map(keys.__getitem__, rows.tolist()))
            block = np.frombuffer(joined, dtype=np.uint8).reshape(len(rows), length)
            o, p = offs[rows], pays[rows]
        column = _column(block, length)
        if column.dtype == np.uint64 and bool((column[1:] > column[:-1]).all()):
            blocks[length] = (column, o, p)  # already in order
            continue
        order = np.argsort(column, kind="stable")
        blocks[length] = (column[order], o[order], p[order])
    return PackedKeys(blocks, latest_sum, base)


def _narrow(values: Any) -> Any:
    """Non-negative int64 values as uint32 when they all fit."""
    import numpy as np

    if len(values) and int(values.min()) >= 0 and int(values.max()) < 1 << 32:
        return values.astype(np.uint32)
    return values


def merge_count(chunks: Sequence[PackedKeys]) -> tuple[int, int]:
    """(distinct keys, sum of each key's latest payload) over several tasks' chunks of one unit.

    The latest record of a key read by several tasks is the one with the greatest (offset, payload),
    as `Scan.add` keeps it.
    """
    if len(chunks) == 1:
        return len(chunks[0]), chunks[0].latest_sum
    import numpy as np

    distinct = 0
    latest = 0
    for length in sorted({length for c in chunks for length in c.blocks}):
        owners = [c for c in chunks if length in c.blocks]
        keys = np.concatenate([c.blocks[length][0] for c in owners])
        if len(owners) == 1 or not _shared(keys):  # each task's keys are distinct: none shared
            distinct += len(keys)
            latest += sum(int(c.blocks[length][2].sum(dtype=np.int64)) for c in owners)
            continue
        offs = np.concatenate([c.blocks[length][1].astype(np.int64) + c.offset_base for c in owners])
        pays = np.concatenate([c.blocks[length][2].astype(np.int64) for c in owners])
        order = np.lexsort((pays, offs, keys))  # by key, then (offset, payload): each key's latest last
        keys = keys[order]
        last = np.ones(len(keys), dtype=bool)
        last[:-1] = keys[1:] != keys[:-1]
        distinct += int(last.sum())
        latest += int(pays[order][last].sum())
    return distinct, latest


def _shared(keys: Any) -> bool:
    """Whether a value repeats in these concatenated sorted runs (a stable sort of sorted runs merges them)."""
    import numpy as np

    merged = np.sort(keys, kind="stable")
    return bool((merged[1:] == merged[:-1]).any())
