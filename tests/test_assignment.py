"""Kafka's replica assignment, java.util.Random, Java hash order, the minimal planner and move summaries.

Java behaviour is checked against the JDK on this machine when `javac` exists (only JDK classes:
`java.util.Random`, `HashMap`, `HashSet`), and against values recorded from it otherwise.
"""

from __future__ import annotations

import shutil
import subprocess
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafkatool.cluster.assignment import (
    AssignmentError,
    BrokerMetadata,
    assign_replicas_to_brokers,
    broker_metadata,
    generate_kafka,
    kafka_topic_order,
    rack_alternated_brokers,
)
from kafkatool.cluster.minimal import Goals, lower_bound_moves, plan_minimal
from kafkatool.cluster.model import TopicPartition
from kafkatool.cluster.reassign import format_reassignment_json, generate_text, summarize
from kafkatool.jvm import java_collections
from kafkatool.jvm.hashing import string_hash, topic_partition_hash
from kafkatool.jvm.random import JavaRandom

# Recorded from OpenJDK 17: new Random(seed), nextInt(bound) over BOUNDS cyclically, then nextInt(), nextLong().
BOUNDS = [1, 2, 3, 5, 7, 10, 16, 100, 1000, 1 << 30, 1073741825, 2147483647]
RECORDED = {
    0: ("0 1 1 2 4 3 8 61 719 839166427 715581077 542832677 0 1 2 4 3 5 15 20 143 336012444 276804524 790221947",
        629649304, -5438565800896958689),
    42: ("0 0 0 4 5 5 4 18 519 98059046 969067502 791955276 0 0 2 1 5 3 15 0 863 468678613 944462913 1610411243",
         -297936814, 7130900098642117381),
    -1: ("0 0 0 4 6 8 6 78 765 60706365 665220512 121954317 0 0 0 4 2 6 11 17 257 998843631 975495143 1335117720",
         1440933800, 4291381384867427929),
}


@pytest.mark.parametrize("seed", sorted(RECORDED))
def test_java_random_matches_recorded_jdk_values(seed: int) -> None:
    r = JavaRandom(seed)
    ints = " ".join(str(r.next_int(BOUNDS[i % len(BOUNDS)])) for i in range(24))
    assert (ints, r.next_int(), r.next_long()) == RECORDED[seed]


def test_java_random_rejects_bad_bound() -> None:
    with pytest.raises(ValueError):
        JavaRandom(1).next_int(0)


def test_string_hash_and_hash_order_recorded() -> None:
    assert string_hash("") == 0
    assert string_hash("foo") == 101574
    assert string_hash("polygenelubricants") == -2147483648
    topics = ["foo", "bar", "baz", "orders", "payments", "__consumer_offsets", "t0", "t1", "t2", "t3", "t4", "t5",
              "t6", "t7", "t8", "t9", "alpha", "beta"]
    expected = "t4,t5,t6,t7,t8,t9,foo,payments,bar,alpha,baz,orders,t0,t1,__consumer_offsets,t2,beta,t3"
    assert ",".join(java_collections.string_set_order(topics)) == expected
    assert java_collections.int_set_order([100, 1, 17, 33, 2, 16, 1001, 5], java_collections.capacity_for_copy(8)) == [
        16, 1, 17, 33, 2, 100, 5, 1001]


JAVA_PROBE = """
import java.util.*;
public class Probe {
  static final class TP { final String t; final int p; TP(String t, int p) { this.t = t; this.p = p; }
    public int hashCode() { int r = 31 + p; return 31 * r + t.hashCode(); }
    public boolean equals(Object o) { return o instanceof TP && ((TP) o).t.equals(t) && ((TP) o).p == p; }
    public String toString() { return t + "-" + p; } }
  public static void main(String[] a) {
    for (long s : new long[]{7L, 123456789012345L, -987654321L}) {
      Random r = new Random(s); StringBuilder b = new StringBuilder();
      for (int i = 1; i < 40; i++) b.append(r.nextInt(i * 7 + 1)).append(' ');
      System.out.println(b.toString().trim());
    }
    List<String> names = new ArrayList<>();
    for (int i = 0; i < 40; i++) names.add("topic-" + (i * 7919 % 1000) + (i % 3 == 0 ? "x" : ""));
    Map<String, Integer> m = new HashMap<>(); for (String n : names) m.put(n, 1);
    System.out.println(String.join(",", m.keySet()));
    Map<TP, Integer> tps = new HashMap<>();
    for (String n : names.subList(0, 12)) for (int p = 0; p < 9; p++) tps.put(new TP(n, p), 1);
    StringBuilder b = new StringBuilder(); for (TP tp : tps.keySet()) b.append(tp).append(',');
    System.out.println(b);
    Set<Integer> ids = new HashSet<>(); for (int i : new int[]{1001, 3, 77, 19, 1024, 5, 64, 2}) ids.add(i);
    System.out.println(ids);
  }
}
"""


@pytest.mark.skipif(shutil.which("javac") is None or shutil.which("java") is None, reason="no JDK on this machine")
def test_java_behaviour_against_the_jdk(tmp_path: Path) -> None:
    (tmp_path / "Probe.java").write_text(JAVA_PROBE)
    subprocess.run(["javac", "Probe.java"], cwd=tmp_path, check=True, capture_output=True, timeout=120)
    lines = subprocess.run(["java", "-cp", ".", "Probe"], cwd=tmp_path, check=True, capture_output=True,
                           text=True, timeout=60).stdout.splitlines()
    for line, seed in zip(lines[:3], (7, 123456789012345, -987654321), strict=True):
        r = JavaRandom(seed)
        assert line == " ".join(str(r.next_int(i * 7 + 1)) for i in range(1, 40))
    names = [f"topic-{i * 7919 % 1000}" + ("x" if i % 3 == 0 else "") for i in range(40)]
    assert lines[3] == ",".join(java_collections.string_set_order(names))
    tps = [(n, p) for n in names[:12] for p in range(9)]
    order = java_collections.hash_order(tps, lambda tp: topic_partition_hash(*tp))
    assert lines[4] == "".join(f"{t}-{p}," for t, p in order)
    assert lines[5] == "[" + ", ".join(map(str, java_collections.int_set_order([1001, 3, 77, 19, 1024, 5, 64, 2]))) + "]"


# -- Kafka's assignment ---------------------------------------------------------------------------


def test_reference_table_five_brokers_ten_partitions() -> None:
    got = assign_replicas_to_brokers([BrokerMetadata(i) for i in range(5)], 10, 3, fixed_start_index=0)
    assert got == {0: [0, 1, 2], 1: [1, 2, 3], 2: [2, 3, 4], 3: [3, 4, 0], 4: [4, 0, 1], 5: [0, 2, 3],
                   6: [1, 3, 4], 7: [2, 4, 0], 8: [3, 0, 1], 9: [4, 1, 2]}


def test_rack_aware_example_from_kafka_docs() -> None:
    racks = {0: "rack1", 1: "rack3", 2: "rack3", 3: "rack2", 4: "rack2", 5: "rack1"}
    assert rack_alternated_brokers(racks) == [0, 3, 1, 5, 4, 2]
    got = assign_replicas_to_brokers([BrokerMetadata(b, r) for b, r in racks.items()], 7, 3, fixed_start_index=0)
    assert got == {0: [0, 3, 1], 1: [3, 1, 5], 2: [1, 5, 4], 3: [5, 4, 2], 4: [4, 2, 0], 5: [2, 0, 3], 6: [0, 4, 2]}


def test_kafka_errors() -> None:
    with pytest.raises(AssignmentError, match=r"^Replication factor: 4 larger than available brokers: 3\.$"):
        assign_replicas_to_brokers([BrokerMetadata(i) for i in range(3)], 5, 4)
    with pytest.raises(AssignmentError, match="Not all brokers have rack information for replica rack aware"):
        assign_replicas_to_brokers([BrokerMetadata(0, "a"), BrokerMetadata(1)], 2, 1)
    with pytest.raises(AssignmentError, match="Add --disable-rack-aware"):
        broker_metadata([(1, "a"), (2, None)], [1, 2], rack_aware=True)
    assert broker_metadata([(2, "a"), (1, None), (9, "b")], [1, 2, 7], rack_aware=False) == [
        BrokerMetadata(1), BrokerMetadata(2)]
    # Kafka's tool walks describeCluster's nodes, a Java HashMap by id: 17 shares 1's bucket, 16 is in bucket 0
    assert [m.id for m in broker_metadata([(b, None) for b in (1, 2, 5, 16, 17)], [1, 2, 5, 16, 17], False,
                                          admin_api=True)] == [16, 1, 17, 2, 5]
    assert [m.id for m in broker_metadata([(b, None) for b in (1, 2, 5, 16, 17)], [5, 17], False)] == [5, 17]


def test_random_draws_follow_javas_random() -> None:
    brokers = [BrokerMetadata(i) for i in range(7)]
    rng = JavaRandom(99)
    probe = JavaRandom(99)
    start, shift = probe.next_int(7), probe.next_int(7)
    got = assign_replicas_to_brokers(brokers, 20, 3, rng=rng)
    assert got == assign_replicas_to_brokers(brokers, 20, 3, fixed_start_index=start, replica_shift=shift)
    assert got[0][0] == start


def test_generate_kafka_draws_in_javas_topic_order() -> None:
    topics = ["zeta", "alpha", "orders", "m"]
    current = {TopicPartition(t, p): [1, 2] for t in topics for p in range(3 + len(t) % 3)}
    brokers = [BrokerMetadata(i) for i in (1, 2, 3, 4)]
    order = [t for t, _ in kafka_topic_order(topics, current)]
    assert sorted(order) == sorted(topics)
    rng = JavaRandom(2024)
    expected = {}
    for t in order:
        n = sum(1 for tp in current if tp.topic == t)
        for p, reps in assign_replicas_to_brokers(brokers, n, 2, rng=rng).items():
            expected[TopicPartition(t, p)] = reps
    assert generate_kafka(topics, current, brokers, JavaRandom(2024)) == dict(sorted(expected.items()))
    assert generate_kafka(topics, current, brokers, JavaRandom(2024)) == generate_kafka(
        list(reversed(topics)), current, brokers, JavaRandom(2024))


def test_generate_text_is_kafkas() -> None:
    cur = {TopicPartition("foo", 0): [1, 2]}
    new = {TopicPartition("foo", 0): [2, 3]}
    assert generate_text(cur, new) == (
        "Current partition replica assignment\n"
        '{"version":1,"partitions":[{"topic":"foo","partition":0,"replicas":[1,2],"log_dirs":["any","any"]}]}\n\n'
        "Proposed partition reassignment configuration\n"
        '{"version":1,"partitions":[{"topic":"foo","partition":0,"replicas":[2,3],"log_dirs":["any","any"]}]}\n'
    )
    assert format_reassignment_json({TopicPartition("b", 10): [1], TopicPartition("b", 9): [2], TopicPartition("a", 1): [3]}) == (
        '{"version":1,"partitions":[{"topic":"a","partition":1,"replicas":[3],"log_dirs":["any"]},'
        '{"topic":"b","partition":9,"replicas":[2],"log_dirs":["any"]},'
        '{"topic":"b","partition":10,"replicas":[1],"log_dirs":["any"]}]}'
    )


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 12), parts=st.integers(1, 60), rf=st.integers(1, 4), start=st.integers(0, 20),
       racks=st.integers(0, 4), seed=st.integers(-(2**63), 2**63 - 1))
def test_assignment_properties(n: int, parts: int, rf: int, start: int, racks: int, seed: int) -> None:
    rf = min(rf, n)
    brokers = [BrokerMetadata(i * 3 + 1, f"r{i % racks}" if racks else None) for i in range(n)]
    for fixed in (start, -1):
        got = assign_replicas_to_brokers(brokers, parts, rf, fixed_start_index=fixed, rng=JavaRandom(seed))
        assert sorted(got) == list(range(parts))
        assert all(len(set(r)) == rf for r in got.values())
        leaders = Counter(r[0] for r in got.values())
        assert max(leaders.values()) - min(leaders.get(b.id, 0) for b in brokers) <= 1
        if racks:
            rack_of = {b.id: b.rack for b in brokers}
            num = len(set(rack_of.values()))
            for r in got.values():
                assert len({rack_of[b] for b in r}) == min(rf, num)


# -- the minimal planner ---------------------------------------------------------------------------


def _check_plan(current, proposed, brokers, racks_used: bool) -> None:  # type: ignore[no-untyped-def]
    ids = [b.id for b in brokers]
    assert set(proposed) == set(current)
    for tp, reps in proposed.items():
        assert len(reps) == len(current[tp]) and len(set(reps)) == len(reps)
        assert set(reps) <= set(ids)
    if racks_used:
        rack = {b.id: b.rack for b in brokers}
        num = len(set(rack.values()))
        for reps in proposed.values():
            assert len({rack[b] for b in reps}) == min(len(reps), num)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), n_old=st.integers(1, 9), n_new=st.integers(1, 9), parts=st.integers(1, 50), rf=st.integers(1, 3))
def test_minimal_plan_is_balanced_and_moves_the_least(data, n_old: int, n_new: int, parts: int, rf: int) -> None:  # type: ignore[no-untyped-def]
    rf = min(rf, n_old, n_new)
    old = list(range(n_old))
    current = {TopicPartition(f"t{p % 3}", p): data.draw(st.permutations(old))[:rf] for p in range(parts)}
    first_new = data.draw(st.integers(0, n_old))
    brokers = [BrokerMetadata(b) for b in range(first_new, first_new + n_new)]
    proposed = plan_minimal(current, brokers, goals=Goals(topic_balance=False))
    _check_plan(current, proposed, brokers, racks_used=False)
    counts = Counter(b for r in proposed.values() for b in r)
    per = [counts.get(b.id, 0) for b in brokers]
    assert max(per) - min(per) <= 1
    moves = sum(len(set(proposed[tp]) - set(current[tp])) for tp in current)
    assert moves == lower_bound_moves(current, [b.id for b in brokers])
    if rf >= 2 or n_new == 1:
        leaders = Counter(r[0] for r in proposed.values())
        lead = [leaders.get(b.id, 0) for b in brokers]
        assert max(lead) - min(lead) <= 1


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), n_old=st.integers(1, 9), n_new=st.integers(1, 9), parts=st.integers(1, 50), rf=st.integers(1, 3),
       topics=st.integers(1, 6))
def test_minimal_plan_balances_every_topic_too(data, n_old: int, n_new: int, parts: int, rf: int, topics: int) -> None:  # type: ignore[no-untyped-def]
    """Goals 3-6 at once: brokers' replicas and leaders within 1, and every topic's replicas and
    leaders within 1, the moves at least the lower bound."""
    rf = min(rf, n_old, n_new)
    current = {TopicPartition(f"t{p % topics}", p): data.draw(st.permutations(range(n_old)))[:rf] for p in range(parts)}
    first_new = data.draw(st.integers(0, n_old))
    brokers = [BrokerMetadata(b) for b in range(first_new, first_new + n_new)]
    ids = [b.id for b in brokers]
    proposed = plan_minimal(current, brokers)
    _check_plan(current, proposed, brokers, racks_used=False)
    spread = lambda c: max(c.get(b, 0) for b in ids) - min(c.get(b, 0) for b in ids)  # noqa: E731
    assert spread(Counter(b for r in proposed.values() for b in r)) <= 1
    for t in {tp.topic for tp in current}:
        assert spread(Counter(b for tp, r in proposed.items() if tp.topic == t for b in r)) <= 1, t
    if rf >= 2 or n_new == 1:
        assert spread(Counter(r[0] for r in proposed.values())) <= 1
        for t in {tp.topic for tp in current}:  # reordering cannot always reach 1 without undoing the brokers'
            assert spread(Counter(r[0] for tp, r in proposed.items() if tp.topic == t)) <= 2, t


@settings(max_examples=60, deadline=None)
@given(data=st.data(), n=st.integers(2, 9), racks=st.integers(2, 4), parts=st.integers(1, 40), rf=st.integers(1, 3))
def test_minimal_plan_respects_racks(data, n: int, racks: int, parts: int, rf: int) -> None:  # type: ignore[no-untyped-def]
    rf = min(rf, n)
    brokers = [BrokerMetadata(b, f"rack{b % racks}") for b in range(n)]
    current = {TopicPartition("t", p): data.draw(st.permutations(range(n)))[:rf] for p in range(parts)}
    proposed = plan_minimal(current, brokers)
    _check_plan(current, proposed, brokers, racks_used=True)


def test_minimal_adds_a_broker_with_least_moves_and_bytes() -> None:
    base = assign_replicas_to_brokers([BrokerMetadata(i) for i in range(4)], 40, 3, fixed_start_index=0)
    current = {TopicPartition("t", p): r for p, r in base.items()}
    sizes = {TopicPartition("t", p): 1000 + p for p in range(40)}
    brokers = [BrokerMetadata(i) for i in range(5)]
    proposed = plan_minimal(current, brokers, sizes)
    s = summarize(current, proposed, brokers, sizes, "minimal")
    assert s.replica_moves == s.lower_bound == 24
    assert s.spread("replicas_after") == (24, 24) and s.spread("leaders_after") == (8, 8)
    row = {b.broker: b for b in s.brokers}[4]
    assert row.moves_in == 24 and row.moves_out == 0 and row.bytes_in == s.bytes_to_move
    kafka = generate_kafka(["t"], current, brokers, JavaRandom(1))
    k = summarize(current, kafka, brokers, sizes, "kafka")
    assert k.replica_moves > s.replica_moves and k.bytes_to_move > s.bytes_to_move
    # the smallest partitions were chosen
    moved = sorted(tp.partition for tp in current if set(proposed[tp]) != set(current[tp]))
    assert sum(sizes[TopicPartition("t", p)] for p in moved) == s.bytes_to_move


def test_minimal_drains_a_broker_and_refuses_too_few_brokers() -> None:
    current = {TopicPartition("t", p): [p % 4, (p + 1) % 4] for p in range(12)}
    brokers = [BrokerMetadata(i) for i in (0, 1, 2)]
    proposed = plan_minimal(current, brokers)
    _check_plan(current, proposed, brokers, racks_used=False)
    assert all(3 not in r for r in proposed.values())
    with pytest.raises(AssignmentError, match="Replication factor: 2 larger than available brokers: 1."):
        plan_minimal(current, [BrokerMetadata(0)])


def test_minimal_fixes_rack_violations() -> None:
    brokers = [BrokerMetadata(b, "a" if b < 3 else "b") for b in range(6)]
    current = {TopicPartition("t", p): [p % 3, (p + 1) % 3] for p in range(6)}  # both replicas in rack a
    proposed = plan_minimal(current, brokers)
    _check_plan(current, proposed, brokers, racks_used=True)
    assert all(len(set(proposed[tp]) - set(current[tp])) == 1 for tp in current)


def test_summary_counts() -> None:
    current = {TopicPartition("t", 0): [1, 2], TopicPartition("t", 1): [2, 1]}
    proposed = {TopicPartition("t", 0): [3, 2], TopicPartition("t", 1): [1, 2]}
    s = summarize(current, proposed, [BrokerMetadata(1), BrokerMetadata(2), BrokerMetadata(3)],
                  {TopicPartition("t", 0): 10, TopicPartition("t", 1): 20}, "x")
    rows = {b.broker: b for b in s.brokers}
    assert (s.replica_moves, s.bytes_to_move, s.partitions_changed, s.leadership_changes) == (1, 10, 2, 2)
    assert (rows[1].moves_out, rows[1].bytes_out, rows[3].moves_in, rows[3].bytes_in) == (1, 10, 1, 10)
    assert (rows[1].leaders_before, rows[1].leaders_after, rows[3].replicas_after) == (1, 1, 1)
    unknown = summarize(current, proposed, [BrokerMetadata(1)], None, "x")
    assert unknown.bytes_to_move is None and unknown.brokers[0].bytes_in is None
