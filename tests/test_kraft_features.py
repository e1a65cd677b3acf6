"""`kafkatool features describe` and `kafkatool cluster cluster-id` against Kafka 4.0.0's output.

The fake brokers and controllers advertise the fixture cluster's features (ApiVersions v3+ tagged fields,
encoded by kwire from Kafka's specs) and cluster id; the oracle is the text of Kafka 4.0.0's
kafka-features.sh and kafka-cluster.sh at marks A-D.  Over the release matrix: brokers without
ApiVersions v3 are refused in one line; metadata.version names follow the tool's release.
"""

from __future__ import annotations

import json
import re

import pytest

from kafkatool.cluster.features import level_to_string
from kafkatool.release import Release
from tests.conftest import FIXTURES
from tests.support.cli import run_console
from tests.support.fake_kraft import FakeKraftKafka
from tests.support.kwire import MATRIX

GOLDENS = FIXTURES / "kraft-4.0.0" / "goldens"
FEATURES = {
    "eligible.leader.replicas.version": (0, 1, 0),
    "group.version": (0, 1, 1),
    "kraft.version": (0, 1, 1),
    "metadata.version": (7, 25, 25),
    "transaction.version": (0, 2, 2),
}


def _golden(tool: str, name: str) -> str:
    if not GOLDENS.is_dir():
        pytest.skip(f"kraft-4.0.0 goldens not found at {GOLDENS}")
    return (GOLDENS / tool / f"{name}.stdout").read_text()


def _cluster(release: str = "4.0.0", epoch: int = 18) -> FakeKraftKafka:
    k = FakeKraftKafka(
        {4: None, 5: None}, controllers=[1, 2, 3], cluster_id="hYWQgWs-wDBsLQL4h4nALg", release=release
    )
    k.features = dict(FEATURES)
    k.features_epoch = epoch
    return k


def _where(k: FakeKraftKafka, via: str) -> list[str]:
    return (
        ["--bootstrap-server", k.bootstrap]
        if via == "bs"
        else ["--bootstrap-controller", k.controller_bootstrap]
    )


@pytest.mark.parametrize(
    "case", ["A-describe-bs", "A-describe-bc", "B-describe-bs", "C-describe-bs", "D-describe-bs"]
)
def test_features_goldens(case: str) -> None:
    expected = _golden("kafka-features", case)
    epoch = int(re.search(r"Epoch: (\d+)", expected).group(1))  # type: ignore[union-attr]
    with _cluster(epoch=epoch) as k:
        res = run_console("features", "describe", *_where(k, case.rsplit("-", 1)[1]))
    assert (res.returncode, res.stderr, res.stdout) == (0, "", expected)


@pytest.mark.parametrize("case", ["A-cluster-id-bs", "A-cluster-id-bc"])
def test_cluster_id_goldens(case: str) -> None:
    expected = _golden("kafka-cluster", case)
    with _cluster() as k:
        res = run_console("cluster", "cluster-id", *_where(k, case.rsplit("-", 1)[1]))
    assert (res.returncode, res.stderr, res.stdout) == (0, "", expected)


@pytest.mark.parametrize("release", MATRIX)
def test_release_matrix(release: str) -> None:
    with _cluster(release) as k:
        feats = run_console("features", "describe", "--bootstrap-server", k.bootstrap, "--format", "json")
        cid = run_console("cluster", "cluster-id", "--bootstrap-server", k.bootstrap)
    assert (cid.returncode, cid.stdout) == (0, "Cluster ID: hYWQgWs-wDBsLQL4h4nALg\n")
    if k.api_versions[18][1] < 3:
        assert (
            feats.returncode == 3 and "needs ApiVersions v3" in feats.stderr and feats.stderr.count("\n") == 1
        )
    else:
        rows = json.loads(feats.stdout)
        assert [(r["feature"], r["finalized_level"], r["epoch"]) for r in rows] == [
            (n, lvl, 18) for n, (_, _, lvl) in sorted(FEATURES.items())
        ]


def test_metadata_version_names_per_release() -> None:
    # MetadataVersion.java of each release: 4.0 knows 3.3-IV3 (7) to 4.1-IV0 (26); 3.3 knows 3.0-IV1 (1) to 3.3-IV3 (7)
    assert level_to_string("metadata.version", 25, Release(4, 0)) == "4.0-IV3"
    assert level_to_string("metadata.version", 27, Release(4, 0)) == "UNKNOWN 27"
    assert level_to_string("metadata.version", 1, Release(4, 0)) == "UNKNOWN 1"
    assert level_to_string("metadata.version", 1, Release(3, 3)) == "3.0-IV1"
    assert level_to_string("metadata.version", 8, Release(3, 3)) == "UNKNOWN 8"
    assert level_to_string("metadata.version", 0, Release(3, 9)) == "UNKNOWN 0"
    assert level_to_string("kraft.version", 1, Release(4, 0)) == "1"


def test_padded_text_since_4_3() -> None:
    with _cluster() as k:
        res = run_console("--kafka-release", "4.3", "features", "describe", "--bootstrap-server", k.bootstrap)
    first = res.stdout.splitlines()[0]
    assert first == (
        "Feature: eligible.leader.replicas.version          SupportedMinVersion: 0                "
        "SupportedMaxVersion: 1                FinalizedVersionLevel: 0                Epoch: 18"
    )


def _api_versions_expected(golden: str, k: FakeKraftKafka) -> str:
    """The golden with the fake brokers' ports for the recorded ones (27014, 27015)."""
    return golden.replace("127.0.0.1:27014", f"127.0.0.1:{k.port[4]}").replace(
        "127.0.0.1:27015", f"127.0.0.1:{k.port[5]}"
    )


def test_api_versions_golden() -> None:
    golden = _golden("kafka-broker-api-versions", "A-bs")
    with _cluster() as k:
        res = run_console("cluster", "api-versions", "--bootstrap-server", k.bootstrap)
    assert (res.returncode, res.stderr) == (0, "")
    expected = _api_versions_expected(golden, k)
    # the recorded brokers came in Java HashMap order of their Nodes, which depends on the ports: compare per broker
    blocks = lambda text: sorted(text.split("\n)\n"))  # noqa: E731
    assert blocks(res.stdout) == blocks(expected)


@pytest.mark.parametrize("release", MATRIX)
def test_api_versions_matrix(release: str) -> None:
    with _cluster(release) as k:
        res = run_console("cluster", "api-versions", "--bootstrap-server", k.bootstrap, "--format", "json")
        text = run_console("cluster", "api-versions", "--bootstrap-server", k.bootstrap)
    rows = json.loads(res.stdout)
    advertised = {
        (r["broker"], r["api_key"]): (r["min_version"], r["max_version"])
        for r in rows
        if r["min_version"] is not None
    }
    assert advertised == {(b, key): rng for b in (4, 5) for key, rng in k.api_versions.items()}
    assert text.returncode == 0 and text.stdout.count(" -> (\n") == 2


@pytest.mark.parametrize("case", ["A-list-endpoints-bs", "A-list-endpoints-bc", "S09-list-endpoints-fenced"])
def test_list_endpoints_goldens(case: str) -> None:
    golden = _golden("kafka-cluster", case)
    with _cluster() as k:
        args = ["--include-fenced-brokers"] if "fenced" in case else []
        if "fenced" in case:  # broker 4 stopped: fenced, no longer in the live set
            k.alive.discard(4)
            k.fenced.add(4)
        res = run_console(
            "cluster", "list-endpoints", *args, *_where(k, "bc" if case.endswith("-bc") else "bs")
        )
        ports = {27014: k.port[4], 27015: k.port[5], 27001: k.port[1], 27002: k.port[2], 27003: k.port[3]}
    expected = golden
    for real, fake in ports.items():  # same width: both are five digits
        expected = expected.replace(f" {real} ", f" {fake} ")
    assert (res.returncode, res.stderr, res.stdout) == (0, "", expected)


@pytest.mark.parametrize("release", MATRIX)
def test_list_endpoints_matrix(release: str) -> None:
    with _cluster(release) as k:
        res = run_console("cluster", "list-endpoints", "--bootstrap-server", k.bootstrap, "--format", "csv")
        fenced = run_console(
            "cluster", "list-endpoints", "--bootstrap-server", k.bootstrap, "--include-fenced-brokers"
        )
    hi = k.api_versions.get(60, (0, -1))[1]
    if hi >= 1:
        assert res.returncode == 0 and res.stdout.splitlines()[1:] == [
            f"4,127.0.0.1,{k.port[4]},,false,broker",
            f"5,127.0.0.1,{k.port[5]},,false,broker",
        ]
    else:
        assert res.returncode == 2 and "list endpoints needs DescribeCluster v1+ (Kafka >= 3.7)" in res.stderr
    if hi >= 2:
        assert fenced.returncode == 0
    else:
        assert fenced.returncode == 2 and "DescribeCluster v2+ (Kafka >= 4.0)" in fenced.stderr
