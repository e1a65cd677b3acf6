"""`kafkatool offsets list` (`kafka-consumer-groups --list`): the consumer groups, optionally with their state
and type, in the text of the brokers' release (or --kafka-release).

The order is Kafka's: the admin client collects the listings in a `HashMap` keyed by group id
(`KafkaAdminClient.ListConsumerGroupsResults`), so `--list` prints that map's order (`HashSet<String>`
order, kafkatool.jvm.java_collections).  Kafka 3.3 prints `GROUP STATE` padded to the longest group
id (at least 15); Kafka 4.0 pads GROUP to that plus 10 and each further column to 20.  A state or type
the broker's ListGroups version does not carry is `Unknown` in 4.0's text (its `Optional.empty()`);
3.3's tool fails there, kafkatool asks DescribeGroups instead.
"""

from __future__ import annotations

import sys

import typer

from kafkatool.cli.app import handle_errors
from kafkatool.cli.cluster_options import CommandConfig
from kafkatool.cli.errors import CliError
from kafkatool.cli.kafka_shapes import ALL
from kafkatool.cli.offsets import (
    _BOOTSTRAP,
    _TIMEOUT,
    _brokers,
    _check_timeout,
    _profile,
    _translate,
    offsets_app,
)
from kafkatool.cli.render import check_format, render_rows
from kafkatool.release import text_release

LIST_HELP = """The consumer groups of a cluster (kafka-consumer-groups --list; `offsets --list` works too).

--state [STATES] adds each group's state (and keeps only the comma-separated STATES when given);
--type [TYPES] (Kafka 4.0's) adds each group's type (classic, consumer) and filters likewise.
Rows (--format json|ndjson|csv|table): group, state, type.

\b
Examples:
  kafkatool offsets list --bootstrap-server kafka:9092
  kafkatool offsets --list --bootstrap-server kafka:9092 --state
  kafkatool offsets list --bootstrap-server kafka:9092 --state Stable,Empty --format json
"""

STATES = ("Unknown", "PreparingRebalance", "CompletingRebalance", "Stable", "Dead", "Empty", "Assigning", "Reconciling")
TYPES = ("Consumer", "Classic", "Share")


def _parse(value: str, valid: tuple[str, ...], what: str) -> set[str]:
    by_lower = {v.lower(): v for v in valid}
    wanted = {by_lower.get(v.strip().lower(), "") for v in value.split(",")}
    if "" in wanted or (what == "types" and "Unknown" in wanted):
        shown = [v for v in valid if v != "Unknown"] if what == "types" else list(valid)
        raise CliError(f"Invalid {what[:-1]} list '{value}'. Valid {what} are: {', '.join(shown)}")
    return wanted


@offsets_app.command("list", help=LIST_HELP, no_args_is_help=True)
@handle_errors
def list_groups(
    bootstrap_server: str = _BOOTSTRAP,
    command_config: CommandConfig = None,
    state: str = typer.Option(None, "--state", metavar="[STATES]", help="Show each group's state; keep only these (comma-separated) when given (no value or * for all)."),
    group_type: str = typer.Option(None, "--type", metavar="[TYPES]", help="Show each group's type; keep only these (comma-separated) when given (no value or * for all)."),
    output_format: str = typer.Option("text", "--format", help="text (Kafka's), json, ndjson, csv or table."),
    timeout: float = _TIMEOUT,
) -> None:
    from kafkatool.jvm.java_collections import string_set_order

    fmt = check_format(output_format, ("text", "json", "ndjson", "csv", "table"))
    deadline = _check_timeout(timeout)
    _, bootstrap_server, command_config = _profile(None, bootstrap_server, command_config, None)
    if not bootstrap_server:
        raise CliError("offsets list: give --bootstrap-server (groups stored in Kafka)")
    states = _parse(state, STATES, "states") if state and state != ALL else set()
    types = _parse(group_type, TYPES, "types") if group_type and group_type != ALL else set()
    with _translate("offsets list"):
        from kafkatool.cluster.groups import KafkaGroups

        with _brokers(bootstrap_server, command_config, timeout, deadline) as bo:
            kg = KafkaGroups(bo)
            listed = {g: (st, ty.capitalize()) for g, st, ty in kg.listings()}
            unknown = [g for g, (st, _) in listed.items() if not st]
            if unknown and (states or (state is not None and not text_release().at_least("4.0")) or fmt != "text"):
                described = kg.describe(unknown)  # ListGroups before v4 (Kafka 2.6) carries no state
                for g in unknown:
                    listed[g] = (described[g].state, listed[g][1])
    order = string_set_order(list(listed))
    rows = [(g, listed[g][0] or "Unknown", listed[g][1] or "Unknown") for g in order
            if (not states or listed[g][0] in states) and (not types or listed[g][1] in types)]
    if fmt != "text":
        render_rows(({"group": g, "state": st, "type": ty} for g, st, ty in rows), fmt, ["group", "state", "type"])
        return
    if state is None and group_type is None:
        sys.stdout.write("".join(f"{g}\n" for g, _, _ in rows))
    elif text_release().at_least("4.0"):
        width = max((max(15, len(g)) for g, _, _ in rows), default=15) + 10
        head = ["GROUP"] + (["TYPE"] if group_type is not None else []) + (["STATE"] if state is not None else [])

        def line(cells: list[str]) -> str:
            return cells[0].ljust(width) + "".join(" " + c.ljust(20) for c in cells[1:]) + "\n"

        out = [line(head)]
        for g, st, ty in rows:
            out.append(line([g] + ([ty] if group_type is not None else []) + ([st] if state is not None else [])))
        sys.stdout.write("".join(out))
    else:
        if group_type is not None:
            raise CliError("--type needs Kafka 4.0's tool (--kafka-release 4.0)")
        width = max([15] + [len(g) for g, _, _ in rows])
        sys.stdout.write("".join(f"{g.ljust(width)} {st}\n" for g, st, _ in [("GROUP", "STATE", "")] + rows))
