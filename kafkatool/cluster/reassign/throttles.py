"""Reassignment throttles: the configs `--execute` sets and `--verify`/`--cancel` clear.

`ReassignPartitionsCommand.calculateProposedMoveMap`, `calculateLeaderThrottles`,
`calculateFollowerThrottles` (the `partition:broker` replica lists per topic) and the broker rates;
`clearAllThrottles` removes them from every live broker and the targets' topics, in the order each
release's tool prints them.  When clearing fails, ThrottlesLeftError names what is still set and the
kafka-configs.sh commands that clear it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from kafkatool.cluster.backend import Cluster
from kafkatool.cluster.connect import ClusterError
from kafkatool.cluster.model import (
    Assignment,
    ConfigChange,
    OngoingReassignment,
    TopicPartition,
)
from kafkatool.cluster.reassign.errors import ReassignInputError
from kafkatool.jvm import java_collections, scala_collections
from kafkatool.release import Release, tools_in_scala

LEADER_RATE = "leader.replication.throttled.rate"
FOLLOWER_RATE = "follower.replication.throttled.rate"
LOG_DIR_RATE = "replica.alter.log.dirs.io.max.bytes.per.second"
LEADER_REPLICAS = "leader.replication.throttled.replicas"
FOLLOWER_REPLICAS = "follower.replication.throttled.replicas"
BROKER_THROTTLES = (LEADER_RATE, FOLLOWER_RATE, LOG_DIR_RATE)
TOPIC_THROTTLES = (LEADER_REPLICAS, FOLLOWER_REPLICAS)


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
