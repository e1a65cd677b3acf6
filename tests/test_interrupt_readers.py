"""Ctrl-C in the middle of a long read-only command: exit 130 with one line on stderr, no traceback.  (The writers are interrupted at every step in test_fault_injection.py and
test_compact_faults.py; spark-scan in test_spark_interrupt.py.)"""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.ctrl_c import KAFKATOOL_BACKGROUND_JOB, KAFKATOOL_CTRL_C

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def big_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("interrupt-readers")
    res = subprocess.run(
        [
            sys.executable,
            "-m",
            "kafkatool",
            "generate",
            str(d),
            "--topic",
            "big",
            "--records",
            "200000",
            "--value-bytes",
            "200",
            "--segment-bytes",
            "268435456",
        ],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=300,
    )
    assert res.returncode == 0, res.stderr
    return d / "big-0"


STOPS = {  # how the process was started, the signal, the exit code and the one line it must print
    "ctrl-c": (KAFKATOOL_CTRL_C, signal.SIGINT, 130, "kafkatool: interrupted"),
    # a background job ignores SIGINT (the shell's doing, kept by kafkatool): `kill` stops it cleanly
    "kill-background-job": (KAFKATOOL_BACKGROUND_JOB, signal.SIGTERM, 143, "kafkatool: terminated"),
}


@pytest.mark.parametrize("stop", list(STOPS))
@pytest.mark.parametrize(
    "args",
    [
        ["dump-log", "--deep-iteration", "--print-data-log", "--jobs", "1", "--files", "{log}"],
        ["dump-log", "--deep-iteration", "--format", "ndjson", "--records", "--files", "{log}"],
    ],
    ids=["text", "ndjson"],
)
def test_a_stop_mid_dump_is_one_line_and_its_exit_code(
    big_log: Path, tmp_path: Path, args: list[str], stop: str
) -> None:
    command, sig, code, line = STOPS[stop]
    log = str(big_log / "00000000000000000000.log")
    out_path = tmp_path / "out"
    with open(out_path, "wb") as out:
        p = subprocess.Popen(
            [*command, *[a.format(log=log) for a in args]], cwd=REPO, stdout=out, stderr=subprocess.PIPE
        )
        deadline = time.monotonic() + 120
        while out_path.stat().st_size < 1_000_000 and p.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)  # well into the dump
        p.send_signal(sig)
        _, err = p.communicate(timeout=60)
    if p.returncode == 0:
        pytest.skip("the dump finished before the signal (a very fast machine)")
    assert p.returncode == code
    assert err.decode().splitlines() == [line]
    assert b"Traceback" not in out_path.read_bytes()



def test_forked_workers_die_on_sigterm_as_usual() -> None:
    """A pool ends its workers with SIGTERM: they must die as usual, not unwind like the parent
    (kafkatool.cli.signals), which printed a worker's traceback after a parallel dump."""
    import os

    from kafkatool.cli.signals import stop_on_sigterm

    previous = signal.getsignal(signal.SIGTERM)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # the state a console run starts from
    try:
        assert stop_on_sigterm()
        parent = signal.getsignal(signal.SIGTERM)
        pid = os.fork()
        if pid == 0:
            os._exit(0 if signal.getsignal(signal.SIGTERM) is signal.SIG_DFL else 1)
        _, status = os.waitpid(pid, 0)
    finally:
        signal.signal(signal.SIGTERM, previous)
    assert parent is not signal.SIG_DFL
    assert os.waitstatus_to_exitcode(status) == 0
