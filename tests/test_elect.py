"""`elect`: ElectLeaders over the wire (fake brokers), the ZooKeeper election znode (real ZooKeeper), --dry-run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from kafka.protocol.admin import ElectLeadersRequest

from kafkatool.cluster.elect import (
    ElectionInputError,
    parse_election_json,
    preferred_report,
    select_partitions,
)
from kafkatool.cluster.model import Broker, PartitionState, TopicPartition
from kafkatool.jvm import java_collections
from kafkatool.jvm.hashing import topic_partition_hash
from tests.support.cli import run_kafkatool
from tests.support.fake_admin import FakeKafka
from tests.support.kwire import MATRIX
from tests.support.zk_cluster import ZkKafka


@pytest.fixture(params=MATRIX)
def release(request: pytest.FixtureRequest) -> str:
    """The Kafka release the fake brokers are (its ApiVersions table, its message versions)."""
    return str(request.param)


@pytest.fixture
def kafka(release: str):  # type: ignore[no-untyped-def]
    with FakeKafka({1: None, 2: None, 3: None}, release=release) as k:
        k.add_topic("orders", {0: [1, 2], 1: [2, 3], 2: [3, 1], 3: [1, 3]})
        k.add_topic("audit", {0: [2, 1]})
        yield k


def needs_2_2(release: str) -> None:
    if release == "2.1.1":
        pytest.skip("Kafka 2.1 has no ElectLeaders (exit 2: tests/test_admin_compat.py)")


def elect(k: FakeKafka, tmp_path: Path, *args: str):  # type: ignore[no-untyped-def]
    """The command against the fakes, in 4.0's text: the release matrix varies the protocol, not the
    text (the tests of each release's text pass --kafka-release themselves)."""
    return run_kafkatool("--kafka-release", "4.0", "elect", "--bootstrap-server", k.bootstrap, "--timeout", "5", *args, cwd=tmp_path)


def tp_order(*names: str) -> str:
    parts = [TopicPartition(n.rsplit("-", 1)[0], int(n.rsplit("-", 1)[1])) for n in names]
    return ", ".join(map(str, java_collections.hash_order(parts, lambda tp: topic_partition_hash(*tp))))


def test_election_json_and_selection_follow_kafka() -> None:
    assert parse_election_json('{"partitions":[{"topic":"a","partition":1},{"topic":"b","partition":0}]}') == [
        TopicPartition("a", 1), TopicPartition("b", 0)]
    with pytest.raises(ElectionInputError, match='^Replica election data is missing "partitions" field$'):
        parse_election_json('{"version":1}')
    with pytest.raises(ElectionInputError, match=r"^Replica election data contains duplicate partitions: \[a-1\]$"):
        parse_election_json('{"partitions":[{"topic":"a","partition":1},{"topic":"a","partition":1}]}')
    with pytest.raises(ElectionInputError, match="exactly one of"):
        select_partitions(True, "a", 1, None)
    with pytest.raises(ElectionInputError, match="go together"):
        select_partitions(False, "a", None, None)
    assert select_partitions(True, None, None, None) is None


def test_preferred_election_of_all_partitions(kafka: FakeKafka, tmp_path: Path, release: str) -> None:
    needs_2_2(release)
    kafka.partition("orders", 0).leader = 2
    kafka.partition("orders", 2).leader = 1
    r = elect(kafka, tmp_path, "--election-type", "preferred", "--all-topic-partitions")
    assert (r.code, r.err) == (0, "")
    assert r.out == f"Successfully completed leader election (PREFERRED) for partitions {tp_order('orders-0', 'orders-2')}\n"
    assert kafka.sent(ElectLeadersRequest)[-1].topic_partitions is None  # null, as Kafka's tool sends
    assert kafka.partition("orders", 0).leader == 1 and kafka.partition("orders", 2).leader == 3
    # kafka-leader-election.sh names the client properties --admin.config
    (tmp_path / "admin.properties").write_text("client.id=election-tool\n")
    r = elect(kafka, tmp_path, "--election-type", "preferred", "--all-topic-partitions", "--admin.config",
              "admin.properties")
    assert (r.code, r.out, r.err) == (0, "", "")  # nothing left to elect: Kafka prints nothing either


def test_named_partitions_not_needed_and_failures(kafka: FakeKafka, tmp_path: Path, release: str) -> None:
    needs_2_2(release)
    kafka.partition("orders", 1).leader = 3
    kafka.partition("orders", 3).leader = 3
    kafka.partition("orders", 3).isr = [3]  # preferred replica 1 out of sync
    (tmp_path / "p.json").write_text(json.dumps({"partitions": [
        {"topic": "orders", "partition": p} for p in (0, 1, 3)]}))
    r = elect(kafka, tmp_path, "--election-type", "preferred", "--path-to-json-file", "p.json")
    assert r.code == 3
    assert r.out == (
        "Successfully completed leader election (PREFERRED) for partitions orders-1\n"
        "Valid replica already elected for partitions orders-0\n"
        "Error completing leader election (PREFERRED) for partition: orders-3: "
        "org.apache.kafka.common.errors.PreferredLeaderNotAvailableException: Failed to elect leader for partition "
        "orders-3 under strategy PreferredReplicaPartitionLeaderElectionStrategy\n")
    assert r.err == "kafkatool: elect: 1 replica(s) could not be elected\n"


def test_unclean_election(kafka: FakeKafka, tmp_path: Path, release: str) -> None:
    needs_2_2(release)
    kafka.alive.discard(2)
    kafka.partition("orders", 1).leader = -1
    kafka.partition("orders", 1).isr = []
    r = elect(kafka, tmp_path, "--election-type", "unclean", "--topic", "orders", "--partition", "1", "--dry-run")
    assert r.code == 1 and r.out == "Partitions without a leader: 1\n  orders-1: replicas 2,3, isr (none), candidate 3\n"
    r = elect(kafka, tmp_path, "--election-type", "unclean", "--topic", "orders", "--partition", "1")
    assert (r.code, r.out) == (0, "Successfully completed leader election (UNCLEAN) for partitions orders-1\n")
    assert kafka.partition("orders", 1).leader == 3
    r = elect(kafka, tmp_path, "--election-type", "unclean", "--topic", "orders", "--partition", "1", "--format", "json")
    assert json.loads(r.out) == [{"topic": "orders", "partition": 1, "election_type": "unclean",
                                  "status": "not-needed", "error": None}]


def test_dry_run_reports_imbalance(kafka: FakeKafka, tmp_path: Path) -> None:
    kafka.partition("orders", 0).leader = 2
    r = elect(kafka, tmp_path, "--election-type", "preferred", "--all-topic-partitions", "--dry-run")
    assert r.code == 1
    assert r.out == (
        "Partitions not led by their preferred replica: 1\n"
        "  orders-0: leader 2, preferred 1, replicas 1,2, isr 1,2\n"
        "Leader imbalance per broker (leader.imbalance.per.broker.percentage=10):\n"
        "  broker  preferred  not-led  imbalance\n"
        "  1               2        1      50.0%  over\n"
        "  2               2        0       0.0%\n"
        "  3               1        0       0.0%\n")
    doc = json.loads(elect(kafka, tmp_path, "--election-type", "preferred", "--all-topic-partitions", "--dry-run",
                           "--format", "json").out)
    assert doc["partitions"][0]["eligible"] is True and doc["brokers"][0]["imbalance_percent"] == 50.0
    kafka.partition("orders", 0).leader = 1
    r = elect(kafka, tmp_path, "--election-type", "preferred", "--all-topic-partitions", "--dry-run")
    assert r.code == 0 and r.out.startswith("Partitions not led by their preferred replica: 0\n")


def test_preferred_report_flags_ineligible() -> None:
    states = {TopicPartition("t", 0): PartitionState([5, 1], leader=1, isr=[1]),
              TopicPartition("t", 1): PartitionState([1, 5], leader=1, isr=[1, 5])}
    out, per = preferred_report(states, [Broker(1), Broker(5)], None)
    assert [(n.partition.partition, n.eligible) for n in out] == [(0, False)]
    assert [(b.broker, b.preferred, b.not_led) for b in per] == [(1, 1, 0), (5, 1, 1)]


@pytest.mark.zookeeper
def test_zookeeper_preferred_election(zk_chroot: str, tmp_path: Path) -> None:
    k = ZkKafka(zk_chroot)
    try:
        for b in (1, 2):
            k.add_broker(b)
        k.become_controller(1)
        k.create_topic("t", {0: [1, 2], 1: [2, 1]})
        k.set_state("t", 0, 2, [1, 2])

        def run(*args: str):  # type: ignore[no-untyped-def]
            return run_kafkatool("elect", "--zookeeper", zk_chroot, "--timeout", "10", *args, cwd=tmp_path)

        r = run("--election-type", "preferred", "--all-topic-partitions", "--dry-run")
        assert r.code == 1 and "  t-0: leader 2, preferred 1, replicas 1,2, isr 1,2\n" in r.out
        (tmp_path / "p.json").write_text('{"partitions":[{"topic":"t","partition":0},{"topic":"t","partition":7}]}')
        r = run("--election-type", "preferred", "--path-to-json-file", "p.json")
        assert (r.code, r.err) == (0, "")
        znode = '{"version":1,"partitions":[{"topic":"t","partition":0}]}'
        assert r.out == ("Created preferred replica election path with t-0\n"
                         "Successfully started preferred replica election for partitions Set(t-0)\n"
                         "Skipping preferred replica leader election for partition t-7 since it doesn't exist.\n")
        assert k.zk.get("/admin/preferred_replica_election")[0].decode() == znode
        r = run("--election-type", "preferred", "--all-topic-partitions")
        assert (r.code, r.out) == (1, "")
        assert r.err == ("kafkatool: elect: Preferred replica leader election currently in progress for t-0. "
                         "Aborting operation\n")
        assert k.complete_preferred_election() == [("t", 0)]
        assert k.state("t", 0)["leader"] == 1
        r = run("--election-type", "unclean", "--all-topic-partitions")
        assert r.code == 2 and "unclean leader election needs --bootstrap-server" in r.err
    finally:
        k.close()


def test_election_order_follows_the_release_s_collections(tmp_path: Path) -> None:
    """3.3's Scala tool prints `mutable.HashSet` order, 3.7+'s Java tool `HashSet` order (issue 11)."""
    from kafkatool.jvm import scala_collections

    with FakeKafka({1: None, 2: None, 3: None}) as k:
        k.add_topic("__consumer_offsets", {p: [1 + p % 3, 1 + (p + 1) % 3] for p in range(50)})
        k.add_topic("orders", {p: [1 + p % 3, 1 + (p + 2) % 3] for p in range(6)})
        moved = [TopicPartition("__consumer_offsets", p) for p in range(0, 50, 8)] + [TopicPartition("orders", p)
                                                                                     for p in range(6)]
        scala = ", ".join(map(str, scala_collections.topic_partition_mutable_order(moved)))
        java = tp_order(*map(str, moved))
        assert scala != java  # the case the issue found: the two orders differ
        for rel, want in (("3.3", scala), ("4.0", java)):
            for tp in moved:
                k.partition(tp.topic, tp.partition).leader = k.partition(tp.topic, tp.partition).replicas[1]
            r = run_kafkatool("--kafka-release", rel, "elect", "--bootstrap-server", k.bootstrap, "--timeout", "5",
                              "--election-type", "preferred", "--all-topic-partitions", cwd=tmp_path)
            assert (r.code, r.out) == (0, f"Successfully completed leader election (PREFERRED) for partitions {want}\n")


def test_unknown_partitions_and_bad_threshold_are_refused(kafka: FakeKafka, tmp_path: Path) -> None:
    r = elect(kafka, tmp_path, "--election-type", "preferred", "--topic", "orders", "--partition", "77", "--dry-run")
    assert (r.code, r.out, r.err) == (2, "", "kafkatool: elect: no such partition: orders-77\n")
    r = elect(kafka, tmp_path, "--election-type", "preferred", "--all-topic-partitions", "--dry-run",
              "--imbalance-threshold", "-5")
    assert (r.code, r.out) == (2, "")
    assert "--imbalance-threshold" in r.err and "negative" in r.err  # the sweep of every option refuses it first
    r = elect(kafka, tmp_path, "--election-type", "preferred", "--all-topic-partitions", "--dry-run",
              "--imbalance-threshold", "150")
    assert (r.code, r.out) == (2, "")
    assert r.err == "kafkatool: elect: --imbalance-threshold: 150 is not a percentage between 0 and 100\n"


@pytest.mark.zookeeper
def test_zookeeper_election_prints_kafka_2_text_in_its_set_order(zk_chroot: str, tmp_path: Path) -> None:
    """Kafka 2.x: `valid.mkString(",")`, then the Set's toString; a Scala 2.11/2.12 hash trie beyond 4."""
    from kafkatool.cluster.elect import zk_election_order

    k = ZkKafka(zk_chroot)
    try:
        for b in (1, 2):
            k.add_broker(b)
        k.become_controller(1)
        k.create_topic("orders", {p: [1 + p % 2, 2 - p % 2] for p in range(6)})
        k.create_topic("__consumer_offsets", {p: [1, 2] for p in range(10)})
        wanted = [TopicPartition("__consumer_offsets", 8), TopicPartition("orders", 0), TopicPartition("orders", 3),
                  TopicPartition("orders", 5), TopicPartition("orders", 77), TopicPartition("orders", 1)]
        order = zk_election_order(wanted)
        assert order != wanted and order != sorted(wanted)
        valid = [tp for tp in order if tp.partition != 77]
        (tmp_path / "p.json").write_text(json.dumps({"partitions": [{"topic": tp.topic, "partition": tp.partition}
                                                                    for tp in wanted]}))
        r = run_kafkatool("elect", "--zookeeper", zk_chroot, "--timeout", "10", "--election-type", "preferred",
                          "--path-to-json-file", "p.json", cwd=tmp_path)
        assert (r.code, r.err) == (0, "")
        assert r.out == (f"Created preferred replica election path with {','.join(map(str, valid))}\n"
                         f"Successfully started preferred replica election for partitions "
                         f"Set({', '.join(map(str, valid))})\n"
                         "Skipping preferred replica leader election for partition orders-77 since it doesn't exist.\n")
        r = run_kafkatool("elect", "--zookeeper", zk_chroot, "--timeout", "10", "--election-type", "preferred",
                          "--topic", "orders", "--partition", "77", cwd=tmp_path)
        assert (r.code, r.out, r.err) == (2, "", "kafkatool: elect: no such partition: orders-77\n")
    finally:
        k.close()


def test_unclean_election_needs_elect_leaders_v1(tmp_path: Path) -> None:
    """Kafka 2.2 and 2.3 accept ElectLeaders v0 only, which has no election type (it always elects preferred)."""
    with FakeKafka({1: None, 2: None}, release="2.1.1") as k:
        k.api_versions[43] = (0, 0)
        k.add_topic("orders", {0: [1, 2]})
        k.partition("orders", 0).leader = 2
        r = elect(k, tmp_path, "--election-type", "unclean", "--all-topic-partitions")
        assert (r.code, r.out) == (2, "")
        assert r.err == (f"kafkatool: elect: unclean leader election needs ElectLeaders v1 (Kafka >= 2.4); the brokers "
                         f"at {k.bootstrap} are Kafka 2.1 (or another release before 2.4)\n")
        r = elect(k, tmp_path, "--election-type", "preferred", "--all-topic-partitions")
        assert (r.code, r.err) == (0, "") and k.partition("orders", 0).leader == 1
        assert [req.api_version for req in k.sent(ElectLeadersRequest)] == [0]
