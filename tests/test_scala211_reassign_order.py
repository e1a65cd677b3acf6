"""Kafka 2.1's `--generate` orders (Scala 2.11/2.12 `mutable.HashMap` and immutable Maps) against the real
scala-library 2.11: the collection model (kafkatool.jvm.scala211_collections) with many generated keys, and
the whole printed text (kafkatool.cluster.reassign_21 with kafkatool.cluster.assignment's draws) against
Kafka 2.1's generateAssignment run on the real collections (tests/support/scala211.py)."""

from __future__ import annotations

import random

import pytest

from kafkatool.cluster.assignment import BrokerMetadata, generate_kafka
from kafkatool.cluster.model import TopicPartition
from kafkatool.cluster.reassign_21 import generate_order_21, generate_text_21
from kafkatool.jvm import scala211_collections as s211
from kafkatool.jvm.random import JavaRandom
from kafkatool.release import Release
from tests.support.scala211 import Probe, gen_case, gen_text, scala211_probe


@pytest.fixture(scope="module")
def probe(tmp_path_factory: pytest.TempPathFactory) -> Probe:
    return scala211_probe(tmp_path_factory.mktemp("scala211gen"))


def _name(rng: random.Random) -> str:
    return "".join(rng.choice("abcdefghijklmnopqrstuvwxyz._-0123456789") for _ in range(rng.randint(1, 14)))


def test_byteswap32_known_values() -> None:
    # scala.util.hashing.byteswap32(0) == 0; the constant is odd, so distinct inputs stay distinct
    assert s211.byteswap32(0) == 0
    assert len({s211.byteswap32(v) for v in range(5000)}) == 5000


def test_mutable_hash_map_orders(probe: Probe) -> None:
    rng = random.Random(2111)
    sizes = [1, 2, 3, 4, 5, 11, 12, 13, 24, 25, 48, 49, 100, 97, 300, 1000]
    ints = [list(range(n)) for n in sizes] + [
        list(dict.fromkeys(rng.randrange(-(2**31), 2**31) for _ in range(n))) for n in sizes
    ]
    strings = [list(dict.fromkeys(_name(rng) for _ in range(n))) for n in sizes]
    tps = [
        list(dict.fromkeys(TopicPartition(rng.choice(names), rng.randrange(200)) for _ in range(n)))
        for n in sizes
        for names in ([_name(rng) for _ in range(rng.randint(1, 6))],)
    ]
    cases = (
        [f"ints\t{' '.join(map(str, c))}" for c in ints]
        + [f"strings\t{' '.join(c)}" for c in strings]
        + [f"tps\t{' '.join(f'{tp.topic}/{tp.partition}' for tp in c)}" for c in tps]
    )
    got = iter(probe(cases))
    for c in ints:
        assert next(got) == " ".join(map(str, s211.int_mutable_map_order(c))), c
    for s in strings:
        assert next(got) == " ".join(s211.string_mutable_map_order(s)), s
    for t in tps:
        assert next(got) == " ".join(
            f"{tp.topic}/{tp.partition}" for tp in s211.topic_partition_mutable_map_order(t)
        ), t


def _cluster(
    rng: random.Random, n_topics: int, max_partitions: int, brokers: list[int]
) -> dict[str, dict[int, list[int]]]:
    topics: dict[str, dict[int, list[int]]] = {}
    while len(topics) < n_topics:
        rf = rng.randint(1, min(3, len(brokers)))
        mixed = rng.random() < 0.3  # replication factors differing within a topic: its group's head decides
        topics[_name(rng)] = {
            p: rng.sample(brokers, rng.randint(1, min(3, len(brokers))) if mixed else rf)
            for p in range(rng.randint(1, max_partitions))
        }
    return topics


def _ours(seed: int, start: int, brokers: list[int], topics: dict[str, dict[int, list[int]]]) -> str:
    current = {TopicPartition(t, p): r for t, parts in topics.items() for p, r in parts.items()}
    metas = [BrokerMetadata(b) for b in sorted(brokers)]
    proposed = generate_kafka(
        list(topics), current, metas, JavaRandom(seed), start, text=Release(2, 1), zookeeper=True
    )
    return generate_text_21(list(topics), current, proposed)


def test_generate_text_as_kafka_21_prints_it(probe: Probe) -> None:
    """Topic sets small and large (Map1..Map4 and the hash trie, one table resize or several), random and
    fixed starts: the same text, byte for byte, so the draws follow Kafka 2.1's topic order too."""
    rng = random.Random(21)
    cases = []
    for n_topics, max_parts in [
        (1, 1),
        (1, 3),
        (1, 4),
        (2, 2),
        (1, 5),
        (1, 30),
        (2, 3),
        (3, 8),
        (4, 1),
        (4, 6),
        (5, 1),
        (5, 4),
        (6, 20),
        (9, 3),
        (13, 12),
        (30, 2),
        (40, 10),
    ]:
        for _ in range(3):
            brokers = sorted(rng.sample(range(12), rng.randint(3, 7)))
            seed = rng.randrange(-(2**63), 2**63)
            start = rng.choice([-1, -1, -1, 0, 1])
            cases.append((seed, start, brokers, _cluster(rng, n_topics, max_parts, brokers)))
    got = probe([gen_case(*c) for c in cases])
    for c, answer in zip(cases, got, strict=True):
        assert _ours(*c) == gen_text(answer), c


def test_draw_order_is_not_the_scala_213_order() -> None:
    """Kafka 2.1's topics are drawn in the 2.11/2.12 order (up to 4 topics: its `mutable.HashMap`'s),
    which differs from 2.13's for these names; over the Admin API the 2.13 order stays."""
    from kafkatool.cluster.assignment import kafka_topic_order

    names = ["orders", "payments", "big"]
    current = {TopicPartition(t, p): [0] for t in names for p in range(3)}
    ours = [t for t, _ in kafka_topic_order(names, current, Release(2, 1), zookeeper=True)]
    assert ours == [t for t, _ in generate_order_21(names, current).topics] == ["orders", "big", "payments"]
    assert [t for t, _ in kafka_topic_order(names, current, Release(3, 3))] == ["payments", "big", "orders"]
    assert [t for t, _ in kafka_topic_order(names, current, Release(2, 1))] == ["payments", "big", "orders"]
