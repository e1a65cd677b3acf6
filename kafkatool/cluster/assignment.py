"""Kafka's replica assignment (`AdminUtils.assignReplicasToBrokers`) and `--generate`'s use of it.

Rack-unaware: the first replica of partition p goes to broker `(p + startIndex) % n`, the others
follow at an increasing shift.  Rack-aware: the same walk over a rack-alternated broker list,
skipping brokers whose rack (or who themselves) already hold a replica while others do not.
`startIndex` and the shift come from one `java.util.Random` unless fixed; `generate_kafka`
reproduces the order in which Kafka's tool draws them (Kafka 3.7+: its topic `HashMap` order; the
Scala tool before it: its `groupBy`'s `immutable.HashMap` order), so a seed gives Kafka's output
exactly.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from kafkatool.cluster.model import Assignment, TopicPartition
from kafkatool.jvm import java_collections, scala_collections
from kafkatool.jvm.hashing import topic_partition_hash
from kafkatool.jvm.random import JavaRandom
from kafkatool.release import Release, tools_in_scala


class AssignmentError(ValueError):
    """Kafka refuses the assignment (its message, e.g. replication factor above broker count)."""


@dataclass(frozen=True)
class BrokerMetadata:
    id: int
    rack: str | None = None


NOT_ALL_RACKS = (
    "Not all brokers have rack information. Add --disable-rack-aware in command line to make replica "
    "assignment without rack information."
)


def replica_index(first_replica_index: int, second_replica_shift: int, replica: int, n_brokers: int) -> int:
    shift = 1 + (second_replica_shift + replica) % (n_brokers - 1)
    return (first_replica_index + shift) % n_brokers


def rack_alternated_brokers(rack_of: dict[int, str]) -> list[int]:
    """Brokers taken round-robin from racks in sorted order, each rack's brokers ascending."""
    by_rack: dict[str, list[int]] = {}
    for b, rack in rack_of.items():
        by_rack.setdefault(rack, []).append(b)
    iters = {rack: iter(sorted(ids)) for rack, ids in by_rack.items()}
    racks = sorted(iters)
    out: list[int] = []
    i = 0
    while len(out) < len(rack_of):
        nxt = next(iters[racks[i]], None)
        if nxt is not None:
            out.append(nxt)
        i = (i + 1) % len(racks)
    return out


def assign_replicas_to_brokers(
    brokers: Sequence[BrokerMetadata],
    n_partitions: int,
    replication_factor: int,
    fixed_start_index: int = -1,
    start_partition_id: int = -1,
    rng: JavaRandom | None = None,
    replica_shift: int | None = None,
) -> dict[int, list[int]]:
    """`AdminUtils.assignReplicasToBrokers`; `replica_shift` (ours) fixes the shift separately."""
    if n_partitions <= 0:
        raise AssignmentError("Number of partitions must be larger than 0.")
    if replication_factor <= 0:
        raise AssignmentError("Replication factor must be larger than 0.")
    if replication_factor > len(brokers):
        raise AssignmentError(
            f"Replication factor: {replication_factor} larger than available brokers: {len(brokers)}."
        )
    if all(b.rack is None for b in brokers):
        broker_list = [b.id for b in brokers]
        rack_of: dict[int, str] | None = None
    else:
        if any(b.rack is None for b in brokers):
            raise AssignmentError("Not all brokers have rack information for replica rack aware assignment.")
        rack_of = {b.id: b.rack for b in brokers if b.rack is not None}
        broker_list = rack_alternated_brokers(rack_of)
    n = len(broker_list)
    rng = rng if rng is not None else JavaRandom()
    start_index = fixed_start_index if fixed_start_index >= 0 else rng.next_int(n)
    if replica_shift is not None:
        shift = replica_shift
    else:
        shift = fixed_start_index if fixed_start_index >= 0 else rng.next_int(n)
    pid = max(0, start_partition_id)
    out: dict[int, list[int]] = {}
    if rack_of is None:
        for _ in range(n_partitions):
            if pid > 0 and pid % n == 0:
                shift += 1
            first = (pid + start_index) % n
            replicas = [broker_list[first]]
            for j in range(replication_factor - 1):
                replicas.append(broker_list[replica_index(first, shift, j, n)])
            out[pid] = replicas
            pid += 1
        return out
    num_racks = len(set(rack_of.values()))
    for _ in range(n_partitions):
        if pid > 0 and pid % n == 0:
            shift += 1
        first = (pid + start_index) % n
        leader = broker_list[first]
        replicas = [leader]
        racks_used = {rack_of[leader]}
        brokers_used = {leader}
        k = 0
        for _ in range(replication_factor - 1):
            while True:
                broker = broker_list[replica_index(first, shift * num_racks, k, n)]
                rack = rack_of[broker]
                k += 1
                if (rack not in racks_used or len(racks_used) == num_racks) and (
                    broker not in brokers_used or len(brokers_used) == n
                ):
                    replicas.append(broker)
                    racks_used.add(rack)
                    brokers_used.add(broker)
                    break
        out[pid] = replicas
        pid += 1
    return out


def broker_metadata(
    brokers: Sequence[tuple[int, str | None]], broker_list: Sequence[int], rack_aware: bool,
    admin_api: bool = False,
) -> list[BrokerMetadata]:
    """The brokers of `--broker-list` that exist, with racks unless rack awareness is off.

    Their order is the order the rack-unaware assignment walks: Kafka's tool over the Admin API
    filters `describeCluster().nodes()`, a Java `HashMap` by id (so 17 comes before 5); Kafka 2.x
    over ZooKeeper read the brokers sorted by id.
    """
    wanted = set(broker_list)
    found = sorted((bid, rack) for bid, rack in brokers if bid in wanted)
    if admin_api:
        rack_of = dict(found)
        live = java_collections.int_set_order(sorted(bid for bid, _ in brokers))
        found = [(bid, rack_of[bid]) for bid in live if bid in rack_of]
    metas = [BrokerMetadata(bid, rack if rack_aware else None) for bid, rack in found]
    rackless = sum(1 for m in metas if m.rack is None)
    if rack_aware and rackless not in (0, len(metas)):
        raise AssignmentError(NOT_ALL_RACKS)
    return metas


def kafka_topic_order(
    topics: Sequence[str], current: Assignment, text: Release | None = None, zookeeper: bool = False
) -> list[tuple[str, list[TopicPartition]]]:
    """Topics (with their partitions, the first one giving the replication factor) in the order the
    `--generate` of Kafka release `text` (default: the Java tool, 3.7+) assigns them; over ZooKeeper
    before 2.6, Kafka 2.1's Scala 2.11/2.12 tool (`reassign_21.generate_order_21`)."""
    if text is not None and zookeeper:
        from kafkatool.cluster.reassign_21 import generate_order_21, uses_21_text

        if uses_21_text(text):
            return generate_order_21(topics, current).topics
    if text is not None and tools_in_scala(text):
        return _scala_topic_order(current)
    return _java_topic_order(topics, current)


def _scala_topic_order(current: Assignment) -> list[tuple[str, list[TopicPartition]]]:
    """Kafka ≤ 3.6: `currentAssignment.groupBy(_._1.topic)` then `forKeyValue`.

    `groupBy` returns an `immutable.HashMap` (CHAMP order of the topic names, whatever the input
    order); each topic's partitions are a `mutable.HashMap`, whose head gives the replication factor.
    """
    by_topic: dict[str, list[TopicPartition]] = {}
    for tp in current:
        by_topic.setdefault(tp.topic, []).append(tp)
    return [(t, scala_collections.topic_partition_mutable_order(by_topic[t]))
            for t in scala_collections.string_champ_order(by_topic)]


def _java_topic_order(topics: Sequence[str], current: Assignment) -> list[tuple[str, list[TopicPartition]]]:
    """Kafka 3.7+ (Java).

    The tool reads topics into a `HashSet`, describes them into nested `HashMap`s, collects partitions
    into a `HashMap<TopicPartition, …>` and groups that by topic into another `HashMap`; each step is
    a stable reorder by hash bucket.  The random draws follow the final order.
    """
    n = len(topics)
    jc = java_collections
    order = jc.string_set_order(list(topics), jc.capacity_for_copy(n))  # new HashSet<>(list)
    order = jc.string_set_order(order, jc.grown_capacity(n, jc.table_size_for(n)))  # new HashMap<>(n)
    order = jc.string_set_order(order, jc.capacity_for_copy(n))  # new HashMap<>(futures)
    order = jc.string_set_order(order)  # describeTopics' result map
    by_topic: dict[str, list[TopicPartition]] = {}
    for tp in current:
        by_topic.setdefault(tp.topic, []).append(tp)
    inserted = [tp for t in order for tp in sorted(by_topic.get(t, []))]
    tp_order = java_collections.hash_order(inserted, lambda tp: topic_partition_hash(tp.topic, tp.partition))
    grouped: dict[str, list[TopicPartition]] = {}
    for tp in tp_order:
        grouped.setdefault(tp.topic, []).append(tp)
    return [(t, grouped[t]) for t in java_collections.string_set_order(list(grouped))]


def generate_kafka(
    topics: Sequence[str],
    current: Assignment,
    brokers: Sequence[BrokerMetadata],
    rng: JavaRandom | None = None,
    start_index: int = -1,
    replica_shift: int | None = None,
    text: Release | None = None,
    zookeeper: bool = False,
) -> Assignment:
    """Kafka's `--generate` proposal (release `text`; `zookeeper`: the ZooKeeper tool of that release):
    every topic reassigned from scratch over `brokers`."""
    rng = rng if rng is not None else JavaRandom()
    proposed: Assignment = {}
    for topic, parts in kafka_topic_order(topics, current, text, zookeeper):
        rf = len(current[parts[0]])
        assigned = assign_replicas_to_brokers(
            brokers, len(parts), rf, fixed_start_index=start_index, rng=rng, replica_shift=replica_shift
        )
        for p, replicas in assigned.items():
            proposed[TopicPartition(topic, p)] = replicas
    return dict(sorted(proposed.items()))
