"""Kafka-stored groups over the Admin API, against the protocol-faithful fake cluster (real sockets,
real kafka-python client): describe texts, time lag, batching per broker, reset, export, end."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kafkatool.cli.offsets  # noqa: F401  (registers the command)
import kafkatool.cli.offsets_end  # noqa: F401
import kafkatool.cli.offsets_export  # noqa: F401
import kafkatool.cli.offsets_reset  # noqa: F401
from kafkatool.cluster.groups import BrokerOffsets, KafkaGroups
from kafkatool.ops import offsets_report as rep
from kafkatool.release import Release
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
    head = ("\nGROUP           TOPIC           PARTITION  CURRENT-OFFSET  LOG-END-OFFSET  LAG             CONSUMER-ID     HOST"
            "            CLIENT-ID\n")
    p0 = "app             payments        0          -               40              -               consumer-2-77e3 /10.0.0.2       consumer-2\n"
    o2 = "app             orders          2          100             100             0               consumer-2-77e3 /10.0.0.2       consumer-2\n"
    o3 = "app             orders          3          53              100             47              consumer-2-77e3 /10.0.0.2       consumer-2\n"
    idle_p0 = "idle            payments        0          40              40              0               -               -               -\n"
    idle_o0 = "idle            orders          0          10              100             90              -               -               -\n"
    # Kafka 4.2's tool sorts each member's rows by topic and partition; before it, a hash map's order.
    sorted_rows = Release(*map(int, cluster.version.split(".")[:2])) >= Release(4, 2)
    assert out == (
        head + (o2 + o3 + p0 if sorted_rows else p0 + o2 + o3) +
        "app             orders          0          50              100             50              consumer-1-0a8c /10.0.0.1       consumer-1\n"
        "app             orders          1          51              100             49              consumer-1-0a8c /10.0.0.1       consumer-1\n"
        "app             payments        1          44              45              1               -               -               -\n"
        + head + (idle_o0 + idle_p0 if sorted_rows else idle_p0 + idle_o0)
    )
    assert err == "\nConsumer group 'idle' has no active members.\n"
    rc, out, err = cli("offsets", "--bootstrap-server", cluster.bootstrap, "--group", "nope")
    assert (rc, out, err) == (2, "\nError: Consumer group 'nope' does not exist.\n", "kafkatool: group 'nope': does not exist\n")


def test_members_state_and_machine_formats(cluster: FakeKafkaCluster) -> None:
    rc, out, _ = cli("--kafka-release", "3.3", "offsets", "--bootstrap-server", cluster.bootstrap, "--group", "app",
                     "--members", "--verbose")
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


def test_sampling_measures_rates(monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeKafkaCluster(brokers=1) as c:
        c.add_topic("t", 1, log_end=100)
        c.add_group("g", offsets={("t", 0): (40, "")})
        first_sample = rep.sample_key

        def progress(reports):  # type: ignore[no-untyped-def]
            # move the group and the log exactly between the two samples: once the first is taken,
            # before the second starts (a thread with a delay lost that race on a loaded machine)
            key = first_sample(reports)
            c.partition("t", 0).log_end = 110
            c.groups["g"].offsets[("t", 0)] = (70, "")
            return key

        monkeypatch.setattr(rep, "sample_key", progress)
        rc, out, err = cli("offsets", "--bootstrap-server", c.bootstrap, "--group", "g", "--sample", "1", "--format", "json")
        assert rc == 0, err
        (row,) = json.loads(out)
        assert row["consume_rate"] == pytest.approx(30, rel=0.3) and row["produce_rate"] == pytest.approx(10, rel=0.3)
        assert row["drain_seconds"] == pytest.approx(40 / 20, rel=0.5)
        rc, out, err = cli("offsets", "--bootstrap-server", c.bootstrap, "--group", "g", "--max-lag", "10")
        assert rc == 1 and err.endswith("kafkatool: lag over the limit: g t-0 lag 40\n")


def test_reset_dry_run_execute_refusal_and_round_trip(cluster: FakeKafkaCluster, tmp_path: Path) -> None:
    b = cluster.bootstrap
    rc, out, err = cli("--kafka-release", "3.3", "offsets", "reset", "--bootstrap-server", b, "--group", "idle",
                       "--all-topics", "--to-earliest")
    assert rc == 0 and "dry run" in err
    # Kafka 3.3: the committed offsets' Java HashMap order (payments-0 in bucket 4, orders-0 in 9), kept by
    # the 2-entry Scala Map the plan is built into
    assert out == ("\nGROUP                          TOPIC                          PARTITION  NEW-OFFSET     \n"
                   "idle                           payments                       0          0              \n"
                   "idle                           orders                         0          0              \n")
    assert cluster.groups["idle"].offsets[("orders", 0)] == (10, "")
    rc, _, err = cli("offsets", "reset", "--bootstrap-server", b, "--group", "app", "--all-topics", "--to-latest", "--execute")
    assert rc == 1 and "is inactive, but the current state is Stable" in err
    assert cluster.groups["app"].offsets[("orders", 0)] == (50, "")
    # a dry run on an active group: the refusal alone, no plan and no "dry run" note before it
    rc, out, err = cli("offsets", "reset", "--bootstrap-server", b, "--group", "app", "--all-topics", "--to-latest")
    assert (rc, out, err) == (1, "", "kafkatool: Assignments can only be reset if the group 'app' is inactive, "
                                     "but the current state is Stable.\n")
    # with an inactive group too: the refusal first, then that group's plan and the note
    rc, out, err = cli("offsets", "reset", "--bootstrap-server", b, "--group", "app", "--group", "idle",
                       "--all-topics", "--to-latest")
    assert rc == 1 and "idle" in out and "app " not in out
    assert err.splitlines() == ["kafkatool: Assignments can only be reset if the group 'app' is inactive, "
                                "but the current state is Stable.",
                                "kafkatool: dry run: no offsets changed (add --execute to apply)"]

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
    # Kafka's --export order on every release: the committed offsets' HashMap (payments-0 before orders-0)
    assert (tmp_path / "idle.csv").read_text() == "payments,0,40\norders,0,10\n\n"

    rc, out, _ = cli("--kafka-release", "3.3", "offsets", "reset", "--bootstrap-server", b, "--group", "idle",
                     "--topic", "payments", "--to-datetime", "2023-11-14T22:13:40.000Z", "--export")
    assert cluster.partition("payments", 0).offset_for_time(1_700_000_020_000)[0] == 20  # 22:13:40Z is record 20
    assert out == "payments,0,20\npayments,1,20\n\n"


def test_export_and_end_offsets(cluster: FakeKafkaCluster) -> None:
    b = cluster.bootstrap
    rc, out, _ = cli("offsets", "export", "--bootstrap-server", b, "--all-groups")
    assert {"app,orders,0,50", "app,orders,1,51", "idle,orders,0,10"} <= set(out.splitlines())
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


def test_usage_errors_and_unreachable_cluster(refused_port: int) -> None:
    port = refused_port
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


def test_max_time_lag_alone_computes_the_time_lag(cluster: FakeKafkaCluster) -> None:
    """--max-time-lag without --time-lag still measures it (the fake's records are from 2023) and
    keeps Kafka's describe table on stdout."""
    rc, out, err = cli("offsets", "--bootstrap-server", cluster.bootstrap, "--group", "idle", "--max-time-lag", "60")
    assert rc == 1, err
    assert out.splitlines()[1].split()[:3] == ["GROUP", "TOPIC", "PARTITION"]
    assert err.splitlines()[-1].startswith("kafkatool: lag over the limit: idle orders-0 time lag ")
    cluster.partition("orders", 0).first_timestamp = int(time.time() * 1000) - 10 * 1000  # record 10 is ~now
    cluster.partition("orders", 0)._cache.clear()
    cluster.partition("payments", 0).first_timestamp = int(time.time() * 1000)
    cluster.partition("payments", 0)._cache.clear()
    rc, out, err = cli("offsets", "--bootstrap-server", cluster.bootstrap, "--group", "idle", "--max-time-lag", "3600")
    assert rc == 0, err


@pytest.mark.parametrize("release", ["3.3", "4.0"])
def test_reset_by_time_warns_on_stdout_like_kafka(cluster: FakeKafkaCluster, release: str) -> None:
    """An empty partition (or a time after the last record): Kafka's `Warn:` line on stdout, after an
    empty line, before the table (ConsumerGroupCommand.getLogTimestampOffsets); not a stderr note."""
    cluster.add_topic("single", 1, log_end=0)
    rc, out, err = cli("--kafka-release", release, "offsets", "reset", "--bootstrap-server", cluster.bootstrap,
                       "--group", "idle", "--topic", "single", "--to-datetime", "2023-11-14T22:13:40.000Z")
    assert rc == 0, err
    assert out.startswith("\nWarn: Partition 0 from topic single is empty. Falling back to latest known offset.\n"
                          "\nGROUP                          TOPIC ")
    assert "Falling back" not in err
    rc, out, err = cli("--kafka-release", release, "offsets", "reset", "--bootstrap-server", cluster.bootstrap,
                       "--group", "idle", "--topic", "orders", "--to-datetime", "2030-01-01T00:00:00.000Z", "--export")
    warned = [int(line.split()[2]) for line in out.splitlines() if line.startswith("Warn:")]
    tps = [("orders", p) for p in range(4)]
    want = rep.java_hashmap_order(tps) if release == "4.0" else rep.scala_mutable_map_order(rep.java_hashmap_order(tps, 4))
    assert warned == [p for _, p in want]
    assert out.endswith("orders,0,100\norders,1,100\norders,2,100\norders,3,100\n\n")


# --------------------------------------------------------------------------------------------------
# Coordinator failover and the --timeout deadline (Kafka's admin client looks coordinators up again)


def test_coordinator_killed_during_sampling_is_looked_up_again(cluster: FakeKafkaCluster) -> None:
    old = cluster.coordinator_of("app")
    cluster.after("OffsetFetch", 1, lambda: cluster.kill(old))  # dies between the two samples
    rc, out, err = cli("offsets", "--bootstrap-server", cluster.bootstrap, "--all-groups", "--sample", "1",
                       "--format", "json", "--timeout", "20")
    assert rc == 0, err
    assert cluster.coordinator_of("app") != old
    rows = {(r["group"], r["topic"], r["partition"]): r for r in json.loads(out)}
    assert rows[("app", "orders", 0)]["current_offset"] == 50 and rows[("idle", "orders", 0)]["current_offset"] == 10
    assert rows[("app", "orders", 0)]["log_end_offset"] == 100  # leaders moved too
    assert sum(cluster.count("FindCoordinator").values()) >= 2


def test_not_coordinator_and_load_in_progress_are_retried(cluster: FakeKafkaCluster) -> None:
    old = cluster.coordinator_of("app")
    new = next(i for i in sorted(cluster.brokers) if i != old)
    cluster.after("FindCoordinator", 1, lambda: cluster.move_coordinator("app", new))
    rc, out, err = cli("offsets", "--bootstrap-server", cluster.bootstrap, "--group", "app", "--state")
    assert rc == 0, err
    host, port = cluster.endpoint(new)
    assert out.splitlines()[2].split()[:3] == ["app", f"{host}:{port}", f"({new})"]
    assert sum(cluster.count("FindCoordinator").values()) >= 2
    cluster.load_in_progress("idle", 3)
    rc, out, err = cli("offsets", "--bootstrap-server", cluster.bootstrap, "--group", "idle")
    assert rc == 0 and "idle            orders          0          10" in out, err
    assert cluster.loading["idle"] == 0
    cluster.load_in_progress("idle", 10**6)  # never loads: the user's --timeout, reported as given
    start = time.monotonic()
    rc, out, err = cli("offsets", "--bootstrap-server", cluster.bootstrap, "--group", "idle", "--timeout", "2")
    assert (rc, out) == (3, ""), err
    assert time.monotonic() - start < 2 + 8  # ends at the deadline, not after endless retries (slack: a slow CI)
    assert err.startswith("kafkatool: offsets: DescribeGroups: no answer within --timeout 2s (last error: ")
    assert "CoordinatorLoadInProgress" in err and err.count("\n") == 1


# the deadline is the same code at every release; the oldest and newest cover both FindCoordinator forms
# (one group per request, and batched from v4), and each costs the whole --timeout
@pytest.mark.parametrize("cluster", [MATRIX[0], MATRIX[-1]], indirect=True)
def test_a_frozen_coordinator_costs_no_more_than_the_timeout(cluster: FakeKafkaCluster) -> None:
    """A broker that accepts connections and never answers: the whole command stays within --timeout
    and the message names the user's value (it used to take 10.8 s and say 'after 9999 ms')."""
    frozen = cluster.coordinator_of("app")
    others = ",".join(f"127.0.0.1:{cluster.endpoint(i)[1]}" for i in sorted(cluster.brokers) if i != frozen)
    cluster.freeze(frozen)
    start = time.monotonic()
    rc, out, err = cli("offsets", "--bootstrap-server", others, "--group", "app", "--timeout", "3")
    elapsed = time.monotonic() - start
    assert (rc, out) == (3, ""), err
    # ends at the deadline, not after the client's own 10 s request timeout (the bug took 10.8 s); the
    # slack is for a slow CI machine
    assert elapsed < 3 + 6, elapsed
    assert "no answer within --timeout 3s" in err and err.count("\n") == 1, err


# --------------------------------------------------------------------------------------------------
# Kafka 4.0's text: row order from the HashMaps of ConsumerGroupCommand.java, state line first


def test_kafka_40_describe_and_reset_order(cluster: FakeKafkaCluster) -> None:
    """Kafka 4.0 collects each member's partitions, sorted by partition, into the HashMap of log-end
    offsets and prints that map's order: 3, 2, 1, 0 for one topic (TopicPartition.hashCode buckets
    fall by one per partition); `has no active members` comes before the table."""
    cluster.add_topic("t", 4, log_end=100)
    cluster.add_group("four", state="Empty", offsets={("t", p): (10 + p, "") for p in range(4)})
    rc, out, err = cli("--kafka-release", "4.0", "offsets", "--bootstrap-server", cluster.bootstrap, "--group", "four")
    assert rc == 0, err
    assert [line.split()[2] for line in out.splitlines()[2:]] == ["3", "2", "1", "0"]
    assert err == "\nConsumer group 'four' has no active members.\n"
    rc, out33, _ = cli("--kafka-release", "3.3", "offsets", "--bootstrap-server", cluster.bootstrap, "--group", "four")
    assert [line.split()[2] for line in out33.splitlines()[2:]] == ["0", "1", "2", "3"]  # Scala Map4: insertion order
    rc, out, err = cli("--kafka-release", "4.0", "offsets", "reset", "--bootstrap-server", cluster.bootstrap,
                       "--group", "four", "--group", "idle", "--all-topics", "--to-earliest")
    assert rc == 0, err
    rows = [tuple(line.split()[:3]) for line in out.splitlines()[2:]]
    from kafkatool.jvm.hashing import string_hash
    from kafkatool.jvm.java_collections import grown_capacity, hash_order

    groups = hash_order(["four", "idle"], string_hash, grown_capacity(2))
    want = {"four": [("t", p) for p in range(4)], "idle": [("orders", 0), ("payments", 0)]}
    assert rows == [(g, t, str(p)) for g in groups for t, p in rep.java_hashmap_order(want[g])]
    assert [p for g, _, p in rows if g == "four"] == ["3", "2", "1", "0"]


# the stream order is the tool text's (chosen by --kafka-release), not the broker's: one broker release
@pytest.mark.parametrize("cluster", MATRIX[-1:], indirect=True)
def test_kafka_40_state_line_is_written_before_the_table(cluster: FakeKafkaCluster) -> None:
    """One stream, as a terminal shows it: 4.0 writes the stderr line first, 3.3's tool after."""
    import subprocess
    import sys

    def merged(release: str) -> str:
        return subprocess.run([sys.executable, "-m", "kafkatool", "--kafka-release", release, "offsets",
                               "--bootstrap-server", cluster.bootstrap, "--group", "idle"], stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True, timeout=120, check=True).stdout

    assert merged("4.0").startswith("\nConsumer group 'idle' has no active members.\n\nGROUP ")
    assert merged("3.3").endswith("\nConsumer group 'idle' has no active members.\n")


def test_consumer_protocol_groups_are_described_with_consumer_group_describe() -> None:
    """KIP-848 groups (group.protocol=consumer) answer ConsumerGroupDescribe (API 69); classic groups
    answer it GROUP_ID_NOT_FOUND and are described by DescribeGroups, as Kafka 4.0's admin client does."""
    with FakeKafkaCluster(brokers=2, version=(4, 0)) as c:
        c.add_topic("orders", 4, log_end=100)
        c.add_topic("t", 4, log_end=100)
        c.add_group("kip848", state="Stable", protocol="uniform", group_type="consumer", members=[
            FakeMember("Mx1", "consumer-kip848-1", "/10.0.0.9", [("t", 0), ("t", 1), ("t", 2), ("t", 3)]),
        ], offsets={("t", p): (90, "") for p in range(4)})
        c.add_group("old", state="Empty", offsets={("orders", 0): (5, "")})
        rc, out, err = cli("offsets", "--bootstrap-server", c.bootstrap, "--group", "kip848", "--group", "old")
        assert rc == 0, err
        lines = out.splitlines()
        assert [(x.split()[0], x.split()[2], x.split()[6]) for x in lines if x.startswith("kip848")] == [
            ("kip848", p, "Mx1") for p in ("3", "2", "1", "0")]
        assert [x.split()[:4] for x in lines if x.startswith("old ")] == [["old", "orders", "0", "5"]]
        assert sum(c.count("ConsumerGroupDescribe").values()) >= 1 and sum(c.count("DescribeGroups").values()) >= 1
        rc, out, err = cli("offsets", "--bootstrap-server", c.bootstrap, "--group", "kip848", "--state")
        assert rc == 0 and out.splitlines()[2].split()[-3:] == ["uniform", "Stable", "1"], (out, err)
        rc, out, err = cli("offsets", "--bootstrap-server", c.bootstrap, "--group", "kip848", "--members", "--verbose")
        assert rc == 0, err
        assert out.splitlines()[2].split() == ["kip848", "Mx1", "/10.0.0.9", "consumer-kip848-1", "4", "5", "t:0,1,2,3",
                                               "5", "t:0,1,2,3"]
    with FakeKafkaCluster(brokers=1, version=(3, 3)) as c:  # no API 69: DescribeGroups only
        c.add_topic("orders", 1, log_end=10)
        c.add_group("old", state="Empty", offsets={("orders", 0): (5, "")})
        rc, out, err = cli("offsets", "--bootstrap-server", c.bootstrap, "--group", "old")
        assert rc == 0 and "ConsumerGroupDescribe" not in {a for _, a in c.requests}, err


def test_kafka_40_members_and_state_text(cluster: FakeKafkaCluster) -> None:
    """4.0's printMembers/printStates (ConsumerGroupCommand.java): epochs and target assignments
    with --verbose, a header even for an empty group, `host:port  (id)` and GROUP sized by the group."""
    b = cluster.bootstrap
    rc, out, _ = cli("--kafka-release", "4.0", "offsets", "--bootstrap-server", b, "--group", "app", "--members", "--verbose")
    assert rc == 0
    assert out.splitlines()[1:] == [  # CURRENT-ASSIGNMENT is as wide as `orders:2,3;payments:0` (21)
        "GROUP           CONSUMER-ID     HOST            CLIENT-ID       #PARTITIONS     CURRENT-EPOCH   "
        "CURRENT-ASSIGNMENT    TARGET-EPOCH    TARGET-ASSIGNMENT   ",
        "app             consumer-1-0a8c /10.0.0.1       consumer-1      2               -               "
        "orders:0,1            -               -                   ",
        "app             consumer-2-77e3 /10.0.0.2       consumer-2      3               -               "
        "orders:2,3;payments:0 -               -                   ",
    ]
    rc, out, err = cli("--kafka-release", "4.0", "offsets", "--bootstrap-server", b, "--group", "idle", "--members")
    assert (rc, err) == (0, "\nConsumer group 'idle' has no active members.\n")
    assert out == "\nGROUP           CONSUMER-ID     HOST            CLIENT-ID       #PARTITIONS     \n"
    c = cluster.coordinator_of("app")
    host, port = cluster.endpoint(c)
    rc, out, _ = cli("--kafka-release", "4.0", "offsets", "--bootstrap-server", b, "--group", "app", "--state")
    coord = f"{host}:{port}  ({c})"
    assert out == (f"\n{'GROUP':<15} {'COORDINATOR (ID)':<25} {'ASSIGNMENT-STRATEGY':<20} {'STATE':<20} #MEMBERS"
                   f"\n{'app':<15} {coord:<25} {'range':<20} {'Stable':<20} 2\n")


def test_reset_execute_follows_a_moved_coordinator(cluster: FakeKafkaCluster) -> None:
    old = cluster.coordinator_of("idle")
    new = next(i for i in sorted(cluster.brokers) if i != old)
    cluster.after("OffsetFetch", 1, lambda: cluster.move_coordinator("idle", new))  # before the commit
    rc, out, err = cli("offsets", "reset", "--bootstrap-server", cluster.bootstrap, "--group", "idle", "--topic", "orders:0",
                       "--to-offset", "42", "--execute")
    assert rc == 0, err
    assert cluster.groups["idle"].offsets[("orders", 0)] == (42, "")
    assert sum(cluster.count("FindCoordinator").values()) >= 2


@pytest.mark.parametrize("release, header", [
    ("3.3.1", "GROUP           CONSUMER-ID     HOST            CLIENT-ID       #PARTITIONS     ASSIGNMENT"),
    ("4.0.0", "GROUP           CONSUMER-ID     HOST            CLIENT-ID       #PARTITIONS     CURRENT-EPOCH   "
              "CURRENT-ASSIGNMENT    TARGET-EPOCH    TARGET-ASSIGNMENT   "),
])
def test_without_kafka_release_the_brokers_release_decides_the_text(release: str, header: str) -> None:
    """A 3.3.1 broker gets kafka-consumer-groups 3.3's `--members --verbose` text, a 4.0.0 broker 4.0's
    (the release read from the ApiVersions the client negotiated)."""
    with FakeKafkaCluster(brokers=1, version=release) as c:
        c.add_topic("orders", 2, log_end=10)
        c.add_group("app", state="Stable", protocol="range", members=[
            FakeMember("consumer-1-0a8c", "consumer-1", "/10.0.0.1", [("orders", 0), ("orders", 1)])],
            offsets={("orders", 0): (5, "")})
        rc, out, err = cli("offsets", "--bootstrap-server", c.bootstrap, "--group", "app", "--members", "--verbose")
    assert rc == 0, err
    assert out.splitlines()[1].split() == header.split()  # the columns (widths follow the content)


def test_reset_and_export_rows_in_kafka_33s_scala_map_order(tmp_path: Path) -> None:
    """Kafka 3.3 builds each group's plan with `toMap`: up to 4 partitions keep the order the tool lists
    them, from 5 a CHAMP HashMap (the model is checked against scala-library in test_scala_collections)."""
    from kafkatool.jvm.hashing import topic_partition_hash
    from kafkatool.jvm.scala_collections import immutable_set_order

    with FakeKafkaCluster(brokers=3, version="3.3.1") as c:
        c.add_topic("orders", 6, log_end=100)
        c.add_group("g", state="Empty", offsets={("orders", p): (p, "") for p in range(6)})
        want = [p for _, p in immutable_set_order([("orders", p) for p in range(6)], lambda tp: topic_partition_hash(*tp))]
        assert want == [0, 3, 1, 5, 2, 4]  # what kafka-consumer-groups.sh 3.3.1 printed on a real cluster
        rc, out, err = cli("offsets", "reset", "--bootstrap-server", c.bootstrap, "--group", "g", "--topic", "orders",
                           "--to-earliest")
        assert rc == 0, err
        assert [int(line.split()[2]) for line in out.splitlines()[2:]] == want
        rc, out, err = cli("offsets", "export", "--bootstrap-server", c.bootstrap, "--group", "g")
        assert rc == 0 and [int(line.split(",")[1]) for line in out.splitlines() if line] == want


@pytest.mark.parametrize("cluster", MATRIX[-1:], indirect=True)
def test_reset_plan_columns_follow_the_release(cluster: FakeKafkaCluster) -> None:
    """4.0's printOffsetsToReset pads to 30/30/10/15; 4.2's (OffsetsUtils) sizes group and topic to the
    widest (at least 15) and leaves the offset unpadded."""
    args = ("offsets", "reset", "--bootstrap-server", cluster.bootstrap, "--group", "idle", "--topic", "orders:0",
            "--to-earliest")
    rc, out, _ = cli("--kafka-release", "4.0", *args)
    assert (rc, out) == (0, "\nGROUP                          TOPIC                          PARTITION  NEW-OFFSET     \n"
                            "idle                           orders                         0          0              \n")
    for rel in ("4.2", "4.3", "4.4"):
        rc, out, _ = cli("--kafka-release", rel, *args)
        assert (rc, out) == (0, "\nGROUP           TOPIC           PARTITION  NEW-OFFSET\n"
                                "idle            orders          0          0\n"), rel


def test_members_verbose_assignment_sorts_partitions_as_numbers_from_4_1() -> None:
    """4.0's getAssignmentString sorts the partitions' strings (`0,10,2`); 4.1 sorts the numbers first."""
    with FakeKafkaCluster(brokers=1, version="4.1") as c:
        c.add_topic("t", 11, log_end=100)
        c.add_group("g", state="Stable", protocol="uniform", group_type="consumer", members=[
            FakeMember("M1", "cl", "/10.0.0.9", [("t", 10), ("t", 2), ("t", 0)])], offsets={})
        for rel, text in (("4.0", "t:0,10,2"), ("4.1", "t:0,2,10"), ("4.3", "t:0,2,10")):
            rc, out, err = cli("--kafka-release", rel, "offsets", "--bootstrap-server", c.bootstrap, "--group", "g",
                               "--members", "--verbose")
            assert rc == 0, err
            assert out.splitlines()[2].split()[6] == text, rel
