"""`topics` and `configs` over the Admin API: kafka-python's real client against fake brokers that
advertise a real broker's ApiVersions answer (Kafka 2.1.1, 3.3.1, 4.0.0 from shared/fixtures/brokers).

Expected text is Kafka's own format strings: TopicCommand.scala at 3.3.1
(`Topic: X\\tTopicId: …\\tPartitionCount: …`), TopicCommand.java at 4.0 (`\\tElr: …\\tLastKnownElr: …`,
`N/A` without DescribeTopicPartitions) and ConfigCommand.scala at 3.3.1.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest
from kafka.protocol.admin import (
    AlterConfigsRequest,
    CreatePartitionsRequest,
    CreateTopicsRequest,
    DeleteTopicsRequest,
    IncrementalAlterConfigsRequest,
)

import kafkatool.cli.configs  # noqa: F401  (registers the commands on the app)
import kafkatool.cli.topics  # noqa: F401
from tests.support import kwire
from tests.support.cli import run_kafkatool
from tests.support.fake_topics import FakeTopicsKafka


def tid(k: FakeTopicsKafka, topic: str) -> str:
    """Kafka's `Uuid.toString()`: URL-safe base64 without padding."""
    return base64.urlsafe_b64encode(k.topic_ids[topic].bytes).decode().rstrip("=")


def start(real_broker: str, elr: bool = True) -> FakeTopicsKafka:
    k = FakeTopicsKafka({1: "r1", 2: "r2", 3: "r1", 4: "r2"}, controller=2, real_broker=real_broker, elr=elr)
    k.start()
    k.add_topic("orders", {0: [1, 2], 1: [2, 3], 2: [3, 4]})
    k.add_topic("audit", {0: [4, 1]})
    k.set_config("topics", "orders", {"retention.ms": "5", "min.insync.replicas": "2"})
    return k


@pytest.fixture
def k33():  # type: ignore[no-untyped-def]
    k = start("3.3.1")
    yield k
    k.stop()


def topics(k: FakeTopicsKafka, *args: str, release: str | None = None):  # type: ignore[no-untyped-def]
    pre = ("--kafka-release", release) if release else ()
    return run_kafkatool(*pre, "topics", "--bootstrap-server", k.bootstrap, "--timeout", "5", *args)


def configs(k: FakeTopicsKafka, *args: str):  # type: ignore[no-untyped-def]
    return run_kafkatool("configs", "--bootstrap-server", k.bootstrap, "--timeout", "5", *args)


def test_describe_is_kafka_33s_text_against_a_33_broker(k33: FakeTopicsKafka) -> None:
    k33.partition("orders", 1).isr = [2]
    k33.alive.discard(4)  # broker 4 died: partition 2 has no live leader
    k33.partition("orders", 2).leader = 4
    r = topics(k33, "--describe")
    assert r.code == 0, r.err
    assert r.out == (
        f"Topic: audit\tTopicId: {tid(k33, 'audit')}\tPartitionCount: 1\tReplicationFactor: 2\tConfigs: \n"
        "\tTopic: audit\tPartition: 0\tLeader: none\tReplicas: 4,1\tIsr: 4,1\n"  # its leader is not a live broker
        f"Topic: orders\tTopicId: {tid(k33, 'orders')}\tPartitionCount: 3\tReplicationFactor: 2\t"
        "Configs: min.insync.replicas=2,retention.ms=5\n"
        "\tTopic: orders\tPartition: 0\tLeader: 1\tReplicas: 1,2\tIsr: 1,2\n"
        "\tTopic: orders\tPartition: 1\tLeader: 2\tReplicas: 2,3\tIsr: 2\n"
        "\tTopic: orders\tPartition: 2\tLeader: none\tReplicas: 3,4\tIsr: 3,4\n"
    )
    assert topics(k33, "--list").out == "audit\norders\n"


def test_health_filters_follow_kafkas_rules(k33: FakeTopicsKafka) -> None:
    k33.partition("orders", 1).isr = [2]
    k33.partition("audit", 0).isr = [4]
    r = topics(k33, "--describe", "--under-min-isr-partitions")  # orders has min.insync.replicas=2
    assert (r.code, r.out) == (1, "\tTopic: orders\tPartition: 1\tLeader: 2\tReplicas: 2,3\tIsr: 2\n")
    r = topics(k33, "--describe", "--at-min-isr-partitions")  # audit has the default, 1
    assert (r.code, r.out) == (1, "\tTopic: audit\tPartition: 0\tLeader: 4\tReplicas: 4,1\tIsr: 4\n"
                                  "\tTopic: orders\tPartition: 0\tLeader: 1\tReplicas: 1,2\tIsr: 1,2\n"
                                  "\tTopic: orders\tPartition: 2\tLeader: 3\tReplicas: 3,4\tIsr: 3,4\n")
    r = topics(k33, "--describe", "--under-replicated-partitions", "--format", "ndjson")
    rows = [json.loads(line) for line in r.out.splitlines()]
    assert r.code == 1 and [(x["topic"], x["partition"]) for x in rows] == [("audit", 0), ("orders", 1)]
    r = topics(k33, "--describe", "--topics-with-overrides")
    assert (r.code, r.out) == (1, f"Topic: orders\tTopicId: {tid(k33, 'orders')}\tPartitionCount: 3\t"
                                  "ReplicationFactor: 2\tConfigs: min.insync.replicas=2,retention.ms=5\n")
    r = topics(k33, "--describe", "--topic", "nope")
    assert (r.code, r.err) == (2, "kafkatool: topics: Topic 'nope' does not exist as expected\n")


def test_reassignment_in_progress_shows_adding_and_removing(k33: FakeTopicsKafka) -> None:
    k33._alter_one("orders", 0, [2, 3])
    r = topics(k33, "--describe", "--topic", "orders")
    lines = r.out.splitlines()
    assert lines[0].endswith("\tReplicationFactor: 2\tConfigs: min.insync.replicas=2,retention.ms=5")
    assert lines[1] == "\tTopic: orders\tPartition: 0\tLeader: 1\tReplicas: 2,3,1\tIsr: 1,2\tAdding Replicas: 3\tRemoving Replicas: 1"


def test_kafka_40_text_has_elr_columns() -> None:
    k = start("4.0.0")
    try:
        k.elr[("orders", 1)] = ([3], [])
        r = topics(k, "--describe", "--topic", "orders")  # a 4.0 broker: 4.0's text
        assert r.code == 0, r.err
        assert r.out.splitlines()[1:3] == [
            "\tTopic: orders\tPartition: 0\tLeader: 1\tReplicas: 1,2\tIsr: 1,2\tElr: \tLastKnownElr: ",
            "\tTopic: orders\tPartition: 1\tLeader: 2\tReplicas: 2,3\tIsr: 2,3\tElr: 3\tLastKnownElr: "]
        r = topics(k, "--describe", "--topic", "orders", release="3.3")
        assert r.out.splitlines()[1] == "\tTopic: orders\tPartition: 0\tLeader: 1\tReplicas: 1,2\tIsr: 1,2"
    finally:
        k.stop()
    k = start("3.3.1", elr=False)
    try:  # 4.0's tool against a broker without DescribeTopicPartitions falls back to Metadata
        r = topics(k, "--describe", "--topic", "audit", release="4.0")
        assert r.out.splitlines()[1] == "\tTopic: audit\tPartition: 0\tLeader: 4\tReplicas: 4,1\tIsr: 4,1\tElr: N/A\tLastKnownElr: N/A"
    finally:
        k.stop()


def test_create_alter_delete_send_what_kafkas_tool_sends(k33: FakeTopicsKafka) -> None:
    r = topics(k33, "--create", "--topic", "events", "--replica-assignment", "1:2,3:4", "--config", "retention.ms=9")
    assert (r.code, r.out, r.err) == (0, "Created topic events.\n", "")
    sent = k33.sent(CreateTopicsRequest)[-1].topics[0]
    assert [(a.partition_index, list(a.broker_ids)) for a in sent.assignments] == [(0, [1, 2]), (1, [3, 4])]
    assert [(c.name, c.value) for c in sent.configs] == [("retention.ms", "9")]
    assert k33.assignment("events") == {0: [1, 2], 1: [3, 4]}
    r = topics(k33, "--alter", "--topic", "events", "--partitions", "3")
    assert (r.code, r.out, r.err) == (0, "", "")  # Kafka 3.3's tool prints nothing here
    assert _sent_growth(k33) == (False, [("events", 3, None)])  # the count only: the controller places
    assert len(k33.assignment("events")) == 3
    r = topics(k33, "--create", "--topic", "events", "--partitions", "1", "--replication-factor", "1")
    assert (r.code, r.err) == (2, "kafkatool: topics: Topic 'events' already exists.\n")
    r = topics(k33, "--delete", "--topic", "events")
    assert (r.code, r.out) == (0, "")
    assert [t.name for t in k33.sent(DeleteTopicsRequest)[-1].topics] == ["events"] and "events" not in k33.topics


def test_a_21_broker_describes_and_alters_configs_with_alter_configs() -> None:
    k = start("2.1.1")
    try:
        r = topics(k, "--describe", "--topic", "audit")
        assert r.code == 0, r.err
        # Metadata v7 has no topic ids; no ListPartitionReassignments: no reassignments, as in Kafka's tool
        assert r.out == ("Topic: audit\tPartitionCount: 1\tReplicationFactor: 2\tConfigs: \n"
                         "\tTopic: audit\tPartition: 0\tLeader: 4\tReplicas: 4,1\tIsr: 4,1\n")
        # No IncrementalAlterConfigs before 2.3: AlterConfigs with the whole new set, as Kafka 3.3's tool does
        k.set_config("brokers", "2", {"leader.replication.throttled.rate": "100", "follower.replication.throttled.rate": "7"})
        r = configs(k, "--alter", "--broker", "2", "--add-config", "log.cleaner.threads=2",
                    "--delete-config", "follower.replication.throttled.rate")
        assert (r.code, r.out) == (0, "Completed updating config for broker 2.\n"), r.err
        assert r.err == ("kafkatool: note: the brokers are Kafka 2.1 (or another release before 2.3), without "
                         "IncrementalAlterConfigs: rewrote every dynamic config of broker 2 with AlterConfigs "
                         "(read-modify-write, as Kafka 3.3's kafka-configs.sh does for brokers; a change made meanwhile "
                         "by another client is overwritten)\n")
        assert k.config("brokers", "2") == {"leader.replication.throttled.rate": "100", "log.cleaner.threads": "2"}
        assert k.sent(AlterConfigsRequest) and not k.sent(IncrementalAlterConfigsRequest)
        r = configs(k, "--alter", "--topic", "orders", "--add-config", "retention.ms=1")
        assert (r.code, r.out) == (0, "Completed updating config for topic orders.\n"), r.err
        assert k.config("topics", "orders") == {"retention.ms": "1", "min.insync.replicas": "2"}
        r = configs(k, "--alter", "--topic", "orders", "--delete-config", "segment.ms")
        assert (r.code, r.err) == (2, "kafkatool: configs: Invalid config(s): segment.ms\n")
        r = configs(k, "--alter", "--broker-defaults", "--add-config", "follower.replication.throttled.rate=5")
        assert (r.code, r.out) == (0, "Completed updating default config for brokers in the cluster.\n"), r.err
        assert k.config("brokers", "") == {"follower.replication.throttled.rate": "5"}
    finally:
        k.stop()


def test_configs_describe_and_alter_are_kafka_33s(k33: FakeTopicsKafka) -> None:
    k33.set_config("brokers", "2", {"leader.replication.throttled.rate": "100"})
    r = configs(k33, "--describe", "--entity-type", "topics", "--entity-name", "orders")
    assert (r.code, r.out) == (0, "Dynamic configs for topic orders are:\n"
                                  "  min.insync.replicas=2 sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:min.insync.replicas=2}\n"
                                  "  retention.ms=5 sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:retention.ms=5}\n")
    r = configs(k33, "--describe", "--broker", "2")
    assert r.out == ("Dynamic configs for broker 2 are:\n"
                     "  leader.replication.throttled.rate=100 sensitive=false synonyms={DYNAMIC_BROKER_CONFIG:"
                     "leader.replication.throttled.rate=100}\n")
    r = configs(k33, "--alter", "--broker", "2", "--delete-config", "leader.replication.throttled.rate")
    assert (r.code, r.out) == (0, "Completed updating config for broker 2.\n")
    assert k33.config("brokers", "2") == {}
    r = configs(k33, "--alter", "--topic", "orders", "--add-config", "cleanup.policy=[compact,delete]",
                "--delete-config", "retention.ms")
    assert (r.code, r.out) == (0, "Completed updating config for topic orders.\n")
    assert k33.config("topics", "orders") == {"min.insync.replicas": "2", "cleanup.policy": "compact,delete"}
    r = configs(k33, "--alter", "--topic", "orders", "--delete-config", "retention.ms")
    assert (r.code, r.err) == (2, "kafkatool: configs: Invalid config(s): retention.ms\n")
    r = configs(k33, "--alter", "--broker-defaults", "--add-config", "follower.replication.throttled.rate=5")
    assert (r.code, r.out) == (0, "Completed updating default config for brokers in the cluster.\n")
    assert k33.config("brokers", "") == {"follower.replication.throttled.rate": "5"}


def test_writes_follow_a_moved_controller(k33: FakeTopicsKafka) -> None:
    """The client asks the controller it knows; after a NOT_CONTROLLER answer it refreshes and asks again."""
    from kafkatool.cluster.open import open_cluster
    from kafkatool.cluster.topics import CreatePlan
    from kafkatool.cluster.topics_backend import admin_create

    with open_cluster(bootstrap_server=k33.bootstrap, timeout=5) as c:
        c.topics()
        c.client._controller_id = 1  # stale: broker 2 is the controller
        admin_create(c, CreatePlan("moved", {0: [1, 2]}, {}))
    assert k33.assignment("moved") == {0: [1, 2]}


def test_describe_by_topic_id(k33: FakeTopicsKafka) -> None:
    r = topics(k33, "--describe", "--topic-id", tid(k33, "audit"), "--topic", "orders")
    assert r.code == 0 and r.out.startswith(f"Topic: audit\tTopicId: {tid(k33, 'audit')}\t")
    r = topics(k33, "--describe", "--topic-id", "AAAAAAAAAAAAAAAAAAAAAQ")
    assert (r.code, r.err) == (2, "kafkatool: topics: TopicId 'AAAAAAAAAAAAAAAAAAAAAQ' does not exist as expected\n")


@pytest.mark.parametrize("release", kwire.MATRIX)
def test_every_release_describes_creates_and_alters(release: str) -> None:
    """Across the release matrix: the requests go at the versions kafka-python negotiates with that
    release (the fake refuses any other), and the text is the release line's."""
    k = start(release)
    try:
        r = topics(k, "--create", "--topic", "m", "--replica-assignment", "1:2")
        assert (r.code, r.out) == (0, "Created topic m.\n"), r.err
        assert topics(k, "--alter", "--topic", "m", "--partitions", "2").code == 0
        r = topics(k, "--describe", "--topic", "m")
        assert r.code == 0, r.err
        lines = r.out.splitlines()
        assert len(lines) == 3 and lines[0].startswith("Topic: m\t")
        has_ids = release not in ("2.1.1",)
        assert ("\tTopicId: " in lines[0]) == has_ids
        assert lines[1].endswith("Elr: \tLastKnownElr: ") == release.startswith("4.")
        r = configs(k, "--alter", "--topic", "m", "--add-config", "retention.ms=1")
        assert (r.code, "AlterConfigs" in r.err) == (0, release == "2.1.1"), r.err
        assert topics(k, "--delete", "--topic", "m").code == 0 and "m" not in k.topics
    finally:
        k.stop()


def test_configs_describe_all_lists_defaults_in_config_order(k33: FakeTopicsKafka) -> None:
    from kafkatool.cluster.topics_text import config_entries_order

    r = configs(k33, "--describe", "--topic", "audit", "--all")
    lines = r.out.splitlines()
    assert r.code == 0 and lines[0] == "All configs for topic audit are:"
    names = [line.split("=", 1)[0].strip() for line in lines[1:]]
    assert sorted(names) == sorted(["cleanup.policy", "min.insync.replicas", "retention.ms", "segment.bytes"])
    assert names == config_entries_order(names)  # Config.entries()' HashMap order (checked against the JDK)
    assert "  min.insync.replicas=1 sensitive=false synonyms={}" in lines


def _sent_topic(k: FakeTopicsKafka):  # type: ignore[no-untyped-def]
    """The last CreateTopics as the fake decoded it from the wire (its version's fields only)."""
    req = k.sent(CreateTopicsRequest)[-1]
    t = req.topics[0]
    return req, (t.name, t.num_partitions, t.replication_factor, [(a.partition_index, list(a.broker_ids))
                                                                  for a in t.assignments])


def test_create_sends_the_counts_and_the_controller_places_replicas(k33: FakeTopicsKafka) -> None:
    """Kafka's TopicCommand: `new NewTopic(name, partitions, replicationFactor)`, no assignment."""
    r = topics(k33, "--create", "--topic", "events", "--partitions", "4", "--replication-factor", "2", "--format", "json")
    assert r.code == 0, r.err
    req, sent = _sent_topic(k33)
    assert sent == ("events", 4, 2, []) and not req.validate_only
    row = json.loads(r.out)[0]
    assert (row["partitions"], row["replication_factor"], row["assignment"], row["status"]) == (4, 2, None, "created")
    assert len(k33.assignment("events")) == 4  # the controller's placement (the fake's business)
    r = topics(k33, "--create", "--topic", "clicks", "--partitions", "3")
    assert (r.code, r.out, r.err) == (0, "Created topic clicks.\n", "")
    assert _sent_topic(k33)[1] == ("clicks", 3, -1, [])  # the brokers' default.replication.factor


def test_create_without_counts_takes_the_brokers_defaults(k33: FakeTopicsKafka) -> None:
    """KIP-464 (CreateTopics v4+): -1 for both; the v5+ answer says what the controller made of them."""
    k33.default_partitions, k33.default_replication_factor = 3, 2
    r = topics(k33, "--create", "--topic", "events", "--format", "json")
    assert r.code == 0, r.err
    req, sent = _sent_topic(k33)
    assert sent == ("events", -1, -1, []) and req.api_version >= 5
    row = json.loads(r.out)[0]
    assert (row["partitions"], row["replication_factor"], row["assignment"]) == (3, 2, None)
    assert len(k33.assignment("events")) == 3


def test_dry_run_has_the_controller_validate_and_says_what_would_be_sent(k33: FakeTopicsKafka) -> None:
    r = topics(k33, "--create", "--topic", "events", "--partitions", "4", "--replication-factor", "2",
               "--config", "retention.ms=9", "--dry-run")
    assert (r.code, r.err) == (0, "")
    assert r.out == ("dry run: nothing is changed. Would create topic events with 4 partitions, replication factor 2, "
                     "replicas placed by the controller; configs retention.ms=9 (the controller validated it: "
                     "CreateTopics with validateOnly)\n")
    req, sent = _sent_topic(k33)
    assert req.validate_only and sent == ("events", 4, 2, []) and "events" not in k33.topics
    r = topics(k33, "--create", "--topic", "events", "--dry-run")
    assert r.out == ("dry run: nothing is changed. Would create topic events with 1 partitions (the brokers' "
                     "num.partitions), replication factor 1 (the brokers' default.replication.factor), replicas "
                     "placed by the controller (the controller validated it: CreateTopics with validateOnly)\n")
    r = topics(k33, "--create", "--topic", "events", "--replica-assignment", "1:2,3:4", "--dry-run", "--format", "json")
    row = json.loads(r.out)[0]
    assert (row["assignment"], row["status"]) == ({"0": [1, 2], "1": [3, 4]}, "dry-run")
    req, sent = _sent_topic(k33)
    assert req.validate_only and sent == ("events", -1, -1, [(0, [1, 2]), (1, [3, 4])]) and "events" not in k33.topics
    r = topics(k33, "--create", "--topic", "events", "--partitions", "1", "--replication-factor", "5", "--dry-run")
    assert (r.code, r.out) == (2, "")  # the controller's refusal, nothing created
    assert r.err == ("kafkatool: topics: Unable to replicate the partition 5 time(s): The target replication factor "
                     "of 5 cannot be reached because only 4 broker(s) are registered.\n")


def test_a_broker_before_kip_464_needs_both_counts() -> None:
    """CreateTopics v0-3 (Kafka 2.1) has no broker defaults: the Java client refuses before sending."""
    k = start("2.1.1")
    try:
        r = topics(k, "--create", "--topic", "events", "--partitions", "2")
        assert (r.code, r.out) == (2, "")
        assert r.err == ("kafkatool: topics: Creating topics with default partitions/replication factor are only "
                         "supported in CreateTopicRequest version 4+. The following topics need values for "
                         "partitions and replicas: [events]\n")
        assert not k.sent(CreateTopicsRequest)
        r = topics(k, "--create", "--topic", "events", "--partitions", "2", "--replication-factor", "2", "--dry-run")
        assert r.code == 0 and "with 2 partitions, replication factor 2, replicas placed by the controller" in r.out
        req, sent = _sent_topic(k)
        assert req.api_version == 3 and req.validate_only and sent == ("events", 2, 2, [])
    finally:
        k.stop()


def test_seed_and_rack_options_over_the_admin_api(k33: FakeTopicsKafka) -> None:
    r = topics(k33, "--create", "--topic", "seeded", "--partitions", "4", "--replication-factor", "2", "--seed", "7")
    assert (r.code, r.err) == (2, "kafkatool: topics: --seed needs --zookeeper: over the Admin API the controller "
                                  "places the replicas\n")
    assert not k33.sent(CreateTopicsRequest)
    r = topics(k33, "--create", "--topic", "flat", "--partitions", "1", "--replication-factor", "1", "--disable-rack-aware")
    assert (r.code, r.out) == (0, "Created topic flat.\n")
    assert r.err == ("kafkatool: note: --disable-rack-aware has no effect over the Admin API: the controller places "
                     "the replicas\n")
    r = topics(k33, "--create", "--topic", "bad", "--partitions", "1", "--replication-factor", "1", "--config", "a==b")
    assert r.code == 2 and r.err.startswith("kafkatool: topics: Invalid topic config")


@pytest.mark.parametrize("release", kwire.MATRIX)
def test_every_release_gets_the_counts_at_its_negotiated_version(release: str) -> None:
    k = start(release)
    try:
        r = topics(k, "--create", "--topic", "n", "--partitions", "2", "--replication-factor", "2", "--format", "json")
        assert r.code == 0, r.err
        req, sent = _sent_topic(k)
        assert sent == ("n", 2, 2, [])
        assert req.api_version == min(CreateTopicsRequest.max_version, kwire.release_api_versions(release)[19][1])
        assert json.loads(r.out)[0]["partitions"] == 2 and len(k.assignment("n")) == 2
        r = topics(k, "--create", "--topic", "d")
        assert r.code == (2 if release == "2.1.1" else 0), r.err
    finally:
        k.stop()


def _sent_growth(k: FakeTopicsKafka):  # type: ignore[no-untyped-def]
    """The last CreatePartitions as the fake decoded it from the wire: validateOnly and per topic (name,
    count, assignments or None when the request left them null)."""
    req = k.sent(CreatePartitionsRequest)[-1]
    return req.validate_only, [(t.name, t.count, None if t.assignments is None else [list(a.broker_ids)
                                                                                  for a in t.assignments])
                               for t in req.topics]


def test_alter_sends_the_count_and_the_controller_places_new_partitions(k33: FakeTopicsKafka) -> None:
    """Kafka's TopicCommand: `NewPartitions.increaseTo(n)`, no assignment; --dry-run asks with validateOnly."""
    r = topics(k33, "--alter", "--topic", "orders", "--partitions", "5", "--dry-run")
    assert (r.code, r.err) == (0, "")
    assert r.out == ("dry run: nothing is changed. Would add 2 partitions to orders (3 -> 5), new replicas placed by "
                     "the controller (the controller validated it: CreatePartitions with validateOnly)\n")
    assert _sent_growth(k33) == (True, [("orders", 5, None)]) and len(k33.assignment("orders")) == 3
    r = topics(k33, "--alter", "--topic", "orders", "--partitions", "5", "--format", "json")
    assert r.code == 0, r.err
    assert json.loads(r.out) == [{"action": "alter", "topic": "orders", "partitions_before": 3, "partitions_after": 5,
                                  "new_partitions": None, "status": "altered"}]
    assert _sent_growth(k33) == (False, [("orders", 5, None)]) and len(k33.assignment("orders")) == 5


def test_alter_replica_assignment_sends_only_the_new_partitions(k33: FakeTopicsKafka) -> None:
    """With --replica-assignment Kafka's tool drops the entries of the partitions that exist already."""
    args = ("--alter", "--topic", "orders", "--partitions", "5", "--replica-assignment", "1:2,2:3,3:4,4:1,1:3")
    r = topics(k33, *args, "--dry-run")
    assert (r.code, r.out) == (0, "dry run: nothing is changed. Would add 2 partitions to orders (3 -> 5): 3:[4,1], "
                                  "4:[1,3] (the controller validated it: CreatePartitions with validateOnly)\n")
    assert _sent_growth(k33) == (True, [("orders", 5, [[4, 1], [1, 3]])])
    r = topics(k33, *args)
    assert (r.code, r.out, r.err) == (0, "", "")
    assert k33.assignment("orders") == {0: [1, 2], 1: [2, 3], 2: [3, 4], 3: [4, 1], 4: [1, 3]}
    # only the new partitions given: nothing is left after dropping 5, so an empty list goes (not null)
    r = topics(k33, "--alter", "--topic", "orders", "--partitions", "7", "--replica-assignment", "1:2,2:3")
    assert _sent_growth(k33) == (False, [("orders", 7, [])])
    assert (r.code, r.out) == (2, "")
    assert r.err == ("kafkatool: topics: Attempted to add 2 additional partition(s), but only 0 assignment(s) "
                     "were specified.\n")


def test_a_regex_grows_every_match_in_one_request_and_prints_the_first_refusal(k33: FakeTopicsKafka) -> None:
    """One CreatePartitions for all matches; the controller grows those it accepts; Kafka's tool prints the
    first refusal in `CreatePartitionsResult.all()`'s order (checked against the JDK in test_topics_jvm)."""
    k33.add_topic("orders2", {0: [1, 2], 1: [2, 3], 2: [3, 4], 3: [4, 1]})
    r = topics(k33, "--alter", "--topic", "orders.*|audit", "--partitions", "3")
    assert _sent_growth(k33) == (False, [("audit", 3, None), ("orders", 3, None), ("orders2", 3, None)])
    assert (r.code, r.out) == (2, "")
    # orders (already 3) and orders2 (4) are refused; all() waits on orders2, orders, audit (HashMap
    # buckets): orders2's refusal is the one Kafka's tool prints
    assert r.err == "kafkatool: topics: The topic orders2 currently has 4 partition(s); 3 would not be an increase.\n"
    assert len(k33.assignment("audit")) == 3  # grown although others were refused
    r = topics(k33, "--alter", "--topic", "orders.*|audit", "--partitions", "4", "--dry-run", "--format", "json")
    rows = {row["topic"]: row for row in json.loads(r.out)}
    assert r.code == 2 and (rows["audit"]["status"], rows["orders"]["status"]) == ("dry-run", "dry-run")
    assert rows["orders2"]["status"] == "refused"
    assert rows["orders2"]["error"] == "Topic already has 4 partition(s)."


def test_alter_if_exists_and_missing_topics(k33: FakeTopicsKafka) -> None:
    r = topics(k33, "--alter", "--topic", "nope.*", "--partitions", "3", "--if-exists")
    assert (r.code, r.out, r.err) == (0, "", "") and not k33.sent(CreatePartitionsRequest)
    r = topics(k33, "--alter", "--topic", "nope", "--partitions", "3")
    assert (r.code, r.err) == (2, "kafkatool: topics: Topic 'nope' does not exist as expected\n")
    r = topics(k33, "--alter", "--topic", "__consumer_offsets", "--partitions", "3")  # kafkatool's guard
    assert r.code == 2 and not k33.sent(CreatePartitionsRequest)
    r = topics(k33, "--alter", "--topic", "audit", "--partitions", "2", "--disable-rack-aware")
    assert (r.code, r.out) == (0, "") and _sent_growth(k33) == (False, [("audit", 2, None)])
    assert r.err == ("kafkatool: note: --disable-rack-aware has no effect over the Admin API: the controller places "
                     "the replicas\n")


def test_alter_without_create_partitions_is_one_line() -> None:
    """A broker without CreatePartitions (before Kafka 1.0): refused before sending, naming the API."""
    k = start("2.1.1")
    try:
        del k.api_versions[CreatePartitionsRequest.API_KEY]
        r = topics(k, "--alter", "--topic", "orders", "--partitions", "4")
        assert (r.code, r.out) == (2, "")
        assert r.err.startswith("kafkatool: topics: add partitions needs CreatePartitions (Kafka >= 1.0); ")
        assert len(r.err.splitlines()) == 1 and not k.sent(CreatePartitionsRequest)
    finally:
        k.stop()


#: What the controller says, by broker kind: ZooKeeper-mode 2.x (`AdminManager`/`ZkAdminManager`) and KRaft
#: (`ReplicationControlManager`, 3.3 on: the fixtures' 3.3.1 and 4.0.0 brokers are KRaft).
ZK_REFUSALS = ("Topic already has 3 partitions.",
               "Topic currently has 3 partitions, which is higher than the requested 2.",
               "Increasing the number of partitions by 1 but 2 assignments provided.",
               "Unknown broker(s) in replica assignment: 9.")
KRAFT_REFUSALS = ("Topic already has 3 partition(s).",
                  "The topic orders currently has 3 partition(s); 2 would not be an increase.",
                  "Attempted to add 1 additional partition(s), but only 2 assignment(s) were specified.",
                  "The manual partition assignment includes broker 9, but no such broker is registered.")


@pytest.mark.parametrize("release", kwire.MATRIX)
def test_every_release_grows_by_count_and_refuses_in_its_own_words(release: str) -> None:
    k = start(release)
    try:
        expected = ZK_REFUSALS if release.startswith("2.") else KRAFT_REFUSALS
        for (partitions, assignment), message in zip(
                (("3", None), ("2", None), ("4", "1:2,2:3,3:4,4:1,1:2"), ("4", "1:2,2:3,3:4,9:1")), expected, strict=True):
            extra = ("--replica-assignment", assignment) if assignment else ()
            r = topics(k, "--alter", "--topic", "orders", "--partitions", partitions, *extra, "--dry-run")
            assert (r.code, r.out, r.err) == (2, "", f"kafkatool: topics: {message}\n")
        r = topics(k, "--alter", "--topic", "orders", "--partitions", "4")
        assert (r.code, r.out, r.err) == (0, "", "")
        req = k.sent(CreatePartitionsRequest)[-1]
        assert req.api_version == min(CreatePartitionsRequest.max_version, kwire.release_api_versions(release)[37][1])
        assert _sent_growth(k) == (False, [("orders", 4, None)]) and len(k.assignment("orders")) == 4
    finally:
        k.stop()


def test_refusals_carry_the_brokers_message_or_the_java_clients_default() -> None:
    """A KRaft controller sends no message for an unknown topic: Kafka's tool shows the exception's default."""
    from types import SimpleNamespace

    from kafkatool.cluster.connect import ClusterError
    from kafkatool.cluster.topics import TopicError
    from kafkatool.cluster.topics_backend import _refusal

    def result(code: int, message: str | None) -> SimpleNamespace:
        return SimpleNamespace(name="orders", error_code=code, error_message=message)

    assert _refusal(result(0, None)) is None
    unknown = _refusal(result(3, None))
    assert isinstance(unknown, TopicError) and str(unknown) == "This server does not host this topic-partition."
    for code in (37, 39, 60, 89):  # INVALID_PARTITIONS, INVALID_REPLICA_ASSIGNMENT, REASSIGNMENT_IN_PROGRESS, quota
        assert isinstance(_refusal(result(code, "no")), TopicError)
    assert isinstance(_refusal(result(41, None)), ClusterError)  # NOT_CONTROLLER after the retry: a failure


@pytest.mark.parametrize("release", ["2.1.1", "2.8", "3.3.1"])
def test_growing_during_a_reassignment(release: str) -> None:
    """ZooKeeper-mode brokers refuse (2.1: any reassignment; 2.8+: one of the topic's); KRaft grows."""
    k = start(release)
    try:
        k._alter_one("audit", 0, [1, 2])
        r = topics(k, "--alter", "--topic", "orders", "--partitions", "4")
        if release == "2.1.1":
            assert (r.code, r.err) == (2, "kafkatool: topics: A partition reassignment is in progress.\n")
        else:
            assert (r.code, r.err) == (0, ""), r.err
        k._alter_one("orders", 0, [2, 3])
        r = topics(k, "--alter", "--topic", "orders", "--partitions", "5")
        if release == "3.3.1":
            assert (r.code, r.err) == (0, "") and len(k.assignment("orders")) == 5
        else:
            said = "." if release == "2.1.1" else " for the topic 'orders'."
            assert (r.code, r.err) == (2, f"kafkatool: topics: A partition reassignment is in progress{said}\n")
    finally:
        k.stop()


@pytest.mark.parametrize("release", ["3.3.1", "3.6", "4.0.0"])
def test_configs_describe_is_sorted_by_name_from_kafka_3_5(release: str) -> None:
    """ConfigCommand's getResourceConfig ends in `sortBy(entry => entry.name())` from 3.5 (3.3 keeps the
    Config's HashMap order): topics and brokers, with and without --all."""
    from kafkatool.cluster.topics_text import config_entries_order

    k = start(release)
    try:
        k.set_config("topics", "audit", {"segment.bytes": "1", "retention.ms": "2", "cleanup.policy": "compact",
                                         "min.insync.replicas": "1"})
        k.set_config("brokers", "2", {"leader.replication.throttled.rate": "1", "follower.replication.throttled.rate": "2",
                                      "log.cleaner.threads": "3"})
        for args in (("--topic", "audit"), ("--topic", "audit", "--all"), ("--broker", "2")):
            r = configs(k, "--describe", *args)
            assert r.code == 0, r.err
            names = [line.split("=", 1)[0].strip() for line in r.out.splitlines()[1:]]
            want = sorted(names) if release != "3.3.1" else config_entries_order(names)
            assert names == want and len(names) >= 3, (args, names)
        assert config_entries_order(["segment.bytes", "retention.ms", "cleanup.policy", "min.insync.replicas"]) != sorted(
            ["segment.bytes", "retention.ms", "cleanup.policy", "min.insync.replicas"])  # the test tells them apart
    finally:
        k.stop()


@pytest.mark.parametrize("release", ["2.1.1", "3.3.1"])
def test_configs_add_config_file_as_kafkas(release: str, tmp_path: Path) -> None:
    """`--add-config-file FILE` (Java properties), alone: Kafka refuses it together with --add-config."""
    k = start(release)
    try:
        f = tmp_path / "c.properties"
        f.write_text("# overrides\nretention.ms=9\nsegment.ms = 100\n")
        r = configs(k, "--alter", "--topic", "audit", "--add-config-file", str(f))
        assert (r.code, r.out) == (0, "Completed updating config for topic audit.\n"), r.err
        assert k.config("topics", "audit") == {"retention.ms": "9", "segment.ms": "100"}
        r = configs(k, "--alter", "--topic", "audit", "--add-config-file", str(f), "--add-config", "a=b")
        assert (r.code, r.err) == (2, "kafkatool: configs: Only one of --add-config or --add-config-file must be "
                                      "specified\n")
        r = configs(k, "--alter", "--topic", "audit", "--add-config-file", str(tmp_path / "none"))
        assert r.code == 2 and "no such file" in r.err
    finally:
        k.stop()


@pytest.mark.parametrize("broker", ["4.0.0", "4.3"])
def test_configs_describe_of_a_missing_entity_follows_the_release(broker: str) -> None:
    """Kafka 4.1's ConfigCommand checks a named topic or broker exists first and prints one line;
    4.0's asks DescribeConfigs and fails on the answer."""
    k = start(broker)
    try:
        r = configs(k, "--describe", "--topic", "nope")
        if broker == "4.3":
            assert (r.code, r.out) == (2, "The topic 'nope' doesn't exist and doesn't have dynamic config.\n")
            assert r.err == "kafkatool: configs: topic 'nope' does not exist\n"
            r = configs(k, "--describe", "--broker", "9")
            assert (r.code, r.out) == (2, "The broker '9' doesn't exist and doesn't have dynamic config.\n")
        else:
            assert (r.code, r.out) == (2, "")
        r = configs(k, "--describe", "--topic", "orders")
        assert r.code == 0 and r.out.startswith("Dynamic configs for topic orders are:\n"), r.err
    finally:
        k.stop()
