"""Leader elections: kafka-leader-election (Admin API) and kafka-preferred-replica-election (ZooKeeper).

Partition selection and the election JSON follow `LeaderElectionCommand`; results print as it
prints them (its `HashSet` order).  Over ZooKeeper the tool only writes
`/admin/preferred_replica_election` (refused while one exists) and prints what Kafka 2.x's
`PreferredReplicaLeaderElectionCommand` printed.  `--dry-run` (ours) reports the partitions not
led by their preferred replica and each broker's leader imbalance — the ratio the controller
compares with `leader.imbalance.per.broker.percentage` before it rebalances on its own.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from kafkatool import release
from kafkatool.cluster.model import (
    ELECTION_NOT_NEEDED,
    Broker,
    ElectionResult,
    PartitionState,
    TopicPartition,
)
from kafkatool.jvm import java_collections, scala_collections
from kafkatool.jvm.hashing import topic_partition_hash
from kafkatool.release import Release, tools_in_scala

ELECTION_TYPES = ("preferred", "unclean")


class ElectionInputError(ValueError):
    """Bad election JSON or options (exit code 2), Kafka's words."""


def parse_election_json(text: str, what: str = "--path-to-json-file") -> list[TopicPartition]:
    """`{"partitions":[{"topic":"foo","partition":1}]}` → partitions, refusing duplicates."""
    try:
        doc = json.loads(text)
    except ValueError as exc:
        raise ElectionInputError(f"{what}: not valid JSON ({exc})") from None
    if doc is None:
        raise ElectionInputError("Replica election data is empty")
    if not isinstance(doc, dict) or "partitions" not in doc:
        raise ElectionInputError('Replica election data is missing "partitions" field')
    parts = []
    for e in doc["partitions"] or []:
        if not isinstance(e, dict) or not isinstance(e.get("topic"), str) or not isinstance(e.get("partition"), int):
            raise ElectionInputError(f'{what}: each partition needs "topic" and "partition"')
        parts.append(TopicPartition(e["topic"], e["partition"]))
    seen: set[TopicPartition] = set()
    dups = []
    for tp in parts:
        if tp in seen and tp not in dups:
            dups.append(tp)
        seen.add(tp)
    if dups:
        raise ElectionInputError(
            f"Replica election data contains duplicate partitions: [{', '.join(map(str, dups))}]"
        )
    return parts


def select_partitions(
    all_topic_partitions: bool,
    topic: str | None,
    partition: int | None,
    json_parts: list[TopicPartition] | None,
) -> list[TopicPartition] | None:
    """Exactly one of the three ways to name partitions (None means every partition)."""
    given = sum([all_topic_partitions, topic is not None or partition is not None, json_parts is not None])
    if given != 1:
        raise ElectionInputError(
            "give exactly one of --all-topic-partitions, --topic/--partition or --path-to-json-file"
        )
    if topic is not None or partition is not None:
        if topic is None or partition is None:
            raise ElectionInputError("--topic and --partition go together")
        return [TopicPartition(topic, partition)]
    return None if all_topic_partitions else json_parts


# -- Admin API results ---------------------------------------------------------------------------


def _java_tp_order(parts: list[TopicPartition]) -> list[TopicPartition]:
    return java_collections.hash_order(parts, lambda tp: topic_partition_hash(tp.topic, tp.partition))


def admin_election_text(
    election_type: str, result: ElectionResult, text: Release | None = None
) -> tuple[str, int]:
    """Kafka's `LeaderElectionCommand` lines (of release `text`) and the number of partitions that failed.

    The tool walks the result `HashMap` and sorts partitions into succeeded / not needed / failed
    collections that it prints in their iteration order: Java `HashSet`s and a `HashMap` from Kafka
    3.7, Scala 2.13 `mutable.HashSet`s and a `mutable.HashMap` before.
    """
    scala = tools_in_scala(text if text is not None else release.text_release())
    walked = _java_tp_order(list(result.results))  # the Admin client's result HashMap

    def order(parts: list[TopicPartition]) -> list[TopicPartition]:
        return scala_collections.topic_partition_mutable_order(parts) if scala else _java_tp_order(parts)

    kind = election_type.upper()
    succeeded = order([tp for tp in walked if result.results[tp] is None])
    noop = order([tp for tp in walked if result.results[tp] == ELECTION_NOT_NEEDED])
    failed = order([tp for tp in walked if result.results[tp] not in (None, ELECTION_NOT_NEEDED)])
    lines = []
    if succeeded:
        lines.append(f"Successfully completed leader election ({kind}) for partitions "
                     + ", ".join(map(str, succeeded)))
    if noop:
        lines.append("Valid replica already elected for partitions " + ", ".join(map(str, noop)))
    for tp in failed:
        lines.append(f"Error completing leader election ({kind}) for partition: {tp}: {result.results[tp]}")
    return ("\n".join(lines) + "\n") if lines else "", len(failed)


def election_rows(election_type: str, result: ElectionResult) -> list[dict[str, Any]]:
    rows = []
    for tp, err in sorted(result.results.items()):
        status = "elected" if err is None else ("not-needed" if err == ELECTION_NOT_NEEDED else "failed")
        rows.append({"topic": tp.topic, "partition": tp.partition, "election_type": election_type,
                     "status": status, "error": err if status == "failed" else None})
    return rows


# -- ZooKeeper -----------------------------------------------------------------------------------


def zk_election_order(parts: list[TopicPartition]) -> list[TopicPartition]:
    """Kafka 2.x's `partitions.toSet` (Scala 2.11/2.12): given order up to 4, hash-trie order beyond."""
    return scala_collections.topic_partition_set_order(parts, scala="2.12")


def zk_election_text(requested: list[TopicPartition], existing: set[TopicPartition]) -> str:
    """What Kafka 2.x's `PreferredReplicaLeaderElectionCommand` printed after writing the znode.

    `partitionsFromUser.partition(exists)` keeps the user set's iteration order in both halves; the
    path line is `valid.mkString(",")`, the next one the set's `toString`.
    """
    ordered = zk_election_order(requested)
    valid = [tp for tp in ordered if tp in existing]
    invalid = [tp for tp in ordered if tp not in existing]
    lines = [
        f"Created preferred replica election path with {','.join(map(str, valid))}",
        f"Successfully started preferred replica election for partitions Set({', '.join(map(str, valid))})",
    ]
    lines += [f"Skipping preferred replica leader election for partition {tp} since it doesn't exist." for tp in invalid]
    return "\n".join(lines) + "\n"


# -- --dry-run -----------------------------------------------------------------------------------


@dataclass
class NotPreferred:
    partition: TopicPartition
    leader: int
    preferred: int
    replicas: list[int]
    isr: list[int]
    eligible: bool

    def row(self) -> dict[str, Any]:
        return {"topic": self.partition.topic, "partition": self.partition.partition, "leader": self.leader,
                "preferred": self.preferred, "replicas": self.replicas, "isr": self.isr, "eligible": self.eligible}


@dataclass
class BrokerImbalance:
    broker: int
    preferred: int
    not_led: int

    @property
    def ratio(self) -> float:
        return self.not_led / self.preferred if self.preferred else 0.0

    def row(self, threshold: float) -> dict[str, Any]:
        return {"broker": self.broker, "preferred_partitions": self.preferred, "not_led_by_preferred": self.not_led,
                "imbalance_percent": round(self.ratio * 100, 2), "over_threshold": self.ratio > threshold / 100}


def preferred_report(
    states: dict[TopicPartition, PartitionState], brokers: list[Broker], parts: list[TopicPartition] | None
) -> tuple[list[NotPreferred], list[BrokerImbalance]]:
    """Partitions a preferred election would move, and the controller's imbalance ratio per broker."""
    alive = {b.id for b in brokers}
    chosen = sorted(states) if parts is None else [tp for tp in parts if tp in states]
    out = []
    for tp in chosen:
        st = states[tp]
        if st.replicas and st.leader != st.preferred:
            out.append(NotPreferred(tp, st.leader, st.preferred, list(st.replicas), list(st.isr),
                                    st.preferred in st.isr and st.preferred in alive))
    per: dict[int, BrokerImbalance] = {b: BrokerImbalance(b, 0, 0) for b in sorted(alive)}
    for st in states.values():
        if not st.replicas:
            continue
        row = per.setdefault(st.preferred, BrokerImbalance(st.preferred, 0, 0))
        row.preferred += 1
        if st.leader != st.preferred:
            row.not_led += 1
    return out, [per[b] for b in sorted(per)]


@dataclass
class Leaderless:
    partition: TopicPartition
    replicas: list[int]
    isr: list[int]
    candidate: int

    def row(self) -> dict[str, Any]:
        return {"topic": self.partition.topic, "partition": self.partition.partition, "replicas": self.replicas,
                "isr": self.isr, "candidate": self.candidate}


def unclean_report(
    states: dict[TopicPartition, PartitionState], brokers: list[Broker], parts: list[TopicPartition] | None
) -> list[Leaderless]:
    """Partitions without a leader; an unclean election picks the first live replica in order."""
    alive = {b.id for b in brokers}
    chosen = sorted(states) if parts is None else [tp for tp in parts if tp in states]
    out = []
    for tp in chosen:
        st = states[tp]
        if st.leader < 0 or st.leader not in alive:
            live = [b for b in st.replicas if b in alive]
            out.append(Leaderless(tp, list(st.replicas), list(st.isr), live[0] if live else -1))
    return out


def _ids(v: list[int]) -> str:
    return ",".join(map(str, v)) if v else "(none)"


def dry_run_text(
    election_type: str,
    not_preferred: list[NotPreferred],
    imbalance: list[BrokerImbalance],
    leaderless: list[Leaderless],
    threshold: float,
) -> str:
    lines = []
    if election_type == "preferred":
        lines.append(f"Partitions not led by their preferred replica: {len(not_preferred)}")
        for n in not_preferred:
            why = "" if n.eligible else " (preferred replica not in ISR or not alive: election would fail)"
            lines.append(f"  {n.partition}: leader {n.leader}, preferred {n.preferred}, replicas {_ids(n.replicas)}, "
                         f"isr {_ids(n.isr)}{why}")
        lines.append(f"Leader imbalance per broker (leader.imbalance.per.broker.percentage={threshold:g}):")
        width = max([len(str(b.broker)) for b in imbalance] + [6])
        lines.append(f"  {'broker':<{width}}  preferred  not-led  imbalance")
        for b in imbalance:
            flag = "  over" if b.ratio > threshold / 100 else ""
            lines.append(f"  {b.broker:<{width}}  {b.preferred:>9}  {b.not_led:>7}  {b.ratio * 100:>8.1f}%{flag}")
    else:
        lines.append(f"Partitions without a leader: {len(leaderless)}")
        for u in leaderless:
            cand = f"candidate {u.candidate}" if u.candidate >= 0 else "no live replica: election would fail"
            lines.append(f"  {u.partition}: replicas {_ids(u.replicas)}, isr {_ids(u.isr)}, {cand}")
    return "\n".join(lines) + "\n"
