"""The iteration order of Java's `HashMap`/`HashSet`, where Kafka's tools print or consume it.

Kafka's reassignment and election tools walk `HashMap`s and `HashSet`s: the order in which
`--generate` draws random numbers per topic, and the order of brokers, topics and partitions in
some printed lines, is the table's bucket order.  A `HashMap` iterates bucket by bucket
(`index = (h ^ h >>> 16) & (capacity - 1)`), and within a bucket in insertion order (resizing splits
buckets but keeps relative order), so the order is a stable sort by bucket index.  Bins that turn
into trees (8+ colliding keys in one bucket) are not modelled; names that collide that badly do not
occur in practice.  `ConcurrentHashMap` (Kafka's `Pool`) has the same buckets but grows earlier and
reorders a bucket's keys when it splits it (`concurrent_hash_order`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

from kafkatool.jvm.hashing import int_hash, string_hash

K = TypeVar("K")

DEFAULT_CAPACITY = 16
LOAD_FACTOR = 0.75


def table_size_for(cap: int) -> int:
    """`HashMap.tableSizeFor`: the next power of two ≥ cap (at least 1)."""
    n = 1
    while n < cap:
        n <<= 1
    return n


def grown_capacity(size: int, initial: int = DEFAULT_CAPACITY) -> int:
    """Table capacity after `size` puts into a map created with table capacity `initial`."""
    cap = initial
    while size > int(cap * LOAD_FACTOR):
        cap <<= 1
    return cap


def capacity_for_copy(size: int) -> int:
    """Capacity of `new HashSet<>(collection)` / `new HashMap<>(map)` holding `size` entries."""
    return grown_capacity(size, table_size_for(max(int(size / LOAD_FACTOR) + 1, DEFAULT_CAPACITY)))


def bucket(h: int, capacity: int) -> int:
    """`HashMap.hash` spread (h ^ h >>> 16), masked to the table."""
    h &= 0xFFFFFFFF
    return (h ^ (h >> 16)) & (capacity - 1)


def hash_order(keys: Sequence[K], hash_fn: Callable[[K], int], capacity: int | None = None) -> list[K]:
    """Iteration order of a `HashMap`/`HashSet` into which `keys` were inserted in this order.

    Duplicates keep their first position (a later put of an existing key does not move it).
    """
    seen: dict[K, None] = dict.fromkeys(keys)
    unique = list(seen)
    cap = capacity if capacity is not None else grown_capacity(len(unique))
    return [k for _, _, k in sorted((bucket(hash_fn(k), cap), i, k) for i, k in enumerate(unique))]


def string_set_order(keys: Sequence[str], capacity: int | None = None) -> list[str]:
    return hash_order(keys, string_hash, capacity)


def int_set_order(keys: Sequence[int], capacity: int | None = None) -> list[int]:
    return hash_order(keys, int_hash, capacity)


def concurrent_hash_order(keys: Sequence[K], hash_fn: Callable[[K], int]) -> list[K]:
    """Iteration order of a default `ConcurrentHashMap` into which `keys` were put in this order.

    A bin appends new keys, but a resize (when the count reaches 3/4 of the table) splits each bin
    as `transfer` does: the bin's trailing run of keys bound for the same half keeps its order, the
    keys before it are prepended one by one (so reversed) to their half.  Tree bins (8+ keys in a
    bin) are not modelled.
    """
    table: list[list[tuple[int, K]]] = [[] for _ in range(DEFAULT_CAPACITY)]
    seen: set[K] = set()
    for k in keys:
        if k in seen:
            continue
        seen.add(k)
        h = hash_fn(k) & 0xFFFFFFFF
        h = (h ^ (h >> 16)) & 0x7FFFFFFF
        table[h & (len(table) - 1)].append((h, k))
        n = len(table)
        if len(seen) >= n - (n >> 2):
            table = _chm_transfer(table)
    return [k for b in table for _, k in b]


def _chm_transfer(table: list[list[tuple[int, K]]]) -> list[list[tuple[int, K]]]:
    n = len(table)
    out: list[list[tuple[int, K]]] = [[] for _ in range(2 * n)]
    for i, nodes in enumerate(table):
        if not nodes:
            continue
        run = len(nodes) - 1  # start of the trailing run with one `hash & n` bit
        while run > 0 and (nodes[run - 1][0] & n) == (nodes[-1][0] & n):
            run -= 1
        low: list[tuple[int, K]] = []
        high: list[tuple[int, K]] = []
        (high if nodes[-1][0] & n else low).extend(nodes[run:])
        for node in nodes[:run]:
            (high if node[0] & n else low).insert(0, node)
        out[i], out[i + n] = low, high
    return out
