"""Java's `hashCode()` of the keys Kafka's tools put in hash tables, and int32 wrapping.

Every Java and Scala hash table orders its entries by a function of the key's `hashCode()` (Scala:
`##`, the same for strings, boxed ints and Java objects), so reproducing the order of Kafka's output
starts here: `String.hashCode` over UTF-16 code units, `Integer.hashCode`, and
`org.apache.kafka.common.TopicPartition.hashCode`, all as wrapping 32-bit Java ints.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable


def to_int32(v: int) -> int:
    """Wrap to a signed 32-bit Java int."""
    v &= 0xFFFFFFFF
    return v - (1 << 32) if v & 0x80000000 else v


def to_int64(v: int) -> int:
    """Wrap to a signed 64-bit Java long."""
    v &= 0xFFFFFFFFFFFFFFFF
    return v - (1 << 64) if v >> 63 else v


@functools.lru_cache(maxsize=1 << 16)
def string_hash(s: str) -> int:
    """`String.hashCode()`: s[0]*31^(n-1) + … over UTF-16 code units, as a Java int."""
    h = 0
    units = map(ord, s) if s.isascii() or max(map(ord, s)) < 0x10000 else _utf16_units(s)
    for unit in units:
        h = (31 * h + unit) & 0xFFFFFFFF
    return to_int32(h)


def _utf16_units(s: str) -> Iterable[int]:
    for ch in s:
        c = ord(ch)
        if c < 0x10000:
            yield c
        else:
            c -= 0x10000
            yield 0xD800 + (c >> 10)
            yield 0xDC00 + (c & 0x3FF)


def topic_partition_hash(topic: str, partition: int) -> int:
    """`org.apache.kafka.common.TopicPartition.hashCode()`: 31 * (31 + partition) + topic.hashCode()."""
    return to_int32(31 * (31 + partition) + string_hash(topic))


def int_hash(v: int) -> int:
    """`Integer.hashCode()` (and Scala's `Int.##`): the value itself."""
    return to_int32(v)


def string_hash_or_zero(text: str | None) -> int:
    """`Objects.hashCode` of a possibly-null string."""
    return 0 if text is None else string_hash(text)
