"""Scala collection order models (kafkatool.jvm.scala_collections) against the real scala-library 2.13.

The oracle is a small Java program compiled at test time with `javac` against the
`scala-library-2.13.*.jar` that pyspark ships, run on the JDK: it fills real Scala collections with
the same keys and prints their iteration order.  Keys are topic-like names, TopicPartitions (with
Kafka's `hashCode`) and broker ids, drawn from a seeded generator (the same cases every run).
"""

from __future__ import annotations

import glob
import importlib.util
import random
import shutil
import string
from pathlib import Path

import pytest

from kafkatool.cluster.model import TopicPartition
from kafkatool.jvm import scala_collections as sc
from kafkatool.jvm.hashing import string_hash
from tests.support.java_probe import JAVA_TP, compile_probe

PROBE = """import java.io.*;
import java.util.*;

@SuppressWarnings({"unchecked", "rawtypes"})
public class ScalaProbe {
""" + JAVA_TP + """  static Object parse(char type, String s) {
    if (type == 'I') return Integer.valueOf(s);
    if (type == 'T') { int i = s.lastIndexOf('/'); return new TP(s.substring(0, i), Integer.parseInt(s.substring(i + 1))); }
    return s;
  }
  static List<Object> items(char type, String field) {
    List<Object> out = new ArrayList<>();
    if (!field.isEmpty()) for (String s : field.split(" ")) out.add(parse(type, s));
    return out;
  }
  static String join(scala.collection.Iterator it) {
    StringBuilder b = new StringBuilder();
    while (it.hasNext()) { if (b.length() > 0) b.append(' '); b.append(it.next()); }
    return b.toString();
  }
  static scala.collection.immutable.Set toSet(List<Object> xs) {
    return (scala.collection.immutable.Set) scala.collection.immutable.Set$.MODULE$.from(
        scala.jdk.javaapi.CollectionConverters.asScala(xs));
  }
  public static void main(String[] a) throws Exception {
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, "UTF-8"));
    PrintStream out = new PrintStream(new BufferedOutputStream(System.out), false, "UTF-8");
    String line;
    while ((line = in.readLine()) != null) {
      String[] f = line.split("\\t", -1);
      char type = f[1].charAt(0);
      List<Object> xs = items(type, f[2]);
      switch (f[0]) {
        case "iset": out.println(join(toSet(xs).iterator())); break;
        case "iconcat": out.println(join(((scala.collection.immutable.Set) toSet(xs).concat(toSet(items(type, f[3])))).iterator())); break;
        case "imap": {
          scala.collection.immutable.HashMap m = scala.collection.immutable.HashMap$.MODULE$.empty();
          for (Object x : xs) m = m.updated(x, 1);
          out.println(join(m.keysIterator())); break;
        }
        case "itomap": {  // Seq((k, v), ...).toMap, as Kafka 3.3's reset plans are built
          List<scala.Tuple2> pairs = new ArrayList<>();
          for (Object x : xs) pairs.add(new scala.Tuple2(x, 1));
          scala.collection.IterableOnce it = (scala.collection.IterableOnce) scala.jdk.javaapi.CollectionConverters.asScala(pairs);
          scala.collection.immutable.Map m = (scala.collection.immutable.Map) scala.collection.immutable.Map$.MODULE$.from(it);
          out.println(join(m.keysIterator())); break;
        }
        case "mset": {
          scala.collection.mutable.HashSet s = new scala.collection.mutable.HashSet();
          for (Object x : xs) s.add(x);
          out.println(join(s.iterator())); break;
        }
        case "mmap": {
          scala.collection.mutable.HashMap m = new scala.collection.mutable.HashMap();
          for (Object x : xs) m.put(x, 1);
          out.println(join(m.keysIterator())); break;
        }
        case "group": {
          scala.collection.mutable.HashMap m = new scala.collection.mutable.HashMap();
          for (Object x : xs) m.put(x, 1);
          scala.Function1<Object, Object> byTopic = kv -> ((TP) ((scala.Tuple2) kv)._1()).t;
          scala.collection.immutable.Map g = (scala.collection.immutable.Map) m.groupBy(byTopic);
          StringBuilder b = new StringBuilder();
          scala.collection.Iterator it = g.iterator();
          while (it.hasNext()) {
            scala.Tuple2 e = (scala.Tuple2) it.next();
            scala.Tuple2 head = (scala.Tuple2) ((scala.collection.Iterable) e._2()).head();
            if (b.length() > 0) b.append(' ');
            b.append(e._1()).append('=').append(head._1()).append('#').append(((scala.collection.Iterable) e._2()).size());
          }
          out.println(b); break;
        }
        default: throw new IllegalArgumentException(f[0]);
      }
    }
    out.flush();
  }
}
"""


def _scala_jar() -> str | None:
    spec = importlib.util.find_spec("pyspark")
    if spec is None or not spec.submodule_search_locations:
        return None
    for root in spec.submodule_search_locations:
        jars = sorted(glob.glob(str(Path(root) / "jars" / "scala-library-2.13.*.jar")))
        if jars:
            return jars[-1]
    return None


@pytest.fixture(scope="module")
def scala(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    """Run a batch of cases through the real Scala collections; one line of output per case."""
    if shutil.which("javac") is None or shutil.which("java") is None:
        pytest.skip("no JDK (javac/java) on this machine: cannot run the Scala oracle")
    jar = _scala_jar()
    if jar is None:
        pytest.skip("no scala-library-2.13.*.jar (shipped with pyspark under pyspark/jars) to check against")
    return compile_probe(tmp_path_factory.mktemp("scala_oracle"), "ScalaProbe", PROBE, jar)


_ALPHABET = string.ascii_letters + string.digits + "._-"


def _topics(rng: random.Random, n: int) -> list[str]:
    words = ["orders", "payments", "events", "clicks", "audit", "logs", "users", "metrics", "__consumer_offsets"]
    out = []
    for _ in range(n):
        if rng.random() < 0.5:
            out.append(f"{rng.choice(words)}{rng.choice(['', '-', '.', '_'])}{rng.randrange(1000)}")
        else:
            out.append("".join(rng.choice(_ALPHABET) for _ in range(rng.randrange(1, 25))))
    return out


def _tps(rng: random.Random, n_topics: int, max_parts: int) -> list[TopicPartition]:
    out = [TopicPartition(t, p) for t in _topics(rng, n_topics) for p in range(rng.randrange(1, max_parts + 1))]
    rng.shuffle(out)
    return out


def _tp_text(tp: TopicPartition) -> str:
    return f"{tp.topic}/{tp.partition}"


SIZES = [1, 2, 3, 4, 5, 6, 7, 8, 11, 12, 13, 17, 24, 25, 31, 33, 48, 49, 64, 100, 200, 700]


def test_immutable_set_and_hash_map_of_strings(scala) -> None:  # type: ignore[no-untyped-def]
    rng = random.Random(20241124)
    keysets = [_topics(rng, n) for n in SIZES for _ in range(3)]
    keysets.append(["orders", "single", "big"])
    keysets.append(["Aa", "BB", "AaAa", "BBBB", "AaBB", "BBAa", "x"])  # String.hashCode collisions
    cases = [f"iset\tS\t{' '.join(ks)}" for ks in keysets] + [f"imap\tS\t{' '.join(ks)}" for ks in keysets]
    got = scala(cases)
    want = [" ".join(sc.string_set_order(ks)) for ks in keysets] + [" ".join(sc.string_champ_order(ks)) for ks in keysets]
    assert got == want
    assert sc.string_champ_order(["orders", "single", "big"]) == ["big", "single", "orders"]  # the example


def test_immutable_sets_of_ints_and_concat(scala) -> None:  # type: ignore[no-untyped-def]
    rng = random.Random(7)
    pairs = []
    for _ in range(60):
        a = [rng.choice([rng.randrange(10), rng.randrange(2000), rng.randrange(-5, 1 << 31)]) for _ in range(rng.randrange(1, 9))]
        b = [rng.randrange(12) for _ in range(rng.randrange(0, 9))]
        pairs.append((a, b))
    cases = [f"iconcat\tI\t{' '.join(map(str, a))}\t{' '.join(map(str, b))}" for a, b in pairs]
    want = [" ".join(map(str, sc.int_set_order(list(sc.int_set_order(a)) + sc.int_set_order(b)))) for a, b in pairs]
    assert scala(cases) == want


def test_mutable_hash_set_and_map_of_topic_partitions(scala) -> None:  # type: ignore[no-untyped-def]
    rng = random.Random(99)
    sets = [_tps(rng, rng.randrange(1, 8), 12) for _ in range(80)]
    sets.append([TopicPartition("__consumer_offsets", p) for p in range(50)] + [TopicPartition("orders", p) for p in range(6)])
    sets.append([TopicPartition("t", p) for p in range(12)])  # 12 adds: the table doubles on the 12th
    cases = [f"mset\tT\t{' '.join(map(_tp_text, s))}" for s in sets] + [f"mmap\tT\t{' '.join(map(_tp_text, s))}" for s in sets]
    want = [" ".join(map(_tp_text, sc.topic_partition_mutable_order(s))) for s in sets] * 2
    assert scala(cases) == want


def test_mutable_hash_set_of_strings_with_equal_hashes(scala) -> None:  # type: ignore[no-untyped-def]
    keys = ["Aa", "BB", "AaAa", "BBBB", "AaBB", "BBAa", "C#", "Bb", "x", "y"]
    assert string_hash("Aa") == string_hash("BB")
    assert scala([f"mset\tS\t{' '.join(keys)}"]) == [" ".join(sc.mutable_hash_order(keys, string_hash))]


def test_group_by_topic_order_and_heads(scala) -> None:  # type: ignore[no-untyped-def]
    """`currentAssignment.groupBy(_._1.topic)` in Kafka 3.3's --generate: topic order and each group's head."""
    rng = random.Random(3)
    sets = [_tps(rng, n, 9) for n in (1, 2, 3, 3, 4, 5, 6, 8, 10, 16, 33, 40)]
    sets.append([TopicPartition(t, p) for t in ("orders", "single", "big") for p in range({"orders": 3, "single": 1, "big": 6}[t])])
    got = scala([f"group\tT\t{' '.join(map(_tp_text, s))}" for s in sets])
    want = []
    for s in sets:
        by_topic: dict[str, list[TopicPartition]] = {}
        for tp in sc.topic_partition_mutable_order(s):
            by_topic.setdefault(tp.topic, []).append(tp)
        groups = []
        for t in sc.string_champ_order(by_topic):
            head = sc.topic_partition_mutable_order(by_topic[t])[0]
            groups.append(f"{t}={_tp_text(head)}#{len(by_topic[t])}")
        want.append(" ".join(groups))
    assert got == want


def test_scala_2_12_hash_trie_order_matches_recorded_repl_output() -> None:
    """Kafka 2.x ran on Scala 2.11/2.12, whose HashSet (a hash trie) has no jar here to run: these are
    Scala 2.10-2.12 REPL answers, e.g. `(1 to 10).toSet` printing `Set(5, 10, 1, 6, 9, 2, 7, 3, 8, 4)`."""
    assert sc.int_set_order(range(1, 6), scala="2.12") == [5, 1, 2, 3, 4]
    assert sc.int_set_order(range(1, 11), scala="2.12") == [5, 10, 1, 6, 9, 2, 7, 3, 8, 4]
    assert sc.string_set_order(list("abcde"), scala="2.12") == ["e", "a", "b", "c", "d"]
    assert sc.int_set_order([3, 1, 2], scala="2.12") == [3, 1, 2]  # Set3: insertion order


def test_to_map_of_topic_partitions_keeps_up_to_4_then_hashes(scala) -> None:  # type: ignore[no-untyped-def]
    """`Seq(...).toMap` (Kafka 3.3's reset plans): Map1..Map4 keep insertion order, then a CHAMP HashMap —
    the model `reset_rows` uses (immutable_set_order over TopicPartition.hashCode)."""
    from kafkatool.jvm.hashing import topic_partition_hash

    rng = random.Random(23)
    cases = []
    for n in list(range(1, 9)) + [12, 20]:
        topics = _topics(rng, 2)
        parts = [TopicPartition(rng.choice(topics), rng.randrange(12)) for _ in range(n)]
        parts = list(dict.fromkeys(parts))
        rng.shuffle(parts)
        cases.append(parts)
    got = scala(["itomap\tT\t" + " ".join(f"{tp.topic}/{tp.partition}" for tp in c) for c in cases])
    for parts, line in zip(cases, got, strict=True):
        want = sc.immutable_set_order(parts, lambda tp: topic_partition_hash(tp.topic, tp.partition))
        assert line == " ".join(f"{tp.topic}/{tp.partition}" for tp in want), parts
