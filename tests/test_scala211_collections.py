"""Kafka 2.1's Scala 2.11 collections (its default build) against the real scala-library 2.11 (Debian's
`scala-library` package, /usr/share/java): immutable Maps of TopicPartitions built one entry at a time
(`toMap`, `++`), whose order Kafka 2.1's ReassignPartitionsCommand prints (kafkatool.cluster.reassign_21)
and immutable Sets of strings and ints (kafkatool.jvm.scala_collections' 2.11/2.12 trie)."""

from __future__ import annotations

import glob
import random
import shutil

import pytest

from kafkatool.cluster.model import TopicPartition
from kafkatool.cluster.reassign_21 import scala_map_order
from kafkatool.jvm import scala_collections as sc
from tests.support.java_probe import JAVA_TP, compile_probe

PROBE = """import java.io.*;
import java.util.*;

@SuppressWarnings({"unchecked", "rawtypes"})
public class Scala211Probe {
""" + JAVA_TP + """  public static void main(String[] a) throws Exception {
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, "UTF-8"));
    String line;
    while ((line = in.readLine()) != null) {
      String[] f = line.split("\\t", -1);
      StringBuilder b = new StringBuilder();
      scala.collection.Iterator it;
      if (f[0].equals("tpmap")) {
        scala.collection.immutable.Map m = (scala.collection.immutable.Map) scala.collection.immutable.Map$.MODULE$.empty();
        for (String s : f[1].split(" ")) {
          int i = s.lastIndexOf('/');
          m = m.$plus(new scala.Tuple2(new TP(s.substring(0, i), Integer.parseInt(s.substring(i + 1))), 1));
        }
        it = m.keysIterator();
      } else {
        scala.collection.mutable.Builder bld = scala.collection.immutable.Set$.MODULE$.newBuilder();  // elems + x, in order
        for (String s : f[1].split(" ")) bld.$plus$eq(f[0].equals("ints") ? (Object) Integer.valueOf(s) : s);
        it = ((scala.collection.immutable.Set) bld.result()).iterator();
      }
      while (it.hasNext()) { if (b.length() > 0) b.append(' '); b.append(it.next()); }
      System.out.println(b);
    }
  }
}
"""


@pytest.fixture(scope="module")
def scala211(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    jars = sorted(glob.glob("/usr/share/java/scala-library-2.11*.jar"))
    if not jars:
        pytest.skip("no scala-library 2.11 (Debian package scala-library) to check against")
    if shutil.which("javac") is None or shutil.which("java") is None:
        pytest.skip("no JDK (javac/java) on this machine")
    return compile_probe(tmp_path_factory.mktemp("scala211"), "Scala211Probe", PROBE, jars[-1])


def _name(rng: random.Random) -> str:
    return "".join(rng.choice("abcdefghijklmnopqrstuvwxyz._-0123456789") for _ in range(rng.randint(1, 12)))


def test_topic_partition_maps_as_kafka_21_builds_them(scala211) -> None:  # type: ignore[no-untyped-def]
    rng = random.Random(211)
    cases = []
    for n in list(range(1, 10)) + [16, 33, 70]:
        topics = [_name(rng) for _ in range(rng.randint(1, 3))] + ["orders", "big"]
        parts = list(dict.fromkeys(TopicPartition(rng.choice(topics), rng.randrange(40)) for _ in range(n)))
        cases.append(parts)
    got = scala211(["tpmap\t" + " ".join(f"{tp.topic}/{tp.partition}" for tp in c) for c in cases])
    for parts, line in zip(cases, got, strict=True):
        assert line == " ".join(f"{tp.topic}/{tp.partition}" for tp in scala_map_order(parts)), parts


def test_sets_of_strings_and_ints(scala211) -> None:  # type: ignore[no-untyped-def]
    rng = random.Random(2112)
    strings = [list(dict.fromkeys(_name(rng) for _ in range(n))) for n in (1, 4, 5, 9, 30, 100)]
    ints = [list(dict.fromkeys(rng.randrange(-50, 5000) for _ in range(n))) for n in (3, 5, 8, 40)]
    got = scala211([f"strings\t{' '.join(c)}" for c in strings] + [f"ints\t{' '.join(map(str, c))}" for c in ints])
    for keys, line in zip(strings, got[: len(strings)], strict=True):
        assert line == " ".join(sc.string_set_order(keys, scala="2.12")), keys
    for nums, line in zip(ints, got[len(strings):], strict=True):
        assert line == " ".join(map(str, sc.int_set_order(nums, scala="2.12"))), nums
