"""Rules the test suite keeps: no test depends on chance, and every test finds the fixtures one way."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from hypothesis import settings

TESTS = Path(__file__).resolve().parent

def _test_sources() -> dict[str, str]:
    return {p.name: p.read_text() for p in sorted(TESTS.glob("test_*.py"))}


def test_hypothesis_draws_the_same_examples_every_run() -> None:
    assert settings.default.derandomize, "conftest must load a derandomized hypothesis profile"


def test_fixture_paths_come_from_conftest() -> None:
    """KAFKATOOL_SHARED is honoured only when every test takes the shared dir from conftest."""
    own = [name for name, src in _test_sources().items() if re.search(r"""["']shared["']\s*\)?\s*/""", src)
           or re.search(r"""/\s*["']shared["']""", src)]
    assert own == [], f"tests building their own shared/ path (use tests.conftest): {own}"


def _string_args(call: ast.Call) -> list[str]:
    return [a.value for a in call.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]


def test_random_plans_are_seeded() -> None:
    """`reassign --generate --compare` draws Kafka's plan from java.util.Random: a test must seed it."""
    unseeded = []
    for name, src in _test_sources().items():
        for node in ast.walk(ast.parse(src)):
            if isinstance(node, ast.Call):
                args = _string_args(node)
                if "--generate" in args and "--compare" in args and "--seed" not in args:
                    unseeded.append(f"{name}:{node.lineno}")
    assert unseeded == [], f"unseeded random reassignment plans in tests: {unseeded}"
