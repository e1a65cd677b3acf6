"""Reassignment JSON in Kafka's shapes, and our plan files built on it.

`ReassignPartitionsCommand.formatAsReassignmentJson` (compact JSON, Jackson's key order, partitions
sorted), `parseTopicsData` (`--topics-to-move-json-file`), `parsePartitionReassignmentData` (no
de-duplication) and `parseExecuteAssignmentArgs`'s checks, with Kafka's messages.  A plan file is
that JSON plus a `"kafkatool"` section (PLAN_FORMAT) recording the assignment the plan was made
from, so `--execute` can detect drift.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from kafkatool.cluster.model import (
    Assignment,
    TopicPartition,
    TopicPartitionReplica,
)
from kafkatool.cluster.reassign.errors import ReassignInputError

ANY_LOG_DIR = "any"

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
