"""dump-log's worker processes: the same bytes as one process, continuity reports and damage included."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from kafkatool.ops import dumplog
from kafkatool.ops.dumplog import DumpOptions, dump_files
from kafkatool.ops.generate import GenerateSpec, generate_partition


def _dump(path: str, jobs: int, **kw) -> tuple[bytes, bytes, int]:  # type: ignore[no-untyped-def]
    out, err = io.BytesIO(), io.BytesIO()
    res = dump_files([path], DumpOptions(jobs=jobs, **kw), out, err)
    return out.getvalue(), err.getvalue(), res.exit_code


@pytest.fixture
def small_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(dumplog, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(dumplog, "PARALLEL_CHUNK_BYTES", 3000)
    monkeypatch.setattr(dumplog, "PARALLEL_CHUNK_BYTES_COMPRESSED", 2000)


@pytest.mark.parametrize("codec", ["none", "lz4"])
def test_workers_write_what_one_process_writes(tmp_path: Path, small_chunks: None, codec: str) -> None:
    res = generate_partition(tmp_path, GenerateSpec(records=3000, batch_records=7, codec=codec, segment_bytes=10**9))
    seg = str(res.partition_dir / "00000000000000000000.log")
    assert _dump(seg, 3, deep_iteration=True) == _dump(seg, 1, deep_iteration=True)


def test_gaps_across_chunk_boundaries_are_reported_like_one_process(tmp_path: Path, small_chunks: None) -> None:
    from kafkatool.log.record import Record
    from kafkatool.log.writer import encode_v2_batch

    # a compacted-looking log: every third offset is gone, inside batches and between them
    offsets = [o for o in range(6000) if o % 3]
    batches = [offsets[i : i + 9] for i in range(0, len(offsets), 9)]
    data = b"".join(
        encode_v2_batch([Record(o, 1_700_000_000_000 + o, b"k%d" % (o % 50), b"v" * 40, ()) for o in b], b[0])
        for b in batches
    )
    seg = tmp_path / "00000000000000000000.log"
    seg.write_bytes(data)
    for release, pairs in (("4.0", 1999), ("4.4", 2000)):  # 4.3 on: offset 0 is missing too (-1 -> 1)
        one = _dump(str(seg), 1, deep_iteration=True, kafka_release=release)
        assert one[1].count(b"is followed by") == pairs
        assert _dump(str(seg), 2, deep_iteration=True, kafka_release=release) == one


def test_damage_stops_at_the_same_line_with_the_same_error(tmp_path: Path, small_chunks: None) -> None:
    res = generate_partition(tmp_path, GenerateSpec(records=3000, batch_records=7, segment_bytes=10**9))
    seg = res.partition_dir / "00000000000000000000.log"
    data = bytearray(seg.read_bytes())
    data[len(data) // 2 + 70] ^= 0xFF  # inside some record in the middle
    data += b"\x00" * 500
    seg.write_bytes(bytes(data))
    assert _dump(str(seg), 2, deep_iteration=True) == _dump(str(seg), 1, deep_iteration=True)


@pytest.mark.parametrize("release", ["4.2", "4.3"])
def test_kafka43_continuity_from_minus_one_with_workers(tmp_path: Path, small_chunks: None, release: str) -> None:
    """Kafka 4.3 reports a segment not starting at offset 0 (`-1 is followed by BASE`) once, however the
    file is cut into chunks; 4.2 does not."""
    from kafkatool.log.record import Record
    from kafkatool.log.writer import SegmentWriter, encode_v2_batch

    offsets = [o for o in range(500, 3500) if o % 5]
    w = SegmentWriter(tmp_path / "t-0", 500)
    for i in range(0, len(offsets), 9):
        recs = [Record(o, 1_700_000_000_000 + o, b"k", b"v" * 20, ()) for o in offsets[i : i + 9]]
        w.append(encode_v2_batch(recs), recs[-1].offset, recs[-1].timestamp, recs[-1].offset)
    w.close()
    one = _dump(str(w.path), 1, deep_iteration=True, kafka_release=release)
    assert _dump(str(w.path), 3, deep_iteration=True, kafka_release=release) == one
    lines = one[1].decode().splitlines()
    assert ("  -1 is followed by 501" in lines) == (release == "4.3")
    gaps = sum(1 for a, b in zip(offsets, offsets[1:], strict=False) if b != a + 1)
    assert sum("is followed by" in line for line in lines) == gaps + (release == "4.3")
