"""Gathering a live group report: committed offsets and log-end offsets into rows, per source.

Kafka-stored groups as ConsumerGroupService's `collectGroupsOffsets` does it (DescribeGroups and
OffsetFetch per coordinator, ListOffsets per leader), ZooKeeper-stored groups as ConsumerOffsetChecker
does (`/consumers` znodes, offsets committed to Kafka first).  The cluster access itself is in
`kafkatool.cluster.groups`; these functions take its objects.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kafkatool.ops.offsets_report.describe import describe_rows
from kafkatool.ops.offsets_report.offset_checker import checker_rows
from kafkatool.ops.offsets_report.rows import MISSING, TP, GroupReport, member_rows


def _topic_filter(topics: Sequence[str] | None) -> Any:
    wanted = set(topics or [])
    return (lambda t: True) if not wanted else wanted.__contains__


def gather_kafka(kafka_groups: Any, brokers: Any, groups: list[str], topics: Sequence[str] | None = None,
                 release: Any = None) -> list[GroupReport]:
    """Kafka-stored groups: DescribeGroups + OffsetFetch per coordinator, one ListOffsets per leader
    for the partitions of all the groups together."""
    keep = _topic_filter(topics)
    infos = kafka_groups.describe(groups)
    committed = kafka_groups.committed(groups)
    tps: set[TP] = set()
    for g in groups:
        tps.update(tp for tp in committed.get(g, {}) if keep(tp[0]))
        for m in infos[g].members:
            tps.update(tp for tp in m.assignment if keep(tp[0]))
    leo = {tp: lo.offset for tp, lo in brokers.log_end_offsets(sorted(tps)).items()} if tps else {}
    out = []
    for g in groups:
        info = infos[g]
        offs = {tp: (c.offset if c is not None else None) for tp, c in committed.get(g, {}).items() if keep(tp[0])}
        members = info.members
        if topics:
            members = [_filtered_member(m, keep) for m in members]
        rows = describe_rows(g, info.state, members, offs, leo, release)
        meta = committed.get(g, {})
        for r in rows:
            c = meta.get((r.topic, r.partition)) if r.topic is not None else None
            r.metadata = c.metadata if c is not None else None
        coord = info.coordinator
        out.append(GroupReport(
            g, "kafka", info.state, rows, member_rows(g, info.members, getattr(info, "target_assignment_epoch", None)),
            f"{coord.host}:{coord.port} ({coord.id})" if coord else MISSING, coord.id if coord else None, info.protocol,
        ))
    return out


def _filtered_member(m: Any, keep: Any) -> Any:
    from copy import copy

    c = copy(m)
    c.assignment = [tp for tp in m.assignment if keep(tp[0])]
    return c


def gather_zookeeper(zk_groups: Any, brokers: Any | None, groups: list[str], topics: Sequence[str] | None = None,
                     kafka_groups: Any | None = None, every_offset: bool = False) -> list[GroupReport]:
    """ZooKeeper-stored groups: offsets and owners from `/consumers`, leaders from `/brokers`,
    log-end offsets from the leaders (one ListOffsets per broker for all the groups).

    With `kafka_groups`, offsets the group committed to Kafka (old consumers with
    `offsets.storage=kafka`) win over the znodes, as ConsumerOffsetChecker asks the offset manager
    first and reads ZooKeeper only for partitions it has no offset for.

    The group's topics are ConsumerOffsetChecker's (those under `owners/`, else `offsets/`);
    `every_offset` (exports) adds every topic under `offsets/`, so a backup leaves none out.
    """
    per_group: list[tuple[str, Any]] = []
    all_tps: set[TP] = set()
    in_kafka: dict[str, dict[TP, Any]] = {}
    if kafka_groups is not None and groups:
        from kafkatool.cluster.connect import ClusterError

        try:
            in_kafka = kafka_groups.committed(groups)
        except ClusterError:
            in_kafka = {}
    for g in groups:
        if not zk_groups.exists(g):
            per_group.append((g, None))
            continue
        names = list(topics) if topics else zk_groups.topics(g)
        if every_offset and not topics:
            names = sorted(set(names) | set(zk_groups.offset_topics(g)))
        parts, leaders = zk_groups.partitions(names)
        committed = zk_groups.committed(g, parts)
        for tp, c in in_kafka.get(g, {}).items():
            if c is not None and tp in committed:
                committed[tp] = c.offset
        tps = [(t, p) for t in parts for p in parts[t]]
        owners = zk_groups.owners(g, tps)
        all_tps.update(tp for tp in tps if leaders.get(tp) is not None)
        per_group.append((g, (parts, leaders, committed, owners, zk_groups.members(g))))
    leo: dict[TP, int | None] = {}
    if all_tps and brokers is not None:
        leo = {tp: lo.offset for tp, lo in brokers.log_end_offsets(sorted(all_tps)).items()}
    out = []
    for g, data in per_group:
        if data is None:
            out.append(GroupReport(g, "zookeeper", None, [], []))
            continue
        parts, leaders, committed, owners, ids = data
        rows = checker_rows(g, parts, committed, leaders, leo, owners)
        state = "Stable" if ids else "Empty"
        for r in rows:
            r.state = state
        out.append(GroupReport(g, "zookeeper", state, rows, []))
    return out
