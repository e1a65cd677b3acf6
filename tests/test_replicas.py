"""`kafkatool replicas`: replica divergence and the truncation Kafka's followers would do.

The replicas are built with the project's writer from histories whose outcome follows from Kafka's
rules by hand (the expected offsets are written out below, not computed by the code under test):
followers copy the leader's batches byte for byte, so replicas agree until an unclean election or
damage; a returning follower asks the leader for the end of its latest epoch (OffsetsForLeaderEpoch)
and truncates to the smaller of the answer and its own end for the epoch answered (KIP-279).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import kafkatool.cli.replicas  # noqa: F401 - registers the command
from kafkatool.cli.app import app
from kafkatool.log.checkpoint import write_leader_epoch_checkpoint
from kafkatool.log.records import Record
from kafkatool.log.writer import SegmentWriter, encode_v2_batch

TS = 1_700_000_000_000


def _records(first: int, n: int, tag: str) -> list[Record]:
    return [Record(o, TS + o, f"k{o % 7}".encode(), f"{tag}-{o}".encode(), ()) for o in range(first, first + n)]


def write_replica(
    root: Path, name: str, batches: list[tuple[int, int, int, str]], epochs: list[tuple[int, int]] | None,
    segment_records: int = 60,
) -> Path:
    """A partition dir orders-0 under root/name from (base offset, records, leader epoch, content tag)."""
    pdir = root / name / "orders-0"
    pdir.mkdir(parents=True)
    writer = None
    count = 0
    for base, n, epoch, tag in batches:
        if writer is None or count >= segment_records:
            if writer is not None:
                writer.close()
            writer = SegmentWriter(pdir, base)
            count = 0
        recs = _records(base, n, tag)
        data = encode_v2_batch(recs, partition_leader_epoch=epoch)
        writer.append(data, recs[-1].offset, recs[-1].timestamp, recs[-1].offset)
        count += n
    if writer is not None:
        writer.close()
    if epochs is not None:
        write_leader_epoch_checkpoint(pdir / "leader-epoch-checkpoint", epochs)
    return pdir


def _epoch0() -> list[tuple[int, int, int, str]]:
    return [(o, 10, 0, "a") for o in range(0, 100, 10)]


@pytest.fixture
def unclean(tmp_path: Path) -> dict[str, Path]:
    """b1 led epochs 0 and 1 (offsets 0..149), b2 followed it all; b3 fell out of the ISR at 100,
    then won an unclean election (epoch 2) and wrote 100..129 of its own."""
    b1 = write_replica(tmp_path, "b1", _epoch0() + [(o, 10, 1, "b") for o in range(100, 150, 10)], [(0, 0), (1, 100)])
    b2 = write_replica(tmp_path, "b2", _epoch0() + [(o, 10, 1, "b") for o in range(100, 150, 10)], [(0, 0), (1, 100)])
    b3 = write_replica(tmp_path, "b3", _epoch0() + [(o, 10, 2, "c") for o in range(100, 130, 10)], [(0, 0), (2, 100)])
    return {"b1": b1, "b2": b2, "b3": b3}


def run(*args: str):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(app, ["replicas", *args], catch_exceptions=False)


def test_unclean_election_is_found_and_truncation_forecast(unclean: dict[str, Path]) -> None:
    res = run(*(f"{n}={p}" for n, p in unclean.items()), "--format", "json")
    assert res.exit_code == 1, res.output
    doc = json.loads(res.stdout)
    assert (doc["topic"], doc["partition"]) == ("orders", 0)
    reps = {r["name"]: r for r in doc["replicas"]}
    assert (reps["b1"]["log_start_offset"], reps["b1"]["log_end_offset"], reps["b1"]["records"]) == (0, 150, 150)
    assert (reps["b3"]["log_end_offset"], reps["b3"]["records"]) == (130, 130)
    assert reps["b3"]["leader_epochs"] == [{"epoch": 0, "start_offset": 0}, {"epoch": 2, "start_offset": 100}]
    pairs = {(p["a"], p["b"]): p for p in doc["pairs"]}
    assert pairs[("b1", "b2")]["status"] == "identical"
    p13 = pairs[("b1", "b3")]
    assert p13["status"] == "diverged" and p13["diverged_at"] == 100
    assert p13["batch_a"]["leader_epoch"] == 1 and p13["batch_b"]["leader_epoch"] == 2
    assert p13["only_a"] == {"first_offset": 100, "last_offset": 149, "records": 50}
    assert p13["only_b"] == {"first_offset": 100, "last_offset": 129, "records": 30}
    # b3 has the highest epoch and leads: b1 and b2 ask for epoch 1's end; b3 knows epochs 0 and 2,
    # answers epoch 0 ending at 100; their own epoch 0 also ends at 100 -> truncate to 100, drop 50.
    assert doc["leader"] == "b3"
    tr = {t["replica"]: t for t in doc["truncation"]}
    for f in ("b1", "b2"):
        assert tr[f]["truncate_to"] == 100
        assert tr[f]["dropped"] == {"first_offset": 100, "last_offset": 149, "records": 50}
        assert tr[f]["below_divergence"] is False


def test_if_the_old_leader_leads_the_unclean_leader_loses_its_epoch(unclean: dict[str, Path]) -> None:
    # b3 asks for epoch 2's end; b1 knows 0 and 1 -> answers epoch 1 ending at 150; b3's own end for
    # epoch 1 (it never had it) is that of its largest epoch <= 1, epoch 0, ending at 100 -> truncate to 100.
    res = run(*(f"{n}={p}" for n, p in unclean.items()), "--leader", "b1")
    assert res.exit_code == 1
    assert "b3: truncates to 100, dropping 100..129 (30 records)" in res.stdout
    assert "b2: keeps everything" in res.stdout
    assert "b1 ~ b3: diverged at offset 100" in res.stdout


def test_identical_and_behind_exit_0(tmp_path: Path) -> None:
    a = write_replica(tmp_path, "a", _epoch0(), [(0, 0)])
    b = write_replica(tmp_path, "b", _epoch0(), [(0, 0)])
    c = write_replica(tmp_path, "c", _epoch0()[:6], [(0, 0)])  # a follower 40 offsets behind
    res = run(f"a={a}", f"b={b}", f"c={c}")
    assert res.exit_code == 0, res.output
    assert "a ~ b: identical over offsets 0..99" in res.stdout
    assert "a ~ c: c is behind; only in a: 60..99 (40 records)" in res.stdout


def test_records_narrow_the_divergence_and_damage_below_truncation_is_flagged(tmp_path: Path) -> None:
    # same epochs everywhere, but one record of batch 50..59 differs on y (a disk that flipped it):
    # truncation (by epochs) keeps everything, so fetching would never repair it.
    good = write_replica(tmp_path, "x", _epoch0(), [(0, 0)])
    ydir = write_replica(tmp_path, "y", [(o, 10, 0, "a") for o in range(0, 50, 10)], None)
    seg = SegmentWriter(ydir, 50)
    for base in range(50, 100, 10):
        recs = _records(base, 10, "a")
        if base == 50:
            recs[3] = recs[3]._replace(value=b"flipped")
        seg.append(encode_v2_batch(recs), recs[-1].offset, recs[-1].timestamp, recs[-1].offset)
    seg.close()
    write_leader_epoch_checkpoint(ydir / "leader-epoch-checkpoint", [(0, 0)])
    res = run(f"x={good}", f"y={ydir}", "--records", "--format", "json")
    assert res.exit_code == 1
    doc = json.loads(res.stdout)
    (pair,) = doc["pairs"]
    assert pair["diverged_at"] == 50 and pair["first_differing_record"] == 53
    (tr,) = doc["truncation"]
    assert tr["truncate_to"] == 100 and tr["dropped"] is None and tr["below_divergence"] is True


def test_log_dirs_with_partition_and_input_errors(tmp_path: Path, unclean: dict[str, Path]) -> None:
    logdirs = [str(p.parent) for p in unclean.values()]
    res = run(*logdirs, "--partition", "orders-0")
    assert res.exit_code == 1 and "diverged at offset 100" in res.stdout
    res = run(str(unclean["b1"]))
    assert res.exit_code == 2 and "at least two replicas" in res.stderr
    res = run(str(unclean["b1"]), str(tmp_path / "missing"))
    assert res.exit_code == 2 and "no such file or directory" in res.stderr
    res = run(f"a={unclean['b1']}", f"b={unclean['b2']}", "--leader", "zz")
    assert res.exit_code == 2 and "--leader zz" in res.stderr
    other = write_replica(tmp_path / "o", "x", _epoch0(), [(0, 0)])
    renamed = other.rename(other.parent / "payments-3")
    res = run(str(unclean["b1"]), str(renamed))
    assert res.exit_code == 2 and "different partitions" in res.stderr
