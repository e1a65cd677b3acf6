"""`kafkatool offsets watch`: Burrow's lag evaluation over windows of commits.

The expected statuses follow from Burrow's documented rules applied by hand to each window (the
rule order: zero lag anywhere -> OK; offsets backwards -> REWIND; last commit older than the window's
span -> STOP; offset unmoved with lag -> STALL; lag never shrinking -> WARN).  The offline history is
a `__consumer_offsets` log and a topic log written with the project's writer; the lag at each
commit is worked out by hand from the topic's record timestamps.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import kafkatool.cli.offsets_watch  # noqa: F401 - registers `offsets watch`
from kafkatool.log.records import Record
from kafkatool.log.writer import SegmentWriter, encode_v2_batch
from kafkatool.ops.lagstatus import Commit, evaluate
from tests.support.cli import run_kafkatool
from tests.test_offsets_offline import OffsetsLogBuilder, commit_key, commit_value

T0 = 1_700_000_000_000


def w(*entries: tuple[int, int, int | None]) -> list[Commit]:
    return [Commit(o, T0 + t * 1000, lag) for o, t, lag in entries]


@pytest.mark.parametrize(
    "window, now_s, status",
    [
        (w((10, 0, 5), (20, 10, 0), (30, 20, 3)), 20, "OK"),  # zero lag once: OK whatever else
        (w((10, 0, 5), (20, 10, 4), (30, 20, 2)), 20, "OK"),  # catching up
        (w((30, 0, 5), (20, 10, 15), (25, 20, 12)), 20, "REWIND"),
        (w((10, 0, 5), (20, 10, 6)), 40, "STOP"),  # 30 s since the last commit > the 10 s window
        (w((10, 0, 5), (10, 10, 9), (10, 20, 14)), 20, "STALL"),
        (w((10, 0, 5), (20, 10, 5), (30, 20, 9)), 20, "WARN"),
        (w((10, 0, None), (20, 10, None)), 10, "UNKNOWN"),
        ([], 0, "UNKNOWN"),
    ],
)
def test_burrow_rules(window: list[Commit], now_s: int, status: str) -> None:
    assert evaluate(window, T0 + now_s * 1000) == status


@pytest.fixture
def history(tmp_path: Path) -> Path:
    log_dir = tmp_path / "data"
    # orders-0: offsets 0..99, record i written at T0 + i s, in batches of 10 -> the end offset at
    # T0 + t s is the next offset after the last full batch written by then (batch ends at base+9 s)
    writer = SegmentWriter(log_dir / "orders-0", 0)
    for base in range(0, 100, 10):
        recs = [Record(o, T0 + o * 1000, b"k", b"v", ()) for o in range(base, base + 10)]
        writer.append(encode_v2_batch(recs), recs[-1].offset, recs[-1].timestamp, recs[-1].offset)
    writer.close()
    b = OffsetsLogBuilder(log_dir)
    commits = {
        "steady": [(20, 20)],  # end at 20 s: 20 -> lag 0
        "stuck": [(15, 30), (15, 40), (15, 50), (15, 60)],  # ends 30, 40, 50, 60: lag 15..45
        "lagging": [(10, 30), (15, 40), (20, 50), (25, 60)],  # lag 20, 25, 30, 35
        "stopped": [(5, 10), (8, 20)],  # ends 10, 20: lag 5, 12; judged at 60 s
        "rewound": [(30, 40), (20, 50)],  # lag 10, 30
    }
    for group, entries in commits.items():
        for offset, t in entries:
            b.batch([(commit_key(group, "orders", 0), commit_value(offset, T0 + t * 1000))])
    b.close()
    return log_dir


def test_offline_history_statuses_and_exit_codes(history: Path) -> None:
    now = str(T0 + 60_000)
    res = run_kafkatool(*["offsets", "watch", "--log-dir", str(history), "--all-groups", "--now", now,
                         "--format", "json"])
    assert res.code == 4, res.err
    doc = json.loads(res.out)
    groups = {g["group"]: g for g in doc["groups"]}
    assert {g: v["status"] for g, v in groups.items()} == {
        "steady": "OK", "stuck": "ERR", "lagging": "WARN", "stopped": "ERR", "rewound": "ERR"}
    parts = {g: v["partition_statuses"][0] for g, v in groups.items()}
    assert parts["stuck"]["status"] == "STALL" and (parts["stuck"]["first_lag"], parts["stuck"]["last_lag"]) == (15, 45)
    assert parts["lagging"]["status"] == "WARN" and parts["lagging"]["last_lag"] == 35
    assert parts["stopped"]["status"] == "STOP" and parts["stopped"]["last_lag"] == 12
    assert parts["rewound"]["status"] == "REWIND"
    ok = run_kafkatool(*["offsets", "watch", "--log-dir", str(history), "--group", "steady", "--now", now])
    assert ok.code == 0 and "Group steady: OK" in ok.out
    warn = run_kafkatool(*["offsets", "watch", "--log-dir", str(history), "--group", "lagging", "--now", now])
    assert warn.code == 1 and "Group lagging: WARN (worst: orders-0 WARN)" in warn.out
    # a window of the last 2 commits of `stuck` still stalls; `lagging`'s last 2 still warn
    res = run_kafkatool(*["offsets", "watch", "--log-dir", str(history), "--group", "stuck", "--window", "2",
                         "--now", now, "--format", "ndjson"])
    lines = [json.loads(x) for x in res.out.splitlines()]
    assert lines[0]["type"] == "partition" and lines[0]["commits"] == 2 and lines[0]["status"] == "STALL"
    assert lines[-1] == {"type": "group", "group": "stuck", "status": "ERR", "partitions": 1,
                         "worst_partition": {"topic": "orders", "partition": 0, "status": "STALL"},
                         "counts": {"OK": 0, "WARN": 0, "STOP": 0, "STALL": 1, "REWIND": 0, "UNKNOWN": 0}}


def test_usage_errors(history: Path) -> None:
    for args in (["--window", "0"], ["--interval", "-1"], ["--now", "-3"]):
        res = run_kafkatool(*["offsets", "watch", "--log-dir", str(history), "--all-groups", *args])
        assert res.code == 2, (args, res.err)
        assert args[0] in res.err
    res = run_kafkatool(*["offsets", "watch", "--log-dir", str(history)])
    assert res.code == 2


def test_live_samples_over_the_admin_api() -> None:
    """Against the protocol-faithful fake cluster: offsets that never move while lag stays are STALL;
    a partition with no lag is OK; samples stream as NDJSON before the statuses."""
    from tests.support.fake_groups import FakeKafkaCluster

    with FakeKafkaCluster(brokers=2) as c:
        c.add_topic("orders", 2, log_end=100)
        c.add_group("app", state="Empty", offsets={("orders", 0): (40, ""), ("orders", 1): (100, "")})
        res = run_kafkatool("offsets", "watch", "--bootstrap-server", c.bootstrap, "--group", "app",
                            "--window", "3", "--interval", "0.01", "--format", "ndjson")
    assert res.code == 4, res.err
    lines = [json.loads(x) for x in res.out.splitlines()]
    samples = [x for x in lines if x["type"] == "sample"]
    assert len(samples) == 6 and {s["sample"] for s in samples} == {1, 2, 3}
    parts = {x["partition"]: x for x in lines if x["type"] == "partition"}
    assert parts[0]["status"] == "STALL" and parts[0]["last_lag"] == 60 and parts[0]["complete"] is True
    assert parts[1]["status"] == "OK"
    assert lines[-1]["type"] == "group" and lines[-1]["status"] == "ERR"
