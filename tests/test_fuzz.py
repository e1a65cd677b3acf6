"""A small deterministic sample of `benchmarks/fuzz.py`, and the real CLI on mutated fixtures.

The full fuzz run (100k+ cases per format) is `python benchmarks/fuzz.py`; here a few thousand cases
(same seeds every run) go through `dump_files` in-process, and a handful of mutated files through
`python -m kafkatool dump-log` to check what a user sees: no traceback, one line per problem, exit
code 0, 1 or 2.  Crashes already reported to the owners of records.py/dumplog.py/decoders are listed
in KNOWN: a sample that hits only those is an xfail (the suite stays green until the fix lands); any
other failure fails the test with its replay command.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import KAFKA_LOGS, REPO

fuzz = pytest.importorskip("benchmarks.fuzz")

SEED = 20240501
# format -> cases in the sample (rates differ ~10x between formats; total stays ~10 s)
SAMPLE = {
    "log": 800,
    "index": 400,
    "timeindex": 400,
    "txnindex": 200,
    "snapshot": 300,
    "checkpoint": 400,
    "offsets": 600,
    "transactions": 500,
    "metadata": 400,
}

# (kind, exception type prefix, innermost library function) -> why it is known and who fixes it
KNOWN: dict[tuple[str, str, str], str] = {}


def _known(f) -> str | None:  # type: ignore[no-untyped-def]
    for (kind, exc, where), reason in KNOWN.items():
        if f.kind == kind and f.error.startswith(exc) and f.where == where:
            return reason
    return None


@pytest.mark.parametrize("fmt", list(SAMPLE))
def test_fuzz_sample(fmt: str, kafka_logs: Path) -> None:
    (rep,) = fuzz.run([fmt], SAMPLE[fmt], SEED, timeout=10.0, fixtures=kafka_logs, do_minimize=False)
    assert rep.sources > 0 and rep.cases == SAMPLE[fmt]
    unknown = [f for f in rep.failures if _known(f) is None]
    assert not unknown, "\n".join(
        f"{f.kind}: {f.error} at {f.where} (source {f.source}, options {f.options}, ops {f.ops}); "
        f"replay: {f.replay_command().replace(str(fuzz.DEFAULT_FIXTURES), '')}"
        for f in unknown
    )
    if rep.failures:
        pytest.xfail("; ".join(sorted({_known(f) or "" for f in rep.failures})))


def test_mutations_replay_identically() -> None:
    """A case is its (format, seed, number): the same plan and bytes every time, and ops compose."""
    fmt = fuzz.FORMATS["log"]
    if not KAFKA_LOGS.is_dir():
        pytest.skip("shared fixtures not found")
    src = fuzz.Source("x", (KAFKA_LOGS / "kafka-2.1.1/fmt-v2-0/00000000000000000000.log").read_bytes(), Path("/x"))
    for case in range(50):
        a = fuzz.case_plan(fmt, [src], 1, case)
        b = fuzz.case_plan(fmt, [src], 1, case)
        assert a[1] == b[1] and a[2] == b[2]
        assert fuzz.apply_ops(src.data, a[2]) == fuzz.apply_ops(src.data, b[2])


# ------------------------------------------------------------------------------------------------
# the real CLI on mutated files

# Deferred multi-line reports Kafka's tool prints on stderr (their own layout, not problem lines).
_REPORT_LINE = re.compile(
    r"^(Mismatches in :|  Index offset: |Found timestamp mismatch in :|  Index timestamp: |"
    r"Found out of order timestamp in :|The following indexed offsets are not found in the log\.|"
    r"Indexed offset: |Non-consecutive offsets in |  -?\d+ is followed by -?\d+|Ignoring unknown file )"
)

# Kafka's tool prints a corrupt snapshot's exception message alone (byte-exact goldens keep it so).
_KAFKA_SNAPSHOT_ERROR = re.compile(
    r"^Snapshot (contained an unknown file version -?\d+|is corrupt \(CRC is no longer valid\)\. |failed schema validation: )"
)

CLI_CASES = [
    # (format, case numbers, dump-log flags)
    ("log", range(0, 12), ["--deep-iteration"]),
    ("log", range(12, 24), ["--print-data-log"]),
    ("log", range(24, 30), ["--format", "json", "--deep-iteration"]),
    ("index", range(0, 8), ["--verify-index-only"]),
    ("timeindex", range(0, 8), []),
    ("snapshot", range(0, 6), []),
    ("checkpoint", range(0, 6), []),
    ("offsets", range(0, 6), ["--offsets-decoder"]),
]


def _stage(tmp: Path, fmt_name: str, cases: range) -> list[Path]:
    """Write the mutated files of those cases (with their segment siblings) under tmp."""
    fmt = fuzz.FORMATS[fmt_name]
    sources = fuzz.collect_sources(fmt, KAFKA_LOGS, None)
    out = []
    for case in cases:
        src, _opts, ops = fuzz.case_plan(fmt, sources, SEED, case)
        d = tmp / f"{fmt_name}-{case}" / src.path.parent.name
        d.mkdir(parents=True)
        for sib in fuzz.segment_siblings(src.path):
            (d / sib.name).write_bytes(sib.read_bytes())
        p = d / src.path.name
        p.write_bytes(fuzz.apply_ops(src.data, ops))
        out.append(p)
    return out


@pytest.mark.parametrize(("fmt", "cases", "flags"), CLI_CASES, ids=lambda v: str(v) if isinstance(v, str) else None)
def test_cli_on_mutated_files(tmp_path: Path, kafka_logs: Path, fmt: str, cases: range, flags: list[str]) -> None:
    files = _stage(tmp_path, fmt, cases)
    proc = subprocess.run(
        [sys.executable, "-m", "kafkatool", "dump-log", "--files", ",".join(map(str, files)), *flags],
        capture_output=True, cwd=REPO, timeout=120,
    )
    err = proc.stderr.decode("utf-8", "replace")
    assert "Traceback" not in err, err
    assert "unexpected error" not in err, err
    assert proc.returncode in (0, 1, 2), (proc.returncode, err)
    names = {f.name for f in files}
    unnamed = []
    for line in err.splitlines():
        if _REPORT_LINE.match(line) or _KAFKA_SNAPSHOT_ERROR.match(line) or line.startswith("kafkatool: "):
            continue
        # Every other stderr line is one self-contained problem: it must say which file it is about.
        if not any(n in line for n in names):
            unnamed.append(line)
    assert not unnamed, unnamed
