"""Completions and man pages are generated from the CLI: the checked-in copies must be current."""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _load_docgen():  # type: ignore[no-untyped-def]
    """scripts/docgen.py by path: scripts/ is not a package, and a `scripts` from elsewhere must not win."""
    spec = importlib.util.spec_from_file_location("kafkatool_docgen", ROOT / "scripts" / "docgen.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while it loads
    spec.loader.exec_module(module)
    return module


generated_files = _load_docgen().generated_files


def test_completions_and_man_pages_are_current() -> None:
    stale = [rel for rel, text in generated_files().items()
             if not (ROOT / rel).is_file() or (ROOT / rel).read_text() != text]
    assert not stale, f"regenerate with `python scripts/gen_docs.py`: stale or missing {stale}"


def test_every_command_has_a_man_page() -> None:
    from kafkatool.cli.main import COMMANDS

    for name in COMMANDS:
        assert (ROOT / "man" / f"kafkatool-{name}.1").is_file(), name


def test_bash_completion_is_valid_bash() -> None:
    subprocess.run(["bash", "-n", str(ROOT / "completions" / "kafkatool.bash")], check=True)


@pytest.mark.skipif(shutil.which("man") is None, reason="man is not installed")
def test_man_pages_render() -> None:
    page = ROOT / "man" / "kafkatool-dump-log.1"
    p = subprocess.run(["man", "-l", str(page)], capture_output=True, env={"MANWIDTH": "100", "PATH": "/usr/bin:/bin"})
    assert p.returncode == 0 and b"--print-data-log" in p.stdout.replace(b"\xe2\x80\x90", b"-")
