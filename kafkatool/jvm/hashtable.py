"""The iteration order of Java 8's `java.util.Hashtable` (and so of `java.util.Properties`).

The ZooKeeper-era tools (Kafka 2.1's kafka-topics.sh and kafka-configs.sh) read a config znode into
a `Properties` and print it by iterating it.  On Java 8 a `Properties` is a `Hashtable`: 11 buckets
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
    """Keys of a `Properties` filled by `setProperty` in this order, as iteration returns them."""
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
