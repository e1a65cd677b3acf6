"""Kafka's own option shapes for `kafkatool offsets`: `--list`, `--describe`, `--reset-offsets` …

kafka-consumer-groups.sh picks its action with an option (`--list`, `--describe [--offsets]`,
`--reset-offsets`); kafkatool has subcommands (`offsets list`, `offsets` = describe, `offsets
reset`).  Scripts and habits use Kafka's shapes, so the offsets group rewrites them before click
parses: the action option becomes the subcommand, `--describe`/`--offsets` (the default view) are
dropped, and `--state`/`--type` without a value (optional in Kafka's `--list`) get `*` (all).
`--delete`/`--delete-offsets` are refused with one line: kafkatool never deletes groups or offsets.
"""

from __future__ import annotations

from typing import Any

from typer.core import TyperGroup

ACTIONS = {"--list": "list", "--reset-offsets": "reset"}
DEFAULT_VIEW = ("--describe", "--offsets")
LEFT_OUT = ("--delete", "--delete-offsets")
OPTIONAL_VALUE = ("--state", "--type")
ALL = "*"  # the value an optional-value option gets when given bare: show the column, filter nothing


def kafka_shapes(args: list[str], subcommands: set[str]) -> list[str]:
    """`args` with Kafka's action options turned into kafkatool's subcommands (see the module docstring)."""
    if "--" in args:
        head, tail = args[: args.index("--")], args[args.index("--"):]
    else:
        head, tail = list(args), []
    first = next((a for a in head if not a.startswith("-")), None)
    sub: str | None
    if first in subcommands and head and head[0] == first:  # already a subcommand: only optional values
        sub = first
        rest = head
    else:
        for a in head:
            if a in LEFT_OUT:
                raise ValueError(f"{a}: not supported: kafkatool never deletes consumer groups or their "
                                       "offsets (use kafka-consumer-groups.sh)")
        chosen = list(dict.fromkeys(ACTIONS[a] for a in head if a in ACTIONS))
        if len(chosen) > 1:
            raise ValueError("Command must include exactly one action: --list, --describe, --reset-offsets")
        rest = [a for a in head if a not in ACTIONS and a not in DEFAULT_VIEW]
        if chosen:
            rest = [chosen[0], *rest]
        sub = chosen[0] if chosen else None
    if sub == "list":
        fixed: list[str] = []
        for i, a in enumerate(rest):
            fixed.append(a)
            nxt = rest[i + 1] if i + 1 < len(rest) else None
            if a in OPTIONAL_VALUE and (nxt is None or nxt.startswith("-")):
                fixed.append(ALL)
        rest = fixed
    return rest + tail


class KafkaShapesGroup(TyperGroup):
    """A typer group that accepts kafka-consumer-groups.sh's action options (kafka_shapes)."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        try:
            args = kafka_shapes(args, set(self.commands))
        except ValueError as exc:
            ctx.fail(str(exc))
        return list(super().parse_args(ctx, args))
