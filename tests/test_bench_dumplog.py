"""benchmarks/bench_dumplog.py times Kafka's own tool side by side when it has a Kafka install.

A stand-in `bin/kafka-dump-log.sh` (it reads the file it is given, as the real one does) plays the
install: the harness must run it on the same file in the same run, set every kafkatool row's ratio
against that measured time (not the stored constants), and time kafkatool with both cores.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO

STAND_IN = """#!/bin/sh
while [ $# -gt 0 ]; do [ "$1" = --files ] && cat "$2" > /dev/null; shift; done
echo "Dumping $2"
"""


def bench(tmp_path: Path, *extra: str) -> dict:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env.pop("KAFKA_HOME", None)
    r = subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / "bench_dumplog.py"), "--corpus", "A", "--scale", "0.001",
         "--modes", "shallow", "--no-startup", "--json", "--data-dir", str(tmp_path / "data"), *extra],
        capture_output=True, text=True, env=env, timeout=600,
    )
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_kafka_tool_measured_side_by_side_with_both_cores(tmp_path: Path) -> None:
    home = tmp_path / "kafka"
    (home / "bin").mkdir(parents=True)
    script = home / "bin" / "kafka-dump-log.sh"
    script.write_text(STAND_IN)
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    doc = bench(tmp_path, "--kafka-home", str(home))
    assert doc["kafka_command"] == [str(script)]
    runs = doc["runs"]
    kafka = [r for r in runs if r["tool"] == "Kafka"]
    ours = [r for r in runs if r["tool"].startswith("kafkatool")]
    assert len(kafka) == 1 and kafka[0]["exit_code"] == 0
    assert {r["tool"] for r in ours} >= {"kafkatool pure"} and len(ours) == len(doc["tools"])
    for r in ours:
        assert r["kafka_source"] == "measured" and r["kafka_seconds"] == kafka[0]["seconds"]
        assert r["ratio"] == round(r["seconds"] / kafka[0]["seconds"], 2)
    assert [t["pure_python"] for t in doc["tools"]][-1] is True


def test_without_kafka_the_stored_times_are_named(tmp_path: Path) -> None:
    doc = bench(tmp_path, "--cores", "pure")
    assert doc["kafka_command"] is None
    (run,) = doc["runs"]
    assert run["tool"] == "kafkatool pure" and run["kafka_source"] == "stored"
