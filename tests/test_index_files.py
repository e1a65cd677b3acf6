"""Property tests of `.index`, `.timeindex` and `.txnindex`: encode/decode, and lookups against a
brute-force model (indexes long enough to exercise the broker's warm-section search)."""

from __future__ import annotations

import bisect
import random
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafkatool.log.codecs import Codec
from kafkatool.log.errors import CorruptIndexError
from kafkatool.log.index import (
    AbortedTxn,
    OffsetEntry,
    OffsetIndex,
    TimeEntry,
    TimeIndex,
    encode_offset_index,
    encode_time_index,
    encode_txn_index,
    read_txn_index,
)
from kafkatool.log.record import Record
from kafkatool.log.records import iter_batches
from kafkatool.log.writer import SegmentWriter, encode_v2_batch

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
INT32 = 2**31 - 1


@st.composite
def increasing(draw: st.DrawFn, start: int, max_size: int, max_step: int = 50) -> list[int]:
    """Strictly increasing keys; sometimes past 1024 entries so the warm tail (8 KiB) is searched first.

    Long lists come from a drawn seed (drawing 2,000 steps one by one would make hypothesis slow).
    """
    n = draw(st.one_of(st.integers(0, 40), st.integers(1000, max_size)))
    first = draw(st.integers(start, start + 100))
    rng = random.Random(draw(st.integers(0, 2**32)))
    out, cur = [], first
    for _ in range(n):
        out.append(cur)
        cur += rng.randint(1, max_step)
    return out


def _largest_le(keys: list[int], target: int) -> int:
    return bisect.bisect_right(keys, target) - 1


def _smallest_ge(keys: list[int], target: int) -> int:
    i = bisect.bisect_left(keys, target)
    return i if i < len(keys) else -1


@SETTINGS
@given(
    base=st.integers(0, 2**62),
    rel=increasing(0, 2200),
    targets=st.lists(st.integers(-100, 120_000), max_size=30),
    data=st.data(),
)
def test_offset_index_lookup_matches_model(base: int, rel: list[int], targets: list[int], data: st.DataObject) -> None:
    rng = random.Random(data.draw(st.integers(0, 2**32)))
    positions = sorted(rng.randint(0, INT32) for _ in rel)
    entries = [(base + r, p) for r, p in zip(rel, positions, strict=True)]
    raw = encode_offset_index(base, entries)
    assert len(raw) == 8 * len(entries)
    idx = OffsetIndex(raw, base)
    assert idx.entries == len(entries)
    assert [(e.offset, e.position) for e in idx] == entries
    assert idx.last_offset == (entries[-1][0] if entries else base)
    keys = [o for o, _ in entries]
    if keys:  # hit every entry exactly and every gap, plus the random targets
        targets = targets + [keys[0], keys[-1], keys[len(keys) // 2], keys[-1] + 1, keys[0] - 1]
    for t in targets:
        target = base + t if t >= 0 else base + t  # below base too
        slot = _largest_le(keys, target)
        assert idx.slot_for(target) == slot
        assert idx.slot_for(target, smallest_upper=True) == _smallest_ge(keys, target)
        assert idx.lookup(target) == (OffsetEntry(*entries[slot]) if slot >= 0 else OffsetEntry(base, 0))
    idx.sanity_check()
    assert idx.used_entries() == len(entries)


@SETTINGS
@given(
    base=st.integers(0, 2**62),
    ts=increasing(0, 2000, max_step=10_000),
    targets=st.lists(st.integers(-(2**40), 2**40), max_size=30),
)
def test_time_index_lookup_matches_model(base: int, ts: list[int], targets: list[int]) -> None:
    entries = [(t, base + 1 + i * 3) for i, t in enumerate(ts)]
    raw = encode_time_index(base, entries)
    idx = TimeIndex(raw, base)
    assert idx.entries == len(entries) and len(raw) == 12 * len(entries)
    assert [(e.timestamp, e.offset) for e in idx] == entries
    assert idx.last_entry() == (TimeEntry(*entries[-1]) if entries else TimeEntry(-1, base))
    if ts:
        targets = targets + [ts[0], ts[-1], ts[len(ts) // 2] + 1, ts[0] - 1, ts[-1] + 1]
    for target in targets:
        slot = _largest_le(ts, target)
        assert idx.slot_for(target) == slot
        assert idx.lookup(target) == (TimeEntry(*entries[slot]) if slot >= 0 else TimeEntry(-1, base))
    idx.sanity_check()
    assert idx.used_entries() == len(entries)


@SETTINGS
@given(n=st.integers(1, 50), zeros=st.integers(1, 50), base=st.integers(0, 2**40))
def test_preallocated_zero_tail_is_not_used(n: int, zeros: int, base: int) -> None:
    """A crashed broker leaves zero entries after the used ones: they end the used part."""
    off = OffsetIndex(encode_offset_index(base, [(base + 5 * (i + 1), 100 * i) for i in range(n)]) + bytes(8 * zeros), base)
    assert off.entries == n + zeros and off.used_entries() == n
    tim = TimeIndex(encode_time_index(base, [(1000 + i, base + i + 1) for i in range(n)]) + bytes(12 * zeros), base)
    assert tim.entries == n + zeros and tim.used_entries() == n


def test_offset_index_sanity_messages(tmp_path: Path) -> None:
    p = tmp_path / "00000000000000000100.index"
    p.write_bytes(encode_offset_index(100, [(150, 0), (99, 10)]))
    with pytest.raises(CorruptIndexError) as e:
        OffsetIndex.open(p).sanity_check()
    assert str(e.value) == (
        f"Corrupt index found, index file ({p.absolute()}) has non-zero size but the last offset is 99 which is "
        "less than the base offset 100."
    )
    p.write_bytes(encode_offset_index(100, [(150, 0)]) + b"\x00\x00\x00")
    with pytest.raises(CorruptIndexError) as e:
        OffsetIndex.open(p).sanity_check()
    assert str(e.value) == (
        f"Index file {p.absolute()} is corrupt, found 11 bytes which is neither positive nor a multiple of 8."
    )
    p.write_bytes(b"")
    idx = OffsetIndex.open(p)
    idx.sanity_check()
    assert idx.lookup(123) == OffsetEntry(100, 0) and idx.last_offset == 100


def test_time_index_sanity_messages(tmp_path: Path) -> None:
    p = tmp_path / "00000000000000000100.timeindex"
    p.write_bytes(encode_time_index(100, [(2000, 110), (1000, 120)]))
    with pytest.raises(CorruptIndexError) as e:
        TimeIndex.open(p).sanity_check()
    assert str(e.value) == (
        f"Corrupt time index found, time index file ({p.absolute()}) has non-zero size but the last timestamp is "
        "1000 which is less than the first timestamp 2000"
    )
    p.write_bytes(encode_time_index(100, [(1000, 110), (2000, 90)]))
    with pytest.raises(CorruptIndexError) as e:
        TimeIndex.open(p).sanity_check()
    assert str(e.value) == (
        f"Corrupt time index found, time index file ({p.absolute()}) has non-zero size but the last offset is 90 "
        "which is less than the first offset 100"
    )
    p.write_bytes(encode_time_index(100, [(1000, 110)]) + b"\x01")
    with pytest.raises(CorruptIndexError) as e:
        TimeIndex.open(p).sanity_check()
    assert str(e.value) == (
        f"Time index file {p.absolute()} is corrupt, found 13 bytes which is neither positive nor a multiple of 12."
    )


@settings(max_examples=300, deadline=None)
@given(data=st.binary(max_size=200), base=st.integers(0, 2**40), target=st.integers(-(2**41), 2**41))
def test_garbage_indexes_never_raise_other_errors(data: bytes, base: int, target: int) -> None:
    for cls in (OffsetIndex, TimeIndex):
        idx = cls(data, base)
        list(idx)
        idx.lookup(target)
        idx.used_entries()
        try:
            idx.sanity_check()
        except CorruptIndexError:
            pass
    try:
        read_txn_index(data)
    except CorruptIndexError:
        assert len(data) % 34


txns = st.builds(
    AbortedTxn,
    version=st.integers(-(2**15), 2**15 - 1),
    producer_id=st.integers(-(2**63), 2**63 - 1),
    first_offset=st.integers(-(2**63), 2**63 - 1),
    last_offset=st.integers(-(2**63), 2**63 - 1),
    last_stable_offset=st.integers(-(2**63), 2**63 - 1),
)


@SETTINGS
@given(entries=st.lists(txns, max_size=20), cut=st.integers(1, 33))
def test_txn_index_round_trip(entries: list[AbortedTxn], cut: int) -> None:
    raw = encode_txn_index(entries)
    assert len(raw) == 34 * len(entries)
    assert read_txn_index(raw) == entries
    if raw:
        with pytest.raises(CorruptIndexError, match="not a multiple of the 34-byte entry size"):
            read_txn_index(raw[:-cut])


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(
    sizes=st.lists(st.tuples(st.integers(1, 6), st.integers(0, 300)), min_size=1, max_size=40),
    interval=st.sampled_from([0, 64, 256, 4096]),
    codec=st.sampled_from(list(Codec)),
)
def test_segment_writer_indexes_find_every_record(
    tmp_path_factory: pytest.TempPathFactory, sizes: list[tuple[int, int]], interval: int, codec: int
) -> None:
    """Looking up any offset/timestamp in what SegmentWriter indexed lands at or before its batch."""
    d = tmp_path_factory.mktemp("seg")
    base = 1000
    w = SegmentWriter(d, base, interval)
    off, ts = base, 10_000
    spans: list[tuple[int, int, int]] = []  # (position, first offset, last offset)
    times: list[tuple[int, int]] = []  # (timestamp, offset)
    for n, vsize in sizes:
        recs = [Record(off + i, ts + i * 7, b"k", b"x" * vsize, ()) for i in range(n)]
        data = encode_v2_batch(recs, codec=codec)
        spans.append((w.size, off, off + n - 1))
        times.extend((r.timestamp, r.offset) for r in recs)
        w.append(data, recs[-1].offset, recs[-1].timestamp, recs[-1].offset)
        off += n
        ts += n * 7 + 3
    w.close()
    log = (d / "00000000000000001000.log").read_bytes()
    oidx = OffsetIndex.open(d / "00000000000000001000.index")
    tidx = TimeIndex.open(d / "00000000000000001000.timeindex")
    oidx.sanity_check()
    tidx.sanity_check()
    positions = {p for p, _, _ in spans}
    for e in oidx:  # since 2.0: a batch's last offset → the position where the batch starts
        assert e.position in positions
        assert next(last for p, _, last in spans if p == e.position) == e.offset
    for p, first, last in spans:
        for o in (first, last):
            entry = oidx.lookup(o)
            assert entry.position <= p
            found = next(b for b in iter_batches(log, entry.position) if b.last_offset >= o)
            assert found.position == p
    assert tidx.last_entry().timestamp == max(t for t, _ in times)
    for t, _o in times:
        e = tidx.lookup(t)
        assert e.timestamp <= t and e.offset <= max(oo for tt, oo in times if tt <= t)
