"""The text of Kafka 4.x's `kafka-streams-groups.sh --list/--describe`, per release.

Facts from `StreamsGroupCommand` (tools/…/streams) of each release branch: groups are described in
the order given; every line ends with its own newline (no leading empty line, unlike the other
group tools); an empty group first prints `\\nError: Streams group 'g' has no active members.` (and a
missing one `... does not exist.`) on stdout; the members and offsets views print nothing for a
group without members.

* `--state`: GROUP (at least 15), COORDINATOR (ID) `host:port (id)` (at least 25), from 4.4 ASSIGNOR
  (at least 15), STATE (25), #MEMBERS; `--verbose` adds GROUP-EPOCH (15) and
  TARGET-ASSIGNMENT-EPOCH (25).
* `--members`: GROUP, MEMBER, PROCESS, CLIENT-ID (at least 15 each) and ASSIGNMENTS
  (`ACTIVE: 0:[0,1]; STANDBY: …; `); `--verbose` adds the epochs, MEMBER-PROTOCOL and the target
  assignment.
* offsets: for the partitions of the members' active tasks (each subtopology's source and
  repartition-source topics), OFFSET-LAG = log-end less the committed offset, or less the log-start
  offset when nothing is committed; rows in a Java `HashMap<TopicPartition, …>`'s order.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kafkatool.release import Release

__all__ = ["streams_state_text", "streams_members_text", "streams_offsets_text", "streams_offset_rows",
           "ASSIGNOR_COLUMN_SINCE"]

#: The ASSIGNOR column of --describe --state: Kafka 4.4 (StreamsGroupDescribe v1's AssignorName).
ASSIGNOR_COLUMN_SINCE = Release(4, 4)

TP = tuple[str, int]


def _row(cells: Sequence[str], widths: Sequence[int]) -> str:
    """A printf line `%-w1s %-w2s ... %s\\n`: every cell but the last padded and followed by a space."""
    return "".join(f"{c:<{w}} " for c, w in zip(cells[:-1], widths, strict=True)) + cells[-1] + "\n"


def _empty_state(group: str, state: str) -> str:
    if state == "Dead":
        return f"\nError: Streams group '{group}' does not exist.\n"
    if state == "Empty":
        return f"\nError: Streams group '{group}' has no active members.\n"
    return ""


def _shown(state: str, members: int) -> bool:
    """`isGroupStateValid`: the members and offsets views print nothing at all (not even the empty-group
    line) for a dead group or one without members."""
    return state != "Dead" and members > 0


def streams_state_text(d: Any, release: Release, verbose: bool) -> str:
    c = d.coordinator
    coordinator = f"{c.host}:{c.port} ({c.id})" if c is not None else ":-1 (-1)"
    g, cw = max(15, len(d.group)), max(25, len(coordinator))
    head = ["GROUP", "COORDINATOR (ID)"]
    row = [d.group, coordinator]
    widths = [g, cw]
    if release >= ASSIGNOR_COLUMN_SINCE:
        assignor = d.assignor or ""
        head.append("ASSIGNOR")
        row.append(assignor)
        widths.append(max(15, len(assignor)))
    head.append("STATE")
    row.append(d.state)
    widths.append(25)
    if verbose:
        head += ["GROUP-EPOCH", "TARGET-ASSIGNMENT-EPOCH"]
        row += [str(d.group_epoch), str(d.assignment_epoch)]
        widths += [15, 25]
    head.append("#MEMBERS")
    row.append(str(len(d.members)))
    return _empty_state(d.group, d.state) + _row(head, widths) + _row(row, widths)


def _tasks(tasks: Sequence[tuple[str, Sequence[int]]], kind: str) -> str:
    if not tasks:
        return ""
    return f"{kind}: " + "".join(f"{sub}:[{','.join(map(str, ps))}]; " for sub, ps in tasks)


def streams_members_text(d: Any, verbose: bool) -> str:
    if not _shown(d.state, len(d.members)):
        return ""
    out = _empty_state(d.group, d.state)
    g = max(15, len(d.group))
    m_len = max([15] + [len(m.member_id) for m in d.members])
    p_len = max([15] + [len(m.process_id) for m in d.members])
    c_len = max([15] + [len(m.client_id) for m in d.members])
    if not verbose:
        widths = [g, m_len, p_len, c_len]
        out += _row(["GROUP", "MEMBER", "PROCESS", "CLIENT-ID", "ASSIGNMENTS"], widths)
        for m in d.members:
            tasks = _tasks(m.active, "ACTIVE") + _tasks(m.standby, "STANDBY") + _tasks(m.warmup, "WARMUP")
            out += _row([d.group, m.member_id, m.process_id, m.client_id, tasks], widths)
        return out

    def line(cells: Sequence[str]) -> str:  # "%-gs %-25s %-15s%-ms %-15s %-15s %-ps %-cs %s": no space after TOPOLOGY-EPOCH
        return (f"{cells[0]:<{g}} {cells[1]:<25} {cells[2]:<15}{cells[3]:<{m_len}} {cells[4]:<15} {cells[5]:<15} "
                f"{cells[6]:<{p_len}} {cells[7]:<{c_len}} {cells[8]}\n")

    out += line(["GROUP", "TARGET-ASSIGNMENT-EPOCH", "TOPOLOGY-EPOCH", "MEMBER", "MEMBER-PROTOCOL", "MEMBER-EPOCH",
                 "PROCESS", "CLIENT-ID", "ASSIGNMENTS"])
    for m in d.members:
        tasks = (_tasks(m.active, "ACTIVE") + _tasks(m.standby, "STANDBY") + _tasks(m.warmup, "WARMUP")
                 + _tasks(m.target_active, "TARGET-ACTIVE") + _tasks(m.target_standby, "TARGET-STANDBY")
                 + _tasks(m.target_warmup, "TARGET-WARMUP"))
        out += line([d.group, str(d.assignment_epoch), str(d.topology_epoch), m.member_id,
                     "classic" if m.is_classic else "streams", str(m.member_epoch), m.process_id, m.client_id, tasks])
    return out


def active_partitions(d: Any) -> list[TP]:
    """`getTopicPartitions` of every member's active tasks (KeyError: a subtopology the topology lacks)."""
    out: dict[TP, None] = {}
    for m in d.members:
        for sub, parts in m.active:
            if sub not in d.source_topics:
                raise ValueError(f"Subtopology {sub} not found in group description!")
            for topic in d.source_topics[sub]:
                for p in parts:
                    out[(topic, p)] = None
    return list(out)


def streams_offset_rows(d: Any, committed: dict[TP, Any], start: dict[TP, int], end: dict[TP, int]) -> list[tuple]:
    """(topic, partition, current offset or None, leader epoch or None, log-end, lag) in the tool's
    `HashMap<TopicPartition, OffsetsInfo>` order."""
    from kafkatool.ops.offsets_report.orders import java_hashmap_order

    rows = []
    for tp in java_hashmap_order(sorted(start)):
        c = committed.get(tp)
        current = c.offset if c is not None else None
        epoch = c.leader_epoch if c is not None and c.leader_epoch >= 0 else None
        lag = end[tp] - (current if current is not None else start[tp])
        rows.append((tp[0], tp[1], current, epoch, end[tp], lag))
    return rows


def streams_offsets_text(d: Any, rows: list[tuple], verbose: bool) -> str:
    if not _shown(d.state, len(d.members)):
        return ""
    out = _empty_state(d.group, d.state)
    g = max(15, len(d.group))
    t = max([15] + [len(r[0]) for r in rows])
    if not verbose:
        widths = [g, t, 10]
        out += _row(["GROUP", "TOPIC", "PARTITION", "OFFSET-LAG"], widths)
        return out + "".join(_row([d.group, r[0], str(r[1]), str(r[5])], widths) for r in rows)
    widths = [g, t, 10, 15, 15, 15, 15]  # "%-15s%n" pads the last column too
    cells = ["GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "LEADER-EPOCH", "LOG-END-OFFSET", "OFFSET-LAG"]
    out += "".join(f"{c:<{w}} " for c, w in zip(cells[:-1], widths, strict=False)) + f"{cells[-1]:<15}\n"
    for r in rows:
        vals = [d.group, r[0], str(r[1]), "-" if r[2] is None else str(r[2]), "-" if r[3] is None else str(r[3]),
                str(r[4]), str(r[5])]
        out += "".join(f"{c:<{w}} " for c, w in zip(vals[:-1], widths, strict=False)) + f"{vals[-1]:<15}\n"
    return out


def streams_delete_offsets_text(group: str, top: str | None, top_kind: str, per_partition: dict[TP, str | None]) -> str:
    """StreamsGroupCommand's `deleteOffsets`: the outcome line, then TOPIC/PARTITION/STATUS rows sorted by
    the string topic + partition (`words1` < `words10` < `words2`), each line `%n%-Ts %-10s %-15s`.

    `top_kind`: "none" (success), "named" (an error the tool prints by its message: `top`), "partition"
    (partition-level errors follow) or "unknown" (`top` is the error's name)."""
    if top_kind == "none":
        out = f"Request succeeded for deleting offsets from group {group}.\n"
    elif top_kind == "named":
        out = f"\nError: {top}\n"
    elif top_kind == "partition":
        out = "\nError: Encountered some partition-level error, see the follow-up details.\n"
    else:
        out = f"\nError: Encountered some unknown error: {top}\n"
    t = max([15] + [len(tp[0]) for tp in per_partition])
    out += f"\n{'TOPIC':<{t}} {'PARTITION':<10} {'STATUS':<15}"
    for tp in sorted(per_partition, key=lambda tp: tp[0] + str(tp[1])):
        err = per_partition[tp]
        part = str(tp[1]) if tp[1] >= 0 else "-"
        out += f"\n{tp[0]:<{t}} {part:<10} {'Successful' if err is None else 'Error: ' + err:<15}"
    return out + "\n"
