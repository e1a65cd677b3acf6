"""The JVM orders kafka-topics.sh and kafka-configs.sh print in, checked against the JDK on this machine.

Java 8's `Properties` is a `Hashtable` (the ZooKeeper-era tools print config znodes in its order);
the Admin API tools print topics in the order of the `HashMap`s `KafkaAdminClient.describeTopics` and
`DescribeTopicsResult.allTopicNames()` build (3.3 and 4.0 differ by one copy), configs in
`Config.entries()`' `HashMap` order, and the refusal `--alter` prints first in the order of the `HashMap`
`CreatePartitionsResult.all()` waits on.  The probe replays those constructions with JDK classes only.
"""

from __future__ import annotations

import shutil
import subprocess

import pytest

from kafkatool.cluster.topics_text import (
    admin_topic_order,
    config_entries_order,
    create_partitions_result_order,
)
from kafkatool.jvm.hashtable import hashtable_order, properties_order
from kafkatool.release import Release

PROBE = """
import java.util.*;
public class Probe {
  public static void main(String[] a) throws Exception {
    Scanner in = new Scanner(System.in);
    while (in.hasNextLine()) {
      String[] parts = in.nextLine().split(" ", 2);
      List<String> keys = parts.length > 1 && !parts[1].isEmpty() ? Arrays.asList(parts[1].split(",")) : new ArrayList<>();
      Collection<String> out;
      if (parts[0].equals("properties")) {
        Properties p = new Properties(); for (String k : keys) p.setProperty(k, "v");
        List<String> l = new ArrayList<>(); for (Map.Entry<Object, Object> e : p.entrySet()) l.add((String) e.getKey()); out = l;
      } else if (parts[0].equals("hashtable")) {
        Hashtable<String, String> t = new Hashtable<>(); for (String k : keys) t.put(k, "v");
        List<String> l = new ArrayList<>(); for (Map.Entry<String, String> e : t.entrySet()) l.add(e.getKey()); out = l;
      } else if (parts[0].equals("config")) {
        Map<String, String> m = new HashMap<>(); for (String k : keys) m.put(k, "v"); out = m.keySet();
      } else if (parts[0].equals("partitions")) {
        List<String> sorted = new ArrayList<>(keys); Collections.sort(sorted);
        Map<String, String> futures = new HashMap<>(sorted.size());
        for (String k : sorted) futures.put(k, "f");
        out = new HashMap<>(futures).keySet();
      } else {
        List<String> sorted = new ArrayList<>(keys); Collections.sort(sorted);
        Map<String, String> futures = new HashMap<>(sorted.size());
        for (String k : sorted) if (!futures.containsKey(k)) futures.put(k, "f");
        if (parts[0].equals("topics40")) futures = new HashMap<>(futures);
        Map<String, String> all = new HashMap<>(futures.size());
        for (Map.Entry<String, String> e : futures.entrySet()) all.put(e.getKey(), e.getValue());
        out = all.keySet();
      }
      System.out.println(String.join(",", out));
    }
  }
}
"""

CASES = [
    [f"topic-{i * 7919 % 1000}" + ("x" if i % 3 == 0 else "") for i in range(n)] for n in (1, 3, 7, 12, 13, 25, 49, 100)
] + [["orders", "audit", "__consumer_offsets", "payments.v2", "payments_v1", "a", "b", "c", "Aa", "BB"]]
CONFIGS = [["retention.ms", "cleanup.policy"], ["min.insync.replicas", "retention.ms", "segment.bytes", "cleanup.policy",
           "leader.replication.throttled.replicas", "follower.replication.throttled.replicas", "max.message.bytes",
           "segment.ms", "retention.bytes", "compression.type", "message.timestamp.type", "flush.ms", "Aa", "BB"]]


@pytest.fixture(scope="module")
def jdk(tmp_path_factory):  # type: ignore[no-untyped-def]
    if shutil.which("javac") is None or shutil.which("java") is None:
        pytest.skip("no JDK on this machine")
    d = tmp_path_factory.mktemp("probe")
    (d / "Probe.java").write_text(PROBE)
    subprocess.run(["javac", "Probe.java"], cwd=d, check=True, capture_output=True, timeout=120)

    def ask(lines: list[str]) -> list[str]:
        got = subprocess.run(["java", "-cp", str(d), "Probe"], input="\n".join(lines) + "\n", capture_output=True,
                             text=True, check=True, timeout=60)
        return got.stdout.splitlines()

    return ask


def test_hashtable_order_is_java_hashtables(jdk) -> None:  # type: ignore[no-untyped-def]
    keys = CASES + CONFIGS + [[f"k{i}" for i in range(60)]]
    answers = jdk([f"hashtable {','.join(k)}" for k in keys])
    for k, line in zip(keys, answers, strict=True):
        assert ",".join(hashtable_order(k)) == line


def test_properties_order_is_the_jdks_properties(jdk) -> None:  # type: ignore[no-untyped-def]
    """Java 9+: a Properties iterates its ConcurrentHashMap (what Kafka 2.1's ZooKeeper tools print today)."""
    keys = CASES + CONFIGS + [[f"k{i}" for i in range(60)], ["segment.bytes", "cleanup.policy", "compression.type"]]
    answers = jdk([f"properties {','.join(k)}" for k in keys])
    for k, line in zip(keys, answers, strict=True):
        assert ",".join(properties_order(k)) == line
    # what kafka-topics.sh 2.1.1 printed for a topic created with these three overrides, on a real cluster
    assert properties_order(["segment.bytes", "cleanup.policy", "compression.type"]) == [
        "compression.type", "cleanup.policy", "segment.bytes"]


@pytest.mark.parametrize("release", ["3.3", "4.0"])
def test_admin_topic_order_is_describe_topics_hashmaps(jdk, release: str) -> None:  # type: ignore[no-untyped-def]
    kind = "topics40" if release == "4.0" else "topics33"
    answers = jdk([f"{kind} {','.join(c)}" for c in CASES])
    for names, line in zip(CASES, answers, strict=True):
        assert ",".join(admin_topic_order(names, Release(*map(int, release.split("."))))) == line


def test_config_entries_order_is_configs_hashmap(jdk) -> None:  # type: ignore[no-untyped-def]
    answers = jdk([f"config {','.join(c)}" for c in CONFIGS + CASES])
    for names, line in zip(CONFIGS + CASES, answers, strict=True):
        assert ",".join(config_entries_order(names)) == line


def test_create_partitions_result_order_is_the_clients_hashmap(jdk) -> None:  # type: ignore[no-untyped-def]
    answers = jdk([f"partitions {','.join(c)}" for c in CASES])
    for names, line in zip(CASES, answers, strict=True):
        assert ",".join(create_partitions_result_order(names)) == line
