"""`kafkatool offsets streams`: streams groups (KIP-1071) as Kafka 4.x's `kafka-streams-groups.sh` shows
them (list, describe, reset-offsets, delete-offsets, delete), in the text of the brokers' release."""

from __future__ import annotations

import sys
from typing import Any

import typer

from kafkatool.cli.app import handle_errors
from kafkatool.cli.cluster_options import CommandConfig
from kafkatool.cli.errors import EXIT_FAILURE, EXIT_FINDINGS, EXIT_USAGE, CliError
from kafkatool.cli.offsets import (
    _BOOTSTRAP,
    _GROUP,
    _TIMEOUT,
    TEXT_FORMATS,
    _emit,
    _split,
    offsets_app,
)
from kafkatool.cli.offsets_groups import _groups_session, _release, _show_reset
from kafkatool.cli.render import check_format, render_rows
from kafkatool.release import text_release

STREAMS_HELP = """Streams groups (KIP-1071, Kafka 4.2+), as kafka-streams-groups.sh --list and --describe show them.

\b
Actions (exactly one):
  --list                      the streams groups (with --state: GROUP and STATE)
  --describe                  per group: OFFSET-LAG of the partitions of the members' active tasks;
                              --members or --state instead; --verbose adds epochs and offsets
  --reset-offsets             the committed offsets of --input-topic T[:P,…] or --all-input-topics:
                              --to-earliest, --to-latest, --to-current, --to-offset, --shift-by or
                              --to-datetime; a dry run unless --execute; the group must be inactive
  --delete-offsets            the committed offsets of --input-topic T[:P,…] or --all-input-topics
  --delete                    delete the (empty) groups (their internal topics are left in place)

The text is the brokers' release's kafka-streams-groups.sh (--kafka-release chooses; 4.4 adds the
ASSIGNOR column of --state). Brokers before 4.2 have no streams groups (4.1's is an unstable preview
they do not advertise): one line says so, exit 2.

\b
Rows (--format json|ndjson|csv|table): describe: group, topic, partition, current_offset, leader_epoch,
log_end_offset, lag; --members: group, member_id, member_epoch, process_id, client_id, protocol, active,
standby, warmup; --state: group, coordinator, assignor, state, group_epoch, assignment_epoch, members;
--list: group, state.
Exit codes: 0 ok; 1 a deletion failed; 2 usage (or the brokers have no streams groups); 3 cluster failure.

\b
Examples:
  kafkatool offsets streams --bootstrap-server kafka:9092 --list
  kafkatool offsets streams --bootstrap-server kafka:9092 --describe --group wordcount
  kafkatool offsets streams --bootstrap-server kafka:9092 --describe --group wordcount --members --verbose
"""


@offsets_app.command("streams", help=STREAMS_HELP, no_args_is_help=True)
@handle_errors
def streams(
    list_: bool = typer.Option(False, "--list", help="List the streams groups."),
    describe: bool = typer.Option(False, "--describe", help="Describe the groups (offsets, --members or --state)."),
    delete: bool = typer.Option(False, "--delete", help="Delete the (empty) groups; their internal topics stay."),
    reset_offsets: bool = typer.Option(False, "--reset-offsets", help="Reset the committed offsets of input topics."),
    delete_offsets: bool = typer.Option(False, "--delete-offsets", help="Delete the committed offsets of input topics."),
    group: list[str] = _GROUP,
    all_groups: bool = typer.Option(False, "--all-groups", help="Every streams group."),
    input_topic: list[str] = typer.Option(None, "--input-topic", help="--reset-offsets: T or T:0,1 (repeatable)."),
    all_input_topics: bool = typer.Option(False, "--all-input-topics", help="--reset-offsets: every input topic the group has offsets for."),
    to_earliest: bool = typer.Option(False, "--to-earliest", help="Reset to the log-start offsets."),
    to_latest: bool = typer.Option(False, "--to-latest", help="Reset to the log-end offsets."),
    to_current: bool = typer.Option(False, "--to-current", help="Reset to the committed offsets."),
    to_offset: int = typer.Option(None, "--to-offset", help="Reset to this offset."),
    shift_by: int = typer.Option(None, "--shift-by", help="Move the committed offsets by N (negative: back)."),
    to_datetime: str = typer.Option(None, "--to-datetime", help="Reset to the first offset at or after YYYY-MM-DDTHH:mm:SS.sss[zone]."),
    execute: bool = typer.Option(False, "--execute", help="Apply the reset (default: dry run)."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Only show the reset (the default)."),
    members: bool = typer.Option(False, "--members", help="--describe: the members and their tasks."),
    state: bool = typer.Option(False, "--state", help="--describe: coordinator, state, members; --list: with states."),
    offsets: bool = typer.Option(False, "--offsets", help="--describe: the offsets (the default)."),
    verbose: bool = typer.Option(False, "--verbose", help="--describe: epochs and offsets as well."),
    bootstrap_server: str = _BOOTSTRAP,
    command_config: CommandConfig = None,
    output_format: str = typer.Option("text", "--format", help="text (kafka-streams-groups.sh), json, ndjson, csv or table."),
    timeout: float = _TIMEOUT,
) -> None:
    fmt = check_format(output_format, TEXT_FORMATS)
    if sum((list_, describe, delete, reset_offsets, delete_offsets)) != 1:
        raise CliError("offsets streams: give exactly one of --list, --describe, --reset-offsets, --delete-offsets "
                       "and --delete")
    groups_ = list(dict.fromkeys(_split(group)))
    action = ("--describe" if describe else "--delete" if delete else "--reset-offsets" if reset_offsets
              else "--delete-offsets")
    if delete_offsets and (all_groups or len(groups_) != 1 or bool(input_topic) == all_input_topics):
        raise CliError("offsets streams: --delete-offsets takes one --group and --input-topic or --all-input-topics")
    if not list_ and not all_groups and not groups_:
        raise CliError(f"offsets streams: {action} needs --group G (or --all-groups)")
    scenarios = sum((to_earliest, to_latest, to_current, to_offset is not None, shift_by is not None,
                     to_datetime is not None))
    if reset_offsets and (scenarios != 1 or bool(input_topic) == all_input_topics):
        raise CliError("offsets streams: --reset-offsets needs one of --to-earliest, --to-latest, --to-current, "
                       "--to-offset, --shift-by and --to-datetime, and --input-topic or --all-input-topics")
    if not reset_offsets and (scenarios or execute or dry_run or ((input_topic or all_input_topics) and not delete_offsets)):
        raise CliError("offsets streams: the reset scenarios, --input-topic(s), --execute and --dry-run go with --reset-offsets")
    if execute and dry_run:
        raise CliError("offsets streams: give --execute or --dry-run, not both")
    if all_groups and groups_:
        raise CliError("offsets streams: give --group or --all-groups, not both")
    if sum((members, state, offsets)) > 1 or ((members or offsets or verbose) and not describe):
        raise CliError("offsets streams: --members, --state, --offsets and --verbose describe (--state also lists); "
                       "give at most one of --members, --state and --offsets")
    from kafkatool.cluster.groups import KafkaGroups
    from kafkatool.cluster.streams_groups import StreamsGroups
    from kafkatool.ops import streams_text as st

    with _groups_session("offsets streams", bootstrap_server, command_config, timeout) as (bo, bootstrap):
        kg = KafkaGroups(bo)
        sg = StreamsGroups(kg)
        sg.require(bootstrap)
        if list_:
            from kafkatool.ops.share_text import share_list_text

            listed = [g for g in sg.list_all() if g.group_type == "streams"]  # (kafka-python knows no "streams" type)
            if fmt == "text":
                _emit(share_list_text(listed, state))
            else:
                render_rows(({"group": g.group, "state": g.state} for g in listed), fmt, ["group", "state"])
            return
        if delete:
            _streams_delete(sg, groups_, all_groups, fmt)
            return
        if delete_offsets:
            _streams_delete_offsets(sg, kg, bo, groups_[0], _split(input_topic), fmt)
            return
        if reset_offsets:
            from kafkatool.ops import offsets_report as rep

            spec = rep.ResetSpec(to_earliest=to_earliest, to_latest=to_latest, to_current=to_current,
                                 to_offset=to_offset, shift_by=shift_by,
                                 to_datetime_ms=rep.parse_datetime_ms(to_datetime) if to_datetime else None)
            names = [g.group for g in sg.list_all() if g.group_type == "streams"] if all_groups else groups_
            _streams_reset(sg, kg, bo, names, spec, _split(input_topic), execute, fmt)
            return
        names = [g.group for g in sg.list_all() if g.group_type == "streams"] if all_groups else groups_
        described = sg.describe(names)
        rows: list[dict[str, Any]] = []
        for name in names:  # the tool describes them in the order given
            d = described[name]
            if d.error or d.state == "Dead":
                raise CliError(f"offsets streams: group '{name}': {d.error or 'does not exist'}", EXIT_USAGE)
            if state:
                if fmt == "text":
                    _emit(st.streams_state_text(d, text_release(), verbose))
                c = d.coordinator
                rows.append({"group": name, "coordinator": None if c is None else f"{c.host}:{c.port} ({c.id})",
                             "assignor": d.assignor, "state": d.state, "group_epoch": d.group_epoch,
                             "assignment_epoch": d.assignment_epoch, "members": len(d.members)})
            elif members:
                if fmt == "text":
                    _emit(st.streams_members_text(d, verbose))
                rows += [{"group": name, "member_id": m.member_id, "member_epoch": m.member_epoch,
                          "process_id": m.process_id, "client_id": m.client_id,
                          "protocol": "classic" if m.is_classic else "streams",
                          "active": [f"{s}:{p}" for s, ps in m.active for p in ps],
                          "standby": [f"{s}:{p}" for s, ps in m.standby for p in ps],
                          "warmup": [f"{s}:{p}" for s, ps in m.warmup for p in ps]} for m in d.members]
            else:
                try:
                    tps = st.active_partitions(d)
                except ValueError as exc:
                    raise CliError(f"offsets streams: group '{name}': {exc}", EXIT_FAILURE) from None
                committed = kg.committed([name])[name]
                start = {tp: o.offset for tp, o in bo.log_start_offsets(tps).items() if o.offset is not None}
                end = {tp: o.offset for tp, o in bo.log_end_offsets(tps).items() if o.offset is not None}
                known = {tp: start[tp] for tp in tps if tp in start and tp in end}
                offset_rows = st.streams_offset_rows(d, committed, known, end)
                if fmt == "text":
                    _emit(st.streams_offsets_text(d, offset_rows, verbose))
                rows += [{"group": name, "topic": t, "partition": p, "current_offset": cur, "leader_epoch": ep,
                          "log_end_offset": leo, "lag": lag} for t, p, cur, ep, leo, lag in offset_rows]
    if fmt != "text":
        render_rows(rows, fmt)


def _streams_delete(sg: Any, names: list[str], all_groups: bool, fmt: str) -> None:
    """StreamsGroupCommand's `deleteGroups` without `--delete-all-internal-topics`: its pre-checks
    (from ListGroups), then DeleteGroups for the rest."""
    from kafkatool.ops.share_text import share_delete_text

    listed = {g.group: g for g in sg.list_all() if g.group_type == "streams"}
    if all_groups:
        names = list(listed)
    results: dict[str, str | None] = {}
    for g in dict.fromkeys(names):
        found = listed.get(g)
        if found is None:
            results[g] = f"java.lang.IllegalArgumentException: Group '{g}' does not exist or is not a streams group."
        elif found.state == "Dead":
            results[g] = f"java.lang.IllegalStateException: Streams group '{g}' group state is DEAD."
        elif found.state != "Empty":
            results[g] = f"org.apache.kafka.common.errors.GroupNotEmptyException: Streams group '{g}' is not EMPTY."
    todo = [g for g in dict.fromkeys(names) if g not in results]
    if todo:
        results.update(sg.delete(todo))
    if fmt == "text":
        _emit(share_delete_text(results, "streams"))
    else:
        render_rows(({"group": g, "error": e} for g, e in sorted(results.items())), fmt, ["group", "error"])
    if any(results.values()):
        raise CliError("offsets streams: some groups could not be deleted", EXIT_FINDINGS)


def _streams_reset(sg: Any, kg: Any, bo: Any, names: list[str], spec: Any, topics: list[str], execute: bool,
                   fmt: str) -> None:
    """StreamsGroupCommand's `resetOffsets`: inactive groups only; the partitions of the group's input
    topics (its committed ones, or those named that it has offsets for); the plan printed in the
    streams tool's own fixed-width format (4.0's), which every release keeps."""
    from kafkatool.ops import offsets_report as rep
    from kafkatool.ops.offsets_reset import parse_scope, plan_group, scope_partitions

    described = sg.describe(names)
    plans, refused = [], []
    for g in names:
        d = described[g]
        if d.error:
            raise CliError(f"offsets streams: group '{g}': {d.error}", EXIT_USAGE)
        if d.state not in ("Empty", "Dead"):
            refused.append(f"Assignments can only be reset if the group '{g}' is inactive, but the current state is "
                           f"{d.state}.")
            continue
        committed_all = kg.committed([g])[g]
        committed = {tp: (c.offset if c is not None else None) for tp, c in committed_all.items()}
        if topics:
            scope = parse_scope(topics)
            whole = [t for t, ps in scope.items() if ps is None]
            parts = scope_partitions(scope, bo.metadata(whole).topics if whole else {})
            if not all(tp in committed_all for tp in parts):
                refused.append(f"One or more topics are not part of the group '{g}'.")
                continue
        else:
            parts = sorted(tp for tp in committed_all if tp[0] in d.input_topics)
        plans.append(plan_group(g, spec, parts, committed, bo))
    if execute:
        for p in plans:
            failed = {tp: e for tp, e in kg.commit(p.group, p.offsets).items() if e}
            if failed:
                (t, part), e = next(iter(failed.items()))
                raise CliError(f"offsets streams: commit failed for {p.group} {t}-{part}: {e}", EXIT_FAILURE)
    for p in plans:
        for n in p.notes:
            sys.stderr.write(f"kafkatool: note: {p.group}: {n}\n")
    release = _release(4, 0)  # StreamsGroupCommand.printOffsetsToReset: "%-30s %-30s %-10s %-15s"
    _show_reset(plans, fmt, execute,
                lambda: rep.format_reset_warnings(plans, release) + rep.format_reset(plans, release))
    if refused:
        raise CliError(refused[0] + (f" (and {len(refused) - 1} more groups)" if len(refused) > 1 else ""),
                       EXIT_FINDINGS)


def _streams_delete_offsets(sg: Any, kg: Any, bo: Any, group: str, topics: list[str], fmt: str) -> None:
    """StreamsGroupCommand's `deleteOffsets`: the partitions of the named topics (all of a topic named
    without partitions) or of every input topic the group has offsets for, then OffsetDelete."""
    from kafkatool.cluster.share_groups import java_error_text
    from kafkatool.cluster.streams_groups import delete_offsets
    from kafkatool.ops.offsets_reset import parse_scope
    from kafkatool.ops.streams_text import streams_delete_offsets_text

    per: dict[tuple[str, int], str | None] = {}
    if topics:
        scope = parse_scope(topics)
        whole = [t for t, ps in scope.items() if ps is None]
        meta = bo.metadata(whole) if whole else None
        parts: list[tuple[str, int]] = []
        for t, ps in scope.items():
            if ps is not None:
                parts += [(t, p) for p in ps]
            elif meta is not None and t in meta.topics:
                parts += [(t, p) for p in meta.topics[t]]
            else:  # describeTopics failed for it: one row, partition "-"
                per[(t, -1)] = java_error_text(3)
    else:
        d = sg.describe([group])[group]
        parts = sorted(tp for tp in kg.committed([group])[group] if tp[0] in d.input_topics)
    top_code, codes = delete_offsets(sg, group, parts) if parts else (0, {})
    for tp in parts:
        code = codes.get(tp, top_code)
        per[tp] = java_error_text(code or top_code) if (code or top_code) else None
    if top_code == 0 and any(codes.values()):
        top_code = next(c for c in codes.values() if c)
    if top_code == 0:
        kind, top = "none", None
    elif top_code in (24, 69, 30, 68):
        kind, top = "named", java_error_text(top_code).split(": ", 1)[1]
    elif top_code in (86, 29, 3):
        kind, top = "partition", None
    else:
        kind, top = "unknown", java_error_text(top_code)
    if fmt == "text":
        _emit(streams_delete_offsets_text(group, top, kind, per))
    else:
        render_rows(({"group": group, "topic": t, "partition": p if p >= 0 else None, "error": e}
                     for (t, p), e in sorted(per.items())), fmt, ["group", "topic", "partition", "error"])
    if kind != "none":
        raise CliError(f"offsets streams: deleting offsets of '{group}' failed", EXIT_FINDINGS)
