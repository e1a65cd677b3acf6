"""`kafka-consumer-groups --describe`: the offsets, members and state tables, per release.

ConsumerGroupService's describe side (`collectGroupsOffsets`, `shouldPrintMemberState`,
`printOffsets`, `printMembers`, `printStates`, `getAssignmentString`): the rows of a group in the
order Kafka prints them (Kafka 3.3's Scala tool, 4.0's Java tool, 4.2's sorted rows; the orders in
`orders`) and the texts byte for byte.  3.3 printed its stderr lines after the tables
(`format_*`); 4.0 writes each group's state line before its table (`*_chunks*`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from kafkatool.ops.offsets_report.orders import (
    java_hashmap_order,
    java_hashset_order,
    scala_immutable_map_order,
    scala_mutable_map_order,
)
from kafkatool.ops.offsets_report.rows import MISSING, TP, MemberRow, PartitionLag, StateRow, _s

#: The release whose kafka-consumer-groups sorts each member's describe rows by topic and partition.
SORTED_DESCRIBE_SINCE = "4.2"


def describe_rows(
    group: str,
    state: str,
    members: Iterable[Any],
    committed: dict[TP, int | None],
    log_end: dict[TP, int | None],
    release: Any = None,
    commits: dict[TP, Any] | None = None,
) -> list[PartitionLag]:
    """`collectGroupsOffsets` of ConsumerGroupCommand: rows in the order Kafka prints them.

    `members` have `member_id`, `host`, `client_id` and `assignment` (list of TP in wire order);
    `committed` is in the order the broker returned it (None values: no offset).

    Kafka 3.3 (Scala): a member's partitions from a Java `HashSet`, unassigned ones from a Scala
    `mutable.HashMap`, each list sorted by partition and rebuilt as a Scala immutable `Map`.
    Kafka 4.0 (Java, `release` 4.0+): the same lists sorted by partition are collected into the
    `HashMap` of log-end offsets (`Collectors.toMap`) and the rows come out in that map's order
    (3, 2, 1, 0 for one topic's four partitions); unassigned partitions come from a `HashMap` too.
    Kafka 4.2+ (`describePartitions` since KAFKA-19435, which splits partitions with and without a
    leader and concatenates them): each member's rows, and the unassigned ones, sorted by topic
    (`String.compareTo`; topic names are ASCII) then partition: 0, 1, 2, 3.
    `commits` (offline: the replayed commits, with their `metadata`) fills the rows' `metadata`.
    """
    java = release is not None and release.at_least("4.0")
    by_topic_partition = release is not None and release.at_least(SORTED_DESCRIBE_SINCE)
    rows: list[PartitionLag] = []
    with_assignment = [m for m in members if m.assignment]
    with_assignment.sort(key=lambda m: -len(set(m.assignment)))  # sortWith(size >) / reversed comparator: stable
    assigned: set[TP] = set()

    def consumer_rows(tps: list[TP], cid: str, host: str, client: str) -> None:
        if by_topic_partition:
            ordered = sorted(tps)
        else:
            by_partition = sorted(tps, key=lambda tp: tp[1])
            ordered = java_hashmap_order(by_partition) if java else scala_immutable_map_order(by_partition)
        commit = commits.get if commits is not None else None
        for tp in ordered:
            off = committed.get(tp)
            leo = log_end.get(tp)
            lag = None if off is None or off == -1 or leo is None else leo - off  # lag_of, inline: once a row
            c = commit(tp) if commit is not None else None
            rows.append(PartitionLag(group, tp[0], tp[1], off, leo, lag, cid, host, client, None, None,
                                     c.metadata if c is not None else None, state))

    for m in with_assignment:
        tps = java_hashset_order(list(m.assignment))
        assigned.update(tps)
        consumer_rows(tps, m.member_id, m.host, m.client_id)
    unassigned = [tp for tp in committed if tp not in assigned]
    if unassigned:
        consumer_rows(java_hashmap_order(unassigned) if java else scala_mutable_map_order(unassigned),
                      MISSING, MISSING, MISSING)
    return rows


def _state_message(group: str, state: str | None, num_rows: int | None) -> tuple[str, str, bool]:
    """(stdout, stderr, print_table) of `shouldPrintMemberState`."""
    if num_rows is None:
        return f"\nError: The consumer group '{group}' does not exist.\n", "", False
    out = err = ""
    if state == "Dead":
        out = f"\nError: Consumer group '{group}' does not exist.\n"
    elif state == "Empty":
        err = f"\nConsumer group '{group}' has no active members.\n"
    elif state in ("PreparingRebalance", "CompletingRebalance", "Assigning", "Reconciling"):  # (the last two: 4.0)
        err = f"\nWarning: Consumer group '{group}' is rebalancing.\n"
    elif state != "Stable":
        raise ValueError(f"Expected a valid consumer group state, but found '{state or 'NONE'}'.")
    return out, err, state != "Dead" and num_rows > 0


def format_describe(groups: list[tuple[str, str | None, list[PartitionLag] | None]]) -> tuple[str, str]:
    """`printOffsets`: (stdout, stderr) for groups in sorted order, each (group, state, rows)."""
    chunks = describe_chunks(groups)
    return "".join(t for k, t in chunks if k == "out"), "".join(t for k, t in chunks if k == "err")


def describe_chunks(groups: list[tuple[str, str | None, list[PartitionLag] | None]]) -> list[tuple[str, str]]:
    """`printOffsets` as ("out" | "err", text) pieces in the order Kafka writes them: per group its
    state line (stderr for `has no active members`) before its table.  Kafka 4.0's output shows
    them so; 3.3's tool printed its stderr lines after the tables (`format_describe`)."""
    chunks: list[tuple[str, str]] = []
    for group, state, rows in sorted(groups, key=lambda g: g[0]):
        o, e, show = _state_message(group, state, None if rows is None else len(rows))
        if o:
            chunks.append(("out", o))
        if e:
            chunks.append(("err", e))
        if not show or rows is None:
            continue
        out: list[str] = []
        # widths over the distinct values, and the member's columns formatted once per member: a
        # report of every group writes a row per partition
        wg = max([15] + [len(g) for g in {r.group for r in rows}])
        wt = max([15] + [len(_s(t)) for t in {r.topic for r in rows}])
        members = {(r.consumer_id, r.host, r.client_id) for r in rows}
        wc = max([15] + [len(_s(m[0])) for m in members])
        wh = max([15] + [len(_s(m[1])) for m in members])
        fmt = f"{{:<{wg}}} {{:<{wt}}} {{:<10}} {{:<15}} {{:<15}} {{:<15}} {{:<{wc}}} {{:<{wh}}} {{}}\n"
        out.append("\n" + fmt.format("GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG",
                                     "CONSUMER-ID", "HOST", "CLIENT-ID"))
        head = f"{{:<{wg}}} {{:<{wt}}} {{:<10}} {{:<15}} {{:<15}} {{:<15}} ".format
        tails = {m: f"{_s(m[0]):<{wc}} {_s(m[1]):<{wh}} {_s(m[2])}\n" for m in members}
        s = _s
        for r in rows:
            out.append(head(r.group, s(r.topic), s(r.partition), s(r.current_offset), s(r.log_end_offset), s(r.lag))
                       + tails[(r.consumer_id, r.host, r.client_id)])
        chunks.append(("out", "".join(out)))
    return chunks


def members_chunks_40(groups: list[tuple[str, str | None, list[MemberRow] | None]],
                      verbose: bool = False, release: Any = None) -> list[tuple[str, str]]:
    """Kafka 4.0's `printMembers` as ("out" | "err", text) pieces in the order it writes them.

    Unlike 3.3 it prints the header even for a group it reported as empty or missing, and
    `--verbose` shows each member's epoch and assignment, the group's target epoch and the target
    assignment (`topic:0,1;other:2`, partitions sorted as strings), plus UPGRADED when classic and
    consumer-protocol members are mixed.  From Kafka 4.1 (`release`) the partitions of an assignment
    are sorted as numbers (`getAssignmentString` sorts before it maps them to strings): `0,2,10`, not
    4.0's `0,10,2`.
    """
    numeric = release is not None and release.at_least(NUMERIC_ASSIGNMENT_SINCE)

    def _assignment_text_40(assignment: list[TP]) -> str:
        return _assignment_text_4x(assignment, numeric)

    chunks: list[tuple[str, str]] = []
    for group, state, rows in sorted(groups, key=lambda g: g[0]):
        o, e, show = _state_message(group, state, None if rows is None else len(rows))
        chunks += [(k, t) for k, t in (("out", o), ("err", e)) if t]
        wg = wc = wh = wl = 15
        wi = 17
        wca = wta = 20
        with_instance = classic = consumer = False
        if show and rows:
            for r in rows:
                wg, wc, wi = max(wg, len(r.group)), max(wc, len(r.consumer_id)), max(wi, len(r.group_instance_id))
                wh, wl = max(wh, len(r.host)), max(wl, len(r.client_id))
                with_instance = with_instance or bool(r.group_instance_id)
                wca = max(wca, len(_assignment_text_40(r.assignment)))
                wta = max(wta, len(_assignment_text_40(r.target_assignment)))
                classic = classic or r.upgraded is False
                consumer = consumer or r.upgraded is True
        migrating = classic and consumer
        head, member_line = _member_columns(wg, wc, wi, wh, wl, with_instance)
        vfmt = f"{{:<15}} {{:<{wca}}} {{:<15}} {{:<{wta}}}" + (" {}" if migrating else "")
        out = ["\n" + head + (vfmt.format("CURRENT-EPOCH", "CURRENT-ASSIGNMENT", "TARGET-EPOCH", "TARGET-ASSIGNMENT",
                                           "UPGRADED") if verbose else "") + "\n"]
        for r in rows or []:
            line = member_line(r)
            if verbose:
                line += vfmt.format(_s(r.member_epoch), _assignment_text_40(r.assignment), _s(r.target_epoch),
                                    _assignment_text_40(r.target_assignment),
                                    MISSING if r.upgraded is None else str(r.upgraded).lower())
            out.append(line + "\n")
        chunks.append(("out", "".join(out)))
    return chunks


#: The release whose `getAssignmentString` sorts partitions as numbers (4.0 sorted their strings).
NUMERIC_ASSIGNMENT_SINCE = "4.1"


def _assignment_text_4x(assignment: list[TP], numeric: bool = False) -> str:
    """4.x's `getAssignmentString`: `topic:p,p` per topic (partitions sorted as strings in 4.0, as
    numbers from 4.1), topics sorted, `;`."""
    if not assignment:
        return MISSING
    by_topic: dict[str, list[int]] = {}
    for t, p in assignment:
        by_topic.setdefault(t, []).append(p)
    return ";".join(sorted(t + ":" + ",".join(str(p) for p in (sorted(ps) if numeric else sorted(ps, key=str)))
                           for t, ps in by_topic.items()))


def state_chunks_40(rows: list[StateRow]) -> list[tuple[str, str]]:
    """Kafka 4.0's `printStates`: GROUP sized by the group, `host:port  (id)` (two spaces), `-` for no strategy."""
    chunks: list[tuple[str, str]] = []
    for r in sorted(rows, key=lambda r: r.group):
        o, e, show = _state_message(r.group, r.state, 1)
        chunks += [(k, t) for k, t in (("out", o), ("err", e)) if t]
        if not show:
            continue
        coordinator = r.coordinator.replace(" (", "  (", 1)  # StateRow keeps 3.3's `host:port (id)`
        fmt = f"\n{{:<{max(15, len(r.group))}}} {{:<{max(25, len(coordinator))}}} {{:<20}} {{:<20}} {{}}"
        chunks.append(("out", fmt.format("GROUP", "COORDINATOR (ID)", "ASSIGNMENT-STRATEGY", "STATE", "#MEMBERS")
                       + fmt.format(r.group, coordinator, r.assignment_strategy or MISSING, r.state, r.members) + "\n"))
    return chunks


def format_members(groups: list[tuple[str, str | None, list[MemberRow] | None]], verbose: bool = False) -> tuple[str, str]:
    """`printMembers` (`--members [--verbose]`)."""
    out: list[str] = []
    err: list[str] = []
    for group, state, rows in sorted(groups, key=lambda g: g[0]):
        o, e, show = _state_message(group, state, None if rows is None else len(rows))
        out.append(o)
        err.append(e)
        if not show or rows is None:
            continue
        wg = max([15] + [len(r.group) for r in rows])
        wc = max([15] + [len(r.consumer_id) for r in rows])
        wi = max([17] + [len(r.group_instance_id) for r in rows])
        wh = max([15] + [len(r.host) for r in rows])
        wl = max([15] + [len(r.client_id) for r in rows])
        with_instance = any(r.group_instance_id for r in rows)
        head, member_line = _member_columns(wg, wc, wi, wh, wl, with_instance)
        out.append("\n" + head + ("ASSIGNMENT" if verbose else "") + "\n")
        for r in rows:
            line = member_line(r)
            if verbose:
                line += _assignment_text(r.assignment)
            out.append(line + "\n")
    return "".join(out), "".join(err)


def _member_columns(
    wg: int, wc: int, wi: int, wh: int, wl: int, with_instance: bool
) -> tuple[str, Callable[[Any], str]]:
    """The members table's head and row formatter (both releases): GROUP-INSTANCE-ID is a column only
    when some member has one, as in Kafka's tool."""
    if with_instance:
        fmt = f"{{:<{wg}}} {{:<{wc}}} {{:<{wi}}} {{:<{wh}}} {{:<{wl}}} {{:<15}} "
        head = fmt.format("GROUP", "CONSUMER-ID", "GROUP-INSTANCE-ID", "HOST", "CLIENT-ID", "#PARTITIONS")
        return head, lambda r: fmt.format(r.group, r.consumer_id, r.group_instance_id, r.host, r.client_id,
                                          r.partitions)
    fmt = f"{{:<{wg}}} {{:<{wc}}} {{:<{wh}}} {{:<{wl}}} {{:<15}} "
    head = fmt.format("GROUP", "CONSUMER-ID", "HOST", "CLIENT-ID", "#PARTITIONS")
    return head, lambda r: fmt.format(r.group, r.consumer_id, r.host, r.client_id, r.partitions)


def _assignment_text(assignment: list[TP]) -> str:
    if not assignment:
        return MISSING
    by_topic: dict[str, set[int]] = {}
    for t, p in assignment:
        by_topic.setdefault(t, set()).add(p)
    parts = [t + "(" + ",".join(str(p) for p in sorted(ps)) + ")" for t, ps in by_topic.items()]
    return ", ".join(sorted(parts))


def format_state(rows: list[StateRow]) -> tuple[str, str]:
    """`printStates` (`--state`); Kafka sizes the GROUP column from the coordinator's width."""
    out: list[str] = []
    err: list[str] = []
    for r in sorted(rows, key=lambda r: r.group):
        o, e, show = _state_message(r.group, r.state, 1)
        out.append(o)
        err.append(e)
        if not show:
            continue
        w = max(25, len(r.coordinator))
        fmt = f"\n{{:<{w}}} {{:<25}} {{:<20}} {{:<15}} {{}}"
        out.append(fmt.format("GROUP", "COORDINATOR (ID)", "ASSIGNMENT-STRATEGY", "STATE", "#MEMBERS"))
        out.append(fmt.format(r.group, r.coordinator, r.assignment_strategy, r.state, r.members) + "\n")
    return "".join(out), "".join(err)
