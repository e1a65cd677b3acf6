"""Transactions as `kafka-transactions.sh` sees them: list, describe, describe-producers, find-hanging, abort.

Follows Kafka's `TransactionsCommand` (3.0+; the text has not changed since) and the admin client's
handlers it calls: ListTransactions (66) to every broker, DescribeTransactions (65) to the transactional
id's coordinator (FindCoordinator, key type 1), DescribeProducers (61) to the partition leader (or one
replica), and the abort as `Admin.abortTransaction` does it: DescribeProducers on the leader to find the
producer whose open transaction starts at the given offset, then WriteTxnMarkers (27, an ABORT marker)
to the leader.  Errors become `TransactionsToolError` holding the line Kafka's tool prints
("<what>: <cause>. Enable debug logging for additional detail.", exit 1).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from kafkatool.cluster.connect import ClusterError
from kafkatool.cluster.kraft_channel import Channel, need
from kafkatool.jvm.hashing import to_int32, topic_partition_hash
from kafkatool.jvm.java_collections import hash_order
from kafkatool.release import Release

LIST_TRANSACTIONS, DESCRIBE_TRANSACTIONS, DESCRIBE_PRODUCERS, WRITE_TXN_MARKERS = 66, 65, 61, 27
FIND_COORDINATOR, METADATA = 10, 3
TRANSACTION_KEY_TYPE = 1
TRANSACTIONAL_ID_NOT_FOUND = 105
MAX_BATCH_SIZE = 500  # FindHangingTransactionsCommand's batches
#: find-hanging's columns (FindHangingTransactionsCommand's header)
HANGING_HEADERS = (
    "Topic",
    "Partition",
    "ProducerId",
    "ProducerEpoch",
    "CoordinatorEpoch",
    "StartOffset",
    "LastTimestamp",
    "Duration(min)",
)


class TransactionsToolError(ClusterError):
    """A failure Kafka's tool reports with `printErrorAndExit` (stderr, exit 1): `str()` is its line."""


def tool_error(what: str, cause: str) -> TransactionsToolError:
    return TransactionsToolError(f"{what}: {cause}. Enable debug logging for additional detail.")


def _cause(code: int, message: str | None = None) -> str:
    """`Throwable.getMessage()` of the exception the admin client raises for an error code."""
    from kafkatool.cluster.kafka_errors import java_message

    return java_message(code, message)


@dataclass(frozen=True)
class Listing:
    transactional_id: str
    coordinator: int
    producer_id: int
    state: str


@dataclass(frozen=True)
class Description:
    coordinator: int
    transactional_id: str
    producer_id: int
    producer_epoch: int
    state: str
    timeout_ms: int
    start_time_ms: int | None
    partitions: tuple[tuple[str, int], ...]  # in the order Kafka's HashSet iterates them


@dataclass(frozen=True)
class Producer:
    producer_id: int
    producer_epoch: int
    coordinator_epoch: int | None
    last_sequence: int
    last_timestamp: int
    txn_start_offset: int | None


# -- routing ------------------------------------------------------------------------------------------


def metadata(
    channel: Channel, topics: list[str] | None
) -> tuple[list[int], dict[str, dict[int, tuple[int, list[int]]]]]:
    """(broker ids, topic -> partition -> (leader, replicas)) from a Metadata request (None: all topics)."""
    from kafka.protocol.metadata import MetadataRequest

    need(channel, "describe topics", METADATA)
    T = MetadataRequest.MetadataRequestTopic
    req = MetadataRequest(
        topics=None if topics is None else [T(name=t) for t in topics], allow_auto_topic_creation=False
    )
    resp = channel.send(req)
    brokers = [int(b.node_id) for b in resp.brokers]
    out: dict[str, dict[int, tuple[int, list[int]]]] = {}
    for t in resp.topics:
        if t.error_code:
            continue
        out[t.name] = {
            int(p.partition_index): (int(p.leader_id), list(p.replica_nodes)) for p in t.partitions
        }
    return brokers, out


def leaders(channel: Channel, tps: list[tuple[str, int]], what: str) -> dict[tuple[str, int], int]:
    """The leader of each partition; a missing topic or partition, or none leading, is Kafka's error."""
    _, meta = metadata(channel, sorted({t for t, _ in tps}))
    out = {}
    for t, p in tps:
        leader = meta.get(t, {}).get(p, (-1, []))[0]
        if t not in meta or p not in meta[t]:
            raise tool_error(what, "This server does not host this topic-partition")
        if leader < 0:
            raise tool_error(
                what,
                "There is no leader for this topic-partition as we are in the middle of a leadership election",
            )
        out[(t, p)] = leader
    return out


def coordinator(channel: Channel, transactional_id: str) -> int:
    from kafka.protocol.metadata import FindCoordinatorRequest

    hi = need(channel, "find the transaction coordinator", FIND_COORDINATOR, 1)
    if hi >= 4:
        resp = channel.send(
            FindCoordinatorRequest(key_type=TRANSACTION_KEY_TYPE, coordinator_keys=[transactional_id])
        )
        c = resp.coordinators[0]
        code, node, message = c.error_code, c.node_id, c.error_message
    else:
        resp = channel.send(FindCoordinatorRequest(key=transactional_id, key_type=TRANSACTION_KEY_TYPE))
        code, node, message = resp.error_code, resp.node_id, getattr(resp, "error_message", None)
    if code:
        raise ClusterError(f"find the coordinator of {transactional_id}: {_cause(code, message)}")
    return int(node)


# -- list / describe --------------------------------------------------------------------------------


def list_transactions(
    channel: Channel, duration_filter: int | None = None, producer_ids: list[int] | None = None
) -> list[Listing]:
    """ListTransactions on every broker, brokers in id order (the tool's `allByBrokerId` HashMap), each
    broker's transactions in its order."""
    from kafka.protocol.admin.transactions import ListTransactionsRequest

    if duration_filter is not None:
        need(channel, "list transactions --duration-filter", LIST_TRANSACTIONS, 1, Release(3, 8))
    need(channel, "list transactions", LIST_TRANSACTIONS)
    brokers, _ = metadata(channel, [])
    out = []
    for b in sorted(brokers):
        kwargs: dict[str, Any] = {"state_filters": [], "producer_id_filters": list(producer_ids or [])}
        if duration_filter is not None:
            kwargs["duration_filter"] = duration_filter
        resp = channel.send(ListTransactionsRequest(**kwargs), node=b)
        if resp.error_code:
            raise tool_error("Failed to list transactions", _cause(resp.error_code))
        out += [
            Listing(t.transactional_id, b, int(t.producer_id), t.transaction_state)
            for t in resp.transaction_states
        ]
    return out


def describe_transaction(channel: Channel, transactional_id: str) -> Description:
    from kafka.protocol.admin.transactions import DescribeTransactionsRequest

    what = f"Failed to describe transaction state of transactional-id `{transactional_id}`"
    need(channel, "describe transactions", DESCRIBE_TRANSACTIONS)
    node = coordinator(channel, transactional_id)
    resp = channel.send(DescribeTransactionsRequest(transactional_ids=[transactional_id]), node=node)
    for s in resp.transaction_states:
        if s.transactional_id != transactional_id:
            continue
        if s.error_code == TRANSACTIONAL_ID_NOT_FOUND:
            raise tool_error(
                what,
                f"DescribeTransactions request for transactionalId `{transactional_id}` failed "
                "because the ID could not be found",
            )
        if s.error_code:
            raise tool_error(
                what,
                f"DescribeTransactions request for transactionalId `{transactional_id}` failed "
                f"due to unexpected error ({_cause(s.error_code)})",
            )
        tps = [(t.topic, int(p)) for t in s.topics for p in t.partitions]
        start = int(s.transaction_start_time_ms)
        return Description(
            node,
            transactional_id,
            int(s.producer_id),
            int(s.producer_epoch),
            s.transaction_state,
            int(s.transaction_timeout_ms),
            None if start < 0 else start,
            tuple(hash_order(tps, lambda tp: topic_partition_hash(*tp))),
        )
    raise tool_error(what, "the coordinator did not describe it")


# -- producers ----------------------------------------------------------------------------------------


def describe_producers(
    channel: Channel, tps: list[tuple[str, int]], broker: int | None, what: str
) -> dict[tuple[str, int], list[Producer]]:
    """DescribeProducers for `tps` on their leaders (or on `broker`), in batches of 500."""
    from kafka.protocol.admin.transactions import DescribeProducersRequest

    need(channel, "describe producers", DESCRIBE_PRODUCERS)
    nodes = {tp: broker for tp in tps} if broker is not None else leaders(channel, tps, what)
    by_node: dict[int, list[tuple[str, int]]] = {}
    for tp in tps:
        by_node.setdefault(int(nodes[tp]), []).append(tp)  # type: ignore[arg-type]
    out: dict[tuple[str, int], list[Producer]] = {}
    T = DescribeProducersRequest.TopicRequest
    for node, parts in by_node.items():
        for i in range(0, len(parts), MAX_BATCH_SIZE):
            batch = parts[i : i + MAX_BATCH_SIZE]
            by_topic: dict[str, list[int]] = {}
            for t, p in batch:
                by_topic.setdefault(t, []).append(p)
            req = DescribeProducersRequest(
                topics=[T(name=t, partition_indexes=ps) for t, ps in by_topic.items()]
            )
            resp = channel.send(req, node=node)
            for t in resp.topics:
                for p in t.partitions:
                    if p.error_code:
                        raise tool_error(what, _cause(p.error_code, p.error_message))
                    out[(t.name, int(p.partition_index))] = [
                        Producer(
                            int(a.producer_id),
                            int(a.producer_epoch),
                            None if a.coordinator_epoch < 0 else int(a.coordinator_epoch),
                            int(a.last_sequence),
                            int(a.last_timestamp),
                            None if a.current_txn_start_offset < 0 else int(a.current_txn_start_offset),
                        )
                        for a in p.active_producers
                    ]
    return out


# -- abort --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class AbortSpec:
    """`AbortTransactionSpec`: what a WriteTxnMarkers ABORT names."""

    topic: str
    partition: int
    producer_id: int
    producer_epoch: int
    coordinator_epoch: int

    def __str__(self) -> str:  # AbortTransactionSpec.toString()
        return (
            f"AbortTransactionSpec(topicPartition={self.topic}-{self.partition}, producerId={self.producer_id}, "
            f"producerEpoch={self.producer_epoch}, coordinatorEpoch={self.coordinator_epoch})"
        )


def abort_spec_for_offset(channel: Channel, topic: str, partition: int, start_offset: int) -> AbortSpec:
    """The producer whose open transaction on the partition starts at `start_offset` (Kafka's buildAbortSpec)."""
    found = describe_producers(
        channel,
        [(topic, partition)],
        None,
        f"Failed to validate producer state for partition {topic}-{partition}",
    )
    for pr in found.get((topic, partition), []):
        if pr.txn_start_offset == start_offset:
            return AbortSpec(topic, partition, pr.producer_id, pr.producer_epoch, pr.coordinator_epoch or 0)
    raise TransactionsToolError(
        f"Could not find any open transactions starting at offset {start_offset} on "
        f"partition {topic}-{partition}"
    )


def abort(channel: Channel, spec: AbortSpec) -> None:
    """WriteTxnMarkers with an ABORT marker to the partition's leader."""
    from kafka.protocol.producer.transaction import WriteTxnMarkersRequest

    what = f"Failed to abort transaction {spec}"
    need(channel, "abort a transaction", WRITE_TXN_MARKERS)
    node = leaders(channel, [(spec.topic, spec.partition)], what)[(spec.topic, spec.partition)]
    M = WriteTxnMarkersRequest.WritableTxnMarker
    marker = M(
        producer_id=spec.producer_id,
        producer_epoch=spec.producer_epoch,
        transaction_result=False,
        topics=[M.WritableTxnMarkerTopic(name=spec.topic, partition_indexes=[spec.partition])],
        coordinator_epoch=spec.coordinator_epoch,
    )
    resp = channel.send(WriteTxnMarkersRequest(markers=[marker]), node=node)
    for m in resp.markers:
        for t in m.topics:
            for p in t.partitions:
                if p.error_code:
                    raise tool_error(what, _cause(p.error_code))


# -- find-hanging ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Hanging:
    topic: str
    partition: int
    producer: Producer


def _long_hash(v: int) -> int:
    """`Long.hashCode()`."""
    v &= 0xFFFFFFFFFFFFFFFF
    return to_int32(v ^ (v >> 32))


def find_hanging(
    channel: Channel,
    broker: int | None,
    topic: str | None,
    partition: int | None,
    max_timeout_ms: int,
    now_ms: int | None = None,
) -> list[Hanging]:
    """Open transactions older than the timeout that their coordinator no longer lists for the partition
    (FindHangingTransactionsCommand: unknown transactional id, no description, or a partition missing from it)."""
    now = int(time.time() * 1000) if now_ms is None else now_ms
    if topic is not None and partition is not None:
        tps = [(topic, partition)]
    else:
        _, meta = metadata(channel, [topic] if topic is not None else None)
        tps = [
            (t, p)
            for t, parts in meta.items()
            for p, (_, replicas) in parts.items()
            if broker is None or broker in replicas
        ]
    what = f"Failed to describe producers for {len(tps)} partitions on broker " + (
        f"Optional[{broker}]" if broker is not None else "Optional.empty"
    )
    states = describe_producers(channel, tps, broker, what) if tps else {}
    candidates = [
        (tp, pr)
        for tp in hash_order(list(states), lambda tp: topic_partition_hash(*tp))
        for pr in states[tp]
        if pr.txn_start_offset is not None and now - pr.last_timestamp > max_timeout_ms
    ]
    if not candidates:
        return []
    by_producer: dict[int, list[tuple[tuple[str, int], Producer]]] = {}
    for tp, pr in candidates:
        by_producer.setdefault(pr.producer_id, []).append((tp, pr))
    ids = {
        x.producer_id: x.transactional_id
        for x in list_transactions(channel, producer_ids=sorted(by_producer))
        if x.producer_id in by_producer
    }
    descriptions: dict[str, Description | None] = {}
    for tid in set(ids.values()):
        try:
            descriptions[tid] = describe_transaction(channel, tid)
        except TransactionsToolError as exc:
            if "could not be found" not in str(exc):
                raise
            descriptions[tid] = None
    out = []
    for pid in hash_order(list(by_producer), _long_hash):
        known = ids.get(pid)
        desc = descriptions.get(known) if known is not None else None
        for tp, pr in by_producer[pid]:
            if desc is None or tp not in desc.partitions:
                out.append(Hanging(tp[0], tp[1], pr))
    return out


# -- Kafka's text -----------------------------------------------------------------------------------------


def list_text(listings: list[Listing]) -> str:
    from kafkatool.cluster.quorum import pretty_table

    return pretty_table(
        ["TransactionalId", "Coordinator", "ProducerId", "TransactionState"],
        [[x.transactional_id, str(x.coordinator), str(x.producer_id), x.state] for x in listings],
    )


def describe_text(d: Description, now_ms: int | None = None) -> str:
    from kafkatool.cluster.quorum import pretty_table

    now = int(time.time() * 1000) if now_ms is None else now_ms
    start = "None" if d.start_time_ms is None else str(d.start_time_ms)
    duration = "None" if d.start_time_ms is None else str(now - d.start_time_ms)
    return pretty_table(
        [
            "CoordinatorId",
            "TransactionalId",
            "ProducerId",
            "ProducerEpoch",
            "TransactionState",
            "TransactionTimeoutMs",
            "CurrentTransactionStartTimeMs",
            "TransactionDurationMs",
            "TopicPartitions",
        ],
        [
            [
                str(d.coordinator),
                d.transactional_id,
                str(d.producer_id),
                str(d.producer_epoch),
                d.state,
                str(d.timeout_ms),
                start,
                duration,
                ",".join(f"{t}-{p}" for t, p in d.partitions),
            ]
        ],
    )


def producers_text(producers: list[Producer]) -> str:
    from kafkatool.cluster.quorum import pretty_table

    return pretty_table(
        [
            "ProducerId",
            "ProducerEpoch",
            "LatestCoordinatorEpoch",
            "LastSequence",
            "LastTimestamp",
            "CurrentTransactionStartOffset",
        ],
        [
            [
                str(p.producer_id),
                str(p.producer_epoch),
                str(-1 if p.coordinator_epoch is None else p.coordinator_epoch),
                str(p.last_sequence),
                str(p.last_timestamp),
                "None" if p.txn_start_offset is None else str(p.txn_start_offset),
            ]
            for p in producers
        ],
    )


def hanging_text(found: list[Hanging], now_ms: int | None = None) -> str:
    from kafkatool.cluster.quorum import pretty_table

    now = int(time.time() * 1000) if now_ms is None else now_ms
    return pretty_table(
        list(HANGING_HEADERS),
        [
            [
                h.topic,
                str(h.partition),
                str(h.producer.producer_id),
                str(h.producer.producer_epoch),
                str(-1 if h.producer.coordinator_epoch is None else h.producer.coordinator_epoch),
                str(-1 if h.producer.txn_start_offset is None else h.producer.txn_start_offset),
                str(h.producer.last_timestamp),
                str((now - h.producer.last_timestamp) // 60000),
            ]
            for h in found
        ],
    )
