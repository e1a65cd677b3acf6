"""`reassign` over ZooKeeper, against a real ZooKeeper server holding znodes as brokers and a controller write them."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from kafkatool.cluster.backend import ReassignmentInProgressError, UnknownTopicsError
from kafkatool.cluster.model import Broker, ConfigChange, TopicPartition
from kafkatool.cluster.open import open_cluster
from tests.support.cli import run_kafkatool
from tests.support.zk_cluster import ZkKafka

pytestmark = pytest.mark.zookeeper

TOPICS_JSON = '{"topics":[{"topic":"orders"}],"version":1}'


@pytest.fixture
def kafka(zk_chroot: str):  # type: ignore[no-untyped-def]
    k = ZkKafka(zk_chroot)
    for b in range(5):
        k.add_broker(b)
    k.become_controller(0)
    yield k
    k.close()


def reassign(k: ZkKafka, tmp_path: Path, *args: str, release: str | None = None):  # type: ignore[no-untyped-def]
    """The fixture is a Kafka 2.1.1 cluster (v4 registrations, no /feature): its own tool's words unless
    `release` names another's."""
    pre = ("--kafka-release", release) if release else ()
    return run_kafkatool(*pre, "reassign", "--zookeeper", k.connect, "--timeout", "10", *args, cwd=tmp_path)


def test_backend_reads_brokers_topics_states_and_chroot(zk_chroot: str) -> None:
    k = ZkKafka(zk_chroot, topic_version=2)
    try:
        k.add_broker(1, version=1, host="old-host", port=9092)
        k.add_broker(2, rack="r2")
        k.add_broker(3, rack="r3")
        k.become_controller(2)
        k.create_topic("t", {0: [1, 2], 1: [2, 3]})
        k.set_assignment("t", {0: [1, 2, 3], 1: [2, 3]}, adding={0: [3]}, removing={0: [1]})
        with open_cluster(zookeeper=zk_chroot, timeout=10) as c:
            assert c.brokers() == [Broker(1, "old-host", 9092, None), Broker(2, "localhost", 9094, "r2"),
                                   Broker(3, "localhost", 9095, "r3")]
            assert c.controller() == 2
            assert c.topics() == ["t"]
            st = c.partition_states(["t"])
            assert st[TopicPartition("t", 0)].replicas == [1, 2, 3]
            assert (st[TopicPartition("t", 1)].leader, st[TopicPartition("t", 1)].isr) == (2, [2, 3])
            ongoing = c.ongoing_reassignments()
            assert list(ongoing) == [TopicPartition("t", 0)]
            assert (ongoing[TopicPartition("t", 0)].adding, ongoing[TopicPartition("t", 0)].removing) == ([3], [1])
            with pytest.raises(UnknownTopicsError, match="^Topic nope not found.$"):
                c.partition_states(["nope"])
        with open_cluster(zookeeper=zk_chroot.rsplit("/", 1)[0], timeout=10) as root:
            assert "t" not in root.topics()  # the chroot is part of the connect string
    finally:
        k.close()


def test_generate_prints_kafkas_text_and_saves_a_plan(kafka: ZkKafka, tmp_path: Path) -> None:
    kafka.create_topic("orders", {p: [p % 3, (p + 1) % 3, (p + 2) % 3] for p in range(10)})
    (tmp_path / "t.json").write_text(TOPICS_JSON)
    r = reassign(kafka, tmp_path, "--generate", "--topics-to-move-json-file", "t.json", "--broker-list", "0,1,2,3,4",
                 "--start-index", "0", "--plan-file", "plan.json")
    assert r.code == 0, r.err
    proposed = {0: [0, 1, 2], 1: [1, 2, 3], 2: [2, 3, 4], 3: [3, 4, 0], 4: [4, 0, 1], 5: [0, 2, 3], 6: [1, 3, 4],
                7: [2, 4, 0], 8: [3, 0, 1], 9: [4, 1, 2]}

    def js(a: dict[int, list[int]], order: list[int]) -> str:
        return json.dumps({"version": 1, "partitions": [
            {"topic": "orders", "partition": p, "replicas": a[p], "log_dirs": ["any"] * len(a[p])} for p in order]},
            separators=(",", ":"))

    current = {p: [p % 3, (p + 1) % 3, (p + 2) % 3] for p in range(10)}
    # Kafka 2.1's tool (this cluster's): its Scala 2.11/2.12 Maps' orders, as scala-library 2.11 iterates them
    # (the current assignment: an immutable HashMap; the proposal: a mutable.HashMap)
    assert r.out == (f"Current partition replica assignment\n{js(current, [8, 0, 3, 1, 5, 6, 9, 2, 7, 4])}\n\n"
                     "Proposed partition reassignment configuration\n"
                     f"{js(proposed, [8, 2, 5, 7, 4, 9, 1, 6, 3, 0])}\n")
    r33 = reassign(kafka, tmp_path, "--generate", "--topics-to-move-json-file", "t.json", "--broker-list",
                   "0,1,2,3,4", "--start-index", "0", "--no-plan-file", release="3.3")
    assert r33.out == (f"Current partition replica assignment\n{js(current, list(range(10)))}\n\n"
                       f"Proposed partition reassignment configuration\n{js(proposed, list(range(10)))}\n")
    plan = json.loads((tmp_path / "plan.json").read_text())
    assert plan["version"] == 1 and plan["partitions"] == json.loads(js(proposed, list(range(10))))["partitions"]
    meta = plan["kafkatool"]
    assert meta["kind"] == "plan" and meta["strategy"] == "kafka" and meta["start_index"] == 0
    assert {(c["partition"], tuple(c["replicas"])) for c in meta["current"]} == {(p, tuple(r)) for p, r in current.items()}
    assert "Saved the plan to plan.json" in r.err


def test_generate_refuses_replication_factor_above_brokers(kafka: ZkKafka, tmp_path: Path) -> None:
    kafka.create_topic("orders", {0: [0, 1, 2]})
    (tmp_path / "t.json").write_text(TOPICS_JSON)
    r = reassign(kafka, tmp_path, "--generate", "--topics-to-move-json-file", "t.json", "--broker-list", "3,4",
                 "--no-plan-file")
    assert (r.code, r.out) == (2, "")
    assert r.err == "kafkatool: reassign: Replication factor: 3 larger than available brokers: 2.\n"
    r = reassign(kafka, tmp_path, "--generate", "--topics-to-move-json-file", "t.json", "--broker-list", "1,1",
                 "--no-plan-file")
    assert (r.code, r.err) == (2, "kafkatool: reassign: Broker list contains duplicate entries: [1]\n")
    (tmp_path / "u.json").write_text('{"topics":[{"topic":"missing"}],"version":1}')
    r = reassign(kafka, tmp_path, "--generate", "--topics-to-move-json-file", "u.json", "--broker-list", "1,2",
                 "--no-plan-file")
    assert (r.code, r.err) == (2, "kafkatool: reassign: Topic missing not found.\n")


def test_minimal_strategy_with_sizes_file(kafka: ZkKafka, tmp_path: Path) -> None:
    kafka.create_topic("orders", {p: [p % 4, (p + 1) % 4] for p in range(8)})
    (tmp_path / "t.json").write_text(TOPICS_JSON)
    log_dirs = {"version": 1, "brokers": [{"broker": 0, "logDirs": [{"logDir": "/d", "error": None, "partitions": [
        {"partition": f"orders-{p}", "size": 100 * (p + 1), "offsetLag": 0, "isFuture": False} for p in range(8)]}]}]}
    (tmp_path / "sizes.json").write_text(json.dumps(log_dirs))
    r = reassign(kafka, tmp_path, "--generate", "--topics-to-move-json-file", "t.json", "--broker-list", "0,1,2,3,4",
                 "--strategy", "minimal", "--sizes", "sizes.json", "--compare", "--seed", "1", "--plan-file", "p.json")
    assert r.code == 0, r.err
    assert "Reassignment summary (strategy minimal):" in r.out and "Strategy comparison:" in r.out
    assert "replicas moved: 3 (lower bound 3)" in r.out
    moved = json.loads((tmp_path / "p.json").read_text())["partitions"]
    # the three moves take the smallest partitions: orders-0..2 (100, 200, 300 bytes)
    assert "bytes to move: 600 B" in r.out
    assert all(p["partition"] < 4 for p in moved)
    r = reassign(kafka, tmp_path, "--generate", "--topics-to-move-json-file", "t.json", "--broker-list", "0,1,2,3,9",
                 "--strategy", "minimal", "--sizes", "sizes.json", "--no-plan-file")
    assert r.code == 0 and "Note: broker 9 of --broker-list not in the cluster: ignored, as Kafka does" in r.err


def test_execute_writes_reassignment_and_throttles_atomically(kafka: ZkKafka, tmp_path: Path) -> None:
    kafka.create_topic("orders", {0: [0, 1], 1: [1, 2]})
    kafka.set_config("brokers", "3", {"log.cleaner.threads": "2"})
    plan = {"version": 1, "partitions": [{"topic": "orders", "partition": 0, "replicas": [3, 1]},
                                         {"topic": "orders", "partition": 1, "replicas": [1, 2]}]}
    (tmp_path / "r.json").write_text(json.dumps(plan))
    r = reassign(kafka, tmp_path, "--execute", "--reassignment-json-file", "r.json", "--throttle", "5000",
                 "--rollback-file", "rb.json", release="3.3")
    assert r.code == 0, r.err
    assert r.out == (
        "Current partition replica assignment\n\n"
        '{"version":1,"partitions":[{"topic":"orders","partition":0,"replicas":[0,1],"log_dirs":["any","any"]},'
        '{"topic":"orders","partition":1,"replicas":[1,2],"log_dirs":["any","any"]}]}\n\n'
        "Save this to use as the --reassignment-json-file option during rollback\n"
        "Warning: You must run --verify periodically, until the reassignment completes, to ensure the throttle is removed.\n"
        "The inter-broker throttle limit was set to 5000 B/s\n"
        "Successfully started partition reassignments for orders-0,orders-1\n"
    )
    assert "drift check skipped" in r.err
    assert kafka.reassignment_request() == {("orders", 0): [3, 1], ("orders", 1): [1, 2]}
    assert kafka.config("topics", "orders") == {"leader.replication.throttled.replicas": "0:0,0:1,1:1,1:2",
                                                "follower.replication.throttled.replicas": "0:3"}
    assert kafka.config("brokers", "3") == {"log.cleaner.threads": "2", "leader.replication.throttled.rate": "5000",
                                            "follower.replication.throttled.rate": "5000"}
    assert set(kafka.config("brokers", "0")) == {"leader.replication.throttled.rate", "follower.replication.throttled.rate"}
    assert [n["entity_path"] for n in kafka.notifications()] == ["topics/orders", "brokers/0", "brokers/1", "brokers/2",
                                                                  "brokers/3"]
    rollback = json.loads((tmp_path / "rb.json").read_text())
    assert rollback["partitions"][0]["replicas"] == [0, 1] and rollback["kafkatool"]["kind"] == "rollback"
    assert rollback["kafkatool"]["current"][0]["replicas"] == [3, 1]

    # Re-running --execute while it runs changes the throttle, as Kafka 2.x's tool does (maybeLimit):
    # the rates on every broker of the topic and of the targets; topic-level lists and the move stay.
    r = reassign(kafka, tmp_path, "--execute", "--reassignment-json-file", "r.json", "--throttle", "7000")
    assert (r.code, r.out) == (0, "There is an existing assignment running.\n")
    for b in (0, 1, 2, 3):
        assert kafka.config("brokers", str(b))["leader.replication.throttled.rate"] == "7000"
        assert kafka.config("brokers", str(b))["follower.replication.throttled.rate"] == "7000"
    assert kafka.config("brokers", "3")["log.cleaner.threads"] == "2" and kafka.config("brokers", "4") == {}
    assert kafka.config("topics", "orders")["follower.replication.throttled.replicas"] == "0:3"
    assert kafka.reassignment_request() == {("orders", 0): [3, 1], ("orders", 1): [1, 2]}

    # A file asking for other moves: Kafka 2.x silently starts nothing; we change the throttle and say
    # which partitions were not started (exit 1).
    (tmp_path / "r2.json").write_text(json.dumps({"version": 1, "partitions": [
        {"topic": "orders", "partition": 1, "replicas": [2, 4]}]}))
    r = reassign(kafka, tmp_path, "--execute", "--reassignment-json-file", "r2.json", "--throttle", "1")
    assert (r.code, r.out) == (1, "There is an existing assignment running.\n")
    assert r.err.splitlines()[-1].startswith("kafkatool: reassign: not started: orders-1: a ZooKeeper reassignment is running")
    assert kafka.config("brokers", "4")["leader.replication.throttled.rate"] == "1"
    assert kafka.reassignment_request() == {("orders", 0): [3, 1], ("orders", 1): [1, 2]}
    r = reassign(kafka, tmp_path, "--execute", "--reassignment-json-file", "r.json")  # no throttle: nothing changes
    assert (r.code, r.out) == (0, "There is an existing assignment running.\n")
    assert kafka.config("brokers", "4")["leader.replication.throttled.rate"] == "1"


def test_transaction_is_all_or_nothing(kafka: ZkKafka) -> None:
    kafka.create_topic("orders", {0: [0, 1]})
    kafka.zk.create("/admin/reassign_partitions", b'{"version":1,"partitions":[]}', makepath=True)
    with open_cluster(zookeeper=kafka.connect, timeout=10) as c:
        with pytest.raises(ReassignmentInProgressError):
            c.start_reassignment({TopicPartition("orders", 0): [2, 1]},
                                 [ConfigChange("brokers", "2", set={"leader.replication.throttled.rate": "1"})])
    assert kafka.config("brokers", "2") == {} and kafka.notifications() == []


def test_verify_progress_completion_failure_and_throttle_clearing(kafka: ZkKafka, tmp_path: Path) -> None:
    kafka.create_topic("orders", {0: [0, 1], 1: [1, 2], 2: [2, 3]})
    plan = {"version": 1, "partitions": [{"topic": "orders", "partition": p, "replicas": [4, p]} for p in range(3)]}
    (tmp_path / "r.json").write_text(json.dumps(plan))
    assert reassign(kafka, tmp_path, "--execute", "--reassignment-json-file", "r.json", "--throttle", "10",
                    "--no-plan-file").code == 0
    r = reassign(kafka, tmp_path, "--verify", "--reassignment-json-file", "r.json", release="3.3")
    assert r.code == 1
    assert r.out == ("Status of partition reassignment:\n"
                     + "".join(f"Reassignment of partition orders-{p} is still in progress.\n" for p in range(3)))
    assert kafka.config("brokers", "4")  # throttles stay while moving
    r = reassign(kafka, tmp_path, "--list")
    assert r.out.startswith("Current partition reassignments:\norders-0: replicas: 0,1. adding: 4. removing: 1.\n")
    kafka.complete_reassignment(only={("orders", 0)})
    r = reassign(kafka, tmp_path, "--verify", "--reassignment-json-file", "r.json", "--format", "json")
    assert r.code == 1 and [row["status"] for row in json.loads(r.out)] == ["completed", "in_progress", "in_progress"]
    kafka.complete_reassignment(fail={("orders", 2)})
    r = reassign(kafka, tmp_path, "--verify", "--reassignment-json-file", "r.json", release="3.3")
    assert r.code == 3
    assert r.out == (
        "Status of partition reassignment:\n"
        "Reassignment of partition orders-0 is completed.\n"
        "Reassignment of partition orders-1 is completed.\n"
        "There is no active reassignment of partition orders-2, but replica set is 2,3 rather than 4,2.\n"
        "Clearing broker-level throttles on brokers 0,1,2,3,4\n"
        "Clearing topic-level throttles on topic orders\n"
    )
    assert all(kafka.config("brokers", str(b)) == {} for b in range(5))
    assert kafka.config("topics", "orders") == {}
    assert reassign(kafka, tmp_path, "--list").out == "No partition reassignments found.\n"


def test_execute_refuses_drift_unless_forced(kafka: ZkKafka, tmp_path: Path) -> None:
    kafka.create_topic("orders", {p: [p % 2, (p + 1) % 2] for p in range(4)})
    (tmp_path / "t.json").write_text(TOPICS_JSON)
    r = reassign(kafka, tmp_path, "--generate", "--topics-to-move-json-file", "t.json", "--broker-list", "0,1,2",
                 "--strategy", "minimal", "--plan-file", "plan.json")
    assert r.code == 0
    kafka.set_assignment("orders", {0: [1, 0], 1: [1, 0], 2: [0, 1], 3: [1, 0]})  # someone moved orders-0 meanwhile
    r = reassign(kafka, tmp_path, "--execute", "--reassignment-json-file", "plan.json")
    assert r.code == 1 and r.out == ""
    assert "orders-0: plan saw 0,1, now 1,0" in r.err and "--force" in r.err
    assert kafka.reassignment_request() is None
    r = reassign(kafka, tmp_path, "--execute", "--reassignment-json-file", "plan.json", "--force", "--no-plan-file")
    assert r.code == 0 and kafka.reassignment_request() is not None


def test_cancel_needs_the_admin_api_and_bad_input_exits_2(kafka: ZkKafka, tmp_path: Path) -> None:
    kafka.create_topic("orders", {0: [0, 1]})
    (tmp_path / "r.json").write_text('{"version":1,"partitions":[{"topic":"orders","partition":0,"replicas":[1,1]}]}')
    r = reassign(kafka, tmp_path, "--cancel", "--reassignment-json-file", "r.json")
    assert r.code == 2 and "--cancel needs --bootstrap-server" in r.err
    r = reassign(kafka, tmp_path, "--execute", "--reassignment-json-file", "r.json")
    assert (r.code, r.err) == (2, "kafkatool: reassign: Partition replica lists may not contain duplicate entries: "
                                  "orders-0 contains multiple entries for 1\n")
    (tmp_path / "r.json").write_text('{"version":1,"partitions":[{"topic":"orders","partition":0,"replicas":[7]}]}')
    assert reassign(kafka, tmp_path, "--execute", "--reassignment-json-file", "r.json").err == (
        "kafkatool: reassign: Unknown broker id 7\n")
    (tmp_path / "r.json").write_text('{"version":1,"partitions":[{"topic":"orders","partition":5,"replicas":[1]}]}')
    assert reassign(kafka, tmp_path, "--execute", "--reassignment-json-file", "r.json").err == (
        "kafkatool: reassign: Unable to find partition: orders-5\n")
    (tmp_path / "r.json").write_text("{not json")
    r = reassign(kafka, tmp_path, "--verify", "--reassignment-json-file", "r.json")
    assert r.code == 2 and r.err.startswith("kafkatool: reassign: --reassignment-json-file: not valid JSON")
    r = reassign(kafka, tmp_path, "--verify", "--reassignment-json-file", "missing.json")
    assert (r.code, r.err) == (2, "kafkatool: missing.json: no such file\n")
    r = reassign(kafka, tmp_path, "--verify", "--throttle", "5", "--reassignment-json-file", "r.json")
    assert (r.code, r.err) == (2, 'kafkatool: reassign: Option "--throttle" can\'t be used with action "--verify"\n')
    r = reassign(kafka, tmp_path, "--verify", "--list")
    assert r.code == 2 and "exactly one action" in r.err


def test_unreachable_zookeeper_is_one_line_and_exit_3(tmp_path: Path, refused_port: int) -> None:
    port = refused_port
    start = time.monotonic()
    # --timeout 600: a refused connection ends it at once (each host refused twice), naming the host
    r = run_kafkatool("reassign", "--zookeeper", f"127.0.0.1:{port}", "--timeout", "600", "--list", cwd=tmp_path)
    assert r.code == 3 and r.out == ""
    assert r.err == f"kafkatool: reassign: cannot reach ZooKeeper: 127.0.0.1:{port} refused the connection (twice)\n"
    assert time.monotonic() - start < 30
    r = run_kafkatool("reassign", "--zookeeper", "bad host", "--list", cwd=tmp_path)
    assert r.code == 2 and "is not host:port" in r.err
    r = run_kafkatool("reassign", "--list", cwd=tmp_path)
    assert r.code == 2 and "exactly one of --zookeeper or --bootstrap-server" in r.err


def test_verify_that_cannot_clear_throttles_prints_what_is_left(kafka: ZkKafka, tmp_path: Path) -> None:
    from kazoo.security import OPEN_ACL_UNSAFE, make_acl

    kafka.create_topic("orders", {0: [0, 1]})
    (tmp_path / "r.json").write_text(json.dumps({"version": 1, "partitions": [
        {"topic": "orders", "partition": 0, "replicas": [4, 0]}]}))
    assert reassign(kafka, tmp_path, "--execute", "--reassignment-json-file", "r.json", "--throttle", "10",
                    "--no-plan-file").code == 0
    kafka.complete_reassignment()
    kafka.zk.set_acls("/config/topics/orders", [make_acl("world", "anyone", read=True, admin=True)])  # no write
    try:
        r = reassign(kafka, tmp_path, "--verify", "--reassignment-json-file", "r.json")
    finally:
        kafka.zk.set_acls("/config/topics/orders", OPEN_ACL_UNSAFE)
    assert r.code == 3 and r.err.count("\n") == 1
    assert r.err.startswith("kafkatool: reassign: clearing the reassignment throttles failed (")
    left = r.out[r.out.index("Throttles still set (clearing failed):\n"):]
    rates = "leader.replication.throttled.rate,follower.replication.throttled.rate"
    replicas = "leader.replication.throttled.replicas,follower.replication.throttled.replicas"
    assert f"  broker 4: {rates}\n" in left and f"  topic orders: {replicas}\n" in left
    assert (f"  kafka-configs.sh --zookeeper {kafka.connect} --alter --entity-type topics --entity-name orders "
            f"--delete-config {replicas}\n") in left
    assert kafka.config("brokers", "4") and kafka.config("topics", "orders")  # one transaction: nothing cleared
    r = reassign(kafka, tmp_path, "--verify", "--reassignment-json-file", "r.json")
    assert r.code == 0 and kafka.config("brokers", "4") == {} and kafka.config("topics", "orders") == {}


def test_kafka_21s_own_words_on_a_21_cluster(kafka: ZkKafka, tmp_path: Path) -> None:
    """No /feature under a registered controller: Kafka 2.1's ReassignPartitionsCommand text, its rollback
    block with every partition of the file's topics (Scala 2.11/2.12 Map order), `Status of partition
    reassignment: `, `completed successfully`, `Throttle was removed.`."""
    from kafkatool.cluster.model import TopicPartition
    from kafkatool.cluster.reassign_21 import scala_map_order

    kafka.create_topic("orders", {0: [0, 1], 1: [1, 2], 2: [2, 3]})
    kafka.create_topic("big", {p: [p % 5, (p + 1) % 5] for p in range(6)})
    (tmp_path / "r.json").write_text(json.dumps({"version": 1, "partitions": [
        {"topic": "orders", "partition": 0, "replicas": [3, 1]}]}))
    r = reassign(kafka, tmp_path, "--execute", "--reassignment-json-file", "r.json", "--throttle", "5000",
                 "--no-plan-file")
    assert r.code == 0, r.err
    assert r.out == (
        "Current partition replica assignment\n\n"
        '{"version":1,"partitions":[{"topic":"orders","partition":0,"replicas":[0,1],"log_dirs":["any","any"]},'
        '{"topic":"orders","partition":1,"replicas":[1,2],"log_dirs":["any","any"]},'
        '{"topic":"orders","partition":2,"replicas":[2,3],"log_dirs":["any","any"]}]}\n\n'
        "Save this to use as the --reassignment-json-file option during rollback\n"
        "Warning: You must run Verify periodically, until the reassignment completes, to ensure the throttle is "
        "removed. You can also alter the throttle by rerunning the Execute command passing a new value.\n"
        "The inter-broker throttle limit was set to 5000 B/s\n"
        "Successfully started reassignment of partitions.\n"
    )
    r = reassign(kafka, tmp_path, "--verify", "--reassignment-json-file", "r.json")
    assert (r.code, r.out) == (1, "Status of partition reassignment: \n"
                                  "Reassignment of partition orders-0 is still in progress\n")
    kafka.complete_reassignment()
    r = reassign(kafka, tmp_path, "--verify", "--reassignment-json-file", "r.json")
    assert (r.code, r.out) == (0, "Status of partition reassignment: \n"
                                  "Reassignment of partition orders-0 completed successfully\n"
                                  "Throttle was removed.\n")
    assert all(kafka.config("brokers", str(b)) == {} for b in range(5)) and kafka.config("topics", "orders") == {}
    r = reassign(kafka, tmp_path, "--verify", "--reassignment-json-file", "r.json")  # nothing left to remove
    assert (r.code, r.out) == (0, "Status of partition reassignment: \n"
                                  "Reassignment of partition orders-0 completed successfully\n")
    # five partitions or more: the hash trie's order (not the file's), for the rollback block and --verify
    (tmp_path / "b.json").write_text(json.dumps({"version": 1, "partitions": [
        {"topic": "big", "partition": p, "replicas": [(p + 2) % 5, (p + 3) % 5]} for p in range(6)]}))
    r = reassign(kafka, tmp_path, "--execute", "--reassignment-json-file", "b.json", "--no-plan-file")
    want = [tp.partition for tp in scala_map_order([TopicPartition("big", p) for p in range(6)])]
    assert want != list(range(6))
    rollback = json.loads(r.out.split("\n\n")[1])
    assert [p["partition"] for p in rollback["partitions"]] == want
    assert r.out.endswith("Successfully started reassignment of partitions.\n")
    r = reassign(kafka, tmp_path, "--verify", "--reassignment-json-file", "b.json")
    assert [int(line.split()[3].split("-")[1]) for line in r.out.splitlines()[1:]] == want


@pytest.mark.parametrize("seed", [0, 42, -7134561298374659281])
@pytest.mark.parametrize("topics", [
    {"orders": 3},  # Map3: the znode's order; the proposal's mutable.HashMap of partition ids
    {"orders": 2, "big": 2},  # four partitions: Map4, topics drawn in groupBy's mutable.HashMap order
    {"orders": 6, "payments": 1, "big": 12},  # hash tries, one table resize
    {f"t{i}.log": i % 4 + 1 for i in range(9)},  # many topics: the draws in the trie's order of names
])
def test_generate_prints_kafka_21s_order_and_draws(kafka: ZkKafka, tmp_path: Path, topics: dict[str, int],
                                                    seed: int) -> None:
    """The whole `--generate` text of Kafka 2.1.1's tool on this 2.1 cluster, against Kafka 2.1's
    generateAssignment run on the real scala-library 2.11 (tests/support/scala211.py): same seed, same
    draws in the same topic order, same printed orders."""
    from tests.support.scala211 import gen_case, gen_text, scala211_probe

    probe = scala211_probe(tmp_path)
    brokers = [0, 1, 2, 3, 4]
    layout = {t: {p: [(p + i) % 5, (p + i + 1) % 5] for p in range(n)} for i, (t, n) in enumerate(topics.items())}
    for t, parts in layout.items():
        kafka.create_topic(t, parts)
    (tmp_path / "t.json").write_text(json.dumps({"version": 1, "topics": [{"topic": t} for t in layout]}))
    r = reassign(kafka, tmp_path, "--generate", "--topics-to-move-json-file", "t.json", "--broker-list", "0,1,2,3,4",
                 "--seed", str(seed), "--no-plan-file")
    assert r.code == 0, r.err
    assert r.out == gen_text(probe([gen_case(seed, -1, brokers, layout)])[0])


def test_small_topics_keep_their_znodes_order(kafka: ZkKafka, tmp_path: Path) -> None:
    """Up to 4 partitions in all, Kafka 2.1's Maps keep insertion order: the topic znodes' order, which for
    a topic Kafka 2.1 created is its `mutable.HashMap` of partition ids' (2, 1, 0 here), not ascending;
    `--generate` and the `--execute` rollback block print it, as Kafka 2.1's code on scala-library 2.11 does."""
    from tests.support.scala211 import gen_case, gen_text, scala211_probe

    probe = scala211_probe(tmp_path)
    layout = {"orders": {2: [2, 0], 1: [1, 2], 0: [0, 1]}}
    kafka.create_topic("orders", layout["orders"])
    kafka.zk.set("/brokers/topics/orders", json.dumps(
        {"version": 1, "partitions": {str(p): r for p, r in layout["orders"].items()}}).encode())
    (tmp_path / "t.json").write_text(TOPICS_JSON)
    r = reassign(kafka, tmp_path, "--generate", "--topics-to-move-json-file", "t.json", "--broker-list", "0,1,2",
                 "--seed", "7", "--no-plan-file")
    assert r.code == 0, r.err
    want = gen_text(probe([gen_case(7, -1, [0, 1, 2], layout)])[0])
    assert r.out == want
    assert '"partition":2' in want.splitlines()[1][:60]  # the znode's first partition comes first
    (tmp_path / "r.json").write_text(json.dumps({"version": 1, "partitions": [
        {"topic": "orders", "partition": 0, "replicas": [1, 0]}]}))
    r = reassign(kafka, tmp_path, "--execute", "--reassignment-json-file", "r.json", "--no-plan-file")
    assert r.code == 0, r.err
    assert r.out.split("\n")[2] == want.splitlines()[1]  # getReplicaAssignmentForTopics, printed alike
