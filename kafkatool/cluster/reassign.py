"""kafka-reassign-partitions as a library: Kafka's JSON and text, plan files, and the actions.

Text and JSON follow Kafka 3.x's `ReassignPartitionsCommand` (compact JSON, `version` first,
partitions sorted by topic then partition, `log_dirs` of `"any"`), so output can be diffed against
Kafka's and files passed between the two tools.  Beyond Kafka:

* plan files: what `--generate` proposes and `--execute` saves for rollback is Kafka's reassignment
  JSON plus a `"kafkatool"` object that records the assignment the plan was made from (and the seed,
  strategy and brokers), so `--execute` can refuse when the cluster drifted since (see PLAN_FORMAT);
* summaries of what a plan moves: replicas and bytes per broker, preferred-leader counts;
* throttles are applied in the same ZooKeeper transaction as the reassignment, or rolled back on the
  Admin API when the cluster accepted none of it.

Functions here return values and text; the CLI prints them.

Size: ReassignPartitionsCommand's planner, its JSON and plan files, execute/verify/cancel with the
throttle protocol and their texts per release — one unit because the texts depend on the plan's and the
throttles' collection orders; the strategies (`assignment`, `minimal`) already live apart.
"""

from __future__ import annotations

import json
import random
import re
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from kafkatool.cluster.assignment import (
    AssignmentError,
    BrokerMetadata,
    broker_metadata,
    generate_kafka,
)
from kafkatool.cluster.backend import Cluster, UnknownTopicsError
from kafkatool.cluster.connect import ClusterError
from kafkatool.cluster.minimal import Goals, lower_bound_moves, plan_minimal
from kafkatool.cluster.model import (
    Assignment,
    ConfigChange,
    OngoingReassignment,
    TopicPartition,
    TopicPartitionReplica,
)
from kafkatool.jvm import java_collections, scala_collections
from kafkatool.jvm.random import JavaRandom
from kafkatool.release import Release, tools_in_scala

LEADER_RATE = "leader.replication.throttled.rate"
FOLLOWER_RATE = "follower.replication.throttled.rate"
LOG_DIR_RATE = "replica.alter.log.dirs.io.max.bytes.per.second"
LEADER_REPLICAS = "leader.replication.throttled.replicas"
FOLLOWER_REPLICAS = "follower.replication.throttled.replicas"
BROKER_THROTTLES = (LEADER_RATE, FOLLOWER_RATE, LOG_DIR_RATE)
TOPIC_THROTTLES = (LEADER_REPLICAS, FOLLOWER_REPLICAS)
ANY_LOG_DIR = "any"

CANNOT_EXECUTE_BECAUSE_OF_EXISTING = (
    "Cannot execute because there is an existing partition assignment.  Use --additional to override "
    "this and create a new partition assignment in addition to the existing one. The --additional flag "
    "can also be used to change the throttle by resubmitting the current reassignment."
)
VERIFY_PERIODICALLY = (
    "Warning: You must run --verify periodically, until the reassignment completes, to ensure the "
    "throttle is removed."
)

PLAN_FORMAT = """\
A plan file is Kafka's reassignment JSON with one more top-level key, which Kafka's tool ignores:

  {"version":1,
   "partitions":[{"topic":"t","partition":0,"replicas":[1,2],"log_dirs":["any","any"]}, ...],
   "kafkatool":{"plan_version":1, "kind":"plan"|"rollback", "created":"<UTC ISO-8601>",
                "cluster":"zookeeper:<connect>"|"bootstrap-server:<list>",
                "strategy":"kafka"|"minimal"|"execute", "brokers":[1,2,3], "rack_aware":true,
                "seed":N|null, "start_index":N|null, "replica_shift":N|null,
                "current":[{"topic":"t","partition":0,"replicas":[3,1]}, ...]}}

"current" is each listed partition's replica list when the plan was made; --execute compares it
with the cluster and refuses on any difference unless --force.  A rollback file records the
proposed assignment as its "current", so rolling back checks that the reassignment completed."""


class ReassignInputError(ValueError):
    """Bad JSON, options or references: exit code 2 with Kafka's message."""


class ReassignRefused(Exception):
    """The cluster is not in a state to execute (reassignment in progress, drift): exit code 1."""


class LogDirMoveTimeout(Exception):
    """Some log-dir moves did not start within the timeout (Kafka's message): exit code 3."""


# -- JSON in Kafka's shapes -----------------------------------------------------------------------


def compact_json(obj: Any) -> str:
    """Jackson's compact form, as Kafka's `Json.encodeAsString` prints."""
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


_PLAIN_TOPIC = re.compile(r"[A-Za-z0-9._-]*")


def _json_string(s: str) -> str:
    return f'"{s}"' if _PLAIN_TOPIC.fullmatch(s) else compact_json(s)


def _partition_entries(assignment: Assignment, log_dirs: dict[TopicPartitionReplica, str] | None) -> list[str]:
    """One compact JSON object per partition, sorted, with Kafka's key order."""
    topic_json: dict[str, str] = {}
    out = []
    for tp in sorted(assignment):
        reps = list(assignment[tp])
        if log_dirs:
            dirs_json = compact_json([log_dirs.get(TopicPartitionReplica(tp.topic, tp.partition, r), ANY_LOG_DIR) for r in reps])
        else:
            dirs_json = "[" + ",".join(['"any"'] * len(reps)) + "]"
        name = topic_json.get(tp.topic)
        if name is None:
            name = topic_json[tp.topic] = _json_string(tp.topic)
        out.append(f'{{"topic":{name},"partition":{tp.partition},"replicas":[{",".join(map(str, reps))}],'
                   f'"log_dirs":{dirs_json}}}')
    return out


def format_reassignment_json(assignment: Assignment, log_dirs: dict[TopicPartitionReplica, str] | None = None) -> str:
    """Kafka's `formatAsReassignmentJson`: sorted partitions, `log_dirs` "any" unless given."""
    return '{"version":1,"partitions":[' + ",".join(_partition_entries(assignment, log_dirs)) + "]}"


def parse_json(text: str, what: str) -> Any:
    try:
        return json.loads(text)
    except ValueError as exc:
        raise ReassignInputError(f"{what}: not valid JSON ({exc})") from None


def _version(doc: Any, what: str) -> int:
    if not isinstance(doc, dict):
        raise ReassignInputError(f"{what}: expected a JSON object")
    v = doc.get("version", 1)
    if not isinstance(v, int) or isinstance(v, bool):
        raise ReassignInputError(f"{what}: version must be an integer")
    if v != 1:
        raise ReassignInputError(f"Not supported version field value {v}")
    return v


def _java_set(items: Iterable[object]) -> str:
    return "[" + ", ".join(str(i) for i in items) + "]"


def duplicates(items: Sequence[Any]) -> list[Any]:
    seen: set[Any] = set()
    dups: dict[Any, None] = {}
    for i in items:
        if i in seen:
            dups[i] = None
        seen.add(i)
    return list(dups)


def parse_topics_to_move(text: str, what: str = "--topics-to-move-json-file") -> list[str]:
    """`{"topics":[{"topic":"foo"}],"version":1}` → topic names, refusing duplicates as Kafka does."""
    doc = parse_json(text, what)
    _version(doc, what)
    topics = []
    for entry in doc.get("topics") or []:
        if not isinstance(entry, dict) or not isinstance(entry.get("topic"), str):
            raise ReassignInputError(f"{what}: each entry of \"topics\" needs a \"topic\" string")
        topics.append(entry["topic"])
    dups = duplicates(topics)
    if dups:
        raise ReassignInputError(f"List of topics to reassign contains duplicate entries: {_java_set(dups)}")
    if not topics:
        raise ReassignInputError(f"{what}: no topics listed")
    return topics


def parse_broker_list(text: str) -> list[int]:
    try:
        brokers = [int(b) for b in text.split(",")]
    except ValueError:
        raise ReassignInputError(f"--broker-list: {text!r} is not a comma-separated list of broker ids") from None
    dups = duplicates(brokers)
    if dups:
        raise ReassignInputError(f"Broker list contains duplicate entries: {_java_set(dups)}")
    return brokers


@dataclass
class PlanMeta:
    """The `"kafkatool"` section of a plan file."""

    current: Assignment
    kind: str = "plan"
    created: str = ""
    cluster: str = ""
    strategy: str = "kafka"
    brokers: list[int] = field(default_factory=list)
    rack_aware: bool = True
    seed: int | None = None
    start_index: int | None = None
    replica_shift: int | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "plan_version": 1,
            "kind": self.kind,
            "created": self.created or utc_now(),
            "cluster": self.cluster,
            "strategy": self.strategy,
            "brokers": self.brokers,
            "rack_aware": self.rack_aware,
            "seed": self.seed,
            "start_index": self.start_index,
            "replica_shift": self.replica_shift,
            "current": [{"topic": tp.topic, "partition": tp.partition, "replicas": list(r)}
                        for tp, r in sorted(self.current.items())],
        }


@dataclass
class ReassignmentFile:
    """A parsed `--reassignment-json-file`: partitions in file order, log dirs, optional plan data."""

    partitions: list[tuple[TopicPartition, list[int]]]
    log_dirs: dict[TopicPartitionReplica, str] = field(default_factory=dict)
    plan: PlanMeta | None = None

    @property
    def targets(self) -> dict[TopicPartition, list[int]]:
        return dict(self.partitions)


def _int_list(v: Any, what: str) -> list[int]:
    if not isinstance(v, list) or not all(isinstance(i, int) and not isinstance(i, bool) for i in v):
        raise ReassignInputError(f"{what}: expected a list of integers")
    return list(v)


def parse_reassignment(text: str, what: str = "--reassignment-json-file") -> ReassignmentFile:
    """Kafka's `parsePartitionReassignmentData` (no de-duplication), plus our plan section."""
    doc = parse_json(text, what)
    _version(doc, what)
    parts: list[tuple[TopicPartition, list[int]]] = []
    log_dirs: dict[TopicPartitionReplica, str] = {}
    for entry in doc.get("partitions") or []:
        if not isinstance(entry, dict) or not isinstance(entry.get("topic"), str) or not isinstance(entry.get("partition"), int):
            raise ReassignInputError(f"{what}: each partition needs \"topic\", \"partition\" and \"replicas\"")
        tp = TopicPartition(entry["topic"], entry["partition"])
        reps = _int_list(entry.get("replicas"), f"{what}: {tp} replicas")
        dirs = entry.get("log_dirs")
        dirs = [ANY_LOG_DIR] * len(reps) if dirs is None else dirs
        if not isinstance(dirs, list) or not all(isinstance(d, str) for d in dirs):
            raise ReassignInputError(f"{what}: {tp} log_dirs: expected a list of strings")
        if len(reps) != len(dirs):
            raise ReassignInputError(
                f"Size of replicas list {_java_set(reps)} is different from size of log dirs list "
                f"{_java_set(dirs)} for partition {tp}"
            )
        parts.append((tp, reps))
        for r, d in zip(reps, dirs, strict=True):
            if d != ANY_LOG_DIR:
                log_dirs[TopicPartitionReplica(tp.topic, tp.partition, r)] = d
    plan = None
    meta = doc.get("kafkatool")
    if isinstance(meta, dict) and isinstance(meta.get("current"), list):
        current: Assignment = {}
        for e in meta["current"]:
            current[TopicPartition(e["topic"], int(e["partition"]))] = _int_list(e.get("replicas"), f"{what}: current")
        plan = PlanMeta(
            current=current,
            kind=str(meta.get("kind", "plan")),
            created=str(meta.get("created", "")),
            cluster=str(meta.get("cluster", "")),
            strategy=str(meta.get("strategy", "")),
            brokers=list(meta.get("brokers") or []),
            rack_aware=bool(meta.get("rack_aware", True)),
            seed=meta.get("seed"),
            start_index=meta.get("start_index"),
            replica_shift=meta.get("replica_shift"),
        )
    return ReassignmentFile(parts, log_dirs, plan)


def validate_for_execute(rf: ReassignmentFile) -> dict[TopicPartition, list[int]]:
    """Kafka's `parseExecuteAssignmentArgs` checks, in its order and words."""
    if not rf.partitions:
        raise ReassignInputError("Partition reassignment list cannot be empty")
    if any(not reps for _, reps in rf.partitions):
        raise ReassignInputError("Partition replica list cannot be empty")
    dup_parts = duplicates([tp for tp, _ in rf.partitions])
    if dup_parts:
        raise ReassignInputError(
            "Partition reassignment contains duplicate topic partitions: " + ",".join(str(t) for t in dup_parts)
        )
    dup_reps = [(tp, duplicates(reps)) for tp, reps in rf.partitions if duplicates(reps)]
    if dup_reps:
        msg = ". ".join(f"{tp} contains multiple entries for {','.join(map(str, d))}" for tp, d in dup_reps)
        raise ReassignInputError(f"Partition replica lists may not contain duplicate entries: {msg}")
    return rf.targets


def utc_now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def plan_document(proposed: Assignment, meta: PlanMeta, log_dirs: dict[TopicPartitionReplica, str] | None = None) -> str:
    """A plan file: Kafka's reassignment JSON (one partition a line) plus the `"kafkatool"` section."""
    extra = meta.to_json()
    extra.pop("current")
    current = [
        f'{{"topic":{_json_string(tp.topic)},"partition":{tp.partition},"replicas":[{",".join(map(str, r))}]}}'
        for tp, r in sorted(meta.current.items())
    ]
    return (
        '{"version":1,\n"partitions":[\n' + ",\n".join(_partition_entries(proposed, log_dirs)) + "\n],\n"
        '"kafkatool":' + compact_json(extra)[:-1] + ',"current":[\n' + ",\n".join(current) + "\n]}}\n"
    )


# -- what a plan moves --------------------------------------------------------------------------


@dataclass
class BrokerMoves:
    broker: int
    rack: str | None
    replicas_before: int = 0
    replicas_after: int = 0
    leaders_before: int = 0
    leaders_after: int = 0
    moves_in: int = 0
    moves_out: int = 0
    bytes_in: int | None = 0
    bytes_out: int | None = 0


@dataclass
class MoveSummary:
    strategy: str
    partitions: int
    partitions_changed: int
    replica_moves: int
    lower_bound: int
    bytes_to_move: int | None
    leadership_changes: int
    brokers: list[BrokerMoves]

    def spread(self, attr: str, target: set[int] | None = None) -> tuple[int, int]:
        vals = [getattr(b, attr) for b in self.brokers if target is None or b.broker in target]
        return (min(vals), max(vals)) if vals else (0, 0)

    def to_json(self) -> dict[str, Any]:
        return {
            "strategy": self.strategy,
            "partitions": self.partitions,
            "partitions_changed": self.partitions_changed,
            "replica_moves": self.replica_moves,
            "lower_bound_moves": self.lower_bound,
            "bytes_to_move": self.bytes_to_move,
            "leadership_changes": self.leadership_changes,
            "brokers": [vars(b) for b in self.brokers],
        }


def summarize(
    current: Assignment,
    proposed: Assignment,
    brokers: Sequence[BrokerMetadata],
    sizes: dict[TopicPartition, int] | None,
    strategy: str,
) -> MoveSummary:
    """Replica and leader counts per broker before/after, replicas and bytes moving in and out."""
    rack = {b.id: b.rack for b in brokers}
    ids = set(rack)
    for reps in list(current.values()) + list(proposed.values()):
        ids.update(reps)
    rows = {b: BrokerMoves(b, rack.get(b)) for b in sorted(ids)}
    if sizes is None:
        for r in rows.values():
            r.bytes_in = r.bytes_out = None
    moves = changed = leaders = 0
    total_bytes: int | None = 0 if sizes is not None else None
    for tp, before in current.items():
        after = proposed.get(tp, before)
        for b in before:
            rows[b].replicas_before += 1
        for b in after:
            rows[b].replicas_after += 1
        if before:
            rows[before[0]].leaders_before += 1
        if after:
            rows[after[0]].leaders_after += 1
        if list(after) != list(before):
            changed += 1
        if after and before and after[0] != before[0]:
            leaders += 1
        size = sizes.get(tp, 0) if sizes is not None else 0
        for b in set(after) - set(before):
            moves += 1
            rows[b].moves_in += 1
            if sizes is not None:
                rows[b].bytes_in = (rows[b].bytes_in or 0) + size
                total_bytes = (total_bytes or 0) + size
        for b in set(before) - set(after):
            rows[b].moves_out += 1
            if sizes is not None:
                rows[b].bytes_out = (rows[b].bytes_out or 0) + size
    return MoveSummary(
        strategy=strategy,
        partitions=len(current),
        partitions_changed=changed,
        replica_moves=moves,
        lower_bound=lower_bound_moves(current, [b.id for b in brokers]),
        bytes_to_move=total_bytes,
        leadership_changes=leaders,
        brokers=list(rows.values()),
    )


def human_bytes(n: int | None) -> str:
    if n is None:
        return "unknown"
    v = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if v < 1024 or unit == "TiB":
            return f"{n} B" if unit == "B" else f"{v:.1f} {unit} ({n} bytes)"
        v /= 1024
    return f"{n} B"


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(header)]

    def line(cells: list[str]) -> str:
        return "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths, strict=True))).rstrip()

    return [line(header)] + [line(r) for r in rows]


def format_summary(s: MoveSummary, target: set[int] | None = None) -> str:
    """The per-broker move report printed after a plan (our addition; Kafka prints none)."""
    lo_r, hi_r = s.spread("replicas_after", target)
    lo_l, hi_l = s.spread("leaders_after", target)
    out = [
        f"Reassignment summary (strategy {s.strategy}):",
        f"  partitions changed: {s.partitions_changed} of {s.partitions}; replicas moved: {s.replica_moves} "
        f"(lower bound {s.lower_bound}); bytes to move: {human_bytes(s.bytes_to_move)}; "
        f"preferred leaders changed: {s.leadership_changes}",
        f"  replicas per broker after: {lo_r}..{hi_r}; preferred leaders per broker after: {lo_l}..{hi_l}",
    ]
    header = ["broker", "rack", "replicas", "leaders", "moves in", "moves out", "bytes in", "bytes out"]
    rows = [
        [
            str(b.broker), b.rack or "-",
            f"{b.replicas_before}->{b.replicas_after}", f"{b.leaders_before}->{b.leaders_after}",
            str(b.moves_in), str(b.moves_out),
            "-" if b.bytes_in is None else str(b.bytes_in), "-" if b.bytes_out is None else str(b.bytes_out),
        ]
        for b in s.brokers
    ]
    out += ["  " + line for line in _table(header, rows)]
    return "\n".join(out) + "\n"


def format_comparison(summaries: list[MoveSummary], target: set[int] | None = None) -> str:
    header = ["strategy", "replicas moved", "lower bound", "bytes to move", "partitions changed",
              "replicas/broker", "leaders/broker", "leader changes"]
    rows = []
    for s in summaries:
        lo_r, hi_r = s.spread("replicas_after", target)
        lo_l, hi_l = s.spread("leaders_after", target)
        rows.append([s.strategy, str(s.replica_moves), str(s.lower_bound),
                     "unknown" if s.bytes_to_move is None else str(s.bytes_to_move),
                     str(s.partitions_changed), f"{lo_r}..{hi_r}", f"{lo_l}..{hi_l}", str(s.leadership_changes)])
    return "Strategy comparison:\n" + "\n".join("  " + line for line in _table(header, rows)) + "\n"


# -- --generate -----------------------------------------------------------------------------------


@dataclass
class GenerateResult:
    current: Assignment
    proposed: Assignment
    brokers: list[BrokerMetadata]
    strategy: str
    seed: int | None
    start_index: int | None
    replica_shift: int | None
    rack_aware: bool
    summary: MoveSummary
    comparison: list[MoveSummary] = field(default_factory=list)
    sizes: dict[TopicPartition, int] | None = None  # the partition sizes planned with (None: unknown)
    compared: Assignment | None = None  # --compare: the other strategy's plan

    @property
    def changed(self) -> Assignment:
        return {tp: r for tp, r in self.proposed.items() if list(r) != list(self.current.get(tp, []))}

    def printed_proposal(self) -> Assignment:
        """Kafka's strategy prints every partition; ours prints only those that change."""
        return self.proposed if self.strategy == "kafka" else self.changed

    def plan_meta(self, cluster: str) -> PlanMeta:
        printed = self.printed_proposal()
        return PlanMeta(
            current={tp: self.current[tp] for tp in printed},
            kind="plan",
            cluster=cluster,
            strategy=self.strategy,
            brokers=[b.id for b in self.brokers],
            rack_aware=self.rack_aware,
            seed=self.seed,
            start_index=self.start_index,
            replica_shift=self.replica_shift,
        )


def generate_text(current: Assignment, proposed: Assignment,
                  log_dirs: dict[TopicPartitionReplica, str] | None = None) -> str:
    """Exactly what Kafka's `--generate` prints (`log_dirs`: the replicas' current dirs, 4.2+)."""
    return (
        f"Current partition replica assignment\n{format_reassignment_json(current, log_dirs)}\n\n"
        f"Proposed partition reassignment configuration\n{format_reassignment_json(proposed)}\n"
    )


def generate(
    cluster: Cluster,
    topics: list[str],
    broker_list: list[int],
    *,
    strategy: str = "kafka",
    rack_aware: bool = True,
    seed: int | None = None,
    start_index: int | None = None,
    replica_shift: int | None = None,
    sizes: dict[TopicPartition, int] | None = None,
    compare: bool = False,
    goals: Goals | None = None,
    order: list[TopicPartition] | None = None,
) -> GenerateResult:
    """Plan a reassignment of `topics` onto `broker_list` with Kafka's algorithm or ours (with `goals`;
    `order` receives the minimal plan's changes in the order made)."""
    current = cluster.assignment(topics)
    if sizes is None and (strategy == "minimal" or compare):  # only the minimal planner and summaries use bytes
        sizes = cluster.partition_sizes_of(current)
    metas = broker_metadata([(b.id, b.rack) for b in cluster.brokers()], broker_list, rack_aware,
                            admin_api=cluster.kind == "admin")
    used_seed = seed

    def kafka_plan() -> Assignment:
        nonlocal used_seed
        if start_index is None and used_seed is None:
            used_seed = random.SystemRandom().randrange(-(2**63), 2**63)
        rng = JavaRandom(used_seed if used_seed is not None else 0)
        start = -1 if start_index is None else start_index
        return generate_kafka(topics, current, metas, rng, start, replica_shift, text=cluster.text_release(),
                              zookeeper=cluster.kind == "zookeeper")

    if strategy == "kafka":
        proposed = kafka_plan()
    elif strategy == "minimal":
        if len(metas) == 0 and current:
            rf = max(len(r) for r in current.values())
            raise AssignmentError(f"Replication factor: {rf} larger than available brokers: 0.")
        proposed = plan_minimal(current, metas, sizes, goals, order)
    else:
        raise ReassignInputError(f"--strategy: {strategy!r} is not one of kafka, minimal")
    summary = summarize(current, proposed, metas, sizes, strategy)
    comparison = []
    other = None
    if compare:
        other = plan_minimal(current, metas, sizes, goals) if strategy == "kafka" else kafka_plan()
        other_name = "minimal" if strategy == "kafka" else "kafka"
        comparison = [summary, summarize(current, other, metas, sizes, other_name)]
    return GenerateResult(
        current=current, proposed=proposed, brokers=metas, strategy=strategy,
        seed=used_seed if strategy == "kafka" or compare else None,
        start_index=start_index, replica_shift=replica_shift, rack_aware=rack_aware,
        summary=summary, comparison=comparison, sizes=sizes, compared=other,
    )


# -- sizes for clusters that cannot report them ---------------------------------------------------


def parse_sizes(text: str, what: str = "--sizes") -> dict[TopicPartition, int]:
    """Partition sizes from kafka-log-dirs.sh's output, `{"t-0": bytes}`, or `[{"topic","partition","size"}]`.

    The list is what `kafkatool log-dirs --format json` writes, offline (partition dirs on disk) or
    live (DescribeLogDirs); rows of future replicas (`is_future`) and of failed log dirs (no topic)
    are skipped.  kafka-log-dirs.sh's whole stdout is taken too (its JSON is the last line).
    """
    lines = text.strip().splitlines()
    if len(lines) > 1 and lines[0].startswith("Querying brokers for log directories information"):
        text = lines[-1]
    doc = parse_json(text, what)
    sizes: dict[TopicPartition, int] = {}

    def put(tp: TopicPartition, size: Any) -> None:
        if not isinstance(size, int) or isinstance(size, bool) or size < 0:
            raise ReassignInputError(f"{what}: size of {tp} must be a non-negative integer")
        sizes[tp] = max(sizes.get(tp, 0), size)

    def split(name: str) -> TopicPartition:
        topic, dash, part = name.rpartition("-")
        if not dash or not part.isdigit():
            raise ReassignInputError(f"{what}: {name!r} is not <topic>-<partition>")
        return TopicPartition(topic, int(part))

    if isinstance(doc, dict) and isinstance(doc.get("brokers"), list):  # kafka-log-dirs.sh --describe
        for broker in doc["brokers"]:
            for d in broker.get("logDirs") or []:
                for p in d.get("partitions") or []:
                    if not p.get("isFuture"):
                        put(split(p["partition"]), p.get("size"))
    elif isinstance(doc, dict):
        for name, size in doc.items():
            put(split(name), size)
    elif isinstance(doc, list):
        for e in doc:
            if not isinstance(e, dict) or "topic" not in e or "partition" not in e:
                raise ReassignInputError(f"{what}: entries need \"topic\", \"partition\" and \"size\"")
            if e.get("is_future") or e["topic"] is None:  # a replica being moved, or a failed log dir
                continue
            if isinstance(e["partition"], bool) or not isinstance(e["partition"], int):
                raise ReassignInputError(f"{what}: partition of {e['topic']} must be an integer")
            put(TopicPartition(str(e["topic"]), e["partition"]), e.get("size"))
    else:
        raise ReassignInputError(f"{what}: expected kafka-log-dirs.sh output, an object or a list")
    return sizes


# -- --execute ------------------------------------------------------------------------------------


@dataclass
class PartitionMove:
    sources: list[int]
    destinations: list[int]


def move_map(
    ongoing: dict[TopicPartition, OngoingReassignment],
    proposed: dict[TopicPartition, list[int]],
    current: Assignment,
) -> dict[str, dict[int, PartitionMove]]:
    """Kafka's `calculateProposedMoveMap`: sources and destinations of running and new moves."""
    moves: dict[str, dict[int, PartitionMove]] = {}
    for tp, r in ongoing.items():
        sources = [b for b in r.replicas if b not in r.adding]
        moves.setdefault(tp.topic, {})[tp.partition] = PartitionMove(sources, list(r.adding))
    for tp, reps in proposed.items():
        part_moves = moves.setdefault(tp.topic, {})
        if tp.partition in part_moves:
            sources = list(part_moves[tp.partition].sources)
        elif tp in current:
            sources = list(current[tp])
        else:
            raise ReassignInputError(f"Trying to reassign a topic partition {tp} with 0 replicas")
        part_moves[tp.partition] = PartitionMove(sources, [b for b in reps if b not in sources])
    return moves


def throttle_changes(moves: dict[str, dict[int, PartitionMove]], rate: int) -> list[ConfigChange]:
    """Kafka's throttle configs: `p:b` replica lists per topic (string order), both rates per broker."""
    changes = []
    brokers: set[int] = set()
    for topic, parts in moves.items():
        leader = sorted({f"{p}:{b}" for p, m in parts.items() for b in m.sources})
        follower = sorted({f"{p}:{b}" for p, m in parts.items() for b in m.destinations if b not in m.sources})
        changes.append(ConfigChange("topics", topic, set={LEADER_REPLICAS: ",".join(leader), FOLLOWER_REPLICAS: ",".join(follower)}))
        for m in parts.values():
            brokers.update(m.sources)
            brokers.update(m.destinations)
    for b in sorted(brokers):
        changes.append(ConfigChange("brokers", str(b), set={LEADER_RATE: str(rate), FOLLOWER_RATE: str(rate)}))
    return changes


def current_assignment_text(current: Assignment, log_dirs: dict[TopicPartitionReplica, str] | None = None) -> str:
    """Kafka's rollback block printed before a reassignment starts (`log_dirs`: the replicas' current dirs, 4.2+)."""
    return (
        f"Current partition replica assignment\n\n{format_reassignment_json(current, log_dirs)}\n\n"
        "Save this to use as the --reassignment-json-file option during rollback\n"
    )


@dataclass
class Drift:
    partition: TopicPartition
    planned: list[int]
    now: list[int] | None


def detect_drift(plan: PlanMeta, now: Assignment) -> list[Drift]:
    out = []
    for tp, planned in sorted(plan.current.items()):
        cur = now.get(tp)
        if cur is None or list(cur) != list(planned):
            out.append(Drift(tp, list(planned), None if cur is None else list(cur)))
    return out


def drift_message(drifts: list[Drift], limit: int = 5) -> str:
    shown = "; ".join(
        f"{d.partition}: plan saw {','.join(map(str, d.planned))}, now "
        f"{'missing' if d.now is None else ','.join(map(str, d.now))}"
        for d in drifts[:limit]
    )
    more = f" (and {len(drifts) - limit} more)" if len(drifts) > limit else ""
    return (
        f"the cluster's assignment changed since the plan was made for {len(drifts)} partition(s): {shown}{more}; "
        "generate a new plan, or pass --force to execute anyway"
    )


RUNNING_ASSIGNMENT = "There is an existing assignment running."


@dataclass
class RunningThrottleUpdate:
    """Kafka 2.x's `--execute` while `/admin/reassign_partitions` exists (`maybeLimit`).

    It starts nothing and sets the throttle rates given on every broker of the file's topics (all
    their partitions' replicas) and of its target replicas, keeping other broker configs.
    `not_started` lists the file's partitions that the running reassignment does not move there.
    """

    changes: list[ConfigChange]
    not_started: list[TopicPartition]


def running_throttle_update(
    cluster: Cluster,
    targets: dict[TopicPartition, list[int]],
    ongoing: dict[TopicPartition, OngoingReassignment],
    throttle: int,
    log_dir_throttle: int,
) -> RunningThrottleUpdate:
    existing = cluster.assignment(sorted({tp.topic for tp in targets}))
    brokers = dict.fromkeys(b for reps in list(existing.values()) + list(targets.values()) for b in reps)
    rates: dict[str, str] = {}
    if throttle >= 0:
        rates = {LEADER_RATE: str(throttle), FOLLOWER_RATE: str(throttle)}
    if log_dir_throttle >= 0:
        rates[LOG_DIR_RATE] = str(log_dir_throttle)
    changes = [ConfigChange("brokers", str(b), set=dict(rates)) for b in brokers] if rates else []
    def moving_there(tp: TopicPartition, reps: list[int]) -> bool:
        target = ongoing[tp].target if tp in ongoing else None
        return tp in ongoing and (target is None or list(target) == reps)

    not_started = [tp for tp, reps in targets.items() if not moving_there(tp, reps)]
    return RunningThrottleUpdate(changes, sorted(not_started))


@dataclass
class ExecutePlan:
    targets: dict[TopicPartition, list[int]]
    current: Assignment
    ongoing: dict[TopicPartition, OngoingReassignment]
    throttles: list[ConfigChange]
    log_dirs: dict[TopicPartitionReplica, str]
    drift: list[Drift]
    notes: list[str] = field(default_factory=list)
    #: Set when a ZooKeeper reassignment is running: Kafka 2.x then only changes its throttle.
    running: RunningThrottleUpdate | None = None

    def rollback_meta(self, cluster: str) -> PlanMeta:
        return PlanMeta(current=dict(self.targets), kind="rollback", cluster=cluster, strategy="execute",
                        brokers=sorted({b for r in self.current.values() for b in r}), seed=None)


def prepare_execute(
    cluster: Cluster,
    rf: ReassignmentFile,
    *,
    throttle: int = -1,
    log_dir_throttle: int = -1,
    additional: bool = False,
    force: bool = False,
) -> ExecutePlan:
    """Every check before `--execute` changes anything, in Kafka's order, plus drift detection.

    Over ZooKeeper with a reassignment running, Kafka 2.x starts nothing and changes the running
    throttle instead: the plan then only carries that (`running`).
    """
    targets = validate_for_execute(rf)
    if rf.log_dirs and cluster.kind == "zookeeper":
        raise ReassignInputError("bootstrap-server needs to be provided when replica reassignments are present.")
    ongoing = cluster.ongoing_reassignments()
    if cluster.kind == "zookeeper" and any(r.target is not None for r in ongoing.values()):
        running = running_throttle_update(cluster, targets, ongoing, throttle, log_dir_throttle)
        return ExecutePlan(targets, {}, ongoing, running.changes, {}, [], running=running)
    if ongoing and not additional:
        raise ReassignRefused(CANNOT_EXECUTE_BECAUSE_OF_EXISTING)
    alive = {b.id for b in cluster.brokers()}
    wanted = sorted({b for reps in targets.values() for b in reps})
    unknown = [b for b in wanted if b not in alive]
    if unknown:
        raise ReassignInputError(f"Unknown broker id {unknown[0]}")
    try:
        now = cluster.assignment(sorted({tp.topic for tp in targets}))
    except UnknownTopicsError:
        raise
    missing = [tp for tp in targets if tp not in now]
    if missing:
        raise UnknownTopicsError("Unable to find partition: " + ", ".join(str(tp) for tp in missing))
    current = {tp: now[tp] for tp in targets}
    drift = detect_drift(rf.plan, now) if rf.plan is not None else []
    if drift and not force:
        raise ReassignRefused(drift_message(drift))
    throttles = throttle_changes(move_map(ongoing, targets, current), throttle) if throttle >= 0 else []
    notes = []
    if rf.plan is None:
        notes.append("the reassignment file records no current assignment (not a kafkatool plan): drift check skipped")
    return ExecutePlan(targets, current, ongoing, throttles, dict(rf.log_dirs), drift, notes)


def start_log_dir_moves(
    cluster: Cluster,
    moves: dict[TopicPartitionReplica, str],
    timeout: float,
    *,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> Iterator[list[TopicPartitionReplica]]:
    """Kafka's `executeMoves`: send AlterReplicaLogDirs for the pending replicas every 100 ms until
    each move started (a replica still arriving on its new broker cannot move yet); yields each
    round's started replicas in Kafka's order, raises LogDirMoveTimeout after `timeout` seconds."""
    pending = dict(moves)
    deadline = clock() + timeout
    while pending:
        results = cluster.alter_replica_log_dirs(pending)
        started = sorted((r for r, err in results.items() if err is None and r in pending),
                         key=_replica_order)
        for r in started:
            del pending[r]
        if started:
            yield started
        if not pending:
            return
        if clock() >= deadline:
            left = ",".join(str(r) for r in sorted(pending, key=_replica_order))
            plural = "" if len(pending) == 1 else "s"
            raise LogDirMoveTimeout(f"Timed out before log directory move{plural} could be started for: {left}")
        sleep(0.1)


def log_dir_moves_started_text(
    started: list[TopicPartitionReplica], moves: dict[TopicPartitionReplica, str], text: Release
) -> str:
    """One round of started log-dir moves as Kafka prints it (the Scala tool: one line a round)."""
    if tools_in_scala(text):
        return (f"Successfully started log directory move{'' if len(started) == 1 else 's'} for: "
                f"{','.join(map(str, started))}\n")
    return "".join(f"Successfully started moving log directory to {moves[r]} for replica {r.topic}-{r.partition} "
                   f"with broker {r.broker} \n" for r in started)


def no_active_moves_text(text: Release) -> str:
    """`--cancel` with no log-dir move to revert: the Scala tool ends the line, 3.7+'s Java does not."""
    return "None of the specified partition moves are active." + ("\n" if tools_in_scala(text) else "")


def started_text(targets: Iterable[TopicPartition]) -> str:
    parts = sorted(targets)
    return f"Successfully started partition reassignment{'' if len(parts) == 1 else 's'} for {','.join(map(str, parts))}\n"


def reassign_errors_text(errors: dict[TopicPartition, str]) -> str:
    return "Error reassigning partition(s):\n" + "\n".join(f"{tp}: {errors[tp]}" for tp in sorted(errors))


# -- --verify -------------------------------------------------------------------------------------


@dataclass
class PartitionReassignmentState:
    current: list[int]
    target: list[int]
    done: bool


@dataclass
class LogDirMoveState:
    """`kind`: missing-replica, missing-log-dir, active, cancelled, completed (Kafka's move states)."""

    kind: str
    target: str
    current: str | None = None
    future: str | None = None

    @property
    def done(self) -> bool:
        return self.kind in ("completed", "cancelled")


@dataclass
class VerifyResult:
    states: dict[TopicPartition, PartitionReassignmentState]
    parts_ongoing: bool
    moves: dict[TopicPartitionReplica, LogDirMoveState] = field(default_factory=dict)
    moves_ongoing: bool = False

    @property
    def in_progress(self) -> bool:
        return any(not s.done for s in self.states.values()) or self.moves_ongoing

    @property
    def failed(self) -> list[TopicPartition]:
        return [tp for tp, s in sorted(self.states.items()) if s.done and s.current != s.target]

    def status(self, tp: TopicPartition) -> str:
        s = self.states[tp]
        if not s.done:
            return "in_progress"
        return "completed" if s.current == s.target else "failed"

    def rows(self) -> list[dict[str, Any]]:
        return [
            {"topic": tp.topic, "partition": tp.partition, "status": self.status(tp),
             "current_replicas": s.current, "target_replicas": s.target}
            for tp, s in sorted(self.states.items())
        ]


def verify(cluster: Cluster, rf: ReassignmentFile) -> VerifyResult:
    """Kafka's `findPartitionReassignmentStates` and `findLogDirMoveStates`."""
    targets = rf.partitions
    ongoing = cluster.ongoing_reassignments()
    states: dict[TopicPartition, PartitionReassignmentState] = {}
    lookup = sorted({tp.topic for tp, _ in targets if tp not in ongoing})
    described: Assignment = {}
    for topic in lookup:
        try:
            described.update(cluster.assignment([topic]))
        except UnknownTopicsError:
            pass
    for tp, target in targets:
        if tp in ongoing:
            states[tp] = PartitionReassignmentState(list(ongoing[tp].replicas), list(target), False)
        else:
            states[tp] = PartitionReassignmentState(list(described.get(tp, [])), list(target), True)
    result = VerifyResult(states, bool(ongoing))
    if rf.log_dirs:
        found = cluster.replica_log_dirs(rf.log_dirs)
        for replica, target_dir in rf.log_dirs.items():
            if replica not in found:
                result.moves[replica] = LogDirMoveState("missing-replica", target_dir)
                continue
            cur, fut = found[replica]
            if cur is None:
                result.moves[replica] = LogDirMoveState("missing-log-dir", target_dir)
            elif fut is None:
                kind = "completed" if cur == target_dir else "cancelled"
                result.moves[replica] = LogDirMoveState(kind, target_dir, cur)
            else:
                result.moves[replica] = LogDirMoveState("active", target_dir, cur, fut)
        result.moves_ongoing = any(not m.done for m in result.moves.values())
    return result


def partition_states_text(states: dict[TopicPartition, PartitionReassignmentState]) -> str:
    lines = ["Status of partition reassignment:"]
    for tp in sorted(states):
        s = states[tp]
        if s.done:
            if s.current == s.target:
                lines.append(f"Reassignment of partition {tp} is completed.")
            else:
                lines.append(
                    f"There is no active reassignment of partition {tp}, but replica set is "
                    f"{','.join(map(str, s.current))} rather than {','.join(map(str, s.target))}."
                )
        else:
            lines.append(f"Reassignment of partition {tp} is still in progress.")
    return "\n".join(lines)


def _replica_order(r: TopicPartitionReplica) -> tuple[int, str, int]:
    return (r.broker, r.topic, r.partition)


def move_states_text(moves: dict[TopicPartitionReplica, LogDirMoveState]) -> str:
    lines = []
    for r in sorted(moves, key=_replica_order):
        m = moves[r]
        name = f"{r.topic}-{r.partition}"
        if m.kind == "missing-log-dir":
            lines.append(f"Partition {name} is not found in any live log dir on broker {r.broker}. "
                         "There is likely an offline log directory on the broker.")
        elif m.kind == "missing-replica":
            lines.append(f"Partition {name} cannot be found in any live log directory on broker {r.broker}.")
        elif m.kind == "active":
            if m.target == m.future:
                lines.append(f"Reassignment of replica {r} is still in progress.")
            else:
                lines.append(f"Partition {name} on broker {r.broker} is being moved to log dir {m.future} instead of {m.target}.")
        elif m.kind == "cancelled":
            lines.append(f"Partition {name} on broker {r.broker} is not being moved from log dir {m.current} to {m.target}.")
        else:
            lines.append(f"Reassignment of replica {r} completed successfully.")
    return "\n".join(lines)


def verify_text(result: VerifyResult, admin_api: bool) -> str:
    """Kafka 3.x prints the replica-move block (possibly empty) after the partition block."""
    text = partition_states_text(result.states) + "\n"
    if admin_api:
        text += move_states_text(result.moves) + "\n"
    return text


def throttled_entities(
    active_brokers: Sequence[int], targets: Sequence[tuple[TopicPartition, list[int]]], text: Release
) -> tuple[list[int], list[str]]:
    """The brokers and topics whose throttles `--verify`/`--cancel` clear, in the order Kafka prints them.

    Kafka 3.7+ (Java) collects both into `HashSet`s; the Scala tool before it into immutable `Set`s
    (`activeBrokers.toSet ++ targetParts.flatMap(_._2).toSet`, `targetParts.map(_._1.topic).toSet`),
    which keep insertion order up to 4 elements.  Both get the live brokers from a `HashMap` by id.
    """
    active = java_collections.int_set_order(list(active_brokers))
    target_brokers = [r for _, reps in targets for r in reps]
    topics = [tp.topic for tp, _ in targets]
    if tools_in_scala(text):
        brokers = scala_collections.int_set_order(active + scala_collections.int_set_order(target_brokers))
        return brokers, scala_collections.string_set_order(topics)
    return java_collections.int_set_order(active + target_brokers), java_collections.string_set_order(topics)


def clear_throttles(cluster: Cluster, targets: Sequence[tuple[TopicPartition, list[int]]]) -> str:
    """Remove every reassignment throttle from all brokers and the targets' topics (Kafka's way).

    ThrottlesLeftError (naming what is still set) when the clean-up fails part or all of the way."""
    text_release = cluster.text_release()
    try:
        active = [b.id for b in cluster.brokers()]
    except ClusterError as exc:  # the replicas' brokers are the ones the throttles were set on
        raise throttles_left(cluster, _throttle_deletes([], targets, text_release), exc) from None
    changes = _throttle_deletes(active, targets, text_release)
    brokers = [int(c.name) for c in changes if c.entity == "brokers"]
    topics = [c.name for c in changes if c.entity == "topics"]
    text = (
        f"Clearing broker-level throttles on broker{'' if len(brokers) == 1 else 's'} {','.join(map(str, brokers))}\n"
        f"Clearing topic-level throttles on topic{'' if len(topics) == 1 else 's'} {','.join(topics)}\n"
    )
    try:
        cluster.alter_configs(_only_present(cluster, changes))
    except ClusterError as exc:
        left = throttles_left(cluster, changes, exc)
        if left.sure and not left.left:
            return text  # what failed had nothing to clear: every throttle is gone
        raise left from None
    return text


def _throttle_deletes(
    active_brokers: list[int], targets: Sequence[tuple[TopicPartition, list[int]]], text: Release
) -> list[ConfigChange]:
    """The throttle deletes of `clear_throttles`, entities in the order the release's tool prints them."""
    brokers, topics = throttled_entities(active_brokers, targets, text)
    changes = [ConfigChange("brokers", str(b), delete=list(BROKER_THROTTLES)) for b in brokers]
    return changes + [ConfigChange("topics", t, delete=list(TOPIC_THROTTLES)) for t in topics]


class ThrottlesLeftError(ClusterError):
    """Clearing throttles failed: `left` is what is (or may be) still set, `cause` why."""

    def __init__(self, cause: str, left: list[ConfigChange], connect: str, sure: bool) -> None:
        self.cause, self.left, self.connect, self.sure = cause, left, connect, sure
        where = "; ".join(f"{c.entity[:-1]} {c.name}" for c in left)
        super().__init__(f"clearing the reassignment throttles failed ({cause}); "
                         f"{'still' if sure else 'possibly still'} set on {where or 'nothing'}")

    def text(self) -> str:
        """What is left and the kafka-configs.sh commands that clear it, one per line."""
        if not self.left:
            return ""
        out = [f"Throttles {'still' if self.sure else 'possibly still'} set (clearing failed):"]
        out += [f"  {c.entity[:-1]} {c.name}: {','.join(c.delete)}" for c in self.left]
        out.append("Clear them with:")
        out += [f"  kafka-configs.sh {self.connect} --alter --entity-type {c.entity} --entity-name {c.name} "
                f"--delete-config {','.join(c.delete)}" for c in self.left]
        return "\n".join(out) + "\n"


def throttles_left(cluster: Cluster, wanted: list[ConfigChange], cause: ClusterError) -> ThrottlesLeftError:
    """What of `wanted` (throttle deletes) is still set after a failed clean-up: read back when possible."""
    kind, _, address = cluster.source.partition(":")
    connect = f"--{kind} {address}" if kind in ("bootstrap-server", "zookeeper") else cluster.source
    try:
        left = []
        for entity in ("brokers", "topics"):
            mine = [c for c in wanted if c.entity == entity]
            have = cluster.describe_configs(entity, [c.name for c in mine]) if mine else {}
            for c in mine:
                present = [k for k in c.delete if k in have.get(c.name, {})]
                if present:
                    left.append(ConfigChange(entity, c.name, delete=present))
        return ThrottlesLeftError(str(cause), left, connect, sure=True)
    except ClusterError:
        return ThrottlesLeftError(str(cause), wanted, connect, sure=False)


def _only_present(cluster: Cluster, changes: list[ConfigChange]) -> list[ConfigChange]:
    """Deletes of configs that are set (ZooKeeper rewrites the znode only when something changes)."""
    if cluster.kind != "zookeeper":
        return changes
    out = []
    for entity in ("brokers", "topics"):
        mine = [c for c in changes if c.entity == entity]
        have = cluster.describe_configs(entity, [c.name for c in mine])
        for c in mine:
            present = [k for k in c.delete if k in have.get(c.name, {})]
            if present:
                out.append(ConfigChange(entity, c.name, delete=present))
    return out


# -- --cancel and --list ---------------------------------------------------------------------------


def cancellable(ongoing: dict[TopicPartition, OngoingReassignment], targets: Iterable[TopicPartition]) -> list[TopicPartition]:
    return sorted(tp for tp in targets if tp in ongoing and (ongoing[tp].adding or ongoing[tp].removing))


def cancelled_text(parts: list[TopicPartition]) -> str:
    if not parts:
        return "None of the specified partition reassignments are active.\n"
    return (f"Successfully cancelled partition reassignment{'' if len(parts) == 1 else 's'} for: "
            f"{','.join(map(str, sorted(parts)))}\n")


def cancel_errors_text(errors: dict[TopicPartition, str]) -> str:
    return (f"Error cancelling partition reassignment{'' if len(errors) == 1 else 's'} for:\n"
            + "\n".join(f"{tp}: {errors[tp]}" for tp in sorted(errors)))


def list_text(ongoing: dict[TopicPartition, OngoingReassignment]) -> str:
    lines = []
    for tp in sorted(ongoing):
        r = ongoing[tp]
        line = f"{tp}: replicas: {','.join(map(str, r.replicas))}."
        if r.adding:
            line += f" adding: {','.join(map(str, r.adding))}."
        if r.removing:
            line += f" removing: {','.join(map(str, r.removing))}."
        lines.append(line)
    if not lines:
        return "No partition reassignments found.\n"
    return "Current partition reassignments:\n" + "\n".join(lines) + "\n"


def list_rows(ongoing: dict[TopicPartition, OngoingReassignment]) -> list[dict[str, Any]]:
    return [
        {"topic": tp.topic, "partition": tp.partition, "replicas": r.replicas, "adding": r.adding,
         "removing": r.removing, "target": r.target}
        for tp, r in sorted(ongoing.items())
    ]
