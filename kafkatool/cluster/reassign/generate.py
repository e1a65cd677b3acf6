"""`--generate`: plan a reassignment of some topics onto a broker list.

`ReassignPartitionsCommand.generateAssignment`: the current assignment, the brokers' metadata, then
Kafka's placement (`kafkatool.cluster.assignment.generate_kafka`, with the JVM's random) or the
minimal-moves planner (`kafkatool.cluster.minimal`); its text is exactly Kafka's.  Partition sizes
for the planner come from the cluster or from `--sizes` (kafka-log-dirs.sh's output or
`kafkatool log-dirs --format json`).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from kafkatool.cluster.assignment import (
    AssignmentError,
    BrokerMetadata,
    broker_metadata,
    generate_kafka,
)
from kafkatool.cluster.backend import Cluster
from kafkatool.cluster.minimal import Goals, plan_minimal
from kafkatool.cluster.model import (
    Assignment,
    TopicPartition,
    TopicPartitionReplica,
)
from kafkatool.cluster.reassign.errors import ReassignInputError
from kafkatool.cluster.reassign.plan_file import PlanMeta, format_reassignment_json, parse_json
from kafkatool.cluster.reassign.summary import MoveSummary, summarize
from kafkatool.jvm.random import JavaRandom


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
