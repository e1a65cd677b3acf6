"""Rules the test suite keeps: no test depends on chance, and every test finds the fixtures one way."""

from __future__ import annotations

import ast
import os
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
    own = [
        name
        for name, src in _test_sources().items()
        if re.search(r"""["']shared["']\s*\)?\s*/""", src) or re.search(r"""/\s*["']shared["']""", src)
    ]
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


MIN_WALL_CLOCK_BOUND = 9.0  # seconds: below this a bound guesses the machine's speed, not the behaviour


def _elapsed(node: ast.expr) -> bool:
    """`time.monotonic() - start` (or time(), perf_counter()), or a name that holds such a difference."""
    if isinstance(node, ast.Name):
        return "elapsed" in node.id
    return (
        isinstance(node, ast.BinOp)
        and isinstance(node.op, ast.Sub)
        and isinstance(node.left, ast.Call)
        and isinstance(node.left.func, ast.Attribute)
        and node.left.func.attr in ("monotonic", "time", "perf_counter")
    )


def _seconds(node: ast.expr) -> float | None:
    """The value of a bound made of numbers and arithmetic (e.g. `3 + 6`), else None."""
    if not all(isinstance(n, (ast.Constant, ast.BinOp, ast.operator)) for n in ast.walk(node)):
        return None
    value = eval(compile(ast.Expression(node), "<bound>", "eval"), {"__builtins__": {}})  # noqa: S307
    return float(value) if isinstance(value, (int, float)) else None


def test_wall_clock_bounds_leave_room_for_a_loaded_machine() -> None:
    """`assert elapsed < 3 + 2` failed on a busy CI machine: a test bounding wall-clock time must leave
    MIN_WALL_CLOCK_BOUND seconds at least (assert the behaviour; bound only what a regression would blow)."""
    tight = []
    for name, src in _test_sources().items():
        for node in ast.walk(ast.parse(src)):
            for cmp in (
                (n for n in ast.walk(node) if isinstance(n, ast.Compare))
                if isinstance(node, ast.Assert)
                else ()
            ):
                if _elapsed(cmp.left) and isinstance(cmp.ops[0], (ast.Lt, ast.LtE)):
                    bound = _seconds(cmp.comparators[0])
                    if bound is not None and bound < MIN_WALL_CLOCK_BOUND:
                        tight.append(f"{name}:{cmp.lineno} (< {bound:g} s)")
    assert tight == [], f"wall-clock bounds too tight for a loaded machine: {tight}"


def test_no_test_picks_a_port_and_closes_it() -> None:
    """A port picked free and closed may be taken by another process before the test uses it: a test that
    needs a refusing port takes the `refused_port` fixture (held, never listened on) instead."""
    pickers = [
        f"{name}:{node.lineno}"
        for name, src in _test_sources().items()
        for node in ast.walk(ast.parse(src))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "bind"
    ]
    assert pickers == [], f"tests binding a socket themselves (use the refused_port fixture): {pickers}"


def _starts_kafkatool_module(call: ast.Call) -> bool:
    """A Popen whose argv is written out as `[sys.executable, "-m", "kafkatool", …]`."""
    if not call.args or not isinstance(call.args[0], ast.List):
        return False
    return ["-m", "kafkatool"] == [e.value for e in call.args[0].elts[1:3] if isinstance(e, ast.Constant)]


def test_children_that_get_a_ctrl_c_set_their_own_disposition() -> None:
    """A suite run as a background job (`nohup pytest &`) starts with SIGINT ignored, and so would every
    Python it starts: a test that interrupts a kafkatool child starts it with tests.support.ctrl_c's
    command (or faults.run_forked), never as a bare `python -m kafkatool`."""
    bare = []
    for name, src in _test_sources().items():
        if "SIGINT" not in src:
            continue
        for node in ast.walk(ast.parse(src)):
            if (
                isinstance(node, ast.Call)
                and getattr(node.func, "attr", "") == "Popen"
                and _starts_kafkatool_module(node)
            ):
                bare.append(f"{name}:{node.lineno}")
    assert bare == [], f"interrupted children started without their own SIGINT handler: {bare}"


def test_interrupted_children_see_ctrl_c_when_this_process_ignores_it(tmp_path: Path) -> None:
    """The state a background job hands down, set here on purpose: the children still get Ctrl-C."""
    import signal
    import subprocess

    from kafkatool.ops.safety import INTERRUPT_ENV
    from tests.support.ctrl_c import KAFKATOOL_CTRL_C
    from tests.support.faults import INTERRUPTED_EXIT, run_forked, write_partition

    write_partition(tmp_path / "t-0", [3], index_interval=128)
    args = ["index", "rebuild", str(tmp_path), "--index-interval", "512"]
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        forked = run_forked(args, {INTERRUPT_ENV: "rebuild-index-written"})
        started = subprocess.run(
            [*KAFKATOOL_CTRL_C, *args],
            env={**os.environ, INTERRUPT_ENV: "rebuild-index-written"},
            capture_output=True,
            text=True,
            timeout=120,
        )
    finally:
        signal.signal(signal.SIGINT, previous)
    assert forked == INTERRUPTED_EXIT
    assert (started.returncode, started.stderr) == (INTERRUPTED_EXIT, "kafkatool: interrupted\n")
