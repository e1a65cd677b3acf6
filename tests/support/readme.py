"""Run the README's ```console examples in order, as a new user would, and compare their output.

A `$ command` line runs in bash (stdout and stderr together, as a terminal shows them) in one
working directory shared by the whole tour; the lines after it are the expected output.  In the
expected text a line `...` stands for any number of lines and a trailing `...` for the rest of a line
(long lines are cut that way by scripts/update_readme.py).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

BLOCK = re.compile(r"^```console\n(.*?)^```", re.S | re.M)
MAX_LINE = 200


@dataclass
class Example:
    command: str
    expected: str


def examples(readme: str) -> list[Example]:
    out = []
    for block in BLOCK.findall(readme):
        cur: Example | None = None
        for line in block.splitlines():
            if line.startswith("$ "):
                cur = Example(line[2:], "")
                out.append(cur)
            elif cur is not None:
                cur.expected += line + "\n"
    return out


def environment(extra: dict[str, str] | None = None) -> dict[str, str]:
    """PATH with this interpreter's scripts first, so `kafkatool` is the one under test."""
    env = dict(os.environ)
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    env["COLUMNS"] = "200"
    env.pop("KAFKATOOL_CLUSTER", None)
    env.update(extra or {})
    return env


def run(example: Example, cwd: Path, env: dict[str, str], timeout: float = 300) -> str:
    p = subprocess.run(
        ["bash", "-c", example.command], cwd=cwd, env=env, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, timeout=timeout, stdin=subprocess.DEVNULL,
    )
    # the scratch directory differs on every run: show it as $PWD
    return p.stdout.decode("utf-8", "replace").replace(str(cwd), "$PWD")


def shorten(output: str) -> str:
    """Output as the README shows it: very long lines cut with a trailing `...`."""
    return "".join(
        (line[: MAX_LINE - 3] + "...\n") if len(line) > MAX_LINE else line + "\n" for line in output.splitlines()
    )


def matches(expected: str, actual: str) -> bool:
    parts = []
    for line in expected.splitlines():
        if line == "...":
            parts.append(r"(?:.*\n)*?")
        elif line.endswith("..."):
            parts.append(re.escape(line[:-3]) + r".*\n")
        else:
            parts.append(re.escape(line) + r"\n")
    return re.fullmatch("".join(parts), actual if actual.endswith("\n") or not actual else actual + "\n") is not None


def pages(docs: Path) -> list[Path]:
    """The docs/ pages that hold ```console examples (each runs in a scratch dir of its own)."""
    return [p for p in sorted(docs.glob("*.md")) if BLOCK.search(p.read_text())]


def page_environment(text: str, zk_root: str | None, name: str, fixtures: Path) -> dict[str, str]:
    """$ZK (a chroot of the page's own, so pages never see each other's changes) and $FIXTURES,
    for the pages that use them."""
    extra = {"FIXTURES": str(fixtures)}
    if zk_root is not None:
        extra["ZK"] = f"{zk_root}/{name}"
    return environment(extra)


def failures(text: str, work: Path, env: dict[str, str]) -> tuple[int, list[str]]:
    """Run a page's examples in order in `work`; the number run and a report of each that differs."""
    out = []
    exs = examples(text)
    for ex in exs:
        got = run(ex, work, env)
        if not matches(ex.expected, got):
            out.append(f"$ {ex.command}\n--- the page says:\n{ex.expected}--- it printed:\n{got}")
    return len(exs), out


def refreshed(text: str, work: Path, env: dict[str, str]) -> str:
    """The page with each example's expected output replaced by what it prints now (expected text
    that still matches, with its `...` elisions, is kept as written)."""
    actual = {}
    for ex in examples(text):
        out = run(ex, work, env)
        actual[ex.command] = ex.expected if matches(ex.expected, out) else shorten(out)

    def rewrite(m: re.Match[str]) -> str:
        lines = [line + "\n" + actual[line[2:]] for line in m.group(1).splitlines() if line.startswith("$ ")]
        return "```console\n" + "".join(lines) + "```"

    return BLOCK.sub(rewrite, text)
