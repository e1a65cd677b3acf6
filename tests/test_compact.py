"""`compact`: the offset map, the cleaner's rules on generated logs, and the command line.

Logs are written with the project's own writer (`kafkatool.log.writer`); properties are checked against
a plain model of the cleaner's rules (latest record per key, tombstones until their horizon, aborted
data gone, offsets and order unchanged) rather than against the implementation.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from kafkatool.log.codecs import Codec
from kafkatool.log.files import MappedFile, list_segments, segment_name
from kafkatool.log.index import AbortedTxn, encode_txn_index
from kafkatool.log.record import Record
from kafkatool.log.records import BatchScan, iter_batches
from kafkatool.log.writer import SegmentWriter, encode_control_record, encode_legacy_batch, encode_v2_batch
from kafkatool.ops.compact import (
    CompactConfig,
    CompactInputError,
    compact_partition,
    parse_config,
)
from kafkatool.ops.compact.offsetmap import OffsetMap, OffsetMapFullError, digests
from kafkatool.ops.dumplog import DumpOptions, dump_files

NOW = 1_800_000_000_000
REPO = Path(__file__).resolve().parents[1]


# ----------------------------------------------------------------------------------------------
# Building logs
# ----------------------------------------------------------------------------------------------


@dataclass
class BatchSpec:
    """A batch to write: records as (key, value) pairs, or a transaction marker."""

    records: list[tuple[bytes | None, bytes | None]] = field(default_factory=list)
    magic: int = 2
    codec: int = Codec.NONE
    producer_id: int = -1
    transactional: bool = False
    control: int | None = None  # 0 ABORT, 1 COMMIT
    timestamp: int | None = None


@dataclass
class Built:
    dir: Path
    records: list[Record]  # every data record written, in offset order
    batches: list[tuple[int, int, int, int]]  # (base, last, magic, codec) of every batch written
    active_base: int


def build_log(partition_dir: Path, segments: list[list[BatchSpec]], *, start_offset: int = 0,
              ts0: int = NOW - 3_600_000, aborted: list[AbortedTxn] | None = None) -> Built:
    """Write segments of batches (the last segment is the active one) with consecutive offsets.

    `aborted` entries go into the `.txnindex` of the segment holding their marker (last_offset).
    """
    partition_dir.mkdir(parents=True, exist_ok=True)
    offset = start_offset
    all_records: list[Record] = []
    batches: list[tuple[int, int, int, int]] = []
    bases = []
    for seg in segments:
        base = offset
        bases.append(base)
        w = SegmentWriter(partition_dir, base, index_interval=256)
        for spec in seg:
            ts = spec.timestamp if spec.timestamp is not None else ts0 + offset
            if spec.control is not None:
                k, v = encode_control_record(spec.control, 3)
                recs = [Record(offset, ts, k, v, ())]
                data = encode_v2_batch(recs, offset, producer_id=spec.producer_id, producer_epoch=0,
                                       is_transactional=True, is_control=True)
            else:
                recs = [Record(offset + i, ts + i, k, v, ()) for i, (k, v) in enumerate(spec.records)]
                if spec.magic >= 2:
                    data = encode_v2_batch(
                        recs, offset, codec=spec.codec, producer_id=spec.producer_id,
                        producer_epoch=0 if spec.producer_id >= 0 else -1,
                        base_sequence=offset if spec.producer_id >= 0 else -1,
                        is_transactional=spec.transactional,
                    )
                else:
                    if spec.magic == 0:
                        recs = [r._replace(timestamp=-1) for r in recs]
                    data = encode_legacy_batch(recs, magic=spec.magic, codec=spec.codec)
                all_records.extend(recs)
            last = recs[-1].offset
            w.append(data, last, max(r.timestamp for r in recs), last)
            batches.append((offset, last, spec.magic, spec.codec))
            offset = last + 1
        w.close()
    for txn in aborted or []:
        holder = max(b for b in bases if b <= txn.last_offset)
        path = partition_dir / segment_name(holder, ".txnindex")
        path.write_bytes((path.read_bytes() if path.exists() else b"") + encode_txn_index([txn]))
    mtime = (ts0 / 1000)
    for f in partition_dir.iterdir():
        os.utime(f, (mtime, mtime))
    return Built(partition_dir, all_records, batches, bases[-1])


def read_log(partition_dir: Path) -> tuple[list[tuple], list]:
    """(data records as tuples, batches) of every segment, checking CRCs and framing on the way."""
    recs: list[tuple] = []
    batches = []
    for s in list_segments(partition_dir):
        with MappedFile(s.log) as mf:
            scan = BatchScan(mf.buf)
            for b in scan:
                assert b.is_valid(), f"{s.log}: bad CRC at {b.position}"
                batches.append(b)
                if b.is_control:
                    continue
                for r in b.records():
                    recs.append((r.offset, r.key, r.value))
            assert scan.error is None and scan.trailing_bytes == 0
    return recs, batches


def concat_logs(partition_dir: Path) -> bytes:
    return b"".join(s.log.read_bytes() for s in list_segments(partition_dir))


def latest_per_key(records: list[tuple], end: int) -> list[tuple]:
    """The model: of records below `end`, the last one of each key (tombstones included)."""
    last: dict[bytes, int] = {}
    for off, k, _v in records:
        if off < end and k is not None:
            last[k] = off
    keep = set(last.values())
    return [r for r in records if r[0] >= end or r[0] in keep]


def assert_kafka_readable(partition_dir: Path) -> None:
    """dump-log reads every segment deeply and verifies every index against its log."""
    logs = [str(s.log) for s in list_segments(partition_dir)]
    out, err = io.BytesIO(), io.BytesIO()
    res = dump_files(logs, DumpOptions(deep_iteration=True), out, err)
    assert res.exit_code == 0 and not res.problems, (res.problems, err.getvalue()[:500])
    indexes = [str(p) for p in sorted(partition_dir.iterdir()) if p.suffix in (".index", ".timeindex")]
    out, err = io.BytesIO(), io.BytesIO()
    res = dump_files(indexes, DumpOptions(verify_index_only=True), out, err)
    assert res.exit_code == 0, err.getvalue()[:1000]
    for problem in res.problems:
        # Kafka's own tool reports this on the real cleaner's output too (fixture kafka-3.3.1-kraft/
        # compacted-0/00000000000000000180.timeindex): an emptied batch keeps its max timestamp, which
        # the time index records, but has no record to show it.  Anything else is a real mismatch.
        assert problem.kind == "timestamp_mismatch", problem
        ts = _emptied_batch_timestamps(Path(problem.file).with_suffix(".log"))
        assert any(f"Index timestamp: {t}, log timestamp: -1" in err.getvalue().decode() for t in ts), problem
    out, err = io.BytesIO(), io.BytesIO()
    res = dump_files(indexes, DumpOptions(index_sanity_check=True), out, err)
    assert res.exit_code == 0, err.getvalue()[:1000]
    # offsets strictly increase across the whole partition; batches stay inside their segment's range
    segs = list_segments(partition_dir)
    prev = -1
    for i, s in enumerate(segs):
        nxt = segs[i + 1].base_offset if i + 1 < len(segs) else 2**63
        with MappedFile(s.log) as mf:
            for b in iter_batches(mf.buf):
                assert s.base_offset <= b.base_offset and b.last_offset < nxt
                offsets = [r.offset for r in b.records()] or [b.base_offset]
                # a v0/v1 wrapper's own offset is its last record's; a v2 batch spans base..last
                first = offsets[0] if b.magic < 2 else b.base_offset
                assert prev < first <= min(offsets) and max(offsets) <= b.last_offset
                prev = b.last_offset


def _emptied_batch_timestamps(log: Path) -> set[int]:
    with MappedFile(log) as mf:
        return {b.max_timestamp for b in iter_batches(mf.buf) if b.magic >= 2 and b.count == 0}


CFG = CompactConfig(segment_bytes=1500, delete_retention_ms=60_000, policy_confirmed=True)


# ----------------------------------------------------------------------------------------------
# The offset map
# ----------------------------------------------------------------------------------------------


def _model_fill(keys: list[bytes], capacity: int) -> tuple[int, dict[bytes, int]]:
    model: dict[bytes, int] = {}
    for i, k in enumerate(keys):
        if len(model) >= capacity:
            return i, model
        model[k] = i
    return len(keys), model


@settings(max_examples=60, deadline=None)
@given(
    keys=st.lists(st.integers(0, 300).map(lambda i: b"key-%d" % i), min_size=1, max_size=600),
    slots=st.integers(2, 400),
    chunk=st.integers(1, 250),
)
def test_offset_map_matches_a_dict_and_stops_where_kafka_does(keys, slots, chunk):
    omap = OffsetMap(24 * slots)
    stop, model = _model_fill(keys, omap.max_entries)
    consumed = 0
    for c in range(0, len(keys), chunk):
        part = keys[c : c + chunk]
        k = omap.put_until_full(digests(part), np.arange(c, c + len(part)))
        consumed += k
        if k < len(part):
            break
    assert consumed == stop
    assert omap.size == len(model) <= omap.max_entries
    assert omap.get_many(digests(list(model))).tolist() == list(model.values())
    assert omap.get(b"never-put") == -1


def test_offset_map_accounting_is_kafkas():
    omap = OffsetMap(128 * 1024 * 1024)
    assert omap.slots == 128 * 1024 * 1024 // 24 == 5592405
    assert omap.max_entries == int(5592405 * 0.9)
    assert omap.memory <= 128 * 1024 * 1024
    with pytest.raises(ValueError):
        OffsetMap(24)  # one slot at 90% cannot hold a key
    small = OffsetMap(24 * 3)
    small.put(b"a", 1)
    small.put(b"b", 2)
    assert small.is_full
    small.put(b"a", 7)  # updates never fail
    assert small.get(b"a") == 7
    with pytest.raises(OffsetMapFullError):
        small.put(b"c", 3)
    small.clear()
    assert small.size == 0 and small.get(b"a") == -1


# ----------------------------------------------------------------------------------------------
# The cleaner's rules on generated logs
# ----------------------------------------------------------------------------------------------

KEYS = [b"k%d" % i for i in range(8)]

record_st = st.tuples(
    st.one_of(st.sampled_from(KEYS), st.sampled_from(KEYS), st.just(None)),
    st.one_of(st.binary(min_size=0, max_size=40), st.just(None)),
)
codec_v2 = st.sampled_from([Codec.NONE, Codec.NONE, Codec.GZIP, Codec.LZ4, Codec.SNAPPY, Codec.ZSTD])
codec_legacy = st.sampled_from([Codec.NONE, Codec.NONE, Codec.GZIP, Codec.LZ4, Codec.SNAPPY])


@st.composite
def logs(draw):
    magic = draw(st.sampled_from([2, 2, 2, 1, 0]))
    codecs = codec_v2 if magic == 2 else codec_legacy
    n_segments = draw(st.integers(2, 6))
    segments = []
    for _ in range(n_segments):
        batches = []
        for _ in range(draw(st.integers(1, 4))):
            recs = draw(st.lists(record_st, min_size=1, max_size=6))
            codec = draw(codecs)
            if magic < 2 and codec == Codec.NONE:  # v0/v1 uncompressed: one message a batch
                batches.extend(BatchSpec([r], magic) for r in recs)
            else:
                batches.append(BatchSpec(recs, magic, codec))
        segments.append(batches)
    return segments


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(segments=logs())
def test_compaction_keeps_the_latest_record_of_every_key(tmp_path_factory, segments):
    d = tmp_path_factory.mktemp("log") / "gen-0"
    built = build_log(d, segments)
    before = [(r.offset, r.key, r.value) for r in built.records]
    batch_format = {off: (m, c) for base, last, m, c in built.batches for off in range(base, last + 1)}

    res = compact_partition(d, CFG, now_ms=NOW)
    assert res.cleaned and res.end_offset == built.active_base == res.first_uncleanable_offset
    after, batches = read_log(d)
    # offsets and order unchanged, nothing invented, records below the end follow the model
    assert after == latest_per_key(before, res.end_offset)
    # magic and codec kept: every record sits in a batch of its original format
    for b in batches:
        if b.count == 0:
            continue
        m, c = batch_format[b.last_offset if b.magic < 2 else b.base_offset]
        assert (b.magic, b.codec) == (m, c)
    assert_kafka_readable(d)
    assert (d.parent / "cleaner-offset-checkpoint").read_text() == f"0\n1\ngen 0 {res.end_offset}\n"

    # idempotent: a second pass over the same range, at the same time, changes no byte of the log
    image = concat_logs(d)
    again = compact_partition(d, CFG, now_ms=NOW, first_dirty_offset=0)
    assert again.cleaned and concat_logs(d) == image
    assert read_log(d)[0] == after


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(segments=logs())
def test_v2_tombstones_go_once_their_delete_horizon_passes(tmp_path_factory, segments):
    assume(segments[0][0].magic == 2)
    d = tmp_path_factory.mktemp("log") / "tomb-0"
    built = build_log(d, segments)
    res = compact_partition(d, CFG, now_ms=NOW)
    first, batches = read_log(d)
    # the first clean stamps a delete horizon on every batch that keeps a tombstone
    for b in batches:
        if any(r.value is None for r in b.records()) and b.base_offset < res.end_offset:
            assert b.delete_horizon_ms == NOW + CFG.delete_retention_ms
    # just before the horizon nothing changes; at the horizon the tombstones below the end go
    compact_partition(d, CFG, now_ms=NOW + CFG.delete_retention_ms - 1, first_dirty_offset=0)
    assert read_log(d)[0] == first
    compact_partition(d, CFG, now_ms=NOW + CFG.delete_retention_ms, first_dirty_offset=0)
    expected = [r for r in first if r[2] is not None or r[0] >= built.active_base]
    assert read_log(d)[0] == expected
    assert_kafka_readable(d)


def test_legacy_tombstones_follow_the_age_of_their_segment(tmp_path):
    d = tmp_path / "old-0"
    segs = [
        [BatchSpec([(b"a", b"1")], 1), BatchSpec([(b"b", None)], 1)],
        [BatchSpec([(b"c", b"2")], 1), BatchSpec([(b"d", None)], 1)],
        [BatchSpec([(b"e", b"3")], 1)],
    ]
    build_log(d, segs)
    cfg = CompactConfig(delete_retention_ms=60_000)
    # first clean: no clean section yet, so the horizon is 0 and every tombstone stays
    res = compact_partition(d, cfg, now_ms=NOW, until_offset=2)
    assert res.end_offset == 2 and res.legacy_delete_horizon_ms == 0
    assert [r[0] for r in read_log(d)[0]] == [0, 1, 2, 3, 4]
    # second clean: horizon = mtime of the last clean segment - delete.retention.ms
    seg0, seg2 = d / segment_name(0, ".log"), d / segment_name(2, ".log")
    os.utime(seg0, (NOW / 1000, NOW / 1000))
    os.utime(seg2, ((NOW - 60_000) / 1000, (NOW - 60_000) / 1000))  # exactly at the horizon: discarded
    res = compact_partition(d, cfg, now_ms=NOW)
    assert res.legacy_delete_horizon_ms == NOW - 60_000
    assert [r[0] for r in read_log(d)[0]] == [0, 1, 2, 4]  # b (young segment) stays, d goes


def test_min_compaction_lag_leaves_young_segments_alone(tmp_path):
    d = tmp_path / "lag-0"
    segs = [[BatchSpec([(b"a", b"1"), (b"a", b"2")])]] * 4 + [[BatchSpec([(b"z", b"z")])]]
    built = build_log(d, segs, ts0=NOW - 10_000)
    # segment i holds timestamps NOW-10000+2i, +2i+1: with a lag of 9996 ms segments 2.. are too young
    res = compact_partition(d, CompactConfig(min_compaction_lag_ms=9_996), now_ms=NOW)
    assert res.first_uncleanable_offset == 4 and res.end_offset == 4
    assert [r[0] for r in read_log(d)[0]] == [3, 4, 5, 6, 7, 8]  # a@1 superseded by a@3; 4..7 untouched
    assert built.active_base == 8


def test_a_small_map_cleans_up_to_where_it_fills_and_repeated_runs_converge(tmp_path):
    d = tmp_path / "small-0"
    segs = [[BatchSpec([(b"k%d" % ((i * 7 + j) % 23), b"v%d" % j) for j in range(5)])] for i in range(12)]
    built = build_log(d, segs + [[BatchSpec([(b"end", b"x")])]])
    before = [(r.offset, r.key, r.value) for r in built.records]
    cfg = CompactConfig(dedupe_buffer_size=24 * 12)  # 10 keys
    res = compact_partition(d, cfg, now_ms=NOW)
    assert res.map_full and res.map_entries == 10 and 0 < res.end_offset < built.active_base
    after = read_log(d)[0]
    by_key: dict[bytes, list[int]] = {}
    for off, k, _ in before:
        by_key.setdefault(k, []).append(off)
    kept = {r[0] for r in after}
    for off, k, _ in after:  # a kept record below the end is the last of its key below the end
        if off < res.end_offset:
            assert not [o for o in by_key[k] if off < o < res.end_offset]
    for offs in by_key.values():  # the last of each key below the end is kept, or superseded by a kept one
        below = [o for o in offs if o < res.end_offset]
        if below:
            assert below[-1] in kept or any(o in kept for o in offs if o > below[-1])
    runs = 1
    while res.end_offset < built.active_base:
        res = compact_partition(d, cfg, now_ms=NOW)
        runs += 1
        assert runs < 20
    assert read_log(d)[0] == latest_per_key(before, built.active_base)
    assert_kafka_readable(d)


def test_groups_merge_small_segments_up_to_segment_bytes(tmp_path):
    d = tmp_path / "grp-0"
    segs = [[BatchSpec([(b"k", b"x" * 200)])] for _ in range(6)] + [[BatchSpec([(b"z", b"z")])]]
    build_log(d, segs)
    sizes = [s.log.stat().st_size for s in list_segments(d)]
    res = compact_partition(d, CompactConfig(segment_bytes=sizes[0] * 2), now_ms=NOW)
    assert [g.sources for g in res.groups] == [[0, 1], [2, 3], [4, 5]]
    assert [s.base_offset for s in list_segments(d)] == [0, 2, 4, 6]
    assert read_log(d)[0] == [(5, b"k", b"x" * 200), (6, b"z", b"z")]
    # the emptied groups merge on the next pass (empty segments always fit)
    res = compact_partition(d, CompactConfig(segment_bytes=sizes[0] * 2), now_ms=NOW, first_dirty_offset=0)
    assert [g.sources for g in res.groups] == [[0, 2, 4]]
    assert [s.base_offset for s in list_segments(d)] == [0, 6]


def test_dry_run_reports_exactly_what_a_real_run_does_and_writes_nothing(tmp_path):
    segs = [[BatchSpec([(b"k%d" % (i % 5), b"v" * i) for i in range(j, j + 7)], codec=Codec.GZIP)]
            for j in range(0, 42, 7)]
    a, b = tmp_path / "a" / "t-0", tmp_path / "b" / "t-0"
    build_log(a, segs)
    build_log(b, segs)
    before = {p.name: p.read_bytes() for p in a.iterdir()}
    dry = compact_partition(a, CFG, now_ms=NOW, dry_run=True)
    assert {p.name: p.read_bytes() for p in a.iterdir()} == before
    assert not (a.parent / "cleaner-offset-checkpoint").exists() and not (a.parent / ".lock").exists()
    real = compact_partition(b, CFG, now_ms=NOW)
    assert dry.groups == real.groups and dry.stats == real.stats and dry.end_offset == real.end_offset
    assert real.stats.bytes_written == sum(s.log.stat().st_size for s in list_segments(b)[:-1])


# ----------------------------------------------------------------------------------------------
# Transactions and producer state
# ----------------------------------------------------------------------------------------------

PID = 7


def _txn_log(d: Path) -> Built:
    """pid 7: txn A {a,b} COMMIT; txn B {a,c} ABORT; plain b, d; then txn C {e} COMMIT in the active segment."""
    segs = [
        [BatchSpec([(b"a", b"A1"), (b"b", b"A2")], producer_id=PID, transactional=True),
         BatchSpec(control=1, producer_id=PID)],
        [BatchSpec([(b"a", b"B1"), (b"c", b"B2")], producer_id=PID, transactional=True),
         BatchSpec(control=0, producer_id=PID)],
        [BatchSpec([(b"b", b"P1"), (b"d", b"P2")])],
        [BatchSpec([(b"e", b"C1")], producer_id=PID, transactional=True), BatchSpec(control=1, producer_id=PID)],
    ]
    return build_log(d, segs, aborted=[AbortedTxn(0, PID, 3, 5, 3)])


def _markers(d: Path) -> list[tuple[int, int, int | None]]:
    out = []
    for b in read_log(d)[1]:
        if b.is_control:
            out.append((b.base_offset, b.count, b.delete_horizon_ms))
    return out


def test_aborted_data_goes_and_markers_stay_until_their_horizon(tmp_path):
    d = tmp_path / "txn-0"
    _txn_log(d)
    res = compact_partition(d, CFG, now_ms=NOW)
    assert res.end_offset == 8 and res.stats.aborted_batches == 1
    # A: a@0 stays (B's a@3 is aborted, so not in the map), b@1 superseded by b@6; B's data is gone
    assert read_log(d)[0] == [(0, b"a", b"A1"), (6, b"b", b"P1"), (7, b"d", b"P2"), (8, b"e", b"C1")]
    # both markers stay: each transaction still had data in this pass; the abort is re-indexed
    assert _markers(d) == [(2, 1, None), (5, 1, None), (9, 1, None)]
    assert [p.name for p in d.iterdir() if p.suffix == ".txnindex"] == [segment_name(0, ".txnindex")]
    assert (d / segment_name(0, ".txnindex")).read_bytes() == encode_txn_index([AbortedTxn(0, PID, 3, 5, 3)])
    assert_kafka_readable(d)

    # second pass: the abort marker's transaction left no data: it stays, stamped with a horizon
    compact_partition(d, CFG, now_ms=NOW + 1, first_dirty_offset=0)
    horizon = NOW + 1 + CFG.delete_retention_ms
    assert _markers(d) == [(2, 1, None), (5, 1, horizon), (9, 1, None)]
    # past the horizon the marker goes (its aborted-txn entry with it); the commit of A stays (a@0 lives)
    compact_partition(d, CFG, now_ms=horizon, first_dirty_offset=0)
    assert _markers(d) == [(2, 1, None), (9, 1, None)]
    assert not [p for p in d.iterdir() if p.suffix == ".txnindex"]
    assert read_log(d)[0] == [(0, b"a", b"A1"), (6, b"b", b"P1"), (7, b"d", b"P2"), (8, b"e", b"C1")]


def test_the_producers_last_batch_stays_as_an_empty_batch(tmp_path):
    d = tmp_path / "idem-0"
    segs = [
        [BatchSpec([(b"a", b"1")], producer_id=5)],
        [BatchSpec([(b"a", b"2")], producer_id=5), BatchSpec([(b"a", b"3")], producer_id=6)],
        [BatchSpec([(b"a", b"4")]), BatchSpec([(b"b", b"5")])],
        [BatchSpec([(b"z", b"z")])],
    ]
    build_log(d, segs)
    compact_partition(d, CFG, now_ms=NOW)
    # a@4 supersedes 1..3, but each producer's last batch stays, emptied, with its sequence numbers;
    # producer 5's earlier batch goes
    assert [(b.base_offset, b.count, b.producer_id, b.base_sequence) for b in read_log(d)[1]] == [
        (1, 0, 5, 1), (2, 0, 6, 2), (3, 1, -1, -1), (4, 1, -1, -1), (5, 1, -1, -1)]
    assert read_log(d)[0] == [(3, b"a", b"4"), (4, b"b", b"5"), (5, b"z", b"z")]
    # once the producers have expired, their empty batches go too
    compact_partition(d, CFG, now_ms=NOW + CFG.producer_id_expiration_ms, first_dirty_offset=0)
    assert [(b.base_offset, b.count) for b in read_log(d)[1]] == [(3, 1), (4, 1), (5, 1)]


def test_the_last_batch_of_the_cleaned_range_stays_even_when_emptied(tmp_path):
    d = tmp_path / "last-0"
    segs = [[BatchSpec([(b"a", b"1")])], [BatchSpec([(None, b"keyless")])], [BatchSpec([(b"z", b"z")])]]
    build_log(d, segs)
    compact_partition(d, CFG, now_ms=NOW)
    # the keyless record goes, but its batch ends the cleaned range (next offset = 2) so it stays empty
    assert [(b.base_offset, b.last_offset, b.count) for b in read_log(d)[1]] == [(0, 0, 1), (1, 1, 0), (2, 2, 1)]


def test_an_open_transaction_stops_cleaning_at_its_first_offset(tmp_path):
    d = tmp_path / "open-0"
    segs = [
        [BatchSpec([(b"a", b"1"), (b"a", b"2")])],
        [BatchSpec([(b"b", b"1")], producer_id=PID, transactional=True)],
        [BatchSpec([(b"a", b"3")])],
        [BatchSpec([(b"z", b"z")])],
    ]
    build_log(d, segs)
    res = compact_partition(d, CFG, now_ms=NOW)
    assert res.first_uncleanable_offset == 2 and res.end_offset == 2
    assert [r[0] for r in read_log(d)[0]] == [1, 2, 3, 4]


def test_missing_abort_in_the_txn_index_is_refused(tmp_path):
    d = tmp_path / "bad-0"
    segs = [[BatchSpec([(b"a", b"1")], producer_id=PID, transactional=True), BatchSpec(control=0, producer_id=PID)],
            [BatchSpec([(b"z", b"z")])]]
    build_log(d, segs)  # no .txnindex entry for the abort
    with pytest.raises(Exception, match="transaction index lacks the aborted transaction"):
        compact_partition(d, CFG, now_ms=NOW)


# ----------------------------------------------------------------------------------------------
# Settings
# ----------------------------------------------------------------------------------------------


def test_config_uses_kafkas_names():
    cfg = parse_config(["segment.bytes=16384,delete.retention.ms=1000", "min.compaction.lag.ms=5",
                        "log.cleaner.dedupe.buffer.size=1048576", "retention.ms=1", "cleanup.policy=compact,delete"])
    assert (cfg.segment_bytes, cfg.delete_retention_ms, cfg.min_compaction_lag_ms, cfg.dedupe_buffer_size) == (
        16384, 1000, 5, 1048576)
    for bad, msg in [(["segment.bytes=x"], "not a valid number"), (["nope=1"], "not a setting"),
                     (["cleanup.policy=delete"], "never compacts"), (["segment.bytes=1"], "at least 14"),
                     (["log.cleaner.dedupe.buffer.size=24"], "too small"), (["segment.bytes"], "key=value")]:
        with pytest.raises(CompactInputError, match=msg):
            parse_config(bad)


# ----------------------------------------------------------------------------------------------
# The command line
# ----------------------------------------------------------------------------------------------


def kafkatool(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kafkatool", *args], capture_output=True, text=True,
                          env={**os.environ, **(env or {})}, timeout=120, cwd=REPO)


def test_cli_compacts_and_reports(tmp_path):
    d = tmp_path / "cli-0"
    _txn_log(d)
    p = kafkatool("compact", str(d), "--config", "segment.bytes=1500,delete.retention.ms=60000",
                  "--now", str(NOW), "--format", "json")
    assert p.returncode == 0, p.stderr
    [doc] = json.loads(p.stdout)
    assert doc["partition"] == "cli-0" and doc["end_offset"] == 8 and doc["stats"]["aborted_batches"] == 1
    assert doc["checkpoint_written"] and not doc["dry_run"]
    p = kafkatool("compact", str(d), "--now", str(NOW))
    assert p.returncode == 0 and "nothing to clean" in p.stdout


def test_cli_dry_run_text_and_estimate(tmp_path):
    d = tmp_path / "logs" / "est-0"
    _txn_log(d)
    before = concat_logs(d)
    p = kafkatool("compact", str(d), "--dry-run", "--now", str(NOW))
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith("Would clean est-0: offsets [0, 8)")
    assert "Would write cleaner-offset-checkpoint: est 0 8" in p.stdout
    assert concat_logs(d) == before
    p = kafkatool("compact", "--estimate", str(d.parent), "--now", str(NOW), "--format", "json")
    assert p.returncode == 0, p.stderr
    [row] = json.loads(p.stdout)
    assert row["partition"] == "est-0" and row["records"] == 8 and row["records_reclaimable"] == 3
    assert row["aborted_txn_bytes"] > 0 and row["distinct_keys"] == 3 and row["broker_would_clean"]
    p = kafkatool("compact", "--estimate", str(d), "--format", "csv", "--now", str(NOW))
    assert p.returncode == 0 and p.stdout.splitlines()[0].startswith("partition,segments,size_bytes")


def test_cli_errors_are_one_line_with_documented_codes(tmp_path):
    p = kafkatool("compact", str(tmp_path / "missing-0"))
    assert p.returncode == 2 and p.stderr.startswith("kafkatool: ") and p.stderr.count("\n") == 1
    p = kafkatool("compact", str(tmp_path), "--config", "segment.bytes=oops")
    assert p.returncode == 2 and "not a valid number" in p.stderr
    p = kafkatool("compact", str(tmp_path), "--format", "xml")
    assert p.returncode == 2
    d = tmp_path / "corrupt-0"
    build_log(d, [[BatchSpec([(b"a", b"1")])], [BatchSpec([(b"b", b"2")])]])
    log = d / segment_name(0, ".log")
    data = bytearray(log.read_bytes())
    data[-1] ^= 0xFF
    log.write_bytes(bytes(data))
    p = kafkatool("compact", str(d))
    assert p.returncode == 1 and "CRC" in p.stderr and "recover" in p.stderr and "Traceback" not in p.stderr
    p = kafkatool("compact", "--estimate", str(d))
    assert p.returncode == 1 and "CRC" in p.stdout


def test_keyless_data_means_not_a_compacted_topic_unless_confirmed(tmp_path):
    d = tmp_path / "plain-0"
    build_log(d, [[BatchSpec([(None, b"1"), (None, b"2")])], [BatchSpec([(b"k", b"3")])]])
    before = concat_logs(d)
    p = kafkatool("compact", str(d), "--now", str(NOW))
    assert p.returncode == 2 and "2 keyless records" in p.stderr and "cleanup.policy=compact" in p.stderr
    assert concat_logs(d) == before
    p = kafkatool("compact", str(d), "--now", str(NOW), "--dry-run")
    assert p.returncode == 0 and "Warning: 2 keyless records" in p.stdout
    p = kafkatool("compact", str(d), "--now", str(NOW), "--config", "cleanup.policy=compact")
    assert p.returncode == 0 and "keyless records removed: 2" in p.stdout
    meta = tmp_path / "__cluster_metadata-0"
    build_log(meta, [[BatchSpec([(None, b"1")])], [BatchSpec([(None, b"2")])]])
    p = kafkatool("compact", str(meta), "--config", "cleanup.policy=compact")
    assert p.returncode == 2 and "__cluster_metadata is not a compacted topic" in p.stderr


def test_cli_refuses_while_the_log_dir_is_locked(tmp_path):
    d = tmp_path / "locked-0"
    build_log(d, [[BatchSpec([(b"a", b"1"), (b"a", b"2")])], [BatchSpec([(b"b", b"2")])]])
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time; from pathlib import Path; "
         "from kafkatool.ops.safety import LogDirLock\n"
         "with LogDirLock(Path(sys.argv[1])):\n print('locked', flush=True); time.sleep(60)", str(tmp_path)],
        stdout=subprocess.PIPE, text=True, cwd=REPO)
    try:
        assert holder.stdout.readline().strip() == "locked"
        before = concat_logs(d)
        p = kafkatool("compact", str(d), "--now", str(NOW))
        assert p.returncode == 3 and "locked" in p.stderr
        assert concat_logs(d) == before
        p = kafkatool("compact", str(d), "--now", str(NOW), "--dry-run")
        assert p.returncode == 0 and "a real run would refuse" in p.stdout
    finally:
        holder.kill()
        holder.wait()
