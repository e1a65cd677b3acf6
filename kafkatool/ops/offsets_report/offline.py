"""The offline report: groups replayed from `__consumer_offsets` segments, and their commit history.

What the group coordinator would answer, rebuilt from its log (`kafkatool.ops.offsets_log` replays it):
the same rows as `--describe` (`describe_rows`), log-end offsets read from the partition directories
beside it, and `--history`'s one line per commit.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from kafkatool.ops.offsets_report.describe import describe_rows
from kafkatool.ops.offsets_report.gather import _topic_filter
from kafkatool.ops.offsets_report.rows import MISSING, TP, GroupReport, _s, member_rows
from kafkatool.ops.offsets_report.time_lag import _columns, format_timestamp


def format_history(events: list[Any]) -> str:
    """One line per `__consumer_offsets` event, oldest first (per partition, in log order)."""
    head = ["COMMIT-TIME", "GROUP", "TOPIC", "PARTITION", "OFFSET", "EVENT", "METADATA", "LOG-POSITION"]
    table = []
    for e in events:
        when = e.commit_timestamp if e.commit_timestamp not in (None, -1) else e.record_timestamp
        table.append([
            format_timestamp(when if when is not None and when >= 0 else None), e.group, _s(e.topic), _s(e.partition),
            _s(e.offset if e.offset is None or e.offset >= 0 else None), e.kind, e.metadata or MISSING,
            f"__consumer_offsets-{e.log_partition}@{e.log_offset}",
        ])
    return _columns(head, table)


@dataclass(slots=True)
class _OfflineMember:
    """A member as `describe_rows`/`member_rows` read it (the cluster's `Member` without its module's imports)."""

    member_id: str
    client_id: str
    host: str
    group_instance_id: str | None
    assignment: list[TP]


def gather_offline(state: Any, log_dirs: Sequence[Any], groups: list[str] | None = None,
                   topics: Sequence[str] | None = None, release: Any = None) -> list[GroupReport]:
    """Groups replayed from `__consumer_offsets` segments; log-end offsets from the partition dirs
    found in the same log dirs (`-` when the topic is not there).

    Built group by group from the replay's per-group index (no copies, no per-row lookups of the
    whole state); each log dir is listed once, so a partition with no directory costs no `stat`.
    """
    from kafkatool.ops.offsets_log import no_cyclic_gc

    with no_cyclic_gc():  # one row object per partition, all kept: see no_cyclic_gc
        return _gather_offline(state, log_dirs, groups, topics, release)


def _gather_offline(state: Any, log_dirs: Sequence[Any], groups: list[str] | None,
                    topics: Sequence[str] | None, release: Any) -> list[GroupReport]:
    import os
    from pathlib import Path

    from kafkatool.ops.offsets_log import log_end_offset

    keep = _topic_filter(topics)
    all_ids = state.group_ids()
    names = groups if groups is not None else all_ids
    known = set(all_ids) | set(state.deleted_groups)
    by_group = state.offsets_by_group()
    pending_of: dict[str, int] = {}
    for k in state.pending:
        pending_of[k[0]] = pending_of.get(k[0], 0) + 1
    present: dict[str, Path] = {}  # the directories of the log dirs, by name: the first log dir's wins
    for d in log_dirs:
        try:
            for e in os.scandir(d):
                if e.is_dir():
                    present.setdefault(e.name, Path(d) / e.name)
        except OSError:
            continue
    leo_cache: dict[TP, int | None] = {}

    def leo_of(tp: TP) -> int | None:
        if tp not in leo_cache:
            pdir = present.get(f"{tp[0]}-{tp[1]}")
            leo_cache[tp] = None if pdir is None else log_end_offset(pdir)
        return leo_cache[tp]

    out = []
    for g in names:
        if g not in known:
            out.append(GroupReport(g, "offline", "Dead", [], []))  # what DescribeGroups says of an unknown group
            continue
        meta = state.groups.get(g)
        members = []
        for m in meta.members if meta else []:
            parts = list(m.assignment_decoded.partitions) if m.assignment_decoded else []
            members.append(_OfflineMember(m.member_id, m.client_id, m.client_host, m.group_instance_id,
                                          parts if topics is None else [tp for tp in parts if keep(tp[0])]))
        offs = by_group.get(g, {})
        committed = {tp: c.offset for tp, c in sorted(offs.items()) if topics is None or keep(tp[0])}
        leo = {tp: leo_of(tp) for tp in committed}
        for m in members:
            for tp in m.assignment:
                if tp not in leo:
                    leo[tp] = leo_of(tp)
        st = state.group_state(g)
        rows = describe_rows(g, st, members, committed, leo, release, commits=offs)
        out.append(GroupReport(g, "offline", st, rows, member_rows(g, members),
                               protocol=(meta.protocol or "") if meta else "", pending=pending_of.get(g, 0)))
    return out
