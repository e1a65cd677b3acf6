"""Planning, slice reading and the single-process scanner (no Spark).

The oracle is `kafkatool.log` read straight from an mmap, segment by segment; the scanner must see
exactly those batches and records whatever the split size, index state or filters.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafkatool.ops.scan import ScanSettings, iter_scan, payload_bytes, scan
from kafkatool.slices import storage
from kafkatool.slices.planning import (
    MIB,
    ScanFilter,
    ScanInputError,
    discover,
    effective_split_size,
    pack_slices,
    plan_slices,
)
from kafkatool.slices.reading import CorruptSegmentError, read_slice
from tests.support.spark import read_directly, write_log_dir

FIXTURE_DIRS = ("kafka-2.1.1", "kafka-0.10.2.1", "kafka-3.3.1-kraft", "github-iechenyb+data",
                "github-William0423+kafka", "github-tuyen-nnt+kafka_2.13-3.0.0")


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_log_dir(tmp_path_factory.mktemp("scan") / "logs")


def _direct(paths: list[Path]) -> list[tuple]:
    return sorted((t, p, s, pos, b.base_offset, b.last_offset, tuple(r)) for t, p, s, pos, b, r in read_directly(paths))


def _scanned(paths: list[Path], **kw) -> list[tuple]:  # type: ignore[no-untyped-def]
    out = iter_scan([str(p) for p in paths], ScanSettings(**kw))
    return sorted((t, p, s, pos, b.base_offset, b.last_offset, tuple(r)) for t, p, s, pos, b, _n, r in out)


def _records(rows: list[tuple], flt: ScanFilter) -> list:
    lo, ts = flt.min_offset or 0, flt.min_timestamp if flt.min_timestamp is not None else -2
    return [r for *_, recs in rows for r in recs if r.offset >= lo and r.timestamp >= ts]


@pytest.mark.parametrize("split", [700, 4096, 128 * MIB])
@pytest.mark.parametrize("use_index", [True, False])
def test_slices_read_every_batch_once(logs: Path, split: int, use_index: bool) -> None:
    assert _scanned([logs], split_size=split, use_index=use_index) == _direct([logs])


def test_big_segments_are_cut_on_index_positions(logs: Path) -> None:
    segments = discover([str(logs / "codecs-0")])
    slices = plan_slices(segments, 1500)
    assert len(slices) > len(segments)  # segments of ~8 KB become several slices each
    from kafkatool.log.index import OffsetIndex

    for s in slices:
        if s.start:
            index = OffsetIndex.open(Path(s.log[:-4] + ".index"))
            assert s.start in {e.position for e in index}


def test_real_broker_logs(kafka_logs: Path) -> None:
    paths = [kafka_logs / d for d in FIXTURE_DIRS]
    assert _scanned(paths, split_size=2048) == _direct(paths)


@pytest.mark.parametrize("case", ["v2-index-bad-position-0", "v2-index-trailing-zeros-0",
                                  "v2-timeindex-out-of-order-0", "v2-truncated-tail-0", "v0-truncated-tail-0"])
def test_damaged_indexes_and_torn_tails_read_like_a_walk(kafka_logs: Path, case: str) -> None:
    path = kafka_logs / "corrupt" / case
    assert _scanned([path], split_size=600) == _direct([path])
    first = min(r[4] for r in _direct([path]))
    ts = sorted(r.timestamp for *_, recs in _direct([path]) for r in recs)[len(_direct([path])) // 2]
    for flt in (ScanFilter(min_offset=first + 30), ScanFilter(min_timestamp=ts)):
        wanted = _records(_direct([path]), flt)
        assert wanted and _records(_scanned([path], split_size=600, flt=flt), flt) == wanted


def test_index_pointing_mid_batch_is_not_trusted(logs: Path, tmp_path: Path) -> None:
    copy = tmp_path / "plain-0"
    shutil.copytree(logs / "plain-0", copy)
    index = copy / "00000000000000000000.index"
    data = bytearray(index.read_bytes())
    for i in range(4, len(data), 8):  # every position 7 bytes off
        data[i : i + 4] = (int.from_bytes(data[i : i + 4], "big") + 7).to_bytes(4, "big")
    index.write_bytes(bytes(data))
    assert _scanned([copy], split_size=700) == _direct([copy])
    assert _scanned([copy], split_size=700, flt=ScanFilter(min_offset=40)) == [
        r for r in _direct([copy]) if r[5] >= 40
    ]


def test_corruption_policy(kafka_logs: Path) -> None:
    crc = kafka_logs / "corrupt" / "v2-crc-flip-0"
    with pytest.raises(CorruptSegmentError) as err:
        _scanned([crc], verify_crc=True)
    assert err.value.position == 641 and "CRC mismatch" in str(err.value)
    assert len(_scanned([crc], verify_crc=True, on_corrupt="skip")) == len(_direct([crc])) - 1
    flip = kafka_logs / "corrupt" / "v2-length-flip-0"
    with pytest.raises(CorruptSegmentError, match="position 1089: batch size 1073742168 runs past"):
        _scanned([flip], split_size=1024)
    skipped = _scanned([flip], split_size=1024, on_corrupt="skip")
    assert 0 < len(skipped) < 31
    zeros = kafka_logs / "corrupt" / "v2-trailing-zeros-0"
    with pytest.raises(CorruptSegmentError, match="record size 0"):
        _scanned([zeros])
    from kafkatool.log.records import BatchScan

    walked = sum(len(list(BatchScan(f.read_bytes()))) for f in zeros.glob("*.log"))
    assert len(_scanned([zeros], on_corrupt="skip")) == walked  # everything before the zeros


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    lo=st.one_of(st.none(), st.integers(0, 520)),
    hi=st.one_of(st.none(), st.integers(0, 520)),
    ts=st.one_of(st.none(), st.integers(1_700_000_000_000 - 10_000, 1_700_001_400_000)),
    split=st.sampled_from([600, 2000, 1 << 20]),
)
def test_pruning_never_loses_a_wanted_record(logs: Path, lo, hi, ts, split) -> None:  # type: ignore[no-untyped-def]
    """Segments and batches skipped by offset/timestamp bounds never hold a record inside them."""

    def wanted(r) -> bool:  # type: ignore[no-untyped-def]
        return (lo is None or r.offset >= lo) and (hi is None or r.offset <= hi) and (ts is None or r.timestamp >= ts)

    flt = ScanFilter(min_offset=lo, max_offset=hi, min_timestamp=ts)
    expected = sorted((t, p, r) for t, p, _s, _pos, _b, recs in read_directly([logs]) for r in recs if wanted(r))
    got = sorted(
        (t, p, r)
        for t, p, _s, _pos, _b, _n, recs in iter_scan([str(logs)], ScanSettings(split_size=split, flt=flt))
        for r in recs or ()
        if wanted(r)
    )
    assert got == expected


def test_pruning_reads_less(logs: Path) -> None:
    segments = discover([str(logs)])
    everything = sum(s.length for s in plan_slices(segments, 1 << 20))
    by_offset = plan_slices(segments, 1 << 20, ScanFilter(min_offset=200))
    assert sum(s.length for s in by_offset) < everything / 2
    assert any(s.start > 0 for s in by_offset)  # started inside a segment, from the index
    late = 1_700_000_000_000 + 55 * 20_000
    by_time = plan_slices(segments, 1 << 20, ScanFilter(min_timestamp=late, topics=frozenset({"plain"})))
    plain = sum(s.length for s in plan_slices(segments, 1 << 20, ScanFilter(topics=frozenset({"plain"}))))
    assert 0 < sum(s.length for s in by_time) < plain / 2
    assert plan_slices(segments, 1 << 20, ScanFilter(min_offset=10, max_offset=5)) == []
    assert {s.topic for s in plan_slices(segments, 1 << 20, ScanFilter(partitions=frozenset({1})))} == {"plain"}


def test_read_windows_smaller_than_batches(logs: Path) -> None:
    segments = discover([str(logs / "codecs-0")])
    for s in plan_slices(segments, 1 << 20):
        small = [(pos, b.raw()) for pos, b in read_slice(s, window=64)]
        assert small == [(pos, b.raw()) for pos, b in read_slice(s)]


def test_summary_counts(logs: Path) -> None:
    rows = {(r["topic"], r["partition"]): r for r in scan([str(logs)]).summary_rows()}
    direct = list(read_directly([logs]))
    txn = rows[("txn", 0)]
    assert (txn["txn_markers"], txn["txn_aborts"]) == (30, 8)
    for (topic, part), row in rows.items():
        mine = [(b, recs) for t, p, _s, _pos, b, recs in direct if (t, p) == (topic, part)]
        data = [r for b, recs in mine if not b.is_control for r in recs]
        assert row["batches"] == len(mine)
        assert row["bytes"] == sum(b.size for b, _ in mine)
        assert row["records"] == sum(len(recs) for _, recs in mine)
        assert row["last_offset"] == max(b.last_offset for b, _ in mine)
        assert row["tombstones"] == sum(r.value is None for r in data)
        keyed = [r for r in data if r.key is not None]
        assert row["distinct_keys"] == len({r.key for r in keyed})
        assert row["reclaimable_records"] == len(keyed) - row["distinct_keys"]
        latest: dict[bytes, int] = {}
        for r in sorted(keyed, key=lambda r: r.offset):
            latest[r.key] = payload_bytes(r)
        assert row["reclaimable_bytes"] == sum(payload_bytes(r) for r in keyed) - sum(latest.values())
    codecs = rows[("codecs", 0)]
    assert codecs["compression_ratio"] > 1 and codecs["uncompressed_bytes"] > codecs["bytes"]
    assert rows[("plain", 0)]["compression_ratio"] == 1.0


def test_keys_and_timeline(logs: Path) -> None:
    acc = scan([str(logs)])
    top = acc.key_rows(5)
    assert [r["records"] for r in top] == sorted((r["records"] for r in top), reverse=True)
    by_bytes = acc.key_rows(3, by="payload_bytes")
    assert by_bytes[0]["payload_bytes"] == max(r["payload_bytes"] for r in acc.key_rows(10_000))
    timeline = acc.timeline_rows()
    data = [r for t, _p, _s, _pos, b, recs in read_directly([logs]) if not b.is_control for r in recs]
    assert sum(r["records"] for r in timeline) == len(data)
    legacy_v0 = [r for r in timeline if r["minute_ms"] is None]
    assert legacy_v0 and legacy_v0[0]["topic"] == "legacy"
    assert all(r["minute_ms"] % 60_000 == 0 for r in timeline if r["minute_ms"] is not None)


def test_discovery(logs: Path, tmp_path: Path) -> None:
    everything = discover([str(logs)])
    assert {(s.topic, s.partition) for s in everything} == {
        ("plain", 0), ("plain", 1), ("codecs", 0), ("txn", 0), ("legacy", 0)
    }
    one = discover([str(logs / "plain-0" / "00000000000000000000.log")])
    assert len(one) == 1 and one[0].next_base == everything[[s.log for s in everything].index(one[0].log) + 1].base_offset
    assert discover([str(logs / "plain-0"), str(logs)]) == everything  # overlapping paths: no duplicates
    assert discover(["file://" + str(logs)]) == [
        s.__class__(**{**s.__dict__, "log": "file://" + s.log}) for s in everything
    ]
    shutil.copytree(logs / "txn-0", tmp_path / "txn-0.0123456789abcdef0123456789abcdef-delete")
    (tmp_path / "loose").mkdir()
    shutil.copy(logs / "txn-0" / "00000000000000000000.log", tmp_path / "loose")
    with pytest.raises(ScanInputError, match="no Kafka segments"):
        discover([str(tmp_path)])
    with pytest.raises(ScanInputError, match="directory is not named"):
        discover([str(tmp_path / "loose" / "00000000000000000000.log")])
    with pytest.raises(ScanInputError, match="not a segment file"):
        discover([str(logs / "plain-0" / "00000000000000000000.index")])
    with pytest.raises(FileNotFoundError):
        discover([str(tmp_path / "missing")])


def test_file_uri_reads_through_pyarrow(logs: Path) -> None:
    uri = "file://" + str(logs)
    got = [(t, p, pos, tuple(r)) for t, p, _s, pos, _b, _n, r in iter_scan([uri], ScanSettings(split_size=900))]
    want = [(t, p, pos, tuple(r)) for t, p, _s, pos, _b, _n, r in iter_scan([str(logs)], ScanSettings(split_size=900))]
    assert got == want
    assert storage.read_all(uri + "/txn-0/00000000000000000000.log") == (logs / "txn-0" / "00000000000000000000.log").read_bytes()


def test_sizes_and_packing() -> None:
    assert effective_split_size([2000 * MIB], 128 * MIB, 8) == 128 * MIB
    assert effective_split_size([1000 * MIB], 128 * MIB, 16) == -(-1004 * MIB // 16)
    assert effective_split_size([1000 * MIB], 128 * MIB, None) == 128 * MIB
    assert effective_split_size([10 * MIB], 128 * MIB, 2) == 7 * MIB
    assert effective_split_size([1000] * 10, 128 * MIB, 100) == 4 * MIB  # never below the open cost
    from kafkatool.slices.planning import Slice

    slices = [Slice("t", 0, f"/x/{i:020d}.log", i, 0, size) for i, size in enumerate([100 * MIB, 3, 5, 60 * MIB, 70 * MIB])]
    groups = pack_slices(slices, 128 * MIB)
    assert sorted(s.log for g in groups for s in g) == sorted(s.log for s in slices)
    assert all(sum(max(s.length, 4 * MIB) for s in g) <= 128 * MIB or len(g) == 1 for g in groups)
    assert len(groups) == 3


def test_headers_only_skips_the_bytes_of_big_batches(tmp_path: Path) -> None:
    import random

    from kafkatool.log.codecs import Codec
    from kafkatool.log.record import Record
    from kafkatool.log.writer import SegmentWriter, encode_v2_batch
    from kafkatool.slices import reading

    rng = random.Random(3)
    writer = SegmentWriter(tmp_path / "big-0", 0, index_interval=4096)
    offset = 0
    for i in range(12):  # big and small batches, some compressed
        n = 3 if i % 3 else 1
        size = 400_000 if i % 2 else 900
        recs = [Record(offset + j, 1_700_000_000_000 + offset + j, b"k", rng.randbytes(size), ()) for j in range(n)]
        data = encode_v2_batch(recs, codec=Codec.LZ4 if i % 4 == 1 else Codec.NONE)
        writer.append(data, recs[-1].offset, recs[-1].timestamp, recs[-1].offset)
        offset += n
    writer.close()
    slices = plan_slices(discover([str(tmp_path / "big-0")]), 1 << 20)
    assert len(slices) > 1

    def headers(**kw):  # type: ignore[no-untyped-def]
        return [(pos, b.base_offset, b.last_offset, b.size, b.crc, b.count, b.max_timestamp, b.codec)
                for s in slices for pos, b in reading.read_slice(s, **kw)]

    assert headers(headers_only=True) == headers() and len(headers()) == 12
    assert headers(headers_only=True, flt=ScanFilter(min_offset=10)) == headers(flt=ScanFilter(min_offset=10))
    reads: list[int] = []
    original = storage.RangeReader.read

    def counting(self, start: int, length: int) -> bytes:  # type: ignore[no-untyped-def]
        data = original(self, start, length)
        reads.append(len(data))
        return data

    storage.RangeReader.read = counting  # type: ignore[method-assign]
    try:
        headers(headers_only=True)
    finally:
        storage.RangeReader.read = original  # type: ignore[method-assign]
    assert sum(reads) < 0.1 * sum(s.length for s in slices)
