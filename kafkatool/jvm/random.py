"""`java.util.Random`, bit for bit, so `reassign --generate --seed N` reproduces Kafka's tool.

Kafka's `AdminUtils` draws the start index and replica shift of every topic from one static
`java.util.Random`.  Seeding ours with N gives the assignment Kafka would have printed had its
generator been seeded with N: the 48-bit LCG (multiplier 0x5DEECE66D, increment 0xB), the seed
scrambling of `Random(long)` and `nextInt(bound)`'s power-of-two fast path and rejection loop.
"""

from __future__ import annotations

import os

from kafkatool.jvm.hashing import to_int32, to_int64

_MULTIPLIER = 0x5DEECE66D
_ADDEND = 0xB
_MASK = (1 << 48) - 1
_INT_MAX = 0x7FFFFFFF


class JavaRandom:
    """A `java.util.Random`: same seed, same sequence."""

    __slots__ = ("_seed",)

    def __init__(self, seed: int | None = None) -> None:
        if seed is None:  # Java mixes a seed uniquifier with nanoTime; any unpredictable value will do
            seed = int.from_bytes(os.urandom(8), "big", signed=True)
        self.set_seed(seed)

    def set_seed(self, seed: int) -> None:
        """`Random.setSeed`: scramble with the multiplier, keep 48 bits."""
        self._seed = (seed ^ _MULTIPLIER) & _MASK

    def next_bits(self, bits: int) -> int:
        """`Random.next(bits)`: advance the LCG, return the top `bits` bits as a Java int."""
        self._seed = (self._seed * _MULTIPLIER + _ADDEND) & _MASK
        return to_int32(self._seed >> (48 - bits))

    def next_int(self, bound: int | None = None) -> int:
        """`nextInt()` (any int) or `nextInt(bound)` in [0, bound)."""
        if bound is None:
            return self.next_bits(32)
        if bound <= 0:
            raise ValueError("bound must be positive")
        r = self.next_bits(31)
        m = bound - 1
        if bound & m == 0:  # a power of two: take the high bits
            return (bound * r) >> 31
        u = r
        while True:
            r = u % bound
            if u - r + m <= _INT_MAX:  # Java: `u - r + m < 0` is int overflow, i.e. a biased tail
                return r
            u = self.next_bits(31)

    def next_long(self) -> int:
        hi = self.next_bits(32)
        lo = self.next_bits(32)
        return to_int64((hi << 32) + lo)
