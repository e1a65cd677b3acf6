"""`kafkatool offsets watch`: Burrow's lag evaluation over windows of commits.

The oracles are Burrow's own documented examples: the four example windows of its wiki page
"Consumer Lag Evaluation Rules" (with the verdict the page gives each), and the evaluator's
correctness table (core/internal/evaluator/caching_test.go: offsets, commit times, lags, the current
lag, the recent broker offsets and the expected status of each set), transcribed as data.  The
offline history is a `__consumer_offsets` log and a topic log written with the project's writer;
the live runs read a `__consumer_offsets` the fake coordinator writes as a broker does (bytes built
by hand from the message specs), on a clock that only moves when the command waits.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kafkatool.cli.generate  # noqa: F401 - registers `generate`
import kafkatool.cli.offsets_watch as offsets_watch
from kafkatool.log.records import Record
from kafkatool.log.writer import SegmentWriter, encode_v2_batch
from kafkatool.ops.lagstatus import (
    OK,
    REWIND,
    SAMPLES,
    STALL,
    STOP,
    WARN,
    Commit,
    CommitWindows,
    evaluate,
    is_rewound,
    is_stalled,
    is_stopped,
    lag_never_decreased,
    recent_lag_zero,
)
from tests.support.cli import Result, run_kafkatool
from tests.support.clock import FakeClock
from tests.support.fake_groups import FakeKafkaCluster
from tests.test_offsets_offline import OffsetsLogBuilder, commit_key, commit_value

T0 = 1_700_000_000_000


# -- the wiki's four example windows (ten commits a minute apart, offsets 10..100) ---------------


def wiki(offsets: list[int], lags: list[int]) -> list[Commit]:
    return [Commit(o, T0 + i * 60_000, lag) for i, (o, lag) in enumerate(zip(offsets, lags, strict=True))]


STEADY = list(range(10, 101, 10))


@pytest.mark.parametrize(
    "name, window, now_s, status",
    [
        ("example 1: zero lag in the window", wiki(STEADY, [0, 0, 0, 0, 0, 0, 1, 3, 5, 5]), 600, OK),
        (
            "example 2: offset never moves, lag fixed or growing",
            wiki([10] * 10, [1, 1, 1, 1, 1, 2, 2, 2, 3, 3]),
            600,
            STALL,
        ),
        (
            "example 3: offset moves, lag same or growing",
            wiki(STEADY, [1, 1, 1, 1, 1, 2, 2, 2, 3, 3]),
            600,
            WARN,
        ),
        (
            "example 4: lag up and down, catching up in part",
            wiki(STEADY, [5, 3, 5, 2, 1, 1, 2, 1, 4, 6]),
            600,
            OK,
        ),
        ("example 4 judged at T+1200: stopped", wiki(STEADY, [5, 3, 5, 2, 1, 1, 2, 1, 4, 6]), 1200, STOP),
    ],
)
def test_burrow_wiki_examples(name: str, window: list[Commit], now_s: int, status: str) -> None:
    assert evaluate(window, T0 + now_s * 1000) == status, name


# -- Burrow's evaluator table: (offsets, commit ms, lags), broker offsets, current lag, now (s) ---


def burrow(rows: list[tuple[int, int, int | None]]) -> list[Commit]:
    return [Commit(o, ts, lag) for o, ts, lag in rows]


FIVE = [(1000, 100000), (2000, 200000), (3000, 300000), (4000, 400000), (5000, 500000)]
MANY = [
    (792748079 + i, ts)
    for i, ts in enumerate(
        [
            1512224618356,
            1512224619362,
            1512224620366,
            1512224621367,
            1512224622370,
            1512224623373,
            1512224624378,
            1512224625379,
            1512224626383,
            1512224627383,
            1512224628383,
            1512224629388,
            1512224630391,
            1512224631394,
            1512224632397,
        ]
    )
]


def five(lags: list[int], offset: int | None = None) -> list[Commit]:
    """The table's five commits 100 s apart, at offsets 1000..5000 (or all at `offset`), with these lags."""
    return burrow([(o if offset is None else offset, t, lag) for (o, t), lag in zip(FIVE, lags, strict=True)])


BURROW_TABLE = [
    # window, broker offsets, current lag, now (s), stopped, rewound, stalled, lag never decreased, recent zero, status
    (five([0, 50, 100, 150, 200]), [5200], 200, 600, False, False, False, True, False, OK),
    (five([0, 50, 100, 150, 200]), [5200], 200, 900, False, False, False, True, False, OK),
    (five([0, 50, 100, 150, 200]), [5200], 200, 1000, True, False, False, True, False, STOP),
    (five([50, 100, 150, 200, 250]), [5250], 250, 1000, True, False, False, True, False, STOP),
    (five([0, 50, 100, 150, 200], 1000), [1200], 200, 600, False, False, True, True, False, OK),
    (five([100, 150, 200, 250, 300], 1000), [1300], 300, 600, False, False, True, True, False, STALL),
    (five([100] * 5, 1000), [1100], 100, 600, False, False, True, True, False, STALL),
    (
        burrow(
            [
                (1000, 100000, 100),
                (2000, 200000, 150),
                (3000, 300000, 200),
                (2000, 400000, 1250),
                (4000, 500000, 300),
            ]
        ),
        [4300],
        300,
        600,
        False,
        True,
        False,
        False,
        False,
        REWIND,
    ),
    (five([50, 100, 150, 200, 250]), [5250], 0, 1000, True, False, False, True, False, OK),
    (
        burrow([(o, t, 0) for o, t in MANY]),
        [792749024, 792749000, 792748800, 792748600, 792748500],
        931,
        1512224650,
        True,
        False,
        False,
        True,
        False,
        STOP,
    ),
    (
        burrow([(o, t, 0) for o, t in MANY]),
        [792748094, 792748093, 792748093, 792748093],
        1,
        1512224650,
        True,
        False,
        False,
        True,
        True,
        OK,
    ),
    (
        burrow([(1000 + 500 * i, 100000 + 50000 * i, None if i % 2 else 50 * (i // 2)) for i in range(10)]),
        [5700],
        200,
        600,
        False,
        False,
        False,
        True,
        False,
        OK,
    ),
]


@pytest.mark.parametrize("n", range(len(BURROW_TABLE)))
def test_burrow_evaluator_table(n: int) -> None:
    window, ends, current, now_s, stopped, rewound, stalled, never_down, recent_zero, status = BURROW_TABLE[n]
    now = now_s * 1000
    assert (
        is_stopped(window, now),
        is_rewound(window),
        is_stalled(window),
        lag_never_decreased([c.lag for c in window]),
        recent_lag_zero(window, ends),
    ) == (stopped, rewound, stalled, never_down, recent_zero), n
    assert evaluate(window, now, current_lag=current, recent_ends=ends) == status, n


def test_lag_that_moves_up_and_down_never_reaching_zero_is_ok() -> None:
    """A consumer keeping up: lag between 20 and 35, never zero, not always increasing -> OK."""
    lags = [20, 35, 25, 30, 22, 33, 27, 21, 35, 24]
    window = [Commit(1000 + 100 * i, T0 + 5000 * i, lag) for i, lag in enumerate(lags)]
    assert evaluate(window, T0 + 50_000, current_lag=28) == OK
    # while lag that never went down between two commits is Burrow's WARN, flat steps included
    flat = [Commit(1000 + 100 * i, T0 + 5000 * i, lag) for i, lag in enumerate([20, 20, 25, 25, 30])]
    assert evaluate(flat, T0 + 25_000, current_lag=30) == WARN


def test_one_commit_is_never_stopped_nor_stalled_at_once() -> None:
    one = [Commit(100, T0, 40)]
    assert evaluate(one, T0 + 1, current_lag=40) == OK
    assert evaluate(one, T0 + 3_600_000, current_lag=40) == OK


def test_samples_judge_new_commits_only_and_never_stop() -> None:
    # the same commit sampled while the log grows, then new commits with lag going down: not WARN
    s = [
        Commit(100, T0, 20),
        Commit(100, T0 + 10_000, 30),
        Commit(130, T0 + 20_000, 25),
        Commit(150, T0 + 30_000, 15),
    ]
    assert evaluate(s, T0 + 10**9, evidence=SAMPLES) == OK
    assert (
        evaluate([Commit(100, T0, 20), Commit(100, T0 + 10_000, 30)], T0 + 10**9, evidence=SAMPLES) == STALL
    )


def test_commits_closer_than_a_second_are_one_entry() -> None:
    w = CommitWindows(5)
    w.end_offset("t", 0, 500, T0)
    w.add(("g", "t", 0), 100, T0)
    w.add(("g", "t", 0), 120, T0 + 400)
    w.add(("g", "t", 0), 130, T0 + 1500)
    assert list(w.windows[("g", "t", 0)]) == [Commit(120, T0, 380), Commit(130, T0 + 1500, 370)]


# -- offline: the history on disk -----------------------------------------------------------------


@pytest.fixture
def history(tmp_path: Path) -> Path:
    log_dir = tmp_path / "data"
    # orders-0: record i written at T0 + i s, in batches of 10 -> the end offset at T0 + t s is the
    # next offset after the last full batch written by then (a batch's last record at base+9 s)
    writer = SegmentWriter(log_dir / "orders-0", 0)
    for base in range(0, 1000, 10):
        recs = [Record(o, T0 + o * 1000, b"k", b"v", ()) for o in range(base, base + 10)]
        writer.append(encode_v2_batch(recs), recs[-1].offset, recs[-1].timestamp, recs[-1].offset)
    writer.close()
    b = OffsetsLogBuilder(log_dir)
    commits = {
        "steady": [(20, 20)],  # end at 20 s: 20 -> lag 0 (and judged at 60 s: 60 - 20 > 0 span, one commit)
        "stuck": [(15, 30), (15, 40), (15, 50), (15, 60)],  # ends 30, 40, 50, 60: lag 15..45
        "lagging": [(10, 30), (15, 40), (20, 50), (25, 60)],  # lag 20, 25, 30, 35
        "stopped": [(5, 10), (8, 20)],  # ends 10, 20: lag 5, 12; judged at 60 s
        "rewound": [(30, 40), (20, 50), (50, 60)],  # lag 10, 30, 10
        # caught up (lag 0) at first, then dead while production goes on: STOP, not OK
        "dead": [(10, 10), (20, 20), (30, 30)],
        # rewinds at 320 s, then runs ahead; the history cut at 330 s ends with the rewind
        "rewinder": [(280, 300), (250, 320), (335, 340), (347, 350), (358, 360)],
    }
    for group, entries in commits.items():
        for offset, t in entries:
            b.batch([(commit_key(group, "orders", 0), commit_value(offset, T0 + t * 1000))])
    b.close()
    return log_dir


def watch_json(log_dir: Path, *args: str) -> tuple[int, dict, str]:
    res = run_kafkatool("offsets", "watch", "--log-dir", str(log_dir), *args, "--format", "json")
    return res.code, {g["group"]: g for g in json.loads(res.out)["groups"]}, res.err


def watch_live(c: FakeKafkaCluster, *args: str) -> Result:
    """`offsets watch` against the fake cluster."""
    return run_kafkatool("offsets", "watch", "--bootstrap-server", c.bootstrap, *args)


def test_offline_history_statuses_and_exit_codes(history: Path) -> None:
    now = str(T0 + 60_000)
    code, groups, err = watch_json(history, "--all-groups", "--now", now, "--window", "3")
    assert code == 4, err
    parts = {g: v["partition_statuses"][0] for g, v in groups.items()}
    assert {g: p["status"] for g, p in parts.items()} == {
        "steady": "OK",
        "stuck": "STALL",
        "lagging": "WARN",
        "stopped": "STOP",
        "rewound": "REWIND",
        "dead": "STOP",
    }
    assert {g["evidence"] for g in groups.values()} == {"log"}
    assert (parts["stuck"]["first_lag"], parts["stuck"]["last_lag"]) == (25, 45)
    assert parts["lagging"]["last_lag"] == 35 and parts["stopped"]["current_lag"] == 52
    ok = run_kafkatool("offsets", "watch", "--log-dir", str(history), "--group", "steady", "--now", now)
    assert ok.code == 0 and "Group steady: OK on log" in ok.out and " log " in ok.out.splitlines()[1]
    warn = run_kafkatool("offsets", "watch", "--log-dir", str(history), "--group", "lagging", "--now", now)
    assert warn.code == 1 and "Group lagging: WARN (worst: orders-0 WARN) on log" in warn.out
    res = run_kafkatool(
        "offsets",
        "watch",
        "--log-dir",
        str(history),
        "--group",
        "stuck",
        "--window",
        "2",
        "--now",
        now,
        "--format",
        "ndjson",
    )
    lines = [json.loads(x) for x in res.out.splitlines()]
    assert lines[0]["type"] == "partition" and lines[0]["commits"] == 2 and lines[0]["status"] == "STALL"
    assert lines[-1] == {
        "type": "group",
        "group": "stuck",
        "status": "ERR",
        "evidence": "log",
        "partitions": 1,
        "worst_partition": {"topic": "orders", "partition": 0, "status": "STALL"},
        "counts": {"OK": 0, "WARN": 0, "STOP": 0, "STALL": 1, "REWIND": 0, "UNKNOWN": 0},
    }


def test_stop_is_checked_before_zero_lag_at_every_later_now(history: Path) -> None:
    """A consumer caught up (lag 0) and then dead while production goes on: STOP from the moment the
    silence outlasts its window, whatever --now; just after its last commit it is still OK."""
    for t, status in ((35, "OK"), (51, "STOP"), (90, "STOP"), (900, "STOP")):
        _, groups, _ = watch_json(history, "--group", "dead", "--now", str(T0 + t * 1000))
        assert groups["dead"]["partition_statuses"][0]["status"] == status, t


def test_now_cuts_the_history(history: Path) -> None:
    code, groups, _ = watch_json(history, "--group", "rewinder", "--window", "3", "--now", str(T0 + 330_000))
    p = groups["rewinder"]["partition_statuses"][0]
    assert (code, p["status"], p["last_offset"], p["commits"]) == (4, "REWIND", 250, 2)
    _, groups, _ = watch_json(history, "--group", "rewinder", "--window", "3", "--now", str(T0 + 361_000))
    p = groups["rewinder"]["partition_statuses"][0]
    assert (p["status"], p["last_offset"]) == ("OK", 358)


def test_usage_errors(history: Path) -> None:
    for args in (["--window", "0"], ["--interval", "-1"], ["--now", "-3"]):
        res = run_kafkatool(*["offsets", "watch", "--log-dir", str(history), "--all-groups", *args])
        assert res.code == 2, (args, res.err)
        assert args[0] in res.err
    res = run_kafkatool(*["offsets", "watch", "--log-dir", str(history)])
    assert res.code == 2


# -- live -----------------------------------------------------------------------------------------


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeClock]:
    c = FakeClock(T0 + 100_000)
    monkeypatch.setattr(offsets_watch, "CLOCK", c)
    yield c


def ndjson(out: str) -> list[dict]:
    return [json.loads(x) for x in out.splitlines()]


def test_live_samples_over_the_admin_api(clock: FakeClock) -> None:
    """No readable __consumer_offsets: sampled offsets, said so; offsets that never move while lag
    stays are STALL; a partition with no lag is OK; samples stream as NDJSON before the statuses."""
    with FakeKafkaCluster(brokers=2) as c:
        c.add_topic("orders", 2, log_end=100)
        c.add_group("app", state="Empty", offsets={("orders", 0): (40, ""), ("orders", 1): (100, "")})
        res = watch_live(c, "--group", "app", "--window", "3", "--interval", "30", "--format", "ndjson")
    assert res.code == 4, res.err
    assert "__consumer_offsets cannot be read" in res.err and res.err.count("\n") == 1
    lines = ndjson(res.out)
    samples = [x for x in lines if x["type"] == "sample"]
    assert len(samples) == 6 and [s["time_ms"] for s in samples[::2]] == [
        T0 + 100_000,
        T0 + 130_000,
        T0 + 160_000,
    ]
    parts = {x["partition"]: x for x in lines if x["type"] == "partition"}
    assert parts[0]["status"] == "STALL" and parts[0]["last_lag"] == 60 and parts[0]["complete"] is True
    assert parts[0]["evidence"] == "samples" and parts[1]["status"] == "OK"
    assert (
        lines[-1]["type"] == "group" and lines[-1]["status"] == "ERR" and lines[-1]["evidence"] == "samples"
    )


def test_live_samples_window_one_is_not_stop(clock: FakeClock) -> None:
    with FakeKafkaCluster(brokers=1) as c:
        c.add_topic("orders", 1, log_end=100)
        c.add_group("app", state="Empty", offsets={("orders", 0): (40, "")})
        res = watch_live(c, "--group", "app", "--window", "1", "--format", "json")
    assert res.code == 0, res.err
    assert json.loads(res.out)["groups"][0]["partition_statuses"][0]["status"] == "OK"


def test_live_samples_all_groups_are_listed_every_round(clock: FakeClock) -> None:
    with FakeKafkaCluster(brokers=1) as c:
        c.add_topic("orders", 1, log_end=100)
        c.add_group("old", state="Empty", offsets={("orders", 0): (100, "")})
        clock.at(T0 + 115_000, lambda: c.add_group("new", state="Empty", offsets={("orders", 0): (100, "")}))
        res = watch_live(c, "--all-groups", "--window", "3", "--interval", "10", "--format", "json")
        listed = sum(c.count("ListGroups").values())
    assert res.code == 0, res.err
    assert [g["group"] for g in json.loads(res.out)["groups"]] == ["new", "old"] and listed == 3


class Producer:
    """orders-0 grows by ten records a second from T0 (the fake's log: record o at T0 + o/10 s)."""

    def __init__(self, c: FakeKafkaCluster, clock: FakeClock) -> None:
        self.c, self.clock = c, clock

    def end(self) -> int:
        return (self.clock.now_ms() - T0) // 100

    def tick(self) -> None:
        self.c.partition("orders", 0).log_end = self.end()


def live_consumer(
    c: FakeKafkaCluster,
    clock: FakeClock,
    group: str,
    lags: list[int],
    until_s: int,
    rewind_at_s: int | None = None,
) -> None:
    """A consumer committing every 5 s from T0+50 s (history) to `until_s`, `lags[i]` behind the log end,
    and production going on to T0+200 s; the commits before the clock's start are already in the log."""
    p = Producer(c, clock)
    for i, t in enumerate(range(50, 200, 5)):

        def step(t: int = t, i: int = i) -> None:
            p.tick()
            if t <= until_s:
                off = 10 if rewind_at_s is not None and t == rewind_at_s else p.end() - lags[i % len(lags)]
                c.write_commit(group, "orders", 0, off, clock.now_ms())

        if T0 + t * 1000 <= clock.now_ms():
            saved = clock.ms
            clock.ms = T0 + t * 1000
            step()
            clock.ms = saved
        else:
            clock.at(T0 + t * 1000, step)
    p.tick()


def run_live(c: FakeKafkaCluster, group: str, *args: str) -> tuple[int, list[dict], str]:
    res = watch_live(c, "--group", group, "--window", "10", "--interval", "10", "--format", "ndjson", *args)
    return res.code, ndjson(res.out), res.err


def cluster_with_commit_log() -> FakeKafkaCluster:
    c = FakeKafkaCluster(brokers=2)
    c.add_offsets_topic(3)
    c.add_topic("orders", 1, log_end=0, interval_ms=100)
    return c


def test_live_commits_a_healthy_consumer_that_never_reaches_zero_lag_is_ok(clock: FakeClock) -> None:
    with cluster_with_commit_log() as c:
        live_consumer(c, clock, "app", [20, 35, 25, 30, 22], until_s=200)
        code, lines, err = run_live(c, "app")
    assert code == 0, err
    assert err == ""
    verdicts = [x["status"] for x in lines if x["type"] == "verdict"]
    assert verdicts == ["OK"]
    part = next(x for x in lines if x["type"] == "partition")
    assert part["evidence"] == "commits" and part["commits"] == 10 and part["status"] == "OK"
    assert any(x["type"] == "commit" for x in lines)


def test_live_commits_a_killed_consumer_is_stop_once_its_silence_outlasts_its_window(
    clock: FakeClock,
) -> None:
    with cluster_with_commit_log() as c:
        live_consumer(c, clock, "app", [20, 35, 25, 30, 22], until_s=115)
        code, lines, err = run_live(c, "app")
    assert code == 4, err
    stop = next(x for x in lines if x["type"] == "verdict" and x["status"] == "STOP")
    # the last ten commits span 70..115 s (45 s): STOP as soon as 45 s pass after 115 s, at the next read
    assert T0 + 160_000 < stop["time_ms"] <= T0 + 160_500
    assert lines[-1]["status"] == "ERR" and lines[-1]["evidence"] == "commits"


def test_live_commits_a_rewind_is_reported_at_the_commit(clock: FakeClock) -> None:
    with cluster_with_commit_log() as c:
        live_consumer(c, clock, "app", [20, 35, 25, 30, 22], until_s=200, rewind_at_s=130)
        code, lines, err = run_live(c, "app")
    # REWIND while the rewind is in the window; ten commits later it has left it
    assert [x["status"] for x in lines if x["type"] == "verdict"] == ["OK", "REWIND", "OK"] and code == 0, err
    rewind = next(x for x in lines if x["type"] == "verdict" and x["status"] == "REWIND")
    assert T0 + 130_000 <= rewind["time_ms"] <= T0 + 130_500
    commit = next(x for x in lines if x["type"] == "commit" and x["offset"] == 10)
    assert commit["commit_ms"] == T0 + 130_000


def test_live_commits_history_fills_the_window_at_start(clock: FakeClock) -> None:
    """Commits already in the log: judged at the first round, their lag the end offset at their time."""
    with cluster_with_commit_log() as c:
        live_consumer(c, clock, "app", [20], until_s=60)
        code, lines, err = run_live(c, "app", "--window", "3")
    assert code == 4, err
    first = next(x for x in lines if x["type"] == "verdict")
    assert (first["time_ms"], first["status"]) == (T0 + 100_000, "STOP")  # 40 s since 60 s > the 10 s span
    part = next(x for x in lines if x["type"] == "partition")
    assert part["evidence"] == "commits" and part["last_offset"] == 580 and part["last_lag"] == 20


def test_a_generated_group_history_is_ok_while_it_commits_and_stop_after(tmp_path: Path) -> None:
    """`generate --consumer-group`: commits every 100 records (record i written at T0 + i ms), a few
    behind, until 80% of the log: at T0+1 s OK (lag up and down, never zero), at T0+5 s STOP (the last
    commit at 1602 ms; its ten commits span 900 ms; 3.4 s of silence)."""
    res = run_kafkatool(
        "generate", str(tmp_path / "d"), "--topic", "orders", "--records", "2000", "--consumer-group", "app"
    )
    assert res.code == 0, res.err
    _, groups, _ = watch_json(tmp_path / "d", "--group", "app", "--now", str(T0 + 1000))
    p = groups["app"]["partition_statuses"][0]
    assert (p["status"], p["last_offset"], p["last_commit_ms"], p["commits"]) == ("OK", 892, T0 + 902, 9)
    code, groups, _ = watch_json(tmp_path / "d", "--group", "app", "--now", str(T0 + 5000))
    p = groups["app"]["partition_statuses"][0]
    assert (code, p["status"], p["last_offset"], p["last_commit_ms"]) == (4, "STOP", 1592, T0 + 1602)


def test_live_commits_all_groups_sees_groups_created_during_the_run(clock: FakeClock) -> None:
    with cluster_with_commit_log() as c:
        live_consumer(c, clock, "old", [20, 35, 25, 30, 22], until_s=200)
        clock.at(T0 + 122_000, lambda: c.write_commit("new", "orders", 0, 1200, clock.now_ms()))
        res = watch_live(c, "--all-groups", "--window", "5", "--interval", "10", "--format", "json")
        listed = sum(c.count("ListGroups").values())
    assert res.code == 0, res.err
    groups = {g["group"]: g for g in json.loads(res.out)["groups"]}
    assert sorted(groups) == ["new", "old"] and {g["evidence"] for g in groups.values()} == {"commits"}
    assert listed == 2 * 6  # of both brokers: once with the history, then every round


@settings(max_examples=300, deadline=None)
@given(data=st.binary(max_size=400), cut=st.integers(0, 400))
def test_commit_log_reader_never_raises_on_any_fetch_bytes(data: bytes, cut: int) -> None:
    """Whatever a broker's Fetch answer holds (garbage, cut batches, real commit batches with bytes
    flipped), reading it gives commits or nothing, never an exception."""
    from kafkatool.cluster.commit_log import CommitTail

    key = commit_key("g", "t", 0)
    good = encode_v2_batch([Record(5, T0, key, commit_value(7, T0), ())], 5)
    for blob in (data, good[:cut], good[:cut] + data + good[cut:], good + data):
        tail = CommitTail(None)  # type: ignore[arg-type]
        tail.positions = {0: 0}
        tail._read(0, blob)
    tail = CommitTail(None)  # type: ignore[arg-type]
    tail.positions = {0: 0}
    assert [(c.group, c.offset, c.commit_timestamp) for c in tail._read(0, good)] == [("g", 7, T0)]
