"""`offsets streams` (kafka-streams-groups.sh --list/--describe) over fake brokers of 4.2-4.4.

The fakes answer StreamsGroupDescribe at the negotiated version (v1 with AssignorName on 4.4) from
tests/support/kwire.py's description of the spec; the expected text is written out from
StreamsGroupCommand's format strings, the offsets' row order from Java's HashMap and
TopicPartition.hashCode computed here."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

import kafkatool.cli.offsets  # noqa: F401  (registers the command)
import kafkatool.cli.offsets_groups  # noqa: F401
import kafkatool.cli.offsets_streams  # noqa: F401
from tests.support.cli import Result, run_kafkatool
from tests.support.fake_groups import FakeKafkaCluster


def _java_string_hash(s: str) -> int:
    h = 0
    for ch in s:
        h = (31 * h + ord(ch)) & 0xFFFFFFFF
    return h


def _hashmap_order(tps: list[tuple[str, int]]) -> list[tuple[str, int]]:
    """java.util.HashMap (16 buckets, fewer than 13 keys) iteration order of TopicPartitions."""
    def bucket(tp: tuple[str, int]) -> int:
        h = (31 * (31 + tp[1]) + _java_string_hash(tp[0])) & 0xFFFFFFFF
        return (h ^ (h >> 16)) & 15
    assert len(tps) < 13
    return sorted(tps, key=bucket)  # stable: insertion order within a bucket


@pytest.fixture(params=("4.2", "4.3", "4.4"))
def cluster(request: pytest.FixtureRequest) -> Iterator[FakeKafkaCluster]:
    with FakeKafkaCluster(brokers=2, version=request.param) as c:
        c.add_topic("words", 3, log_end=100)
        c.add_topic("counts-repartition", 2, log_end=20)
        c.add_streams_group("wordcount", {"0": ["words"], "1": ["counts-repartition"]},
                            [("m1", "proc-a", "wc-client-1", [("0", [0, 1])]),
                             ("m2", "proc-b", "wc-client-2", [("0", [2]), ("1", [0, 1])])],
                            offsets={("words", 0): (90, ""), ("words", 1): (80, ""), ("counts-repartition", 0): (5, "")})
        c.add_streams_group("idle", {"0": ["words"]}, [], state="Empty")
        yield c


def streams(c: FakeKafkaCluster, *args: str) -> Result:
    return run_kafkatool("offsets", "streams", *args, "--bootstrap-server", c.bootstrap)


def test_list(cluster: FakeKafkaCluster) -> None:
    assert sorted(streams(cluster, "--list").out.splitlines()) == ["idle", "wordcount"]
    lines = streams(cluster, "--list", "--state").out.splitlines()
    assert lines[0] == "GROUP           STATE" and sorted(lines[1:]) == ["idle            Empty", "wordcount       Stable"]


def test_describe_offsets_lag_from_the_committed_or_the_log_start_offset(cluster: FakeKafkaCluster) -> None:
    r = streams(cluster, "--describe", "--group", "wordcount")
    assert r.code == 0, r.err
    lag = {("words", 0): "10", ("words", 1): "20", ("words", 2): "100", ("counts-repartition", 0): "15",
           ("counts-repartition", 1): "20"}
    order = _hashmap_order(sorted(lag))
    assert r.out == "GROUP           TOPIC              PARTITION  OFFSET-LAG\n" + "".join(
        f"wordcount       {t:<18} {p:<10} {lag[(t, p)]}\n" for t, p in order)
    r = streams(cluster, "--describe", "--group", "wordcount", "--verbose")
    current = {("words", 0): "90", ("words", 1): "80", ("counts-repartition", 0): "5"}
    assert r.out.splitlines()[0] == ("GROUP           TOPIC              PARTITION  CURRENT-OFFSET  LEADER-EPOCH    "
                                     "LOG-END-OFFSET  OFFSET-LAG     ")
    assert r.out.splitlines()[1:] == [
        f"wordcount       {t:<18} {p:<10} {current.get((t, p), '-'):<15} {'-':<15} {100 if t == 'words' else 20:<15} "
        f"{lag[(t, p)]:<15}" for t, p in order]
    assert streams(cluster, "--describe", "--group", "idle").out == ""  # no members: the tool prints nothing


def test_describe_members_and_state(cluster: FakeKafkaCluster) -> None:
    r = streams(cluster, "--describe", "--group", "wordcount", "--members")
    assert r.out == ("GROUP           MEMBER          PROCESS         CLIENT-ID       ASSIGNMENTS\n"
                     "wordcount       m1              proc-a          wc-client-1     ACTIVE: 0:[0,1]; \n"
                     "wordcount       m2              proc-b          wc-client-2     ACTIVE: 0:[2]; 1:[0,1]; \n")
    r = streams(cluster, "--describe", "--group", "wordcount", "--members", "--verbose")
    assert r.out.splitlines()[1] == ("wordcount       7                         1              m1              streams  "
                                     "       7               proc-a          wc-client-1     ACTIVE: 0:[0,1]; "
                                     "TARGET-ACTIVE: 0:[0,1]; ")
    c = cluster.coordinator_of("idle")
    coordinator = f"127.0.0.1:{cluster.brokers[c].port} ({c})"
    r = streams(cluster, "--describe", "--group", "idle", "--state")
    if cluster.version == "4.4":  # the ASSIGNOR column (StreamsGroupDescribe v1)
        assert r.out == ("\nError: Streams group 'idle' has no active members.\n"
                         f"GROUP           COORDINATOR (ID)          ASSIGNOR        STATE                     #MEMBERS\n"
                         f"idle            {coordinator:<25} sticky          Empty                     0\n")
    else:
        assert r.out == ("\nError: Streams group 'idle' has no active members.\n"
                         f"GROUP           COORDINATOR (ID)          STATE                     #MEMBERS\n"
                         f"idle            {coordinator:<25} Empty                     0\n")
    r = streams(cluster, "--describe", "--group", "nope")
    assert (r.code, r.err) == (2, "kafkatool: offsets streams: group 'nope': does not exist\n")


def test_a_broker_without_streams_groups_is_named() -> None:
    for release, name in (("4.0.0", "4.0"), ("4.1", "4.1")):  # 4.1 hides StreamsGroupDescribe v0 (unstable)
        with FakeKafkaCluster(brokers=1, version=release) as c:
            r = streams(c, "--list")
            bootstrap = c.bootstrap
        assert (r.code, r.err) == (2, "kafkatool: offsets streams: streams groups need StreamsGroupDescribe (Kafka >= "
                                      f"4.2); the brokers at {bootstrap} are Kafka {name} (or another release before 4.2)\n")


def test_delete_checks_each_group_then_deletes_the_empty_ones(cluster: FakeKafkaCluster) -> None:
    r = streams(cluster, "--delete", "--group", "idle", "--group", "wordcount", "--group", "nope")
    assert r.code == 1
    # failures in a HashMap<String, …>'s order: "wordcount" (String.hashCode 893673541: bucket 1 of 16)
    # before "nope" (3387254: bucket 5)
    assert r.out == ("\nError: Deletion of some streams groups failed:\n"
                     "* Group 'wordcount' could not be deleted due to: org.apache.kafka.common.errors."
                     "GroupNotEmptyException: Streams group 'wordcount' is not EMPTY.\n"
                     "* Group 'nope' could not be deleted due to: java.lang.IllegalArgumentException: Group 'nope' does "
                     "not exist or is not a streams group.\n"
                     "\nThese streams groups were deleted successfully: 'idle'.\n")
    assert "idle" not in cluster.groups and "wordcount" in cluster.groups
    cluster.add_streams_group("idle2", {"0": ["words"]}, [], state="Empty")
    r = streams(cluster, "--delete", "--group", "idle2")
    assert (r.code, r.out) == (0, "Deletion of requested streams groups ('idle2') was successful.\n")


def test_reset_moves_the_input_topics_of_inactive_groups_only(cluster: FakeKafkaCluster) -> None:
    cluster.add_streams_group("stopped", {"0": ["words"], "1": ["counts-repartition"]}, [], state="Empty",
                              offsets={("words", 1): (70, ""), ("counts-repartition", 0): (3, "")})
    r = streams(cluster, "--reset-offsets", "--group", "stopped", "--all-input-topics", "--to-earliest")
    # input topics are the subtopologies' source topics (not the repartition topics); the tool's own
    # fixed-width printOffsetsToReset
    assert (r.code, r.out) == (0, "\nGROUP                          TOPIC                          PARTITION  NEW-OFFSET     "
                                  "\nstopped                        words                          1          0              \n")
    assert "dry run" in r.err and cluster.groups["stopped"].offsets[("words", 1)] == (70, "")
    r = streams(cluster, "--reset-offsets", "--group", "stopped", "--input-topic", "words:1", "--shift-by", "-20",
                "--execute")
    assert r.code == 0, r.err
    assert cluster.groups["stopped"].offsets[("words", 1)][0] == 50
    assert cluster.groups["stopped"].offsets[("counts-repartition", 0)][0] == 3
    r = streams(cluster, "--reset-offsets", "--group", "stopped", "--input-topic", "words:2", "--to-latest")
    assert (r.code, r.err.splitlines()[-1]) == (1, "kafkatool: One or more topics are not part of the group 'stopped'.")
    r = streams(cluster, "--reset-offsets", "--group", "wordcount", "--all-input-topics", "--to-latest", "--execute")
    assert (r.code, r.err) == (1, "kafkatool: Assignments can only be reset if the group 'wordcount' is inactive, "
                                  "but the current state is Stable.\n")
    assert cluster.groups["wordcount"].offsets[("words", 0)] == (90, "")


def test_delete_offsets_of_input_topics(cluster: FakeKafkaCluster) -> None:
    cluster.add_topic("clicks", 11, log_end=10)
    cluster.add_streams_group("stopped", {"0": ["clicks"]}, [], state="Empty",
                              offsets={("clicks", 1): (7, ""), ("clicks", 10): (8, ""), ("clicks", 2): (9, "")})
    r = streams(cluster, "--delete-offsets", "--group", "stopped", "--input-topic", "clicks:1,2,10")
    assert r.code == 0, r.err
    # rows sorted by the string topic + partition: clicks1 < clicks10 < clicks2
    assert r.out == ("Request succeeded for deleting offsets from group stopped.\n"
                     "\nTOPIC           PARTITION  STATUS         "
                     "\nclicks          1          Successful     "
                     "\nclicks          10         Successful     "
                     "\nclicks          2          Successful     \n")
    assert cluster.groups["stopped"].offsets == {}
    r = streams(cluster, "--delete-offsets", "--group", "wordcount", "--input-topic", "words:0", "--input-topic", "nope")
    assert r.code == 1
    assert r.out == ("\nError: Encountered some partition-level error, see the follow-up details.\n"
                     "\nTOPIC           PARTITION  STATUS         "
                     "\nnope            -          Error: org.apache.kafka.common.errors.UnknownTopicOrPartitionException: "
                     "This server does not host this topic-partition."
                     "\nwords           0          Error: org.apache.kafka.common.errors.GroupSubscribedToTopicException: "
                     "Deleting offsets of a topic is forbidden while the consumer group is actively subscribed to it.\n")
    r = streams(cluster, "--delete-offsets", "--group", "ghost", "--input-topic", "words:0")
    assert r.code == 1
    assert r.out.startswith("\nError: The group id does not exist.\n")
