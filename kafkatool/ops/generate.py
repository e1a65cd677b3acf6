"""Generate realistic partition directories with the project's own writer.

Used by the README's first command (a log to dump without any cluster), by tests and benchmarks,
and by operators who want a throwaway log to try a command on.  Deterministic for a given seed.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path

from kafkatool.log.checkpoint import format_checkpoint
from kafkatool.log.codecs import CODEC_NAMES, Codec
from kafkatool.log.record import NO_SEQUENCE, TS_LOG_APPEND, Record
from kafkatool.log.writer import SegmentWriter, encode_control_record, encode_legacy_batch, encode_v2_batch

_new = tuple.__new__


@dataclass
class GenerateSpec:
    """What to generate: `records` records in batches of `batch_records`, rolled at `segment_bytes`."""

    topic: str = "demo"
    partition: int = 0
    records: int = 1000
    batch_records: int = 10
    magic: int = 2
    codec: str = "none"
    key_space: int = 100  # distinct keys; 0 = no keys
    value_bytes: int = 64
    tombstone_ratio: float = 0.0
    headers: bool = True
    transactional: bool = False
    abort_ratio: float = 0.0
    log_append_time: bool = False
    segment_bytes: int = 1024 * 1024
    index_interval: int = 4096
    start_timestamp: int = 1_700_000_000_000
    seed: int = 42


@dataclass
class GenerateResult:
    partition_dir: Path
    segments: list[int]
    records: int
    bytes: int


def _value(rng: random.Random, n: int, i: int) -> bytes:
    head = f"value-{i:08d}-".encode()
    return (head + rng.randbytes(max(0, (n - len(head) + 1) // 2)).hex().encode())[:n]


def generate_partition(log_dir: Path, spec: GenerateSpec) -> GenerateResult:
    """Write `<log_dir>/<topic>-<partition>/` with segments, indexes and checkpoints."""
    if spec.codec not in CODEC_NAMES:
        raise ValueError(f"unknown codec {spec.codec!r}: use one of {', '.join(CODEC_NAMES)}")
    codec = CODEC_NAMES[spec.codec]
    if spec.magic < 2 and (codec == Codec.ZSTD or spec.transactional):
        raise ValueError("zstd and transactions need message format v2 (--magic 2)")
    rng = random.Random(spec.seed)
    pdir = log_dir / f"{spec.topic}-{spec.partition}"
    if pdir.exists() and any(pdir.glob("*.log")):
        raise FileExistsError(f"{pdir} already holds segments: choose another log dir, topic or partition")
    pdir.mkdir(parents=True, exist_ok=True)
    offset = 0
    ts = spec.start_timestamp
    segments: list[int] = []
    writer: SegmentWriter | None = None
    total = 0
    producer_id = 1000 if spec.transactional else -1
    seq = 0
    while total < spec.records:
        if writer is None or writer.size >= spec.segment_bytes:
            if writer is not None:
                writer.close()
            writer = SegmentWriter(pdir, offset, spec.index_interval)
            segments.append(offset)
        n = min(spec.batch_records, spec.records - total)
        recs = []
        for i in range(n):
            o = offset + i
            key = f"key-{rng.randrange(spec.key_space):06d}".encode() if spec.key_space else None
            tomb = key is not None and rng.random() < spec.tombstone_ratio
            value = None if tomb else _value(rng, spec.value_bytes, o)
            headers = (("source", b"kafkatool-generate"),) if spec.headers and spec.magic >= 2 else ()
            recs.append(_new(Record, (o, ts + i, key, value, headers, NO_SEQUENCE, None, True)))
        ts += n
        if spec.magic >= 2:
            data = encode_v2_batch(
                recs,
                offset,
                codec=codec,
                timestamp_type=TS_LOG_APPEND if spec.log_append_time else 0,
                producer_id=producer_id,
                producer_epoch=0 if spec.transactional else -1,
                base_sequence=seq if spec.transactional else NO_SEQUENCE,
                is_transactional=spec.transactional,
                max_timestamp=ts - 1 if spec.log_append_time else None,
            )
            seq += n
        else:
            data = encode_legacy_batch(
                recs, magic=spec.magic, codec=codec, log_append_time=(ts - 1) if spec.log_append_time else None
            )
        writer.append(data, offset + n - 1, ts - 1, offset + n - 1)
        total += n
        offset += n
        if spec.transactional:
            ctype = 0 if rng.random() < spec.abort_ratio else 1
            k, v = encode_control_record(ctype, 0)
            marker = encode_v2_batch(
                [_new(Record, (offset, ts, k, v, (), NO_SEQUENCE, None, True))],
                offset,
                producer_id=producer_id,
                producer_epoch=0,
                is_transactional=True,
                is_control=True,
            )
            writer.append(marker, offset, ts, offset)
            offset += 1
            ts += 1
    assert writer is not None
    writer.close()
    size = sum((pdir / f"{b:020d}.log").stat().st_size for b in segments)
    (pdir / "leader-epoch-checkpoint").write_text(format_checkpoint([(0, 0)]))
    for name, value in (
        ("recovery-point-offset-checkpoint", offset),
        ("replication-offset-checkpoint", offset),
        ("log-start-offset-checkpoint", 0),
    ):
        (log_dir / name).write_text(format_checkpoint([(spec.topic, spec.partition, value)]))
    return GenerateResult(pdir, segments, total, size)
