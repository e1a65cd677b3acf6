"""`topics`, `configs` and `offsets owners`: Kafka's input rules, usage errors and unreachable clusters."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from kafkatool.cluster.configs import ConfigInputError, parse_add_config
from kafkatool.cluster.model import Broker
from kafkatool.cluster.topics import (
    TopicError,
    TopicExistsError,
    check_new_topic,
    compile_include_list,
    parse_configs,
    parse_replica_assignment,
    plan_add_partitions,
    select_topics,
)


def kt(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kafkatool", *args], capture_output=True, timeout=120,
                          stdin=subprocess.DEVNULL)


def one_line(p: subprocess.CompletedProcess) -> bool:
    lines = p.stderr.decode().splitlines()
    return len(lines) == 1 and lines[0].startswith("kafkatool: ")


def test_replica_assignment_parsing_is_topiccommands() -> None:
    assert parse_replica_assignment("1:2, 2:3 ,3:1") == {0: [1, 2], 1: [2, 3], 2: [3, 1]}
    with pytest.raises(TopicError, match="^Partition replica lists may not contain duplicate entries: 2$"):
        parse_replica_assignment("1:2,2:2")
    with pytest.raises(TopicError, match="^Partition 1 has different replication factor"):
        parse_replica_assignment("1:2,3")
    assert parse_configs(["retention.ms = 5", "cleanup.policy=compact"]) == {"retention.ms": "5", "cleanup.policy": "compact"}
    with pytest.raises(TopicError, match="key=val"):
        parse_configs(["a=b=c"])


def test_add_config_keeps_lists_in_brackets() -> None:
    assert parse_add_config("cleanup.policy=[compact,delete],retention.ms=5, x = y") == {
        "cleanup.policy": "compact,delete", "retention.ms": "5", "x": "y"}
    assert parse_add_config("ssl.endpoint.identification.algorithm=") == {"ssl.endpoint.identification.algorithm": ""}
    with pytest.raises(ConfigInputError):
        parse_add_config("novalue")


def test_topic_selection_is_a_whole_name_regex() -> None:
    names = ["orders", "orders-v2", "audit", "__consumer_offsets"]
    assert select_topics(names, "orders", False) == ["orders"]
    assert select_topics(names, "orders.*,audit", False) == ["audit", "orders", "orders-v2"]
    assert select_topics(names, None, True) == ["audit", "orders", "orders-v2"]
    with pytest.raises(TopicError):
        compile_include_list("(")


def test_collisions_and_existing_names() -> None:
    check_new_topic("a-b", ["a.b"])
    with pytest.raises(TopicError, match=r"^Topic 'a_b' collides with existing topics: a\.b$"):
        check_new_topic("a_b", ["a.b", "c"])
    with pytest.raises(TopicExistsError, match="^Topic 'x' already exists.$"):
        check_new_topic("x", ["x"])


def test_add_partitions_with_a_manual_assignment_checks_it() -> None:
    brokers = [Broker(1), Broker(2), Broker(3)]
    plan = plan_add_partitions("t", {0: [1, 2]}, brokers, 3, {0: [1, 2], 1: [2, 3], 2: [3, 1]})
    assert plan.new_partitions == {1: [2, 3], 2: [3, 1]}
    with pytest.raises(TopicError, match="available brokers: 1, 2, 3"):
        plan_add_partitions("t", {0: [1, 2]}, brokers, 2, {0: [1, 2], 1: [2, 9]})
    with pytest.raises(TopicError, match="^The number of partitions for the offsets topic cannot be changed.$"):
        plan_add_partitions("__consumer_offsets", {0: [1]}, brokers, 2)


@pytest.mark.parametrize("args", [
    ("topics", "--zookeeper", "127.0.0.1:1", "--list", "--describe"),
    ("topics", "--zookeeper", "127.0.0.1:1", "--create", "--partitions", "1", "--replication-factor", "1"),
    ("topics", "--zookeeper", "127.0.0.1:1", "--create", "--topic", "t", "--replica-assignment", "1:x"),
    ("topics", "--zookeeper", "127.0.0.1:1", "--list", "--under-replicated-partitions"),
    ("configs", "--zookeeper", "127.0.0.1:1", "--describe", "--entity-type", "users"),
    ("configs", "--zookeeper", "127.0.0.1:1", "--alter", "--broker", "x", "--add-config", "a=b"),
    ("configs", "--zookeeper", "127.0.0.1:1", "--describe", "--topic", "t", "--broker", "1"),
    ("offsets", "owners", "--zookeeper", "127.0.0.1:1"),
], ids=lambda a: " ".join(a[:4]))
def test_usage_errors_are_one_line_and_exit_2(args: tuple[str, ...]) -> None:
    p = kt(*args)
    assert p.returncode == 2 and one_line(p), p.stderr


@pytest.mark.parametrize("args", [
    ("topics", "--bootstrap-server", "127.0.0.1:1", "--list"),
    ("topics", "--zookeeper", "127.0.0.1:1", "--describe"),
    ("configs", "--bootstrap-server", "127.0.0.1:1", "--describe", "--topic", "t"),
    ("configs", "--zookeeper", "127.0.0.1:1", "--describe", "--entity-type", "brokers"),
    ("offsets", "owners", "--zookeeper", "127.0.0.1:1", "--group", "g"),
], ids=lambda a: " ".join(a[:3]))
def test_an_unreachable_cluster_is_exit_3_within_the_timeout(args: tuple[str, ...]) -> None:
    start = time.monotonic()
    p = kt(*args, "--timeout", "2")
    assert p.returncode == 3 and one_line(p), p.stderr
    assert time.monotonic() - start < 30
