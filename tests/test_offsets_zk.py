"""ZooKeeper-stored groups (old consumers) against a real ZooKeeper server; the brokers that answer
ListOffsets/Fetch are the protocol-faithful fake, registered in ZooKeeper as real brokers register."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import kafkatool.cli.offsets  # noqa: F401  (registers the command)
import kafkatool.cli.offsets_end  # noqa: F401
import kafkatool.cli.offsets_export  # noqa: F401
import kafkatool.cli.offsets_reset  # noqa: F401
from tests.support.cli import run_kafkatool
from tests.support.fake_groups import FakeKafkaCluster
from tests.support.zk_cluster import ZkKafka

pytestmark = pytest.mark.zookeeper



def cli(*args: str) -> tuple[int, str, str]:
    r = run_kafkatool(*args)
    return r.code, r.out, r.err


@pytest.fixture
def zk_cluster(zk_chroot: str):  # type: ignore[no-untyped-def]
    """A Kafka 2.1-like cluster: fake brokers registered in a fresh ZooKeeper chroot as brokers register."""
    zkk = ZkKafka(zk_chroot)
    with FakeKafkaCluster(brokers=2, version=(2, 1)) as c:
        c.add_topic("old-v1", 2, log_end=[84, 80])
        c.add_topic("other", 1, log_end=5)
        for i in c.brokers:
            host, port = c.endpoint(i)
            zkk.add_broker(i, host=host, port=port, version=1)
        for t, parts in c.topics.items():
            zkk.create_topic(t, {p: fp.replicas for p, fp in parts.items()})
        zk = zkk.zk
        # an active old consumer group: registered consumer, one owned partition, offsets for both
        zk.create("/consumers/active/ids/active_host-1-abc", b'{"version":1,"subscription":{"old-v1":1}}', makepath=True)
        zk.create("/consumers/active/owners/old-v1/0", b"active_host-1-abc-0", makepath=True)
        zk.create("/consumers/active/offsets/old-v1/0", b"80", makepath=True)
        zk.create("/consumers/active/offsets/old-v1/1", b"76", makepath=True)
        # a stopped group: owners dir for the topic, no ids, one partition without an offset
        zk.ensure_path("/consumers/stopped/owners/old-v1")
        zk.ensure_path("/consumers/stopped/ids")
        zk.create("/consumers/stopped/offsets/old-v1/1", b"10", makepath=True)
        zk.create("/consumers/stopped/offsets/other/0", b"3", makepath=True)
        yield zk_chroot, c, zk
    zkk.close()


def test_consumer_offset_checker_text(zk_cluster: tuple[str, FakeKafkaCluster, Any]) -> None:
    connect, c, _ = zk_cluster
    rc, out, err = cli("offsets", "--zookeeper", connect, "--group", "active", "--broker-info")
    assert rc == 0, err
    from kafkatool.ops.offsets_report import scala211_int_map_order

    leaders = [c.partition("old-v1", p).leader for p in (0, 1)]
    info = "".join(f"{b} -> 127.0.0.1:{c.endpoint(b)[1]}\n" for b in scala211_int_map_order(leaders))
    assert out == (
        "Group           Topic                          Pid Offset          logSize         Lag             Owner\n"
        "active          old-v1                         0   80              84              4               active_host-1-abc-0\n"
        "active          old-v1                         1   76              80              4               none\n"
        "BROKER INFO\n" + info
    )
    rc, out, _ = cli("offsets", "--zookeeper", connect, "--group", "stopped")
    assert out == (
        "Group           Topic                          Pid Offset          logSize         Lag             Owner\n"
        "stopped         old-v1                         0   -1              84              unknown         none\n"
        "stopped         old-v1                         1   10              80              70              none\n"
    )
    rc, out, _ = cli("offsets", "--zookeeper", connect, "--group", "stopped", "--topic", "other", "--format", "json")
    (row,) = json.loads(out)
    assert (row["topic"], row["current_offset"], row["log_end_offset"], row["lag"], row["state"]) == ("other", 3, 5, 2, "Empty")
    # an old consumer with offsets.storage=kafka: the broker's offsets win over the znodes
    c.add_group("active", offsets={("old-v1", 1): (79, "")})
    rc, out, _ = cli("offsets", "--zookeeper", connect, "--group", "active")
    assert out.splitlines()[1:] == [
        "active          old-v1                         0   80              84              4               active_host-1-abc-0",
        "active          old-v1                         1   79              80              1               none",
    ]
    rc, out, err = cli("offsets", "--zookeeper", connect, "--group", "nope")
    assert rc == 2 and out == "" and err == "kafkatool: group 'nope': does not exist\n"


def test_time_lag_through_zookeeper_registered_brokers(zk_cluster: tuple[str, FakeKafkaCluster, Any]) -> None:
    connect, c, _ = zk_cluster
    rc, out, err = cli("offsets", "--zookeeper", connect, "--all-groups", "--time-lag", "--format", "json")
    assert rc == 0, err
    rows = {(r["group"], r["topic"], r["partition"]): r for r in json.loads(out)}
    assert rows[("active", "old-v1", 0)]["committed_timestamp"] == c.partition("old-v1", 0).timestamp_of(80)
    assert rows[("stopped", "old-v1", 0)]["time_lag_ms"] is None


def test_export_and_reset_write_the_offset_znodes(zk_cluster: tuple[str, FakeKafkaCluster, Any], tmp_path: Path) -> None:
    connect, _, zk = zk_cluster
    rc, out, _ = cli("offsets", "export", "--zookeeper", connect, "--all-groups", "--format", "zk")
    assert out == ("/consumers/active/offsets/old-v1/0:80\n/consumers/active/offsets/old-v1/1:76\n"
                   "/consumers/stopped/offsets/old-v1/1:10\n/consumers/stopped/offsets/other/0:3\n")
    saved = tmp_path / "stopped.txt"
    rc, _, _ = cli("offsets", "export", "--zookeeper", connect, "--group", "stopped", "--format", "zk", "--output", str(saved))
    assert rc == 0

    rc, out, err = cli("offsets", "reset", "--zookeeper", connect, "--group", "active", "--all-topics", "--to-latest", "--execute")
    assert rc == 1 and "registered consumer" in err
    assert zk.get("/consumers/active/offsets/old-v1/0")[0] == b"80"

    rc, out, err = cli("offsets", "reset", "--zookeeper", connect, "--group", "stopped", "--topic", "old-v1", "--to-latest", "--execute")
    assert rc == 0, err
    assert zk.get("/consumers/stopped/offsets/old-v1/0")[0] == b"84"  # created
    assert zk.get("/consumers/stopped/offsets/old-v1/1")[0] == b"80"

    rc, out, err = cli("offsets", "reset", "--zookeeper", connect, "--group", "stopped", "--from-file", str(saved), "--execute")
    assert rc == 0, err
    assert zk.get("/consumers/stopped/offsets/old-v1/1")[0] == b"10"
    assert zk.get("/consumers/stopped/offsets/other/0")[0] == b"3"

    rc, out, err = cli("offsets", "reset", "--zookeeper", connect, "--group", "stopped", "--topic", "other:0",
                       "--to-offset", "99")
    assert rc == 0 and "higher than latest" in err and out.splitlines()[-1].split() == ["stopped", "other", "0", "5"]
    assert zk.get("/consumers/stopped/offsets/other/0")[0] == b"3"  # dry run


def test_end_offsets_via_zookeeper(zk_cluster: tuple[str, FakeKafkaCluster, Any]) -> None:
    connect, _, _ = zk_cluster
    rc, out, err = cli("offsets", "end", "--zookeeper", connect, "--topic", "old-v1", "--time", "-1")
    assert (rc, out) == (0, "old-v1:0:84\nold-v1:1:80\n"), err


def test_unreachable_zookeeper_is_one_line_and_exit_3(refused_port: int) -> None:
    port = refused_port
    rc, out, err = cli("offsets", "--zookeeper", f"127.0.0.1:{port}", "--group", "g", "--timeout", "2")
    assert rc == 3 and out == "" and err.startswith("kafkatool: ") and err.count("\n") == 1


# --------------------------------------------------------------------------------------------------
# ZooKeeper data Kafka never writes: one line naming the znode, exit 3, nothing printed or skipped


def _one_line(rc: int, out: str, err: str, code: int, *needles: str) -> None:
    assert (rc, out) == (code, ""), err
    assert err.startswith("kafkatool: ") and err.count("\n") == 1 and "unexpected" not in err, err
    for n in needles:
        assert n in err, err


def test_an_offset_znode_that_is_not_a_number(zk_cluster: tuple[str, FakeKafkaCluster, Any]) -> None:
    connect, _, zk = zk_cluster
    zk.set("/consumers/stopped/offsets/other/0", b"notanumber")
    for args in (("offsets", "export", "--group", "stopped"), ("offsets", "export", "--group", "stopped", "--format", "zk"),
                 ("offsets", "export", "--group", "stopped", "--format", "json"),
                 ("offsets", "--group", "stopped", "--topic", "other"),
                 ("offsets", "reset", "--group", "stopped", "--all-topics", "--to-latest")):
        _one_line(*cli(*args, "--zookeeper", connect), 3, "/consumers/stopped/offsets/other/0", "'notanumber' is not an offset")
    zk.set("/consumers/stopped/offsets/other/0", b"3")
    zk.create("/consumers/stopped/offsets/other/x", b"1")
    _one_line(*cli("offsets", "export", "--zookeeper", connect, "--group", "stopped"), 3,
              "/consumers/stopped/offsets/other/x", "'x' is not a partition number")


@pytest.mark.parametrize("data, why", [
    (b"notjson", "not JSON"),
    (b'{"version":1,"partitions":{"x":[0]}}', "partition 'x' is not a partition number"),
    (b'{"version":1,"partitions":{"0":"0"}}', "are not a list of broker ids"),
    (b'[1]', "a JSON list, not an object"),
])
def test_a_topic_znode_kafka_never_wrote(zk_cluster: tuple[str, FakeKafkaCluster, Any], data: bytes, why: str) -> None:
    connect, _, zk = zk_cluster
    zk.set("/brokers/topics/other", data)
    _one_line(*cli("offsets", "--zookeeper", connect, "--group", "stopped", "--topic", "other"), 3,
              "ZooKeeper znode /brokers/topics/other: ", why)
    _one_line(*cli("reassign", "--zookeeper", connect, "--list"), 3, "/brokers/topics/other", why)


def test_a_broker_and_a_state_znode_kafka_never_wrote(zk_cluster: tuple[str, FakeKafkaCluster, Any]) -> None:
    connect, _, zk = zk_cluster
    zk.set("/brokers/topics/other/partitions/0/state", b"{")
    _one_line(*cli("offsets", "--zookeeper", connect, "--group", "stopped", "--topic", "other"), 3,
              "/brokers/topics/other/partitions/0/state")
    zk.delete("/brokers/topics/other", recursive=True)
    zk.set("/brokers/ids/0", b"{}}")
    _one_line(*cli("offsets", "--zookeeper", connect, "--group", "stopped"), 3, "/brokers/ids/0: not JSON")


def test_a_chroot_that_does_not_exist_is_refused(zk_cluster: tuple[str, FakeKafkaCluster, Any]) -> None:
    connect, _, _ = zk_cluster
    typo = connect + "-typo"
    for args in (("reassign", "--list"), ("offsets", "--all-groups"), ("offsets", "end")):
        rc, out, err = cli(*args, "--zookeeper", typo)
        _one_line(rc, out, err, 2, f"chroot /{typo.split('/', 1)[1]} does not exist")
        assert "Warning" not in err


def test_zookeeper_groups_with_no_broker_answering(zk_cluster: tuple[str, FakeKafkaCluster, Any], tmp_path: Path) -> None:
    """Committed offsets of old consumers live in ZooKeeper: read, export and restore them with
    ZooKeeper alone; log-end offsets and lag are `unknown` (as ConsumerOffsetChecker showed)."""
    connect, c, zk = zk_cluster
    c.stop()  # the registered brokers now refuse connections
    rc, out, err = cli("offsets", "--zookeeper", connect, "--group", "stopped", "--timeout", "5")
    assert rc == 0, err
    assert out == (
        "Group           Topic                          Pid Offset          logSize         Lag             Owner\n"
        "stopped         old-v1                         0   -1              unknown         unknown         none\n"
        "stopped         old-v1                         1   10              unknown         unknown         none\n"
    )
    assert err.startswith("kafkatool: note: ") and err.endswith("log-end offsets and lag are unknown\n") and err.count("\n") == 1
    rc, out, err = cli("offsets", "export", "--zookeeper", connect, "--group", "stopped", "--format", "json", "--timeout", "5")
    assert rc == 0, err
    rows = {(r["topic"], r["partition"]): r for r in json.loads(out)["offsets"]}
    assert rows[("old-v1", 1)]["offset"] == 10 and rows[("old-v1", 1)]["log_end_offset"] is None
    assert rows[("other", 0)]["offset"] == 3
    plan = tmp_path / "plan.json"
    plan.write_text(out)
    zk.set("/consumers/stopped/offsets/old-v1/1", b"0")
    rc, out, err = cli("offsets", "reset", "--zookeeper", connect, "--group", "stopped", "--from-file", str(plan),
                       "--execute", "--timeout", "5")
    assert rc == 0, err
    assert zk.get("/consumers/stopped/offsets/old-v1/1")[0] == b"10" and zk.get("/consumers/stopped/offsets/other/0")[0] == b"3"
    assert "not checked against the logs" in err
    rc, out, err = cli("offsets", "reset", "--zookeeper", connect, "--group", "stopped", "--all-topics", "--to-latest",
                       "--timeout", "5")
    _one_line(rc, out, err, 3, "cannot reach any broker")


def test_offsets_watch_over_zookeeper(zk_cluster: tuple[str, FakeKafkaCluster, Any],
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """Lag status for ZooKeeper-stored groups: offsets from the znodes, log ends from the brokers;
    committed offsets that do not move while lag stays (84-80, 80-76) are STALL, the group ERR.
    The rounds run on a clock of the test's own (no wall time between samples)."""
    import kafkatool.cli.offsets_watch as offsets_watch
    from tests.support.clock import FakeClock

    clock = FakeClock(1_700_000_000_000)
    monkeypatch.setattr(offsets_watch, "CLOCK", clock)
    connect, _c, _zk = zk_cluster
    rc, out, err = cli("offsets", "watch", "--zookeeper", connect, "--group", "active", "--window", "2",
                       "--interval", "30", "--format", "ndjson", "--timeout", "10")
    assert rc == 4, err
    rows = [json.loads(line) for line in out.splitlines()]
    samples = [r for r in rows if r["type"] == "sample"]
    assert {(r["partition"], r["offset"], r["lag"]) for r in samples} == {(0, 80, 4), (1, 76, 4)}
    parts = {r["partition"]: r["status"] for r in rows if r["type"] == "partition"}
    assert parts == {0: "STALL", 1: "STALL"}
    assert {r["time_ms"] for r in samples} == {1_700_000_000_000, 1_700_000_030_000} and clock.slept == 30
    assert {r["evidence"] for r in rows if r["type"] != "sample"} == {"samples"}
    assert rows[-1]["type"] == "group" and rows[-1]["status"] == "ERR"


def test_zookeeper_groups_get_the_scala_tools_text(zk_cluster: tuple[str, FakeKafkaCluster, Any]) -> None:
    """No ZooKeeper cluster runs 4.0 (cluster/zkrelease.py): a reset plan is 3.3's text (rows sorted), not
    4.0's (HashMap order), unless --kafka-release asks."""
    connect, _, _ = zk_cluster
    args = ("offsets", "reset", "--zookeeper", connect, "--group", "stopped", "--all-topics", "--to-latest",
            "--export")
    default, scala, java = cli(*args), cli("--kafka-release", "3.3", *args), cli("--kafka-release", "4.0", *args)
    assert default[0] == 0, default[2]
    assert default == scala and scala[1] == "old-v1,1,80\nother,0,5\n\n"  # 3.3's rows, sorted here
    assert java[1] == "other,0,5\nold-v1,1,80\n\n"  # 4.0's HashMap order
