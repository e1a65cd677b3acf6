"""The JVM collection orders Kafka's tools print their rows in.

kafka-consumer-groups and ConsumerOffsetChecker print rows in the iteration order of the hash
collections they built them in: a member's partitions come out of a `java.util.HashSet`, unassigned
committed partitions out of a Scala `mutable.HashMap` (3.x) or a `java.util.HashMap` (4.x), each list
sorted by partition and rebuilt as a Scala immutable `Map` (insertion order up to 4 entries, CHAMP trie
order above); ConsumerOffsetChecker's brokers come out of a Scala 2.11 `mutable.HashMap[Int, _]`.
Those orders are reproduced here from the same hash codes (`TopicPartition.hashCode`).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

from kafkatool.jvm.hashing import topic_partition_hash
from kafkatool.jvm.java_collections import capacity_for_copy
from kafkatool.jvm.scala_collections import ScalaHashTable
from kafkatool.ops.offsets_report.rows import TP


def _i32(x: int) -> int:
    x &= 0xFFFFFFFF
    return x - (1 << 32) if x & 0x80000000 else x


def _tp_hash(tp: TP) -> int:
    return topic_partition_hash(tp[0], tp[1])


@functools.lru_cache(maxsize=1 << 17)
def _tp_spread(tp: TP) -> int:
    """`HashMap.hash` of a TopicPartition, unmasked (cached: a report orders every partition twice)."""
    h = topic_partition_hash(tp[0], tp[1]) & 0xFFFFFFFF
    return h ^ (h >> 16)


def _tp_hash_order(uniq: list[TP], capacity: int) -> list[TP]:
    """`jvm.java_collections.hash_order(uniq, _tp_hash, capacity)` for unique TopicPartitions: the same
    stable sort by bucket, one cached key a partition (a report of every group orders each of them)."""
    mask = capacity - 1
    spread = _tp_spread
    return sorted(uniq, key=lambda tp: spread(tp) & mask)


def java_hashset_order(items: Sequence[TP]) -> list[TP]:
    """Iteration order of `new java.util.HashSet<>(items)` (items in insertion order, duplicates dropped)."""
    uniq = list(dict.fromkeys(items))
    return _tp_hash_order(uniq, capacity_for_copy(len(uniq)))


def scala_mutable_map_order(items: Sequence[TP]) -> list[TP]:
    """Iteration order of a Scala 2.13 `mutable.HashMap` filled with items in this order."""
    table = ScalaHashTable()
    for tp in items:
        table.put(tp, _tp_hash(tp))
    return [k for k, _ in table.items()]  # type: ignore[misc]


def _champ_improve(h: int) -> int:
    """`scala.collection.Hashing.improve` (2.13), as an unsigned 32-bit value."""
    h = _i32(h + ~_i32(h << 9))
    h = _i32(h ^ ((h & 0xFFFFFFFF) >> 14))
    h = _i32(h + _i32(h << 4))
    h = _i32(h ^ ((h & 0xFFFFFFFF) >> 10))
    return h & 0xFFFFFFFF


def scala_immutable_map_order(items: Sequence[TP]) -> list[TP]:
    """Iteration order of a Scala 2.13 immutable `Map` built by adding items in this order.

    Up to four entries it is `Map1`..`Map4` (insertion order); above, a CHAMP trie: each node yields
    its own entries (by 5-bit hash fragment, low bits first) before descending into its sub-nodes
    (also by fragment); keys with equal hashes share a collision node in insertion order.
    """
    uniq = list(dict.fromkeys(items))
    if len(uniq) <= 4:
        return uniq
    hashed = [(_champ_improve(_tp_hash(tp)), tp) for tp in uniq]

    def walk(entries: list[tuple[int, TP]], shift: int) -> list[TP]:
        if shift >= 32:
            return [tp for _, tp in entries]
        frags: dict[int, list[tuple[int, TP]]] = {}
        for e in entries:
            frags.setdefault((e[0] >> shift) & 31, []).append(e)
        payload = [es[0][1] for f, es in sorted(frags.items()) if len(es) == 1]
        nodes: list[TP] = []
        for _, es in sorted(frags.items()):
            if len(es) > 1:
                nodes.extend(walk(es, shift + 5))
        return payload + nodes

    return walk(hashed, 0)


def scala211_int_map_order(keys: Sequence[int]) -> list[int]:
    """Iteration order of a Scala 2.11 `mutable.HashMap[Int, _]` (ConsumerOffsetChecker's broker map).

    Index = rotateRight(byteswap32(key), seed) >>> numberOfLeadingZeros(len - 1), entries prepended
    to their bucket, iteration from the last bucket down; the table doubles past 75% load.
    """

    def byteswap32(v: int) -> int:
        hc = _i32(v * 0x9E3775CD)
        hc = int.from_bytes((hc & 0xFFFFFFFF).to_bytes(4, "big"), "little")
        return _i32(hc * 0x9E3775CD)

    size = 16
    seed = bin(size - 1).count("1")  # fixed at construction, never updated on resize
    table: list[list[int]] = [[] for _ in range(size)]

    def index(k: int, n: int) -> int:
        x = byteswap32(k) & 0xFFFFFFFF
        r = ((x >> seed) | (x << (32 - seed))) & 0xFFFFFFFF
        return r >> (32 - (n - 1).bit_length())

    count = 0
    for k in dict.fromkeys(keys):
        table[index(k, size)].insert(0, k)
        count += 1
        if count > size * 750 // 1000:
            old = table
            size *= 2
            table = [[] for _ in range(size)]
            for bucket in reversed(old):
                for e in bucket:
                    table[index(e, size)].insert(0, e)
    return [k for bucket in reversed(table) for k in bucket]


def java_hashmap_order(items: Sequence[TP], initial_capacity: int | None = None) -> list[TP]:
    """Iteration order of a `java.util.HashMap` of TopicPartitions put in this order
    (`new HashMap<>()`, or `new HashMap<>(initial_capacity)`)."""
    from kafkatool.jvm.java_collections import DEFAULT_CAPACITY, grown_capacity, table_size_for

    uniq = list(dict.fromkeys(items))
    start = DEFAULT_CAPACITY if initial_capacity is None else table_size_for(max(initial_capacity, 1))
    return _tp_hash_order(uniq, grown_capacity(len(uniq), start))
