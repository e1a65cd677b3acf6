"""Option values converted without pydantic when the answer is plain, so a command starts fast.

Typer (0.2x) converts every non-flag option value, defaults included, through a pydantic
`TypeAdapter` it builds on first use; importing pydantic (and the asyncio that pydantic_core's
typing_extensions pulls in) costs more than everything else a small `dump-log` does.  Nearly all of
kafkatool's options are `str`, `int`, `float`, `Path` or lists of them, given ordinary values,
where the conversion is `str(x)`, `int(x)`, `float(x)` or `Path(x)` — for those this module's
runtime parameter answers itself; for anything else (a value that is not plainly valid, any
constraint, choice, parser or other type) it hands the value to typer's own converter, so every
error message and every unusual case stays typer's.  tests/test_cli_coercion.py checks the plain
answers against typer's pydantic path, value by value, for every option of every command.

Typer's runtime-parameter hooks are private: where they are missing (another typer) nothing is
installed and typer converts as it always does.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any, get_args, get_origin

try:
    from typer._coercion import RuntimeParam, build_runtime_param
    from typer._param_types import coerce_cli_path
except ImportError:  # a typer without the pydantic converter (or a different layout): nothing to do
    RuntimeParam = None  # type: ignore[assignment,misc]

_INT = re.compile(r"-?(?:0|[1-9][0-9]{0,17})")  # what int() and pydantic read alike, well inside a long
_FLOAT = re.compile(r"-?(?:0|[1-9][0-9]{0,14})(?:\.[0-9]{1,15})?")
_UNDECIDED = object()


def _plain_bool(value: Any) -> Any:  # flags arrive as bools (typer skips those); None is handled before
    return value if type(value) is bool else _UNDECIDED


def _plain_str(value: Any) -> Any:
    if type(value) is str:
        try:
            value.encode("utf-8")  # a lone surrogate (undecodable argv byte) is typer's to judge
        except UnicodeEncodeError:
            return _UNDECIDED
        return value
    return _UNDECIDED


def _plain_int(value: Any) -> Any:
    if type(value) is int:
        return value
    if type(value) is str and _INT.fullmatch(value):
        return int(value)
    return _UNDECIDED


def _plain_float(value: Any) -> Any:
    if type(value) is float and value == value and value not in (float("inf"), float("-inf")):
        return value
    if type(value) is int and abs(value) < 2**53:
        return float(value)
    if type(value) is str and _FLOAT.fullmatch(value):
        return float(value)
    return _UNDECIDED


def _plain_path(value: Any) -> Any:
    if type(value) is str and value and _plain_str(value) is not _UNDECIDED:
        return Path(value)
    if isinstance(value, Path):
        return value
    return _UNDECIDED


_LEAVES = {bool: _plain_bool, str: _plain_str, int: _plain_int, float: _plain_float, Path: _plain_path}


def _leaf(annotation: Any, info: Any) -> Any:
    """The plain converter of one item type, or None when typer must convert it."""
    if info.parser is not None or info.min is not None or info.max is not None or info.clamp:
        return None
    if annotation is Path and info.path_type not in (None, Path):
        return None
    if annotation is not Path and any(  # str with path options is a path to typer
        getattr(info, flag) for flag in ("exists", "resolve_path", "writable", "allow_dash")
    ):
        return None
    return _LEAVES.get(annotation)


if RuntimeParam is not None:

    class PlainRuntimeParam(RuntimeParam):  # type: ignore[misc,valid-type]
        """Converts plain values itself; anything else goes to typer's converter (built on demand)."""

        _descriptor: Any
        _convert: Callable[[Any], Any]
        _is_list: bool
        _is_path: bool
        _typer: Any  # typer's own converter, once a value needed it

        def __init__(self, descriptor: Any, convert: Any, is_list: bool, is_path: bool) -> None:
            super().__init__(parameter_info=descriptor.parameter_info, annotation=descriptor.annotation)
            object.__setattr__(self, "_descriptor", descriptor)
            object.__setattr__(self, "_convert", convert)
            object.__setattr__(self, "_is_list", is_list)
            object.__setattr__(self, "_is_path", is_path)
            object.__setattr__(self, "_typer", None)

        def _typers(self) -> Any:
            if self._typer is None:
                object.__setattr__(self, "_typer", build_runtime_param(self._descriptor))
            return self._typer

        def _coerce_value(self, value: Any, param: Any, ctx: Any) -> Any:
            items = value if self._is_list and isinstance(value, (list, tuple)) else None
            if self._is_list and items is None:
                return self._typers()._coerce_value(value, param=param, ctx=ctx)
            converted = [self._convert(v) for v in (items if items is not None else (value,))]
            if any(c is _UNDECIDED for c in converted):
                return self._typers()._coerce_value(value, param=param, ctx=ctx)
            if self._is_path:  # typer's own checks (exists, readable, file/dir) and its messages
                info = self.parameter_info
                converted = [
                    coerce_cli_path(c, info, path_type=Path, param=param, ctx=ctx) for c in converted
                ]
            return converted if items is not None else converted[0]


def install(param: Any) -> None:
    """Give one typer parameter the plain converter when its type has one (once; idempotent)."""
    if RuntimeParam is None or getattr(param, "_runtime_param", _UNDECIDED) is not None:
        return  # not typer's converter layout, or a converter is already there
    descriptor = getattr(param, "type_descriptor", None)
    if descriptor is None or descriptor.file_annotation is not None:
        return
    annotation = descriptor.annotation
    is_list = get_origin(annotation) is list
    item = get_args(annotation)[0] if is_list else annotation
    convert = _leaf(item, descriptor.parameter_info)
    if convert is None:
        return
    param._runtime_param = PlainRuntimeParam(descriptor, convert, is_list, item is Path)
