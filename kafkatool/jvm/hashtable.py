"""The iteration order of `java.util.Properties`: Java 8's `Hashtable`, Java 9+'s `ConcurrentHashMap`.

The ZooKeeper-era tools (Kafka 2.1's kafka-topics.sh and kafka-configs.sh) read a config znode into
a `Properties` (`ConfigEntityZNode.decode`: `setProperty` in the znode's JSON order) and print it by
iterating it.  From Java 9 a `Properties` keeps its entries in a `ConcurrentHashMap` (`new
ConcurrentHashMap<>(8)`: 16 bins), so that is the order Kafka 2.1 prints on the JDKs it runs on
today (11, 17; a real 2.1.1 printed `compression.type=…,cleanup.policy=…,segment.bytes=…`):
`properties_order`.  On Java 8 a `Properties` is a `Hashtable` (`hashtable_order`): 11 buckets
at first, bucket `(hash & 0x7FFFFFFF) % capacity`, a new entry goes to the head of its bucket's
chain, the table is rehashed to `2 * capacity + 1` before an insert that finds `count >= threshold`
(`threshold = (int)(capacity * 0.75)`), and iteration walks buckets from the last to the first.
"""

from __future__ import annotations

from collections.abc import Iterable

from kafkatool.jvm.hashing import string_hash

INITIAL_CAPACITY = 11
LOAD_FACTOR = 0.75


def _index(key: str, capacity: int) -> int:
    return (string_hash(key) & 0x7FFFFFFF) % capacity


def properties_order(keys: Iterable[str]) -> list[str]:
    """Keys of a `Properties` filled by `setProperty` in this order, as Java 9+ iterates them."""
    from kafkatool.jvm.java_collections import concurrent_hash_order

    return concurrent_hash_order(list(keys), string_hash)


def hashtable_order(keys: Iterable[str]) -> list[str]:
    """Keys of a Java 8 `Hashtable` (or `Properties`) filled in this order, as iteration returns them."""
    capacity = INITIAL_CAPACITY
    table: list[list[str]] = [[] for _ in range(capacity)]  # each chain head-first
    count = 0
    seen: set[str] = set()
    for key in keys:
        if key in seen:
            continue  # an update keeps the entry where it is
        if count >= int(capacity * LOAD_FACTOR):
            new_capacity = capacity * 2 + 1
            new_table: list[list[str]] = [[] for _ in range(new_capacity)]
            for i in range(capacity - 1, -1, -1):  # rehash: old buckets from the end, each chain head-first
                for k in table[i]:
                    new_table[_index(k, new_capacity)].insert(0, k)
            capacity, table = new_capacity, new_table
        table[_index(key, capacity)].insert(0, key)
        seen.add(key)
        count += 1
    return [k for i in range(capacity - 1, -1, -1) for k in table[i]]
