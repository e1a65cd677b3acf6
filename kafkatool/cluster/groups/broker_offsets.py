"""The partition leaders' side of offsets: ListOffsets and a bounded Fetch, batched per leader.

What `ConsumerGroupCommand` asks the leaders for log-end offsets (lag) and `--reset-offsets
--to-earliest/--to-latest/--to-datetime` (`Admin.listOffsets`), plus the timestamp of the record at
an offset, which Kafka's tool does not show.  One request per broker, sent concurrently, with the
leader looked up again on NOT_LEADER.  `BrokerOffsets` also carries the command's `--timeout`
deadline (`until`, `bounded`, `out_of_time`) that `KafkaGroups` runs its calls under.
"""

from __future__ import annotations

import time
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from kafkatool.cluster.connect import DEFAULT_TIMEOUT, ClusterError, admin_client
from kafkatool.cluster.groups.model import (
    _ERR_NOT_LEADER,
    _ERR_OFFSET_OUT_OF_RANGE,
    EARLIEST,
    LATEST,
    MAX_TIMESTAMP,
    TP,
    ClusterMetadata,
    ListedOffset,
    RecordStamp,
    _error_name,
)
from kafkatool.cluster.model import Broker


class BrokerOffsets:
    """Per-leader batched offset lookups over one Admin connection (kafka-python).

    `requests` counts what was sent, per (broker id, API), for reports and the benchmark.
    """

    def __init__(self, admin: Any, timeout: float = DEFAULT_TIMEOUT, deadline: float | None = None) -> None:
        self.admin = admin
        self.timeout = timeout
        # A command's --timeout bounds all its cluster work (`deadline`, monotonic); without one each
        # call (retries included) gets `timeout` of its own, for long-lived library use.
        self.deadline = deadline
        self.requests: Counter[tuple[int | None, str]] = Counter()
        self._meta: ClusterMetadata | None = None

    @classmethod
    def connect(cls, bootstrap: str, command_config: str | Path | None = None, timeout: float = DEFAULT_TIMEOUT,
                deadline: float | None = None) -> BrokerOffsets:
        """Connect; with a `deadline` (a command's, monotonic) connecting and every later call end by it."""
        left = None if deadline is None else max(0.001, deadline - time.monotonic())
        return cls(admin_client(bootstrap, command_config, timeout, left), timeout, deadline)

    def until(self) -> float:
        """The monotonic time a call starting now must end by."""
        return self.deadline if self.deadline is not None else time.monotonic() + self.timeout

    def pause(self, seconds: float) -> None:
        """Leave out a wait the user asked for (--sample) from the deadline."""
        if self.deadline is not None:
            self.deadline += seconds

    def out_of_time(self, what: str, last: object = None) -> ClusterError:
        # (our own deadline's "Timed out after N ms" would only restate --timeout less clearly)
        why = f" (last error: {last})" if last and "Timed out after" not in str(last) else ""
        return ClusterError(f"{what}: no answer within --timeout {self.timeout:g}s{why}")

    def bounded(self, what: str, coro: Any, until: float) -> Any:
        """Run a kafka-python coroutine on its IO loop, given at most the time left until `until`."""
        mgr = self.admin._manager
        left_ms = int((until - time.monotonic()) * 1000)
        if left_ms <= 0:
            coro.close()
            raise self.out_of_time(what)

        async def call() -> Any:
            return await mgr.wait_for(mgr.call_soon(coro), left_ms)

        return mgr.run(call)

    def close(self) -> None:
        try:
            self.admin.close()
        except Exception:  # noqa: BLE001 - closing must never mask the real outcome
            pass

    # -- transport --------------------------------------------------------------------------------
    def send_all(self, requests: Sequence[tuple[int | None, Any]]) -> list[Any]:
        """Send requests to their brokers concurrently; each result is a response or the exception.

        Uses the Admin client's connection manager (kafka-python has no public per-broker send), so
        connections, authentication and version negotiation stay kafka-python's.
        """
        mgr = self.admin._manager
        timeout_ms = int(min(self.timeout, self.until() - time.monotonic()) * 1000)
        if timeout_ms <= 0:
            raise self.out_of_time("request to the brokers")
        for node, req in requests:
            self.requests[(node, type(req).__name__.removesuffix("Request"))] += 1

        async def run_all() -> list[Any]:
            futures = [mgr.send(req, node_id=node, request_timeout_ms=timeout_ms) for node, req in requests]
            out: list[Any] = []
            for fut in futures:
                try:  # a connection that never completes is bounded too, not only the request
                    out.append(await mgr.wait_for(fut, timeout_ms))
                except Exception as exc:  # noqa: BLE001 - returned to the caller per request
                    out.append(exc)
            return out

        try:
            return list(mgr.run(run_all))
        except Exception as exc:  # noqa: BLE001
            raise ClusterError(f"request to the brokers failed: {exc}") from None

    # -- metadata ---------------------------------------------------------------------------------
    def metadata(self, topics: Iterable[str] | None = None, refresh: bool = False) -> ClusterMetadata:
        """Brokers and partition leaders (one Metadata request; cached until `refresh`)."""
        from kafka.protocol.metadata import MetadataRequest

        wanted = None if topics is None else sorted(set(topics))
        if self._meta is not None and not refresh:
            if wanted is None or all(t in self._meta.topics or t in self._meta.missing_topics for t in wanted):
                return self._meta
        req = MetadataRequest(
            topics=None if wanted is None else [MetadataRequest.MetadataRequestTopic(name=t) for t in wanted],
            allow_auto_topic_creation=False,
        )
        (resp,) = self.send_all([(None, req)])
        if isinstance(resp, Exception):
            raise ClusterError(f"cannot read cluster metadata: {resp}")
        meta = self._meta if (self._meta is not None and not refresh) else ClusterMetadata({}, {}, {}, {}, set())
        for b in resp.brokers:
            meta.brokers[b.node_id] = Broker(b.node_id, b.host, b.port)
        meta.controller = getattr(resp, "controller_id", None)
        for t in resp.topics:
            if t.error_code != 0:
                meta.missing_topics.add(t.name)
                continue
            meta.topic_ids[t.name] = getattr(t, "topic_id", None)
            meta.topics[t.name] = sorted(p.partition_index for p in t.partitions)
            for p in t.partitions:
                meta.leaders[(t.name, p.partition_index)] = p.leader_id
        self._meta = meta
        return meta

    def _by_leader(self, tps: Iterable[TP], meta: ClusterMetadata) -> tuple[dict[int, list[TP]], list[TP]]:
        groups: dict[int, list[TP]] = defaultdict(list)
        orphans = []
        for tp in tps:
            leader = meta.leaders.get(tp, -1)
            if leader is None or leader < 0:
                orphans.append(tp)
            else:
                groups[leader].append(tp)
        return groups, orphans

    # -- ListOffsets ------------------------------------------------------------------------------
    def list_offsets(self, specs: dict[TP, int], isolation_level: int = 0) -> dict[TP, ListedOffset]:
        """Offsets by spec (LATEST, EARLIEST, MAX_TIMESTAMP or a timestamp in ms) per partition; with
        isolation_level 1 (read_committed, ListOffsets v2+) LATEST is the last stable offset.

        One ListOffsets per leader, all in flight at once; a partition whose leader moved (or could
        not be reached) is asked again once after a metadata refresh.  Errors are per partition, never for the whole call.
        """
        out: dict[TP, ListedOffset] = {}
        pending = dict(specs)
        for attempt in range(2):
            if not pending:
                break
            meta = self.metadata({t for t, _ in pending}, refresh=attempt > 0)
            groups, orphans = self._by_leader(pending, meta)
            for tp in orphans:
                out[tp] = ListedOffset(None, None, "unknown partition" if tp[0] in meta.missing_topics or tp not in meta.leaders else "no leader")
                pending.pop(tp)
            nodes = sorted(groups)
            resps = self.send_all([(n, self._list_offsets_request({tp: pending[tp] for tp in groups[n]}, isolation_level)) for n in nodes])
            retry: dict[TP, int] = {}
            for n, resp in zip(nodes, resps, strict=True):
                if isinstance(resp, Exception):
                    for tp in groups[n]:
                        if attempt == 0:  # the leader may be gone: ask again after a metadata refresh
                            retry[tp] = pending[tp]
                        else:
                            out[tp] = ListedOffset(None, None, f"broker {n}: {resp}")
                    continue
                for t in resp.topics:
                    for p in t.partitions:
                        tp = (t.name, p.partition_index)
                        if p.error_code == _ERR_NOT_LEADER and attempt == 0:
                            retry[tp] = pending[tp]
                        elif p.error_code:
                            out[tp] = ListedOffset(None, None, _error_name(p.error_code))
                        else:
                            off = p.offset if p.offset is not None and p.offset >= 0 else None
                            ts = p.timestamp if p.timestamp is not None and p.timestamp >= 0 else None
                            out[tp] = ListedOffset(off, ts)
            pending = retry
        for tp in pending:
            out.setdefault(tp, ListedOffset(None, None, "leader changed twice"))
        return out

    @staticmethod
    def _list_offsets_request(specs: dict[TP, int], isolation_level: int = 0) -> Any:
        from kafka.protocol.consumer import ListOffsetsRequest

        T = ListOffsetsRequest.ListOffsetsTopic
        P = T.ListOffsetsPartition
        by_topic: dict[str, list[Any]] = defaultdict(list)
        min_version = 2 if isolation_level else 1  # IsolationLevel came with v2 (Kafka 0.11)
        for (topic, part), ts in specs.items():
            by_topic[topic].append(P(partition_index=part, timestamp=ts, current_leader_epoch=-1))
            if ts == MAX_TIMESTAMP:
                min_version = 7
        return ListOffsetsRequest(
            replica_id=-1, isolation_level=isolation_level, topics=[T(name=t, partitions=ps) for t, ps in by_topic.items()],
            min_version=min_version,
        )

    def log_end_offsets(self, tps: Iterable[TP]) -> dict[TP, ListedOffset]:
        return self.list_offsets({tp: LATEST for tp in tps})

    def log_start_offsets(self, tps: Iterable[TP]) -> dict[TP, ListedOffset]:
        return self.list_offsets({tp: EARLIEST for tp in tps})

    # -- Fetch ------------------------------------------------------------------------------------
    def record_timestamps(self, offsets: dict[TP, int], partition_bytes: int = 2048,
                          max_batch_bytes: int = 8 * 1024 * 1024) -> dict[TP, RecordStamp]:
        """Timestamp of the first record at or after each offset, by bounded Fetches per leader.

        Round 1 asks `partition_bytes` per partition (one Fetch per leader).  The broker returns the
        batch holding the offset, cut at that size when it is bigger: an uncompressed partial batch
        is read record by record; a compressed one is asked again with exactly its size (up to
        `max_batch_bytes`, else its header's first-record time is reported as an estimate).  At
        most `_FETCH_ROUNDS` rounds; no group is involved and nothing is committed.
        """
        out: dict[TP, RecordStamp] = {}
        limits = {tp: max(partition_bytes, 64) for tp in offsets}
        pending = dict(offsets)
        for attempt in range(_FETCH_ROUNDS):
            if not pending:
                break
            meta = self.metadata({t for t, _ in pending}, refresh=attempt > 0)
            groups, orphans = self._by_leader(pending, meta)
            for tp in orphans:
                out[tp] = RecordStamp(None, None, error="no leader" if tp in meta.leaders else "unknown partition")
                pending.pop(tp)
            nodes = sorted(groups)
            reqs = [(n, self._fetch_request({tp: pending[tp] for tp in groups[n]}, limits, meta)) for n in nodes]
            resps = self.send_all(reqs)
            again: dict[TP, int] = {}
            ids = {v: k for k, v in meta.topic_ids.items() if v is not None}
            for n, resp in zip(nodes, resps, strict=True):
                if isinstance(resp, Exception):
                    for tp in groups[n]:
                        if attempt + 1 < _FETCH_ROUNDS:  # the leader may be gone: after a metadata refresh
                            again[tp] = pending[tp]
                        else:
                            out[tp] = RecordStamp(None, None, error=f"broker {n}: {resp}")
                    continue
                for t in resp.responses:
                    name = str(t.topic or ids.get(getattr(t, "topic_id", None)))
                    for p in t.partitions:
                        tp = (name, p.partition_index)
                        if tp not in pending:
                            continue
                        stamp, need = _stamp_from(pending[tp], p)
                        if need and attempt + 1 < _FETCH_ROUNDS and need <= max_batch_bytes:
                            limits[tp] = need
                            again[tp] = pending[tp]
                            if stamp.timestamp is not None:
                                out[tp] = stamp  # the header's estimate, replaced if the next round reads it
                        elif p.error_code == _ERR_NOT_LEADER and attempt + 1 < _FETCH_ROUNDS:
                            again[tp] = pending[tp]
                        elif stamp.timestamp is not None or tp not in out:
                            out[tp] = stamp  # (an earlier estimate survives a failed retry)
            pending = again
        for tp in pending:
            out.setdefault(tp, RecordStamp(None, None, error="record not returned"))
        return out

    @staticmethod
    def _fetch_request(offsets: dict[TP, int], limits: dict[TP, int], meta: ClusterMetadata) -> Any:
        from kafka.protocol.consumer import FetchRequest

        T = FetchRequest.FetchTopic
        P = T.FetchPartition
        by_topic: dict[str, list[Any]] = defaultdict(list)
        for (topic, part), off in offsets.items():
            by_topic[topic].append(P(partition=part, current_leader_epoch=-1, fetch_offset=off, last_fetched_epoch=-1,
                                     log_start_offset=-1, partition_max_bytes=limits[(topic, part)]))
        total = min(sum(limits[tp] for tp in offsets), _FETCH_RESPONSE_MAX)
        return FetchRequest(
            replica_id=-1, max_wait_ms=0, min_bytes=0, max_bytes=total, isolation_level=0, session_id=0,
            session_epoch=-1, rack_id="",
            topics=[T(topic=t, topic_id=meta.topic_ids.get(t), partitions=ps) for t, ps in by_topic.items()],
            forgotten_topics_data=[],
        )


_FETCH_ROUNDS = 3
_FETCH_RESPONSE_MAX = 50 * 1024 * 1024  # Kafka's default fetch.max.bytes


def _stamp_from(target: int, p: Any) -> tuple[RecordStamp, int]:
    """(stamp, bytes to ask for next round or 0) from one partition of a Fetch response."""
    from kafkatool.log.errors import LogFormatError
    from kafkatool.log.record import TIMESTAMP_TYPE_NAMES
    from kafkatool.log.records import read_batch_header

    if p.error_code == _ERR_OFFSET_OUT_OF_RANGE:
        return RecordStamp(None, None, error="offset out of range (deleted by retention?)"), 0
    if p.error_code:
        return RecordStamp(None, None, error=_error_name(p.error_code)), 0
    hw = p.high_watermark
    data = bytes(p.records or b"")
    pos = 0
    try:
        while pos < len(data):
            b = read_batch_header(data, pos, len(data))
            if b is None:
                return _partial_batch(data, pos, target)
            pos += b.size
            if b.is_control or b.last_offset < target:
                continue
            for r in b.records():
                if r.offset >= target:
                    ts = r.timestamp if r.timestamp >= 0 else None
                    return RecordStamp(r.offset, ts, TIMESTAMP_TYPE_NAMES.get(b.timestamp_type)), 0
    except (LogFormatError, ValueError) as exc:
        return RecordStamp(None, None, error=f"undecodable batch: {exc}"), 0
    if hw is not None and 0 <= hw <= target:
        return RecordStamp(None, None, caught_up=True), 0
    if not data:
        return RecordStamp(None, None, error="no data returned"), 64 * 1024  # response budget ran out: ask again
    return RecordStamp(None, None, error="only control records returned"), 0


def _partial_batch(data: bytes, pos: int, target: int) -> tuple[RecordStamp, int]:
    """A batch cut at the fetch limit: read what is there, else ask for the whole batch.

    An uncompressed v2 batch is read record by record up to the cut; the header alone gives the
    first record's time (or, with LogAppendTime, every record's), kept as an estimate.
    """
    import struct

    from kafkatool.log.errors import LogFormatError
    from kafkatool.log.record import ATTR_CONTROL, ATTR_LOG_APPEND_TIME
    from kafkatool.log.varint import read_varint

    if len(data) - pos < 17:
        return RecordStamp(None, None, error="batch header cut short"), 64 * 1024
    base, length, _, magic = struct.unpack_from(">qiib", data, pos)
    need = length + 12
    if magic < 2 or len(data) - pos < 61:
        return RecordStamp(None, None, error="batch larger than the fetch size"), need
    attrs, _, base_ts, max_ts = struct.unpack_from(">hiqq", data, pos + 21)
    if attrs & ATTR_CONTROL:
        return RecordStamp(None, None, error="control batch larger than the fetch size"), need
    ts_type = "LogAppendTime" if attrs & ATTR_LOG_APPEND_TIME else "CreateTime"
    if attrs & ATTR_LOG_APPEND_TIME:
        return RecordStamp(max(base, target), max_ts if max_ts >= 0 else None, ts_type), 0
    if attrs & 0x07 == 0:  # uncompressed: walk the records that arrived
        rpos = pos + 61
        try:
            while rpos < len(data):
                rlen, body = read_varint(data, rpos)
                ts_delta, q = read_varint(data, body + 1)
                off_delta, _ = read_varint(data, q)
                if base + off_delta >= target:
                    return RecordStamp(base + off_delta, base_ts + ts_delta, ts_type), 0
                rpos = body + rlen
        except (LogFormatError, ValueError, IndexError):
            pass  # the cut fell inside this record: the header's estimate and a second round
    estimate = RecordStamp(max(base, target), base_ts if base_ts >= 0 else None, ts_type,
                           note=None if base == target else "estimated from the batch's first record")
    return estimate, need
