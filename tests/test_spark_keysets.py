"""Packed key sets merge to what a dict of every task's keys says (no Spark needed).

The oracle is the plain definition `Scan.add` follows: a key read by several tasks counts once, and
its latest record is the one with the greatest (offset, payload bytes).  Keys are arbitrary bytes:
empty, with NUL bytes (leading, inside, trailing), of one length or many, up to and past the 8 bytes
that pack into one integer; each case also goes through a pickle round trip, as Spark ships them.
"""

from __future__ import annotations

import pickle
from array import array

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("numpy")

from kafkatool.spark.keysets import merge_count, pack  # noqa: E402

Chunk = dict[bytes, tuple[int, int]]  # key -> (offset, payload bytes) of its latest record in one task

LATEST = st.tuples(st.integers(-1, 2**62), st.integers(0, 2**40))
KEYS = st.one_of(
    st.binary(max_size=20),
    st.binary(min_size=7, max_size=9),  # around the one-integer width
    st.builds(lambda b, n: b + b"\x00" * n, st.binary(max_size=10), st.integers(0, 3)),  # trailing NULs
)


def _packed(chunk: Chunk):  # type: ignore[no-untyped-def]
    keys = list(chunk)
    part = pack(keys, array("q", (v[0] for v in chunk.values())), array("q", (v[1] for v in chunk.values())))
    return pickle.loads(pickle.dumps(part))


def _oracle(chunks: list[Chunk]) -> tuple[int, int]:
    merged: Chunk = {}
    for c in chunks:
        for k, v in c.items():
            if k not in merged or v > merged[k]:
                merged[k] = v
    return len(merged), sum(p for _, p in merged.values())


@settings(max_examples=300, deadline=None)
@given(st.lists(st.dictionaries(KEYS, LATEST, max_size=30), min_size=1, max_size=5))
def test_packed_then_merged_is_the_union(chunks: list[Chunk]) -> None:
    assert merge_count([_packed(c) for c in chunks]) == _oracle(chunks)


@settings(max_examples=200, deadline=None)
@given(st.lists(KEYS, min_size=1, max_size=25, unique=True), st.data())
def test_keys_shared_by_tasks_count_once_with_the_latest_record(
    pool: list[bytes], data: st.DataObject
) -> None:
    """Tasks drawing from one small pool: most keys are read by several tasks (ties on offset included)."""
    chunks = [
        data.draw(st.dictionaries(st.sampled_from(pool), st.tuples(st.integers(0, 3), st.integers(0, 3))))
        for _ in range(data.draw(st.integers(2, 4)))
    ]
    assert merge_count([_packed(c) for c in chunks]) == _oracle(chunks)


def test_keys_that_differ_only_in_nul_bytes_or_length_are_distinct() -> None:
    keys = [
        b"",
        b"\x00",
        b"\x00\x00",
        b"a",
        b"a\x00",
        b"\x00a",
        b"x" * 9,
        b"x" * 8 + b"\x00",
        b"x" * 8 + b"\x00\x00",
    ]
    one = {k: (i, 1) for i, k in enumerate(keys)}
    two = {k: (100 + i, 2) for i, k in enumerate(keys[::2])}
    assert merge_count([_packed(one)]) == (len(keys), len(keys))
    assert merge_count([_packed(one), _packed(two)]) == (len(keys), len(keys) + len(keys[::2]))


def test_no_keys() -> None:
    assert merge_count([_packed({})]) == (0, 0)
    assert merge_count([_packed({}), _packed({b"k": (1, 5)}), _packed({})]) == (1, 5)
