"""`--help` of every command says what its docstring and option help say: every character of them.

Rich markup once ate bracketed text (`[clusters.NAME]`), showed `<bool>` after flags and re-wrapped
the lines of `\\b` blocks.  Wrapping may move line breaks (and split a hyphenated word), nothing more.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from kafkatool.cli.main import full_app


def _commands() -> list[Any]:
    root = typer.main.get_command(full_app())
    found = []

    def walk(cmd: Any, path: list[str]) -> None:
        found.append(pytest.param(path, cmd, id=" ".join(path) or "kafkatool"))
        for name, sub in sorted(getattr(cmd, "commands", {}).items()):
            if not getattr(sub, "hidden", False):
                walk(sub, [*path, name])

    walk(root, [])
    return found


def _squash(text: str) -> str:
    return re.sub(r"\s+", "", text.replace("\b", ""))


def _help(path: list[str]) -> str:
    res = CliRunner().invoke(full_app(), [*path, "--help"], env={"COLUMNS": "80"}, catch_exceptions=False)
    assert res.exit_code == 0, res.output
    return res.stdout


@pytest.mark.parametrize(("path", "cmd"), _commands())
def test_help_keeps_every_word(path: list[str], cmd: Any) -> None:
    text = _help(path)
    squashed = _squash(text)
    assert _squash(cmd.help or "") in squashed, f"{path}: the description lost text"
    for param in cmd.params:
        if getattr(param, "hidden", False) or not getattr(param, "help", None):
            continue
        assert _squash(param.help) in squashed, f"{path} {param.opts}: help lost text: {param.help!r}"
    assert "<bool>" not in text, "flags take no value: no metavar"


@pytest.mark.parametrize(("path", "cmd"), _commands())
def test_unwrapped_blocks_keep_their_lines(path: list[str], cmd: Any) -> None:
    """Lines of a paragraph marked \\b (examples, exit-code tables) are printed as written."""
    lines = {line.strip() for line in _help(path).splitlines()}
    for block in (cmd.help or "").split("\b\n")[1:]:
        for line in block.split("\n\n")[0].splitlines():
            if line.strip():
                assert line.strip() in lines, f"{path}: {line.strip()!r} was re-wrapped"


def test_brackets_survive() -> None:
    assert "Config file with [clusters.NAME] tables" in " ".join(_help([]).split())


@pytest.mark.parametrize(("path", "cmd"), _commands())
def test_no_literal_paragraph_marker(path: list[str], cmd: Any) -> None:
    r"""click's `\b` marker is a line of its own, the backspace character: never printed as `\b` text.

    A docstring that writes it `\\b` (or puts it inside a paragraph) shows the two characters."""
    text = _help(path)
    assert "\\b" not in text, f"{path}: --help prints a literal \\b"
    assert "\b" not in text, f"{path}: --help prints a backspace"
