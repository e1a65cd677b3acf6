"""The iteration order of Scala 2.11/2.12 collections, which Kafka 2.x's Scala tools print.

Kafka 2.1.1 shipped for Scala 2.11.12 and 2.12.7, whose collections order alike (between those two
tags `mutable.HashTable.index` was only rewritten to the same value, `TraversableLike.groupBy` is
unchanged, `Map4 + entry` still makes a `HashMap`, `HashTrieMap` only got a faster `get0`):

* `immutable.Map`/`Set` of up to 4 entries (`Map1`..`Map4`, `Set1`..`Set4`) keep insertion order;
  from the 5th entry they are a `HashTrieMap`/`HashTrieSet`, whose iterator walks the 5-bit
  fragments of `improve(key.##)` from the lowest bits up, slot by slot
  (`scala_collections.trie_order_212`).  A map built from a `HashMap` (e.g. `MapLike.newBuilder`
  of a `HashTrieMap`) stays a `HashMap` even when smaller: the trie order at any size.
* `mutable.HashMap`/`HashSet` (`mutable.HashTable`, `FlatHashTable` for sets is not modelled): a
  power-of-two table of chains, 16 buckets at first; the bucket of a key is the top
  log2(length) bits of `rotateRight(byteswap32(key.##), seed)` where the seed is fixed when the
  table is created (`bitCount(15)` = 4) and never changes on resize; a new entry is put at the head
  of its chain; once the size passes `length * 750 / 1000` the table doubles, moving the old
  buckets from the last to the first, each chain from its head, to the heads of the new chains;
  iteration walks the buckets from the last to the first, each chain from its head.

Checked against the real scala-library 2.11 in tests/test_scala211_reassign_order.py.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Sequence
from typing import Any, TypeVar

from kafkatool.jvm.hashing import string_hash, to_int32, topic_partition_hash
from kafkatool.jvm.scala_collections import SMALL_SET_MAX, trie_order_212

K = TypeVar("K", bound=Hashable)

_MASK = 0xFFFFFFFF
INITIAL_SIZE = 16
LOAD_FACTOR = 750  # per mille
LOAD_FACTOR_DENOM = 1000
_SEED = bin(INITIAL_SIZE - 1).count("1")  # tableSizeSeed when the table is created


def byteswap32(v: int) -> int:
    """`scala.util.hashing.byteswap32`: multiply, reverse the bytes, multiply (32-bit, unsigned)."""
    hc = (v * 0x9E3775CD) & _MASK
    hc = int.from_bytes(hc.to_bytes(4, "big"), "little")
    return (hc * 0x9E3775CD) & _MASK


def _rotate_right(v: int, n: int) -> int:
    n &= 31
    return ((v >> n) | (v << (32 - n))) & _MASK if n else v


class MutableHashTable211:
    """The chains of a Scala 2.11/2.12 `mutable.HashMap` (`mutable.HashTable`), keys only.

    Only the order matters here: `put` of a new key adds it at the head of its chain (an existing key
    stays where it is), and `keys()` iterates as `foreach`/`iterator` do.
    """

    __slots__ = ("table", "size", "threshold", "_hash", "_present")

    def __init__(self, hash_fn: Callable[[Any], int]) -> None:
        self.table: list[list[Hashable]] = [[] for _ in range(INITIAL_SIZE)]  # each chain head-first
        self.size = 0
        self.threshold = INITIAL_SIZE * LOAD_FACTOR // LOAD_FACTOR_DENOM
        self._hash = hash_fn
        self._present: set[Hashable] = set()

    def _index(self, key: Hashable, length: int) -> int:
        improved = _rotate_right(byteswap32(self._hash(key) & _MASK), _SEED)
        bits = (length - 1).bit_length()
        return (improved >> (32 - bits)) & (length - 1)

    def put(self, key: Hashable) -> None:
        if key in self._present:
            return
        self._present.add(key)
        self.table[self._index(key, len(self.table))].insert(0, key)
        self.size += 1
        if self.size > self.threshold:
            self._resize(2 * len(self.table))

    def _resize(self, new_size: int) -> None:
        old = self.table
        self.table = [[] for _ in range(new_size)]
        for chain in reversed(old):
            for key in chain:
                self.table[self._index(key, new_size)].insert(0, key)
        self.threshold = new_size * LOAD_FACTOR // LOAD_FACTOR_DENOM

    def keys(self) -> list[Hashable]:
        return [k for chain in reversed(self.table) for k in chain]


def mutable_map_order(keys: Iterable[K], hash_fn: Callable[[K], int]) -> list[K]:
    """Keys of a 2.11/2.12 `mutable.HashMap` after `put`s in this order, as it iterates them."""
    table = MutableHashTable211(hash_fn)
    for k in keys:
        table.put(k)
    return table.keys()  # type: ignore[return-value]


def immutable_map_order(inserted: Sequence[K], hash_fn: Callable[[K], int], *, trie: bool = False) -> list[K]:
    """Keys of a 2.11/2.12 `immutable.Map` built by adding them in this order (`trie`: built from an
    empty `HashMap`, which never becomes a `Map1`..`Map4`)."""
    unique = list(dict.fromkeys(inserted))
    if len(unique) <= SMALL_SET_MAX and not trie:
        return unique
    return trie_order_212(unique, hash_fn)


# -- the keys Kafka's tools use ---------------------------------------------------------------------


def _tp_hash(tp: object) -> int:
    return topic_partition_hash(tp.topic, tp.partition)  # type: ignore[attr-defined]


def _int_hash(v: int) -> int:
    return to_int32(v)


def int_mutable_map_order(keys: Iterable[int]) -> list[int]:
    return mutable_map_order(keys, _int_hash)


def string_mutable_map_order(keys: Iterable[str]) -> list[str]:
    return mutable_map_order(keys, string_hash)


def topic_partition_mutable_map_order(parts: Iterable[K]) -> list[K]:
    """A 2.11/2.12 `mutable.HashMap` keyed by `TopicPartition` (anything with `.topic`, `.partition`)."""
    return mutable_map_order(parts, _tp_hash)


def topic_partition_map_order(inserted: Sequence[K], *, trie: bool = False) -> list[K]:
    return immutable_map_order(inserted, _tp_hash, trie=trie)


def string_map_order(inserted: Sequence[str]) -> list[str]:
    return immutable_map_order(inserted, string_hash)
