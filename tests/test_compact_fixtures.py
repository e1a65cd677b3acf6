"""`compact` against what real brokers' cleaners did (fixtures in ../shared/fixtures, never copied here).

- `cleaned/kafka-2.1.1`: a Kafka 2.1.1 broker cleaned three topics once (`before/` → `after/`).  An
  offline compact of a copy of `before/` with the same settings keeps exactly the records the broker kept
  (offset, key, value, timestamp, headers), under both rule sets; with `kafka_version="2.1"` every
  segment, index and time index file is the broker's byte for byte (gzip included: our gzip header
  carries the JVM's OS byte, 255).
- `kafka-logs/*/compacted*`, `old-compacted*`: brokers (0.10.2.1, 2.1.1, 3.3.1) had cleaned these up
  to their `cleaner-offset-checkpoint`.  Compacting the same range again must keep every record (and,
  for 3.3.1, every batch, including the emptied ones kept for producer state): the broker's output is
  a fixed point of our cleaner.
"""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from kafkatool.log.checkpoint import read_offset_checkpoint
from kafkatool.log.files import MappedFile, list_segments, parse_partition_dir
from kafkatool.log.records import iter_batches
from kafkatool.ops.compact import compact_partition, parse_config
from tests.conftest import require_fixtures
from tests.support.faults import copy_tree

# The broker's cleaner ran at 2026-11-21 19:03:40 UTC (log-cleaner.log); settings from the README.
CLEANER_RAN_AT = 1795287820000
TOPICS = {
    "cmp-plain": "delete.retention.ms=86400000",
    "cmp-gzip": "delete.retention.ms=86400000",
    "cmp-tomb-short": "delete.retention.ms=1000",
}
COMMON = "cleanup.policy=compact,segment.bytes=16384,min.cleanable.dirty.ratio=0.01,min.compaction.lag.ms=0"


def records(partition_dir: Path, below: int | None = None) -> list[tuple]:
    out = []
    for seg in list_segments(partition_dir):
        with MappedFile(seg.log) as mf:
            for b in iter_batches(mf.buf):
                for r in b.records():
                    if below is None or r.offset < below:
                        out.append((r.offset, r.key, r.value, r.timestamp, r.headers))
    return out


def batches(partition_dir: Path, below: int) -> list[tuple]:
    out = []
    for seg in list_segments(partition_dir):
        with MappedFile(seg.log) as mf:
            out += [(b.base_offset, b.last_offset, b.count, b.producer_id, b.is_control)
                    for b in iter_batches(mf.buf) if b.last_offset < below]
    return out


def _cleaned(tmp_path: Path, topic: str, version: str) -> tuple[Path, Path]:
    fixtures = require_fixtures() / "cleaned" / "kafka-2.1.1"
    work = copy_tree(fixtures / "before" / f"{topic}-0", tmp_path / "logs" / f"{topic}-0")
    cfg = replace(parse_config([COMMON, TOPICS[topic]]), kafka_version=version)
    res = compact_partition(work, cfg, now_ms=CLEANER_RAN_AT)
    broker_checkpoint = read_offset_checkpoint(fixtures / "after" / "cleaner-offset-checkpoint")
    assert res.cleaned and res.end_offset == broker_checkpoint[(topic, 0)]
    assert read_offset_checkpoint(work.parent / "cleaner-offset-checkpoint") == {(topic, 0): res.end_offset}
    return work, fixtures / "after" / f"{topic}-0"


@pytest.mark.parametrize("version", ["3", "2.1"])
@pytest.mark.parametrize("topic", sorted(TOPICS))
def test_keeps_exactly_the_records_the_2_1_broker_kept(tmp_path, topic, version):
    ours, broker = _cleaned(tmp_path, topic, version)
    mine, theirs = records(ours), records(broker)
    print(f"{topic} (rules {version}): {len(theirs)} records compared, "
          f"{sum(a == b for a, b in zip(mine, theirs, strict=False))} matched")
    assert len(mine) == len(theirs) and mine == theirs
    assert [s.base_offset for s in list_segments(ours)] == [s.base_offset for s in list_segments(broker)]


@pytest.mark.parametrize("topic", sorted(TOPICS))
def test_with_kafka_2_1_rules_the_files_are_the_brokers_byte_for_byte(tmp_path, topic):
    ours, broker = _cleaned(tmp_path, topic, "2.1")
    names = sorted(p.name for p in ours.iterdir() if p.suffix in (".log", ".index", ".timeindex", ".txnindex"))
    assert names == sorted(p.name for p in broker.iterdir() if p.suffix in (".log", ".index", ".timeindex"))
    for name in names:
        assert (ours / name).read_bytes() == (broker / name).read_bytes(), name


def _compacted_fixtures() -> list[str]:
    from tests.conftest import KAFKA_LOGS

    if not KAFKA_LOGS.is_dir():
        return ["(fixtures missing)"]
    out = []
    for tree in ("kafka-0.10.2.1", "kafka-2.1.1", "kafka-3.3.1-kraft"):
        for d in sorted((KAFKA_LOGS / tree).glob("*compacted*")):
            out.append(f"{tree}/{d.name}")
    return out


@pytest.mark.parametrize("rel", _compacted_fixtures())
def test_the_brokers_compacted_section_is_a_fixed_point(tmp_path, rel):
    kafka_logs = require_fixtures() / "kafka-logs"
    src = kafka_logs / rel
    topic, partition = parse_partition_dir(src.name)
    checkpoint = read_offset_checkpoint(src.parent / "cleaner-offset-checkpoint")[(topic, partition)]
    work = tmp_path / src.parent.name / src.name
    shutil.copytree(src, work, copy_function=shutil.copyfile)
    newest = max(b.max_timestamp for s in list_segments(work) for b in iter_batches(s.log.read_bytes()))
    version = "3" if "3.3.1" in rel else "2.1"
    cfg = replace(parse_config([]), kafka_version=version)
    before_records, before_batches = records(work, checkpoint), batches(work, checkpoint)
    res = compact_partition(work, cfg, now_ms=max(newest, 0) + 1000, first_dirty_offset=0, until_offset=checkpoint)
    assert res.end_offset == checkpoint and res.stats.records_read >= len(before_records)
    print(f"{rel}: {len(before_records)} records below {checkpoint} compared, "
          f"{sum(a == b for a, b in zip(records(work, checkpoint), before_records, strict=False))} matched")
    assert records(work, checkpoint) == before_records
    if version == "3":
        assert batches(work, checkpoint) == before_batches
