"""The text of Kafka 4.x's `kafka-groups.sh --list` and `kafka-share-groups.sh`, per release.

Facts from `GroupsCommand` and `ShareGroupCommand` (tools/…/consumer/group) of each release branch:

* `kafka-groups.sh --list`: GROUP, TYPE and PROTOCOL columns all as wide as the widest cell (at least
  20), each cell followed by a space, rows in the order the admin client collected them; the
  filters: `--group-type` (with `--protocol`), `--protocol`, `--consumer` (protocol "consumer" or
  "", or type consumer), `--share` and, from 4.1, `--streams`.
* `kafka-share-groups.sh --describe` (offsets): per group in name order, rows sorted by topic then
  partition; GROUP at least 15 wide, TOPIC as wide as the widest (at least 15), PARTITION 10,
  START-OFFSET 13 and, from 4.2, LAG (DescribeShareGroupOffsets v1); `--verbose` adds LEADER-EPOCH.
  From 4.2 a group without offsets prints `Share group 'g' has no offset information.`.
* `--members`: members sorted by id, CONSUMER-ID/HOST/CLIENT-ID at least 15 wide, #PARTITIONS 12 and
  the assignment `topic:0,1;other:2` (topics sorted, partitions sorted);
  `--state`: COORDINATOR (ID) at least 25 wide, STATE 15; an empty group's members/state print
  `Share group 'g' has no active members.` on stderr first.
* `--delete-offsets`: TOPIC/STATUS rows sorted by topic; `--delete`: the groups in a Java
  `HashMap<String, …>`'s order.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from kafkatool.release import Release

__all__ = [
    "groups_list_text", "filter_listings", "share_list_text", "share_offsets_text", "share_members_text",
    "share_state_text", "share_delete_offsets_text", "share_delete_text", "SHARE_LAG_SINCE",
]

MISSING = "-"
#: DescribeShareGroupOffsets v1 (the LAG column) and "has no offset information": Kafka 4.2.
SHARE_LAG_SINCE = Release(4, 2)
#: kafka-groups.sh --streams: Kafka 4.1.
STREAMS_FILTER_SINCE = Release(4, 1)


def filter_listings(groups: Iterable[Any], group_type: str | None = None, protocol: str | None = None,
                    consumer: bool = False, share: bool = False, streams: bool = False) -> list[Any]:
    """GroupsCommand's `combinedFilter` (the first filter given wins, as its if/else chain)."""
    out = []
    for g in groups:
        if group_type is not None:
            ok = g.group_type == group_type and (protocol is None or g.protocol_type == protocol)
        elif protocol is not None:
            ok = g.protocol_type == protocol
        elif consumer:
            ok = g.protocol_type in ("consumer", "") or g.group_type == "consumer"
        elif share:
            ok = g.group_type == "share"
        elif streams:
            ok = g.group_type == "streams"
        else:
            ok = True
        if ok:
            out.append(g)
    return out


def groups_list_text(groups: Sequence[Any]) -> str:
    """`printGroupDetails`: the header then one row per group, every cell padded to the widest."""
    width = max([20] + [len(c) for g in groups for c in (g.group, g.group_type, g.protocol_type)])
    head = f"{'GROUP':<{width}} {'TYPE':<{width}} {'PROTOCOL':<{width}}\n"
    return head + "".join(f"{g.group:<{width}} {g.group_type:<{width}} {g.protocol_type:<{width}} \n" for g in groups)


def share_list_text(groups: Sequence[Any], with_state: bool) -> str:
    """`--list` (names) or `--list --state` (GROUP and STATE)."""
    if not with_state:
        return "".join(f"{g.group}\n" for g in groups)
    width = max([15] + [len(g.group) for g in groups])
    return f"{'GROUP':<{width}} STATE\n" + "".join(f"{g.group:<{width}} {g.state or 'Unknown'}\n" for g in groups)


def _line(cells: list[str], widths: list[int]) -> str:
    """One printf line of the tools: `\n`, every cell but the last left-justified to its width and
    followed by a space, then the last cell as is."""
    return "\n" + "".join(f"{x:<{w}} " for x, w in zip(cells[:-1], widths, strict=True)) + cells[-1]


def _cell(v: object) -> str:
    return MISSING if v is None else str(v)


def share_offsets_text(groups: dict[str, dict[tuple[str, int], Any]], release: Release, verbose: bool) -> str:
    """`printOffsets`: group -> {(topic, partition): ShareOffset | None}, groups in name order."""
    lag = release >= SHARE_LAG_SINCE
    out = []
    for group in sorted(groups):
        rows = sorted(groups[group].items())
        if not rows and lag:
            out.append(f"\nShare group '{group}' has no offset information.\n")
            continue
        g = max(15, len(group))
        t = max([15] + [len(topic) for (topic, _), _o in rows])
        head = ["GROUP", "TOPIC", "PARTITION"] + (["LEADER-EPOCH"] if verbose else []) + ["START-OFFSET"]
        head += ["LAG"] if lag else []
        widths = [g, t, 10] + [13] * (len(head) - 4)  # every column but the last padded, then a space

        text = _line(head, widths)
        for (topic, part), o in rows:
            cells = [group, topic, str(part)]
            if verbose:
                cells.append(_cell(o.leader_epoch if o else None))
            cells.append(_cell(o.start_offset if o else None))
            if lag:
                cells.append(_cell(o.lag if o else None))
            text += _line(cells, widths)
        out.append(text + "\n")
    return "".join(out)


def _empty_state(group: str, state: str, rows: int) -> tuple[str, str, bool]:
    """`maybePrintEmptyGroupState`: (stdout, stderr, print the table)."""
    if state == "Dead":
        return f"\nError: Share group '{group}' does not exist.\n", "", False
    err = f"\nShare group '{group}' has no active members.\n" if state == "Empty" else ""
    return "", err, rows > 0


def _assignment_string(assignment: Sequence[tuple[str, int]]) -> str:
    by_topic: dict[str, list[int]] = {}
    for t, p in assignment:
        by_topic.setdefault(t, []).append(p)
    return ";".join(sorted(f"{t}:" + ",".join(str(p) for p in sorted(ps)) for t, ps in by_topic.items()))


def share_members_text(groups: dict[str, Any], verbose: bool) -> list[tuple[str, str]]:
    """`printMembers` as ("out" | "err", text) pieces in the order the tool writes them."""
    chunks: list[tuple[str, str]] = []
    for name in sorted(groups):
        d = groups[name]
        o, e, show = _empty_state(name, d.state, len(d.members))
        chunks += [("out", o)] if o else []
        chunks += [("err", e)] if e else []
        if not show:
            continue
        members = sorted(d.members, key=lambda m: m.member_id)
        g = max(15, len(name))
        c = max([15] + [len(m.member_id) for m in members])
        h = max([15] + [len(m.host) for m in members])
        k = max([15] + [len(m.client_id) for m in members])
        head = ["GROUP", "CONSUMER-ID", "HOST", "CLIENT-ID", "#PARTITIONS"] + (["MEMBER-EPOCH"] if verbose else [])
        widths = [g, c, h, k, 12] + ([13] if verbose else [])

        text = _line(head + ["ASSIGNMENT"], widths)
        for m in members:
            cells = [name, m.member_id, m.host, m.client_id, str(len(m.assignment))]
            cells += [str(m.member_epoch)] if verbose else []
            text += _line(cells + [_assignment_string(m.assignment)], widths)
        chunks.append(("out", text + "\n"))
    return chunks


def share_state_text(groups: dict[str, Any], verbose: bool) -> list[tuple[str, str]]:
    """`printStates` as ("out" | "err", text) pieces."""
    chunks: list[tuple[str, str]] = []
    for name in sorted(groups):  # collectGroupsDescription's TreeMap
        d = groups[name]
        o, e, _show = _empty_state(name, d.state, 1)
        chunks += [("out", o)] if o else []
        chunks += [("err", e)] if e else []
        c = d.coordinator
        coordinator = f"{c.host}:{c.port}  ({c.id})" if c is not None else ":-1  (-1)"
        g = max(15, len(name))
        cw = max(25, len(coordinator))
        if verbose:
            widths = [g, cw, 15, 12, 17]
            rows = [["GROUP", "COORDINATOR (ID)", "STATE", "GROUP-EPOCH", "ASSIGNMENT-EPOCH", "#MEMBERS"],
                    [name, coordinator, d.state, str(d.group_epoch), str(d.assignment_epoch), str(len(d.members))]]
        else:
            widths = [g, cw, 15]
            rows = [["GROUP", "COORDINATOR (ID)", "STATE", "#MEMBERS"], [name, coordinator, d.state, str(len(d.members))]]
        text = "".join(_line(r, widths) for r in rows)
        chunks.append(("out", text + "\n"))
    return chunks


def share_delete_offsets_text(top: str | None, per_topic: dict[str, str | None]) -> str:
    """`deleteOffsets`: the top-level error (for the errors the tool names), then TOPIC/STATUS rows."""
    out = ""
    if top is not None:
        out += f"\nError: {top}\n"
    if per_topic:
        t = max([15] + [len(x) for x in per_topic])
        out += f"\n{'TOPIC':<{t}} STATUS"
        for topic in sorted(per_topic):
            err = per_topic[topic]
            out += f"\n{topic:<{t}} " + ("Successful" if err is None else f"Error: {err}")
    return out + "\n"


def share_delete_text(results: dict[str, str | None], kind: str = "share") -> str:
    """`deleteShareGroups` (or, `kind` "streams", StreamsGroupCommand's `deleteGroups`): success and
    failures (values: the Java exception's `toString`), each in a `HashMap<String, …>`'s order.  The
    streams tool quotes the names as one joined string and ends its partial-success line with a period."""
    from kafkatool.jvm.hashing import string_hash
    from kafkatool.jvm.java_collections import grown_capacity, hash_order

    def order(names: list[str]) -> list[str]:
        return hash_order(names, string_hash, grown_capacity(len(names)))

    ok = order([g for g, e in results.items() if e is None])
    failed = [g for g, e in results.items() if e is not None]
    names = ", ".join(f"'{g}'" for g in ok) if kind == "share" or ok else "''"
    if not failed:
        return f"Deletion of requested {kind} groups ({names}) was successful.\n"
    out = f"\nError: Deletion of some {kind} groups failed:\n"
    out += "".join(f"* Group '{g}' could not be deleted due to: {results[g]}\n" for g in order(failed))
    if ok:
        out += f"\nThese {kind} groups were deleted successfully: {names}" + ("." if kind == "streams" else "") + "\n"
    return out
