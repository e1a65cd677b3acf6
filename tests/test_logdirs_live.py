"""`log-dirs --describe` (Kafka's kafka-log-dirs.sh) against oracles independent of our code.

* Order and text: a Java program compiled at test time runs the tool's own pipeline from Kafka's
  source (3.3.1 LogDirsCommand.scala's Scala 2.13 sets and `asScala.map`/`filter` over the admin
  client's Java HashMaps, via the scala-library jar pyspark ships; 4.0 LogDirsCommand.java's
  HashSets, HashMaps, `Collectors.toMap` and Jackson's ObjectMapper from pyspark's jars) on the
  same answers, and we compare byte for byte over seeded random clusters.
* The wire: the CLI against fake brokers of every release in kwire.MATRIX (DescribeLogDirs v0-v4
  shapes), the expected JSON built from what the fake holds, in the order the Java oracle gives.
"""

from __future__ import annotations

import glob
import importlib.util
import json
import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from kafkatool.cluster import logdirs as live
from kafkatool.release import parse_release
from tests.support.cli import run_console
from tests.support.fake_admin import FakeKafka
from tests.support.kwire import MATRIX

PROBE = r"""import java.io.*;
import java.util.*;
import java.util.stream.*;
import com.fasterxml.jackson.databind.ObjectMapper;
import scala.jdk.javaapi.CollectionConverters;

@SuppressWarnings({"unchecked", "rawtypes"})
public class LogDirsProbe {
  static final class TP {
    final String topic; final int partition;
    TP(String t, int p) { topic = t; partition = p; }
    public int hashCode() { return 31 * (31 + partition) + topic.hashCode(); }
    public boolean equals(Object o) { return o instanceof TP && ((TP) o).topic.equals(topic) && ((TP) o).partition == partition; }
    public String toString() { return topic + "-" + partition; }
  }
  static final class Replica { long size, lag; boolean future; }
  static final class Dir { String error; Map<TP, Replica> replicas; }
  static final String[] NAMES = {"", "org.apache.kafka.common.errors.KafkaStorageException"};

  static List<Integer> ints(String f) {
    List<Integer> out = new ArrayList<>();
    if (!f.isEmpty()) for (String s : f.split(" ")) out.add(Integer.valueOf(s));
    return out;
  }
  // broker data: b=dir|err|t:p:size:lag:fut,...;dir|...  brokers joined by '#'
  static Map<Integer, List<String[]>> parse(String f) {
    Map<Integer, List<String[]>> out = new LinkedHashMap<>();
    for (String b : f.split("#")) {
      String[] kv = b.split("=", 2);
      List<String[]> dirs = new ArrayList<>();
      for (String d : kv[1].split(";")) dirs.add(d.split("\\|", -1));
      out.put(Integer.valueOf(kv[0]), dirs);
    }
    return out;
  }
  // KafkaAdminClient.logDirDescriptions: HashMap(results.size()) of dir -> (error, HashMap of TP)
  static Map<String, Dir> describe(List<String[]> results) {
    Map<String, Dir> result = new HashMap<>(results.size());
    for (String[] r : results) {
      Dir d = new Dir();
      d.error = r[1].isEmpty() ? null : r[1];
      d.replicas = new HashMap<>();
      if (!r[2].isEmpty()) for (String x : r[2].split(",")) {
        String[] p = x.split(":");
        Replica rep = new Replica();
        rep.size = Long.parseLong(p[2]); rep.lag = Long.parseLong(p[3]); rep.future = p[4].equals("1");
        d.replicas.put(new TP(p[0], Integer.parseInt(p[1])), rep);
      }
      result.put(r[0], d);
    }
    return result;
  }
  // KafkaAdminClient.describeLogDirs + DescribeLogDirsResult.allDescriptions
  static Map<Integer, Map<String, Dir>> all(Collection<Integer> brokers, Map<Integer, List<String[]>> data) {
    Map<Integer, Map<String, Dir>> futures = new HashMap<>(brokers.size());
    for (Integer b : brokers) futures.put(b, describe(data.get(b)));
    Map<Integer, Map<String, Dir>> copy = new HashMap<>(futures);
    Map<Integer, Map<String, Dir>> descriptions = new HashMap<>(copy.size());
    for (Map.Entry<Integer, Map<String, Dir>> e : copy.entrySet()) descriptions.put(e.getKey(), e.getValue());
    return descriptions;
  }
  static String join(Collection<Integer> s) { return s.stream().map(String::valueOf).collect(Collectors.joining(",")); }

  static String scala33(String[] f) throws Exception {
    Set<String> topics = new HashSet<>(Arrays.asList(f[3].isEmpty() ? new String[0] : f[3].split(" ")));
    scala.collection.immutable.Set cluster = (scala.collection.immutable.Set) scala.collection.immutable.Set$.MODULE$.from(
        CollectionConverters.asScala(ints(f[1])));
    scala.collection.immutable.Set existing = cluster, missing = (scala.collection.immutable.Set) scala.collection.immutable.Set$.MODULE$.empty();
    if (!f[2].equals("-")) {
      scala.collection.immutable.Set input = (scala.collection.immutable.Set) scala.collection.immutable.Set$.MODULE$.from(
          CollectionConverters.asScala(ints(f[2])));
      existing = (scala.collection.immutable.Set) input.intersect(cluster);
      missing = (scala.collection.immutable.Set) input.diff(cluster);
    }
    if (missing.nonEmpty())
      return "ERROR: The given brokers do not exist from --broker-list: " + missing.mkString(",") + "."
          + " Current existent brokers: " + cluster.mkString(",") + "\n";
    List<Integer> queried = new ArrayList<>((Collection<Integer>) CollectionConverters.asJava(existing.toSeq()));
    scala.collection.mutable.Map jmap = CollectionConverters.asScala(all(queried, parse(f[4])));
    scala.Function1 toScala = t -> new scala.Tuple2(((scala.Tuple2) t)._1(), CollectionConverters.asScala((Map) ((scala.Tuple2) t)._2()));
    // MapOps.map (erased to return IterableOps; IterableOps.map returns Object): javac cannot tell them apart
    java.lang.reflect.Method mapToMap = null;
    for (java.lang.reflect.Method x : jmap.getClass().getMethods())
      if (x.getName().equals("map") && x.getReturnType() == scala.collection.IterableOps.class) mapToMap = x;
    scala.collection.Iterable byBroker = (scala.collection.Iterable) mapToMap.invoke(jmap, toScala);
    List<Object> brokers = new ArrayList<>();
    scala.collection.Iterator it = byBroker.iterator();
    while (it.hasNext()) {
      scala.Tuple2 be = (scala.Tuple2) it.next();
      List<Object> dirs = new ArrayList<>();
      scala.collection.Iterator dit = ((scala.collection.mutable.Map) be._2()).iterator();
      while (dit.hasNext()) {
        scala.Tuple2 de = (scala.Tuple2) dit.next();
        Dir d = (Dir) de._2();
        scala.Function1 keep = t -> topics.isEmpty() || topics.contains(((TP) ((scala.Tuple2) t)._1()).topic);
        scala.collection.Iterable kept = (scala.collection.Iterable) CollectionConverters.asScala(d.replicas).filter(keep);
        List<Object> parts = new ArrayList<>();
        scala.collection.Iterator pit = kept.iterator();
        while (pit.hasNext()) {
          scala.Tuple2 pe = (scala.Tuple2) pit.next();
          Replica r = (Replica) pe._2();
          Map<String, Object> m = new LinkedHashMap<>();
          m.put("partition", pe._1().toString()); m.put("size", r.size); m.put("offsetLag", r.lag); m.put("isFuture", r.future);
          parts.add(m);
        }
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("logDir", de._1()); m.put("error", d.error); m.put("partitions", parts);
        dirs.add(m);
      }
      Map<String, Object> m = new LinkedHashMap<>();
      m.put("broker", be._1()); m.put("logDirs", dirs);
      brokers.add(m);
    }
    Map<String, Object> top = new LinkedHashMap<>();
    top.put("version", 1); top.put("brokers", brokers);
    return "Querying brokers for log directories information\n"
        + "Received log directory information from brokers " + existing.mkString(",") + "\n"
        + new ObjectMapper().writeValueAsString(top) + "\n";
  }

  static String java40(String[] f) throws Exception {
    Set<String> topics = Arrays.stream(f[3].split(" ")).filter(x -> !x.isEmpty()).collect(Collectors.toSet());
    Set<Integer> clusterBrokers = ints(f[1]).stream().collect(Collectors.toSet());
    Set<Integer> inputBrokers = f[2].equals("-") ? new HashSet<>() : ints(f[2]).stream().collect(Collectors.toSet());
    Set<Integer> existingBrokers = inputBrokers.isEmpty() ? new HashSet<>(clusterBrokers) : new HashSet<>(inputBrokers);
    existingBrokers.retainAll(clusterBrokers);
    Set<Integer> nonExistingBrokers = new HashSet<>(inputBrokers);
    nonExistingBrokers.removeAll(clusterBrokers);
    if (!nonExistingBrokers.isEmpty())
      return String.format("ERROR: The given brokers do not exist from --broker-list: %s. Current existent brokers: %s",
          join(nonExistingBrokers), join(clusterBrokers)) + "\n";
    Map<Integer, Map<String, Dir>> byBroker = all(existingBrokers, parse(f[4]));
    List<Object> brokers = new ArrayList<>();
    for (Map.Entry<Integer, Map<String, Dir>> be : byBroker.entrySet()) {
      List<Object> dirs = new ArrayList<>();
      for (Map.Entry<String, Dir> de : be.getValue().entrySet()) {
        Map<TP, Replica> kept = de.getValue().replicas.entrySet().stream()
            .filter(e -> topics.isEmpty() || topics.contains(e.getKey().topic))
            .collect(Collectors.toMap(Map.Entry::getKey, Map.Entry::getValue));
        List<Object> parts = new ArrayList<>();
        for (Map.Entry<TP, Replica> pe : kept.entrySet()) {
          Map<String, Object> m = new HashMap<>();
          m.put("partition", pe.getKey().toString()); m.put("size", pe.getValue().size);
          m.put("offsetLag", pe.getValue().lag); m.put("isFuture", pe.getValue().future);
          parts.add(m);
        }
        Map<String, Object> m = new HashMap<>();
        m.put("logDir", de.getKey()); m.put("error", de.getValue().error); m.put("partitions", parts);
        dirs.add(m);
      }
      Map<String, Object> m = new HashMap<>();
      m.put("broker", (int) be.getKey()); m.put("logDirs", dirs);
      brokers.add(m);
    }
    Map<String, Object> top = new HashMap<>();
    top.put("version", 1); top.put("brokers", brokers);
    return "Querying brokers for log directories information\n"
        + String.format("Received log directory information from brokers %s%n", join(existingBrokers))
        + new ObjectMapper().writeValueAsString(top) + "\n";
  }

  public static void main(String[] a) throws Exception {
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, "UTF-8"));
    PrintStream out = new PrintStream(new BufferedOutputStream(System.out), false, "UTF-8");
    String line;
    while ((line = in.readLine()) != null) {
      String[] f = line.split("\t", -1);
      out.print(f[0].equals("3.3") ? scala33(f) : java40(f));
      out.print("\u0000\n");
    }
    out.flush();
  }
}
"""


def _jars() -> list[str] | None:
    spec = importlib.util.find_spec("pyspark")
    if spec is None or not spec.submodule_search_locations:
        return None
    root = Path(next(iter(spec.submodule_search_locations))) / "jars"
    wanted = ["scala-library-2.13.*.jar", "jackson-databind-*.jar", "jackson-core-*.jar", "jackson-annotations-*.jar"]
    found = [sorted(glob.glob(str(root / w))) for w in wanted]
    return [f[-1] for f in found] if all(found) else None


@pytest.fixture(scope="module")
def kafka_tool(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    """Runs cases through the Java oracle: a list of input lines -> each case's stdout."""
    if shutil.which("javac") is None or shutil.which("java") is None:
        pytest.skip("no JDK (javac/java) on this machine: cannot run the oracle")
    jars = _jars()
    if jars is None:
        pytest.skip("no scala-library 2.13 / Jackson jars (shipped with pyspark under pyspark/jars)")
    work = tmp_path_factory.mktemp("logdirs_probe")
    (work / "LogDirsProbe.java").write_text(PROBE)
    cp = ":".join(jars)
    subprocess.run(["javac", "-cp", cp, "LogDirsProbe.java"], cwd=work, check=True, capture_output=True, timeout=300)

    def run(cases: list[str]) -> list[str]:
        done = subprocess.run(["java", "-cp", f"{cp}:.", "LogDirsProbe"], cwd=work, input="\n".join(cases) + "\n",
                              capture_output=True, text=True, timeout=300, check=True)
        return done.stdout.split("\0\n")[:-1]

    return run


def _case(rng: random.Random) -> tuple[list[int], list[int] | None, list[str], dict[int, list[live.LogDirInfo]]]:
    kind = rng.choice(["small", "thousands", "wide"])
    n = rng.randint(1, 9) if rng.random() < 0.8 else rng.randint(10, 40)
    pool = {"small": range(0, 40), "thousands": range(1000, 1040), "wide": range(0, 100000)}[kind]
    nodes = rng.sample(list(pool), n)
    broker_list = None
    if rng.random() < 0.5:
        broker_list = rng.sample(nodes, rng.randint(1, n))
        if rng.random() < 0.3:
            broker_list.append(max(nodes) + rng.randint(1, 5))
        if rng.random() < 0.2:
            broker_list.append(broker_list[0])
    names = ["".join(rng.choice("abcdefghijklmnopqrstuvwxyz_.-0123456789") for _ in range(rng.randint(1, 12)))
             for _ in range(rng.randint(1, 6))]
    described = {}
    for b in nodes:
        dirs = []
        for i in range(rng.randint(1, 3)):
            path = rng.choice(["/var/lib/kafka/data", "/data", "/mnt/disk"]) + f"{i}-" + str(rng.randint(0, 999))
            if rng.random() < 0.15:
                dirs.append(live.LogDirInfo(path, 56, []))
                continue
            reps = [live.ReplicaDir(t, p, rng.randint(0, 1 << 40), rng.choice([0, 0, rng.randint(1, 9999)]),
                                    rng.random() < 0.1)
                    for t in rng.sample(names, rng.randint(0, len(names))) for p in range(rng.randint(1, 30))]
            dirs.append(live.LogDirInfo(path, 0, reps))
        described[b] = dirs
    topics = rng.sample(names, rng.randint(1, len(names))) if rng.random() < 0.3 else []
    return nodes, broker_list, topics, described


def _line(rel: str, nodes: list[int], broker_list: list[int] | None, topics: list[str],
          described: dict[int, list[live.LogDirInfo]]) -> str:
    def dir_text(d: live.LogDirInfo) -> str:
        reps = ",".join(f"{r.topic}:{r.partition}:{r.size}:{r.offset_lag}:{int(r.is_future)}" for r in d.replicas)
        return f"{d.path}|{live.exception_class(d.error_code) or ''}|{reps}"

    data = "#".join(f"{b}=" + ";".join(dir_text(d) for d in dirs) for b, dirs in described.items())
    return "\t".join([rel, " ".join(map(str, nodes)), "-" if broker_list is None else " ".join(map(str, broker_list)),
                      " ".join(topics), data])


def _ours(rel: str, nodes: list[int], broker_list: list[int] | None, topics: list[str],
          described: dict[int, list[live.LogDirInfo]]) -> str:
    text = parse_release(rel)
    choice = live.choose_brokers(nodes, broker_list, text)
    if choice.missing:
        return live.missing_brokers_line(choice) + "\n"
    return live.describe_text(described, choice, topics, text)


@pytest.mark.parametrize("rel", ["3.3", "4.0"])
def test_text_and_order_equal_kafkas_tool_pipeline(kafka_tool, rel: str) -> None:  # type: ignore[no-untyped-def]
    rng = random.Random(f"logdirs-{rel}")
    cases = [_case(rng) for _ in range(150)]
    expected = kafka_tool([_line(rel, *c) for c in cases])
    assert len(expected) == len(cases)
    for case, want in zip(cases, expected, strict=True):
        assert _ours(rel, *case) == want, case


# -- the CLI over the wire -------------------------------------------------------------------------


@pytest.fixture(params=MATRIX)
def cluster(request: pytest.FixtureRequest):  # type: ignore[no-untyped-def]
    with FakeKafka({1: None, 2: None, 1003: None}, log_dirs=("/data/a", "/data/b"), release=request.param) as k:
        k.add_topic("orders", {0: [1, 2], 1: [2, 1003], 2: [1003, 1]}, size=100)
        k.add_topic("audit", {0: [1, 2]}, size=7)
        k.partition("orders", 0).future_dir[1] = "/data/b"
        k.log_dir_errors[(2, "/data/b")] = 56
        yield k


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return run_console(*args)  # what `python -m kafkatool` prints and returns, in this process


def _answers(k: FakeKafka) -> dict[int, list[live.LogDirInfo]]:
    """What the fake holds, as DescribeLogDirs reports it (its results in log-dir, topic, partition order)."""
    out = {}
    for b in sorted(k.rack):
        dirs = []
        for d in k.log_dirs:
            if k.log_dir_errors.get((b, d)):
                dirs.append(live.LogDirInfo(d, k.log_dir_errors[(b, d)], []))
                continue
            reps = []
            for t in sorted(k.topics):
                for p, fp in sorted(k.topics[t].items()):
                    if fp.log_dir.get(b) == d:
                        reps.append(live.ReplicaDir(t, p, fp.size, 0, False))
                    if fp.future_dir.get(b) == d:
                        reps.append(live.ReplicaDir(t, p, 0, fp.size, True))
            dirs.append(live.LogDirInfo(d, 0, reps))
        out[b] = dirs
    return out


def test_describe_prints_kafkas_text_over_every_release(cluster: FakeKafka, kafka_tool) -> None:  # type: ignore[no-untyped-def]
    rel = "3.3" if parse_release(cluster.release) < parse_release("3.7") else "4.0"
    for extra, topics in (([], []), (["--topic-list", "orders"], ["orders"])):
        got = _run("log-dirs", "--describe", "--bootstrap-server", cluster.bootstrap, "--timeout", "10", *extra)
        assert got.returncode == 0, got.stderr
        (want,) = kafka_tool([_line(rel, [1, 2, 1003], None, topics, _answers(cluster))])
        assert got.stdout == want
        assert got.stderr == ""
    assert '"error":"org.apache.kafka.common.errors.KafkaStorageException"' in want
    assert '"isFuture":true' in want  # orders-0 moving to /data/b on broker 1
    forced = _run("--kafka-release", "3.3", "log-dirs", "--describe", "--bootstrap-server", cluster.bootstrap)
    (want33,) = kafka_tool([_line("3.3", [1, 2, 1003], None, [], _answers(cluster))])
    assert forced.stdout == want33


def test_unknown_brokers_are_kafkas_error_line_and_exit_2(cluster: FakeKafka) -> None:
    got = _run("log-dirs", "--describe", "--bootstrap-server", cluster.bootstrap, "--broker-list", "1,7")
    assert got.returncode == 2
    line = "ERROR: The given brokers do not exist from --broker-list: 7. Current existent brokers: 1,2,1003"
    if parse_release(cluster.release) < parse_release("3.7"):
        assert got.stdout == line + "\n"  # 3.3 prints it on stdout
    else:
        assert got.stdout == "" and line in got.stderr  # 4.0 throws a TerseException: stderr
    assert got.stderr.startswith("kafkatool: log-dirs: ") and got.stderr.count("\n") == 1


def test_rows_and_sums(cluster: FakeKafka) -> None:
    got = _run("log-dirs", "--describe", "--bootstrap-server", cluster.bootstrap, "--format", "json")
    assert got.returncode == 0, got.stderr
    rows = json.loads(got.stdout)
    assert {"broker": 1, "log_dir": "/data/b", "topic": "orders", "partition": 0, "is_future": True, "size": 0,
            "offset_lag": 100, "error": None} in rows
    assert {"broker": 2, "log_dir": "/data/b", "topic": None, "partition": None, "is_future": None, "size": None,
            "offset_lag": None, "error": "org.apache.kafka.common.errors.KafkaStorageException"} in rows
    assert len([r for r in rows if r["topic"] == "orders" and not r["is_future"]]) == 6
    got = _run("log-dirs", "--describe", "--bootstrap-server", cluster.bootstrap, "--format", "csv", "--by", "topic",
               "--topic-list", "audit")
    assert got.stdout.splitlines() == ["topic,partitions,size,future_size", "audit,2,14,0"]


def test_mixing_offline_and_live_is_refused(tmp_path: Path) -> None:
    got = _run("log-dirs", str(tmp_path), "--describe", "--bootstrap-server", "127.0.0.1:1")
    assert got.returncode == 2 and got.stderr.startswith("kafkatool: log-dirs: ") and "not both" in got.stderr
    got = _run("log-dirs", "--bootstrap-server", "127.0.0.1:1")
    assert got.returncode == 2 and "--describe" in got.stderr
    got = _run("log-dirs", "--describe", "--bootstrap-server", "127.0.0.1:1", "--retention-ms", "5")
    assert got.returncode == 2 and "--retention-ms" in got.stderr


def test_unreachable_is_one_line_and_exit_3() -> None:
    got = _run("log-dirs", "--describe", "--bootstrap-server", "127.0.0.1:1", "--timeout", "2")
    assert got.returncode == 3 and got.stderr.startswith("kafkatool: ") and got.stderr.count("\n") == 1


# -- sizes for reassign --strategy minimal ---------------------------------------------------------


@pytest.mark.parametrize("source", ["offline", "live"])
def test_minimal_plan_takes_sizes_from_a_log_dirs_file(tmp_path: Path, source: str) -> None:
    """The file's sizes (audit big, orders small) decide, not the brokers' (orders big): no DescribeLogDirs."""
    sizes_file = tmp_path / "sizes.json"
    if source == "offline":
        for t, parts, records in (("orders", range(4), 5), ("audit", range(2), 3000)):
            for p in parts:
                made = _run("generate", str(tmp_path / "ld"), "--topic", t, "--partition", str(p),
                            "--records", str(records))
                assert made.returncode == 0, made.stderr
        got = _run("log-dirs", str(tmp_path / "ld"), "--format", "json")
        on_disk = {(d.name.rsplit("-", 1)[0], int(d.name.rsplit("-", 1)[1])): sum(f.stat().st_size
                   for f in d.glob("*.log")) for d in (tmp_path / "ld").iterdir() if d.is_dir()}
    else:
        with FakeKafka({1: None, 2: None}, log_dirs=("/a", "/b")) as other:
            other.add_topic("orders", {p: [1, 2] for p in range(4)}, size=50)
            other.add_topic("audit", {0: [1, 2], 1: [2, 1]}, size=70000)
            other.partition("audit", 0).future_dir[1] = "/b"  # a future replica's row must not count
            got = _run("log-dirs", "--describe", "--bootstrap-server", other.bootstrap, "--format", "json")
        on_disk = {("orders", p): 50 for p in range(4)} | {("audit", p): 70000 for p in range(2)}
    assert got.returncode == 0, got.stderr
    sizes_file.write_text(got.stdout)
    with FakeKafka({1: "r1", 2: "r2", 3: "r1", 4: "r2"}, controller=2) as k:
        k.add_topic("orders", {0: [1, 2], 1: [2, 3], 2: [3, 4], 3: [4, 1]}, size=1000)
        k.add_topic("audit", {0: [1, 2], 1: [2, 1]}, size=10)
        (tmp_path / "t.json").write_text('{"topics":[{"topic":"orders"},{"topic":"audit"}],"version":1}')
        r = subprocess.run([sys.executable, "-m", "kafkatool", "reassign", "--bootstrap-server", k.bootstrap,
                            "--generate", "--topics-to-move-json-file", "t.json", "--broker-list", "1,2,3,4",
                            "--strategy", "minimal", "--log-dir-sizes", str(sizes_file), "--format", "json",
                            # broker balance alone: which replicas move is then decided by size (the
                            # topic-balance goal would also move audit, whatever its size)
                            "--no-topic-balance", "--no-plan-file"], capture_output=True, text=True, timeout=120,
                           cwd=tmp_path)
        assert r.returncode == 0, r.stderr
        assert not [key for key, _ in k.requests if key == 35]  # the brokers were not asked
    doc = json.loads(r.stdout)
    current = {("orders", 0): [1, 2], ("orders", 1): [2, 3], ("orders", 2): [3, 4], ("orders", 3): [4, 1],
               ("audit", 0): [1, 2], ("audit", 1): [2, 1]}
    proposed = dict(current) | {(e["topic"], e["partition"]): e["replicas"] for e in doc["proposed"]["partitions"]}
    moved = [tp for tp in current if set(proposed[tp]) != set(current[tp])]
    assert moved and all(t == "orders" for t, _ in moved)  # the small ones by the file
    assert doc["summary"]["bytes_to_move"] == sum(on_disk[tp] * len(set(proposed[tp]) - set(current[tp]))
                                                  for tp in moved)


def test_sizes_parse_kafkas_whole_stdout_and_skip_future_and_failed_dirs() -> None:
    from kafkatool.cluster.model import TopicPartition
    from kafkatool.cluster.reassign import parse_sizes

    described = {1: [live.LogDirInfo("/a", 0, [live.ReplicaDir("t", 0, 500, 0, False),
                                                live.ReplicaDir("t", 1, 9, 0, True)]),
                     live.LogDirInfo("/b", 56, [])],
                 2: [live.LogDirInfo("/a", 0, [live.ReplicaDir("t", 0, 700, 0, False)])]}
    choice = live.choose_brokers([1, 2], None, parse_release("4.0"))
    assert parse_sizes(live.describe_text(described, choice, [], parse_release("4.0"))) == {TopicPartition("t", 0): 700}
    assert parse_sizes(json.dumps(live.rows(described))) == {TopicPartition("t", 0): 700}


def test_a_broker_that_fails_the_request_is_one_line_and_exit_3(cluster: FakeKafka) -> None:
    cluster.fail_request[35] = 10  # the broker drops the connection on DescribeLogDirs
    got = _run("log-dirs", "--describe", "--bootstrap-server", cluster.bootstrap, "--timeout", "5")
    assert got.returncode == 3, got.stderr
    assert got.stdout == "Querying brokers for log directories information\n"  # as Kafka's tool, then it fails
    assert got.stderr.startswith("kafkatool: log-dirs: describe log dirs: broker ")
    assert got.stderr.count("\n") == 1


def test_sums_as_text(cluster: FakeKafka) -> None:
    got = _run("log-dirs", "--describe", "--bootstrap-server", cluster.bootstrap, "--by", "broker")
    assert got.returncode == 0, got.stderr
    lines = [line.split() for line in got.stdout.splitlines()]
    assert lines[0] == ["BROKER", "PARTITIONS", "SIZE", "FUTURE"]
    assert {tuple(r[:2]) for r in lines[1:]} == {("1", "3"), ("2", "3"), ("1003", "2")}


@pytest.mark.parametrize("release", ["2.1.1", "3.3.1"])
def test_brokers_are_in_the_admin_clients_hashmap_order(release: str) -> None:
    """Brokers that list themselves 0,2,1 (as a real 2.1.1 cluster's did): Kafka's tool printed `from
    brokers 0,1,2` there — describeCluster().nodes() are a HashMap<Integer, Node>'s values."""
    with FakeKafka({0: None, 1: None, 2: None}, release=release) as k:
        k.broker_order = [0, 2, 1]
        k.add_topic("orders", {0: [0, 1]}, size=1)
        got = _run("log-dirs", "--describe", "--bootstrap-server", k.bootstrap, "--timeout", "10")
    assert got.returncode == 0, got.stderr
    assert got.stdout.splitlines()[1] == "Received log directory information from brokers 0,1,2"
