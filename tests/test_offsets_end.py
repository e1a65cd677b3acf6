"""`offsets end` (GetOffsetShell / kafka-get-offsets): `--topic-partitions` rules and each release's order,
over the fakes of every release (ListOffsets at the negotiated version)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kafkatool.cli.offsets  # noqa: F401  (registers the command)
import kafkatool.cli.offsets_end  # noqa: F401
from kafkatool.ops.topic_partitions import TopicPartitionsError, allowed, parse_topic_partitions
from tests.support.cli import run_kafkatool
from tests.support.fake_groups import FakeKafkaCluster
from tests.support.kwire import MATRIX


@pytest.fixture(scope="module", params=MATRIX)
def cluster(request: pytest.FixtureRequest):  # type: ignore[no-untyped-def]
    with FakeKafkaCluster(brokers=3, version=request.param) as c:
        c.add_topic("orders", 3, log_end=[10, 11, 12])
        c.add_topic("big", 12, log_end=list(range(100, 112)))
        yield c


def end(c: FakeKafkaCluster, *args: str, release: str | None = None):  # type: ignore[no-untyped-def]
    pre = ("--kafka-release", release) if release else ()
    return run_kafkatool(*pre, "offsets", "end", "--bootstrap-server", c.bootstrap, "--timeout", "10", *args)


def test_topic_partitions_rules_as_get_offset_shell(cluster: FakeKafkaCluster) -> None:
    # N-M is M exclusive (GetOffsetShell's PartitionRangeFilter)
    r = end(cluster, "--topic-partitions", "orders:1,big:3-5", release="3.3")
    assert (r.code, r.out, r.err) == (0, "big:3:103\nbig:4:104\norders:1:11\n", "")
    r = end(cluster, "--topic-partitions", "big:10-,ord.*:-1", release="3.3")
    assert r.out == "big:10:110\nbig:11:111\norders:0:10\n"
    r = end(cluster, "--topic-partitions", ":2", release="3.3")  # any topic, partition 2
    assert r.out == "big:2:102\norders:2:12\n"
    r = end(cluster, "--topic-partitions", "orders", "--topic", "orders")
    assert (r.code, r.err) == (2, "kafkatool: --topic-partitions cannot be used with --topic or --partitions\n")
    r = end(cluster, "--topic-partitions", "orders:x")
    assert (r.code, r.err) == (2, "kafkatool: Invalid rule specification: orders:x\n")
    r = end(cluster, "--topic-partitions", "nothing:0")
    assert (r.code, r.err) == (2, "kafkatool: Could not match any topic-partitions with the specified filters\n")


def test_each_release_s_order(cluster: FakeKafkaCluster) -> None:
    # 3.x (Scala): topic, then partition number; 4.0 (Java): TreeMap on TopicPartition.toString()
    r = end(cluster, "--topic", "big", release="3.3")
    assert [line.split(":")[1] for line in r.out.splitlines()] == [str(p) for p in range(12)]
    r = end(cluster, "--topic", "big", release="4.0")
    assert [line.split(":")[1] for line in r.out.splitlines()] == ["0", "1", "10", "11", "2", "3", "4", "5", "6",
                                                                  "7", "8", "9"]


def test_rules_match_kafkas_grammar() -> None:
    rules = parse_topic_partitions("orders:1,big:3-5,logs:5-,x:-3,all")
    assert [(r.low, r.high) for r in rules] == [(1, 2), (3, 5), (5, 2**31 - 1), (0, 3), (0, 2**31 - 1)]
    assert allowed(rules, "big", 4) and not allowed(rules, "big", 5) and allowed(rules, "all", 99)
    assert not allowed(rules, "bigger", 4)  # the topic regex matches the whole name (IncludeList)
    assert parse_topic_partitions("a,") == parse_topic_partitions("a")  # Java's split drops trailing empties
    assert parse_topic_partitions(",") == []
    for bad in ("a:1:2", "a:b", "a:1-2-3", "a:99999999999"):
        with pytest.raises(TopicPartitionsError):
            parse_topic_partitions(bad)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("ab.*:-,0123456789[(\\ ")), max_size=20))
def test_any_rules_text_parses_or_is_refused_with_a_message(text: str) -> None:
    try:
        rules = parse_topic_partitions(text)
    except TopicPartitionsError as exc:
        assert str(exc).startswith("Invalid rule specification: ")
    else:
        for r in rules:
            r.allows("ab", 1)
