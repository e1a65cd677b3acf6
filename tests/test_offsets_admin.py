"""Kafka-stored groups over the Admin API, against the protocol-faithful fake cluster (real sockets,
real kafka-python client): describe texts, time lag, batching per broker, reset, export, end."""

from __future__ import annotations

import json
import socket
import threading
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kafkatool.cli.offsets  # noqa: F401  (registers the command)
from kafkatool.cluster.groups import BrokerOffsets, KafkaGroups
from kafkatool.ops import offsets_report as rep
from tests.support.cli import run_kafkatool
from tests.support.fake_groups import FakeKafkaCluster, FakeMember
from tests.support.kwire import MATRIX


def cli(*args: str) -> tuple[int, str, str]:
    r = run_kafkatool(*args)
    return r.code, r.out, r.err


@pytest.fixture(params=MATRIX)
def cluster(request: pytest.FixtureRequest):  # type: ignore[no-untyped-def]
    """Three brokers of each release of the matrix (their ApiVersions, their message versions)."""
    with FakeKafkaCluster(brokers=3, version=request.param) as c:
        c.add_topic("orders", 4, log_end=100, batch_records=10)
        c.add_topic("payments", 2, log_end=[40, 45])
        c.add_group("app", state="Stable", protocol="range", members=[
            FakeMember("consumer-1-0a8c", "consumer-1", "/10.0.0.1", [("orders", 0), ("orders", 1)]),
            FakeMember("consumer-2-77e3", "consumer-2", "/10.0.0.2", [("orders", 2), ("orders", 3), ("payments", 0)]),
        ], offsets={("orders", 0): (50, ""), ("orders", 1): (51, ""), ("orders", 2): (100, ""), ("orders", 3): (53, ""),
                    ("payments", 1): (44, "note")})
        c.add_group("idle", state="Empty", offsets={("orders", 0): (10, ""), ("payments", 0): (40, "")})
        yield c


def test_describe_matches_kafka_consumer_groups(cluster: FakeKafkaCluster) -> None:
    rc, out, err = cli("offsets", "--bootstrap-server", cluster.bootstrap, "--group", "idle", "--group", "app")
    assert rc == 0, err
    assert out == (
        "\nGROUP           TOPIC           PARTITION  CURRENT-OFFSET  LOG-END-OFFSET  LAG             CONSUMER-ID     HOST            CLIENT-ID\n"
        "app             payments        0          -               40              -               consumer-2-77e3 /10.0.0.2       consumer-2\n"
        "app             orders          2          100             100             0               consumer-2-77e3 /10.0.0.2       consumer-2\n"
        "app             orders          3          53              100             47              consumer-2-77e3 /10.0.0.2       consumer-2\n"
        "app             orders          0          50              100             50              consumer-1-0a8c /10.0.0.1       consumer-1\n"
        "app             orders          1          51              100             49              consumer-1-0a8c /10.0.0.1       consumer-1\n"
        "app             payments        1          44              45              1               -               -               -\n"
        "\nGROUP           TOPIC           PARTITION  CURRENT-OFFSET  LOG-END-OFFSET  LAG             CONSUMER-ID     HOST            CLIENT-ID\n"
        "idle            payments        0          40              40              0               -               -               -\n"
        "idle            orders          0          10              100             90              -               -               -\n"
    )
    assert err == "\nConsumer group 'idle' has no active members.\n"
    rc, out, err = cli("offsets", "--bootstrap-server", cluster.bootstrap, "--group", "nope")
    assert (rc, out, err) == (2, "\nError: Consumer group 'nope' does not exist.\n", "kafkatool: group 'nope': does not exist\n")


def test_members_state_and_machine_formats(cluster: FakeKafkaCluster) -> None:
    rc, out, _ = cli("offsets", "--bootstrap-server", cluster.bootstrap, "--group", "app", "--members", "--verbose")
    assert rc == 0
    assert out.splitlines()[2:] == [
        "app             consumer-1-0a8c /10.0.0.1       consumer-1      2               orders(0,1)",
        "app             consumer-2-77e3 /10.0.0.2       consumer-2      3               orders(2,3), payments(0)",
    ]
    c = cluster.coordinator_of("app")
    host, port = cluster.endpoint(c)
    rc, out, _ = cli("offsets", "--bootstrap-server", cluster.bootstrap, "--group", "app", "--state")
    assert out.splitlines()[2].split() == ["app", f"{host}:{port}", f"({c})", "range", "Stable", "2"]
    rc, out, _ = cli("offsets", "--bootstrap-server", cluster.bootstrap, "--all-groups", "--format", "json")
    rows = json.loads(out)
    assert {(r["group"], r["topic"], r["partition"]): r["lag"] for r in rows}[("idle", "orders", 0)] == 90
    assert {r["metadata"] for r in rows if (r["topic"], r["partition"]) == ("payments", 1)} == {"note"}
    rc, out, _ = cli("offsets", "--bootstrap-server", cluster.bootstrap, "--group", "app", "--members", "--format", "csv")
    assert out.splitlines()[0] == "group,consumer_id,group_instance_id,host,client_id,partitions,assignment"


def test_time_lag_reads_the_record_at_the_committed_offset(cluster: FakeKafkaCluster) -> None:
    before = int(time.time() * 1000)
    rc, out, err = cli("offsets", "--bootstrap-server", cluster.bootstrap, "--group", "app", "--time-lag", "--format", "json")
    assert rc == 0, err
    rows = {(r["topic"], r["partition"]): r for r in json.loads(out)}
    fp = cluster.partition("orders", 0)
    assert rows[("orders", 0)]["committed_timestamp"] == fp.timestamp_of(50)
    assert before - fp.timestamp_of(50) <= rows[("orders", 0)]["time_lag_ms"] <= int(time.time() * 1000) - fp.timestamp_of(50)
    assert rows[("orders", 2)]["time_lag_ms"] == 0 and rows[("orders", 2)]["time_lag_note"] == "caught up"
    assert rows[("payments", 0)]["time_lag_ms"] is None  # no committed offset
    assert cluster.groups["app"].commits == 0  # never commits


def test_large_compressed_batches_are_fetched_whole_in_a_second_round() -> None:
    from kafkatool.log.codecs import Codec

    with FakeKafkaCluster(brokers=2) as c:
        c.add_topic("big", 4, log_end=500, batch_records=100, value_bytes=300, codec=Codec.GZIP)
        c.add_topic("plain", 2, log_end=500, batch_records=100, value_bytes=300)
        bo = BrokerOffsets.connect(c.bootstrap, timeout=10)
        try:
            want = {("big", p): 137 + p for p in range(4)} | {("plain", 0): 105, ("plain", 1): 190}
            got = bo.record_timestamps(want, partition_bytes=512)
        finally:
            bo.close()
        for tp, off in want.items():
            assert (got[tp].offset, got[tp].timestamp, got[tp].note) == (off, c.partition(*tp).timestamp_of(off), None), tp
        fetches = c.count("Fetch")
        assert sum(fetches.values()) <= 4  # round 1 per broker, round 2 only for the compressed batches


def test_one_request_per_broker_for_ten_thousand_partitions() -> None:
    with FakeKafkaCluster(brokers=3) as c:
        c.add_topic("big", 10_000, log_end=1000)
        members = [FakeMember(f"consumer-{i}", f"client-{i}", "/10.0.0.9", [("big", p) for p in range(i, 10_000, 4)])
                   for i in range(4)]
        c.add_group("wide", state="Stable", protocol="range", members=members,
                    offsets={("big", p): (p % 1000, "") for p in range(10_000)})
        bo = BrokerOffsets.connect(c.bootstrap, timeout=30)
        try:
            c.requests.clear()
            (report,) = rep.gather_kafka(KafkaGroups(bo), bo, ["wide"])
            assert len(report.rows) == 10_000
            assert c.count("ListOffsets") == {0: 1, 1: 1, 2: 1}
            assert sum(c.count("OffsetFetch").values()) == 1 and sum(c.count("DescribeGroups").values()) == 1
            assert {r.lag for r in report.rows if r.partition == 7} == {1000 - 7}
            c.requests.clear()
            sub = rep.GroupReport("wide", "kafka", "Stable", report.rows[:3000], [])
            rep.add_time_lag([sub], bo, int(time.time() * 1000))
            assert c.count("Fetch") == {0: 1, 1: 1, 2: 1}
            assert all(r.committed_timestamp == c.partition("big", r.partition).timestamp_of(r.current_offset)
                       for r in sub.rows)
        finally:
            bo.close()


def test_leader_moves_and_old_brokers() -> None:
    with FakeKafkaCluster(brokers=2, version=(2, 1)) as c:  # OffsetFetch < v8, FindCoordinator < v4, Fetch < v13
        c.add_topic("t", 2, log_end=30)
        c.add_group("g1", offsets={("t", 0): (3, ""), ("t", 1): (4, "")})
        c.add_group("g2", offsets={("t", 0): (5, "")})
        bo = BrokerOffsets.connect(c.bootstrap, timeout=10)
        try:
            bo.metadata(["t"])
            c.partition("t", 0).leader = 1 - c.partition("t", 0).leader  # moves after we cached the leaders
            c.partition("t", 0).replicas = [c.partition("t", 0).leader]
            reports = rep.gather_kafka(KafkaGroups(bo), bo, ["g1", "g2"])
            assert {(r.group, r.partition): r.lag for x in reports for r in x.rows} == {("g1", 0): 27, ("g1", 1): 26, ("g2", 0): 25}
            assert sum(c.count("OffsetFetch").values()) == 2  # one per group before Kafka 3.0
            rep.add_time_lag(reports, bo, 10**13)
            assert all(r.committed_timestamp is not None for x in reports for r in x.rows)
        finally:
            bo.close()


def test_sampling_measures_rates() -> None:
    with FakeKafkaCluster(brokers=1) as c:
        c.add_topic("t", 1, log_end=100)
        c.add_group("g", offsets={("t", 0): (40, "")})

        def progress() -> None:
            # move the group and the log only once the first sample was taken (not after a fixed
            # delay: on a loaded machine the command may not have sampled yet)
            deadline = time.monotonic() + 60
            while not c.count("ListOffsets") and time.monotonic() < deadline:
                time.sleep(0.01)
            time.sleep(0.1)
            c.partition("t", 0).log_end = 110
            c.groups["g"].offsets[("t", 0)] = (70, "")

        threading.Thread(target=progress, daemon=True).start()
        rc, out, err = cli("offsets", "--bootstrap-server", c.bootstrap, "--group", "g", "--sample", "1", "--format", "json")
        assert rc == 0, err
        (row,) = json.loads(out)
        assert row["consume_rate"] == pytest.approx(30, rel=0.3) and row["produce_rate"] == pytest.approx(10, rel=0.3)
        assert row["drain_seconds"] == pytest.approx(40 / 20, rel=0.5)
        rc, out, err = cli("offsets", "--bootstrap-server", c.bootstrap, "--group", "g", "--max-lag", "10")
        assert rc == 1 and err.endswith("kafkatool: lag over the limit: g t-0 lag 40\n")


def test_reset_dry_run_execute_refusal_and_round_trip(cluster: FakeKafkaCluster, tmp_path: Path) -> None:
    b = cluster.bootstrap
    rc, out, err = cli("offsets", "reset", "--bootstrap-server", b, "--group", "idle", "--all-topics", "--to-earliest")
    assert rc == 0 and "dry run" in err
    assert out == ("\nGROUP                          TOPIC                          PARTITION  NEW-OFFSET     \n"
                   "idle                           orders                         0          0              \n"
                   "idle                           payments                       0          0              \n")
    assert cluster.groups["idle"].offsets[("orders", 0)] == (10, "")
    rc, _, err = cli("offsets", "reset", "--bootstrap-server", b, "--group", "app", "--all-topics", "--to-latest", "--execute")
    assert rc == 1 and "is inactive, but the current state is Stable" in err
    assert cluster.groups["app"].offsets[("orders", 0)] == (50, "")

    for fmt in ("csv", "json", "zk"):
        saved = dict(cluster.groups["idle"].offsets)
        f = tmp_path / f"idle.{fmt}"
        rc, _, err = cli("offsets", "export", "--bootstrap-server", b, "--group", "idle", "--format", fmt, "--output", str(f))
        assert rc == 0, err
        rc, _, err = cli("offsets", "reset", "--bootstrap-server", b, "--group", "idle", "--topic", "orders:0",
                         "--shift-by", "7", "--execute")
        assert rc == 0 and cluster.groups["idle"].offsets[("orders", 0)] == (17, "")
        rc, _, err = cli("offsets", "reset", "--bootstrap-server", b, "--group", "idle", "--from-file", str(f), "--execute")
        assert rc == 0, err
        assert cluster.groups["idle"].offsets == saved, fmt
    assert (tmp_path / "idle.csv").read_text() == "orders,0,10\npayments,0,40\n\n"

    rc, out, _ = cli("offsets", "reset", "--bootstrap-server", b, "--group", "idle", "--topic", "payments",
                     "--to-datetime", "2023-11-14T22:13:40.000Z", "--export")
    assert cluster.partition("payments", 0).offset_for_time(1_700_000_020_000)[0] == 20  # 22:13:40Z is record 20
    assert out == "payments,0,20\npayments,1,20\n\n"


def test_export_and_end_offsets(cluster: FakeKafkaCluster) -> None:
    b = cluster.bootstrap
    rc, out, _ = cli("offsets", "export", "--bootstrap-server", b, "--all-groups")
    assert out.splitlines()[:2] == ["app,orders,0,50", "app,orders,1,51"]
    rc, out, _ = cli("offsets", "export", "--bootstrap-server", b, "--group", "app", "--format", "json")
    doc = json.loads(out)
    assert {(o["topic"], o["partition"]): o["log_end_offset"] for o in doc["offsets"]}[("payments", 1)] == 45
    assert all(o["committed_timestamp"] is not None or o["offset"] == 100 for o in doc["offsets"])
    rc, out, _ = cli("offsets", "end", "--bootstrap-server", b, "--topic", "pay.*")
    assert (rc, out) == (0, "payments:0:40\npayments:1:45\n")
    rc, out, _ = cli("offsets", "end", "--bootstrap-server", b, "--topic", "orders", "--partitions", "1,3", "--time", "earliest")
    assert out == "orders:1:0\norders:3:0\n"
    ts = cluster.partition("orders", 0).timestamp_of(42)
    rc, out, _ = cli("offsets", "end", "--bootstrap-server", b, "--topic", "orders", "--time", str(ts), "--format", "json")
    assert {r["offset"] for r in json.loads(out)} == {42}
    rc, out, err = cli("offsets", "end", "--bootstrap-server", b, "--topic", "nothing-matches")
    assert rc == 2 and err == "kafkatool: Could not match any topic-partitions with the specified filters\n"
    rc, _, err = cli("offsets", "end", "--bootstrap-server", b, "--time", "yesterday")
    assert rc == 2 and err.startswith("kafkatool: Malformed time argument yesterday")


def test_usage_errors_and_unreachable_cluster() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # nothing listens here once closed
    start = time.monotonic()
    rc, out, err = cli("offsets", "--bootstrap-server", f"127.0.0.1:{port}", "--group", "g", "--timeout", "2")
    assert rc == 3 and out == "" and err.startswith("kafkatool: ") and err.count("\n") == 1
    assert time.monotonic() - start < 20
    for args in (["--group", "g"], ["--bootstrap-server", "h:1"], ["--bootstrap-server", "h:1", "--group", "g", "--all-groups"],
                 ["--zookeeper", "h:1", "--group", "g", "--members"], ["--log-dir", "/tmp", "--zookeeper", "h:1", "--group", "g"],
                 ["--bootstrap-server", "h:1", "--group", "g", "--history"], ["--bootstrap-server", "h:1", "--group", "g", "--format", "xml"]):
        rc, _, err = cli("offsets", *args)
        assert rc == 2 and err.startswith("kafkatool: ") and err.count("\n") == 1, (args, err)
    rc, _, err = cli("offsets", "reset", "--bootstrap-server", "h:1", "--group", "g", "--all-topics")
    assert rc == 2 and "choose exactly one of" in err
    rc, _, err = cli("offsets", "reset", "--bootstrap-server", "h:1", "--group", "g", "--to-latest")
    assert rc == 2 and "One of the reset scopes should be defined" in err


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 30), target=st.integers(0, 29), cut=st.integers(17, 4000), compressed=st.booleans())
def test_a_batch_cut_anywhere_gives_the_exact_record_or_asks_for_the_whole_batch(
        n: int, target: int, cut: int, compressed: bool) -> None:
    from kafkatool.cluster.groups import _partial_batch
    from kafkatool.log.codecs import Codec
    from kafkatool.log.writer import Record, encode_v2_batch

    target = 1000 + min(target, n - 1)
    recs = [Record(1000 + i, 1_700_000_000_000 + i * 7, b"k", b"v" * 40, (), -1, None, True) for i in range(n)]
    data = encode_v2_batch(recs, 1000, codec=Codec.GZIP if compressed else Codec.NONE)
    stamp, need = _partial_batch(data[: min(cut, len(data) - 1)], 0, target)
    if need:
        assert need == len(data)
    else:
        assert (stamp.offset, stamp.timestamp, stamp.note) == (target, 1_700_000_000_000 + (target - 1000) * 7, None)
