"""`reassign` over the Admin API: kafka-python's real client against fake brokers speaking the wire protocol."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from kafka.protocol.admin import AlterPartitionReassignmentsRequest, IncrementalAlterConfigsRequest

from kafkatool.cluster.admin import BrokerTooOldError
from kafkatool.cluster.assignment import BrokerMetadata, generate_kafka
from kafkatool.cluster.model import Broker, ConfigChange, TopicPartition, TopicPartitionReplica
from kafkatool.cluster.open import open_cluster
from kafkatool.jvm.random import JavaRandom
from kafkatool.release import Release
from tests.conftest import FIXTURES
from tests.support import kwire
from tests.support.cli import run_kafkatool
from tests.support.fake_admin import INVALID_REPLICA_ASSIGNMENT, FakeKafka
from tests.support.kwire import MATRIX


@pytest.fixture(params=MATRIX)
def release(request: pytest.FixtureRequest) -> str:
    """The Kafka release the fake brokers are (its ApiVersions table, its message versions)."""
    return str(request.param)


@pytest.fixture
def kafka(release: str):  # type: ignore[no-untyped-def]
    with FakeKafka({1: "r1", 2: "r2", 3: "r1", 4: "r2"}, controller=2, release=release) as k:
        k.add_topic("orders", {0: [1, 2], 1: [2, 3], 2: [3, 4], 3: [4, 1]}, size=1000)
        k.add_topic("audit", {0: [1, 2], 1: [2, 1]}, size=10)
        yield k


def needs_2_4(release: str) -> None:
    """Kafka 2.1 has no reassignment requests: test_admin_compat proves those commands exit 2 there."""
    if release == "2.1.1":
        pytest.skip("Kafka 2.1 has no Alter/ListPartitionReassignments (exit 2: tests/test_admin_compat.py)")


def reassign(k: FakeKafka, tmp_path: Path, *args: str):  # type: ignore[no-untyped-def]
    """The command against the fakes, in 4.0's text: the release matrix varies the protocol, not the
    text (the tests of each release's text pass --kafka-release themselves)."""
    return run_kafkatool("--kafka-release", "4.0", "reassign", "--bootstrap-server", k.bootstrap, "--timeout", "5", *args, cwd=tmp_path)


def write(tmp_path: Path, name: str, parts: list[tuple[str, int, list[int]]]) -> str:
    (tmp_path / name).write_text(json.dumps({"version": 1, "partitions": [
        {"topic": t, "partition": p, "replicas": r} for t, p, r in parts]}))
    return name


def test_backend_reads_cluster_over_the_wire(kafka: FakeKafka) -> None:
    kafka.partition("orders", 1).leader = 3
    with open_cluster(bootstrap_server=kafka.bootstrap, timeout=5) as c:
        assert [(b.id, b.rack) for b in c.brokers()] == [(1, "r1"), (2, "r2"), (3, "r1"), (4, "r2")]
        assert all(isinstance(b, Broker) and b.port == kafka.port[b.id] for b in c.brokers())
        assert c.controller() == 2
        assert c.topics() == ["audit", "orders"]
        st = c.partition_states(["orders"])[TopicPartition("orders", 1)]
        assert (st.replicas, st.leader, st.isr) == ([2, 3], 3, [2, 3])
        assert c.partition_sizes(["orders"]) == {TopicPartition("orders", p): 1000 for p in range(4)}
        kafka.set_config("topics", "orders", {"retention.ms": "5"})
        assert c.describe_configs("topics", ["orders"]) == {"orders": {"retention.ms": "5"}}
        assert c.describe_configs("brokers", ["1"]) == {"1": {}}  # static broker configs are not overrides
        changes = [ConfigChange("brokers", "3", set={"leader.replication.throttled.rate": "7"}),
                   ConfigChange("topics", "orders", delete=["retention.ms"])]
        if kafka.release == "2.1.1":
            with pytest.raises(BrokerTooOldError, match=r"^alter configs needs IncrementalAlterConfigs \(Kafka >= 2.3\); "
                               r"the brokers at .* are Kafka 2.1 \(or another release before 2.3\)$"):
                c.alter_configs(changes)
            return
        c.alter_configs(changes)
        assert kafka.config("brokers", "3") == {"leader.replication.throttled.rate": "7"}
        assert kafka.config("topics", "orders") == {}
        with pytest.raises(Exception, match="^Topic nope not found.$"):
            c.partition_states(["nope"])


def test_generate_with_seed_is_kafkas_random_assignment(kafka: FakeKafka, tmp_path: Path) -> None:
    (tmp_path / "t.json").write_text('{"topics":[{"topic":"orders"},{"topic":"audit"}],"version":1}')
    r = reassign(kafka, tmp_path, "--generate", "--topics-to-move-json-file", "t.json", "--broker-list", "1,2,3,4",
                 "--disable-rack-aware", "--seed", "42", "--format", "json", "--no-plan-file")
    assert r.code == 0, r.err
    doc = json.loads(r.out)
    current = {TopicPartition("orders", p): [1, 2] for p in range(4)} | {TopicPartition("audit", p): [1, 2] for p in range(2)}
    expected = generate_kafka(["orders", "audit"], current, [BrokerMetadata(b) for b in (1, 2, 3, 4)], JavaRandom(42))
    assert {(p["topic"], p["partition"]): p["replicas"] for p in doc["proposed"]["partitions"]} == {
        (tp.topic, tp.partition): r for tp, r in expected.items()}
    assert doc["seed"] == 42 and doc["summary"]["bytes_to_move"] is None  # sizes are read for minimal/--compare only
    again = reassign(kafka, tmp_path, "--generate", "--topics-to-move-json-file", "t.json", "--broker-list", "1,2,3,4",
                     "--disable-rack-aware", "--seed", "42", "--no-plan-file")
    assert json.loads(again.out.split("\n")[4]) == doc["proposed"]


def test_minimal_generate_uses_log_dir_sizes(kafka: FakeKafka, tmp_path: Path) -> None:
    (tmp_path / "t.json").write_text('{"topics":[{"topic":"orders"},{"topic":"audit"}],"version":1}')
    r = reassign(kafka, tmp_path, "--generate", "--topics-to-move-json-file", "t.json", "--broker-list", "1,2,3,4",
                 "--strategy", "minimal", "--compare", "--seed", "42", "--format", "json", "--plan-file", "p.json")
    assert r.code == 0, r.err
    doc = json.loads(r.out)
    assert doc["summary"]["replica_moves"] == doc["summary"]["lower_bound_moves"] == 2
    assert doc["summary"]["bytes_to_move"] == 20  # the two audit replicas, not 1000-byte orders ones
    assert [s["strategy"] for s in doc["comparison"]] == ["minimal", "kafka"]
    assert doc["comparison"][1]["replica_moves"] > 2  # Kafka's random plan, seeded: the same every run
    assert json.loads((tmp_path / "p.json").read_text())["kafkatool"]["strategy"] == "minimal"


def test_execute_sets_kafkas_throttles_and_starts(kafka: FakeKafka, tmp_path: Path, release: str) -> None:
    needs_2_4(release)
    kafka.set_config("brokers", "4", {"log.cleaner.threads": "2"})
    f = write(tmp_path, "r.json", [("orders", 0, [3, 1]), ("orders", 1, [2, 3])])
    r = reassign(kafka, tmp_path, "--execute", "--reassignment-json-file", f, "--throttle", "7000",
                 "--rollback-file", "rb.json")
    assert r.code == 0, r.err
    assert r.out.endswith(
        "Save this to use as the --reassignment-json-file option during rollback\n"
        "Warning: You must run --verify periodically, until the reassignment completes, to ensure the throttle is removed.\n"
        "The inter-broker throttle limit was set to 7000 B/s\n"
        "Successfully started partition reassignments for orders-0,orders-1\n")
    assert kafka.config("topics", "orders") == {"leader.replication.throttled.replicas": "0:1,0:2,1:2,1:3",
                                                "follower.replication.throttled.replicas": "0:3"}
    for b in (1, 2, 3):
        assert kafka.config("brokers", str(b)) == {"leader.replication.throttled.rate": "7000",
                                                   "follower.replication.throttled.rate": "7000"}
    assert kafka.config("brokers", "4") == {"log.cleaner.threads": "2"}
    ongoing = kafka.ongoing()
    assert list(ongoing) == [("orders", 0)] and ongoing[("orders", 0)].adding == [3]
    assert all(k.header.client_id == "kafkatool" for k in kafka.sent(AlterPartitionReassignmentsRequest))
    r = reassign(kafka, tmp_path, "--list")
    assert r.out == "Current partition reassignments:\norders-0: replicas: 3,1,2. adding: 3. removing: 2.\n"
    # --additional resubmits while one is running; without it Kafka's refusal
    g = write(tmp_path, "g.json", [("orders", 2, [4, 1])])
    r = reassign(kafka, tmp_path, "--execute", "--reassignment-json-file", g, "--no-plan-file")
    assert r.code == 1 and "Cannot execute because there is an existing partition assignment" in r.err
    r = reassign(kafka, tmp_path, "--execute", "--reassignment-json-file", g, "--additional", "--throttle", "9",
                 "--no-plan-file")
    assert r.code == 0, r.err
    assert kafka.config("topics", "orders")["leader.replication.throttled.replicas"] == "0:1,0:2,2:3,2:4"
    assert kafka.config("topics", "orders")["follower.replication.throttled.replicas"] == "0:3,2:1"


def test_execute_rolls_back_throttles_when_nothing_was_accepted(kafka: FakeKafka, tmp_path: Path, release: str) -> None:
    needs_2_4(release)
    kafka.set_config("brokers", "1", {"leader.replication.throttled.rate": "111"})
    kafka.fail_alter[("orders", 0)] = (INVALID_REPLICA_ASSIGNMENT, "nope")
    f = write(tmp_path, "r.json", [("orders", 0, [3, 1])])
    r = reassign(kafka, tmp_path, "--execute", "--reassignment-json-file", f, "--throttle", "5", "--no-plan-file")
    assert r.code == 3
    assert r.out.endswith("Error reassigning partition(s):\norders-0: Replication assignment is invalid.\n")
    assert r.err.endswith("\nkafkatool: reassign: 1 partition(s) could not be reassigned\n")
    assert kafka.config("brokers", "1") == {"leader.replication.throttled.rate": "111"}
    assert kafka.config("brokers", "3") == {} and kafka.config("topics", "orders") == {}
    assert len(kafka.sent(IncrementalAlterConfigsRequest)) >= 2

    # The whole request refused (e.g. not authorized): one line, exit 3, throttles restored too.
    kafka.fail_alter.clear()
    kafka.fail_alter_request = 31
    r = reassign(kafka, tmp_path, "--execute", "--reassignment-json-file", f, "--throttle", "5", "--no-plan-file")
    assert r.code == 3 and r.err.endswith("\n") and "alter partition reassignments:" in r.err.splitlines()[-1]
    assert kafka.config("brokers", "1") == {"leader.replication.throttled.rate": "111"}
    assert kafka.config("brokers", "3") == {} and kafka.config("topics", "orders") == {}


def test_verify_cancel_and_log_dir_moves(kafka: FakeKafka, tmp_path: Path, release: str) -> None:
    needs_2_4(release)
    f = write(tmp_path, "r.json", [("orders", 0, [3, 1]), ("audit", 1, [1, 2])])
    assert reassign(kafka, tmp_path, "--execute", "--reassignment-json-file", f, "--throttle", "10",
                    "--no-plan-file").code == 0
    r = reassign(kafka, tmp_path, "--verify", "--reassignment-json-file", f)
    assert (r.code, r.out) == (1, "Status of partition reassignment:\n"
                                  "Reassignment of partition audit-1 is completed.\n"
                                  "Reassignment of partition orders-0 is still in progress.\n\n")
    r = reassign(kafka, tmp_path, "--cancel", "--reassignment-json-file", f, "--preserve-throttles")
    assert r.code == 0
    assert r.out == ("Successfully cancelled partition reassignment for: orders-0\n"
                     "None of the specified partition moves are active.")
    assert kafka.ongoing() == {} and kafka.config("brokers", "3")
    r = reassign(kafka, tmp_path, "--verify", "--reassignment-json-file", f)
    assert r.code == 3
    assert r.out == ("Status of partition reassignment:\n"
                     "Reassignment of partition audit-1 is completed.\n"
                     "There is no active reassignment of partition orders-0, but replica set is 1,2 rather than 3,1.\n\n"
                     "Clearing broker-level throttles on brokers 1,2,3,4\n"
                     "Clearing topic-level throttles on topics audit,orders\n")
    assert all(kafka.config("brokers", str(b)) == {} for b in (1, 2, 3, 4))

    # A replica moving between log dirs of its broker (Kafka's log_dirs field).
    kafka.log_dirs = ("/data/a", "/data/b")
    kafka.partition("orders", 2).log_dir = {3: "/data/a", 4: "/data/a"}
    (tmp_path / "d.json").write_text(json.dumps({"version": 1, "partitions": [
        {"topic": "orders", "partition": 2, "replicas": [3, 4], "log_dirs": ["/data/b", "any"]}]}))
    r = reassign(kafka, tmp_path, "--execute", "--reassignment-json-file", "d.json", "--no-plan-file")
    assert r.code == 0, r.err
    assert r.out.endswith("Successfully started partition reassignment for orders-2\n"
                          "Successfully started moving log directory to /data/b for replica orders-2 with broker 3 \n")
    r = reassign(kafka, tmp_path, "--verify", "--reassignment-json-file", "d.json")
    assert r.code == 1 and "Reassignment of replica orders-2-3 is still in progress.\n" in r.out
    kafka.complete_log_dir_moves()
    r = reassign(kafka, tmp_path, "--verify", "--reassignment-json-file", "d.json", "--preserve-throttles")
    assert r.code == 0 and "Reassignment of replica orders-2-3 completed successfully.\n" in r.out
    with open_cluster(bootstrap_server=kafka.bootstrap, timeout=5) as c:
        assert c.replica_log_dirs([TopicPartitionReplica("orders", 2, 3)]) == {
            TopicPartitionReplica("orders", 2, 3): ("/data/b", None)}


def test_verify_completed_clears_throttles_with_exit_0(kafka: FakeKafka, tmp_path: Path, release: str) -> None:
    needs_2_4(release)
    f = write(tmp_path, "r.json", [("orders", 3, [4, 2])])
    assert reassign(kafka, tmp_path, "--execute", "--reassignment-json-file", f, "--throttle", "10",
                    "--no-plan-file").code == 0
    kafka.complete_reassignment()
    r = reassign(kafka, tmp_path, "--verify", "--reassignment-json-file", f)
    assert r.code == 0
    assert r.out == ("Status of partition reassignment:\nReassignment of partition orders-3 is completed.\n\n"
                     "Clearing broker-level throttles on brokers 1,2,3,4\n"
                     "Clearing topic-level throttles on topic orders\n")
    assert kafka.configs == {}


def test_unreachable_bootstrap_is_one_line_and_exit_3(tmp_path: Path, refused_port: int) -> None:
    port = refused_port
    start = time.monotonic()
    r = run_kafkatool("reassign", "--bootstrap-server", f"127.0.0.1:{port}", "--timeout", "1", "--list", cwd=tmp_path)
    assert r.code == 3 and r.out == "" and r.err.count("\n") == 1
    assert r.err == f"kafkatool: reassign: cannot reach any broker: 127.0.0.1:{port} refused the connection (twice)\n"
    assert time.monotonic() - start < 30


def test_a_broker_that_never_answers_times_out(tmp_path: Path) -> None:  # one release: not about versions
    with FakeKafka({1: None}) as kafka:
        kafka.silent = True  # answers ApiVersions only
        start = time.monotonic()
        r = run_kafkatool("reassign", "--bootstrap-server", kafka.bootstrap, "--timeout", "1", "--list", cwd=tmp_path)
    assert r.code == 3 and r.err.startswith("kafkatool: reassign:") and r.err.count("\n") == 1
    assert time.monotonic() - start < 30


# -- Kafka's output per release (issue 11, 17) -----------------------------------------------------


@pytest.fixture
def three_topics():  # type: ignore[no-untyped-def]
    with FakeKafka({1: None, 2: None, 3: None}) as k:
        k.add_topic("orders", {p: [1 + p % 3, 1 + (p + 1) % 3] for p in range(3)})
        k.add_topic("single", {0: [2, 3]})
        k.add_topic("big", {p: [1 + p % 3, 1 + (p + 2) % 3, 1 + (p + 1) % 3] for p in range(6)})
        yield k


def _kafka_plan(order: list[str], parts: dict[str, tuple[int, int]], seed: int) -> dict[tuple[str, int], list[int]]:
    """What AdminUtils draws, topic after topic in `order`, from one java.util.Random(seed)."""
    from kafkatool.cluster.assignment import assign_replicas_to_brokers

    rng = JavaRandom(seed)
    out = {}
    for t in order:
        n, rf = parts[t]
        for p, reps in assign_replicas_to_brokers([BrokerMetadata(b) for b in (1, 2, 3)], n, rf, rng=rng).items():
            out[(t, p)] = reps
    return out


@pytest.mark.parametrize("rel, order", [("3.3", ["big", "single", "orders"]),  # Scala groupBy: immutable.HashMap
                                        ("4.0", ["single", "big", "orders"])])  # Java: HashMap
def test_generate_draws_topics_in_the_release_s_order(three_topics: FakeKafka, tmp_path: Path, rel: str,
                                                      order: list[str]) -> None:
    (tmp_path / "t.json").write_text('{"topics":[{"topic":"orders"},{"topic":"single"},{"topic":"big"}],"version":1}')
    r = run_kafkatool("--kafka-release", rel, "reassign", "--bootstrap-server", three_topics.bootstrap, "--timeout", "5",
                      "--generate", "--topics-to-move-json-file", "t.json", "--broker-list", "1,2,3", "--seed", "7",
                      "--plan-file", "plan.json", cwd=tmp_path)
    assert r.code == 0, r.err
    lines = r.out.split("\n")
    # stdout is exactly Kafka's text; our notes go to stderr (issue 17)
    assert (lines[0], lines[2], lines[3], lines[5]) == ("Current partition replica assignment", "",
                                                        "Proposed partition reassignment configuration", "")
    assert len(lines) == 6 and "Saved the plan to plan.json" in r.err
    proposed = {(p["topic"], p["partition"]): p["replicas"] for p in json.loads(lines[4])["partitions"]}
    assert proposed == _kafka_plan(order, {"orders": (3, 2), "single": (1, 2), "big": (6, 3)}, 7)


def test_generate_notes_never_reach_stdout(three_topics: FakeKafka, tmp_path: Path, _state_dir: Path) -> None:
    (tmp_path / "t.json").write_text('{"topics":[{"topic":"orders"}],"version":1}')
    for rel in ("3.3", "4.0"):
        r = run_kafkatool("--kafka-release", rel, "reassign", "--bootstrap-server", three_topics.bootstrap,
                          "--timeout", "5", "--generate", "--topics-to-move-json-file", "t.json", "--broker-list",
                          "1,2,3,9", cwd=tmp_path)
        assert r.code == 0, r.err
        assert r.out.startswith("Current partition replica assignment\n") and r.out.count("\n") == 5
        # the plan goes to the state dir, never the current directory, and the note says where
        assert f"Saved the plan to {_state_dir}/reassign-plan-" in r.err and "Random assignment drawn with --seed" in r.err
        assert sorted(p.name for p in tmp_path.iterdir()) == ["t.json"]
        assert "broker 9 of --broker-list not in the cluster" in r.err


@pytest.mark.parametrize("rel", ["3.3", "4.0"])
def test_verify_and_cancel_clear_throttles_in_the_release_s_order(three_topics: FakeKafka, tmp_path: Path,
                                                                  rel: str) -> None:
    from kafkatool.jvm import java_collections, scala_collections

    k = three_topics
    files = {
        "three.json": [("orders", 0, [2, 3]), ("single", 0, [3, 1]), ("big", 0, [2, 3, 1])],
        "six.json": [(t, 0, r) for t, r in (("orders", [2, 3]), ("single", [3, 1]), ("big", [2, 3, 1]))]
        + [("orders", 1, [1, 2]), ("big", 1, [3, 1, 2]), ("big", 2, [1, 2, 3])],
    }
    for name, parts in files.items():
        f = write(tmp_path, name, parts)
        topics = list(dict.fromkeys(t for t, _, _ in parts))
        want = (scala_collections.string_set_order(topics) if rel == "3.3"
                else java_collections.string_set_order(topics))
        r = run_kafkatool("--kafka-release", rel, "reassign", "--bootstrap-server", k.bootstrap, "--timeout", "5",
                          "--verify", "--reassignment-json-file", f, cwd=tmp_path)
        assert r.code in (0, 3), r.err
        assert r.out.endswith("Clearing broker-level throttles on brokers 1,2,3\n"
                              f"Clearing topic-level throttles on topics {','.join(want)}\n")
    # three topics keep the file's order in Scala's Set3 (the orders,single,big)
    if rel == "3.3":
        r = run_kafkatool("--kafka-release", rel, "reassign", "--bootstrap-server", k.bootstrap, "--timeout", "5",
                          "--verify", "--reassignment-json-file", "three.json", cwd=tmp_path)
        assert r.out.endswith("Clearing topic-level throttles on topics orders,single,big\n")
    r = run_kafkatool("--kafka-release", rel, "reassign", "--bootstrap-server", k.bootstrap, "--timeout", "5",
                      "--cancel", "--reassignment-json-file", "three.json", cwd=tmp_path)
    assert r.code == 0, r.err
    moves = "None of the specified partition moves are active." + ("\n" if rel == "3.3" else "")
    assert r.out.startswith("None of the specified partition reassignments are active.\n" + moves
                            + "Clearing broker-level throttles on brokers 1,2,3\n")


def test_log_dir_moves_retry_until_started_or_timeout() -> None:
    from kafkatool.cluster.reassign import LogDirMoveTimeout, log_dir_moves_started_text, start_log_dir_moves
    from kafkatool.release import Release

    a, b = TopicPartitionReplica("t", 0, 2), TopicPartitionReplica("t", 1, 1)
    rounds = [{a: "ReplicaNotAvailable", b: None}, {a: None}]

    class Cluster:
        def alter_replica_log_dirs(self, moves):  # type: ignore[no-untyped-def]
            return rounds.pop(0)

    now = [0.0]
    slept: list[float] = []
    got = list(start_log_dir_moves(Cluster(), {a: "/d/x", b: "/d/y"}, 10, clock=lambda: now[0],  # type: ignore[arg-type]
                                   sleep=slept.append))
    assert got == [[b], [a]] and slept == [0.1]
    assert log_dir_moves_started_text([b, a], {a: "/d/x", b: "/d/y"}, Release(3, 3)) == (
        "Successfully started log directory moves for: t-1-1,t-0-2\n")
    assert log_dir_moves_started_text([a], {a: "/d/x"}, Release(4, 0)) == (
        "Successfully started moving log directory to /d/x for replica t-0 with broker 2 \n")

    class Never:
        def alter_replica_log_dirs(self, moves):  # type: ignore[no-untyped-def]
            now[0] += 6
            return dict.fromkeys(moves, "ReplicaNotAvailable")

    with pytest.raises(LogDirMoveTimeout, match=r"^Timed out before log directory moves could be started for: t-1-1,t-0-2$"):
        list(start_log_dir_moves(Never(), {a: "/d/x", b: "/d/y"}, 10, clock=lambda: now[0], sleep=slept.append))  # type: ignore[arg-type]


BROKER_FIXTURES = FIXTURES / "brokers"


@pytest.mark.parametrize("name, release", [("kafka-2.1.1", "2.1"), ("kafka-3.3.1", "3.3"), ("kafka-4.0.0", "4.0"),
                                           ("kafka-4.3", "4.3")])
def test_broker_release_from_real_brokers_api_versions(name: str, release: str) -> None:
    """The text release follows the brokers: real 2.1.1, 3.3.1, 4.0.0 and 4.3 ApiVersions answers."""
    from kafkatool.cluster.versions import broker_release

    path = BROKER_FIXTURES / f"{name}.api_versions.json"
    if not path.is_file():
        pytest.skip(f"{path} not here (shared fixtures)")
    apis = json.loads(path.read_text())["apis"].values()
    got = broker_release({a["key"]: (a["min"], a["max"]) for a in apis})
    assert got is not None and str(got) == release


def test_admin_cluster_reports_the_negotiated_release(kafka: FakeKafka, monkeypatch: pytest.MonkeyPatch) -> None:
    from kafkatool import release

    monkeypatch.setattr(release, "_selected", None)  # no --kafka-release: the brokers' release decides
    with open_cluster(bootstrap_server=kafka.bootstrap, timeout=5) as c:
        assert c.broker_release == Release(*map(int, kafka.release.split(".")[:2]))
        assert c.text_release() == c.broker_release


def test_without_kafka_release_the_brokers_release_decides(three_topics: FakeKafka, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """A 3.3 cluster (its brokers' ApiVersions say so) gets Kafka 3.3's order unasked."""
    from kafkatool import release

    monkeypatch.setattr(release, "_selected", None)
    three_topics.api_versions = dict(kwire.release_api_versions("3.3.1"))
    (tmp_path / "t.json").write_text('{"topics":[{"topic":"orders"},{"topic":"single"},{"topic":"big"}],"version":1}')
    args = ("reassign", "--bootstrap-server", three_topics.bootstrap, "--timeout", "5", "--generate",
            "--topics-to-move-json-file", "t.json", "--broker-list", "1,2,3", "--seed", "7", "--no-plan-file")
    parts = {"orders": (3, 2), "single": (1, 2), "big": (6, 3)}
    for pre, order in (((), ["big", "single", "orders"]), (("--kafka-release", "4.0"), ["single", "big", "orders"])):
        r = run_kafkatool(*pre, *args, cwd=tmp_path)
        assert r.code == 0, r.err
        proposed = {(p["topic"], p["partition"]): p["replicas"] for p in json.loads(r.out.split("\n")[4])["partitions"]}
        assert proposed == _kafka_plan(order, parts, 7)


THROTTLE_KEYS = "leader.replication.throttled.rate,follower.replication.throttled.rate"


def test_verify_that_cannot_clear_throttles_prints_what_is_left(kafka: FakeKafka, tmp_path: Path, release: str) -> None:
    needs_2_4(release)
    f = write(tmp_path, "r.json", [("orders", 3, [4, 2])])
    assert reassign(kafka, tmp_path, "--execute", "--reassignment-json-file", f, "--throttle", "10",
                    "--no-plan-file").code == 0
    kafka.complete_reassignment()
    kafka.fail_configs[(4, "3")] = "the broker refused"  # broker 3 had no throttle: nothing is left, all is well
    r = reassign(kafka, tmp_path, "--verify", "--reassignment-json-file", f, "--preserve-throttles")
    assert r.code == 0
    kafka.fail_configs[(4, "2")] = "the broker refused"  # one resource of the clean-up fails
    r = reassign(kafka, tmp_path, "--verify", "--reassignment-json-file", f)
    assert r.code == 3 and r.err.count("\n") == 1
    assert r.err.startswith("kafkatool: reassign: clearing the reassignment throttles failed (alter configs: ")
    assert r.err.endswith("; still set on broker 2\n")
    assert r.out.endswith(
        "Reassignment of partition orders-3 is completed.\n\n"
        "Throttles still set (clearing failed):\n"
        f"  broker 2: {THROTTLE_KEYS}\n"
        "Clear them with:\n"
        f"  kafka-configs.sh --bootstrap-server {kafka.bootstrap} --alter --entity-type brokers --entity-name 2 "
        f"--delete-config {THROTTLE_KEYS}\n")
    assert {k: v for k, v in kafka.configs.items() if v} == {(4, "2"): {
        "leader.replication.throttled.rate": "10", "follower.replication.throttled.rate": "10"}}
    # The broker dies mid-request: nothing is known to be cleared, everything is listed from a read-back.
    kafka.fail_configs.clear()
    kafka.set_config("topics", "orders", {"leader.replication.throttled.replicas": "3:4"})
    kafka.fail_request[44] = 1
    r = reassign(kafka, tmp_path, "--verify", "--reassignment-json-file", f)
    assert r.code == 3 and r.err.endswith("; still set on broker 2; topic orders\n"), r.err
    assert "  topic orders: leader.replication.throttled.replicas\n" in r.out
    r = reassign(kafka, tmp_path, "--verify", "--reassignment-json-file", f)  # what the lines say: run it again
    assert r.code == 0 and kafka.configs == {}


def test_cancel_that_cannot_clear_throttles_says_it_cancelled_and_what_is_left(
        kafka: FakeKafka, tmp_path: Path, release: str) -> None:
    needs_2_4(release)
    f = write(tmp_path, "r.json", [("orders", 0, [3, 1])])
    assert reassign(kafka, tmp_path, "--execute", "--reassignment-json-file", f, "--throttle", "10",
                    "--no-plan-file").code == 0
    kafka.fail_request[44] = 1
    r = reassign(kafka, tmp_path, "--cancel", "--reassignment-json-file", f)
    assert r.code == 3 and r.err.count("\n") == 1 and kafka.ongoing() == {}
    assert r.out.startswith("Successfully cancelled partition reassignment for: orders-0\n")
    assert "Throttles still set (clearing failed):\n  broker 1: " in r.out
    assert "  topic orders: leader.replication.throttled.replicas,follower.replication.throttled.replicas\n" in r.out
    r = reassign(kafka, tmp_path, "--cancel", "--reassignment-json-file", f)
    assert r.code == 0 and kafka.configs == {}


def test_execute_whose_throttles_fail_half_way_puts_every_config_back(
        kafka: FakeKafka, tmp_path: Path, release: str) -> None:
    needs_2_4(release)
    kafka.set_config("brokers", "1", {"leader.replication.throttled.rate": "111"})
    kafka.fail_configs[(4, "2")] = "refused"
    f = write(tmp_path, "r.json", [("orders", 0, [3, 1])])
    r = reassign(kafka, tmp_path, "--execute", "--reassignment-json-file", f, "--throttle", "5", "--no-plan-file")
    assert r.code == 3 and r.err.splitlines()[-1].startswith("kafkatool: reassign: alter configs: broker 2: ")
    assert kafka.ongoing() == {}
    assert {k: v for k, v in kafka.configs.items() if v} == {(4, "1"): {"leader.replication.throttled.rate": "111"}}


def test_execute_that_fails_after_the_start_says_it_started(kafka: FakeKafka, tmp_path: Path, release: str) -> None:
    needs_2_4(release)
    kafka.log_dirs = ("/data/a", "/data/b")
    (tmp_path / "d.json").write_text(json.dumps({"version": 1, "partitions": [
        {"topic": "orders", "partition": 2, "replicas": [4, 3], "log_dirs": ["/data/b", "any"]}]}))
    kafka.fail_request[34] = 1  # AlterReplicaLogDirs: the broker drops the connection
    r = reassign(kafka, tmp_path, "--execute", "--reassignment-json-file", "d.json", "--no-plan-file")
    assert r.code == 3 and r.err.startswith("Note: ") and r.err.count("\n") == 2  # the note, then one error line
    assert r.err.endswith("(the partition reassignment itself was started: --verify follows it and clears the throttles)\n")
    assert r.out.endswith("Successfully started partition reassignment for orders-2\n")
    assert list(kafka.ongoing()) == [] and kafka.partition("orders", 2).replicas == [4, 3]  # reordered: done at once
    kafka.fail_configs[(4, "4")] = "refused"  # the log-dir throttle of broker 4
    r = reassign(kafka, tmp_path, "--execute", "--reassignment-json-file", "d.json", "--no-plan-file",
                 "--replica-alter-log-dirs-throttle", "99")
    assert r.code == 3 and "alter configs: broker 4: " in r.err and "itself was started" in r.err


def test_cancel_whose_request_is_lost_says_what_to_run(kafka: FakeKafka, tmp_path: Path, release: str) -> None:
    needs_2_4(release)
    f = write(tmp_path, "r.json", [("orders", 0, [3, 1])])
    assert reassign(kafka, tmp_path, "--execute", "--reassignment-json-file", f, "--throttle", "10",
                    "--no-plan-file").code == 0
    kafka.fail_request[45] = 1  # AlterPartitionReassignments: the controller drops the connection
    r = reassign(kafka, tmp_path, "--cancel", "--reassignment-json-file", f)
    assert r.code == 3 and r.err.count("\n") == 1 and "--list shows what still runs" in r.err
    assert kafka.config("brokers", "1")  # nothing cleared while the move may still run
    kafka.fail_alter[("orders", 0)] = (85, None)  # NO_REASSIGNMENT_IN_PROGRESS for this one partition
    r = reassign(kafka, tmp_path, "--cancel", "--reassignment-json-file", f)
    assert r.code == 3 and r.err.endswith("(the throttles stay set while those moves run: re-run --cancel, "
                                          "or --verify once they complete)\n")
    kafka.fail_alter.clear()
    assert reassign(kafka, tmp_path, "--cancel", "--reassignment-json-file", f).code == 0 and kafka.configs == {}


def test_execute_that_loses_the_broker_before_any_change_says_nothing_was_done(
        kafka: FakeKafka, tmp_path: Path, release: str) -> None:
    needs_2_4(release)
    f = write(tmp_path, "r.json", [("orders", 0, [3, 1])])
    kafka.fail_request[32] = 9  # DescribeConfigs: the broker dies mid-request (each retry too)
    r = reassign(kafka, tmp_path, "--execute", "--reassignment-json-file", f, "--throttle", "5", "--no-plan-file")
    last = r.err.splitlines()[-1]  # after the note that the file is not a kafkatool plan
    assert r.code == 3 and last.startswith("kafkatool: reassign: describe configs: "), r.err
    assert r.err.endswith("; nothing was changed: no throttle was set and no reassignment was started\n")
    assert "Error: KafkaConnectionError" not in r.err and r.err.count("KafkaConnectionError") <= 1
    assert kafka.ongoing() == {} and kafka.configs == {}
    # lost at the start itself: said too, with the throttles put back
    kafka.fail_request[32] = 0
    kafka.fail_request[45] = 1  # AlterPartitionReassignments
    r = reassign(kafka, tmp_path, "--execute", "--reassignment-json-file", f, "--throttle", "5", "--no-plan-file")
    assert r.code == 3 and r.err.endswith(
        "; no reassignment was started and the throttle configs were put back\n"), r.err
    assert kafka.ongoing() == {} and {k: v for k, v in kafka.configs.items() if v} == {}


def test_files_kept_for_the_operator_go_to_the_state_dir_and_are_named(
        three_topics: FakeKafka, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "t.json").write_text('{"topics":[{"topic":"orders"}],"version":1}')
    (tmp_path / "r.json").write_text('{"version":1,"partitions":[{"topic":"orders","partition":0,"replicas":[3,1]}]}')
    state = tmp_path / "state" / "kafkatool"
    monkeypatch.setenv("KAFKATOOL_STATE_DIR", str(state))
    work = tmp_path / "work"
    work.mkdir()
    base = ("reassign", "--bootstrap-server", three_topics.bootstrap, "--timeout", "5")
    r = run_kafkatool(*base, "--generate", "--topics-to-move-json-file", "../t.json", "--broker-list", "1,2,3", cwd=work)
    assert r.code == 0 and list(work.iterdir()) == []
    plans = sorted(state.glob("reassign-plan-*.json"))
    assert len(plans) == 1 and f"Saved the plan to {plans[0]} (use it as --reassignment-json-file)" in r.err
    r = run_kafkatool(*base, "--execute", "--reassignment-json-file", "../r.json", cwd=work)
    assert r.code == 0 and list(work.iterdir()) == []
    rollbacks = sorted(state.glob("reassign-rollback-*.json"))
    assert len(rollbacks) == 1 and f"Saved the rollback plan to {rollbacks[0]}" in r.err
    r = run_kafkatool(*base, "--generate", "--topics-to-move-json-file", "../t.json", "--broker-list", "1,2,3",
                      "--plan-file", "mine.json", cwd=work)
    assert r.code == 0 and [p.name for p in work.iterdir()] == ["mine.json"] and "Saved the plan to mine.json" in r.err
    (tmp_path / "blocked").write_text("a file, not a directory")
    monkeypatch.setenv("KAFKATOOL_STATE_DIR", str(tmp_path / "blocked" / "state"))
    r = run_kafkatool(*base, "--generate", "--topics-to-move-json-file", "../t.json", "--broker-list", "1,2,3", cwd=work)
    assert r.code == 3 and r.err.count("\n") == 1 and "cannot create the state directory" in r.err, r.err


def test_current_assignment_names_the_replicas_log_dirs_from_4_2(tmp_path: Path) -> None:
    """Kafka 4.2's tool (KAFKA-19582) prints each replica's current log dir in the "Current partition
    replica assignment" of --generate and --execute; a replica on a broker that is down keeps "any";
    4.1 and older print "any" throughout."""
    with FakeKafka({1: None, 2: None, 3: None}, log_dirs=("/data/a", "/data/b"), release="4.3") as k:
        k.add_topic("orders", {0: [1, 2], 1: [2, 3]})
        k.partition("orders", 0).log_dir.update({1: "/data/b", 2: "/data/a"})
        k.partition("orders", 1).log_dir.update({2: "/data/a", 3: "/data/b"})
        k.alive.discard(3)
        (tmp_path / "t.json").write_text('{"topics":[{"topic":"orders"}],"version":1}')
        (tmp_path / "r.json").write_text(json.dumps({"version": 1, "partitions": [
            {"topic": "orders", "partition": 0, "replicas": [2, 1]}]}))
        current = ('{"version":1,"partitions":[{"topic":"orders","partition":0,"replicas":[1,2],'
                   '"log_dirs":["/data/b","/data/a"]},{"topic":"orders","partition":1,"replicas":[2,3],'
                   '"log_dirs":["/data/a","any"]}]}')
        for rel, expected in (("4.3", current), ("4.1", current.replace('"/data/b"', '"any"').replace('"/data/a"', '"any"'))):
            r = run_kafkatool("--kafka-release", rel, "reassign", "--bootstrap-server", k.bootstrap, "--timeout", "5",
                              "--generate", "--topics-to-move-json-file", "t.json", "--broker-list", "1,2",
                              "--no-plan-file", cwd=tmp_path)
            assert r.code == 0, r.err
            assert r.out.split("\n")[:2] == ["Current partition replica assignment", expected], rel
        r = run_kafkatool("reassign", "--bootstrap-server", k.bootstrap, "--timeout", "5", "--execute",
                          "--reassignment-json-file", "r.json", "--no-plan-file", cwd=tmp_path)  # a 4.3 broker: its text
        assert r.code == 0, r.err
        assert r.out.startswith("Current partition replica assignment\n\n"
                                '{"version":1,"partitions":[{"topic":"orders","partition":0,"replicas":[1,2],'
                                '"log_dirs":["/data/b","/data/a"]}]}\n\n'
                                "Save this to use as the --reassignment-json-file option during rollback\n")
