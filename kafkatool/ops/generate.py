"""Generate realistic partition directories with the project's own writer.

Used by the README's first command (a log to dump without any cluster), by tests and benchmarks,
and by operators who want a throwaway log to try a command on.  Deterministic for a given seed.

A generated partition is what a broker would have written: segments with their indexes, a
`.txnindex` for every segment holding an ABORT marker, a leader-epoch-checkpoint, the log dir's
offset checkpoints with this partition merged into the entries they already hold, and, for
transactional data, a producer snapshot at every segment roll and at the log end.  (A broker also
writes empty snapshots for producers without ids; they say nothing, and are left out.)  So
`index verify` and `recover --dry-run` find nothing to say about freshly generated data.
"""

from __future__ import annotations

import os
import random
from dataclasses import dataclass
from pathlib import Path

from kafkatool.log.checkpoint import (
    read_offset_checkpoint,
    write_leader_epoch_checkpoint,
    write_offset_checkpoint,
)
from kafkatool.log.codecs import CODEC_NAMES, Codec
from kafkatool.log.errors import CheckpointError
from kafkatool.log.files import SNAPSHOT_SUFFIX, TXN_INDEX_SUFFIX, segment_name
from kafkatool.log.index import AbortedTxn, encode_txn_index
from kafkatool.log.record import NO_SEQUENCE, TS_LOG_APPEND, Record
from kafkatool.log.snapshot import ProducerSnapshotEntry, encode_producer_snapshot
from kafkatool.log.topics import topic_name_problem
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
    open_transaction: bool = False  # the last transaction gets no marker (a producer killed mid-transaction)
    log_append_time: bool = False
    segment_bytes: int = 1024 * 1024
    index_interval: int = 4096
    start_timestamp: int = 1_700_000_000_000
    seed: int = 42


class GenerateInputError(ValueError):
    """The spec asks for something no broker would write, or that would not fit (CLI exit 2)."""


@dataclass
class GenerateResult:
    partition_dir: Path
    segments: list[int]
    records: int
    bytes: int


def _value(rng: random.Random, n: int, i: int) -> bytes:
    head = f"value-{i:08d}-".encode()
    return (head + rng.randbytes(max(0, (n - len(head) + 1) // 2)).hex().encode())[:n]


JAVA_INT_MAX = 2**31 - 1
_CHECKPOINTS = ("recovery-point-offset-checkpoint", "replication-offset-checkpoint", "log-start-offset-checkpoint")
_PRODUCER_ID = 1000
_RECORD_OVERHEAD = 40  # key, header and varints of one v2 record beside its value, roughly


def check_spec(spec: GenerateSpec) -> None:
    """Refuse, with what is wrong, a spec no broker would have written (GenerateInputError)."""
    problem = topic_name_problem(spec.topic)
    if problem:
        raise GenerateInputError(f"--topic: {problem}")
    checks = (
        (0 <= spec.partition <= JAVA_INT_MAX, f"--partition {spec.partition}: must be from 0 to {JAVA_INT_MAX}"),
        (spec.records >= 1, f"--records {spec.records}: must be at least 1"),
        (1 <= spec.batch_records <= JAVA_INT_MAX, f"--batch-records {spec.batch_records}: must be from 1 to {JAVA_INT_MAX}"),
        (spec.magic in (0, 1, 2), f"--magic {spec.magic}: must be 0, 1 or 2"),
        (spec.key_space >= 0, f"--key-space {spec.key_space}: must be at least 1 (or 0 for keyless records)"),
        (0 <= spec.value_bytes <= JAVA_INT_MAX, f"--value-bytes {spec.value_bytes}: must be from 0 to {JAVA_INT_MAX}"),
        (0.0 <= spec.tombstone_ratio <= 1.0, f"--tombstones {spec.tombstone_ratio}: must be a fraction from 0 to 1"),
        (0.0 <= spec.abort_ratio <= 1.0, f"--abort-ratio {spec.abort_ratio}: must be a fraction from 0 to 1"),
        (1 <= spec.segment_bytes <= JAVA_INT_MAX, f"--segment-bytes {spec.segment_bytes}: must be from 1 to {JAVA_INT_MAX}"),
        (spec.index_interval >= 0, f"index interval {spec.index_interval}: must not be negative"),
    )
    for ok, message in checks:
        if not ok:
            raise GenerateInputError(message)
    if spec.codec not in CODEC_NAMES:
        raise GenerateInputError(f"unknown codec {spec.codec!r}: use one of {', '.join(CODEC_NAMES)}")
    if spec.magic < 2 and (CODEC_NAMES[spec.codec] == Codec.ZSTD or spec.transactional):
        raise GenerateInputError("zstd and transactions need message format v2 (--magic 2)")
    if spec.abort_ratio and not spec.transactional:
        raise GenerateInputError("--abort-ratio applies to --transactional only")
    if spec.open_transaction and not spec.transactional:
        raise GenerateInputError("--open-transaction applies to --transactional only")
    batch = 61 + spec.batch_records * (spec.value_bytes + _RECORD_OVERHEAD)
    if batch > JAVA_INT_MAX:
        raise GenerateInputError(
            f"--batch-records {spec.batch_records} x --value-bytes {spec.value_bytes}: a batch of about {batch} "
            f"bytes exceeds the {JAVA_INT_MAX}-byte limit of a record batch"
        )


def estimate_bytes(spec: GenerateSpec) -> int:
    """About how many bytes the partition will take: its first batch encoded, times the batches."""
    batches = -(-spec.records // spec.batch_records)
    raw = 61 + spec.batch_records * (spec.value_bytes + _RECORD_OVERHEAD)
    if raw <= 64 * 1024 * 1024:  # cheap enough to encode one for real (codec and all)
        n = min(spec.batch_records, spec.records)
        first = len(_encode_data(spec, CODEC_NAMES[spec.codec], random.Random(spec.seed), 0, spec.start_timestamp, n, 0))
        raw = first * spec.batch_records // n
    marker = 78 if spec.transactional else 0
    index = 20 * ((raw + marker) // max(1, spec.index_interval) + 1)
    return batches * (raw + marker + index)


def _nearest_existing(path: Path) -> Path:
    """`path`, or the closest ancestor that exists (what generate would create the rest under)."""
    while not path.exists() and path != path.parent:
        path = path.parent
    return path


def check_disk_space(log_dir: Path, needed: int) -> None:
    """Refuse to start what would fill the file system holding `log_dir`."""
    st = os.statvfs(_nearest_existing(log_dir))
    free = st.f_bavail * st.f_frsize
    if needed > free:
        raise GenerateInputError(
            f"{log_dir}: about {needed} bytes of data would not fit in the {free} bytes free there "
            "(fewer --records or a smaller --value-bytes)"
        )


def _encode_data(spec: GenerateSpec, codec: int, rng: random.Random, offset: int, ts: int, n: int, seq: int) -> bytes:
    """One data batch (v2) or message set (v0/v1) of `n` records from `offset`, timestamps from `ts`."""
    recs = []
    headers = (("source", b"kafkatool-generate"),) if spec.headers and spec.magic >= 2 else ()
    for i in range(n):
        o = offset + i
        key = f"key-{rng.randrange(spec.key_space):06d}".encode() if spec.key_space else None
        tomb = key is not None and rng.random() < spec.tombstone_ratio
        value = None if tomb else _value(rng, spec.value_bytes, o)
        recs.append(_new(Record, (o, ts + i, key, value, headers, NO_SEQUENCE, None, True)))
    last_ts = ts + n - 1
    if spec.magic >= 2:
        return encode_v2_batch(
            recs,
            offset,
            codec=codec,
            timestamp_type=TS_LOG_APPEND if spec.log_append_time else 0,
            producer_id=_PRODUCER_ID if spec.transactional else -1,
            producer_epoch=0 if spec.transactional else -1,
            base_sequence=seq if spec.transactional else NO_SEQUENCE,
            is_transactional=spec.transactional,
            max_timestamp=last_ts if spec.log_append_time else None,
        )
    return encode_legacy_batch(
        recs, magic=spec.magic, codec=codec, log_append_time=last_ts if spec.log_append_time else None
    )


class _ProducerState:
    """What a broker's ProducerStateManager keeps of the one generated producer, for the snapshots."""

    def __init__(self) -> None:
        self.entry: ProducerSnapshotEntry | None = None

    def data(self, first: int, last: int, last_seq: int, timestamp: int) -> None:
        txn_first = self.entry.current_txn_first_offset if self.entry and self.entry.current_txn_first_offset >= 0 else first
        self.entry = ProducerSnapshotEntry(_PRODUCER_ID, 0, last_seq, last, last - first, timestamp, 0, txn_first)

    def end_txn(self, timestamp: int) -> int:
        """An end marker: the transaction closes and the marker's time becomes the producer's last."""
        assert self.entry is not None
        first = self.entry.current_txn_first_offset
        e = self.entry
        self.entry = ProducerSnapshotEntry(
            e.producer_id, e.producer_epoch, e.last_sequence, e.last_offset, e.offset_delta, timestamp, 0, -1
        )
        return first

    def snapshot(self) -> bytes:
        return encode_producer_snapshot([self.entry] if self.entry else [])


def _read_checkpoints(log_dir: Path) -> dict[str, dict[tuple[str, int], int]]:
    """The log dir's offset checkpoints as they are (read before anything is written: a malformed
    one stops generate with the log dir unchanged)."""
    out = {}
    for name in _CHECKPOINTS:
        path = log_dir / name
        try:
            out[name] = read_offset_checkpoint(path) if path.exists() else {}
        except CheckpointError as exc:
            raise GenerateInputError(f"{path}: {exc}") from None
    return out


def _check_log_dir(log_dir: Path) -> None:
    probe = _nearest_existing(log_dir)
    if not probe.is_dir():
        raise GenerateInputError(f"{probe}: not a directory")


def generate_partition(log_dir: Path, spec: GenerateSpec) -> GenerateResult:
    """Write `<log_dir>/<topic>-<partition>/` with segments, indexes, snapshots and checkpoints."""
    check_spec(spec)
    codec = CODEC_NAMES[spec.codec]
    _check_log_dir(log_dir)
    pdir = log_dir / f"{spec.topic}-{spec.partition}"
    if pdir.exists() and any(pdir.glob("*.log")):
        raise FileExistsError(f"{pdir} already holds segments: choose another log dir, topic or partition")
    checkpoints = _read_checkpoints(log_dir)
    check_disk_space(log_dir, estimate_bytes(spec))
    rng = random.Random(spec.seed)
    pdir.mkdir(parents=True, exist_ok=True)
    offset = 0
    ts = spec.start_timestamp
    segments: list[int] = []
    writer: SegmentWriter | None = None
    aborted: list[AbortedTxn] = []
    producer = _ProducerState()
    total = 0
    seq = 0

    def close_segment(w: SegmentWriter) -> None:
        w.close()
        if aborted:
            (pdir / segment_name(w.base_offset, TXN_INDEX_SUFFIX)).write_bytes(encode_txn_index(aborted))
            aborted.clear()

    while total < spec.records:
        if writer is None or writer.size >= spec.segment_bytes:
            if writer is not None:
                close_segment(writer)
                if spec.transactional:  # the broker snapshots producer state at every roll
                    (pdir / segment_name(offset, SNAPSHOT_SUFFIX)).write_bytes(producer.snapshot())
            writer = SegmentWriter(pdir, offset, spec.index_interval)
            segments.append(offset)
        n = min(spec.batch_records, spec.records - total)
        data = _encode_data(spec, codec, rng, offset, ts, n, seq)
        ts += n
        writer.append(data, offset + n - 1, ts - 1, offset + n - 1)
        if spec.transactional:
            producer.data(offset, offset + n - 1, seq + n - 1, ts - 1)
            seq += n
        total += n
        offset += n
        if spec.transactional and not (spec.open_transaction and total >= spec.records):
            abort = rng.random() < spec.abort_ratio
            k, v = encode_control_record(0 if abort else 1, 0)
            marker = encode_v2_batch(
                [_new(Record, (offset, ts, k, v, (), NO_SEQUENCE, None, True))],
                offset,
                producer_id=_PRODUCER_ID,
                producer_epoch=0,
                is_transactional=True,
                is_control=True,
            )
            writer.append(marker, offset, ts, offset)
            first = producer.end_txn(ts)
            if abort:  # one producer: once its transaction ends, nothing below the next offset is open
                aborted.append(AbortedTxn(0, _PRODUCER_ID, first, offset, offset + 1))
            offset += 1
            ts += 1
    assert writer is not None
    close_segment(writer)
    if spec.transactional:  # and at shutdown, named by the log end offset
        (pdir / segment_name(offset, SNAPSHOT_SUFFIX)).write_bytes(producer.snapshot())
    size = sum((pdir / f"{b:020d}.log").stat().st_size for b in segments)
    write_leader_epoch_checkpoint(pdir / "leader-epoch-checkpoint", [(0, 0)])
    for name, value in zip(_CHECKPOINTS, (offset, offset, 0), strict=True):
        # as a broker does: this partition's entry added to (or replaced in) the others'
        write_offset_checkpoint(log_dir / name, checkpoints[name] | {(spec.topic, spec.partition): value})
    return GenerateResult(pdir, segments, total, size)
