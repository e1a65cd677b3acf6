"""Live replica verification: Kafka's `kafka-replica-verification.sh` (ReplicaVerificationTool, 3.3.1).

Each round sends one Fetch per broker for the partitions it holds a replica of, as a debugging
replica (replica id -2: `ReplicaId` up to Fetch v14, `ReplicaState.ReplicaId` from v15), at the
same offset for every replica of a partition; the broker answers from its own log up to its log
end, leader or follower.  Then, per partition, the replicas' batches are walked side by side (one
batch from each in turn, up to each replica's high watermark) as the tool's `verifyCheckSum` does:

* a batch whose last offset differs from the first replica's stops everything (Kafka exits 1 with
  `partition T-P: replica A's offset X doesn't match replica B's offset Y`);
* a batch whose checksum (v2: the batch CRC; v0/v1: the wrapper message's CRC) differs is reported
  (`partition T-P has unmatched checksum at offset O; replica A's checksum C; replica B's checksum D`)
  and the walk goes on;
* while every replica had a batch below its high watermark, the partition's fetch offset moves to
  the batch's next offset; the lag is then the highest high watermark minus that offset.

After each round the largest lag is what `max lag is N for partition T-P at offset O among K
partitions` reports.  Orders follow the tool's: partitions and replicas in the iteration order of
its `Pool`s (Java `ConcurrentHashMap`s: `kafkatool.jvm.java_collections.concurrent_hash_order`).  Times are the tool's
`yyyy-MM-dd HH:mm:ss,SSS` in local time.
"""

from __future__ import annotations

import datetime as _dt
import re
from dataclasses import dataclass, field
from typing import Any

from kafkatool.cluster.connect import ClusterError, ClusterInputError
from kafkatool.jvm import java_collections as jc
from kafkatool.jvm.hashing import int_hash, topic_partition_hash
from kafkatool.log.errors import CorruptRecordError
from kafkatool.log.records import BatchScan

DEBUGGING_REPLICA_ID = -2
LATEST, EARLIEST = -1, -2
DEFAULT_FETCH_SIZE = 1024 * 1024  # ConsumerConfig.DEFAULT_MAX_PARTITION_FETCH_BYTES
DEFAULT_MAX_WAIT_MS = 1000
DEFAULT_REPORT_INTERVAL_MS = 30_000


@dataclass
class Divergence:
    """The first difference seen in a partition: `kind` "offset" (Kafka stops) or "checksum"."""

    kind: str
    offset: int  # the first replica's batch last offset (checksum) or its offset (offset)
    replica_a: int
    replica_b: int
    value_a: int
    value_b: int


@dataclass
class PartitionState:
    topic: str
    partition: int
    replicas: list[int]
    offset: int  # the fetch offset: every replica agrees below it (checksums aside)
    high_watermark: int = -1
    lag: int = 0
    divergence: Divergence | None = None
    checksum_mismatches: int = 0
    errors: dict[int, str] = field(default_factory=dict)

    def row(self) -> dict:
        d = self.divergence
        return {
            "topic": self.topic, "partition": self.partition, "replicas": self.replicas,
            "offset": self.offset, "high_watermark": self.high_watermark, "lag": self.lag,
            "diverged": d is not None, "checksum_mismatches": self.checksum_mismatches,
            "first_divergence": None if d is None else {
                "kind": d.kind, "offset": d.offset, "replica_a": d.replica_a, "replica_b": d.replica_b,
                "value_a": d.value_a, "value_b": d.value_b},
            "errors": {str(k): v for k, v in sorted(self.errors.items())},
        }


@dataclass(frozen=True)
class _Batch:
    last_offset: int
    checksum: int


def kafka_time(ms: int) -> str:
    """`new SimpleDateFormat("yyyy-MM-dd HH:mm:ss,SSS").format(new Date(ms))`, in local time."""
    t = _dt.datetime.fromtimestamp(ms / 1000).astimezone()
    return t.strftime("%Y-%m-%d %H:%M:%S,") + f"{ms % 1000:03d}"


def _batches(records: bytes | None) -> list[_Batch]:
    """`MemoryRecords.batches`: complete batches only (a partial one at the end of a fetch is dropped)."""
    if not records:
        return []
    out = []
    try:
        for b in BatchScan(bytes(records)):
            out.append(_Batch(b.last_offset, b.crc & 0xFFFFFFFF))
    except CorruptRecordError:
        pass
    return out


class ReplicaVerifier:
    """Rounds of debugging-replica Fetches over a `BrokerOffsets` connection (cluster/groups/broker_offsets.py)."""

    def __init__(self, brokers: Any, topic_regex: str, initial_time: int = LATEST,
                 fetch_size: int = DEFAULT_FETCH_SIZE, max_wait_ms: int = DEFAULT_MAX_WAIT_MS) -> None:
        # IncludeList: commas are alternatives, blanks and surrounding quotes dropped; matched whole
        topic_regex = re.sub(r"""^["']+|["']+$""", "", topic_regex.strip().replace(",", "|").replace(" ", ""))
        try:
            self.pattern = re.compile(topic_regex)
        except re.error:
            raise ClusterInputError(f"{topic_regex} is an invalid regex.") from None
        self.brokers = brokers
        self.initial_time = initial_time
        self.fetch_size = fetch_size
        self.max_wait_ms = max_wait_ms
        self.partitions: dict[tuple[str, int], PartitionState] = {}
        self.by_broker: dict[int, list[tuple[str, int]]] = {}
        self.topic_ids: dict[str, Any] = {}
        self.order: list[tuple[str, int]] = []
        self.stopped = False  # an offset mismatch: Kafka's tool exits there

    # -- setup -----------------------------------------------------------------------------------

    def start(self) -> None:
        """Topics matching the regex (internal ones too), their replicas, and the initial offsets."""
        meta = self.brokers.metadata(None, refresh=True)
        names = sorted(t for t in meta.topics if self.pattern.fullmatch(t))
        if not names:
            raise ClusterInputError(f"no topic matches {self.pattern.pattern!r}")
        replicas = self._replicas(names)
        self.topic_ids = {t: meta.topic_ids.get(t) for t in names}
        specs = {tp: self.initial_time for tp in replicas}
        listed = self.brokers.list_offsets(specs)
        if self.initial_time >= 0:  # no record at or after the time: nothing to verify before the log end
            none = [tp for tp, got in listed.items() if got.offset is None and not got.error]
            listed.update(self.brokers.list_offsets(dict.fromkeys(none, LATEST)) if none else {})
        for tp, reps in replicas.items():
            got = listed.get(tp)
            if got is None or got.offset is None:
                why = getattr(got, "error", None) or "no offset"
                raise ClusterError(f"initial offset of {tp[0]}-{tp[1]}: {why}")
            self.partitions[tp] = PartitionState(tp[0], tp[1], reps, int(got.offset))
            for b in reps:
                self.by_broker.setdefault(b, []).append(tp)
        self.order = jc.concurrent_hash_order(list(replicas), lambda tp: topic_partition_hash(*tp))

    def _replicas(self, names: list[str]) -> dict[tuple[str, int], list[int]]:
        """Replica ids per partition, from a Metadata request for the topics."""
        from kafka.protocol.metadata import MetadataRequest

        req = MetadataRequest(topics=[MetadataRequest.MetadataRequestTopic(name=t) for t in names],
                              allow_auto_topic_creation=False)
        (resp,) = self.brokers.send_all([(None, req)])
        if isinstance(resp, Exception):
            raise ClusterError(f"cannot read topic metadata: {resp}")
        out: dict[tuple[str, int], list[int]] = {}
        for t in resp.topics:
            if t.error_code == 0 and t.name in names:
                for p in sorted(t.partitions, key=lambda p: p.partition_index):
                    out[(t.name, p.partition_index)] = list(p.replica_nodes)
        return out

    # -- a round -------------------------------------------------------------------------------

    def _request(self, tps: list[tuple[str, int]]) -> Any:
        from kafka.protocol.consumer import FetchRequest

        T = FetchRequest.FetchTopic
        P = T.FetchPartition
        by_topic: dict[str, list[Any]] = {}
        for topic, part in tps:
            by_topic.setdefault(topic, []).append(P(
                partition=part, current_leader_epoch=-1, fetch_offset=self.partitions[(topic, part)].offset,
                last_fetched_epoch=-1, log_start_offset=-1, partition_max_bytes=self.fetch_size))
        return FetchRequest(
            replica_id=DEBUGGING_REPLICA_ID,
            replica_state=FetchRequest.ReplicaState(replica_id=DEBUGGING_REPLICA_ID, replica_epoch=-1),
            max_wait_ms=self.max_wait_ms, min_bytes=1, max_bytes=2**31 - 1, isolation_level=0, session_id=0,
            session_epoch=-1, rack_id="",
            topics=[T(topic=t, topic_id=self.topic_ids.get(t), partitions=ps) for t, ps in by_topic.items()],
            forgotten_topics_data=[])

    def round(self) -> list[str]:
        """Fetch from every replica and verify; the lines Kafka's tool prints for what it found."""
        nodes = sorted(self.by_broker)
        answers = self.brokers.send_all([(n, self._request(self.by_broker[n])) for n in nodes])
        fetched: dict[tuple[str, int], dict[int, tuple[int, list[_Batch]]]] = {tp: {} for tp in self.partitions}
        ids = {v: k for k, v in self.topic_ids.items() if v is not None}
        for n, resp in zip(nodes, answers, strict=True):
            if isinstance(resp, Exception):
                for tp in self.by_broker[n]:
                    self.partitions[tp].errors[n] = str(resp) or type(resp).__name__
                    fetched[tp][n] = (-1, [])  # Kafka's tool: an empty answer for each partition
                continue
            for t in resp.responses:
                name = t.topic or ids.get(getattr(t, "topic_id", None))
                for p in t.partitions:
                    tp = (str(name), int(p.partition_index))
                    if tp not in fetched:
                        continue
                    if p.error_code:
                        from kafka.errors import for_code

                        self.partitions[tp].errors[n] = for_code(p.error_code).__name__
                    fetched[tp][n] = (int(p.high_watermark), [] if p.error_code else _batches(p.records))
        lines: list[str] = []
        for tp in self.order:
            if self.stopped:
                break
            self._verify(self.partitions[tp], fetched[tp], lines)
        return lines

    def _verify(self, st: PartitionState, answers: dict[int, tuple[int, list[_Batch]]], lines: list[str]) -> None:
        name = f"{st.topic}-{st.partition}"
        order = jc.concurrent_hash_order([r for r in st.replicas if r in answers], int_hash)
        if not order:
            return
        iters = {r: iter(answers[r][1]) for r in order}
        max_hw = max(answers[r][0] for r in order)
        while True:
            first: tuple[int, _Batch] | None = None
            in_all = True
            for r in order:
                batch = next(iters[r], None)
                if batch is None:
                    in_all = False
                    continue
                if batch.last_offset >= answers[r][0]:
                    in_all = False
                    continue
                if first is None:
                    first = (r, batch)
                    continue
                fr, fb = first
                if fb.last_offset != batch.last_offset:
                    lines.append(f"partition {name}: replica {fr}'s offset {fb.last_offset} doesn't match "
                                 f"replica {r}'s offset {batch.last_offset}")
                    st.divergence = st.divergence or Divergence("offset", fb.last_offset, fr, r, fb.last_offset,
                                                                batch.last_offset)
                    self.stopped = True
                    return
                if fb.checksum != batch.checksum:
                    lines.append(f"partition {name} has unmatched checksum at offset {batch.last_offset}; "
                                 f"replica {fr}'s checksum {fb.checksum}; replica {r}'s checksum {batch.checksum}")
                    st.checksum_mismatches += 1
                    st.divergence = st.divergence or Divergence("checksum", batch.last_offset, fr, r, fb.checksum,
                                                                batch.checksum)
            if not in_all or first is None:
                break
            st.offset = first[1].last_offset + 1
        st.high_watermark = max_hw
        st.lag = max_hw - st.offset

    def max_lag_line(self) -> str:
        """Kafka's report: the first partition (in the tool's order) with the largest lag."""
        best: PartitionState | None = None
        lag = -1
        for tp in self.order:
            st = self.partitions[tp]
            if st.high_watermark - st.offset > lag:
                best, lag = st, st.high_watermark - st.offset
        where = "null" if best is None else f"{best.topic}-{best.partition}"
        offset = -1 if best is None else best.offset
        return f"max lag is {lag} for partition {where} at offset {offset} among {len(self.partitions)} partitions"

    def rows(self) -> list[dict]:
        return [self.partitions[tp].row() for tp in sorted(self.partitions)]

    @property
    def diverged(self) -> bool:
        return any(st.divergence is not None for st in self.partitions.values())


#: Kafka 3.6 rewrote ReplicaVerificationTool in Java: its start line lost the final period.
STARTED_WITHOUT_PERIOD_SINCE = "3.6"


def started_line(text: Any) -> str:
    """`verification process is started.` (Scala tool, before 3.6) or without the period (Java, 3.6+)."""
    return "verification process is started" + ("" if text.at_least(STARTED_WITHOUT_PERIOD_SINCE) else ".")
