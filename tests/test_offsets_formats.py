"""Kafka's group-offset texts, the JVM hash orders behind them, export/import formats, reset plans."""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafkatool.ops import offsets_report as rep
from kafkatool.ops.offsets_report import (
    MemberRow,
    PartitionLag,
    ResetSpec,
    StateRow,
    describe_rows,
    format_describe,
    format_get_offset_shell,
    format_members,
    format_offset_checker,
    format_state,
    java_hashset_order,
    parse_datetime_ms,
    parse_duration_ms,
    parse_offsets_file,
    plan_reset,
    scala_immutable_map_order,
    scala_mutable_map_order,
)


@dataclass
class M:
    member_id: str
    host: str
    client_id: str
    assignment: list[tuple[str, int]] = field(default_factory=list)
    group_instance_id: str | None = None


# --------------------------------------------------------------------------------------------------
# JVM collection orders, checked against the real Scala 2.13 library and java.util.HashSet

_ORDER_JAVA = r"""
import java.util.*;
public class Order {
  static final class TP {
    final String t; final int p;
    TP(String t, int p) { this.t = t; this.p = p; }
    @Override public int hashCode() { int r = 31 + p; r = 31 * r + t.hashCode(); return r; }
    @Override public boolean equals(Object o) { return o instanceof TP && ((TP) o).t.equals(t) && ((TP) o).p == p; }
    @Override public String toString() { return t + ":" + p; }
  }
  @SuppressWarnings({"unchecked", "rawtypes"})
  public static void main(String[] a) {
    Scanner sc = new Scanner(System.in);
    while (sc.hasNextLine()) {
      String[] parts = sc.nextLine().trim().split(" ", 2);
      List<TP> tps = new ArrayList<>();
      for (String s : parts[1].split(",")) { int i = s.lastIndexOf(':'); tps.add(new TP(s.substring(0, i), Integer.parseInt(s.substring(i + 1)))); }
      StringBuilder out = new StringBuilder();
      if (parts[0].equals("imm")) {
        scala.collection.mutable.Builder b = scala.collection.immutable.Map$.MODULE$.newBuilder();
        for (TP tp : tps) b.addOne(new scala.Tuple2(tp, 1));
        scala.collection.Iterator it = ((scala.collection.immutable.Map) b.result()).iterator();
        while (it.hasNext()) out.append(((scala.Tuple2) it.next())._1()).append(',');
      } else if (parts[0].equals("mut")) {
        scala.collection.mutable.HashMap m = new scala.collection.mutable.HashMap();
        for (TP tp : tps) m.update(tp, 1);
        scala.collection.Iterator it = m.keysIterator();
        while (it.hasNext()) out.append(it.next()).append(',');
      } else if (parts[0].equals("map") || parts[0].equals("mapn")) {
        Map<TP, Integer> m = parts[0].equals("map") ? new HashMap<>() : new HashMap<>(tps.size());
        for (TP tp : tps) m.put(tp, 1);
        for (TP tp : m.keySet()) out.append(tp).append(',');
      } else {
        for (TP tp : new HashSet<>(tps)) out.append(tp).append(',');
      }
      System.out.println(out);
    }
  }
}
"""


def _scala_library() -> Path | None:
    try:
        import pyspark
    except ImportError:
        return None
    jars = sorted((Path(pyspark.__file__).parent / "jars").glob("scala-library-2.13*.jar"))
    return jars[-1] if jars else None


def test_orders_match_the_real_scala_and_java_collections(tmp_path: Path) -> None:
    jar = _scala_library()
    if jar is None or not shutil.which("javac") or not shutil.which("java"):
        pytest.skip("needs javac and the Scala 2.13 library (pyspark's jars)")
    (tmp_path / "Order.java").write_text(_ORDER_JAVA)
    subprocess.run(["javac", "-nowarn", "-cp", str(jar), "Order.java"], cwd=tmp_path, check=True, capture_output=True, timeout=120)
    rnd = random.Random(7)
    cases = []
    for _ in range(200):
        n = rnd.choice([1, 2, 4, 5, 7, 16, 33, 100, 600])
        topics = [rnd.choice(["orders", "t-" + str(rnd.randint(0, 99)), "x.y_z", "é"]) for _ in range(3)]
        tps = list(dict.fromkeys((rnd.choice(topics), rnd.randint(0, 400)) for _ in range(n)))
        cases.append((rnd.choice(["imm", "mut", "set", "map", "mapn"]), tps))
    inp = "".join(f"{k} " + ",".join(f"{t}:{p}" for t, p in tps) + "\n" for k, tps in cases)
    out = subprocess.run(["java", "-cp", f"{jar}{os.pathsep}{tmp_path}", "Order"], input=inp, capture_output=True,
                         text=True, timeout=120, check=True).stdout.splitlines()
    fns = {"imm": scala_immutable_map_order, "mut": scala_mutable_map_order, "set": java_hashset_order,
           "map": rep.java_hashmap_order, "mapn": lambda tps: rep.java_hashmap_order(tps, len(tps))}
    for (kind, tps), line in zip(cases, out, strict=True):
        want = [(s.rsplit(":", 1)[0], int(s.rsplit(":", 1)[1])) for s in line.strip(",").split(",")]
        assert fns[kind](tps) == want, (kind, tps)


@given(st.lists(st.tuples(st.sampled_from(["a", "bb", "orders"]), st.integers(0, 2000)), max_size=80))
def test_orders_are_permutations(tps: list[tuple[str, int]]) -> None:
    uniq = list(dict.fromkeys(tps))
    for fn in (scala_immutable_map_order, scala_mutable_map_order, java_hashset_order):
        assert sorted(fn(tps)) == sorted(uniq)
    if len(uniq) <= 4:
        assert scala_immutable_map_order(tps) == uniq


def test_scala211_int_map_order_is_a_permutation() -> None:
    for keys in ([0], [1, 0], list(range(20)), [1001, 1002, 1003]):
        assert sorted(rep.scala211_int_map_order(keys)) == sorted(keys)


# --------------------------------------------------------------------------------------------------
# kafka-consumer-groups --describe (Kafka 3.3 printOffsets / printMembers / printStates)


def test_describe_text_widths_missing_values_and_state_lines() -> None:
    members = [
        M("consumer-1-0c1d0e2f", "/10.1.2.3", "consumer-1", [("orders", 1)]),
        M("consumer-2-a-much-longer-member-id", "/10.1.2.4", "consumer-2", [("orders", 0), ("payments", 0)]),
        M("idle-member", "/10.1.2.5", "consumer-3", []),
    ]
    committed = {("orders", 0): 5, ("orders", 1): None, ("payments", 0): 7, ("payments-archive-topic", 3): 9}
    leo = {("orders", 0): 10, ("orders", 1): 4, ("payments", 0): None, ("payments-archive-topic", 3): 12}
    rows = describe_rows("g", "Stable", members, committed, leo)
    out, err = format_describe([("g", "Stable", rows), ("empty", "Empty", []), ("gone", "Dead", [])])
    assert err == "\nConsumer group 'empty' has no active members.\n"
    assert out == (
        # groups in name order (Kafka's TreeMap); payments-0 before orders-0: java.util.HashSet order
        "\nGROUP           TOPIC                  PARTITION  CURRENT-OFFSET  LOG-END-OFFSET  LAG             CONSUMER-ID                        HOST            CLIENT-ID\n"
        "g               payments               0          7               -               -               consumer-2-a-much-longer-member-id /10.1.2.4       consumer-2\n"
        "g               orders                 0          5               10              5               consumer-2-a-much-longer-member-id /10.1.2.4       consumer-2\n"
        "g               orders                 1          -               4               -               consumer-1-0c1d0e2f                /10.1.2.3       consumer-1\n"
        "g               payments-archive-topic 3          9               12              3               -                                  -               -\n"
        "\nError: Consumer group 'gone' does not exist.\n"
    )
    assert java_hashset_order([("orders", 0), ("payments", 0)]) == [("payments", 0), ("orders", 0)]


def test_describe_rebalancing_warning_and_unknown_group() -> None:
    out, err = format_describe([("r", "PreparingRebalance", [PartitionLag("r", "t", 0, 1, 2, 1, "-", "-", "-")]), ("x", None, None)])
    assert err == "\nWarning: Consumer group 'r' is rebalancing.\n"
    assert out.startswith("\nGROUP ")
    assert out.endswith("\nError: The consumer group 'x' does not exist.\n")


def test_members_and_state_texts() -> None:
    rows = [MemberRow("g", "c-1", "", "/h1", "client", 2, [("t", 1), ("u", 0), ("t", 0)]),
            MemberRow("g", "c-2", "", "/h2", "client", 0, [])]
    out, _ = format_members([("g", "Stable", rows)], verbose=True)
    assert out == (
        "\nGROUP           CONSUMER-ID     HOST            CLIENT-ID       #PARTITIONS     ASSIGNMENT\n"
        "g               c-1             /h1             client          2               t(0,1), u(0)\n"
        "g               c-2             /h2             client          0               -\n"
    )
    rows[0].group_instance_id = "instance-1"
    out, _ = format_members([("g", "Stable", rows)])
    assert out.splitlines()[1] == (
        "GROUP           CONSUMER-ID     GROUP-INSTANCE-ID HOST            CLIENT-ID       #PARTITIONS     "
    )
    out, err = format_state([StateRow("g", 1, "broker-1.example.com:9092 (1)", "range", "Stable", 2),
                             StateRow("e", 0, "b:9092 (0)", "", "Empty", 0)])
    assert err == "\nConsumer group 'e' has no active members.\n"
    assert out == (
        "\nGROUP                     COORDINATOR (ID)          ASSIGNMENT-STRATEGY  STATE           #MEMBERS"
        "\ne                         b:9092 (0)                                     Empty           0\n"
        "\nGROUP                         COORDINATOR (ID)          ASSIGNMENT-STRATEGY  STATE           #MEMBERS"
        "\ng                             broker-1.example.com:9092 (1) range                Stable          2\n"
    )


# --------------------------------------------------------------------------------------------------
# ConsumerOffsetChecker and GetOffsetShell


def test_offset_checker_text() -> None:
    parts = {"old-v1": [1, 0], "gone": [0]}
    committed = {("old-v1", 0): 84, ("old-v1", 1): -1, ("gone", 0): None}
    leaders = {("old-v1", 0): 2, ("old-v1", 1): 1, ("gone", 0): None}
    rows = rep.checker_rows("group-old-v1", parts, committed, leaders, {("old-v1", 0): 100, ("old-v1", 1): 80},
                            {("old-v1", 0): "group-old-v1_host-1-0"})
    text = format_offset_checker(rows, {1: "b1:9092", 2: "b2:9092"})
    assert text == (
        "Group           Topic                          Pid Offset          logSize         Lag             Owner\n"
        "No broker for partition gone - 0\n"
        "group-old-v1    old-v1                         0   84              100             16              group-old-v1_host-1-0\n"
        "group-old-v1    old-v1                         1   -1              80              unknown         none\n"
        "BROKER INFO\n" + "".join(f"{b} -> b{b}:9092\n" for b in rep.scala211_int_map_order([2, 1]))
    )


def test_get_offset_shell_lines() -> None:
    assert format_get_offset_shell({("b", 1): 5, ("a", 10): 1, ("a", 2): None, ("a", 9): 0}) == "a:9:0\na:10:1\nb:1:5\n"


# --------------------------------------------------------------------------------------------------
# Export and import


_offsets = st.dictionaries(
    st.text(alphabet="abc-_.,\" ", min_size=1, max_size=6).filter(lambda g: g.strip() == g and not g.startswith("/")),
    st.dictionaries(st.tuples(st.sampled_from(["t1", "orders", "x.y"]), st.integers(0, 50)), st.integers(0, 2**62),
                    min_size=1, max_size=5),
    min_size=1, max_size=3,
)


@settings(max_examples=60, deadline=None)
@given(_offsets)
def test_every_export_format_reads_back(offsets: dict[str, dict[tuple[str, int], int]]) -> None:
    groups = sorted(offsets)
    assert parse_offsets_file(rep.export_csv(offsets, with_group=True), groups) == offsets
    if len(groups) == 1:
        assert parse_offsets_file(rep.export_csv(offsets, with_group=False), groups) == offsets
    if all("/" not in g and ":" not in g for g in groups):
        assert parse_offsets_file(rep.export_zk(offsets)) == offsets
    rows = [PartitionLag(g, t, p, o, None, None) for g in groups for (t, p), o in offsets[g].items()]
    assert parse_offsets_file(rep.export_json(rows, 0)) == offsets


def test_kafka_csv_layouts_and_errors() -> None:
    assert rep.export_csv({"g": {("t", 1): 5, ("t", 0): 3}}, with_group=False) == "t,0,3\nt,1,5\n\n"
    assert parse_offsets_file("t,0,3\n", ["g"]) == {"g": {("t", 0): 3}}
    assert parse_offsets_file("g,t,0,3\nh,u,1,4\n", ["g", "h"]) == {"g": {("t", 0): 3}, "h": {("u", 1): 4}}
    assert parse_offsets_file("/consumers/g/offsets/t/3:17\n") == {"g": {("t", 3): 17}}
    with pytest.raises(rep.OffsetsFileError, match="expected group,topic,partition,offset"):
        parse_offsets_file("t,0,3\n", ["g", "h"])
    with pytest.raises(rep.OffsetsFileError, match="malformed JSON"):
        parse_offsets_file("{nope", ["g"])
    with pytest.raises(rep.OffsetsFileError, match="empty"):
        parse_offsets_file("\n", ["g"])
    doc = json.loads(rep.export_json([PartitionLag("g", "t", 0, 5, 9, 4, committed_timestamp=123, time_lag_ms=7)], 1))
    assert doc["offsets"] == [{"group": "g", "topic": "t", "partition": 0, "offset": 5, "metadata": None,
                               "log_end_offset": 9, "lag": 4, "committed_timestamp": 123, "time_lag_ms": 7}]


# --------------------------------------------------------------------------------------------------
# Times, durations, reset plans, time lag and rates


def test_datetimes_and_durations() -> None:
    assert parse_datetime_ms("2020-01-01T00:00:00.000") == 1577836800000
    assert parse_datetime_ms("2020-01-01T01:00:00.250+01:00") == 1577836800250
    assert parse_datetime_ms("2020-01-01T00:00:00.000-0130") == 1577836800000 + 5400000
    assert parse_duration_ms("P1DT2H3M4.5S") == 93784500
    assert parse_duration_ms("PT30M") == 1800000
    for bad in ("2020-01-01 00:00:00", "yesterday"):
        with pytest.raises(ValueError):
            parse_datetime_ms(bad)
    for bad in ("P", "PT", "1D", "PT1.5"):
        with pytest.raises(ValueError):
            parse_duration_ms(bad)


@given(st.integers(0, 999), st.integers(0, 23), st.integers(0, 59), st.integers(0, 59), st.integers(0, 999))
def test_duration_parts_add_up(d: int, h: int, m: int, s: int, ms: int) -> None:
    assert parse_duration_ms(f"P{d}DT{h}H{m}M{s}.{ms:03d}S") == (((d * 24 + h) * 60 + m) * 60 + s) * 1000 + ms


def test_reset_plans_follow_kafka() -> None:
    tps = [("t", 0), ("t", 1)]
    committed = {("t", 0): 50, ("t", 1): None}
    earliest = {("t", 0): 10, ("t", 1): 0}
    latest = {("t", 0): 100, ("t", 1): 40}
    assert plan_reset("g", ResetSpec(to_earliest=True), tps, committed, earliest, latest).offsets == {("t", 0): 10, ("t", 1): 0}
    assert plan_reset("g", ResetSpec(to_current=True), tps, committed, earliest, latest).offsets == {("t", 0): 50, ("t", 1): 40}
    p = plan_reset("g", ResetSpec(to_offset=60), tps, committed, earliest, latest)
    assert p.offsets == {("t", 0): 60, ("t", 1): 40} and "higher than latest" in p.notes[0]
    p = plan_reset("g", ResetSpec(shift_by=-45), [("t", 0)], committed, earliest, latest)
    assert p.offsets == {("t", 0): 10} and "lower than earliest" in p.notes[0]
    with pytest.raises(rep.ResetError, match="no current committed offset"):
        plan_reset("g", ResetSpec(shift_by=1), tps, committed, earliest, latest)
    p = plan_reset("g", ResetSpec(by_duration_ms=1), tps, committed, earliest, latest, {("t", 0): 70, ("t", 1): None})
    assert p.offsets == {("t", 0): 70, ("t", 1): 40} and p.empty == [("t", 1)] and p.notes == []
    p = plan_reset("h", ResetSpec(from_file={"g": {("t", 0): 1}}), [], committed, earliest, latest)
    assert p.offsets == {} and p.notes == ["No reset plan for group h found"]
    assert rep.format_reset([p, plan_reset("g", ResetSpec(to_latest=True), [("t", 1)], committed, earliest, latest)]) == (
        "\nGROUP                          TOPIC                          PARTITION  NEW-OFFSET     \n"
        "g                              t                              1          40             \n"
    )


@dataclass
class Stamp:
    offset: int | None
    timestamp: int | None
    caught_up: bool = False
    error: str | None = None


def test_time_lag_and_rates() -> None:
    rows = [PartitionLag("g", "t", 0, 10, 20, 10), PartitionLag("g", "t", 1, 20, 20, 0), PartitionLag("g", "t", 2, 5, 9, 4),
            PartitionLag("g", "t", 3, None, 9, None)]
    stamps = {("t", 0, 10): Stamp(10, 1_000), ("t", 1, 20): Stamp(None, None, caught_up=True),
              ("t", 2, 5): Stamp(None, None, error="offset out of range")}
    rep.apply_time_lag(rows, stamps, 61_000)
    assert [(r.committed_timestamp, r.time_lag_ms, r.time_lag_note) for r in rows] == [
        (1_000, 60_000, None), (None, 0, "caught up"), (None, None, "offset out of range"), (None, None, None)]
    rep.apply_rates(rows, {("g", "t", 0): (0, 15), ("g", "t", 2): (5, 5)}, 10.0)
    assert (rows[0].consume_rate, rows[0].produce_rate, rows[0].drain_seconds) == (1.0, 0.5, 20.0)
    assert (rows[2].consume_rate, rows[2].produce_rate, rows[2].drain_seconds) == (0.0, 0.4, None)
    text = rep.format_time_lag(rows, rates=True)
    assert text.splitlines()[0].split() == ["GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG",
                                            "RECORD-TIME", "TIME-LAG", "CONSUME/S", "PRODUCE/S", "TIME-TO-DRAIN"]
    assert "1m" in text.splitlines()[1] and "20s" in text.splitlines()[1] and "never" in text.splitlines()[3]
