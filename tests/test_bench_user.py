"""benchmarks/bench_user.py times the installed console script as a user runs it: a smoke run.

No timing is asserted: the table has its columns and a row per corpus, mode, core and sink; the pipe
runs count the text (the same bytes as /dev/null's run would get); a stand-in kafka-dump-log.sh fills
the Kafka column from a run in the same process tree; the JSON keeps every run's faults.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO

STAND_IN = """#!/bin/sh
while [ $# -gt 0 ]; do [ "$1" = --files ] && cat "$2"; shift; done
"""


def test_smoke_run_prints_every_row(tmp_path: Path) -> None:
    if not (Path(sys.executable).parent / "kafkatool").is_file():
        pytest.skip("no installed kafkatool console script beside this interpreter")
    home = tmp_path / "kafka"
    (home / "bin").mkdir(parents=True)
    script = home / "bin" / "kafka-dump-log.sh"
    script.write_text(STAND_IN)
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    r = subprocess.run(
        [
            sys.executable,
            str(REPO / "benchmarks" / "bench_user.py"),
            "--scale",
            "0.001",
            "--corpora",
            "B",
            "--modes",
            "shallow,print",
            "--cores",
            "C,pure",
            "--data-dir",
            str(tmp_path / "data"),
            "--kafka-home",
            str(home),
            "--flat",
            "--json",
            str(tmp_path / "run.json"),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert r.returncode == 0, r.stderr
    rows = [line.split(" | ") for line in r.stdout.splitlines() if line.startswith("| B |")]
    cores = {row[2] for row in rows}
    assert {(row[1], row[3]) for row in rows} == {
        (m, s) for m in ("shallow", "print") for s in ("/dev/null", "pipe to wc -c")
    }
    assert len(rows) == 4 * len(cores)
    assert all("(measured)" in row[10] for row in rows)  # Kafka's stand-in ran in the same run
    assert "faults flat in the input size:" in r.stdout
    assert '"minflt"' in (tmp_path / "run.json").read_text()
