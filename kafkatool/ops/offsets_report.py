"""Group offsets as reports: lag in messages and in time, Kafka's texts, export and import formats.

Everything here is pure (no network, no printing): the CLI gathers offsets through
`kafkatool.cluster.groups` or `kafkatool.ops.offsets_log` and hands them here.

Byte-exact texts:

* `format_offset_checker`: ConsumerOffsetChecker (Kafka 0.8-0.10) for ZooKeeper-stored groups.
* `format_describe`, `format_members`, `format_state`: `kafka-consumer-groups --describe` of Kafka
  3.3 (`--offsets`, `--members [--verbose]`, `--state`), including the row order, which Kafka takes
  from JVM hash collections: a member's partitions come out of a `java.util.HashSet`, unassigned
  committed partitions out of a Scala `mutable.HashMap`, then each list is sorted by partition
  number and rebuilt as a Scala immutable `Map` (insertion order up to 4 entries, CHAMP trie order
  above).  Those orders are reproduced below from the same hash codes (`TopicPartition.hashCode`).
* `format_get_offset_shell`: GetOffsetShell's `topic:partition:offset` lines.
* `export_csv` / `parse_offsets_file`: `--reset-offsets --export` CSV and ExportZkOffsets lines.

Size: the texts of kafka-consumer-groups (3.3 and 4.0) and ConsumerOffsetChecker, lag in time, and the
export/import formats — each text walks the same rows in its release's collection order; splitting the texts
from the formats is the next step.
"""

from __future__ import annotations

import csv
import functools
import io
import json
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field, fields
from datetime import UTC, datetime, timedelta, timezone
from operator import attrgetter
from typing import Any

from kafkatool.jvm.hashing import topic_partition_hash
from kafkatool.jvm.java_collections import capacity_for_copy
from kafkatool.jvm.scala_collections import ScalaHashTable

TP = tuple[str, int]
MISSING = "-"


# --------------------------------------------------------------------------------------------------
# Rows


@dataclass(slots=True)
class PartitionLag:
    """One row of a group's offsets.  `current_offset` None = no committed offset (-1 = the ZooKeeper
    topic dir exists without this partition, which Kafka shows as -1 / lag unknown)."""

    group: str
    topic: str | None
    partition: int | None
    current_offset: int | None
    log_end_offset: int | None
    lag: int | None
    consumer_id: str | None = None
    host: str | None = None
    client_id: str | None = None
    owner: str | None = None
    leader: int | None = None
    metadata: str | None = None
    state: str | None = None
    committed_timestamp: int | None = None
    time_lag_ms: int | None = None
    time_lag_note: str | None = None
    consume_rate: float | None = None
    produce_rate: float | None = None
    drain_seconds: float | None = None

    def as_row(self) -> dict[str, Any]:
        # asdict's field-by-field deep copy, without its cost (the fields are all scalars): a report
        # renders a row per partition
        return dict(zip(_LAG_FIELDS, _lag_values(self), strict=True))


_LAG_FIELDS = tuple(f.name for f in fields(PartitionLag))
_lag_values = attrgetter(*_LAG_FIELDS)

ROW_COLUMNS = [
    "group", "state", "topic", "partition", "current_offset", "log_end_offset", "lag", "consumer_id", "host",
    "client_id", "owner", "leader", "metadata",
]
TIME_COLUMNS = ["committed_timestamp", "time_lag_ms", "time_lag_note"]
RATE_COLUMNS = ["consume_rate", "produce_rate", "drain_seconds"]


def lag_of(offset: int | None, log_end: int | None) -> int | None:
    """Kafka's getLag: no lag without a committed offset (or -1) or without a log-end offset."""
    if offset is None or offset == -1 or log_end is None:
        return None
    return log_end - offset


# --------------------------------------------------------------------------------------------------
# JVM collection orders (what Kafka's output order comes from)


def _i32(x: int) -> int:
    x &= 0xFFFFFFFF
    return x - (1 << 32) if x & 0x80000000 else x


def _tp_hash(tp: TP) -> int:
    return topic_partition_hash(tp[0], tp[1])


@functools.lru_cache(maxsize=1 << 17)
def _tp_spread(tp: TP) -> int:
    """`HashMap.hash` of a TopicPartition, unmasked (cached: a report orders every partition twice)."""
    h = topic_partition_hash(tp[0], tp[1]) & 0xFFFFFFFF
    return h ^ (h >> 16)


def _tp_hash_order(uniq: list[TP], capacity: int) -> list[TP]:
    """`jvm.java_collections.hash_order(uniq, _tp_hash, capacity)` for unique TopicPartitions: the same
    stable sort by bucket, one cached key a partition (a report of every group orders each of them)."""
    mask = capacity - 1
    spread = _tp_spread
    return sorted(uniq, key=lambda tp: spread(tp) & mask)


def java_hashset_order(items: Sequence[TP]) -> list[TP]:
    """Iteration order of `new java.util.HashSet<>(items)` (items in insertion order, duplicates dropped)."""
    uniq = list(dict.fromkeys(items))
    return _tp_hash_order(uniq, capacity_for_copy(len(uniq)))


def scala_mutable_map_order(items: Sequence[TP]) -> list[TP]:
    """Iteration order of a Scala 2.13 `mutable.HashMap` filled with items in this order."""
    table = ScalaHashTable()
    for tp in items:
        table.put(tp, _tp_hash(tp))
    return [k for k, _ in table.items()]  # type: ignore[misc]


def _champ_improve(h: int) -> int:
    """`scala.collection.Hashing.improve` (2.13), as an unsigned 32-bit value."""
    h = _i32(h + ~_i32(h << 9))
    h = _i32(h ^ ((h & 0xFFFFFFFF) >> 14))
    h = _i32(h + _i32(h << 4))
    h = _i32(h ^ ((h & 0xFFFFFFFF) >> 10))
    return h & 0xFFFFFFFF


def scala_immutable_map_order(items: Sequence[TP]) -> list[TP]:
    """Iteration order of a Scala 2.13 immutable `Map` built by adding items in this order.

    Up to four entries it is `Map1`..`Map4` (insertion order); above, a CHAMP trie: each node yields
    its own entries (by 5-bit hash fragment, low bits first) before descending into its sub-nodes
    (also by fragment); keys with equal hashes share a collision node in insertion order.
    """
    uniq = list(dict.fromkeys(items))
    if len(uniq) <= 4:
        return uniq
    hashed = [(_champ_improve(_tp_hash(tp)), tp) for tp in uniq]

    def walk(entries: list[tuple[int, TP]], shift: int) -> list[TP]:
        if shift >= 32:
            return [tp for _, tp in entries]
        frags: dict[int, list[tuple[int, TP]]] = {}
        for e in entries:
            frags.setdefault((e[0] >> shift) & 31, []).append(e)
        payload = [es[0][1] for f, es in sorted(frags.items()) if len(es) == 1]
        nodes: list[TP] = []
        for _, es in sorted(frags.items()):
            if len(es) > 1:
                nodes.extend(walk(es, shift + 5))
        return payload + nodes

    return walk(hashed, 0)


def scala211_int_map_order(keys: Sequence[int]) -> list[int]:
    """Iteration order of a Scala 2.11 `mutable.HashMap[Int, _]` (ConsumerOffsetChecker's broker map).

    Index = rotateRight(byteswap32(key), seed) >>> numberOfLeadingZeros(len - 1), entries prepended
    to their bucket, iteration from the last bucket down; the table doubles past 75% load.
    """

    def byteswap32(v: int) -> int:
        hc = _i32(v * 0x9E3775CD)
        hc = int.from_bytes((hc & 0xFFFFFFFF).to_bytes(4, "big"), "little")
        return _i32(hc * 0x9E3775CD)

    size = 16
    seed = bin(size - 1).count("1")  # fixed at construction, never updated on resize
    table: list[list[int]] = [[] for _ in range(size)]

    def index(k: int, n: int) -> int:
        x = byteswap32(k) & 0xFFFFFFFF
        r = ((x >> seed) | (x << (32 - seed))) & 0xFFFFFFFF
        return r >> (32 - (n - 1).bit_length())

    count = 0
    for k in dict.fromkeys(keys):
        table[index(k, size)].insert(0, k)
        count += 1
        if count > size * 750 // 1000:
            old = table
            size *= 2
            table = [[] for _ in range(size)]
            for bucket in reversed(old):
                for e in bucket:
                    table[index(e, size)].insert(0, e)
    return [k for bucket in reversed(table) for k in bucket]


# --------------------------------------------------------------------------------------------------
# kafka-consumer-groups --describe (Kafka 3.3)


#: The release whose kafka-consumer-groups sorts each member's describe rows by topic and partition.
SORTED_DESCRIBE_SINCE = "4.2"
#: The release whose reset plan's columns are sized to their contents (OffsetsUtils).
SIZED_RESET_SINCE = "4.2"


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


def _s(v: object) -> str:
    return MISSING if v is None else str(v)


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


@dataclass(slots=True)
class MemberRow:
    group: str
    consumer_id: str
    group_instance_id: str
    host: str
    client_id: str
    partitions: int
    assignment: list[TP]
    member_epoch: int | None = None  # KIP-848 groups: the member's epoch, its target, the group's target epoch
    target_assignment: list[TP] = field(default_factory=list)
    target_epoch: int | None = None
    upgraded: bool | None = None

    def as_row(self) -> dict[str, Any]:
        d = asdict(self)
        d["assignment"] = [{"topic": t, "partition": p} for t, p in self.assignment]
        d["target_assignment"] = [{"topic": t, "partition": p} for t, p in self.target_assignment]
        return d


def member_rows(group: str, members: Iterable[Any], target_epoch: int | None = None) -> list[MemberRow]:
    return [
        MemberRow(group, m.member_id, m.group_instance_id or "", m.host, m.client_id, len(set(m.assignment)),
                  list(m.assignment), getattr(m, "member_epoch", None), list(getattr(m, "target_assignment", []) or []),
                  target_epoch, getattr(m, "upgraded", None))
        for m in members
    ]


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


@dataclass(slots=True)
class StateRow:
    group: str
    coordinator_id: int | None
    coordinator: str
    assignment_strategy: str
    state: str
    members: int

    def as_row(self) -> dict[str, Any]:
        return asdict(self)


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


# --------------------------------------------------------------------------------------------------
# ConsumerOffsetChecker (ZooKeeper groups)


_CHECKER = "{:<15} {:<30} {:<3} {:<15} {:<15} {:<15} {}\n"


def checker_rows(
    group: str,
    partitions: dict[str, list[int]],
    committed: dict[TP, int | None],
    leaders: dict[TP, int | None],
    log_end: dict[TP, int | None],
    owners: dict[TP, str | None],
) -> list[PartitionLag]:
    """Rows of ConsumerOffsetChecker: topics sorted, partitions sorted; `leader` None = no broker."""
    rows = []
    for topic in sorted(partitions):
        for p in sorted(partitions[topic]):
            tp = (topic, p)
            off = committed.get(tp)
            leo = log_end.get(tp)
            rows.append(PartitionLag(group, topic, p, off, leo, lag_of(off, leo), owner=owners.get(tp), leader=leaders.get(tp)))
    return rows


def format_offset_checker(rows: list[PartitionLag], broker_info: dict[int, str] | None = None) -> str:
    """ConsumerOffsetChecker's output; `broker_info` (id -> host:port) adds `--broker-info`."""
    out = [_CHECKER.format("Group", "Topic", "Pid", "Offset", "logSize", "Lag", "Owner")]
    contacted: list[int] = []
    for r in rows:
        if r.leader is None:
            out.append(f"No broker for partition {r.topic} - {r.partition}\n")
            continue
        contacted.append(r.leader)
        offset = "unknown" if r.current_offset is None else str(r.current_offset)
        if r.current_offset is None or r.current_offset == -1 or r.log_end_offset is None:
            lag = "unknown"
        else:
            lag = str(r.log_end_offset - r.current_offset)
        log_size = "unknown" if r.log_end_offset is None else str(r.log_end_offset)  # no broker answered
        out.append(_CHECKER.format(r.group, _s(r.topic), _s(r.partition), offset, log_size, lag,
                                   r.owner if r.owner is not None else "none"))
    if broker_info is not None:
        out.append("BROKER INFO\n")
        for bid in scala211_int_map_order(contacted):
            if bid in broker_info:
                out.append(f"{bid} -> {broker_info[bid]}\n")
    return "".join(out)


# --------------------------------------------------------------------------------------------------
# GetOffsetShell


def format_get_offset_shell(offsets: dict[TP, int | None], text: Any = None) -> str:
    """`topic:partition:offset`; partitions without an offset are left out.  Order: Kafka 3.x's Scala
    tool sorts by topic then partition number (`compareTopicPartitions`); 4.0's Java tool keys a
    `TreeMap` by `TopicPartition.toString()`, `topic-partition` as a string (big-0, big-1, big-10, big-2)."""
    if text is not None and text.at_least("4.0"):
        keys = sorted(offsets, key=lambda tp: f"{tp[0]}-{tp[1]}")
    else:
        keys = sorted(offsets)
    return "".join(f"{t}:{p}:{offsets[(t, p)]}\n" for t, p in keys if offsets[(t, p)] is not None)


# --------------------------------------------------------------------------------------------------
# Lag in time


def apply_time_lag(rows: list[PartitionLag], stamps: dict[tuple[str, int, int], Any], now_ms: int) -> None:
    """Fill `committed_timestamp` / `time_lag_ms` from the record found at each committed offset
    (`stamps` keyed by topic, partition and offset).

    A group at the log end has no record to wait for: its time lag is 0.  Records without a
    timestamp (message format v0) or unreadable ones leave the time lag empty with a note.
    """
    for r in rows:
        if r.topic is None or r.partition is None:
            continue
        st = stamps.get((r.topic, r.partition, r.current_offset))  # type: ignore[arg-type]
        if st is None:
            continue
        if st.caught_up:
            r.time_lag_ms = 0
            r.time_lag_note = "caught up"
        elif st.error:
            r.time_lag_note = st.error
        elif st.timestamp is None:
            r.time_lag_note = "record has no timestamp"
        else:
            r.committed_timestamp = st.timestamp
            r.time_lag_ms = max(0, now_ms - st.timestamp)
            if getattr(st, "note", None):
                r.time_lag_note = st.note
            elif st.offset is not None and r.current_offset is not None and st.offset != r.current_offset:
                r.time_lag_note = f"next record at offset {st.offset}"


def apply_rates(rows: list[PartitionLag], before: dict[tuple[str, str, int], tuple[int | None, int | None]], seconds: float) -> None:
    """Consume/produce rates (messages per second) from two samples `seconds` apart, and time to drain.

    `before` maps (group, topic, partition) to (committed, log end) at the first sample; the rows
    hold the second.  Time to drain = lag / (consume - produce) when the group gains on the
    producers; None when it does not (it never drains at these rates).
    """
    if seconds <= 0:
        return
    for r in rows:
        if r.topic is None or r.partition is None:
            continue
        b = before.get((r.group, r.topic, r.partition))
        if b is None:
            continue
        c0, l0 = b
        if c0 is not None and c0 >= 0 and r.current_offset is not None and r.current_offset >= 0:
            r.consume_rate = (r.current_offset - c0) / seconds
        if l0 is not None and r.log_end_offset is not None:
            r.produce_rate = (r.log_end_offset - l0) / seconds
        if r.lag is not None and r.consume_rate is not None and r.produce_rate is not None:
            gain = r.consume_rate - r.produce_rate
            if r.lag <= 0:
                r.drain_seconds = 0.0
            elif gain > 0:
                r.drain_seconds = r.lag / gain


def format_duration_ms(ms: float | None) -> str:
    """`1d2h3m4.5s`-style age for humans (`-` when unknown)."""
    if ms is None:
        return MISSING
    s = ms / 1000.0
    if s < 60:
        return f"{s:.1f}s" if s < 10 and s != int(s) else f"{int(round(s))}s"
    m, sec = divmod(int(round(s)), 60)
    h, m = divmod(m, 60)
    d, h = divmod(h, 24)
    parts = [f"{d}d" if d else "", f"{h}h" if h else "", f"{m}m" if m else "", f"{sec}s" if sec else ""]
    return "".join(parts) or "0s"


def format_timestamp(ms: int | None) -> str:
    if ms is None:
        return MISSING
    return datetime.fromtimestamp(ms / 1000, tz=UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def format_time_lag(rows: list[PartitionLag], rates: bool = False) -> str:
    """kafkatool's own table (no Kafka tool has lag in time); column widths follow the data."""
    head = ["GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG", "RECORD-TIME", "TIME-LAG"]
    if rates:
        head += ["CONSUME/S", "PRODUCE/S", "TIME-TO-DRAIN"]
    table = []
    for r in rows:
        line = [r.group, _s(r.topic), _s(r.partition), _s(r.current_offset), _s(r.log_end_offset), _s(r.lag),
                format_timestamp(r.committed_timestamp),
                format_duration_ms(r.time_lag_ms) if r.time_lag_ms is not None else (r.time_lag_note or MISSING)]
        if rates:
            if r.drain_seconds is not None:
                drain = format_duration_ms(r.drain_seconds * 1000)
            elif r.lag and r.consume_rate is not None and r.produce_rate is not None:
                drain = "never"
            else:
                drain = MISSING
            line += [_rate(r.consume_rate), _rate(r.produce_rate), drain]
        table.append(line)
    return _columns(head, table)


def _rate(v: float | None) -> str:
    return MISSING if v is None else f"{v:.1f}"


def _columns(head: list[str], table: list[list[str]]) -> str:
    widths = [max([len(h)] + [len(row[i]) for row in table]) for i, h in enumerate(head)]
    lines = [" ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in [head, *table]]
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------------------------------
# Offline history


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


# --------------------------------------------------------------------------------------------------
# Export / import


def export_csv(offsets: dict[str, dict[TP, int]], with_group: bool, keep_order: bool = False) -> str:
    """Kafka's `--reset-offsets --export` CSV: `topic,partition,offset` (one group) or with the group
    first; rows end with a newline and Kafka's `println` adds one more.  Rows are sorted unless
    `keep_order` (the caller already has Kafka's hash-map order, `reset_rows`)."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    for g in (offsets if keep_order else sorted(offsets)):
        for (t, p), o in (offsets[g].items() if keep_order else sorted(offsets[g].items())):
            w.writerow([g, t, p, o] if with_group else [t, p, o])
    return buf.getvalue() + "\n"


def export_zk(offsets: dict[str, dict[TP, int]]) -> str:
    """ExportZkOffsets lines: `/consumers/<group>/offsets/<topic>/<partition>:<offset>`."""
    return "".join(
        f"/consumers/{g}/offsets/{t}/{p}:{o}\n" for g in sorted(offsets) for (t, p), o in sorted(offsets[g].items())
    )


EXPORT_JSON_VERSION = 1


def export_json(rows: list[PartitionLag], exported_at_ms: int) -> str:
    """Our JSON export: committed offset, log-end offset, lag and the committed record's timestamp."""
    doc = {
        "version": EXPORT_JSON_VERSION,
        "exported_at": exported_at_ms,
        "offsets": [
            {
                "group": r.group, "topic": r.topic, "partition": r.partition, "offset": r.current_offset,
                "metadata": r.metadata, "log_end_offset": r.log_end_offset, "lag": r.lag,
                "committed_timestamp": r.committed_timestamp, "time_lag_ms": r.time_lag_ms,
            }
            for r in rows
            if r.topic is not None and r.partition is not None and r.current_offset is not None and r.current_offset >= 0
        ],
    }
    return json.dumps(doc, indent=2) + "\n"


class OffsetsFileError(ValueError):
    """A reset plan file that is not one of the export formats."""


_ZK_LINE = re.compile(r"^/consumers/(?P<g>[^/]+)/offsets/(?P<t>[^/]+)/(?P<p>-?\d+)(?:-\d+)?:(?P<o>-?\d+)\s*$")


def parse_offsets_file(text: str, groups: Sequence[str] = (), source: str = "<file>") -> dict[str, dict[TP, int]]:
    """Read a reset plan in any export format: JSON, ExportZkOffsets lines or Kafka's CSV.

    CSV follows Kafka's rule: with exactly one `--group` and a first line that parses as
    `topic,partition,offset`, every line is read so (for that group); otherwise every line must be
    `group,topic,partition,offset`.
    """
    stripped = text.lstrip()
    if not stripped:
        raise OffsetsFileError(f"{source}: empty")
    if stripped[0] in "[{":
        return _parse_json_plan(stripped, source)
    lines = [ln for ln in text.splitlines() if ln.strip()]
    if lines[0].startswith("/consumers/"):
        out: dict[str, dict[TP, int]] = {}
        for n, ln in enumerate(lines, 1):
            m = _ZK_LINE.match(ln.strip())
            if not m:
                raise OffsetsFileError(f"{source}:{n}: not /consumers/<group>/offsets/<topic>/<partition>:<offset>: {ln!r}")
            out.setdefault(m["g"], {})[(m["t"], int(m["p"]))] = int(m["o"])
        return out
    rows = list(csv.reader(lines))
    single = len(groups) == 1 and _csv_no_group(rows[0])
    out = {}
    for n, row in enumerate(rows, 1):
        try:
            if single:
                t, p, o = row
                g = groups[0]
            else:
                g, t, p, o = row
            out.setdefault(g, {})[(t, int(p))] = int(o)
        except ValueError:
            want = "topic,partition,offset" if single else "group,topic,partition,offset"
            raise OffsetsFileError(f"{source}:{n}: expected {want}: {','.join(row)!r}") from None
    return out


def _csv_no_group(row: list[str]) -> bool:
    if len(row) != 3:
        return False
    try:
        int(row[1])
        int(row[2])
    except ValueError:
        return False
    return True


def _parse_json_plan(text: str, source: str) -> dict[str, dict[TP, int]]:
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise OffsetsFileError(f"{source}: malformed JSON: {exc.msg} at line {exc.lineno}") from None
    items = doc.get("offsets") if isinstance(doc, dict) else doc
    if not isinstance(items, list):
        raise OffsetsFileError(f'{source}: JSON must be a list of offsets or {{"offsets": [...]}}')
    out: dict[str, dict[TP, int]] = {}
    for n, it in enumerate(items):
        try:
            if it.get("offset") is None:
                continue
            out.setdefault(str(it["group"]), {})[(str(it["topic"]), int(it["partition"]))] = int(it["offset"])
        except (KeyError, TypeError, ValueError, AttributeError):
            raise OffsetsFileError(f"{source}: entry {n}: needs group, topic, partition and offset") from None
    return out


# --------------------------------------------------------------------------------------------------
# Reset planning (Kafka's --reset-offsets scenarios)


def parse_datetime_ms(text: str) -> int:
    """Kafka's `--to-datetime`: `YYYY-MM-DDTHH:mm:SS.sss` with an optional zone (`Z`, `+01`, `+01:00`);
    without a zone it is UTC, as `Utils.getDateTime` reads it.  Seconds' fraction may be omitted."""
    m = re.fullmatch(
        r"(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,3}))?(Z|[+-]\d{2}(?::?\d{2})?)?", text.strip()
    )
    if not m:
        raise ValueError(f"{text!r} is not YYYY-MM-DDTHH:mm:SS.sss[Z|+HH:MM]")
    y, mo, d, h, mi, s = (int(x) for x in m.groups()[:6])
    frac = int((m[7] or "0").ljust(3, "0"))
    zone = m[8] or "Z"
    if zone == "Z":
        tz = UTC
    else:
        sign = -1 if zone[0] == "-" else 1
        digits = zone[1:].replace(":", "")
        tz = timezone(sign * timedelta(hours=int(digits[:2]), minutes=int(digits[2:4] or 0)))
    dt = datetime(y, mo, d, h, mi, s, tzinfo=tz)
    return (dt - _EPOCH) // timedelta(milliseconds=1) + frac


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_DURATION = re.compile(
    r"([-+]?)P(?:([-+]?\d+)D)?(?:T(?:([-+]?\d+)H)?(?:([-+]?\d+)M)?(?:([-+]?\d+)(?:[.,](\d{0,9}))?S)?)?", re.I
)


def parse_duration_ms(text: str) -> int:
    """Java's `Duration.parse` (`PnDTnHnMn.nS`) in milliseconds."""
    m = _DURATION.fullmatch(text.strip())
    if not m or text.strip().upper().endswith("T") or not any(m.groups()[1:]):
        raise ValueError(f"{text!r} is not an ISO-8601 duration such as P1DT2H or PT30M")
    sign = -1 if m[1] == "-" else 1
    days, hours, minutes, secs = (int(x) if x else 0 for x in m.groups()[1:5])
    frac = m[6] or ""
    ms = ((days * 24 + hours) * 60 + minutes) * 60_000 + secs * 1000
    if frac:
        ms += (-1 if secs < 0 or (m[5] or "").startswith("-") else 1) * int(frac.ljust(3, "0")[:3])
    return sign * ms


@dataclass(frozen=True, slots=True)
class ResetSpec:
    """One of Kafka's reset scenarios; exactly one field set (`to_current` as a flag)."""

    to_earliest: bool = False
    to_latest: bool = False
    to_current: bool = False
    to_offset: int | None = None
    shift_by: int | None = None
    to_datetime_ms: int | None = None
    by_duration_ms: int | None = None
    from_file: dict[str, dict[TP, int]] | None = None

    def describe(self) -> str:
        for k, v in asdict(self).items():
            if v not in (None, False):
                return k.replace("_", "-")
        return "none"


@dataclass(slots=True)
class ResetPlan:
    """New offsets of one group; `notes` go to stderr (Kafka logs them), `empty` are the partitions
    a by-time reset found no record for (Kafka's `Warn: ... is empty` lines on stdout)."""

    group: str
    offsets: dict[TP, int]
    notes: list[str]
    empty: list[TP] = field(default_factory=list)


def plan_reset(
    group: str,
    spec: ResetSpec,
    partitions: list[TP],
    committed: dict[TP, int | None],
    earliest: dict[TP, int | None],
    latest: dict[TP, int | None],
    by_time: dict[TP, int | None] | None = None,
) -> ResetPlan:
    """New offsets per partition, following `prepareOffsetsToReset` of Kafka 3.3.

    Explicit offsets (`--to-offset`, `--shift-by`, `--from-file`) are clamped into
    [log start, log end] as `checkOffsetsRange` does (with a note); by-time lookups that find no
    record fall back to the log end, as Kafka does (with its warning).
    """
    notes: list[str] = []
    empty: list[TP] = []
    out: dict[TP, int] = {}

    def need(table: dict[TP, int | None], tp: TP, what: str) -> int:
        v = table.get(tp)
        if v is None:
            raise ResetError(f"Error getting {what} offset of topic partition: {tp[0]}-{tp[1]}")
        return v

    def clamp(tp: TP, off: int) -> int:
        end = latest.get(tp)
        start = earliest.get(tp)
        if end is not None and off > end:
            notes.append(f"New offset ({off}) is higher than latest offset for topic partition {tp[0]}-{tp[1]}. Value will be set to {end}")
            return end
        if start is not None and off < start:
            notes.append(f"New offset ({off}) is lower than earliest offset for topic partition {tp[0]}-{tp[1]}. Value will be set to {start}")
            return start
        return off

    if spec.to_earliest:
        for tp in partitions:
            out[tp] = need(earliest, tp, "starting")
    elif spec.to_latest:
        for tp in partitions:
            out[tp] = need(latest, tp, "ending")
    elif spec.to_current:
        for tp in partitions:
            c = committed.get(tp)
            out[tp] = c if c is not None and c >= 0 else need(latest, tp, "ending")
    elif spec.to_offset is not None:
        for tp in partitions:
            out[tp] = clamp(tp, spec.to_offset)
    elif spec.shift_by is not None:
        for tp in partitions:
            c = committed.get(tp)
            if c is None or c < 0:
                raise ResetError(f"Cannot shift offset for partition {tp[0]}-{tp[1]} since there is no current committed offset")
            out[tp] = clamp(tp, c + spec.shift_by)
    elif spec.to_datetime_ms is not None or spec.by_duration_ms is not None:
        assert by_time is not None
        for tp in partitions:
            v = by_time.get(tp)
            if v is None:
                empty.append(tp)
                v = need(latest, tp, "offset by timestamp of")
            out[tp] = v
    elif spec.from_file is not None:
        plan = spec.from_file.get(group)
        if plan is None:
            notes.append(f"No reset plan for group {group} found")
        else:
            for tp, off in plan.items():
                out[tp] = clamp(tp, off)
    else:
        raise ResetError("no reset scenario given")
    return ResetPlan(group, out, notes, empty)


class ResetError(ValueError):
    """A reset that cannot be planned (Kafka prints these as usage errors)."""


def format_reset_warnings(plans: list[ResetPlan], release: Any) -> str:
    """Kafka's `Warn: Partition P from topic T is empty. Falling back to latest known offset.` lines
    (stdout, each after an empty line), printed while planning, before the table.

    The order is that of the map Kafka walks: 4.0's Java tool a `HashMap` of the partitions the
    by-time lookup found nothing for; 3.3's Scala tool a `mutable.HashMap` partitioned off the
    admin client's Java `HashMap` of all the lookups.
    """
    out = []
    for p in plans:
        if not p.empty:
            continue
        everything = list(p.offsets)
        if release.at_least("4.0"):
            order = java_hashmap_order(p.empty)
        else:
            empty = set(p.empty)
            java = java_hashmap_order(everything, len(everything))
            order = scala_mutable_map_order([tp for tp in java if tp in empty])
        out += [f"\nWarn: Partition {part} from topic {t} is empty. Falling back to latest known offset.\n"
                for t, part in order]
    return "".join(out)


def java_hashmap_order(items: Sequence[TP], initial_capacity: int | None = None) -> list[TP]:
    """Iteration order of a `java.util.HashMap` of TopicPartitions put in this order
    (`new HashMap<>()`, or `new HashMap<>(initial_capacity)`)."""
    from kafkatool.jvm.java_collections import DEFAULT_CAPACITY, grown_capacity, table_size_for

    uniq = list(dict.fromkeys(items))
    start = DEFAULT_CAPACITY if initial_capacity is None else table_size_for(max(initial_capacity, 1))
    return _tp_hash_order(uniq, grown_capacity(len(uniq), start))


def reset_rows(plans: list[ResetPlan], release: Any = None) -> list[tuple[str, str, int, int]]:
    """(group, topic, partition, offset) in the order Kafka prints a reset plan (and its --export).

    Kafka 4.0 walks a `HashMap` of groups, each a `HashMap` of partitions (`Collectors.toMap`).
    Kafka 3.3 (Scala 2.13) folds the admin client's `HashMap` of described groups into an
    `immutable.Map`, each group's offsets an `immutable.Map` built (`toMap`) from the partitions in
    the order the tool lists them (the plan's own order, see `offsets_reset`): up to 4 entries keep
    that order (`Map1`..`Map4`), from 5 it is a CHAMP `HashMap` (kafkatool.jvm.scala_collections).
    `release` None: sorted (kafkatool's own texts).
    """
    from kafkatool.jvm.hashing import string_hash
    from kafkatool.jvm.java_collections import grown_capacity, hash_order

    by_group = {p.group: p for p in plans}
    described = hash_order(list(by_group), string_hash, grown_capacity(len(by_group)))
    if release is not None and release.at_least("4.0"):
        return [(g, t, part, by_group[g].offsets[(t, part)])
                for g in described for t, part in java_hashmap_order(list(by_group[g].offsets))]
    if release is not None:
        from kafkatool.jvm.scala_collections import immutable_set_order

        return [(g, t, part, by_group[g].offsets[(t, part)])
                for g in immutable_set_order(described, string_hash)
                for t, part in immutable_set_order(list(by_group[g].offsets), lambda tp: topic_partition_hash(*tp))]
    return [(p.group, t, part, o) for p in sorted(plans, key=lambda p: p.group) for (t, part), o in sorted(p.offsets.items())]


def format_reset(plans: list[ResetPlan], release: Any = None) -> str:
    """`printOffsetsToReset`: Kafka 3.3's text, 4.0's (fixed widths) or 4.2's (sized columns), rows in
    the release's map order (`reset_rows`)."""
    rows = reset_rows(plans, release)
    if not rows:
        return ""
    if release is not None and release.at_least(SIZED_RESET_SINCE):
        # 4.2's OffsetsUtils.printOffsetsToReset: group and topic columns as wide as the widest (at least
        # 15), the offset unpadded.
        g = max([15] + [len(p.group) for p in plans])
        t = max([15] + [len(topic) for p in plans for topic, _ in p.offsets])
        fmt = "{:<" + str(g) + "} {:<" + str(t) + "} {:<10} {}\n"
        return "\n" + fmt.format("GROUP", "TOPIC", "PARTITION", "NEW-OFFSET") + "".join(fmt.format(*r) for r in rows)
    fmt = "{:<30} {:<30} {:<10} {:<15}\n"
    return "\n" + fmt.format("GROUP", "TOPIC", "PARTITION", "NEW-OFFSET") + "".join(fmt.format(*r) for r in rows)


# --------------------------------------------------------------------------------------------------
# Gathering: committed offsets + log-end offsets into rows, for each kind of source


@dataclass(slots=True)
class GroupReport:
    """One group's rows; `state` None means the group does not exist."""

    group: str
    kind: str
    state: str | None
    rows: list[PartitionLag]
    members: list[MemberRow]
    coordinator: str = MISSING
    coordinator_id: int | None = None
    protocol: str = ""
    pending: int = 0


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


def add_time_lag(reports: list[GroupReport], brokers: Any, now_ms: int, fetch_bytes: int = 2048) -> None:
    """Time lag of every row: one bounded Fetch per leader for all groups' committed offsets (a
    partition several groups read at different offsets adds a round per extra offset)."""
    wanted: dict[TP, set[int]] = {}
    for rep in reports:
        for r in rep.rows:
            if r.topic is not None and r.partition is not None and r.current_offset is not None and r.current_offset >= 0:
                wanted.setdefault((r.topic, r.partition), set()).add(r.current_offset)
    stamps: dict[tuple[str, int, int], Any] = {}
    while wanted:
        round_ = {tp: min(offs) for tp, offs in wanted.items()}
        for tp, st in brokers.record_timestamps(round_, fetch_bytes).items():
            stamps[(tp[0], tp[1], round_[tp])] = st
        wanted = {tp: offs - {round_[tp]} for tp, offs in wanted.items() if len(offs) > 1}
    for rep in reports:
        apply_time_lag(rep.rows, stamps, now_ms)


def sample_key(reports: list[GroupReport]) -> dict[tuple[str, str, int], tuple[int | None, int | None]]:
    return {
        (r.group, r.topic, r.partition): (r.current_offset, r.log_end_offset)
        for rep in reports for r in rep.rows if r.topic is not None and r.partition is not None
    }
