"""dump-log against the real Kafka tools' output for every fixture file and mode.

Three golden sets: Kafka 3.3.1's tool on data of brokers 0.10 to 3.3 (run with `--kafka-release 3.3`),
Kafka 4.0.0's tool on data a 4.0.0 broker wrote (run with the 4.0 dialect) and Kafka 4.3's tool on data
a 4.3 broker wrote (run with 4.3's).
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import (
    GOLDENS,
    KAFKA4_GOLDENS,
    KAFKA4_LOGS,
    KAFKA43_GOLDENS,
    KAFKA43_LOGS,
    KAFKA_LOGS,
    require_fixtures,
)
from tests.goldens import Golden, load_manifest, run_golden


@dataclass(frozen=True)
class GoldenSet:
    release: str
    goldens: Path
    kafka_logs: Path
    at_least: int  # successful runs the manifest must list (guards against an emptied fixture)

    def load(self) -> list[Golden]:
        require_fixtures()
        if not self.goldens.is_dir():
            pytest.skip(f"Kafka {self.release} goldens not found at {self.goldens}")
        return load_manifest(self.goldens, self.release)


SETS = [
    pytest.param(GoldenSet("3.3", GOLDENS, KAFKA_LOGS, 2000), id="kafka-3.3.1"),
    pytest.param(GoldenSet("4.0", KAFKA4_GOLDENS, KAFKA4_LOGS, 130), id="kafka-4.0.0"),
    pytest.param(GoldenSet("4.3", KAFKA43_GOLDENS, KAFKA43_LOGS, 275), id="kafka-4.3"),
]


def _diff(a: bytes, b: bytes, limit: int = 12) -> str:
    d = difflib.unified_diff(
        a.decode("utf-8", "replace").splitlines(), b.decode("utf-8", "replace").splitlines(),
        "kafka", "kafkatool", lineterm="", n=1,
    )
    return "\n".join(list(d)[:limit])


@pytest.mark.parametrize("gs", SETS)
def test_manifest_goldens_byte_exact(gs: GoldenSet) -> None:
    """Every golden where Kafka's tool succeeded: same stdout, stderr and exit code."""
    goldens = [g for g in gs.load() if g.rc == 0]
    assert len(goldens) >= gs.at_least
    failures = []
    for g in goldens:
        exp_out, exp_err = g.expected(gs.kafka_logs)
        out, err, rc = run_golden(g, gs.kafka_logs)
        if (out, err, rc) != (exp_out, exp_err, g.rc):
            what = []
            if out != exp_out:
                what.append("stdout:\n" + _diff(exp_out, out))
            if err != exp_err:
                what.append("stderr:\n" + _diff(exp_err, err))
            if rc != g.rc:
                what.append(f"exit code {rc} != {g.rc}")
            failures.append(f"{g.id}: " + "\n".join(what))
    assert not failures, f"{len(failures)} of {len(goldens)} goldens differ:\n" + "\n\n".join(failures[:15])


@pytest.mark.parametrize("gs", SETS)
def test_where_kafka_crashes_we_print_its_lines_then_one_error(gs: GoldenSet) -> None:
    """Kafka's tool died with a stack trace: our stdout starts with everything it printed, and
    instead of the trace we print one line on stderr and exit non-zero (or dump the file properly)."""
    crashed = [g for g in gs.load() if g.rc != 0]
    assert crashed
    failures = []
    for g in crashed:
        exp_out, _ = g.expected(gs.kafka_logs)
        out, err, rc = run_golden(g, gs.kafka_logs)
        if not out.startswith(exp_out):
            failures.append(f"{g.id}: stdout does not start with Kafka's\n" + _diff(exp_out, out[: len(exp_out) + 200]))
        if b"Exception" in err or b"Traceback" in err:
            failures.append(f"{g.id}: stack trace on stderr")
        if rc != 0 and len(err.splitlines()) != 1:
            failures.append(f"{g.id}: exit {rc} but stderr is not one line: {err[:300]!r}")
    assert not failures, "\n".join(failures[:20])


@pytest.mark.parametrize(
    "gs, mode, rel",
    [
        (SETS[0].values[0], "shallow", "fmt-v1-0/00000000000000000000.log"),
        (SETS[0].values[0], "deep", "fmt-v1-0/00000000000000000000.log"),
        (SETS[1].values[0], "offsets-decoder", "__consumer_offsets-2/00000000000000000000.log"),
        (SETS[1].values[0], "transaction-log-decoder", "__transaction_state-0/00000000000000000000.log"),
        (SETS[2].values[0], "transaction-log-decoder", "__transaction_state-0/00000000000000000000.log"),
        (SETS[2].values[0], "default", "__cluster_metadata-0/quorum-state"),
        (SETS[2].values[0], "deep-print-skip-meta", "h43-none-0/00000000000000000139.log"),
    ],
    ids=["3.3-shallow", "3.3-deep", "4.0-offsets", "4.0-txn", "4.3-txn", "4.3-dotless", "4.3-skip-meta"],
)
def test_a_few_goldens_through_the_real_cli(gs: GoldenSet, mode: str, rel: str) -> None:
    """The console script, given the release with `--kafka-release` (or a newer patch of it), prints
    the same bytes as the in-process run."""
    import os
    import subprocess
    import sys

    g = next(g for g in gs.load() if g.mode == mode and g.rel.endswith(rel))
    exp_out, exp_err = g.expected(gs.kafka_logs)
    env = {k: v for k, v in os.environ.items() if k != "KAFKATOOL_KAFKA_RELEASE"}
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[1])  # this checkout's kafkatool, from any cwd
    release = ["--kafka-release", gs.release]
    cmd = [sys.executable, "-m", "kafkatool", *release, "dump-log", *g.argv(gs.kafka_logs)]
    p = subprocess.run(cmd, cwd=gs.kafka_logs, capture_output=True, env=env)
    assert (p.stdout, p.stderr, p.returncode) == (exp_out, exp_err, 0)
    if gs.release == "4.3":
        cmd[cmd.index("--kafka-release") + 1] = "4.3.1"
        p = subprocess.run(cmd, cwd=gs.kafka_logs, capture_output=True, env=env)
        assert (p.stdout, p.stderr, p.returncode) == (exp_out, exp_err, 0)
