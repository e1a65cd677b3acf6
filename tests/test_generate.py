"""`kafkatool generate`: input checked before anything is written, and what it writes is what a broker would.

Oracles: Kafka's topic-name rules (Topic.validate), the producer snapshots and `.txnindex` files real
Kafka 2.1.1 and 3.3.1 brokers wrote (shared fixtures: the snapshot model below is checked on them
first), and the checkpoint files of real broker log dirs (several partitions in one file).
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from kafkatool.log.checkpoint import read_offset_checkpoint
from kafkatool.log.records import iter_batches
from kafkatool.log.snapshot import ProducerSnapshotEntry, read_producer_snapshot
from kafkatool.ops.generate import GenerateInputError, GenerateSpec, generate_partition
from tests.conftest import KAFKA_LOGS, require_fixtures
from tests.support.cli import run_console

CODECS = ["none", "gzip", "snappy", "lz4", "zstd"]


def kt(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kafkatool", *args], capture_output=True, text=True, timeout=120,
                          cwd=cwd)


def one_line_usage_error(p: subprocess.CompletedProcess[str]) -> None:
    assert p.returncode == 2, (p.returncode, p.stderr)
    assert p.stderr.count("\n") == 1 and p.stderr.startswith("kafkatool: "), p.stderr
    assert "Traceback" not in p.stderr and "unexpected error" not in p.stderr


# --------------------------------------------------------------------------------------------------
# input checking


@pytest.mark.parametrize("topic", ["../../escape", "a/b", ".", "..", "x" * 250, "café", "a b", "a\\b"])
def test_illegal_topic_names_are_refused(tmp_path: Path, topic: str) -> None:
    logs = tmp_path / "deep" / "logs"
    p = run_console("generate", str(logs), "--topic", topic, "--records", "10")
    one_line_usage_error(p)
    assert "Topic name is invalid" in p.stderr
    assert not logs.exists() and sorted(tmp_path.rglob("*")) == []  # nothing written, inside or outside


@pytest.mark.parametrize("topic", ["x" * 249, "a.b_c-D9", "__consumer_offsets"])
def test_legal_topic_names_are_accepted(tmp_path: Path, topic: str) -> None:
    res = generate_partition(tmp_path, GenerateSpec(topic=topic, records=5))
    assert res.partition_dir == tmp_path / f"{topic}-0" and res.partition_dir.is_dir()


@pytest.mark.parametrize(
    "args",
    [
        ["--partition", "-1"],
        ["--partition", str(2**31)],
        ["--tombstones", "2"],
        ["--tombstones", "-0.5"],
        ["--transactional", "--abort-ratio", "5"],
        ["--abort-ratio", "0.5"],  # without --transactional there is nothing to abort
        ["--value-bytes", "-5"],
        ["--key-space", "-1"],
        ["--records", "0"],
        ["--records", "99999999999999999999"],
        ["--batch-records", "0"],
        ["--segment-bytes", str(2**31)],
        ["--magic", "3"],
        ["--codec", "brotli"],
        ["--magic", "1", "--codec", "zstd"],
        ["--batch-records", "100000", "--value-bytes", "100000"],  # a 10 GB batch
    ],
)
def test_out_of_range_values_are_refused(tmp_path: Path, args: list[str]) -> None:
    # in-process, but the 10 GB batch in a process of its own: a regression must not allocate it here
    run = kt if "100000" in args else run_console
    p = run("generate", str(tmp_path / "logs"), *args)
    one_line_usage_error(p)
    assert not (tmp_path / "logs").exists()


def test_records_that_would_not_fit_on_disk_are_refused_at_once(tmp_path: Path) -> None:
    start = time.monotonic()
    p = kt("generate", str(tmp_path / "logs"), "--records", str(10**15))
    one_line_usage_error(p)
    assert "would not fit" in p.stderr and time.monotonic() - start < 30
    assert not (tmp_path / "logs").exists()


def test_estimate_is_close_to_what_is_written(tmp_path: Path) -> None:
    from kafkatool.ops.generate import estimate_bytes

    for codec in CODECS:
        spec = GenerateSpec(topic=codec, records=5000, codec=codec, transactional=True, segment_bytes=100_000)
        res = generate_partition(tmp_path, spec)
        written = sum(f.stat().st_size for f in res.partition_dir.iterdir())
        assert 0.8 * written <= estimate_bytes(spec) <= 1.5 * written, codec


def test_second_partition_of_the_same_dir_is_refused_without_changes(tmp_path: Path) -> None:
    generate_partition(tmp_path, GenerateSpec(records=20))
    before = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    p = kt("generate", str(tmp_path), "--records", "20")
    one_line_usage_error(p)
    assert {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()} == before


# --------------------------------------------------------------------------------------------------
# log dir checkpoints hold every partition, as a broker's do


def test_log_dir_checkpoints_merge_partitions(tmp_path: Path) -> None:
    generate_partition(tmp_path, GenerateSpec(records=30))
    generate_partition(tmp_path, GenerateSpec(partition=1, records=20))
    generate_partition(tmp_path, GenerateSpec(topic="orders", records=10, transactional=True))
    ends = {("demo", 0): 30, ("demo", 1): 20, ("orders", 0): 11}  # one batch of 10 and its marker
    assert read_offset_checkpoint(tmp_path / "recovery-point-offset-checkpoint") == ends
    assert read_offset_checkpoint(tmp_path / "replication-offset-checkpoint") == ends
    assert read_offset_checkpoint(tmp_path / "log-start-offset-checkpoint") == dict.fromkeys(ends, 0)


def test_checkpoints_with_real_brokers_entries_keep_them(tmp_path: Path) -> None:
    """Into a copy of a real broker's log dir checkpoints: the broker's entries stay as they were."""
    require_fixtures()
    real = KAFKA_LOGS / "kafka-2.1.1" / "recovery-point-offset-checkpoint"
    (tmp_path / real.name).write_bytes(real.read_bytes())
    generate_partition(tmp_path, GenerateSpec(topic="new-topic", records=10))
    merged = read_offset_checkpoint(tmp_path / real.name)
    assert merged == read_offset_checkpoint(real) | {("new-topic", 0): 10}


def test_malformed_checkpoint_is_an_input_error_before_anything_is_written(tmp_path: Path) -> None:
    (tmp_path / "recovery-point-offset-checkpoint").write_text("0\n3\nonly one\n")
    with pytest.raises(GenerateInputError, match="recovery-point-offset-checkpoint"):
        generate_partition(tmp_path, GenerateSpec(records=10))
    assert [p.name for p in tmp_path.iterdir()] == ["recovery-point-offset-checkpoint"]


def test_log_dir_under_a_file_is_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    for target in (tmp_path / "file", tmp_path / "file" / "sub"):
        p = kt("generate", str(target), "--records", "5")
        one_line_usage_error(p)
        assert "not a directory" in p.stderr


# --------------------------------------------------------------------------------------------------
# transactional data: .txnindex and producer snapshots as a broker writes them


def _expected_snapshot(partition_dir: Path, until: int, marker_time: bool = True) -> list[ProducerSnapshotEntry]:
    """Producer state after the log's batches below `until`, as the broker's ProducerStateManager keeps it:
    a data batch sets the last sequence/offset/delta and time and may open a transaction; an end
    marker closes it, and (Kafka 3.x, `marker_time`; not 2.1) its time becomes the producer's last."""
    state: dict[int, ProducerSnapshotEntry] = {}
    for log in sorted(partition_dir.glob("*.log")):
        data = log.read_bytes()
        for b in iter_batches(data):
            if b.base_offset >= until or b.producer_id < 0:
                continue
            e = state.get(b.producer_id)
            delta = b.last_offset - b.base_offset
            if b.attributes & 0x20:  # control: end transaction marker
                assert e is not None
                coordinator_epoch = int.from_bytes(data[b.position + 61 + 12: b.position + 61 + 16], "big")
                state[b.producer_id] = ProducerSnapshotEntry(
                    b.producer_id, b.producer_epoch, e.last_sequence, e.last_offset, e.offset_delta,
                    b.max_timestamp if marker_time else e.timestamp, coordinator_epoch, -1)
            else:
                open_first = e.current_txn_first_offset if e is not None and e.current_txn_first_offset >= 0 else -1
                txn_first = (open_first if open_first >= 0 else b.base_offset) if b.attributes & 0x10 else -1
                state[b.producer_id] = ProducerSnapshotEntry(
                    b.producer_id, b.producer_epoch, b.base_sequence + delta, b.last_offset, delta, b.max_timestamp,
                    e.coordinator_epoch if e is not None else -1, txn_first)
    return [state[p] for p in sorted(state)]


@pytest.mark.parametrize("broker", ["kafka-2.1.1", "kafka-3.3.1-kraft"])
def test_snapshot_model_matches_real_brokers(broker: str) -> None:
    require_fixtures()
    pdir = KAFKA_LOGS / broker / "txn-topic-0"
    snapshots = sorted(pdir.glob("*.snapshot"))
    assert snapshots
    for snap in snapshots:
        entries = sorted(read_producer_snapshot(snap.read_bytes()), key=lambda e: e.producer_id)  # hash order
        assert entries == _expected_snapshot(pdir, int(snap.stem), broker != "kafka-2.1.1"), snap.name


def _snapshot_offsets(pdir: Path) -> list[int]:
    return sorted(int(p.stem) for p in pdir.glob("*.snapshot"))


@pytest.mark.parametrize("codec", CODECS)
def test_transactional_partition_is_what_a_broker_writes(tmp_path: Path, codec: str) -> None:
    res = generate_partition(tmp_path, GenerateSpec(records=2000, codec=codec, transactional=True, abort_ratio=0.3,
                                                    segment_bytes=20_000))
    pdir = res.partition_dir
    assert len(res.segments) > 2
    end = read_offset_checkpoint(tmp_path / "recovery-point-offset-checkpoint")[("demo", 0)]
    # a snapshot at every roll and at the log end, as the brokers' txn-topic-0 dirs have
    assert _snapshot_offsets(pdir) == res.segments[1:] + [end]
    for off in _snapshot_offsets(pdir):
        snap = pdir / f"{off:020d}.snapshot"
        assert read_producer_snapshot(snap.read_bytes()) == _expected_snapshot(pdir, off)
    # .txnindex files exactly where ABORT markers are, checked by index verify; recover has nothing to do
    assert any(pdir.glob("*.txnindex"))
    verify = kt("index", "verify", str(pdir))
    assert verify.returncode == 0 and verify.stdout.endswith(" 0 with problems\n"), verify.stdout + verify.stderr
    recover = kt("recover", "--dry-run", str(tmp_path))
    assert recover.returncode == 0, recover.stdout + recover.stderr
    assert "would " not in recover.stdout and recover.stdout.endswith("1 partition, no records lost\n"), recover.stdout
    assert "nothing to change" in recover.stdout


def test_txnindex_entries_match_the_aborts(tmp_path: Path) -> None:
    """Each ABORT marker gives one entry (first offset of its transaction, the marker, LSO = marker + 1),
    in the segment holding the marker, as in the brokers' txn-topic-0 `.txnindex` files."""
    from kafkatool.log.index import AbortedTxn, read_txn_index

    res = generate_partition(tmp_path, GenerateSpec(records=500, batch_records=7, transactional=True, abort_ratio=0.5,
                                                    segment_bytes=8000))
    for log in sorted(res.partition_dir.glob("*.log")):
        batches = list(iter_batches(log.read_bytes()))
        expected = []
        for data, marker in zip(batches[::2], batches[1::2], strict=True):
            data_bytes = log.read_bytes()[marker.position + 61:marker.position + marker.size]
            assert marker.attributes & 0x20
            if _control_type(data_bytes) == 0:
                expected.append(AbortedTxn(0, data.producer_id, data.base_offset, marker.base_offset,
                                           marker.base_offset + 1))
        txn = log.with_suffix(".txnindex")
        assert (read_txn_index(txn.read_bytes()) if txn.exists() else []) == expected, log.name


def _control_type(records: bytes) -> int:
    """Type of the control record in a marker batch's records section (key: version int16, type int16)."""
    # record: length, attributes, timestampDelta, offsetDelta varints (one byte each here), key length varint
    key_at = 5
    return int.from_bytes(records[key_at + 2:key_at + 4], "big", signed=True)
