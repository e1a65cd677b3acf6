"""`kafkatool offsets groups` and `kafkatool offsets share`: groups of every type, as Kafka 4.x's
`kafka-groups.sh --list` and `kafka-share-groups.sh` show them (text of the brokers' release)."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import typer

from kafkatool.cli.app import handle_errors
from kafkatool.cli.cluster_options import CommandConfig
from kafkatool.cli.errors import EXIT_FAILURE, EXIT_FINDINGS, EXIT_USAGE, CliError
from kafkatool.cli.offsets import (
    _BOOTSTRAP,
    _GROUP,
    _TIMEOUT,
    _TOPIC,
    TEXT_FORMATS,
    _brokers,
    _check_timeout,
    _emit,
    _emit_chunks,
    _profile,
    _split,
    _translate,
    offsets_app,
)
from kafkatool.cli.render import check_format, render_rows
from kafkatool.release import text_release

GROUPS_HELP = """Every group of the cluster with its type and protocol, as kafka-groups.sh --list.

Asks every broker (ListGroups): classic and consumer groups, share groups (KIP-932) and streams groups
(KIP-1071). Filters, as kafka-groups.sh applies them (the first one given wins): --group-type TYPE
(classic, consumer, share, streams; with --protocol PROTOCOL as well), --protocol PROTOCOL (the
group's protocol type, e.g. consumer, connect), --consumer (consumer-protocol groups of either type),
--share, --streams.

\b
Rows (--format json|ndjson|csv|table): group, type, protocol, state.
Exit codes: 0 ok; 2 usage; 3 cluster unreachable.

\b
Examples:
  kafkatool offsets groups --bootstrap-server kafka:9092
  kafkatool offsets groups --bootstrap-server kafka:9092 --share
  kafkatool offsets groups --bootstrap-server kafka:9092 --group-type consumer --format json
"""

SHARE_HELP = """Share groups (KIP-932, Kafka 4.1+; GA in 4.2), as kafka-share-groups.sh shows them.

\b
Actions (exactly one):
  --list                      the share groups (with --state: GROUP and STATE)
  --describe                  per group: start offset (and, from 4.2, lag) of each partition;
                              --members or --state instead; --verbose adds epochs
  --reset-offsets             --to-earliest, --to-latest, --to-datetime, --to-offset or --to-current
                              for --topic T[:P,…] (default: the partitions the group has state
                              for); a dry run unless --execute; the group must be empty (Kafka
                              4.1's tool cannot reset: 4.2's text)
  --delete-offsets            forget the group's state for --topic T (repeatable)
  --delete                    delete the (empty) groups

The text is the brokers' release's kafka-share-groups.sh (--kafka-release chooses). Brokers before 4.1
have no share groups: one line says so, exit 2.

\b
Rows (--format json|ndjson|csv|table): describe: group, topic, partition, start_offset, leader_epoch,
lag; --members: group, member_id, host, client_id, member_epoch, partitions, assignment; --state: group,
coordinator, state, group_epoch, assignment_epoch, members; --list: group, state.
Exit codes: 0 ok; 1 a reset refused (group not empty) or a deletion failed; 2 usage; 3 cluster failure.

\b
Examples:
  kafkatool offsets share --bootstrap-server kafka:9092 --list
  kafkatool offsets share --bootstrap-server kafka:9092 --describe --group sg1
  kafkatool offsets share --bootstrap-server kafka:9092 --describe --group sg1 --members --verbose
  kafkatool offsets share --bootstrap-server kafka:9092 --reset-offsets --group sg1 --topic orders --to-earliest --execute
  kafkatool offsets share --bootstrap-server kafka:9092 --delete-offsets --group sg1 --topic orders
"""


@offsets_app.command("groups", help=GROUPS_HELP, no_args_is_help=True)
@handle_errors
def groups(
    bootstrap_server: str = _BOOTSTRAP,
    command_config: CommandConfig = None,
    group_type: str = typer.Option(None, "--group-type", "--type", help="Only groups of this type."),
    protocol: str = typer.Option(None, "--protocol", help="Only groups of this protocol type."),
    consumer: bool = typer.Option(False, "--consumer", help="Only consumer-protocol groups (classic or consumer)."),
    share: bool = typer.Option(False, "--share", help="Only share groups."),
    streams: bool = typer.Option(False, "--streams", help="Only streams groups (Kafka 4.1+ text)."),
    output_format: str = typer.Option("text", "--format", help="text (kafka-groups.sh), json, ndjson, csv or table."),
    timeout: float = _TIMEOUT,
) -> None:
    from kafkatool.ops.share_text import STREAMS_FILTER_SINCE, filter_listings, groups_list_text

    fmt = check_format(output_format, TEXT_FORMATS)
    if sum(bool(x) for x in (group_type, consumer, share, streams)) > 1 or (protocol and (consumer or share or streams)):
        raise CliError("offsets groups: give at most one of --group-type (with --protocol), --protocol, --consumer, "
                       "--share and --streams")
    types = ("classic", "consumer", "share", "streams")
    if group_type is not None:
        group_type = group_type.strip().lower()
        if group_type not in types:
            raise CliError(f"offsets groups: --group-type {group_type!r}: valid types are 'classic', 'consumer', "
                           "'share' and 'streams'")
    from kafkatool.cluster.groups import KafkaGroups
    from kafkatool.cluster.share_groups import ShareGroups

    with _groups_session("offsets groups", bootstrap_server, command_config, timeout) as (bo, _bootstrap):
        listed = ShareGroups(KafkaGroups(bo)).list_all()
    if streams and text_release() < STREAMS_FILTER_SINCE:
        raise CliError(f"offsets groups: --streams came with Kafka {STREAMS_FILTER_SINCE}'s kafka-groups.sh")
    rows = filter_listings(listed, group_type, protocol, consumer, share, streams)
    if fmt == "text":
        _emit(groups_list_text(rows))
    else:
        render_rows(({"group": g.group, "type": g.group_type, "protocol": g.protocol_type, "state": g.state}
                     for g in rows), fmt, ["group", "type", "protocol", "state"])


@offsets_app.command("share", help=SHARE_HELP, no_args_is_help=True)
@handle_errors
def share(
    list_: bool = typer.Option(False, "--list", help="List the share groups."),
    describe: bool = typer.Option(False, "--describe", help="Describe the groups (offsets, --members or --state)."),
    reset_offsets: bool = typer.Option(False, "--reset-offsets", help="Reset the groups' start offsets."),
    delete_offsets: bool = typer.Option(False, "--delete-offsets", help="Delete the group's state for --topic."),
    delete: bool = typer.Option(False, "--delete", help="Delete the groups."),
    group: list[str] = _GROUP,
    all_groups: bool = typer.Option(False, "--all-groups", help="Every share group."),
    topic: list[str] = _TOPIC,
    members: bool = typer.Option(False, "--members", help="--describe: the members."),
    state: bool = typer.Option(False, "--state", help="--describe: coordinator, state, members; --list: with states."),
    offsets: bool = typer.Option(False, "--offsets", help="--describe: the offsets (the default)."),
    verbose: bool = typer.Option(False, "--verbose", help="--describe: epochs as well."),
    to_earliest: bool = typer.Option(False, "--to-earliest", help="Reset to each partition's log-start offset."),
    to_latest: bool = typer.Option(False, "--to-latest", help="Reset to each partition's log-end offset."),
    to_datetime: str = typer.Option(None, "--to-datetime", help="Reset to the first offset at or after YYYY-MM-DDTHH:mm:SS.sss[zone]."),
    to_offset: int = typer.Option(None, "--to-offset", help="Reset to this offset (kept within the log; Kafka 4.4's tool)."),
    to_current: bool = typer.Option(False, "--to-current", help="Keep the current start offsets (the log end where none; 4.4)."),
    execute: bool = typer.Option(False, "--execute", help="Apply the reset (default: dry run)."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Only show the reset (the default)."),
    bootstrap_server: str = _BOOTSTRAP,
    command_config: CommandConfig = None,
    output_format: str = typer.Option("text", "--format", help="text (kafka-share-groups.sh), json, ndjson, csv or table."),
    timeout: float = _TIMEOUT,
) -> None:
    fmt = check_format(output_format, TEXT_FORMATS)
    actions = [n for n, v in (("--list", list_), ("--describe", describe), ("--reset-offsets", reset_offsets),
                              ("--delete-offsets", delete_offsets), ("--delete", delete)) if v]
    if len(actions) != 1:
        raise CliError("offsets share: give exactly one of --list, --describe, --reset-offsets, --delete-offsets "
                       "and --delete")
    groups_ = list(dict.fromkeys(_split(group)))
    topics = _split(topic)
    if not list_ and not all_groups and not groups_:
        raise CliError(f"offsets share: {actions[0]} needs --group G (or --all-groups)")
    if all_groups and groups_:
        raise CliError("offsets share: give --group or --all-groups, not both")
    if (reset_offsets or delete_offsets) and (all_groups or len(groups_) != 1):
        raise CliError(f"offsets share: {actions[0]} takes one --group")
    if sum((members, state, offsets)) > 1 or ((members or offsets or verbose) and not describe) or (state and not (describe or list_)):
        raise CliError("offsets share: --members, --state, --offsets and --verbose describe (--state also lists); "
                       "give at most one of --members, --state and --offsets")
    if delete_offsets and not topics:
        raise CliError("offsets share: --delete-offsets needs --topic")
    scenarios = sum((to_earliest, to_latest, to_datetime is not None, to_offset is not None, to_current))
    if reset_offsets and scenarios != 1:
        raise CliError("offsets share: --reset-offsets needs one of --to-earliest, --to-latest, --to-datetime, "
                       "--to-offset and --to-current")
    if not reset_offsets and (scenarios or execute or dry_run):
        raise CliError("offsets share: --to-earliest/--to-latest/--to-datetime/--execute/--dry-run go with --reset-offsets")
    if execute and dry_run:
        raise CliError("offsets share: give --execute or --dry-run, not both")
    from kafkatool.cluster.groups import KafkaGroups
    from kafkatool.cluster.share_groups import ShareGroups

    with _groups_session("offsets share", bootstrap_server, command_config, timeout) as (bo, bootstrap):
        sg = ShareGroups(KafkaGroups(bo))
        sg.require(bootstrap)
        if list_:
            _share_list(sg, state, fmt)
        elif describe:
            names = [g.group for g in sg.list_all(types=["share"])] if all_groups else groups_
            _share_describe(sg, names, members, state, verbose, fmt)
        elif reset_offsets:
            _share_reset(sg, bo, groups_[0], topics, to_earliest, to_latest, to_datetime, execute, fmt,
                         to_offset, to_current)
        elif delete_offsets:
            _share_delete_offsets(sg, groups_[0], topics, fmt)
        else:
            _share_delete(sg, groups_, all_groups, fmt)


@contextmanager
def _groups_session(thing: str, bootstrap_server: str | None, command_config: Path | None,
                    timeout: float) -> Iterator[tuple[Any, str]]:
    """The brokers of --bootstrap-server (else the profile's) within --timeout, cluster failures as one line:
    (the connection, the bootstrap servers asked)."""
    deadline = _check_timeout(timeout)
    _zk, bootstrap_server, command_config = _profile(None, bootstrap_server, command_config, None)
    if not bootstrap_server:
        raise CliError(f"{thing}: give --bootstrap-server")
    with _translate(thing), _brokers(bootstrap_server, command_config, timeout, deadline) as bo:
        yield bo, bootstrap_server


def _share_list(sg: Any, with_state: bool, fmt: str) -> None:
    from kafkatool.ops.share_text import share_list_text

    listed = sg.list_all(types=["share"])
    if fmt == "text":
        _emit(share_list_text(listed, with_state))
    else:
        render_rows(({"group": g.group, "state": g.state} for g in listed), fmt, ["group", "state"])


def _share_describe(sg: Any, names: list[str], members: bool, state: bool, verbose: bool, fmt: str) -> None:
    from kafkatool.ops.share_text import share_members_text, share_offsets_text, share_state_text

    described = sg.describe(names)
    for g in names:
        if described[g].error:
            raise CliError(f"offsets share: group '{g}': {described[g].error}", EXIT_USAGE)
    if members:
        if fmt == "text":
            _emit_chunks(share_members_text(described, verbose))
            return
        render_rows(({"group": g, "member_id": m.member_id, "host": m.host, "client_id": m.client_id,
                      "member_epoch": m.member_epoch, "partitions": len(m.assignment),
                      "assignment": [f"{t}-{p}" for t, p in m.assignment]}
                     for g in sorted(described) for m in sorted(described[g].members, key=lambda m: m.member_id)),
                    fmt, ["group", "member_id", "host", "client_id", "member_epoch", "partitions", "assignment"])
        return
    if state:
        if fmt == "text":
            _emit_chunks(share_state_text(described, verbose))
            return
        render_rows(({"group": g, "coordinator": None if d.coordinator is None else
                      f"{d.coordinator.host}:{d.coordinator.port} ({d.coordinator.id})", "state": d.state,
                      "group_epoch": d.group_epoch, "assignment_epoch": d.assignment_epoch, "members": len(d.members)}
                     for g, d in sorted(described.items())),
                    fmt, ["group", "coordinator", "state", "group_epoch", "assignment_epoch", "members"])
        return
    for g in names:
        if described[g].state == "Dead":
            raise CliError(f"offsets share: group '{g}': does not exist", EXIT_USAGE)
    offsets = {g: sg.offsets(g) for g in names}
    if fmt == "text":
        _emit(share_offsets_text(offsets, text_release(), verbose))
        return
    render_rows(({"group": g, "topic": t, "partition": p, "start_offset": o.start_offset if o else None,
                  "leader_epoch": o.leader_epoch if o else None, "lag": o.lag if o else None}
                 for g in sorted(offsets) for (t, p), o in sorted(offsets[g].items())),
                fmt, ["group", "topic", "partition", "start_offset", "leader_epoch", "lag"])


def _share_reset(sg: Any, bo: Any, group: str, topics: list[str], earliest: bool, latest: bool,
                 datetime_text: str | None, execute: bool, fmt: str, to_offset: int | None = None,
                 to_current: bool = False) -> None:
    from kafkatool.ops import offsets_report as rep
    from kafkatool.ops.offsets_reset import parse_scope, scope_partitions

    d = sg.describe([group])[group]
    if d.state not in ("Empty", "Dead"):
        raise CliError(f"Share group '{group}' is not empty.", EXIT_FINDINGS)
    if topics:
        scope = parse_scope(topics)
        whole = [t for t, ps in scope.items() if ps is None]
        wanted = scope_partitions(scope, bo.metadata(whole).topics if whole else {})
    else:
        wanted = sorted(sg.offsets(group))
    if to_offset is not None or to_current:
        _share_reset_to(sg, bo, group, wanted, to_offset, execute, fmt)
        return
    if earliest:
        listed = bo.log_start_offsets(wanted)
    elif latest:
        listed = bo.log_end_offsets(wanted)
    else:
        assert datetime_text is not None
        listed = bo.list_offsets(dict.fromkeys(wanted, rep.parse_datetime_ms(datetime_text)))
    plan: dict[tuple[str, int], int] = {}
    empty: list[tuple[str, int]] = []
    for tp in wanted:
        got = listed.get(tp)
        if (got is None or got.offset is None or got.offset < 0) and datetime_text is not None:
            empty.append(tp)  # no record at or after the time: the tool falls back to the log-end offset
            continue
        if got is None or got.offset is None or got.offset < 0:
            raise CliError(f"offsets share: no offset for {tp[0]}-{tp[1]}", EXIT_FAILURE)
        plan[tp] = got.offset
    if empty:
        ends = bo.log_end_offsets(empty)
        for tp in empty:
            end = ends.get(tp)
            if end is None or end.offset is None:
                raise CliError(f"offsets share: no offset for {tp[0]}-{tp[1]}", EXIT_FAILURE)
            plan[tp] = end.offset
    plans = [rep.ResetPlan(group, plan, [], empty)]
    _share_apply(sg, group, plan, execute, fmt,
                 lambda release: rep.format_reset_warnings(plans, release) + rep.format_reset(plans, release))


def _share_reset_to(sg: Any, bo: Any, group: str, wanted: list[tuple[str, int]], to_offset: int | None,
                    execute: bool, fmt: str) -> None:
    """Kafka 4.4's `--to-offset` (`resetToOffset`: kept within [log start, log end], as checkOffsetsRange
    does) and `--to-current` (`resetToCurrentForShareGroup`: the current start offset, else the log end)."""
    from kafkatool.ops import offsets_report as rep

    ends = bo.log_end_offsets(wanted)
    plan: dict[tuple[str, int], int] = {}
    if to_offset is not None:
        starts = bo.log_start_offsets(wanted)
        for tp in wanted:
            lo, hi = starts.get(tp), ends.get(tp)
            if lo is None or hi is None or lo.offset is None or hi.offset is None:
                raise CliError(f"offsets share: no offset for {tp[0]}-{tp[1]}", EXIT_FAILURE)
            plan[tp] = min(max(to_offset, lo.offset), hi.offset)
    else:
        current = sg.offsets(group)
        for tp in wanted:
            now = current.get(tp)
            end = ends.get(tp)
            if now is not None and now.start_offset is not None:
                plan[tp] = now.start_offset
            elif end is not None and end.offset is not None:
                plan[tp] = end.offset
            else:
                raise CliError(f"offsets share: no offset for {tp[0]}-{tp[1]}", EXIT_FAILURE)
    _share_apply(sg, group, plan, execute, fmt,
                 lambda release: rep.format_reset([rep.ResetPlan(group, plan, [], [])], release))


def _share_apply(sg: Any, group: str, plan: dict[tuple[str, int], int], execute: bool, fmt: str,
                 text: Callable[[Any], str]) -> None:
    """How every share reset ends: AlterShareGroupOffsets under --execute (the first refused partition fails
    it), the plan shown (`text` in the release's words: kafka-share-groups.sh resets from 4.2, 4.1's
    refuses "not yet implemented", so 4.2's text at least), and the dry run said on stderr."""
    if execute:
        failed = {tp: e for tp, e in sg.alter(group, plan).items() if e}
        if failed:
            (t, p), e = next(iter(failed.items()))
            raise CliError(f"offsets share: reset failed for {t}-{p}: {e}", EXIT_FAILURE)
    from kafkatool.ops import offsets_report as rep

    _show_reset([rep.ResetPlan(group, plan, [], [])], fmt, execute, lambda: text(max(text_release(), _release(4, 2))))


def _show_reset(plans: list[Any], fmt: str, execute: bool, text: Callable[[], str]) -> None:
    """A reset's plans as Kafka's tool prints them (`text`) or as rows (group, topic, partition, new_offset,
    executed), then, without --execute, the dry run said on stderr."""
    if fmt == "text":
        _emit(text())
    else:
        render_rows(({"group": p.group, "topic": t, "partition": part, "new_offset": o, "executed": execute}
                     for p in sorted(plans, key=lambda p: p.group) for (t, part), o in sorted(p.offsets.items())),
                    fmt, ["group", "topic", "partition", "new_offset", "executed"])
    if not execute:
        sys.stderr.write("kafkatool: dry run: no offsets changed (add --execute to apply)\n")


def _share_delete_offsets(sg: Any, group: str, topics: list[str], fmt: str) -> None:
    from kafkatool.ops.share_text import share_delete_offsets_text

    top, per_topic = sg.delete_offsets(group, topics)
    if fmt == "text":
        _emit(share_delete_offsets_text(top, per_topic))
    else:
        render_rows(({"group": group, "topic": t, "error": e} for t, e in sorted(per_topic.items())), fmt,
                    ["group", "topic", "error"])
    if top is not None or any(per_topic.values()):
        raise CliError(f"offsets share: deleting offsets of '{group}' failed", EXIT_FINDINGS)


def _share_delete(sg: Any, names: list[str], all_groups: bool, fmt: str) -> None:
    from kafkatool.ops.share_text import share_delete_text

    listed = {g.group: g for g in sg.list_all(types=["share"])}
    if all_groups:
        names = list(listed)
    results: dict[str, str | None] = {}
    not_share = "java.lang.IllegalArgumentException" if text_release() < _release(4, 4) else \
        "org.apache.kafka.common.errors.GroupIdNotFoundException"
    for g in dict.fromkeys(names):  # the tool's pre-checks, from ListGroups
        found = listed.get(g)
        if found is None:
            results[g] = f"{not_share}: Group '{g}' is not a share group."
        elif found.state == "Dead":
            results[g] = f"java.lang.IllegalStateException: Share group '{g}' group state is DEAD."
        elif found.state != "Empty":
            results[g] = f"org.apache.kafka.common.errors.GroupNotEmptyException: Share group '{g}' is not EMPTY."
    todo = [g for g in dict.fromkeys(names) if g not in results]
    if todo:
        results.update(sg.delete(todo))
    if fmt == "text":
        _emit(share_delete_text(results))
    else:
        render_rows(({"group": g, "error": e} for g, e in sorted(results.items())), fmt, ["group", "error"])
    if any(results.values()):
        raise CliError("offsets share: some groups could not be deleted", EXIT_FINDINGS)


def _release(major: int, minor: int) -> Any:
    from kafkatool.release import Release

    return Release(major, minor)
