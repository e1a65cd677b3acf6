"""Kafka's wire encodings written out by hand, for tests that lay records out byte by byte.

Independent of kafkatool's own readers and encoders (`kafkatool.log.varint` & co.), so that a test
compares kafkatool with the protocol as specified, not with itself; and the fixed-seed damage
`mutations` the decoders' "never raises" tests feed them.
"""

from __future__ import annotations

import random
import struct
from collections.abc import Iterator, Sequence


def uvar(n: int) -> bytes:
    """UNSIGNED_VARINT."""
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def cstr(text: str | None) -> bytes:
    """COMPACT_(NULLABLE_)STRING: uvarint length + 1, 0 for null."""
    if text is None:
        return b"\x00"
    raw = text.encode()
    return uvar(len(raw) + 1) + raw


def cbytes(raw: bytes | None) -> bytes:
    """COMPACT_(NULLABLE_)BYTES."""
    return b"\x00" if raw is None else uvar(len(raw) + 1) + raw


def carray(items: list[bytes]) -> bytes:
    """COMPACT_ARRAY of already encoded items."""
    return uvar(len(items) + 1) + b"".join(items)


def tags(*fields: tuple[int, bytes]) -> bytes:
    """The tagged-field section: count, then (tag, size, bytes) in tag order."""
    return uvar(len(fields)) + b"".join(uvar(t) + uvar(len(b)) + b for t, b in fields)


NO_TAGS = tags()


def frame(api_key: int, version: int, body: bytes) -> bytes:
    """AbstractApiMessageSerde's frame: unsigned varints frame version 1, api key, version."""
    return uvar(1) + uvar(api_key) + uvar(version) + body


def i8(v: int) -> bytes:
    return struct.pack(">b", v)


def i16(v: int) -> bytes:
    return struct.pack(">h", v)


def i32(v: int) -> bytes:
    return struct.pack(">i", v)


def i64(v: int) -> bytes:
    return struct.pack(">q", v)


def int32s(*vals: int) -> bytes:
    """A compact array of int32."""
    return carray([i32(v) for v in vals])


def mutations(rng: random.Random, seeds: Sequence[bytes], count: int, min_edits: int = 0) -> Iterator[bytes]:
    """`count` damaged copies of the seeds: min_edits to 4 bytes overwritten or tails cut."""
    for _ in range(count):
        base = bytearray(rng.choice(seeds))
        for _ in range(rng.randint(min_edits, 4)):
            if base and rng.random() < 0.6:
                base[rng.randrange(len(base))] = rng.randrange(256)
            elif base:
                del base[rng.randrange(len(base)) :]
        yield bytes(base)
