"""Spark for the tests (one local[2] session for the whole run) and generated log dirs to scan.

Import the fixtures into a test module (`from tests.support.spark import spark  # noqa: F401`);
they skip with the reason when pyspark, pyarrow or Java is missing.  The generated logs come from
the project's own writer and cover what the scanners must get right: several segments with indexes,
every codec, headers, tombstones, keyless records, transactions with commit and abort markers,
empty batches left by compaction, and v0/v1 messages with compressed wrappers.
"""

from __future__ import annotations

import random
import shutil
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from kafkatool.log.codecs import Codec
from kafkatool.log.files import MappedFile, list_segments
from kafkatool.log.record import Record
from kafkatool.log.records import Batch, iter_batches
from kafkatool.log.writer import (
    SegmentWriter,
    encode_control_record,
    encode_legacy_batch,
    encode_v2_batch,
)

BASE_TS = 1_700_000_000_000


@pytest.fixture(scope="session")
def spark():  # type: ignore[no-untyped-def]
    """One local[2] SparkSession for every Spark test (JVM log kept out of the test output)."""
    pytest.importorskip("pyspark")
    pytest.importorskip("pyarrow")
    pytest.importorskip("pandas")
    if shutil.which("java") is None and not _java_home():
        pytest.skip("no Java runtime: PySpark needs Java 17+")
    from kafkatool.spark.datasource import register
    from kafkatool.spark.session import spark_session

    conf = {"spark.sql.shuffle.partitions": "2", "spark.default.parallelism": "2"}
    with spark_session("local[2]", conf) as session:
        register(session.spark)
        yield session.spark


def _java_home() -> bool:
    import os

    return bool(os.environ.get("JAVA_HOME"))


@dataclass
class _Partition:
    """Writes batches into rolling segments of one partition dir."""

    dir: Path
    segment_bytes: int
    index_interval: int
    next_offset: int = 0
    writer: SegmentWriter | None = None

    def append(self, data: bytes, last_offset: int, max_ts: int, offset_of_max: int) -> None:
        if self.writer is None or self.writer.size + len(data) > self.segment_bytes and self.writer.size:
            if self.writer is not None:
                self.writer.close()
            self.writer = SegmentWriter(self.dir, self.next_offset, self.index_interval)
        self.writer.append(data, last_offset, max_ts, offset_of_max)
        self.next_offset = last_offset + 1

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()


def _v2(p: _Partition, recs: list[Record], **kw) -> None:  # type: ignore[no-untyped-def]
    data = encode_v2_batch(recs, **kw)
    last = kw.get("last_offset", recs[-1].offset if recs else p.next_offset)
    best = max(recs, key=lambda r: r.timestamp) if recs else None
    p.append(data, last, best.timestamp if best else -1, best.offset if best else last)


def _records(rng: random.Random, start: int, n: int, ts: int, keys: int, *, headers: bool = False,
             tombstones: float = 0.0, keyless: float = 0.0) -> list[Record]:
    out = []
    for i in range(n):
        key = None if rng.random() < keyless else f"key-{rng.randrange(keys):04d}".encode()
        text = f"payload {start + i} " * rng.randrange(0, 10)  # compressible, with a random tail
        value = None if key is not None and rng.random() < tombstones else text.encode() + rng.randbytes(rng.randrange(8))
        hdrs = (("trace", rng.randbytes(4)), ("empty", None)) if headers and i % 3 == 0 else ()
        # timestamps wander (CreateTime is not ordered), spanning several minutes
        out.append(Record(start + i, ts + rng.randrange(-5_000, 90_000), key, value, hdrs))
    return out


def write_log_dir(root: Path, seed: int = 7, batches: int = 60) -> Path:
    """A log dir with topics plain (2 partitions), codecs, txn and legacy; returns root."""
    rng = random.Random(seed)
    root.mkdir(parents=True, exist_ok=True)
    # plain: v2 uncompressed, headers, tombstones, keyless, an empty batch (as the cleaner leaves)
    for part in (0, 1):
        p = _Partition(root / f"plain-{part}", segment_bytes=6000, index_interval=300)
        ts = BASE_TS
        for i in range(batches):
            n = rng.randrange(1, 8)
            recs = _records(rng, p.next_offset, n, ts, 25, headers=True, tombstones=0.1, keyless=0.1)
            _v2(p, recs, partition_leader_epoch=3)
            ts += 20_000
            if i == batches // 2:
                start = p.next_offset
                _v2(p, [], base_offset=start, last_offset=start + 2, producer_id=9, producer_epoch=0)
        p.close()
    # codecs: every v2 codec, a gap in offsets
    p = _Partition(root / "codecs-0", segment_bytes=8000, index_interval=500)
    ts = BASE_TS
    for i in range(batches):
        codec = [Codec.NONE, Codec.GZIP, Codec.SNAPPY, Codec.LZ4, Codec.ZSTD][i % 5]
        recs = _records(rng, p.next_offset + (3 if i == 10 else 0), rng.randrange(1, 12), ts, 40)
        _v2(p, recs, codec=codec, timestamp_type=1 if i % 7 == 0 else 0)
        ts += 30_000
    p.close()
    # txn: transactional batches, commit and abort markers, idempotent sequences
    p = _Partition(root / "txn-0", segment_bytes=5000, index_interval=200)
    ts = BASE_TS
    seq = 0
    for i in range(batches // 2):
        recs = _records(rng, p.next_offset, 3, ts, 10)
        _v2(p, recs, producer_id=1000 + i % 3, producer_epoch=1, base_sequence=seq, is_transactional=True)
        seq += 3
        kind = 0 if i % 4 == 0 else 1
        key, value = encode_control_record(kind, coordinator_epoch=5)
        marker = [Record(p.next_offset, ts + 1000, key, value, ())]
        _v2(p, marker, producer_id=1000 + i % 3, producer_epoch=1, is_transactional=True, is_control=True)
        ts += 60_000
    p.close()
    # legacy: v1 plain and compressed wrappers, then v0 with and without compression
    p = _Partition(root / "legacy-0", segment_bytes=4000, index_interval=200)
    ts = BASE_TS
    for i in range(batches):
        magic = 1 if i < batches // 2 else 0
        codec = [Codec.NONE, Codec.GZIP, Codec.SNAPPY, Codec.LZ4][i % 4]
        n = 1 if codec == Codec.NONE else rng.randrange(2, 6)
        recs = _records(rng, p.next_offset, n, ts, 15)
        if magic == 0:
            recs = [r._replace(timestamp=-1) for r in recs]
        data = encode_legacy_batch(recs, magic=magic, codec=codec)
        best = max(recs, key=lambda r: r.timestamp)
        p.append(data, recs[-1].offset, best.timestamp, best.offset)
        ts += 15_000
    p.close()
    return root


def read_directly(paths: Sequence[Path]) -> Iterator[tuple[str, int, str, int, Batch, list[Record]]]:
    """Every batch and its records, straight from kafkatool.log (mmap, no planning): the oracle."""
    from kafkatool.log.files import parse_partition_dir

    dirs: list[Path] = []
    for path in paths:
        if path.is_dir() and any(path.glob("*.log")):
            dirs.append(path)
        else:
            dirs.extend(sorted(d for d in path.rglob("*") if d.is_dir() and any(d.glob("*.log"))))
    for d in dirs:
        parsed = parse_partition_dir(d.name)
        assert parsed is not None
        topic, partition = parsed
        for seg in list_segments(d):
            with MappedFile(seg.log) as m:
                buf = bytes(m.buf)
            for b in iter_batches(buf):
                yield topic, partition, str(seg.log), b.position, b, b.records()
