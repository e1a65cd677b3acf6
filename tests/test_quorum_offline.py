"""`kafkatool quorum describe --log-dir`: the quorum as a node's metadata log dir records it.

Oracles: Kafka 4.0.0's `kafka-metadata-quorum.sh describe --status` goldens (the CurrentVoters line,
ClusterId, LeaderId, LeaderEpoch, taken live from the leader) and the fixture's recorded facts (the
controllers' directory ids in timeline.txt, the snapshot files listed at S20).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from kafkatool.ops.quorum_offline import describe_offline
from tests.conftest import FIXTURES, require_fixtures

KRAFT = FIXTURES / "kraft-4.0.0"
STATUS = KRAFT / "goldens" / "kafka-metadata-quorum" / "B-status-bc.stdout"


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "kafkatool", *args], capture_output=True, text=True, timeout=120
    )


def _golden_field(name: str) -> str:
    for line in STATUS.read_text().splitlines():
        if line.startswith(name + ":"):
            return line.split(":", 1)[1].strip()
    raise AssertionError(name)


@pytest.fixture(scope="module")
def fixture() -> Path:
    require_fixtures()
    if not STATUS.is_file():
        pytest.skip("kraft-4.0.0 quorum goldens not found")
    return KRAFT


@pytest.mark.parametrize("node", ["c1", "c2", "c3", "b4", "b5"])
def test_every_node_agrees_with_the_live_leader(fixture: Path, node: str) -> None:
    p = run_cli("quorum", "describe", "--log-dir", str(fixture / "data" / node / "meta"))
    assert p.returncode == 0, p.stderr
    lines = dict(line.split(":", 1) for line in p.stdout.splitlines())
    for name in ("ClusterId", "LeaderId", "LeaderEpoch", "CurrentVoters"):
        assert lines[name].strip() == _golden_field(name), name
    # the same label layout as Kafka's --status text
    assert all(
        re.match(r"^[A-Za-z]+: +\S", line) and len(line.split(":")[0]) + 1 <= 24
        for line in p.stdout.splitlines()
    )


def test_directory_ids_and_snapshots(fixture: Path) -> None:
    ids = dict(
        re.findall(
            r"(\d)=([A-Za-z0-9_-]{22})",
            (fixture / "timeline.txt").read_text().split("controller directory ids:")[1].splitlines()[0],
        )
    )
    q = describe_offline(fixture / "data" / "c1" / "meta")
    assert {str(v.id): v.directory_id for v in q.voters} == ids
    assert q.node_id == 1 and q.directory_id == ids["1"]
    s20 = next(
        line for line in (fixture / "timeline.txt").read_text().splitlines() if line.startswith("S20-end")
    )
    names = re.findall(r"(\d{20})-(\d{10})\.checkpoint", s20)
    assert q.snapshots == [f"{int(o)}-{int(e)}" for o, e in names]
    assert q.latest_snapshot == q.snapshots[-1]
    assert q.log_start_offset == 0 and q.log_end_offset is not None and q.log_end_offset > int(names[-1][0])
    assert q.kraft_version == 1


def test_json_and_bad_input(fixture: Path, tmp_path: Path) -> None:
    p = run_cli("quorum", "describe", "--log-dir", str(fixture / "data" / "c2" / "meta"), "--format", "json")
    doc = json.loads(p.stdout)
    assert doc["votedId"] == 1 and doc["nodeId"] == 2 and len(doc["voters"]) == 3
    p = run_cli("quorum", "describe", "--log-dir", str(tmp_path))
    assert p.returncode == 2 and p.stderr.count("\n") == 1
    d = tmp_path / "__cluster_metadata-0"
    shutil.copytree(fixture / "data" / "c3" / "meta" / "__cluster_metadata-0", d)
    (d / "quorum-state").chmod(0o644)
    (d / "quorum-state").write_text("{not json")
    p = run_cli("quorum", "describe", "--log-dir", str(d))
    assert p.returncode == 2 and "quorum-state" in p.stderr and "Traceback" not in p.stderr
