"""Follow the README as a new user would: run every ```console example in order, compare the output."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.readme import environment, examples, matches, run

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_examples(tmp_path: Path, zookeeper) -> None:  # type: ignore[no-untyped-def]
    from tests.support.readme_cluster import populated

    connect = f"{zookeeper.connect}/readme-test"
    with populated(connect):
        _run_all(tmp_path, connect)


def _run_all(tmp_path: Path, connect: str) -> None:
    exs = examples(README.read_text())
    assert len(exs) >= 10, "the README lost its examples"
    work = tmp_path / "tour"
    work.mkdir()
    env = environment({"ZK": connect})
    failures = []
    for ex in exs:
        out = run(ex, work, env)
        if not matches(ex.expected, out):
            failures.append(f"$ {ex.command}\n--- README says:\n{ex.expected}--- it printed:\n{out}")
    if failures:
        pytest.fail(f"{len(failures)} of {len(exs)} README examples differ "
                    "(run scripts/update_readme.py after an intended change):\n\n" + "\n".join(failures[:5]))
