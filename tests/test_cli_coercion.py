"""cli/coercion.py converts plain option values without pydantic: every answer it gives must be
typer's own (its pydantic converter is the oracle), for every option of every command."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import typer.main

from kafkatool.cli import coercion
from kafkatool.cli.main import full_app

# typer before its pydantic converter (0.2x) has nothing to compare: there coercion.py installs nothing
build_runtime_param = pytest.importorskip("typer._coercion").build_runtime_param

TEXTS = ["abc", "", " x ", "-", "é", "\udcff", "a,b", "0", "-0", "7", "-12", "007", "1_000", " 5", "5 ",
         "+5", "1e3", "1.5", "-2.25", "0.1", "1.", ".5", "nan", "inf", "-inf", "9" * 18, "9" * 19,
         "123456789012345.5", "3.141592653589793", "0x10", "١٢", "true", "no"]


INFO_FIELDS = ("exists", "file_okay", "dir_okay", "readable", "writable", "resolve_path", "allow_dash",
               "path_type", "min", "max", "clamp", "parser", "case_sensitive")


def _kind(p: Any) -> tuple[Any, ...]:
    """What decides a parameter's conversion: options alike in all of it convert alike."""
    info = p.type_descriptor.parameter_info
    return (repr(p.type_descriptor.annotation), p.multiple, p.nargs, p.type_descriptor.file_annotation,
            *(repr(getattr(info, f, None)) for f in INFO_FIELDS))


def _params() -> list[tuple[str, Any, Any]]:
    """Every option of every command, one of each kind (named by the first that has it)."""
    group = typer.main.get_command(full_app())
    out = []

    def walk(cmd: Any, path: str) -> None:
        ctx = typer.Context(cmd, info_name=path)
        for p in cmd.params:
            out.append((f"{path} {p.name}", p, ctx))
        for name, sub in getattr(cmd, "commands", {}).items():
            walk(sub, f"{path} {name}")

    walk(group, "kafkatool")
    return out


PARAMS = _params()
KINDS = list({_kind(p): (name, p, ctx) for name, p, ctx in reversed(PARAMS)}.values())


def _values(p: Any, tmp: Path) -> list[Any]:
    existing = [str(tmp), str(tmp / "file"), str(tmp / "missing"), "rel/dir/", "."]
    scalars: list[Any] = [*TEXTS, *existing, 0, 5, -1, 2**40, 2**60, 1.5, -0.0, float("nan"), True, False,
                          tmp, Path("x/y")]
    if p.multiple or p.nargs == -1:
        return [tuple(scalars[i:i + 3]) for i in range(0, len(scalars), 3)] + [(), ["a", "b"], "not-a-list"]
    return scalars


def _outcome(runtime: Any, value: Any, p: Any, ctx: Any) -> tuple[str, Any]:
    try:
        result = runtime.coerce(value, param=p, ctx=ctx)
    except Exception as exc:  # the error, as typer would report it
        return "error", (type(exc).__name__, getattr(exc, "message", str(exc)))
    return "value", (type(result).__name__, repr(result),
                     [type(x).__name__ for x in result] if isinstance(result, list) else None)


def test_most_options_are_converted_without_pydantic() -> None:
    for _, p, _ in PARAMS:
        coercion.install(p)
    typers = [name for name, p, _ in PARAMS if not isinstance(p._runtime_param, coercion.PlainRuntimeParam)]
    assert len(typers) <= 5, typers


@pytest.mark.parametrize("name", [n for n, _, _ in KINDS])
def test_plain_answers_are_typers(name: str, tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    _, p, ctx = next(x for x in KINDS if x[0] == name)
    coercion.install(p)
    ours = p._runtime_param
    if not isinstance(ours, coercion.PlainRuntimeParam):
        pytest.skip("typer converts this option itself")
    theirs = build_runtime_param(p.type_descriptor)
    for value in _values(p, tmp_path):
        assert _outcome(ours, value, p, ctx) == _outcome(theirs, value, p, ctx), (name, value)
