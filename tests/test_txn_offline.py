"""`kafkatool transactions find-hanging --log-dir`: open transactions from a partition's files alone.

Two oracles: the kraft-4.0.0 fixture (Kafka 4.0.0's `describe-producers` at S16 shows producer 1002's
transaction open from offset 7 on both fx-txn partitions; the timeline says it was aborted at S17),
and logs written here with the project's writer, whose open transactions are known by construction.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from kafkatool.log.record import Record
from kafkatool.log.snapshot import ProducerSnapshotEntry, encode_producer_snapshot
from kafkatool.log.writer import SegmentWriter, encode_control_record, encode_v2_batch
from kafkatool.ops.txn_offline import offset_at_time, read_partition, rows
from tests.conftest import FIXTURES, require_fixtures

KRAFT = FIXTURES / "kraft-4.0.0"
T0 = 1_700_000_000_000
MIN = 60_000


def find_hanging(log_dir: Path, *args: str) -> subprocess.CompletedProcess:
    """`kafkatool transactions find-hanging --log-dir log_dir ...` in a process of its own."""
    return subprocess.run(
        [sys.executable, "-m", "kafkatool", "transactions", "find-hanging", "--log-dir", str(log_dir), *args],
        capture_output=True,
        text=True,
        timeout=120,
    )


def _timeline_ms(step: str) -> int:
    for line in (KRAFT / "timeline.txt").read_text().splitlines():
        if line.startswith(step):
            return int(line.split("\t")[2])
    raise AssertionError(step)


def _describe_producers(pid: int, partition: int) -> dict[str, str]:
    golden = KRAFT / "goldens" / "kafka-transactions" / f"C-describe-producers-fx-txn-{partition}.stdout"
    lines = [line.split("\t") for line in golden.read_text().splitlines()]
    head = [h.strip() for h in lines[0]]
    for cells in lines[1:]:
        row = dict(zip(head, (c.strip() for c in cells), strict=False))
        if row["ProducerId"] == str(pid):
            return row
    raise AssertionError(pid)


@pytest.fixture(scope="module")
def kraft() -> Path:
    require_fixtures()
    if not (KRAFT / "timeline.txt").is_file():
        pytest.skip("kraft-4.0.0 fixture not found")
    return KRAFT


@pytest.mark.parametrize("node,partition", [("b4", 0), ("b5", 1)])
def test_fixture_hanging_transaction_open_before_s17_closed_after(
    kraft: Path, node: str, partition: int
) -> None:
    pdir = kraft / "data" / node / "data" / f"fx-txn-{partition}"
    s17 = _timeline_ms("S17")
    before = read_partition(pdir, offset_at_time(pdir, s17 - 1))
    [txn] = before.open
    golden = _describe_producers(1002, partition)  # Kafka's own view at S16, before the abort
    assert txn.producer_id == 1002 and txn.txn_first_offset == 7 == int(
        golden["CurrentTransactionStartOffset"]
    )
    assert txn.epoch == int(golden["ProducerEpoch"]) and txn.coordinator_epoch == int(
        golden["LatestCoordinatorEpoch"]
    )
    assert txn.last_timestamp == int(golden["LastTimestamp"])
    assert before.last_stable_offset == 7
    [row] = rows(before, now_ms=_timeline_ms("S16"))
    assert row["ageMs"] == _timeline_ms("S16") - txn.txn_start_timestamp and row["lastStableOffset"] == 7
    assert row["hanging"] is False  # open "over a minute" at S16, under the 15-minute default
    assert rows(before, now_ms=_timeline_ms("S16"), max_txn_timeout_ms=MIN)[0]["hanging"] is True
    after = read_partition(pdir)
    assert after.open == [] and after.producers[1002].txn_first_offset == -1
    # closed by the abort marker written at S17 (its batch's time falls in S17's window)
    marker_time = after.producers[1002].last_timestamp
    assert s17 <= marker_time < _timeline_ms("S18")


def _write(pdir: Path, batches: list[tuple[int, bytes, int]]) -> None:
    w = SegmentWriter(pdir, 0)
    for last, data, ts in batches:
        w.append(data, last, ts, last)
    w.close()


def _data(offset: int, n: int, pid: int, ts: int, txn: bool = True) -> tuple[int, bytes, int]:
    recs = [Record(offset + i, ts, b"k", b"v", ()) for i in range(n)]
    return (
        offset + n - 1,
        encode_v2_batch(recs, producer_id=pid, producer_epoch=0, base_sequence=0, is_transactional=txn),
        ts,
    )


def _marker(
    offset: int, pid: int, ts: int, commit: bool, coordinator_epoch: int = 3
) -> tuple[int, bytes, int]:
    k, v = encode_control_record(1 if commit else 0, coordinator_epoch)
    rec = Record(offset, ts, k, v, ())
    return (
        offset,
        encode_v2_batch([rec], producer_id=pid, producer_epoch=0, is_transactional=True, is_control=True),
        ts,
    )


@pytest.fixture()
def written(tmp_path: Path) -> Path:
    """orders-0: pid 7 commits (0-2, marker 3); pid 8 opens at 4 and never ends; pid 9 opens at 7;
    a plain batch at 9; pid 10 aborts (10, marker 11)."""
    pdir = tmp_path / "orders-0"
    _write(
        pdir,
        [
            _data(0, 3, 7, T0),
            _marker(3, 7, T0 + 1000, True),
            _data(4, 2, 8, T0 + 2 * MIN),
            _data(6, 1, 8, T0 + 3 * MIN),
            _data(7, 2, 9, T0 + 20 * MIN),
            _data(9, 1, -1, T0 + 21 * MIN, txn=False),
            _data(10, 1, 10, T0 + 22 * MIN),
            _marker(11, 10, T0 + 22 * MIN + 5, False, 4),
        ],
    )
    return pdir


def test_writer_log_open_transactions(written: Path) -> None:
    st = read_partition(written)
    assert [(p.producer_id, p.txn_first_offset, p.txn_last_offset) for p in st.open] == [(8, 4, 6), (9, 7, 8)]
    assert st.last_stable_offset == 4 and st.log_end_offset == 12
    now = T0 + 30 * MIN
    r = rows(st, now)
    assert [(x["producerId"], x["ageMs"], x["durationMin"], x["hanging"]) for x in r] == [
        (8, 28 * MIN, 27, True),
        (9, 10 * MIN, 10, False),
    ]
    assert all(x["lastStableOffset"] == 4 for x in r)
    assert st.producers[10].coordinator_epoch == 4 and st.producers[10].txn_first_offset == -1
    # up to offset 6 only pid 8 is open; before offset 4 nothing is
    assert [p.producer_id for p in read_partition(written, 6).open] == [8]
    assert read_partition(written, 3).open == [] and read_partition(written, 3).last_stable_offset == 4


def test_writer_log_with_producer_snapshot(written: Path) -> None:
    """State from a producer snapshot at offset 9 (pid 8 and 9 open), the log after it, ages from the log."""
    entries = [
        ProducerSnapshotEntry(8, 0, 2, 6, 0, T0 + 3 * MIN, -1, 4),
        ProducerSnapshotEntry(9, 0, 1, 8, 1, T0 + 20 * MIN, -1, 7),
    ]
    (written / "00000000000000000009.snapshot").write_bytes(encode_producer_snapshot(entries))
    st = read_partition(written)
    assert st.snapshot == "00000000000000000009.snapshot"
    assert [(p.producer_id, p.txn_first_offset, p.txn_start_timestamp) for p in st.open] == [
        (8, 4, T0 + 2 * MIN),
        (9, 7, T0 + 20 * MIN),
    ]


def test_cli_rows_and_exit_codes(written: Path) -> None:
    now = "2023-11-14T22:43:20Z"  # T0 + 30 min
    p = find_hanging(written.parent, "--now", now, "--format", "json")
    assert p.returncode == 1, p.stderr  # pid 8 is hanging
    doc = json.loads(p.stdout)
    assert [(r["producerId"], r["startOffset"], r["lastStableOffset"], r["hanging"]) for r in doc] == [
        (8, 4, 4, True),
        (9, 7, 4, False),
    ]
    p = find_hanging(written, "--now", now, "--max-transaction-timeout", "60")
    assert p.returncode == 0
    head, *body = p.stdout.splitlines()
    assert head.split("\t")[:8] == [
        "Topic ",
        "Partition",
        "ProducerId",
        "ProducerEpoch",
        "CoordinatorEpoch",
        "StartOffset",
        "LastTimestamp",
        "Duration(min)",
    ]
    assert len(body) == 2
    p = find_hanging(written / "nope")
    assert p.returncode == 2 and p.stderr.count("\n") == 1
    p = find_hanging(written, "--now", "soon")
    assert p.returncode == 2 and "Traceback" not in p.stderr


def test_damaged_log_is_read_up_to_the_damage(written: Path) -> None:
    log = written / "00000000000000000000.log"
    data = bytearray(log.read_bytes())
    data[-10:] = b"\xff" * 10  # the abort marker's batch no longer checks out... or frames
    log.write_bytes(bytes(data[:-3]))  # a torn tail
    st = read_partition(written)
    assert [p.producer_id for p in st.open] == [8, 9, 10]  # pid 10's abort marker is in the torn tail
    assert st.damage is not None and "torn" in st.damage
    p = find_hanging(written, "--now", "2023-11-14T22:43:20Z", "--max-transaction-timeout", "60")
    assert p.returncode == 1 and "Traceback" not in p.stderr
    assert p.stderr.count("\n") == 1 and "00000000000000000000.log" in p.stderr
