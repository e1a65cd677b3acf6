"""Kafka 2.1's own `kafka-reassign-partitions.sh` text (the ZooKeeper tool before 2.6's rewrite).

ZooKeeper-era scripts parse these words, which Kafka 2.6 changed (the later text is 3.3's, modelled
in `reassign`):

* `--execute` prints the rollback block with **every** partition of the file's topics
  (`printCurrentAssignment`: `getReplicaAssignmentForTopics(topics)`), then, with a throttle,
  `Warning: You must run Verify periodically, …`, the throttle line (`maybeLimit`) and
  `Successfully started reassignment of partitions.`;
* `--verify` prints `Status of partition reassignment: ` (with its trailing space) and one line a
  partition: `Reassignment of partition t-0 completed successfully` / `failed` / `is still in
  progress`, then `Throttle was removed.` when it removed a throttle config.

`--generate` (`generateAssignment`) prints the current assignment and the proposal as Kafka 2.1's
collections order them (`generate_order_21`), and draws each topic's random start in its order:

* current: `getReplicaAssignmentForTopics(topics.toSet)`, an immutable Map filled topic by topic;
* draws: `currentAssignment.groupBy(_._1.topic)` (a 2.11/2.12 `mutable.HashMap` of topics, copied
  into an immutable Map) then `foreach`; a topic's first partition in its group gives the
  replication factor;
* proposal: each topic's `assignReplicasToBrokers` result (a `mutable.HashMap` of partition ids),
  mapped into an immutable Map of partitions, added with `++=` to one `mutable.HashMap` of
  partitions, which the JSON walks.  The order depends on the topics and partition counts only,
  never on the random draws.

Orders are those of Scala 2.11/2.12 immutable Maps (Kafka 2.1 ships for both; their `HashMap` is
the same hash trie): up to 4 entries keep insertion order (`Map1`..`Map4`), from 5 the trie's order
over `TopicPartition.hashCode` (`scala_collections.trie_order_212`).  Insertion order for small maps
is the file's order (topics in first appearance, then partitions ascending for the rollback block;
completed and failed partitions before those still in progress for `--verify`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from kafkatool.cluster.model import Assignment, TopicPartition
from kafkatool.jvm import scala211_collections as s211
from kafkatool.jvm.hashing import topic_partition_hash
from kafkatool.jvm.scala_collections import SMALL_SET_MAX, trie_order_212
from kafkatool.release import Release

#: The release whose ReassignPartitionsCommand replaced these words (KIP-455's rewrite).
NEW_TEXT_SINCE = Release(2, 6)

VERIFY_PERIODICALLY_21 = (
    "Warning: You must run Verify periodically, until the reassignment completes, to ensure the throttle "
    "is removed. You can also alter the throttle by rerunning the Execute command passing a new value."
)
STARTED_21 = "Successfully started reassignment of partitions."
STATUS_HEAD_21 = "Status of partition reassignment: "
THROTTLE_REMOVED_21 = "Throttle was removed."


def uses_21_text(text: Release) -> bool:
    """Whether `text` is a release whose reassign tool printed Kafka 2.1's words (before 2.6)."""
    return text < NEW_TEXT_SINCE


def scala_map_order(inserted: Sequence[TopicPartition]) -> list[TopicPartition]:
    """A Scala 2.11/2.12 immutable Map's keys, given the order they were added in."""
    unique = list(dict.fromkeys(inserted))
    if len(unique) <= SMALL_SET_MAX:
        return unique
    return trie_order_212(unique, lambda tp: topic_partition_hash(tp.topic, tp.partition))


def _entry(tp: TopicPartition, replicas: Iterable[int]) -> str:
    reps = list(replicas)
    dirs = ",".join(['"any"'] * len(reps))
    return (f'{{"topic":{json.dumps(tp.topic)},"partition":{tp.partition},"replicas":[{",".join(map(str, reps))}],'
            f'"log_dirs":[{dirs}]}}')


def _inserted(
    topics: Sequence[str], parts: Iterable[TopicPartition], znode_order: Sequence[TopicPartition] | None
) -> list[TopicPartition]:
    """`getReplicaAssignmentForTopics`' insertion order: the topics in the file's order (a `Set` of up
    to 4 keeps it; with more the Map is a trie anyway), each topic's partitions as its znode lists
    them (`znode_order`; ascending without it)."""
    known = set(parts)
    listed = [tp for tp in dict.fromkeys(znode_order or ()) if tp in known]
    listed += sorted(known.difference(listed))
    by_topic: dict[str, list[TopicPartition]] = {}
    for tp in listed:
        by_topic.setdefault(tp.topic, []).append(tp)
    return [tp for t in dict.fromkeys(topics) for tp in by_topic.get(t, [])]


def rollback_text_21(
    whole_topics: Assignment, file_topics: Sequence[str], znode_order: Sequence[TopicPartition] | None = None
) -> str:
    """`printCurrentAssignment`: every partition of the file's topics, in the Map's order."""
    inserted = _inserted(file_topics, whole_topics, znode_order)
    entries = ",".join(_entry(tp, whole_topics[tp]) for tp in scala_map_order(inserted))
    return ("Current partition replica assignment\n\n"
            f'{{"version":1,"partitions":[{entries}]}}\n\n'
            "Save this to use as the --reassignment-json-file option during rollback\n")


def verify_text_21(statuses: dict[TopicPartition, str], file_order: Sequence[TopicPartition]) -> str:
    """`verifyAssignment`'s partition lines; `statuses` maps each partition to `completed`, `failed`
    or `in progress`."""
    done = [tp for tp in file_order if statuses.get(tp) in ("completed", "failed")]
    running = [tp for tp in file_order if statuses.get(tp) == "in progress"]
    words = {"completed": "completed successfully", "failed": "failed", "in progress": "is still in progress"}
    lines = [STATUS_HEAD_21] + [f"Reassignment of partition {tp} {words[statuses[tp]]}"
                                for tp in scala_map_order(done + running)]
    return "\n".join(lines) + "\n"


# -- --generate ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class GenerateOrder21:
    """The orders of Kafka 2.1's `--generate`: the printed current assignment, the topics as drawn
    (each with its partitions in its group's order, the first giving the replication factor), and
    the printed proposal."""

    current: list[TopicPartition]
    topics: list[tuple[str, list[TopicPartition]]]
    proposed: list[TopicPartition]


def generate_order_21(
    topics: Sequence[str], current: Iterable[TopicPartition], znode_order: Sequence[TopicPartition] | None = None
) -> GenerateOrder21:
    """Kafka 2.1's `generateAssignment` orders for the file's `topics` and their partitions `current`
    (`znode_order`: as the topic znodes list them, which decides for up to 4 partitions in all)."""
    inserted = _inserted(topics, current, znode_order)
    cur = s211.topic_partition_map_order(inserted)
    trie = len(cur) > SMALL_SET_MAX  # groupBy's per-topic builders start from the source map's `empty`
    grouped: dict[str, list[TopicPartition]] = {}
    for tp in cur:
        grouped.setdefault(tp.topic, []).append(tp)
    topic_order = s211.string_map_order(s211.string_mutable_map_order(grouped))
    draws = [(t, s211.topic_partition_map_order(grouped[t], trie=trie)) for t in topic_order]
    puts: list[TopicPartition] = []
    for t, parts in draws:
        ids = s211.int_mutable_map_order(range(len(parts)))  # assignReplicasToBrokers' mutable.Map
        puts.extend(s211.topic_partition_map_order([TopicPartition(t, p) for p in ids]))
    return GenerateOrder21(cur, draws, s211.topic_partition_mutable_map_order(puts))


def _assignment_json(order: Iterable[TopicPartition], assignment: Assignment) -> str:
    listed = [tp for tp in order if tp in assignment]
    seen = set(listed)
    listed += sorted(tp for tp in assignment if tp not in seen)  # not Kafka's (another strategy's keys)
    return '{"version":1,"partitions":[' + ",".join(_entry(tp, assignment[tp]) for tp in listed) + "]}"


def generate_text_21(
    topics: Sequence[str],
    current: Assignment,
    proposed: Assignment,
    znode_order: Sequence[TopicPartition] | None = None,
) -> str:
    """What Kafka 2.1's `--generate` prints, in its collections' orders."""
    order = generate_order_21(topics, current, znode_order)
    return (f"Current partition replica assignment\n{_assignment_json(order.current, current)}\n\n"
            f"Proposed partition reassignment configuration\n{_assignment_json(order.proposed, proposed)}\n")
