"""`kafkatool replicas --bootstrap-server`: Kafka's kafka-replica-verification.sh over fake brokers.

The fakes (tests/support/fake_groups.py) answer a Fetch from a debugging replica (id -2, in
`ReplicaId` up to v14 and `ReplicaState` from v15) from every replica, each from its own log, at the
version negotiated with each release of kwire.MATRIX.  Expected lines are the templates of
ReplicaVerificationTool.scala at 3.3.1; expected checksums come from kafka-python's own batch decoder
reading the bytes the fake serves; the partition order of the max-lag report (a ConcurrentHashMap's)
is checked against a real ConcurrentHashMap on the JDK.
"""

from __future__ import annotations

import json
import random
import re
import shutil
import subprocess

import pytest

from kafkatool.cluster.replica_verify import Divergence, PartitionState, ReplicaVerifier, _Batch
from kafkatool.jvm import java_collections as jc
from kafkatool.jvm.hashing import topic_partition_hash
from tests.support.cli import run_console
from tests.support.fake_groups import FakeKafkaCluster
from tests.support.java_probe import JAVA_TP, compile_probe
from tests.support.kwire import MATRIX

STAMP = r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}: "  # SimpleDateFormat("yyyy-MM-dd HH:mm:ss,SSS")


def _crc(batch: bytes) -> int:
    """The batch's CRC as kafka-python reads it (an oracle apart from our reader)."""
    from kafka.record.default_records import DefaultRecordBatch

    return DefaultRecordBatch(batch).crc


@pytest.fixture(params=MATRIX)
def cluster(request: pytest.FixtureRequest):  # type: ignore[no-untyped-def]
    with FakeKafkaCluster(brokers=3, version=request.param) as k:
        k.add_topic("orders", 3, log_end=95)
        k.add_topic("audit", 1, log_end=40)
        for t in ("orders", "audit"):
            for fp in k.topics[t].values():
                fp.replicas = [fp.leader, (fp.leader + 1) % 3]
        yield k


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return run_console("replicas", *args)  # what `python -m kafkatool` prints and returns, in this process


def _unstamped(out: str) -> list[str]:
    lines = out.splitlines()
    assert all(re.match(STAMP, line) for line in lines), out
    return [re.sub("^" + STAMP, "", line) for line in lines]


def test_identical_replicas_from_the_log_start(cluster: FakeKafkaCluster) -> None:
    got = _run("--bootstrap-server", cluster.bootstrap, "--time", "-2", "--timeout", "10")
    assert got.returncode == 0, got.stderr
    lines = _unstamped(got.stdout)
    # the Scala tool (before 3.6) ends the line with a period, the Java one (3.6+) does not
    java = cluster.version not in ("2.1.1", "2.8", "3.3.1")
    assert lines[0] == "verification process is started" + ("" if java else ".")
    assert re.fullmatch(r"max lag is 0 for partition (orders-[012]|audit-0) at offset (95|40) among 4 partitions",
                        lines[1]), lines
    assert len(lines) == 2
    # every replica was asked as a debugging replica, at the version the release negotiates
    assert {b for b, _, _ in cluster.fetches} == {0, 1, 2}
    assert {r for _, _, r in cluster.fetches} == {-2}
    from kafka.protocol.consumer import FetchRequest

    newest = max(v for _, v, _ in cluster.fetches)
    assert newest == min(cluster.api_versions[1][1], FetchRequest.max_version)


def test_checksum_divergence_and_a_lagging_replica(cluster: FakeKafkaCluster) -> None:
    bad = cluster.partition("orders", 1)  # replicas [1, 2]; replica 2's records differ from offset 33
    bad.diverged_from[2] = 33
    cluster.partition("orders", 2).replica_end[0] = 60  # replicas [2, 0]; replica 0 ends at 60
    got = _run("--bootstrap-server", cluster.bootstrap, "--time", "-2", "--topic", "orders|audit")
    assert got.returncode == 1, got.stderr
    lines = _unstamped(got.stdout)
    want = [f"partition orders-1 has unmatched checksum at offset {min(base + 9, 94)}; "
            f"replica 1's checksum {_crc(bad.batch(base, 1))}; replica 2's checksum {_crc(bad.batch(base, 2))}"
            for base in range(30, 95, 10)]
    assert lines[1:-1] == want
    assert lines[-1] == "max lag is 35 for partition orders-2 at offset 60 among 4 partitions"
    rows = json.loads(_run("--bootstrap-server", cluster.bootstrap, "--time", "-2", "--topic", "orders",
                           "--format", "json").stdout)
    by = {r["partition"]: r for r in rows}
    assert [r["topic"] for r in rows] == ["orders"] * 3
    assert by[1]["first_divergence"] == {"kind": "checksum", "offset": 39, "replica_a": 1, "replica_b": 2,
                                         "value_a": _crc(bad.batch(30, 1)), "value_b": _crc(bad.batch(30, 2))}
    assert by[1]["checksum_mismatches"] == 7 and by[1]["diverged"]
    assert (by[2]["offset"], by[2]["high_watermark"], by[2]["lag"], by[2]["diverged"]) == (60, 95, 35, False)
    assert by[0]["lag"] == 0 and by[0]["first_divergence"] is None


def test_from_the_log_end_nothing_to_compare(cluster: FakeKafkaCluster) -> None:
    got = _run("--bootstrap-server", cluster.bootstrap, "--topic", "audit", "--time-limit", "0")
    assert got.returncode == 0, got.stderr
    assert _unstamped(got.stdout)[1:] == ["max lag is 0 for partition audit-0 at offset 40 among 1 partitions"]


# input errors do not depend on the release (every release answers Metadata in the tests above): run on one
@pytest.mark.parametrize("cluster", MATRIX[-1:], indirect=True)
def test_input_errors_are_one_line_and_exit_2(cluster: FakeKafkaCluster, tmp_path) -> None:  # type: ignore[no-untyped-def]
    for args, why in ((["--topic", "nothing.*"], "no topic matches"), (["--topic", "("], "invalid regex"),
                      (["--fetch-size", "0"], "--fetch-size"), ([str(tmp_path)], "not both")):
        got = _run("--bootstrap-server", cluster.bootstrap, *args)
        assert got.returncode == 2, (args, got.stderr)
        assert got.stderr.startswith("kafkatool: ") and why in got.stderr and got.stderr.count("\n") == 1


@pytest.mark.parametrize("cluster", MATRIX[2:3], indirect=True)
def test_kafkas_option_names(cluster: FakeKafkaCluster) -> None:
    """ReplicaVerificationTool's --broker-list and --topics-include (--topic-white-list before 3.x's rename)."""
    plain = _run("--bootstrap-server", cluster.bootstrap, "--topic", "audit", "--time", "-2", "--timeout", "10")
    for names in (("--broker-list", "--topics-include"), ("--broker-list", "--topic-white-list")):
        got = _run(names[0], cluster.bootstrap, names[1], "audit", "--time", "-2", "--timeout", "10")
        assert got.returncode == plain.returncode == 0, got.stderr
        assert _unstamped(got.stdout) == _unstamped(plain.stdout)
        assert "among 1 partitions" in got.stdout


def test_unreachable_is_exit_3() -> None:
    got = _run("--bootstrap-server", "127.0.0.1:1", "--timeout", "2")
    assert got.returncode == 3 and got.stderr.startswith("kafkatool: ") and got.stderr.count("\n") == 1


def test_an_offset_mismatch_stops_as_kafka_exits() -> None:
    """Batches that end at different offsets: Kafka prints the mismatch and exits 1; later partitions wait."""
    v = ReplicaVerifier.__new__(ReplicaVerifier)
    v.stopped = False
    st = PartitionState("t", 0, [1, 2], 0)
    lines: list[str] = []
    v._verify(st, {1: (20, [_Batch(9, 5), _Batch(19, 6)]), 2: (20, [_Batch(9, 5), _Batch(14, 6)])}, lines)
    assert lines == ["partition t-0: replica 1's offset 19 doesn't match replica 2's offset 14"]
    assert v.stopped and st.offset == 10
    assert st.divergence == Divergence("offset", 19, 1, 2, 19, 14)


# -- the partition order of the report: a real ConcurrentHashMap ------------------------------------------

CHM_PROBE = r"""import java.io.*;
import java.util.*;
import java.util.concurrent.ConcurrentHashMap;

public class ChmProbe {
""" + JAVA_TP + r"""  public static void main(String[] a) throws Exception {
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, "UTF-8"));
    String line;
    while ((line = in.readLine()) != null) {
      ConcurrentHashMap<TP, Integer> m = new ConcurrentHashMap<>();
      for (String s : line.split(" ")) { int i = s.lastIndexOf('/'); m.put(new TP(s.substring(0, i), Integer.parseInt(s.substring(i + 1))), 1); }
      StringBuilder b = new StringBuilder();
      for (TP tp : m.keySet()) { if (b.length() > 0) b.append(' '); b.append(tp); }
      System.out.println(b);
    }
  }
}
"""


def test_report_order_is_a_concurrent_hash_maps(tmp_path) -> None:  # type: ignore[no-untyped-def]
    if shutil.which("javac") is None or shutil.which("java") is None:
        pytest.skip("no JDK (javac/java) on this machine")
    chm = compile_probe(tmp_path, "ChmProbe", CHM_PROBE)
    rng = random.Random("chm-order")
    cases = []
    for _ in range(200):
        topics = ["".join(rng.choice("abcdefghij-_.0123") for _ in range(rng.randint(1, 10)))
                  for _ in range(rng.randint(1, 4))]
        cases.append(list(dict.fromkeys((t, p) for t in topics for p in range(rng.randint(1, 40)))))
    mismatched = 0
    for case, want in zip(cases, chm([" ".join(f"{t}/{p}" for t, p in c) for c in cases]), strict=True):
        ours = jc.concurrent_hash_order(case, lambda tp: topic_partition_hash(*tp))
        mismatched += " ".join(f"{t}/{p}" for t, p in ours) != want
    assert mismatched == 0


def test_start_at_a_time(cluster: FakeKafkaCluster) -> None:
    """--time T starts at the first record at or after T (the fake's record o is at first + o s)."""
    fp = cluster.partition("audit", 0)
    got = _run("--bootstrap-server", cluster.bootstrap, "--topic", "audit", "--time", str(fp.timestamp_of(25)),
               "--format", "json")
    assert got.returncode == 0, got.stderr
    (row,) = json.loads(got.stdout)
    assert (row["offset"], row["high_watermark"], row["lag"]) == (40, 40, 0)  # verified from 25 to the end
    later = _run("--bootstrap-server", cluster.bootstrap, "--topic", "audit", "--time", str(fp.timestamp_of(99)),
                 "--format", "json")
    assert later.returncode == 0 and json.loads(later.stdout)[0]["offset"] == 40
