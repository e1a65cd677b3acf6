"""benchmarks/bench_issue14.py produces issue 14's table and its raw numbers from one run.

A smoke run on a tiny input (`--rows startup,verify`, 1 MiB): no timing is asserted, only that the
markdown table has the issue's columns and a line per command, that every command ran with both
cores (pure Python alone when the compiled core is not built) and exited 0, and that the JSON holds
the machine and every measurement.  A stand-in `bin/kafka-dump-log.sh` plays a Kafka install, so
the Kafka column is filled from a run of Kafka's tool, not from stored numbers.
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
"""


def test_quick_run_writes_the_table_and_every_number(tmp_path: Path) -> None:
    home = tmp_path / "kafka"
    (home / "bin").mkdir(parents=True)
    script = home / "bin" / "kafka-dump-log.sh"
    script.write_text(STAND_IN)
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    out = tmp_path / "issue14.json"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env.pop("KAFKATOOL_PURE_PYTHON", None)
    r = subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / "bench_issue14.py"), "--quick", "--scale", "0.001",
         "--rows", "startup,verify", "--data-dir", str(tmp_path / "data"), "--kafka-home", str(home),
         "--json", str(out)],
        capture_output=True, text=True, env=env, timeout=300,
    )
    assert r.returncode == 0, r.stderr
    table = [line for line in r.stdout.splitlines() if line.startswith("|")]
    assert table[0] == "| work | input | target | pure Python | C core | Kafka | met? |"
    assert table[1] == "|---|---|---|---|---|---|---|"
    works = [line.split(" | ")[0].lstrip("| ") for line in table[2:]]
    assert works == ["start-up (dump-log, empty segment)", "index verify", "recover --full --dry-run",
                     "recover --full (a copy)"]
    assert all(line.count(" | ") == 6 for line in table[2:])

    doc = json.loads(out.read_text())
    machine = doc["machine"]
    for key in ("cpu_model", "cores", "python", "gcc", "commit", "kafkatool"):
        assert machine[key], key
    assert machine["cores"] == os.cpu_count()
    assert doc["rows"] == ["startup", "verify"]
    assert [lg["row"] for lg in doc["row_log"]] == ["startup", "verify"]
    assert all(len(lg["load_before"]) == 3 and len(lg["load_after"]) == 3 for lg in doc["row_log"])
    cores = ["pure", "C"] if "core: C" in machine["kafkatool"] else ["pure"]
    measures = doc["measures"]
    assert all(m["exit_code"] == 0 for m in measures), [m for m in measures if m["exit_code"]]
    for what in ("index verify", "recover --full --dry-run", "recover --full (a copy)"):
        got = [m for m in measures if m["what"] == what]
        assert [m["core"] for m in got] == cores
        for m in got:
            assert m["bytes"] > 512 * 1024 and m["wall_s"] > 0 and m["cpu_s"] > 0
            assert m["peak_rss_mb"] > 0 and m["argv"][1:3] in (["index", "verify"], ["recover", "-q"])
    # Kafka's tool ran on the empty segment beside kafkatool's cores, and its time fills the Kafka column
    startup = [m for m in measures if m["row"] == "startup"]
    assert sorted(m["core"] for m in startup) == sorted([*cores, "Kafka"])
    assert doc["table"]["startup"][0]["kafka"].endswith(" s")
    assert set(doc["startup_s"]) == set(cores)
