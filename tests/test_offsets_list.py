"""`offsets list` / `offsets --list` and kafka-consumer-groups.sh's other option shapes (`--describe`,
`--offsets`, `--reset-offsets`), over the fakes of every release (ListGroups v2 has no state, v4 has the
state, v5 the type)."""

from __future__ import annotations

import pytest

import kafkatool.cli.offsets  # noqa: F401  (registers the command)
import kafkatool.cli.offsets_list  # noqa: F401
import kafkatool.cli.offsets_reset  # noqa: F401
from kafkatool.cli.kafka_shapes import kafka_shapes
from tests.support.cli import run_kafkatool
from tests.support.fake_groups import FakeKafkaCluster, FakeMember
from tests.support.kwire import MATRIX


def java_hashmap_order(keys: list[str]) -> list[str]:
    """A HashMap<String, _>'s iteration order, from String.hashCode and HashMap.hash (16 buckets: few keys)."""
    def h(s: str) -> int:
        v = 0
        for ch in s:
            v = (31 * v + ord(ch)) & 0xFFFFFFFF
        return v ^ (v >> 16)
    return sorted(keys, key=lambda k: h(k) & 15)  # stable: one bucket keeps insertion order


GROUPS = ["app", "idle", "zeta-consumers", "b"]


@pytest.fixture(scope="module", params=MATRIX)
def cluster(request: pytest.FixtureRequest):  # type: ignore[no-untyped-def]
    with FakeKafkaCluster(brokers=3, version=request.param) as c:
        c.add_topic("orders", 2, log_end=[10, 20])
        c.add_group("app", state="Stable", protocol="range", members=[
            FakeMember("consumer-1-0a8c", "consumer-1", "/10.0.0.1", [("orders", 0), ("orders", 1)])],
            offsets={("orders", 0): (5, ""), ("orders", 1): (6, "")})
        for g in GROUPS[1:]:
            c.add_group(g, state="Empty", offsets={("orders", 0): (1, "")})
        c.release = request.param
        yield c


def cli(c: FakeKafkaCluster, *args: str, release: str | None = None):  # type: ignore[no-untyped-def]
    pre = ("--kafka-release", release) if release else ()
    return run_kafkatool(*pre, "offsets", *args, "--bootstrap-server", c.bootstrap, "--timeout", "10")


def test_list_prints_the_admin_client_s_hashmap_order(cluster: FakeKafkaCluster) -> None:
    want = "".join(f"{g}\n" for g in java_hashmap_order(GROUPS))
    for shape in (("--list",), ("list",)):
        r = cli(cluster, *shape)
        assert (r.code, r.out, r.err) == (0, want, "")


def test_list_with_states_in_each_release_s_text(cluster: FakeKafkaCluster) -> None:
    order = java_hashmap_order(GROUPS)
    state = {g: "Stable" if g == "app" else "Empty" for g in GROUPS}
    r = cli(cluster, "--list", "--state", release="3.3")
    assert (r.code, r.err) == (0, "")
    assert r.out == "".join(f"{g:<15} {s}\n" for g, s in [("GROUP", "STATE"), *((g, state[g]) for g in order)])
    r = cli(cluster, "--list", "--state", "stable", release="3.3")
    assert r.out == "GROUP           STATE\napp             Stable\n"
    r = cli(cluster, "--list", "--state", release="4.0")
    # ListGroups before v4 (Kafka 2.6) carries no state: Kafka 4.0's tool prints Unknown
    shown = state if cluster.release != "2.1.1" else dict.fromkeys(GROUPS, "Unknown")
    assert r.out == "".join(f"{g:<25} {s:<20}\n" for g, s in [("GROUP", "STATE"), *((g, shown[g]) for g in order)])
    r = cli(cluster, "--list", "--state", "Bogus")
    assert (r.code, r.out) == (2, "")
    assert r.err.startswith("kafkatool: Invalid state list 'Bogus'. Valid states are: Unknown, PreparingRebalance")


def test_list_rows_have_the_state_on_every_release(cluster: FakeKafkaCluster) -> None:
    import json

    r = cli(cluster, "list", "--format", "json")
    rows = {row["group"]: row["state"] for row in json.loads(r.out)}
    assert rows == {g: "Stable" if g == "app" else "Empty" for g in GROUPS}


def test_kafkas_describe_and_reset_shapes(cluster: FakeKafkaCluster) -> None:
    plain = cli(cluster, "--group", "idle")
    for shape in (("--describe", "--group", "idle"), ("--describe", "--offsets", "--group", "idle")):
        assert cli(cluster, *shape) == plain
    r = cli(cluster, "--reset-offsets", "--group", "idle", "--topic", "orders", "--to-latest", "--dry-run",
            release="3.3")
    assert r.code == 0 and r.out.splitlines()[2].split() == ["idle", "orders", "0", "10"]
    r = cli(cluster, "--delete", "--group", "idle")
    assert r.code == 2 and "kafkatool never deletes consumer groups" in r.err
    r = cli(cluster, "--list", "--describe", "--reset-offsets")
    assert r.code == 2 and "exactly one action" in r.err


def test_the_rewrite_leaves_subcommands_and_values_alone() -> None:
    subs = {"list", "reset", "end", "export"}
    assert kafka_shapes(["end", "--topic", "t"], subs) == ["end", "--topic", "t"]
    assert kafka_shapes(["--list", "--state"], subs) == ["list", "--state", "*"]
    assert kafka_shapes(["list", "--type", "--state", "Stable"], subs) == ["list", "--type", "*", "--state", "Stable"]
    assert kafka_shapes(["--describe", "--group", "g", "--members"], subs) == ["--group", "g", "--members"]
    assert kafka_shapes(["--group", "g", "--", "--list"], subs) == ["--group", "g", "--", "--list"]
