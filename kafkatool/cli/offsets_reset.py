"""`kafkatool offsets reset` (`kafka-consumer-groups --reset-offsets`): plan, print and apply new offsets.

ConsumerGroupService's `resetOffsets`: one scenario, a scope, the groups' plans (refused while a
group is active), the plan in the release's text or as its `--export` CSV, and with `--execute` an
OffsetCommit per group (ZooKeeper-stored groups: their offset znodes).  The planning is in
`kafkatool.ops.offsets_reset` (cluster reads) and `kafkatool.ops.offsets_report.reset` (pure); this
module parses options and renders.  Registers on the `offsets` app and takes its shared options and
connection helpers from `kafkatool.cli.offsets`.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import typer

from kafkatool.cli.app import EXIT_CODES_HELP, handle_errors
from kafkatool.cli.cluster_options import CommandConfig
from kafkatool.cli.errors import EXIT_FAILURE, EXIT_FINDINGS, CliError
from kafkatool.cli.offsets import (
    _ALL_GROUPS,
    _BOOTSTRAP,
    _GROUP,
    _TIMEOUT,
    _ZOOKEEPER,
    TEXT_FORMATS,
    _brokers,
    _check_groups,
    _check_source,
    _check_timeout,
    _emit,
    _profile,
    _split,
    _translate,
    _zookeeper,
    offsets_app,
)
from kafkatool.cli.render import check_format, render_rows
from kafkatool.release import text_release

RESET_HELP = """Reset committed offsets (kafka-consumer-groups --reset-offsets); a dry run unless --execute.

Choose one scenario: --to-earliest, --to-latest, --to-current, --to-offset N, --shift-by N,
--to-datetime YYYY-MM-DDTHH:mm:SS.sss (UTC unless a zone is given), --by-duration PnDTnHnMnS, or
--from-file FILE (Kafka's CSV, ExportZkOffsets lines or kafkatool's JSON export).  Scope: --topic
T (all partitions) or T:0,1,2, or --all-topics (the group's committed partitions); --from-file
carries its own scope.  Explicit offsets are kept within [earliest, latest] as Kafka does.

Refused (exit 1, nothing written) while a group has active members.  Kafka-stored groups are
written with OffsetCommit; ZooKeeper groups (--zookeeper) by writing their offset znodes.

\b
Examples:
  kafkatool offsets reset --bootstrap-server kafka:9092 --group app --all-topics --to-earliest
  kafkatool offsets reset --bootstrap-server kafka:9092 --group app --topic orders:0,1 --shift-by -100 --execute
  kafkatool offsets reset --bootstrap-server kafka:9092 --group app --all-topics --by-duration PT1H --execute
  kafkatool offsets reset --zookeeper zk:2181 --group old-app --from-file offsets.txt --execute
  kafkatool offsets reset --bootstrap-server kafka:9092 --group app --all-topics --to-latest --export
"""


@offsets_app.command("reset", help=RESET_HELP + "\n" + EXIT_CODES_HELP, no_args_is_help=True)
@handle_errors
def reset(
    group: list[str] = _GROUP,
    all_groups: bool = _ALL_GROUPS,
    bootstrap_server: str = _BOOTSTRAP,
    zookeeper: str = _ZOOKEEPER,
    command_config: CommandConfig = None,
    topic: list[str] = typer.Option(None, "--topic", "-t", help="T or T:0,1,2 (repeatable)."),
    all_topics: bool = typer.Option(False, "--all-topics", help="Every partition the group has an offset for."),
    to_earliest: bool = typer.Option(False, "--to-earliest"),
    to_latest: bool = typer.Option(False, "--to-latest"),
    to_current: bool = typer.Option(False, "--to-current"),
    to_offset: int = typer.Option(None, "--to-offset"),
    shift_by: int = typer.Option(None, "--shift-by"),
    to_datetime: str = typer.Option(None, "--to-datetime", help="YYYY-MM-DDTHH:mm:SS.sss, UTC unless a zone (Z, +HH:MM) follows."),
    by_duration: str = typer.Option(None, "--by-duration", help="ISO-8601 duration back from now, e.g. PT30M."),
    from_file: Path = typer.Option(None, "--from-file", help="A reset plan in any export format."),
    execute: bool = typer.Option(False, "--execute", help="Apply the new offsets."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Only show the plan (the default)."),
    export_csv: bool = typer.Option(False, "--export", help="Print the plan as Kafka's --export CSV."),
    output_format: str = typer.Option("text", "--format", help="text (Kafka's), json, ndjson, csv or table."),
    timeout: float = _TIMEOUT,
) -> None:
    from kafkatool.ops import offsets_report as rep

    fmt = check_format(output_format, TEXT_FORMATS)
    groups = list(dict.fromkeys(_split(group)))
    _check_groups(groups, all_groups, "reset")
    deadline = _check_timeout(timeout)
    if execute and dry_run:
        raise CliError("give only one of --execute and --dry-run")
    zookeeper, bootstrap_server, command_config = _profile(zookeeper, bootstrap_server, command_config, None)
    source = _check_source(bootstrap_server, zookeeper, None, offline_ok=False)
    chosen = [n for n, on in (("--to-earliest", to_earliest), ("--to-latest", to_latest), ("--to-current", to_current),
                              ("--to-offset", to_offset is not None), ("--shift-by", shift_by is not None),
                              ("--to-datetime", to_datetime is not None), ("--by-duration", by_duration is not None),
                              ("--from-file", from_file is not None)) if on]
    if len(chosen) != 1:
        raise CliError("choose exactly one of --to-earliest, --to-latest, --to-current, --to-offset, --shift-by, "
                       "--to-datetime, --by-duration, --from-file" + (f" (got {', '.join(chosen)})" if chosen else ""))
    from kafkatool.ops import offsets_reset as planner

    try:
        scope = planner.parse_scope(_split(topic))
    except rep.ResetError as exc:
        raise CliError(str(exc)) from None
    if from_file is None and not scope and not all_topics:
        raise CliError("One of the reset scopes should be defined: --all-topics, --topic.")
    if scope and all_topics:
        raise CliError("give --topic or --all-topics, not both")
    def parsed(option: str, fn: Any, value: Any) -> Any:
        if value is None:
            return None
        try:
            return fn(value)
        except UnicodeDecodeError:
            raise CliError(f"{option}: {value}: not a text file") from None
        except rep.OffsetsFileError as exc:
            raise CliError(str(exc)) from None
        except ValueError as exc:
            raise CliError(f"{option}: {exc}") from None

    spec = rep.ResetSpec(
        to_earliest=to_earliest, to_latest=to_latest, to_current=to_current, to_offset=to_offset, shift_by=shift_by,
        to_datetime_ms=parsed("--to-datetime", rep.parse_datetime_ms, to_datetime),
        by_duration_ms=parsed("--by-duration", rep.parse_duration_ms, by_duration),
        from_file=parsed("--from-file", lambda f: rep.parse_offsets_file(f.read_text("utf-8"), groups, str(f)), from_file),
    )
    with _translate():
        if source == "zookeeper":
            with _zookeeper(zookeeper, timeout) as zk, \
                    _brokers(bootstrap_server, command_config, timeout, deadline, zk, optional=from_file is not None) as bo:
                names = zk.list_groups() if all_groups else groups
                plans, refused = planner.plan_zookeeper(zk, bo, names, spec, scope, all_topics)
                if execute:
                    for p in plans:
                        zk.commit(p.group, p.offsets)
        else:
            from kafkatool.cluster.groups import KafkaGroups

            with _brokers(bootstrap_server, command_config, timeout, deadline) as bo:
                kg = KafkaGroups(bo)
                names = kg.list_groups() if all_groups else groups
                plans, refused = planner.plan_kafka(kg, bo, names, spec, scope, all_topics)
                failures = []
                if execute:
                    for p in plans:
                        for tp, err in kg.commit(p.group, p.offsets).items():
                            if err:
                                failures.append(f"{p.group} {tp[0]}-{tp[1]}: {err}")
                if failures:
                    raise CliError(f"commit failed for {failures[0]}" + (f" (and {len(failures) - 1} more)" if len(failures) > 1 else ""), EXIT_FAILURE)
    # An active group is refused before anything is printed: no plan line or dry-run note comes first.
    if refused and not plans:
        raise CliError(refused[0] + (f" (and {len(refused) - 1} more groups)" if len(refused) > 1 else ""), EXIT_FINDINGS)
    for why in refused:  # with --all-groups/several --group: the refusals, then the other groups' plans
        sys.stderr.write(f"kafkatool: {why}\n")
    for p in plans:
        for n in p.notes:
            sys.stderr.write(f"kafkatool: note: {p.group}: {n}\n")
    if export_csv or fmt == "text":  # Kafka prints them while planning, before either text
        _emit(rep.format_reset_warnings(plans, text_release()))
    if export_csv:
        ordered: dict[str, dict[Any, int]] = {}
        for g, t, part, o in rep.reset_rows(plans, text_release()):
            ordered.setdefault(g, {})[(t, part)] = o
        _emit(rep.export_csv(ordered, with_group=not (len(groups) == 1 and not all_groups),
                             keep_order=True))
    elif fmt == "text":
        _emit(rep.format_reset(plans, text_release()))
    else:
        render_rows(({"group": p.group, "topic": t, "partition": part, "new_offset": o, "executed": execute}
                     for p in sorted(plans, key=lambda p: p.group) for (t, part), o in sorted(p.offsets.items())),
                    fmt, ["group", "topic", "partition", "new_offset", "executed"])
    if not execute:
        sys.stderr.write("kafkatool: dry run: no offsets changed (add --execute to apply)\n")
    if refused:
        raise typer.Exit(EXIT_FINDINGS)
