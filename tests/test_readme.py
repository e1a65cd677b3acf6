"""Follow the README as a new user would: run every ```console example in order, compare the output."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from tests.support.readme import environment, examples, failures, matches, page_environment, pages, run

README = Path(__file__).resolve().parents[1] / "README.md"
DOCS = README.parent / "docs"


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


@pytest.mark.parametrize("page", pages(DOCS), ids=lambda p: p.name)
def test_docs_examples(page: Path, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    """Each docs/ page's ```console examples run in order, in a scratch dir of the page's own; a page
    using $ZK gets a freshly populated cluster chroot (the README's), one using $FIXTURES the fixtures."""
    from tests.conftest import FIXTURES, require_fixtures
    from tests.support.readme_cluster import populated

    text = page.read_text()
    if "$FIXTURES" in text:
        require_fixtures()
    work = tmp_path / "work"
    work.mkdir()
    if "$ZK" not in text:
        count, bad = failures(text, work, page_environment(text, None, "", FIXTURES))
    else:
        zookeeper = request.getfixturevalue("zookeeper")
        name = f"docs-{page.stem}"
        with populated(f"{zookeeper.connect}/{name}"):
            count, bad = failures(text, work, page_environment(text, zookeeper.connect, name, FIXTURES))
    assert count, f"{page.name} lost its examples"
    if bad:
        pytest.fail(f"{len(bad)} of {count} examples of docs/{page.name} differ "
                    "(run scripts/update_readme.py after an intended change):\n\n" + "\n".join(bad[:5]))


def test_readme_is_a_guide_of_at_most_400_lines() -> None:
    """Reference detail lives in docs/ and the measurements in benchmarks/README.md."""
    assert len(README.read_text().splitlines()) <= 400


def test_every_command_section_links_its_page() -> None:
    """README keeps a section per command, and each points at its reference page, which exists."""
    text = README.read_text()
    for m in re.finditer(r"^Reference: \[docs/([\w.-]+\.md)\]\(docs/([\w.-]+\.md)\)", text, re.M):
        assert m.group(1) == m.group(2) and (DOCS / m.group(1)).is_file(), m.group(0)
    assert len(re.findall(r"^Reference: ", text, re.M)) >= 10


SH_BLOCK = re.compile(r"^```sh\n(.*?)^```", re.S | re.M)
INSTALL = "python3 -m venv .venv && . .venv/bin/activate && python3 -m pip install -e . && "


def test_first_command_can_be_pasted_twice(tmp_path: Path) -> None:
    """The fresh-machine command works again in the same place (no fixed demo dir left holding segments).

    The install part (venv and pip, network) is left out; what follows it runs twice, as pasted, in a
    scratch HOME and TMPDIR."""
    text = README.read_text()
    first, second = (b.strip() for b in SH_BLOCK.findall(text)[:2])
    assert "`cd` into it" in text and first.startswith(INSTALL) and ".venv/bin/activate" in second
    home = tmp_path / "home"
    (home / "tmp").mkdir(parents=True)
    env = environment({"HOME": str(home), "TMPDIR": str(home / "tmp")})
    outputs = []
    for _ in range(2):
        p = subprocess.run(["bash", "-c", first.removeprefix(INSTALL)], cwd=home, env=env, capture_output=True,
                           text=True, timeout=120)
        assert p.returncode == 0, p.stderr
        outputs.append(re.sub(re.escape(str(home / "tmp")) + r"/[^/]+", "<tmp>", p.stdout))
    assert outputs[0] == outputs[1] and "| offset: 199 " in outputs[0]
