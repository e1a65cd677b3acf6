"""The iteration order of Scala's collections, where Kafka's Scala tools print or consume it.

Kafka 3.3's `ReassignPartitionsCommand` and `LeaderElectionCommand` (Scala 2.13) and Kafka 2.x's
ZooKeeper tools (Scala 2.11/2.12) print sets with `mkString` and walk maps in their iteration order,
which depends only on the keys' hashes (Scala's `##`: `hashCode` for strings, ints and Java objects,
see `kafkatool.jvm.hashing`) and, for equal hashes, on insertion order:

* 2.13 `immutable.HashMap`/`HashSet` are CHAMP tries over `Hashing.improve(##)`, 5 bits a level
  from the lowest: a node iterates its own entries (by 5-bit fragment) before its sub-nodes (by
  fragment), depth first.  `groupBy` always returns an `immutable.HashMap`.
* `immutable.Set` of up to 4 elements (`Set1`..`Set4`) keeps insertion order; the 5th element turns
  it into a `HashSet` (2.13: CHAMP; 2.11/2.12: a hash trie that iterates slot by slot, i.e. in
  lexicographic order of the fragments).
* 2.13 `mutable.HashSet`/`HashMap`: a power-of-two table (16, doubled when an add brings the size
  to 3/4 of it) indexed by `h ^ h >>> 16`; a bucket keeps its entries sorted by that hash (signed).

Each model is checked against the real scala-library 2.13 in tests/test_scala_collections.py.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Sequence
from typing import Any, TypeVar

from kafkatool.jvm.hashing import int_hash, string_hash, to_int32, topic_partition_hash

K = TypeVar("K")

_MASK = 0xFFFFFFFF
_BITS = 5
_HASH_BITS = 32
SMALL_SET_MAX = 4
MUTABLE_INITIAL_CAPACITY = 16
MUTABLE_LOAD_FACTOR = 0.75


def improve(h: int) -> int:
    """`scala.collection.Hashing.improve`, as an unsigned 32-bit value (the tries' bit source)."""
    h &= _MASK
    h = (h + ~(h << 9)) & _MASK
    h ^= h >> 14
    h = (h + (h << 4)) & _MASK
    return h ^ (h >> 10)


def _unique(keys: Iterable[K]) -> list[K]:
    """Distinct keys in first-insertion order (adding an element already present changes nothing)."""
    return list(dict.fromkeys(keys))


# -- immutable (2.13 CHAMP; 2.11/2.12 hash trie) ----------------------------------------------------


def champ_order(keys: Iterable[K], hash_fn: Callable[[K], int]) -> list[K]:
    """Iteration order of a 2.13 `immutable.HashMap`/`HashSet` holding `keys` (inserted in this order)."""
    entries = [(improve(hash_fn(k)), k) for k in _unique(keys)]
    out: list[K] = []
    _champ_walk(entries, 0, out)
    return out


def _champ_walk(entries: list[tuple[int, K]], shift: int, out: list[K]) -> None:
    if shift >= _HASH_BITS:  # a collision node: equal hashes, kept in insertion order
        out.extend(k for _, k in entries)
        return
    groups: dict[int, list[tuple[int, K]]] = {}
    for e in entries:
        groups.setdefault((e[0] >> shift) & 0x1F, []).append(e)
    fragments = sorted(groups)
    out.extend(groups[f][0][1] for f in fragments if len(groups[f]) == 1)  # the node's own entries first
    for f in fragments:
        if len(groups[f]) > 1:
            _champ_walk(groups[f], shift + _BITS, out)


def trie_order_212(keys: Iterable[K], hash_fn: Callable[[K], int]) -> list[K]:
    """Iteration order of a 2.11/2.12 `immutable.HashSet`/`HashMap` (HashTrieSet) holding `keys`.

    Its iterator visits slots in order at every level, so the order is that of the 5-bit fragments
    read from the lowest bits up.  Equal hashes (a `ListSet` bucket) are left in insertion order.
    """
    def fragments(k: K) -> tuple[int, ...]:
        h = improve(hash_fn(k))
        return tuple((h >> s) & 0x1F for s in range(0, _HASH_BITS, _BITS))

    return sorted(_unique(keys), key=fragments)


def immutable_set_order(keys: Iterable[K], hash_fn: Callable[[K], int], scala: str = "2.13") -> list[K]:
    """Iteration order of `keys.toSet` (or of adding them one by one to an empty `immutable.Set`)."""
    unique = _unique(keys)
    if len(unique) <= SMALL_SET_MAX:
        return unique
    return champ_order(unique, hash_fn) if scala == "2.13" else trie_order_212(unique, hash_fn)


# -- mutable (2.13) ----------------------------------------------------------------------------------


def mutable_table_size(adds: int, initial: int = MUTABLE_INITIAL_CAPACITY) -> int:
    """Table length of a 2.13 `mutable.HashSet`/`HashMap` after `adds` calls to `add`/`put`.

    It grows before adding, when `size + 1 >= 0.75 * length`, even if the element is already there;
    the caller passes the number of calls, not of distinct elements, when they differ.
    """
    length = initial
    for size in range(adds):
        if size + 1 >= int(length * MUTABLE_LOAD_FACTOR):
            length *= 2
    return length


def mutable_hash_order(keys: Sequence[K], hash_fn: Callable[[K], int], table_size: int | None = None) -> list[K]:
    """Iteration order of a 2.13 `mutable.HashSet`/`HashMap` after adding `keys` one by one."""
    unique = _unique(keys)
    length = table_size if table_size is not None else mutable_table_size(len(unique))
    decorated = []
    for i, k in enumerate(unique):
        h = hash_fn(k) & _MASK
        h ^= h >> 16
        decorated.append((h & (length - 1), to_int32(h), i, k))
    decorated.sort(key=lambda d: d[:3])
    return [d[3] for d in decorated]


# -- the keys Kafka's tools use ---------------------------------------------------------------------


def _tp_hash(tp: object) -> int:
    return topic_partition_hash(tp.topic, tp.partition)  # type: ignore[attr-defined]


def string_champ_order(keys: Iterable[str]) -> list[str]:
    return champ_order(keys, string_hash)


def string_set_order(keys: Iterable[str], scala: str = "2.13") -> list[str]:
    return immutable_set_order(keys, string_hash, scala)


def int_set_order(keys: Iterable[int], scala: str = "2.13") -> list[int]:
    return immutable_set_order(keys, int_hash, scala)


def topic_partition_set_order(parts: Iterable[K], scala: str = "2.13") -> list[K]:
    """`toSet` of `TopicPartition`s (anything with `.topic` and `.partition`)."""
    return immutable_set_order(parts, _tp_hash, scala)


def topic_partition_mutable_order(parts: Sequence[K]) -> list[K]:
    """A 2.13 `mutable.HashSet`/`HashMap` of `TopicPartition`s filled one by one."""
    return mutable_hash_order(parts, _tp_hash)


def _spread(h: int) -> int:
    """2.13 mutable tables' `improveHash`: `h ^ (h >>> 16)`."""
    u = h & 0xFFFFFFFF
    return to_int32(u ^ (u >> 16))


class ScalaHashTable:
    """Bucket layout of Scala 2.13's `mutable.HashMap`/`mutable.HashSet` (default capacity 16, load 0.75).

    Only iteration order matters to us: buckets in index order, each sorted by improved hash, ties in
    insertion order.  `put` replaces an equal key in place; `add_all_unchecked` mirrors `addAll` of an
    immutable HashSet, which sizes the table from the collection's size but skips the per-element
    growth check.
    """

    __slots__ = ("table", "threshold", "size")

    def __init__(self) -> None:
        self.table: list[list[tuple[int, Hashable, object]] | None] = [None] * 16
        self.threshold = 12
        self.size = 0

    def _grow(self, new_len: int) -> None:
        old = self.table
        self.table = [None] * new_len
        self.threshold = int(new_len * 0.75)
        mask = new_len - 1
        for bucket in old:
            if bucket:
                for node in bucket:
                    idx = node[0] & mask
                    slot = self.table[idx]
                    if slot is None:
                        self.table[idx] = [node]
                    else:
                        slot.append(node)

    def size_hint(self, n: int) -> None:
        cap = int((n + 1) / 0.75)
        target = min(_highest_one_bit(max(cap - 1, 4)) * 2, 1 << 30)
        if target > len(self.table):
            self._grow(target)

    def put(self, key: Hashable, hash_code: int, value: object = None, *, check_growth: bool = True) -> bool:
        """Insert or replace; returns True when the key was new."""
        if check_growth and self.size + 1 >= self.threshold:
            self._grow(len(self.table) * 2)
        h = _spread(hash_code)
        idx = h & (len(self.table) - 1)
        bucket = self.table[idx]
        if bucket is None:
            self.table[idx] = [(h, key, value)]
            self.size += 1
            return True
        i = 0
        n = len(bucket)
        while i < n and bucket[i][0] <= h:
            if bucket[i][0] == h and bucket[i][1] == key:
                bucket[i] = (h, key, value)
                return False
            i += 1
        bucket.insert(i, (h, key, value))
        self.size += 1
        return True

    def items(self) -> list[tuple[Hashable, object]]:
        return [(node[1], node[2]) for bucket in self.table if bucket for node in bucket]

    def keys(self) -> list[Hashable]:
        return [node[1] for bucket in self.table if bucket for node in bucket]

    def values(self) -> list[Any]:
        return [node[2] for bucket in self.table if bucket for node in bucket]


def _highest_one_bit(n: int) -> int:
    return 1 << (n.bit_length() - 1) if n > 0 else 0


def scala_hash_order(items: Iterable[tuple[Hashable, int]]) -> list[Hashable]:
    """Keys in the order a Scala 2.13 mutable hash table built by successive adds iterates them."""
    table = ScalaHashTable()
    for key, hash_code in items:
        table.put(key, hash_code)
    return table.keys()
