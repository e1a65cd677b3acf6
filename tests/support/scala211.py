"""A probe run against the real scala-library 2.11 (Debian's `scala-library`, /usr/share/java), the oracle
for the Scala 2.11/2.12 collection orders Kafka 2.1's tools print.

`Gen21Probe` reads one case a line and prints one answer a line:

* `ints|strings|tps<TAB>k1 k2 …`: the keys of a `mutable.HashMap` after `put`s in that order, as it
  iterates them (`tps` keys are `topic/partition`, with `TopicPartition.hashCode`);
* `gen<TAB>seed<TAB>startIndex<TAB>brokers<TAB>t1:p=r,r;p=r,r|t2:…`: Kafka 2.1's
  `ReassignPartitionsCommand.generateAssignment` on a cluster holding those topics (the file names
  them in this order), with the real collections: an immutable Map of the current assignment,
  `groupBy` on it, a rack-unaware `AdminUtils.assignReplicasToBrokers` (written from Kafka 2.1's
  source, drawing from `new java.util.Random(seed)` unless startIndex >= 0) into a `mutable.HashMap`,
  `map` with `collection.Map`'s builder, `++=` into a `mutable.HashMap`; prints the current and the
  proposed JSON as `formatAsReassignmentJson` does, separated by a TAB.
"""

from __future__ import annotations

import glob
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

PROBE = r"""import java.io.*;
import java.util.*;

@SuppressWarnings({"unchecked", "rawtypes"})
public class Gen21Probe {
  static final class TP {
    final String t; final int p;
    TP(String t, int p) { this.t = t; this.p = p; }
    public int hashCode() { return 31 * (31 + p) + t.hashCode(); }
    public boolean equals(Object o) { return o instanceof TP && ((TP) o).t.equals(t) && ((TP) o).p == p; }
    public String toString() { return t + "/" + p; }
  }
  static Random rand;

  static String keys(scala.collection.Iterator it) {
    StringBuilder b = new StringBuilder();
    while (it.hasNext()) { if (b.length() > 0) b.append(' '); b.append(it.next()); }
    return b.toString();
  }

  static int replicaIndex(int first, int secondShift, int j, int n) {
    int shift = 1 + (secondShift + j) % (n - 1);
    return (first + shift) % n;
  }

  static scala.collection.mutable.HashMap assign(int[] brokers, int nPartitions, int rf, int fixedStart) {
    scala.collection.mutable.HashMap ret = new scala.collection.mutable.HashMap();
    int n = brokers.length;
    int startIndex = fixedStart >= 0 ? fixedStart : rand.nextInt(n);
    int cur = 0;
    int shift = fixedStart >= 0 ? fixedStart : rand.nextInt(n);
    for (int i = 0; i < nPartitions; i++) {
      if (cur > 0 && cur % n == 0) shift += 1;
      int first = (cur + startIndex) % n;
      StringBuilder reps = new StringBuilder().append(brokers[first]);
      for (int j = 0; j < rf - 1; j++) reps.append(',').append(brokers[replicaIndex(first, shift, j, n)]);
      ret.put(Integer.valueOf(cur), reps.toString());
      cur++;
    }
    return ret;
  }

  static String json(scala.collection.Iterator it) {
    StringBuilder b = new StringBuilder("{\"version\":1,\"partitions\":[");
    boolean firstEntry = true;
    while (it.hasNext()) {
      scala.Tuple2 e = (scala.Tuple2) it.next();
      TP tp = (TP) e._1();
      String reps = (String) e._2();
      StringBuilder dirs = new StringBuilder();
      for (String r : reps.split(",")) dirs.append(dirs.length() > 0 ? "," : "").append("\"any\"");
      if (!firstEntry) b.append(',');
      firstEntry = false;
      b.append("{\"topic\":\"").append(tp.t).append("\",\"partition\":").append(tp.p)
       .append(",\"replicas\":[").append(reps).append("],\"log_dirs\":[").append(dirs).append("]}");
    }
    return b.append("]}").toString();
  }

  static String generate(String[] f) {
    rand = new Random(Long.parseLong(f[1]));
    int fixedStart = Integer.parseInt(f[2]);
    String[] bs = f[3].split(",");
    int[] brokers = new int[bs.length];
    for (int i = 0; i < bs.length; i++) brokers[i] = Integer.parseInt(bs[i]);
    Map<String, List<String[]>> znodes = new LinkedHashMap<>();
    scala.collection.mutable.Builder topicSet = scala.collection.immutable.Set$.MODULE$.newBuilder();
    for (String t : f[4].split("\\|")) {
      int c = t.indexOf(':');
      List<String[]> parts = new ArrayList<>();
      for (String p : t.substring(c + 1).split(";")) parts.add(p.split("="));
      znodes.put(t.substring(0, c), parts);
      topicSet.$plus$eq(t.substring(0, c));
    }
    // getReplicaAssignmentForTopics: the topics' set, each znode's partitions, `.toMap`
    scala.collection.immutable.Map current = (scala.collection.immutable.Map) scala.collection.immutable.Map$.MODULE$.empty();
    scala.collection.Iterator topics = ((scala.collection.immutable.Set) topicSet.result()).iterator();
    while (topics.hasNext()) {
      String t = (String) topics.next();
      for (String[] p : znodes.get(t)) current = current.$plus(new scala.Tuple2(new TP(t, Integer.parseInt(p[0])), p[1]));
    }
    scala.collection.immutable.Map grouped = current.groupBy(new scala.runtime.AbstractFunction1() {
      public Object apply(Object e) { return ((TP) ((scala.Tuple2) e)._1()).t; }
    });
    scala.collection.mutable.HashMap proposed = new scala.collection.mutable.HashMap();
    scala.collection.Iterator groups = grouped.iterator();
    while (groups.hasNext()) {
      scala.Tuple2 g = (scala.Tuple2) groups.next();
      final String topic = (String) g._1();
      scala.collection.immutable.Map assignment = (scala.collection.immutable.Map) g._2();
      String headReplicas = (String) ((scala.Tuple2) assignment.head())._2();
      int rf = headReplicas.split(",").length;
      scala.collection.mutable.HashMap assigned = assign(brokers, assignment.size(), rf, fixedStart);
      Object byPartition = assigned.map(new scala.runtime.AbstractFunction1() {
        public Object apply(Object e) {
          scala.Tuple2 t = (scala.Tuple2) e;
          return new scala.Tuple2(new TP(topic, (Integer) t._1()), t._2());
        }
      }, scala.collection.Map$.MODULE$.canBuildFrom());
      proposed.$plus$plus$eq((scala.collection.TraversableOnce) byPartition);
    }
    return json(current.iterator()) + "\t" + json(proposed.iterator());
  }

  public static void main(String[] a) throws Exception {
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, "UTF-8"));
    String line;
    while ((line = in.readLine()) != null) {
      String[] f = line.split("\t", -1);
      if (f[0].equals("gen")) { System.out.println(generate(f)); continue; }
      scala.collection.mutable.HashMap m = new scala.collection.mutable.HashMap();
      for (String s : f[1].split(" ")) {
        Object k;
        if (f[0].equals("ints")) k = Integer.valueOf(s);
        else if (f[0].equals("tps")) { int i = s.lastIndexOf('/'); k = new TP(s.substring(0, i), Integer.parseInt(s.substring(i + 1))); }
        else k = s;
        m.put(k, "");
      }
      System.out.println(keys(m.keysIterator()));
    }
  }
}
"""

Probe = Callable[[list[str]], list[str]]


def scala211_probe(work: Path) -> Probe:
    """Compile the probe in `work` and return a runner; skip the test when the jar or a JDK is missing."""
    jars = sorted(glob.glob("/usr/share/java/scala-library-2.11*.jar"))
    if not jars:
        pytest.skip("no scala-library 2.11 (Debian package scala-library) to check against")
    if shutil.which("javac") is None or shutil.which("java") is None:
        pytest.skip("no JDK (javac/java) on this machine")
    (work / "Gen21Probe.java").write_text(PROBE)
    subprocess.run(
        ["javac", "-nowarn", "-cp", jars[-1], "Gen21Probe.java"],
        cwd=work,
        check=True,
        capture_output=True,
        timeout=300,
    )

    def run(cases: list[str]) -> list[str]:
        done = subprocess.run(
            ["java", "-cp", f"{jars[-1]}:.", "Gen21Probe"],
            cwd=work,
            check=True,
            text=True,
            input="\n".join(cases) + "\n",
            capture_output=True,
            timeout=300,
        )
        return done.stdout.split("\n")[: len(cases)]

    return run


def gen_case(seed: int, start_index: int, brokers: list[int], topics: dict[str, dict[int, list[int]]]) -> str:
    """A `gen` line: `topics` in the file's order, each znode's partitions in this order."""
    spec = "|".join(
        f"{t}:" + ";".join(f"{p}={','.join(map(str, r))}" for p, r in parts.items())
        for t, parts in topics.items()
    )
    return f"gen\t{seed}\t{start_index}\t{','.join(map(str, brokers))}\t{spec}"


def gen_text(answer: str) -> str:
    """The probe's `gen` answer as Kafka 2.1's `--generate` prints it."""
    current, proposed = answer.split("\t")
    return (
        f"Current partition replica assignment\n{current}\n\n"
        f"Proposed partition reassignment configuration\n{proposed}\n"
    )
