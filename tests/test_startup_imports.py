"""Start-up stays lean: a plain offline command imports its own code and nothing heavy (issue 14).

Not a timing test: each command runs once under `python -X importtime` and the test reads which
modules it imported, minus those the interpreter's own start-up (site-packages' .pth files)
imports anyway.  What a plain `dump-log`, `index verify`, `recover --dry-run`, `--version` and an offline
`offsets --log-dir` must never import: typer's pydantic converter (and the asyncio under it), rich
(their output is plain text, stderr is no terminal), the cluster clients, Spark and numpy, the
config reader, and any other command's modules (nor, but for offsets, kafkatool's cluster layer).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from kafkatool.cli.main import COMMANDS, SUBCOMMAND_MODULES
from tests.conftest import REPO, require_fixtures

HEAVY = (
    "pydantic",
    "pydantic_core",
    "typer._adapters",
    "asyncio",
    "rich",
    "kafka",
    "kazoo",
    "pyspark",
    "pyarrow",
    "numpy",
    "pandas",
    "tomllib",
)
NEVER = ("kafkatool.spark", "kafkatool.slices", "kafkatool.config")
# ... and what log-file commands never need (offsets, a command of live groups too, shares its code)
NEVER_OFFLINE = (*NEVER, "kafkatool.cluster", "kafkatool.cli.cluster_options", "kafkatool.log.decoders")
# Each command's own library modules: no other command may import them.
OWN_OPS = {
    "dump-log": ("kafkatool.ops.dumplog",),
    "index": ("kafkatool.ops.indexcheck",),
    "recover": (
        "kafkatool.ops.recover",
        "kafkatool.ops.recovery",
        "kafkatool.ops.salvage",
        "kafkatool.ops.indexcheck",
    ),
    "compact": ("kafkatool.ops.compact",),
    "offsets": ("kafkatool.ops.offsets_log", "kafkatool.ops.offsets_report", "kafkatool.ops.offsets_reset"),
    "spark-scan": ("kafkatool.ops.scan",),
    "replicas": ("kafkatool.ops.replicas",),
    "log-dirs": ("kafkatool.ops.logdirs",),
    "generate": ("kafkatool.ops.generate",),
}


def _cli_modules(command: str) -> tuple[str, ...]:
    module = COMMANDS[command]
    return tuple(f"kafkatool.cli.{m}" for m in (module, *SUBCOMMAND_MODULES.get(module, ())))


def _forbidden(command: str | None) -> tuple[str, ...]:
    mine = set(OWN_OPS.get(command, ())) if command else set()
    others = [c for c in COMMANDS if c != command]
    return (
        *HEAVY,
        *(NEVER if command == "offsets" else NEVER_OFFLINE),
        *(m for c in others for m in _cli_modules(c)),
        *(m for c in others for m in OWN_OPS.get(c, ()) if m not in mine),
    )


def _imported(proc: subprocess.CompletedProcess[str]) -> set[str]:
    return {
        line.split("|")[2].strip()
        for line in proc.stderr.splitlines()
        if line.startswith("import time:") and line.count("|") == 2
    } - {"package"}


def _hits(modules: set[str], forbidden: tuple[str, ...]) -> list[str]:
    """The forbidden names (packages stand for their modules) that were imported."""
    return sorted({f for f in forbidden for m in modules if m == f or m.startswith(f + ".")})


def test_plain_offline_commands_import_nothing_heavy(tmp_path: Path) -> None:
    logs = require_fixtures() / "kafka-logs" / "kafka-2.1.1"
    partition = shutil.copytree(logs / "fmt-v2-0", tmp_path / "logs" / "fmt-v2-0")
    runs: dict[str, tuple[str | None, list[str]]] = {
        "dump-log": (
            "dump-log",
            ["dump-log", "--files", str(partition / "00000000000000000000.log"), "--print-data-log"],
        ),
        "index verify": ("index", ["index", "verify", str(partition)]),
        "recover --dry-run": ("recover", ["recover", str(tmp_path / "logs"), "--dry-run"]),
        "--version": (None, ["--version"]),
        "offsets --log-dir": ("offsets", ["offsets", "--log-dir", str(logs), "--all-groups"]),
    }
    python = [sys.executable, "-X", "importtime"]
    started = {
        name: subprocess.Popen(
            [*python, "-m", "kafkatool", *argv],
            cwd=REPO,
            text=True,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
        )
        for name, (_, argv) in runs.items()
    }
    interpreter = subprocess.run(
        [*python, "-c", "pass"], cwd=REPO, text=True, capture_output=True, timeout=60
    )
    own_startup = _imported(interpreter)
    problems = {}
    for name, proc in started.items():
        out, err = proc.communicate(timeout=120)
        done = subprocess.CompletedProcess(proc.args, proc.returncode, out, err)
        assert proc.returncode == 0 and out, (name, proc.returncode, err[-2000:])
        imported = _imported(done) - own_startup
        assert "kafkatool.cli.main" in imported, name  # the list is read from the real run
        hits = _hits(imported, _forbidden(runs[name][0]))
        if hits:
            problems[name] = hits
    assert problems == {}, f"start-up imports what the command does not need: {problems}"


@pytest.mark.parametrize("command", ["dump-log", "recover", "offsets"])
def test_the_forbidden_lists_name_real_modules(command: str) -> None:
    """A renamed module must not make the guard above vacuous."""
    import importlib.util

    for module in (*OWN_OPS[command], *_cli_modules(command)):
        assert importlib.util.find_spec(module) is not None, module
