"""`reassign --strategy minimal`'s goals at once, its operations, and its score beside the current state.

Oracles: counts made here from the assignments themselves (replicas per broker, per topic, racks),
the lower bound of moves, and Kafka's own `--generate` (modelled in cluster/assignment.py, checked
against Kafka's output elsewhere) as the plan to be at least as good as on every axis.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from pathlib import Path

import pytest

from kafkatool.cluster.assignment import BrokerMetadata, assign_replicas_to_brokers, generate_kafka
from kafkatool.cluster.minimal import Goals, lower_bound_moves, plan_minimal
from kafkatool.cluster.model import TopicPartition
from kafkatool.cluster.plan_score import score, stage
from kafkatool.jvm.random import JavaRandom
from tests.support.cli import run_kafkatool
from tests.support.fake_admin import FakeKafka


def spread(counts: Counter, ids: list[int]) -> int:
    return max(counts.get(b, 0) for b in ids) - min(counts.get(b, 0) for b in ids)


def four_plus_an_empty_fifth() -> tuple[dict, dict, list[BrokerMetadata]]:
    """12 topics, 86 partitions at RF 2 on brokers 1-4 (each topic placed as Kafka places it), sizes
    uneven; broker 5 joins empty."""
    rng = JavaRandom(7)
    old = [BrokerMetadata(b) for b in (1, 2, 3, 4)]
    current: dict[TopicPartition, list[int]] = {}
    parts = [10, 9, 8, 8, 7, 7, 7, 7, 6, 6, 6, 5]
    for t, n in enumerate(parts):
        for p, reps in assign_replicas_to_brokers(old, n, 2, rng=rng).items():
            current[TopicPartition(f"topic{t:02d}", p)] = reps
    r = random.Random(3)
    sizes = {tp: r.randrange(1_000, 20_000) for tp in current}
    return current, sizes, [BrokerMetadata(b) for b in (1, 2, 3, 4, 5)]


def test_every_axis_at_once_and_no_worse_than_kafkas_generate() -> None:
    current, sizes, brokers = four_plus_an_empty_fifth()
    assert len(current) == 86
    ids = [b.id for b in brokers]
    plan = plan_minimal(current, brokers, sizes)
    s = score(current, plan, brokers, sizes)
    assert s.replica_moves == lower_bound_moves(current, ids) == 34
    assert s.replicas_per_broker == (34, 35) and s.leaders_per_broker[1] - s.leaders_per_broker[0] <= 1
    assert s.topics_replicas_uneven == 0 and s.worst_topic_replica_spread <= 1
    assert s.topics_leaders_uneven == 0
    for t in {tp.topic for tp in current}:  # the score's own count, counted again
        assert spread(Counter(b for tp, r in plan.items() if tp.topic == t for b in r), ids) <= 1
    kafka = generate_kafka(sorted({tp.topic for tp in current}), current, brokers, JavaRandom(42))
    k = score(current, kafka, brokers, sizes)
    assert s.replica_moves <= k.replica_moves and s.bytes_to_move is not None and k.bytes_to_move is not None
    assert s.bytes_to_move <= k.bytes_to_move
    for axis in ("replicas_per_broker", "leaders_per_broker"):
        assert getattr(s, axis)[1] - getattr(s, axis)[0] <= getattr(k, axis)[1] - getattr(k, axis)[0]
    assert s.worst_topic_replica_spread <= k.worst_topic_replica_spread
    # moves first: brokers balanced with the fewest moves, topics as they fall
    lean = score(current, plan_minimal(current, brokers, sizes, Goals(topic_balance=False)), brokers, sizes)
    assert lean.replica_moves == 34 and lean.replicas_per_broker == (34, 35)


def test_score_counts_by_hand() -> None:
    cur = {TopicPartition("a", 0): [1, 2], TopicPartition("a", 1): [1, 2], TopicPartition("b", 0): [1, 3]}
    plan = {TopicPartition("a", 1): [3, 2]}
    brokers = [BrokerMetadata(1, "x"), BrokerMetadata(2, "x"), BrokerMetadata(3, "y")]
    s = score(cur, plan, brokers, {TopicPartition("a", 1): 100})
    # after: a-0 [1,2], a-1 [3,2], b-0 [1,3]: replicas 1:2 2:2 3:2; leaders 1:2 3:1 2:0
    assert (s.replica_moves, s.bytes_to_move, s.leadership_changes) == (1, 100, 1)
    assert s.replicas_per_broker == (2, 2) and s.leaders_per_broker == (0, 2)
    assert (s.topics_replicas_uneven, s.worst_topic_replica_spread) == (0, 1)  # a: 1,2,1
    assert (s.topics_leaders_uneven, s.worst_topic_leader_spread) == (0, 1)
    assert s.partitions_short_of_racks == 1  # a-0 on 1 and 2, both rack x, while y exists
    now = score(cur, cur, brokers)
    assert (now.replica_moves, now.bytes_to_move, now.replicas_per_broker) == (0, None, (1, 3))


def test_remove_brokers_drains_them_and_stays_balanced() -> None:
    current, sizes, _ = four_plus_an_empty_fifth()
    left = [BrokerMetadata(b) for b in (1, 2, 3)]
    plan = plan_minimal(current, left, sizes)
    on_4 = sum(r.count(4) for r in current.values())
    s = score(current, plan, left, sizes)
    assert all(4 not in r for r in plan.values()) and s.replica_moves >= on_4 == lower_bound_moves(
        current, [1, 2, 3]
    )
    assert s.replicas_per_broker[1] - s.replicas_per_broker[0] <= 1 and s.topics_replicas_uneven == 0
    lean = score(current, plan_minimal(current, left, sizes, Goals(topic_balance=False)), left, sizes)
    assert on_4 <= lean.replica_moves <= s.replica_moves  # moves first


def test_replace_moves_one_broker_s_replicas_to_its_replacement_only() -> None:
    current, sizes, _ = four_plus_an_empty_fifth()
    brokers = [BrokerMetadata(b) for b in (1, 2, 3, 5)]
    plan = plan_minimal(current, brokers, sizes, Goals(replace={4: 5}))
    for tp, reps in current.items():
        assert plan[tp] == [5 if b == 4 else b for b in reps]  # same position: a led partition stays led


def test_replication_factor_up_and_down_with_racks() -> None:
    brokers = [BrokerMetadata(b, f"r{b % 3}") for b in range(1, 7)]
    current = {TopicPartition("up", p): [1 + p % 6, 1 + (p + 1) % 6] for p in range(12)}
    current |= {TopicPartition("down", p): [1 + p % 6, 1 + (p + 1) % 6, 1 + (p + 2) % 6] for p in range(6)}
    plan = plan_minimal(current, brokers, None, Goals(replication_factor=3, rf_topics=frozenset({"up"})))
    rack = {b.id: b.rack for b in brokers}
    for tp, reps in plan.items():
        assert len(reps) == 3 and len(set(reps)) == 3 and len({rack[b] for b in reps}) == 3
        if tp.topic == "up":
            assert reps[:2] == current[tp]  # existing replicas stay where they are
    down = plan_minimal(current, brokers, None, Goals(replication_factor=2, rf_topics=frozenset({"down"})))
    for tp in current:
        if tp.topic == "down":
            assert len(down[tp]) == 2 and set(down[tp]) <= set(current[tp]) and down[tp][0] in current[tp]
    s = score(current, plan, brokers)
    assert s.replica_moves == 12 and s.replicas_per_broker[1] - s.replicas_per_broker[0] <= 1


@pytest.mark.parametrize("limit", [5, 11])
def test_stages_of_at_most_n_moves_reach_the_whole_plan(limit: int) -> None:
    current, sizes, brokers = four_plus_an_empty_fifth()
    whole = score(current, plan_minimal(current, brokers, sizes), brokers, sizes)
    state = dict(current)
    total = 0
    for _ in range(40):
        order: list[TopicPartition] = []
        plan = plan_minimal(state, brokers, sizes, order=order)
        step = stage(state, plan, order, sizes, max_moves=limit)
        moved = score(state, step, brokers, sizes).replica_moves
        assert moved <= limit
        if step == state:
            break
        total += moved
        state = step
    final = score(current, state, brokers, sizes)
    assert final.replicas_per_broker == whole.replicas_per_broker and final.topics_replicas_uneven == 0
    assert total >= whole.replica_moves
    byte_step = stage(current, plan_minimal(current, brokers, sizes), None, sizes, max_bytes=30_000)
    assert 0 < (score(current, byte_step, brokers, sizes).bytes_to_move or 0) <= 30_000


# -- the command ----------------------------------------------------------------------------------


@pytest.fixture
def kafka():  # type: ignore[no-untyped-def]
    with FakeKafka({1: "r1", 2: "r2", 3: "r1", 4: "r2", 5: "r1", 6: "r2"}, controller=1) as k:
        k.add_topic("orders", {p: [1 + p % 4, 1 + (p + 1) % 4] for p in range(8)}, size=1000)
        k.add_topic("audit", {0: [1, 2], 1: [2, 1]}, size=10)
        yield k


def cmd(k: FakeKafka, tmp_path: Path, *args: str):  # type: ignore[no-untyped-def]
    (tmp_path / "t.json").write_text('{"topics":[{"topic":"orders"},{"topic":"audit"}],"version":1}')
    return run_kafkatool(
        "--kafka-release",
        "4.0",
        "reassign",
        "--bootstrap-server",
        k.bootstrap,
        "--timeout",
        "5",
        *args,
        cwd=tmp_path,
    )


def generate(k: FakeKafka, tmp_path: Path, *args: str) -> dict:
    r = cmd(
        k,
        tmp_path,
        "--generate",
        "--topics-to-move-json-file",
        "t.json",
        "--strategy",
        "minimal",
        "--format",
        "json",
        "--plan-file",
        "p.json",
        *args,
    )
    assert r.code == 0, r.err
    return json.loads(r.out)


def proposed(doc: dict) -> dict[tuple[str, int], list[int]]:
    return {(p["topic"], p["partition"]): p["replicas"] for p in doc["proposed"]["partitions"]}


def test_command_remove_brokers_plan_executes(kafka: FakeKafka, tmp_path: Path) -> None:
    doc = generate(kafka, tmp_path, "--remove-brokers", "4,5,6", "--disable-rack-aware")
    assert all(4 not in r for r in proposed(doc).values())
    assert doc["score"]["current"]["replica_moves"] == 0 and doc["score"]["minimal"]["replica_moves"] >= 4
    assert doc["score"]["minimal"]["replicas_per_broker"] == [6, 7]
    assert doc["score"]["minimal"]["topics_replicas_uneven"] == 0 and doc["score"]["current"]["topics"] == 2
    r = cmd(kafka, tmp_path, "--execute", "--reassignment-json-file", "p.json", "--no-plan-file")
    assert r.code == 0, r.err


def test_command_replace(kafka: FakeKafka, tmp_path: Path) -> None:
    doc = generate(kafka, tmp_path, "--replace", "4=6")
    assert proposed(doc) == {
        ("orders", p): [6 if b == 4 else b for b in (1 + p % 4, 1 + (p + 1) % 4)]
        for p in range(8)
        if 4 in (1 + p % 4, 1 + (p + 1) % 4)
    }
    r = cmd(kafka, tmp_path, "--execute", "--reassignment-json-file", "p.json", "--no-plan-file")
    assert r.code == 0, r.err


def test_command_replication_factor_and_stages(kafka: FakeKafka, tmp_path: Path) -> None:
    doc = generate(kafka, tmp_path, "--replication-factor", "3", "--broker-list", "1,2,3,4")
    assert all(len(r) == 3 for r in proposed(doc).values()) and len(proposed(doc)) == 10
    staged = generate(kafka, tmp_path, "--broker-list", "1,2,3,4,5,6", "--max-moves", "3")
    assert staged["score"]["minimal"]["replica_moves"] <= 3 and staged["summary"]["replica_moves"] <= 3
    r = cmd(kafka, tmp_path, "--execute", "--reassignment-json-file", "p.json", "--no-plan-file")
    assert r.code == 0, r.err
    by_bytes = generate(kafka, tmp_path, "--broker-list", "1,2,3,4,5,6", "--max-bytes", "2500")
    assert by_bytes["score"]["minimal"]["bytes_to_move"] <= 2500


def test_command_prints_the_score_beside_the_current_state(kafka: FakeKafka, tmp_path: Path) -> None:
    r = cmd(
        kafka,
        tmp_path,
        "--generate",
        "--topics-to-move-json-file",
        "t.json",
        "--strategy",
        "minimal",
        "--broker-list",
        "1,2,3,4,5,6",
        "--no-plan-file",
    )
    assert r.code == 0, r.err
    text = r.out[r.out.index("Plan score:") :].splitlines()
    assert text[1].split() == ["goal", "current", "minimal"]
    row = {line.split("  ")[1].strip(): line.split()[-2:] for line in text[2:]}
    assert row["replicas per broker"] == ["0..6", "3..4"]


def test_command_refusals(kafka: FakeKafka, tmp_path: Path) -> None:
    for args, needle in (
        (["--replace", "4"], "is not OLD=NEW"),
        (["--replace", "4=6", "--strategy", "kafka"], "--replace needs --strategy minimal"),
    ):
        r = cmd(
            kafka,
            tmp_path,
            "--generate",
            "--topics-to-move-json-file",
            "t.json",
            "--no-plan-file",
            *(["--strategy", "minimal"] if "--strategy" not in args else []),
            *args,
        )
        assert r.code == 2 and needle in r.err and r.err.count("\n") == 1, r.err
