"""`kafkatool metadata --at | diff | history` against the kraft-4.0.0 fixture's recorded timeline.

The oracle is `timeline.txt` (what the recording script did, and when, by its own clock): each change
must appear in the metadata log inside its step's time window, and the image at a point between two
steps must show the state the first step left.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from kafkatool.ops.metadata.history import diff_images, history, parse_broker, parse_config, parse_partition
from kafkatool.ops.metadata.load import load_dir, offset_at_time, parse_point
from kafkatool.ops.metadata.source import Damage, partition_dir
from tests.conftest import FIXTURES, require_fixtures

KRAFT = FIXTURES / "kraft-4.0.0"
META = KRAFT / "data" / "c1" / "meta"


def _steps() -> dict[str, int]:
    """Each step's first time (epoch ms) in timeline.txt, by step prefix (S04, S05, ...)."""
    out: dict[str, int] = {}
    for line in (KRAFT / "timeline.txt").read_text().splitlines():
        step, _iso, ms, *_ = line.split("\t")
        out.setdefault(step.split("-")[0], int(ms))
    return out


@pytest.fixture(scope="module")
def steps() -> dict[str, int]:
    require_fixtures()
    if not (KRAFT / "timeline.txt").is_file():
        pytest.skip("kraft-4.0.0 fixture not found")
    return _steps()


@pytest.fixture(scope="module")
def pdir() -> Path:
    require_fixtures()
    return partition_dir(META)


def _hist(pdir: Path, subject) -> list[dict]:  # type: ignore[no-untyped-def]
    damage: list[Damage] = []
    rows = history(pdir, subject, damage)
    assert not damage
    return rows


def _ms(row: dict) -> int:
    from datetime import datetime

    return int(datetime.fromisoformat(row["time"].replace("Z", "+00:00")).timestamp() * 1000)


def _within(row: dict, steps: dict[str, int], start: str, end: str) -> bool:
    return steps[start] <= _ms(row) < steps[end]


def _one(rows: list[dict], **match: object) -> dict:
    found = [r for r in rows if all(r.get(k) == v for k, v in match.items())]
    assert len(found) == 1, (match, rows)
    return found[0]


def test_topic_and_broker_configs_change_in_s04(pdir: Path, steps: dict[str, int]) -> None:
    r = _one(_hist(pdir, parse_config("TOPIC:fx-orders/retention.ms")), before="604800000", after="172800000")
    assert _within(r, steps, "S04", "S05")
    r = _one(_hist(pdir, parse_config("TOPIC:fx-orders")), field="max.message.bytes", change="set")
    assert _within(r, steps, "S04", "S05") and r["after"] == "2000000"
    r = _one(_hist(pdir, parse_config("TOPIC:fx-compact/min.cleanable.dirty.ratio")), change="deleted")
    assert _within(r, steps, "S04", "S05")
    r = _one(_hist(pdir, parse_config("BROKER:4/log.cleaner.backoff.ms")), change="set")
    assert _within(r, steps, "S04", "S05") and r["after"] == "20000"
    r = _one(_hist(pdir, parse_config("BROKER/log.retention.ms")), change="set")
    assert _within(r, steps, "S04", "S05") and r["after"] == "1209600000"


def test_partitions_added_in_s05(pdir: Path, steps: dict[str, int]) -> None:
    for p in ("fx-events-2", "fx-events-3"):
        r = _one(_hist(pdir, parse_partition(p)), change="added")
        assert _within(r, steps, "S05", "S06")
    r = _one(_hist(pdir, parse_partition("fx-events-0")), change="added")
    assert _within(r, steps, "S02", "S03")


def test_reassignment_in_s06(pdir: Path, steps: dict[str, int]) -> None:
    rows = [r for r in _hist(pdir, parse_partition("fx-events-0")) if r["field"] == "replicas"]
    assert [(r["before"], r["after"]) for r in rows] == [([4], [5, 4]), ([5, 4], [5])]
    assert all(_within(r, steps, "S06", "S07") for r in rows)
    leader = _one(_hist(pdir, parse_partition("fx-events-0")), field="leader", before=4)
    assert leader["after"] == 5 and _within(leader, steps, "S06", "S07")


def test_isr_shrink_restart_and_election(pdir: Path, steps: dict[str, int]) -> None:
    rows = _hist(pdir, parse_partition("fx-orders-0"))
    shrink = _one(rows, field="isr", before=[4, 5], after=[5])
    assert _within(shrink, steps, "S09", "S10")
    moved = _one(rows, field="leader", before=4, after=5)
    assert moved["offset"] == shrink["offset"]
    expand = _one(rows, field="isr", before=[5], after=[5, 4])
    assert _within(expand, steps, "S10", "S11")
    elected = _one(rows, field="leader", before=5, after=4)
    assert _within(elected, steps, "S11", "S12")


def test_broker_4_stops_and_comes_back(pdir: Path, steps: dict[str, int]) -> None:
    rows = _hist(pdir, parse_broker("4"))
    fenced = [r for r in rows if r["field"] == "fenced" and r["after"] is True]
    assert any(_within(r, steps, "S09", "S10") for r in fenced)
    epoch = _one(rows, field="epoch")
    assert _within(epoch, steps, "S10", "S11")
    unfenced = [r for r in rows if r["field"] == "fenced" and r["after"] is False]
    assert any(_within(r, steps, "S10", "S11") for r in unfenced)


def test_topic_deleted_in_s12(pdir: Path, steps: dict[str, int]) -> None:
    r = _one(_hist(pdir, parse_partition("fx-doomed-0")), change="removed")
    assert r["record"] == "REMOVE_TOPIC_RECORD" and _within(r, steps, "S12", "S13")


def test_image_at_each_step(pdir: Path, steps: dict[str, int]) -> None:
    def partition(at_ms: int, name: str, pid: int) -> dict | None:
        img = load_dir(pdir, offset_at_time(pdir, at_ms)).image
        t = img.topics_by_name.get(name)
        return t["partitions"].get(pid) if t else None

    p = partition(steps["S10"], "fx-orders", 0)
    assert p is not None and p["isr"] == [5] and p["leader"] == 5
    p = partition(steps["S11"], "fx-orders", 0)
    assert p is not None and p["isr"] == [5, 4] and p["leader"] == 5
    p = partition(steps["S12"], "fx-orders", 0)
    assert p is not None and p["leader"] == 4
    assert partition(steps["S12"], "fx-doomed", 0) is not None
    assert partition(steps["S13"], "fx-doomed", 0) is None
    assert partition(steps["S05"], "fx-events", 2) is None
    assert partition(steps["S06"], "fx-events", 2) is not None


def test_diff_between_steps(pdir: Path, steps: dict[str, int]) -> None:
    a = load_dir(pdir, offset_at_time(pdir, steps["S09"])).image
    b = load_dir(pdir, offset_at_time(pdir, steps["S13"])).image
    rows = diff_images(a, b)
    assert _one(rows, kind="topic", name="fx-doomed")["change"] == "removed"
    assert _one(rows, kind="broker", name="4", field="epoch")["change"] == "changed"
    assert not [r for r in rows if r["kind"] == "config"]
    a = load_dir(pdir, offset_at_time(pdir, steps["S04"])).image
    b = load_dir(pdir, offset_at_time(pdir, steps["S05"])).image
    rows = diff_images(a, b)
    assert _one(rows, kind="config", name="TOPIC:fx-orders", field="retention.ms")["after"] == "172800000"
    assert _one(rows, kind="config", name="BROKER", field="log.retention.ms")["change"] == "set"


def test_points_parse() -> None:
    assert parse_point("120").offset == 120
    assert parse_point("2026-11-28T07:42:00Z").time_ms == parse_point("2026-11-28T07:42:00").time_ms


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "kafkatool", *args], capture_output=True, text=True, timeout=120
    )


def test_cli_history_and_diff_json(steps: dict[str, int]) -> None:
    p = run_cli("metadata", "history", "--partition", "fx-orders-0", "-s", str(META), "--format", "json")
    assert p.returncode == 0, p.stderr
    rows = json.loads(p.stdout)
    assert set(rows[0]) == {
        "offset",
        "time",
        "epoch",
        "record",
        "kind",
        "name",
        "field",
        "change",
        "before",
        "after",
    }
    p = run_cli(
        "metadata",
        "diff",
        "2026-11-28T07:41:50Z",
        "2026-11-28T07:42:30Z",
        "-s",
        str(META),
        "--format",
        "ndjson",
    )
    assert p.returncode == 0, p.stderr
    assert any(json.loads(x)["name"] == "fx-doomed" for x in p.stdout.splitlines())
    p = run_cli(
        "metadata", "cat", "/image/topics/byName/fx-orders/0", "-s", str(META), "--at", "2026-11-28T07:42:05Z"
    )
    assert "isr=[5]," in p.stdout and "leader=5," in p.stdout
    p = run_cli("metadata", "history", "--partition", "nodash", "-s", str(META))
    assert p.returncode == 2 and p.stderr.count("\n") == 1
    p = run_cli("metadata", "ls", "/", "-s", str(META), "--at", "yesterday")
    assert p.returncode == 2 and "ISO-8601" in p.stderr


def test_history_from_a_snapshot_when_the_log_start_moved(tmp_path: Path, steps: dict[str, int]) -> None:
    """With the first segment gone, the history starts at the oldest snapshot the log continues from."""
    import shutil

    dst = tmp_path / "meta"
    shutil.copytree(META, dst)
    for p in [dst, *dst.rglob("*")]:
        p.chmod(0o755 if p.is_dir() else 0o644)
    pdir = partition_dir(dst)
    for name in ("00000000000000000000.log", "00000000000000000000.index", "00000000000000000000.timeindex"):
        (pdir / name).unlink()
    rows = _hist(pdir, parse_partition("fx-orders-0"))
    assert rows[0]["change"] == "snapshot" and rows[0]["offset"] == 95  # snapshot 96-1: offsets below 96
    assert rows[0]["after"]["isr"] == [4, 5] and rows[0]["after"]["leader"] == 4
    shrink = _one(rows, field="isr", before=[4, 5], after=[5])
    assert _within(shrink, steps, "S09", "S10")
    # an image before the log start and every snapshot: refused with one line
    p = run_cli("metadata", "ls", "/", "-s", str(dst), "--at", "5")
    assert p.returncode == 2 and p.stderr.count("\n") == 1


def test_at_needs_a_dir() -> None:
    require_fixtures()
    snap = META / "__cluster_metadata-0" / "00000000000000000090-0000000001.checkpoint"
    p = run_cli("metadata", "ls", "/", "-s", str(snap), "--at", "5")
    assert p.returncode == 2 and "metadata log dir" in p.stderr
