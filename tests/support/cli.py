"""Run kafkatool commands in-process (typer's CliRunner) and get exit code, stdout and stderr apart.

`run_kafkatool` invokes the typer app; `run_console` runs the console-script entry itself (global
options hoisted, usage errors in one line) as `python -m kafkatool` would, without starting a Python:
for tests about what a command prints and returns, not about the process (signals, imports, exit at
interpreter shutdown keep a real subprocess).
"""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from typer.testing import CliRunner

import kafkatool.cli.elect  # noqa: F401  (registers the commands on the app)
import kafkatool.cli.reassign  # noqa: F401
from kafkatool.cli.app import app


@dataclass
class Result:
    code: int
    out: str
    err: str


def run_kafkatool(*args: str, cwd: Path | None = None) -> Result:
    runner = CliRunner()
    old = os.getcwd()
    if cwd is not None:
        os.chdir(cwd)
    try:
        res = runner.invoke(app, list(args), catch_exceptions=False)
    finally:
        os.chdir(old)
    return Result(res.exit_code, res.stdout, res.stderr)


def run_console(*args: str) -> subprocess.CompletedProcess[str]:
    """`python -m kafkatool ARGS`, in this process: its exit code, stdout and stderr."""
    from kafkatool.cli.main import run

    argv = sys.argv
    with CliRunner().isolation() as (out, err, _):
        sys.argv = ["kafkatool", *args]
        try:
            run()
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        finally:
            sys.argv = argv
            sys.stdout.flush()
            sys.stderr.flush()
        return subprocess.CompletedProcess(["kafkatool", *args], code, out.getvalue().decode(),
                                           err.getvalue().decode())
