"""Fake KRaft clusters for the KRaft-era tools (quorum, transactions, records, features, cluster).

`FakeKraftKafka` is a `FakeKafka` (tests/support/fake_admin.py: real sockets, one release's ApiVersions
table, answers at the negotiated version with kwire's own encoder) plus:

- controller listeners (`controllers=[1, 2, 3]`, `controller_bootstrap`): they advertise the
  release's table cut to the requests Kafka's specs route to controllers (`"listeners"` naming
  "controller" in 4.0's message specs), so Metadata and the transaction requests are absent there;
- DescribeQuorum (55) answering from `quorum` (voters, observers, controller endpoints);
- ApiVersions v3+ with supported and finalized features (`features`, `features_epoch`);
- transactions: FindCoordinator (10) for transactional ids, ListTransactions (66),
  DescribeTransactions (65) from `transactions`; DescribeProducers (61, by any replica) and WriteTxnMarkers (27, by the
  leader only) from `producers` (per partition; NOT_LEADER_OR_FOLLOWER elsewhere);
- DeleteRecords (21): the leader moves the low watermark, OFFSET_OUT_OF_RANGE above the high watermark.
"""

from __future__ import annotations

import time
import uuid
import zlib
from dataclasses import dataclass, field
from typing import Any

from tests.support import kwire
from tests.support.fake_admin import FakeKafka

NOT_LEADER_OR_FOLLOWER = 6
OFFSET_OUT_OF_RANGE = 1
NOT_COORDINATOR = 16
UNKNOWN_TOPIC_OR_PARTITION = 3
INVALID_PRODUCER_EPOCH = 47
TRANSACTIONAL_ID_NOT_FOUND = 105

#: api keys whose 4.0 request spec lists "controller" among its listeners
CONTROLLER_KEYS = frozenset(
    {
        1,
        17,
        18,
        19,
        20,
        29,
        30,
        31,
        32,
        33,
        36,
        37,
        38,
        39,
        40,
        41,
        43,
        44,
        45,
        46,
        49,
        50,
        51,
        52,
        53,
        54,
        55,
        56,
        57,
        58,
        59,
        60,
        62,
        63,
        64,
        67,
        70,
        73,
        80,
        81,
        82,
    }
)


@dataclass
class FakeReplica:
    replica_id: int
    directory_id: uuid.UUID | None
    log_end_offset: int
    last_fetch_timestamp: int = -1
    last_caught_up_timestamp: int = -1


@dataclass
class FakeQuorum:
    leader_id: int
    leader_epoch: int
    high_watermark: int
    voters: list[FakeReplica]
    observers: list[FakeReplica]
    endpoints: dict[int, list[tuple[str, str, int]]] = field(default_factory=dict)


@dataclass
class FakeTxn:
    coordinator: int
    producer_id: int
    producer_epoch: int
    state: str
    timeout_ms: int = 60000
    start_ms: int = -1
    partitions: list[tuple[str, int]] = field(default_factory=list)


@dataclass
class FakeProducer:
    producer_id: int
    producer_epoch: int
    last_sequence: int = -1
    last_timestamp: int = -1
    coordinator_epoch: int = -1
    current_txn_start_offset: int = -1


def stable_id(text: str) -> uuid.UUID:
    """A fixed directory id for a node (tests name them by text)."""
    return uuid.UUID(int=zlib.crc32(text.encode()) * (2**96) + 1)


class FakeKraftKafka(FakeKafka):
    """Brokers (`brokers`) and controller listeners (`controllers`) of one KRaft cluster."""

    def __init__(
        self,
        brokers: dict[int, str | None],
        controllers: list[int] | None = None,
        cluster_id: str = "fake-cluster",
        **kwargs: Any,
    ) -> None:
        self.controller_ids = list(controllers or [])
        super().__init__({**brokers, **{c: None for c in self.controller_ids}}, **kwargs)
        self.alive = set(brokers)
        self.controller_id = self.controller_ids[0] if self.controller_ids else min(brokers)
        self.cluster_id = cluster_id
        self.quorum: FakeQuorum | None = None
        self.features: dict[str, tuple[int, int, int]] = {}  # name -> (supported min, max, finalized level)
        self.features_epoch = -1
        self.transactions: dict[str, FakeTxn] = {}
        self.producers: dict[tuple[str, int], list[FakeProducer]] = {}
        self.low_watermark: dict[tuple[str, int], int] = {}
        self.high_watermark: dict[tuple[str, int], int] = {}
        self.markers: list[
            tuple[int, str, int, int, int, bool]
        ] = []  # (leader, topic, partition, pid, epoch, commit)
        self.fenced: set[int] = set()  # registered brokers the controller fenced (not in `alive`)

    # -- nodes ---------------------------------------------------------------------------------------

    def table_for(self, node: int) -> dict[int, tuple[int, int]]:
        if node in self.controller_ids:
            return {k: v for k, v in self.api_versions.items() if k in CONTROLLER_KEYS}
        return self.api_versions

    @property
    def bootstrap(self) -> str:
        return ",".join(f"127.0.0.1:{self.port[b]}" for b in sorted(self.alive))

    @property
    def controller_bootstrap(self) -> str:
        return ",".join(f"127.0.0.1:{self.port[c]}" for c in self.controller_ids)

    def _brokers(self, cls: Any, id_field: str) -> list[Any]:
        return [
            cls(**{id_field: b}, host="127.0.0.1", port=self.port[b], rack=self.rack[b])
            for b in sorted(self.alive)
            if b not in self.controller_ids
        ]

    # -- ApiVersions with features (v3+) ----------------------------------------------------------------

    def _on_18(self, broker: int, req: Any) -> Any:
        body = kwire.api_versions_body(self.table_for(broker))
        body["supported_features"] = [
            {"name": n, "min_version": lo, "max_version": hi}
            for n, (lo, hi, _) in sorted(self.features.items())
        ]
        body["finalized_features_epoch"] = self.features_epoch
        body["finalized_features"] = [
            {"name": n, "min_version_level": lvl, "max_version_level": lvl}
            for n, (_, _, lvl) in sorted(self.features.items())
            if lvl > 0
        ]
        return body

    def _on_60(self, broker: int, req: Any) -> Any:
        """DescribeCluster: brokers (endpoint type 1; fenced ones only with include_fenced_brokers, v2) or,
        asked on a controller listener for type 2, the controllers (a broker refuses type 2)."""
        body = super()._on_60(broker, req)
        body["cluster_id"] = self.cluster_id
        if getattr(req, "endpoint_type", 1) == 2:
            if broker not in self.controller_ids:
                return {
                    **body,
                    "error_code": 35,
                    "error_message": "The broker does not serve controller endpoints",
                    "brokers": [],
                }
            body["endpoint_type"] = 2
            body["brokers"] = [
                {"broker_id": c, "host": "127.0.0.1", "port": self.port[c], "rack": None}
                for c in self.controller_ids
            ]
            return body
        wanted = [
            b
            for b in sorted(self.rack)
            if b not in self.controller_ids
            and (b in self.alive or (getattr(req, "include_fenced_brokers", False) and b in self.fenced))
        ]
        body["brokers"] = [
            {
                "broker_id": b,
                "host": "127.0.0.1",
                "port": self.port[b],
                "rack": self.rack[b],
                "is_fenced": b in self.fenced,
            }
            for b in wanted
        ]
        return body

    def _on_3(self, broker: int, req: Any) -> Any:
        body = super()._on_3(broker, req)
        body["cluster_id"] = self.cluster_id
        return body

    # -- DescribeQuorum ------------------------------------------------------------------------------

    def _on_55(self, broker: int, req: Any) -> Any:
        q = self.quorum
        assert q is not None, "the test set no quorum"

        def replica(r: FakeReplica) -> dict[str, Any]:
            return {
                "replica_id": r.replica_id,
                "replica_directory_id": r.directory_id or uuid.UUID(int=0),
                "log_end_offset": r.log_end_offset,
                "last_fetch_timestamp": r.last_fetch_timestamp,
                "last_caught_up_timestamp": r.last_caught_up_timestamp,
            }

        parts = []
        for t in req.topics:
            for p in t.partitions:
                parts.append(
                    (
                        t.topic_name,
                        {
                            "partition_index": p.partition_index,
                            "error_code": 0,
                            "error_message": None,
                            "leader_id": q.leader_id,
                            "leader_epoch": q.leader_epoch,
                            "high_watermark": q.high_watermark,
                            "current_voters": [replica(r) for r in q.voters],
                            "observers": [replica(r) for r in q.observers],
                        },
                    )
                )
        return {
            "error_code": 0,
            "error_message": None,
            "topics": [{"topic_name": name, "partitions": [p]} for name, p in parts],
            "nodes": [
                {"node_id": n, "listeners": [{"name": a, "host": h, "port": port} for a, h, port in eps]}
                for n, eps in sorted(q.endpoints.items())
            ],
        }

    # -- transactions --------------------------------------------------------------------------------

    def _on_10(self, broker: int, req: Any) -> Any:
        keys = list(req.coordinator_keys or []) if req.api_version >= 4 else [req.key]
        out = []
        for key in keys:
            txn = self.transactions.get(key)
            node = txn.coordinator if txn is not None else min(self.alive)
            out.append(
                {
                    "key": key,
                    "node_id": node,
                    "host": "127.0.0.1",
                    "port": self.port[node],
                    "error_code": 0,
                    "error_message": None,
                }
            )
        if req.api_version >= 4:
            return {"throttle_time_ms": 0, "coordinators": out}
        return {
            "throttle_time_ms": 0,
            "error_code": 0,
            "error_message": None,
            **{k: v for k, v in out[0].items() if k not in ("key", "error_code", "error_message")},
        }

    def _on_66(self, broker: int, req: Any) -> Any:
        now = int(time.time() * 1000)
        states = []
        for tid, t in self.transactions.items():
            if t.coordinator != broker:
                continue
            if req.state_filters and t.state not in req.state_filters:
                continue
            if req.producer_id_filters and t.producer_id not in req.producer_id_filters:
                continue
            if getattr(req, "duration_filter", -1) >= 0 and (
                t.start_ms < 0 or now - t.start_ms < req.duration_filter
            ):
                continue
            states.append(
                {"transactional_id": tid, "producer_id": t.producer_id, "transaction_state": t.state}
            )
        return {
            "throttle_time_ms": 0,
            "error_code": 0,
            "unknown_state_filters": [],
            "transaction_states": states,
        }

    def _on_65(self, broker: int, req: Any) -> Any:
        out = []
        for tid in req.transactional_ids:
            t = self.transactions.get(tid)
            if t is None or t.coordinator != broker:
                code = TRANSACTIONAL_ID_NOT_FOUND if t is None else NOT_COORDINATOR
                out.append(
                    {
                        "error_code": code,
                        "transactional_id": tid,
                        "transaction_state": "",
                        "transaction_timeout_ms": 0,
                        "transaction_start_time_ms": -1,
                        "producer_id": -1,
                        "producer_epoch": -1,
                        "topics": [],
                    }
                )
                continue
            by_topic: dict[str, list[int]] = {}
            for topic, p in t.partitions:
                by_topic.setdefault(topic, []).append(p)
            out.append(
                {
                    "error_code": 0,
                    "transactional_id": tid,
                    "transaction_state": t.state,
                    "transaction_timeout_ms": t.timeout_ms,
                    "transaction_start_time_ms": t.start_ms,
                    "producer_id": t.producer_id,
                    "producer_epoch": t.producer_epoch,
                    "topics": [{"topic": k, "partitions": v} for k, v in by_topic.items()],
                }
            )
        return {"throttle_time_ms": 0, "transaction_states": out}

    def _leader_error(self, broker: int, topic: str, p: int) -> int:
        fp = self.topics.get(topic, {}).get(p)
        if fp is None:
            return UNKNOWN_TOPIC_OR_PARTITION
        return 0 if fp.leader == broker else NOT_LEADER_OR_FOLLOWER

    def _replica_error(self, broker: int, topic: str, p: int) -> int:
        """DescribeProducers is answered by any replica (ReplicaManager.activeProducerState)."""
        fp = self.topics.get(topic, {}).get(p)
        if fp is None:
            return UNKNOWN_TOPIC_OR_PARTITION
        return 0 if broker in fp.replicas else NOT_LEADER_OR_FOLLOWER

    def _on_61(self, broker: int, req: Any) -> Any:
        topics = []
        for t in req.topics:
            parts = []
            for p in t.partition_indexes:
                code = self._replica_error(broker, t.name, p)
                producers = [] if code else [vars(x).copy() for x in self.producers.get((t.name, p), [])]
                parts.append(
                    {
                        "partition_index": p,
                        "error_code": code,
                        "error_message": None,
                        "active_producers": producers,
                    }
                )
            topics.append({"name": t.name, "partitions": parts})
        return {"throttle_time_ms": 0, "topics": topics}

    def _on_27(self, broker: int, req: Any) -> Any:
        markers = []
        for m in req.markers:
            topics = []
            for t in m.topics:
                parts = []
                for p in t.partition_indexes:
                    code = self._leader_error(broker, t.name, p)
                    if not code:
                        open_ = [
                            x for x in self.producers.get((t.name, p), []) if x.producer_id == m.producer_id
                        ]
                        if open_ and m.producer_epoch < open_[0].producer_epoch:
                            code = INVALID_PRODUCER_EPOCH
                        else:
                            for x in open_:
                                x.current_txn_start_offset = -1
                            self.markers.append(
                                (
                                    broker,
                                    t.name,
                                    p,
                                    m.producer_id,
                                    m.producer_epoch,
                                    bool(m.transaction_result),
                                )
                            )
                    parts.append({"partition_index": p, "error_code": code})
                topics.append({"name": t.name, "partitions": parts})
            markers.append({"producer_id": m.producer_id, "topics": topics})
        return {"markers": markers}

    # -- DeleteRecords -------------------------------------------------------------------------------

    def _on_21(self, broker: int, req: Any) -> Any:
        topics = []
        for t in req.topics:
            parts = []
            for p in t.partitions:
                key = (t.name, p.partition_index)
                code = self._leader_error(broker, t.name, p.partition_index)
                low = -1
                if not code:
                    hw = self.high_watermark.get(key, 0)
                    offset = hw if p.offset == -1 else p.offset
                    if offset < 0 or offset > hw:
                        code = OFFSET_OUT_OF_RANGE
                    else:
                        low = max(self.low_watermark.get(key, 0), offset)
                        self.low_watermark[key] = low
                parts.append({"partition_index": p.partition_index, "low_watermark": low, "error_code": code})
            topics.append({"name": t.name, "partitions": parts})
        return {"throttle_time_ms": 0, "topics": topics}
