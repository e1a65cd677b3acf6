"""dump-log against the real Kafka 3.3.1 tool's output for every fixture file and mode."""

from __future__ import annotations

import difflib

import pytest

from tests.conftest import GOLDENS, KAFKA_LOGS, require_fixtures
from tests.goldens import load_manifest, run_golden


def _diff(a: bytes, b: bytes, limit: int = 12) -> str:
    d = difflib.unified_diff(
        a.decode("utf-8", "replace").splitlines(), b.decode("utf-8", "replace").splitlines(),
        "kafka", "kafkatool", lineterm="", n=1,
    )
    return "\n".join(list(d)[:limit])


def test_manifest_goldens_byte_exact() -> None:
    """Every golden where Kafka's tool succeeded: same stdout, stderr and exit code."""
    require_fixtures()
    goldens = [g for g in load_manifest(GOLDENS) if g.rc == 0]
    assert len(goldens) > 2000
    failures = []
    for g in goldens:
        exp_out, exp_err = g.expected(KAFKA_LOGS)
        out, err, rc = run_golden(g, KAFKA_LOGS)
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


def test_where_kafka_crashes_we_print_its_lines_then_one_error() -> None:
    """Kafka's tool died with a stack trace: our stdout starts with everything it printed, and
    instead of the trace we print one line on stderr and exit non-zero (or dump the file properly)."""
    require_fixtures()
    crashed = [g for g in load_manifest(GOLDENS) if g.rc != 0]
    assert crashed
    failures = []
    for g in crashed:
        exp_out, _ = g.expected(KAFKA_LOGS)
        out, err, rc = run_golden(g, KAFKA_LOGS)
        if not out.startswith(exp_out):
            failures.append(f"{g.id}: stdout does not start with Kafka's\n" + _diff(exp_out, out[: len(exp_out) + 200]))
        if b"Exception" in err or b"Traceback" in err:
            failures.append(f"{g.id}: stack trace on stderr")
        if rc != 0 and len(err.splitlines()) != 1:
            failures.append(f"{g.id}: exit {rc} but stderr is not one line: {err[:300]!r}")
    assert not failures, "\n".join(failures[:20])


@pytest.mark.parametrize("mode", ["shallow", "deep"])
def test_a_few_goldens_through_the_real_cli(mode: str, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The installed console script gives the same bytes as the in-process run."""
    import subprocess
    import sys

    require_fixtures()
    g = next(g for g in load_manifest(GOLDENS) if g.mode == mode and g.rel.endswith("fmt-v1-0/00000000000000000000.log"))
    args = ["--files", g.rel] + g.args.split()
    p = subprocess.run([sys.executable, "-m", "kafkatool", "dump-log", *args], cwd=KAFKA_LOGS, capture_output=True)
    exp_out, exp_err = g.expected(KAFKA_LOGS)
    assert (p.stdout, p.stderr, p.returncode) == (exp_out, exp_err, 0)
