"""Groups of every type over fake brokers of each 4.x release: `offsets groups` (kafka-groups.sh --list)
and `offsets share` (kafka-share-groups.sh).

The fakes answer ListGroups v5, ShareGroupDescribe, DescribeShareGroupOffsets (v0 for 4.1, v1 with
lag from 4.2), AlterShareGroupOffsets, DeleteShareGroupOffsets and DeleteGroups at the negotiated
version from tests/support/kwire.py's description of the specs (not the client's classes).  The
expected text is written out from the tools' format strings (GroupsCommand, ShareGroupCommand,
OffsetsUtils.printOffsetsToReset of each release branch)."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

import kafkatool.cli.offsets  # noqa: F401  (registers the command)
import kafkatool.cli.offsets_groups  # noqa: F401
from tests.support.cli import Result, run_kafkatool
from tests.support.fake_groups import FakeKafkaCluster, FakeMember

SHARE_RELEASES = ("4.1", "4.2", "4.3", "4.4")


@pytest.fixture(params=SHARE_RELEASES)
def cluster(request: pytest.FixtureRequest) -> Iterator[FakeKafkaCluster]:
    with FakeKafkaCluster(brokers=2, version=request.param) as c:
        c.add_topic("orders", 3, log_end=100)
        c.add_topic("payments-eu-west", 2, log_end=50)
        c.add_group("app", state="Stable", protocol="range",
                    members=[FakeMember("c-1", "client-1", "/10.0.0.1", [("orders", 0)])], offsets={("orders", 0): (5, "")})
        c.add_group("sg1", state="Stable", group_type="share", protocol_type="share", members=[
            FakeMember("m-b", "share-client", "/10.0.0.9", [("orders", 1), ("orders", 0), ("payments-eu-west", 1)]),
            FakeMember("m-a", "share-client", "/10.0.0.8", [("orders", 2)])],
            offsets={("orders", 0): (40, ""), ("orders", 1): (41, ""), ("payments-eu-west", 1): (10, "")})
        c.add_group("sg2", state="Empty", group_type="share", protocol_type="share", offsets={("orders", 2): (7, "")})
        yield c


def share(c: FakeKafkaCluster, *args: str) -> Result:
    return run_kafkatool("offsets", "share", *args, "--bootstrap-server", c.bootstrap)


def test_groups_lists_every_type_with_kafka_groups_filters(cluster: FakeKafkaCluster) -> None:
    r = run_kafkatool("offsets", "groups", "--bootstrap-server", cluster.bootstrap)
    assert r.code == 0, r.err
    lines = r.out.split("\n")
    # every cell padded to the widest (at least 20), each followed by a space; the header's last is not
    assert lines[0] == "GROUP" + " " * 16 + "TYPE" + " " * 17 + "PROTOCOL" + " " * 12
    rows = sorted(lines[1:-1])
    assert rows == ["app" + " " * 18 + "classic" + " " * 14 + "consumer" + " " * 13,
                    "sg1" + " " * 18 + "share" + " " * 16 + "share" + " " * 16,
                    "sg2" + " " * 18 + "share" + " " * 16 + "share" + " " * 16]
    r = run_kafkatool("offsets", "groups", "--bootstrap-server", cluster.bootstrap, "--share", "--format", "json")
    assert sorted((g["group"], g["type"], g["state"]) for g in json.loads(r.out)) == [
        ("sg1", "share", "Stable"), ("sg2", "share", "Empty")]
    r = run_kafkatool("offsets", "groups", "--bootstrap-server", cluster.bootstrap, "--consumer", "--format", "csv")
    assert r.out.splitlines() == ["group,type,protocol,state", "app,classic,consumer,Stable"]
    r = run_kafkatool("offsets", "groups", "--bootstrap-server", cluster.bootstrap, "--group-type", "nope")
    assert r.code == 2 and "valid types are 'classic', 'consumer', 'share' and 'streams'" in r.err


def test_describe_offsets_members_and_state(cluster: FakeKafkaCluster) -> None:
    lag = cluster.version != "4.1"  # DescribeShareGroupOffsets v1 and the LAG column: 4.2
    r = share(cluster, "--describe", "--group", "sg2", "--group", "sg1")
    assert r.code == 0, r.err
    if lag:
        assert r.out == (
            "\nGROUP           TOPIC            PARTITION  START-OFFSET  LAG"
            "\nsg1             orders           0          40            60"
            "\nsg1             orders           1          41            59"
            "\nsg1             payments-eu-west 1          10            40\n"
            "\nGROUP           TOPIC           PARTITION  START-OFFSET  LAG"
            "\nsg2             orders          2          7             93\n")
    else:
        assert r.out == (
            "\nGROUP           TOPIC            PARTITION  START-OFFSET"
            "\nsg1             orders           0          40"
            "\nsg1             orders           1          41"
            "\nsg1             payments-eu-west 1          10\n"
            "\nGROUP           TOPIC           PARTITION  START-OFFSET"
            "\nsg2             orders          2          7\n")
    r = share(cluster, "--describe", "--group", "sg2", "--verbose")
    assert r.out == ("\nGROUP           TOPIC           PARTITION  LEADER-EPOCH  START-OFFSET" + ("  LAG" if lag else "")
                     + "\nsg2             orders          2          0             7" + ("             93" if lag else "")
                     + "\n")
    r = share(cluster, "--describe", "--all-groups", "--members", "--verbose")
    assert r.code == 0, r.err
    assert r.out == (
        "\nGROUP           CONSUMER-ID     HOST            CLIENT-ID       #PARTITIONS  MEMBER-EPOCH  ASSIGNMENT"
        "\nsg1             m-a             /10.0.0.8       share-client    1            3             orders:2"
        "\nsg1             m-b             /10.0.0.9       share-client    3            3             "
        "orders:0,1;payments-eu-west:1\n")
    assert r.err == "\nShare group 'sg2' has no active members.\n"
    r = share(cluster, "--describe", "--group", "sg1", "--state")
    c = cluster.coordinator_of("sg1")
    coordinator = f"127.0.0.1:{cluster.brokers[c].port}  ({c})"
    assert r.out == ("\nGROUP           COORDINATOR (ID)          STATE           #MEMBERS"
                     f"\nsg1             {coordinator:<25} Stable          2\n")
    r = share(cluster, "--describe", "--group", "app")
    assert (r.code, r.err) == (2, "kafkatool: offsets share: group 'app': Group app is not a share group.\n")
    r = share(cluster, "--describe", "--group", "nope")
    assert (r.code, r.err) == (2, "kafkatool: offsets share: group 'nope': does not exist\n")


def test_list_with_and_without_states(cluster: FakeKafkaCluster) -> None:
    r = share(cluster, "--list")
    assert sorted(r.out.splitlines()) == ["sg1", "sg2"]
    r = share(cluster, "--list", "--state")
    lines = r.out.splitlines()
    assert lines[0] == "GROUP           STATE" and sorted(lines[1:]) == ["sg1             Stable", "sg2             Empty"]


def test_reset_dry_run_execute_and_refusal(cluster: FakeKafkaCluster) -> None:
    r = share(cluster, "--reset-offsets", "--group", "sg2", "--topic", "orders:2", "--to-earliest")
    assert (r.code, r.out) == (0, "\nGROUP           TOPIC           PARTITION  NEW-OFFSET\nsg2             orders          2          0\n")
    assert "dry run" in r.err and cluster.groups["sg2"].offsets[("orders", 2)] == (7, "")
    r = share(cluster, "--reset-offsets", "--group", "sg2", "--to-latest", "--execute")  # the partitions it has state for
    assert r.code == 0, r.err
    assert cluster.groups["sg2"].offsets == {("orders", 2): (100, "")}
    r = share(cluster, "--reset-offsets", "--group", "sg1", "--topic", "orders", "--to-earliest", "--execute")
    assert (r.code, r.err) == (1, "kafkatool: Share group 'sg1' is not empty.\n")
    assert cluster.groups["sg1"].offsets[("orders", 0)] == (40, "")


def test_delete_offsets_and_delete(cluster: FakeKafkaCluster) -> None:
    r = share(cluster, "--delete-offsets", "--group", "sg2", "--topic", "orders", "--topic", "nope")
    assert r.code == 1
    assert r.out == ("\nTOPIC           STATUS\nnope            Error: This server does not host this topic-partition."
                     "\norders          Successful\n")
    assert cluster.groups["sg2"].offsets == {}
    r = share(cluster, "--delete-offsets", "--group", "sg1", "--topic", "orders")
    assert r.code == 1 and r.out.startswith("\nError: The group is not empty.\n")  # NON_EMPTY_GROUP's message
    r = share(cluster, "--delete", "--group", "sg2", "--group", "sg1", "--group", "app")
    not_share = ("org.apache.kafka.common.errors.GroupIdNotFoundException" if cluster.version == "4.4"
                 else "java.lang.IllegalArgumentException")
    assert r.code == 1  # failures in a HashMap<String, …>'s order: "app" (hashCode 96801: bucket 0), "sg1" (bucket 12)
    assert r.out == ("\nError: Deletion of some share groups failed:\n"
                     f"* Group 'app' could not be deleted due to: {not_share}: Group 'app' is not a share group.\n"
                     "* Group 'sg1' could not be deleted due to: org.apache.kafka.common.errors.GroupNotEmptyException: "
                     "Share group 'sg1' is not EMPTY.\n"
                     "\nThese share groups were deleted successfully: 'sg2'\n")
    assert "sg2" not in cluster.groups and "sg1" in cluster.groups


def test_a_broker_without_share_groups_is_named() -> None:
    with FakeKafkaCluster(brokers=1, version="4.0.0") as c:
        r = share(c, "--list")
        bootstrap = c.bootstrap
    assert r.code == 2 and r.out == ""
    assert r.err == (f"kafkatool: offsets share: share groups need ShareGroupDescribe (Kafka >= 4.1); the brokers at "
                     f"{bootstrap} are Kafka 4.0 (or another release before 4.1)\n")


def test_reset_to_datetime_falls_back_to_the_log_end_for_partitions_without_later_records(
        cluster: FakeKafkaCluster) -> None:
    late = "2099-01-01T00:00:00.000Z"  # after every record: OffsetsUtils warns and takes the log-end offset
    r = share(cluster, "--reset-offsets", "--group", "sg2", "--topic", "orders:2", "--to-datetime", late)
    assert (r.code, r.out) == (0, "\nWarn: Partition 2 from topic orders is empty. Falling back to latest known offset.\n"
                                  "\nGROUP           TOPIC           PARTITION  NEW-OFFSET\n"
                                  "sg2             orders          2          100\n")


@pytest.mark.parametrize("cluster", ["4.3"], indirect=True)
def test_a_coordinator_still_loading_is_asked_again(cluster: FakeKafkaCluster) -> None:
    cluster.loading["sg1"] = 3  # COORDINATOR_LOAD_IN_PROGRESS for ShareGroupDescribe / DescribeShareGroupOffsets
    r = share(cluster, "--describe", "--group", "sg1")
    assert r.code == 0, r.err
    assert r.out.splitlines()[2].split() == ["sg1", "orders", "0", "40", "60"]
    assert cluster.loading["sg1"] == 0


def test_texts_never_raise_on_odd_descriptions() -> None:
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from kafkatool.cluster.share_groups import ShareGroup, ShareMember, ShareOffset
    from kafkatool.ops import share_text
    from kafkatool.release import Release

    names = st.text(min_size=0, max_size=30)
    tps = st.tuples(names, st.integers(0, 2**31 - 1))
    offsets = st.one_of(st.none(), st.builds(ShareOffset, st.one_of(st.none(), st.integers()),
                                             st.one_of(st.none(), st.integers()), st.one_of(st.none(), st.integers())))
    members = st.lists(st.builds(ShareMember, names, names, names, st.integers(), st.none(), st.just([]),
                                 st.lists(tps, max_size=5)), max_size=4)
    groups = st.builds(ShareGroup, names, st.sampled_from(["Stable", "Empty", "Dead", "Unknown"]), st.none(),
                       st.integers(), st.integers(), members)

    @settings(max_examples=60, deadline=None)
    @given(st.dictionaries(names, st.dictionaries(tps, offsets, max_size=5), max_size=3), st.lists(groups, max_size=3),
           st.booleans(), st.sampled_from([Release(4, 1), Release(4, 2), Release(4, 4)]))
    def run(offs: dict, described: list, verbose: bool, release: Release) -> None:
        share_text.share_offsets_text(offs, release, verbose)
        by_name = {g.group: g for g in described}
        share_text.share_members_text(by_name, verbose)
        share_text.share_state_text(by_name, verbose)
        share_text.share_delete_text({g.group: None for g in described})

    run()


@pytest.mark.parametrize("cluster", ["4.4"], indirect=True)
def test_reset_to_offset_keeps_within_the_log_and_to_current_keeps_the_start(cluster: FakeKafkaCluster) -> None:
    """4.4's --to-offset (clamped to [log start, log end]) and --to-current (the start offset, else the log end)."""
    r = share(cluster, "--reset-offsets", "--group", "sg2", "--topic", "orders:1,2", "--to-offset", "500")
    assert r.code == 0, r.err
    assert sorted(r.out.splitlines()[2:]) == ["sg2             orders          1          100",
                                              "sg2             orders          2          100"]
    r = share(cluster, "--reset-offsets", "--group", "sg2", "--topic", "orders:1,2", "--to-current", "--execute")
    assert r.code == 0, r.err
    assert cluster.groups["sg2"].offsets == {("orders", 1): (100, ""), ("orders", 2): (7, "")}
