"""`topics`, `configs` and `offsets owners` over ZooKeeper, against a real ZooKeeper server.

Expected text is Kafka 2.1.1's ZooKeeper-mode TopicCommand and ConfigCommand format strings
(`Topic:%s\\tPartitionCount:%d\\tReplicationFactor:%d\\tConfigs:%s`, `Created topic "%s".`, …) and
the znodes are AdminZkClient/KafkaZkClient's JSON at 2.1.1.
"""

from __future__ import annotations

import json

import pytest

import kafkatool.cli.configs  # noqa: F401  (registers the commands on the app)
import kafkatool.cli.offsets  # noqa: F401
import kafkatool.cli.offsets_owners  # noqa: F401 - registers `offsets owners`
import kafkatool.cli.topics  # noqa: F401
from kafkatool.cluster.assignment import BrokerMetadata, assign_replicas_to_brokers
from kafkatool.jvm.random import JavaRandom
from tests.support.cli import run_kafkatool
from tests.support.zk_cluster import ZkKafka

pytestmark = pytest.mark.zookeeper

COLLISION = ("WARNING: Due to limitations in metric names, topics with a period ('.') or underscore ('_') could "
             "collide. To avoid issues it is best to use either, but not both.\n")


@pytest.fixture
def kafka(zk_chroot: str):  # type: ignore[no-untyped-def]
    k = ZkKafka(zk_chroot)
    for b in (1, 2, 3):
        k.add_broker(b)
    k.become_controller(1)
    k.create_topic("orders", {0: [1, 2], 1: [2, 3], 2: [3, 1]}, config={"retention.ms": "1000", "cleanup.policy": "compact"})
    k.create_topic("audit", {0: [2, 1]})
    yield k
    k.close()


def topics(k: ZkKafka, *args: str):  # type: ignore[no-untyped-def]
    return run_kafkatool("topics", "--zookeeper", k.connect, "--timeout", "10", *args)


def configs(k: ZkKafka, *args: str):  # type: ignore[no-untyped-def]
    return run_kafkatool("configs", "--zookeeper", k.connect, "--timeout", "10", *args)


def znode(k: ZkKafka, path: str) -> bytes:
    return k.zk.get(path)[0]


def test_list_and_describe_print_kafka_21s_text(kafka: ZkKafka) -> None:
    kafka.set_state("orders", 1, -1, [2])  # the controller found no leader: 2.1 prints -1
    kafka.zk.delete("/brokers/topics/orders/partitions/2/state")  # no state at all: "none"
    r = topics(kafka, "--list")
    assert (r.code, r.out) == (0, "audit\norders\n")
    r = topics(kafka, "--describe")
    assert r.code == 0, r.err
    assert r.out == (
        "Topic:audit\tPartitionCount:1\tReplicationFactor:2\tConfigs:\n"
        "\tTopic: audit\tPartition: 0\tLeader: 2\tReplicas: 2,1\tIsr: 2,1\n"
        "Topic:orders\tPartitionCount:3\tReplicationFactor:2\tConfigs:cleanup.policy=compact,retention.ms=1000\n"
        "\tTopic: orders\tPartition: 0\tLeader: 1\tReplicas: 1,2\tIsr: 1,2\n"
        "\tTopic: orders\tPartition: 1\tLeader: -1\tReplicas: 2,3\tIsr: 2\n"
        "\tTopic: orders\tPartition: 2\tLeader: none\tReplicas: 3,1\tIsr: \n"
    )
    r = topics(kafka, "--describe", "--topic", "aud.*")
    assert r.out.startswith("Topic:audit\t") and "orders" not in r.out


def test_health_filters_exit_1_and_print_only_matching_partitions(kafka: ZkKafka) -> None:
    kafka.set_state("orders", 1, 2, [2])
    kafka.set_state("orders", 2, 3, [3, 1])
    kafka.remove_broker(3)
    r = topics(kafka, "--describe", "--under-replicated-partitions")
    assert (r.code, r.out) == (1, "\tTopic: orders\tPartition: 1\tLeader: 2\tReplicas: 2,3\tIsr: 2\n")
    r = topics(kafka, "--describe", "--unavailable-partitions")
    assert (r.code, r.out) == (1, "\tTopic: orders\tPartition: 2\tLeader: 3\tReplicas: 3,1\tIsr: 3,1\n")
    r = topics(kafka, "--describe", "--topics-with-overrides")
    assert (r.code, r.out) == (1, "Topic:orders\tPartitionCount:3\tReplicationFactor:2\t"
                                  "Configs:cleanup.policy=compact,retention.ms=1000\n")
    r = topics(kafka, "--describe", "--topic", "audit", "--under-replicated-partitions")
    assert (r.code, r.out) == (0, "")
    r = topics(kafka, "--describe", "--unavailable-partitions", "--format", "json")
    rows = json.loads(r.out)
    assert r.code == 1 and [(x["topic"], x["partition"], x["findings"]) for x in rows] == [("orders", 2, ["unavailable"])]


def test_create_writes_adminzkclients_znodes(kafka: ZkKafka) -> None:
    before = kafka.notifications()
    r = topics(kafka, "--create", "--topic", "pay.v1", "--replica-assignment", "1:2,2:3,3:1", "--config", "retention.ms=5")
    assert (r.code, r.out, r.err) == (0, COLLISION + 'Created topic "pay.v1".\n', "")
    assert znode(kafka, "/brokers/topics/pay.v1") == b'{"version":1,"partitions":{"0":[1,2],"1":[2,3],"2":[3,1]}}'
    assert znode(kafka, "/config/topics/pay.v1") == b'{"version":1,"config":{"retention.ms":"5"}}'
    assert kafka.notifications() == before  # topic creation writes no change notification
    r = topics(kafka, "--create", "--topic", "pay_v1", "--partitions", "1", "--replication-factor", "1")
    assert (r.code, r.out) == (2, COLLISION)
    assert r.err == "kafkatool: topics: Topic 'pay_v1' collides with existing topics: pay.v1\n"
    r = topics(kafka, "--create", "--topic", "orders", "--partitions", "1", "--replication-factor", "1")
    assert (r.code, r.err) == (2, "kafkatool: topics: Topic 'orders' already exists.\n")
    r = topics(kafka, "--create", "--topic", "orders", "--partitions", "1", "--replication-factor", "1", "--if-not-exists")
    assert (r.code, r.out) == (0, "")


@pytest.mark.parametrize(("name", "message"), [
    ("bad name", 'Topic name "bad name" is illegal, it contains a character other than ASCII alphanumerics, '
                 "'.', '_' and '-'"),
    ("..", 'Topic name cannot be "." or ".."'),
    ("x" * 250, "Topic name is illegal, it can't be longer than 249 characters, Topic name: " + "x" * 250),
])
def test_create_refuses_invalid_names_with_kafkas_messages(kafka: ZkKafka, name: str, message: str) -> None:
    r = topics(kafka, "--create", "--topic", name, "--partitions", "1", "--replication-factor", "1")
    assert r.code == 2 and r.err == f"kafkatool: topics: {message}\n"
    assert not kafka.zk.exists(f"/brokers/topics/{name}") if name != ".." else True


def test_create_with_partitions_is_kafkas_assignment_and_dry_run_writes_nothing(kafka: ZkKafka) -> None:
    expected = assign_replicas_to_brokers([BrokerMetadata(b) for b in (1, 2, 3)], 6, 2, rng=JavaRandom(42))
    r = topics(kafka, "--create", "--topic", "events", "--partitions", "6", "--replication-factor", "2", "--seed", "42",
               "--dry-run")
    assert r.code == 0 and r.out.startswith("dry run: nothing is changed. Would create topic events with 6 partitions")
    assert not kafka.zk.exists("/brokers/topics/events")
    r = topics(kafka, "--create", "--topic", "events", "--partitions", "6", "--replication-factor", "2", "--seed", "42")
    assert r.code == 0
    assert kafka.assignment("events") == expected
    r = topics(kafka, "--create", "--topic", "big", "--partitions", "1", "--replication-factor", "4")
    assert (r.code, r.err) == (2, "kafkatool: topics: Replication factor: 4 larger than available brokers: 3.\n")


def test_create_over_zookeeper_needs_both_counts_as_kafka_2x_did(kafka: ZkKafka) -> None:
    """TopicCommand with --zookeeper: `checkRequiredArgs(partitionsOpt, replicationFactorOpt)`, the first missing named."""
    r = topics(kafka, "--create", "--topic", "events", "--replication-factor", "1")
    assert (r.code, r.err) == (2, 'kafkatool: topics: Missing required argument "[partitions]"\n')
    r = topics(kafka, "--create", "--topic", "events", "--partitions", "2", "--dry-run")
    assert (r.code, r.err) == (2, 'kafkatool: topics: Missing required argument "[replication-factor]"\n')
    assert not kafka.zk.exists("/brokers/topics/events")


def test_alter_adds_partitions_as_addpartitions_does(kafka: ZkKafka) -> None:
    r = topics(kafka, "--alter", "--topic", "orders", "--partitions", "5", "--dry-run")
    assert r.code == 0 and "3:[1,3], 4:[2,1]" in r.out
    assert sorted(kafka.assignment("orders")) == [0, 1, 2]
    r = topics(kafka, "--alter", "--topic", "orders", "--partitions", "5")
    assert (r.code, r.out) == (0, "WARNING: If partitions are increased for a topic that has a key, the partition logic "
                                  "or ordering of the messages will be affected\nAdding partitions succeeded!\n")
    # startIndex = position of broker 1 (partition 0's first replica), partitions numbered from 3
    assert kafka.assignment("orders") == {0: [1, 2], 1: [2, 3], 2: [3, 1], 3: [1, 3], 4: [2, 1]}
    r = topics(kafka, "--alter", "--topic", "orders", "--partitions", "2")
    assert r.code == 2 and r.err == ("kafkatool: topics: The number of partitions for a topic can only be increased. "
                                     "Topic orders currently has 5 partitions, 2 would not be an increase.\n")
    r = topics(kafka, "--alter", "--topic", "nope", "--partitions", "2")
    assert r.code == 2 and r.err == f"kafkatool: topics: Topic nope does not exist on ZK path {kafka.connect}\n"


def test_delete_marks_the_topic_and_refuses_internal_topics(kafka: ZkKafka) -> None:
    kafka.create_topic("__consumer_offsets", {0: [1]})
    r = topics(kafka, "--delete", "--topic", "audit", "--dry-run")
    assert r.code == 0 and not kafka.zk.exists("/admin/delete_topics/audit")
    r = topics(kafka, "--delete", "--topic", "audit")
    assert (r.code, r.out) == (0, "Topic audit is marked for deletion.\n"
                                  "Note: This will have no impact if delete.topic.enable is not set to true.\n")
    assert kafka.zk.exists("/admin/delete_topics/audit")
    r = topics(kafka, "--delete", "--topic", "audit")
    assert (r.code, r.out) == (0, "Topic audit is already marked for deletion.\n")
    assert topics(kafka, "--list").out == "__consumer_offsets\naudit - marked for deletion\norders\n"
    assert topics(kafka, "--list", "--exclude-internal").out == "audit - marked for deletion\norders\n"
    r = topics(kafka, "--describe", "--topic", "audit")
    assert r.out.splitlines()[0] == "Topic:audit\tPartitionCount:1\tReplicationFactor:2\tConfigs:\tMarkedForDeletion:true"
    r = topics(kafka, "--delete", "--topic", "__consumer_offsets")
    assert r.code == 2 and r.err == ("kafkatool: topics: Topic __consumer_offsets is a kafka internal topic and is not "
                                     "allowed to be marked for deletion.\n")


def test_configs_describe_and_alter_like_kafka_21(kafka: ZkKafka) -> None:
    kafka.set_config("brokers", "1", {"leader.replication.throttled.rate": "100",
                                      "follower.replication.throttled.rate": "100"})
    kafka.set_config("topics", "audit", {"leader.replication.throttled.replicas": "0:2,0:1"})
    r = configs(kafka, "--describe", "--entity-type", "topics", "--entity-name", "orders")
    assert (r.code, r.out) == (0, "Configs for topic 'orders' are cleanup.policy=compact,retention.ms=1000\n")
    r = configs(kafka, "--describe", "--entity-type", "brokers")
    assert r.out == ("Configs for brokers '1' are "
                     "leader.replication.throttled.rate=100,follower.replication.throttled.rate=100\n")
    r = configs(kafka, "--describe", "--topic", "audit", "--format", "json")
    assert [(x["name"], x["throttle"]) for x in json.loads(r.out)] == [("leader.replication.throttled.replicas", True)]
    before = len(kafka.notifications())
    # a throttle left behind is removed with kafkatool alone
    r = configs(kafka, "--alter", "--broker", "1", "--delete-config",
                "leader.replication.throttled.rate,follower.replication.throttled.rate")
    assert (r.code, r.out) == (0, "Completed Updating config for entity: brokers '1'.\n")
    assert znode(kafka, "/config/brokers/1") == b'{"version":1,"config":{}}'
    r = configs(kafka, "--alter", "--topic", "audit", "--delete-config", "leader.replication.throttled.replicas",
                "--add-config", "retention.ms=7")
    assert (r.code, r.out) == (0, "Completed Updating config for entity: topic 'audit'.\n")
    assert znode(kafka, "/config/topics/audit") == b'{"version":1,"config":{"retention.ms":"7"}}'
    assert kafka.notifications()[before:] == [{"version": 2, "entity_path": "brokers/1"},
                                              {"version": 2, "entity_path": "topics/audit"}]
    r = configs(kafka, "--alter", "--topic", "audit", "--delete-config", "nope")
    assert (r.code, r.err) == (2, "kafkatool: configs: Invalid config(s): nope\n")
    r = configs(kafka, "--alter", "--topic", "gone", "--add-config", "a=b")
    assert (r.code, r.err) == (2, 'kafkatool: configs: Topic "gone" does not exist.\n')


def test_configs_broker_rules_over_zookeeper(kafka: ZkKafka) -> None:
    r = configs(kafka, "--alter", "--broker", "2", "--add-config", "log.cleaner.threads=2")
    assert r.code == 2 and r.err.startswith(
        "kafkatool: configs: requirement failed: --bootstrap-server option must be specified to update broker configs "
        "Set(log.cleaner.threads). when broker 2 is running.")
    r = configs(kafka, "--alter", "--entity-type", "brokers", "--entity-default", "--add-config",
                "leader.replication.throttled.rate=10", "--dry-run")
    assert r.code == 0 and not kafka.zk.exists("/config/brokers/<default>")
    r = configs(kafka, "--alter", "--entity-type", "brokers", "--entity-default", "--add-config",
                "leader.replication.throttled.rate=10")
    assert (r.code, r.out) == (0, "Completed Updating config for entity: default brokers.\n")
    assert znode(kafka, "/config/brokers/<default>") == b'{"version":1,"config":{"leader.replication.throttled.rate":"10"}}'
    assert kafka.notifications()[-1] == {"version": 2, "entity_path": "brokers/<default>"}
    assert configs(kafka, "--describe", "--broker-defaults").out == (
        "Configs for default brokers are leader.replication.throttled.rate=10\n")


def _consumer(k: ZkKafka, group: str, cid: str, subscription: dict[str, int], pattern: str = "static") -> None:
    k.zk.create(f"/consumers/{group}/ids/{cid}", json.dumps(
        {"version": 1, "subscription": subscription, "pattern": pattern, "timestamp": "1"}).encode(), makepath=True)


def test_offsets_owners_verify_as_verifyconsumerrebalance(kafka: ZkKafka) -> None:
    _consumer(kafka, "g", "c1", {"orders": 2})
    for p, owner in ((0, b"c1-0"), (1, b"c1-1")):
        kafka.zk.create(f"/consumers/g/owners/orders/{p}", owner, makepath=True)
    r = run_kafkatool("offsets", "owners", "--zookeeper", kafka.connect, "--group", "g", "--verify")
    assert r.code == 1
    assert r.out.splitlines()[-2:] == ["No owner for partition [orders,2]", "Rebalance operation failed !"]
    kafka.zk.create("/consumers/g/owners/orders/2", b"old-consumer-0")
    r = run_kafkatool("offsets", "owners", "--zookeeper", kafka.connect, "--group", "g", "--verify", "--format", "csv")
    assert (r.code, r.out) == (1, "topic,partition,owner,status\norders,0,c1-0,ok\norders,1,c1-1,ok\n"
                                  "orders,2,old-consumer-0,not-a-member\n")
    kafka.zk.set("/consumers/g/owners/orders/2", b"c1-0")
    _consumer(kafka, "g", "c2", {"aud.*": 1}, pattern="white_list")
    kafka.zk.create("/consumers/g/owners/audit/0", b"c2-0", makepath=True)
    r = run_kafkatool("offsets", "owners", "--zookeeper", kafka.connect, "--group", "g", "--verify")
    assert (r.code, r.out.splitlines()[-1]) == (0, "Rebalance operation successful !")
    assert r.out.splitlines()[0].split() == ["TOPIC", "PARTITION", "OWNER", "STATUS"]


def test_unknown_topic_config_names_are_refused_over_zookeeper(kafka: ZkKafka) -> None:
    r = topics(kafka, "--create", "--topic", "t", "--partitions", "1", "--replication-factor", "1", "--config", "retention=5")
    assert (r.code, r.err) == (2, "kafkatool: topics: Unknown topic config name: retention\n")
    assert not kafka.zk.exists("/brokers/topics/t")
    r = configs(kafka, "--alter", "--topic", "orders", "--add-config", "retention=5")
    assert (r.code, r.err) == (2, "kafkatool: configs: Unknown topic config name: retention\n")


def test_under_replicated_over_zookeeper_counts_every_assigned_replica(zk_chroot: str) -> None:
    """Kafka 2.1: ISR shorter than the replica list, adding replicas included (3.3 leaves them out)."""
    k = ZkKafka(zk_chroot, topic_version=2)
    try:
        for b in (1, 2, 3):
            k.add_broker(b)
        k.create_topic("t", {0: [1, 2]})
        k.set_assignment("t", {0: [1, 2, 3]}, adding={0: [3]}, removing={})
        k.set_state("t", 0, 1, [1, 2])
        r = topics(k, "--describe", "--under-replicated-partitions")
        assert (r.code, r.out) == (1, "\tTopic: t\tPartition: 0\tLeader: 1\tReplicas: 1,2,3\tIsr: 1,2\n")
    finally:
        k.close()


def test_alter_configs_the_deprecated_zookeeper_way(kafka: ZkKafka) -> None:
    before = len(kafka.notifications())
    r = topics(kafka, "--alter", "--topic", "orders", "--config", "retention.ms=7", "--delete-config", "cleanup.policy")
    assert (r.code, r.out) == (0, "WARNING: Altering topic configuration from this script has been deprecated and may be "
                                  "removed in future releases.\n"
                                  "         Going forward, please use kafka-configs.sh for this functionality\n"
                                  'Updated config for topic "orders".\n')
    assert znode(kafka, "/config/topics/orders") == b'{"version":1,"config":{"retention.ms":"7"}}'
    assert kafka.notifications()[before:] == [{"version": 2, "entity_path": "topics/orders"}]


def test_a_throttle_reassign_left_behind_is_seen_and_removed(kafka: ZkKafka, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """reassign --execute --throttle sets the throttles; when the move is done without --verify they stay:
    configs shows them and removes them."""
    import kafkatool.cli.reassign  # noqa: F401

    plan = {"version": 1, "partitions": [{"topic": "audit", "partition": 0, "replicas": [3, 1]}]}
    (tmp_path / "r.json").write_text(json.dumps(plan))
    r = run_kafkatool("reassign", "--zookeeper", kafka.connect, "--execute", "--reassignment-json-file",
                      str(tmp_path / "r.json"), "--throttle", "5000", "--rollback-file", str(tmp_path / "rb.json"))
    assert r.code == 0, r.err
    kafka.complete_reassignment()  # the controller finished; nobody ran --verify
    rows = json.loads(configs(kafka, "--describe", "--entity-type", "brokers", "--format", "json").out)
    throttled = sorted({x["entity_name"] for x in rows if x["throttle"]})
    assert throttled and all(x["value"] == "5000" for x in rows if x["name"].endswith("throttled.rate"))
    topic_rows = json.loads(configs(kafka, "--describe", "--topic", "audit", "--format", "json").out)
    assert {x["name"] for x in topic_rows} == {"leader.replication.throttled.replicas",
                                               "follower.replication.throttled.replicas"}
    for broker in throttled:
        r = configs(kafka, "--alter", "--broker", broker, "--delete-config",
                    "leader.replication.throttled.rate,follower.replication.throttled.rate")
        assert r.code == 0, r.err
    r = configs(kafka, "--alter", "--topic", "audit", "--delete-config",
                "leader.replication.throttled.replicas,follower.replication.throttled.replicas")
    assert r.code == 0, r.err
    assert all(kafka.config("brokers", b) == {} for b in throttled) and kafka.config("topics", "audit") == {}


def test_configs_describe_lists_entities_in_zookeepers_order(kafka: ZkKafka) -> None:
    """Kafka 2.1's ConfigCommand prints `getChildren(/config/topics)` as the server returns it (not sorted)."""
    for t in ("zeta", "m", "alpha", "k9", "b"):
        kafka.set_config("topics", t, {"retention.ms": "1"})
    served = kafka.zk.get_children("/config/topics")  # the oracle: the real ZooKeeper server's answer
    r = configs(kafka, "--describe", "--entity-type", "topics")
    assert r.code == 0, r.err
    assert [line.split("'")[1] for line in r.out.splitlines()] == served
