"""Run kafkatool commands in-process (typer's CliRunner) and get exit code, stdout and stderr apart."""

from __future__ import annotations

import os
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
