"""Checks every option value passes before any command runs, whatever the command.

Commands declare options with plain types (`int`, `float`, `str`, `Path`); what such a value may
never be is the same everywhere, so it is checked once, here, for every option of every command
(new ones included): no empty strings or paths, no integer beyond a Java long, no NaN or infinity,
no negative number unless the option is one whose negatives mean something, and connect strings
that kafka-python and kazoo can use.  The app's group class (`CheckedGroup`) applies the checks to
each command as it is looked up, so `kafkatool <command>` and in-process test runners get them alike.
What an option means (a topic name's rules, a ratio's range) stays with its command.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from typing import Any

import typer
from typer.core import TyperGroup

from kafkatool.cli import coercion

JAVA_LONG_MIN = -(2**63)
JAVA_LONG_MAX = 2**63 - 1
JAVA_INT_MAX = 2**31 - 1

# Options whose negative values mean something (a seed, a relative move, Kafka's -1/-2 sentinels).
SIGNED_OPTIONS = frozenset({"--seed", "--shift-by", "--to-offset", "--coordinator-epoch", "--duration-filter"})


def _connect_check(option: str) -> Callable[[str], None]:
    def check(value: str) -> None:
        from kafkatool.cluster.connect import ClusterInputError, parse_bootstrap, parse_zk_connect

        try:
            (parse_zk_connect if option == "--zookeeper" else parse_bootstrap)(value)
        except ClusterInputError as exc:
            raise ValueError(str(exc).removeprefix(f"{option}: ")) from None

    return check


# Durations in seconds that become a client's int milliseconds (kafka-python, kazoo, Spark): a
# timeout of 0 never waits and one past 2^31-1 ms is an overflow (or, in effect, no timeout at all).
MAX_SECONDS = (2**31 - 1) / 1000


def _duration(value: Any) -> None:
    if isinstance(value, (int, float)) and not 0 < value <= MAX_SECONDS:
        raise ValueError(f"{value:g} seconds: must be more than 0 and at most {int(MAX_SECONDS)} (24 days)")



def _java_int(value: Any) -> None:
    if isinstance(value, int) and value > JAVA_INT_MAX:  # an option of the same name may take text ("128MiB")
        raise ValueError(f"{value} is out of range (a Java int, as in Kafka: at most {JAVA_INT_MAX})")


# Per-option checks of the converted value, by option name.
VALUE_CHECKS: dict[str, Callable[[Any], None]] = {
    "--timeout": _duration,
    "--executor-timeout": _duration,
    "--sample": _duration,
    # what Kafka holds in an int: partition ids, index.interval.bytes, the dump tool's byte limits, ...
    **dict.fromkeys(
        ("--partition", "--index-interval", "--max-bytes", "--max-message-size", "--offsets-partitions",
         "--fetch-bytes", "--start-index", "--replica-shift", "--batch-records", "--segment-bytes",
         "--value-bytes"),
        _java_int,
    ),
}

# Per-option checks of the raw text, by option name.
TEXT_CHECKS: dict[str, Callable[[str], None]] = {
    "--bootstrap-server": _connect_check("--bootstrap-server"),
    "--zookeeper": _connect_check("--zookeeper"),
}


def _option_name(param: Any) -> str:
    opts = [o for o in getattr(param, "opts", ()) if o.startswith("--")]
    return opts[0] if opts else (getattr(param, "name", None) or "?")


def _signed(param: Any) -> bool:
    default = getattr(param, "default", None)
    return _option_name(param) in SIGNED_OPTIONS or (
        isinstance(default, (int, float)) and not isinstance(default, bool) and default < 0
    )


def check_number(value: Any, signed: bool) -> None:
    """Raise ValueError for numbers no option accepts (and negatives where `signed` is false)."""
    if isinstance(value, bool):
        return
    if isinstance(value, int):
        if not JAVA_LONG_MIN <= value <= JAVA_LONG_MAX:
            raise ValueError(f"{value} is out of range (a Java long: at most {JAVA_LONG_MAX})")
    elif isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"{value} is not a finite number")
    else:
        return
    if value < 0 and not signed:
        raise ValueError(f"{value} must not be negative")


def _items(value: Any) -> list[Any]:
    return list(value) if isinstance(value, (list, tuple)) else [value]


def _checked(param: Any) -> None:
    """Wrap one parameter's processing with the checks (once)."""
    if getattr(param, "_kafkatool_checked", False):
        return
    coercion.install(param)  # plain values converted without importing pydantic (cli/coercion.py)
    process = param.process_value
    text_check = TEXT_CHECKS.get(_option_name(param))
    value_check = VALUE_CHECKS.get(_option_name(param))
    signed = _signed(param)

    def check_text(value: Any) -> None:
        for raw in _items(value):
            if isinstance(raw, str):
                if not raw.strip():
                    raise ValueError("must not be empty")
                if text_check is not None:
                    text_check(raw)

    def check_value(value: Any) -> None:
        for item in _items(value):
            check_number(item, signed)
            if value_check is not None:
                value_check(item)

    def process_value(ctx: Any, value: Any) -> Any:
        try:
            check_text(value)
        except ValueError as exc:
            raise typer.BadParameter(str(exc), ctx=ctx, param=param) from None
        result = process(ctx, value)  # typer's conversion and the option's own callback
        try:
            check_value(result)
        except ValueError as exc:
            raise typer.BadParameter(str(exc), ctx=ctx, param=param) from None
        return result

    param.process_value = process_value
    param._kafkatool_checked = True


def _check_help_option(command: Any) -> None:
    """The -h/--help option is made on first use, outside `params`: it gets the same treatment then."""
    if getattr(command, "_kafkatool_help_checked", False) or not hasattr(command, "get_help_option"):
        return
    made = command.get_help_option

    def get_help_option(ctx: Any) -> Any:
        option = made(ctx)
        if option is not None:
            _checked(option)
        return option

    command.get_help_option = get_help_option
    command._kafkatool_help_checked = True


def check_command(command: Any) -> Any:
    """Apply the checks to every parameter of a command (and of its subcommands)."""
    if command is None:
        return None
    _check_help_option(command)
    for param in command.params:
        _checked(param)
    for sub in getattr(command, "commands", {}).values():
        check_command(sub)
    return command


class CheckedGroup(TyperGroup):
    """The app's group: its own options and every command it hands out go through the checks."""

    def make_context(self, info_name: Any, args: Any, parent: Any = None, **extra: Any) -> Any:
        _check_help_option(self)
        for param in self.params:
            _checked(param)
        return super().make_context(info_name, args, parent=parent, **extra)

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        return check_command(super().get_command(ctx, cmd_name))


def physical_memory() -> int | None:
    """Bytes of RAM on this machine (None when the platform does not say)."""
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None

