"""Consumer group offsets on a live cluster, over ZooKeeper (old consumers) and the Admin API.

Three pieces, one concern each:

* `BrokerOffsets` asks the partition leaders about their logs: log-end, log-start and by-timestamp
  offsets (ListOffsets) and the timestamp of the record at an offset (a bounded Fetch).  Requests
  are grouped by leader and sent concurrently: one request per broker however many partitions
  (10,000 partitions on 3 brokers cost 3 ListOffsets, not 10,000).
* `KafkaGroups` reads and writes groups the brokers coordinate (ListGroups, DescribeGroups,
  OffsetFetch and OffsetCommit, one request per coordinator where the protocol allows).
* `ZkGroups` reads and writes the znodes old (ZooKeeper-based) consumers keep under `/consumers`;
  brokers and leaders come from `kafkatool.cluster.zk.ZkCluster`.

Nothing here consumes as a group: the Fetch carries no group, commits nothing, and reads at most a
batch or two per partition.  kafka-python and kazoo are imported lazily by `kafkatool.cluster.connect`.

Size: the three classes share one request discipline — the command's single `--timeout` deadline,
and looking the coordinator or leader up again on connection loss, NOT_COORDINATOR and
COORDINATOR_LOAD_IN_PROGRESS — which lives here once; splitting them would spread it over modules.
"""

from __future__ import annotations

import re
import time
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kafkatool.cluster.connect import DEFAULT_TIMEOUT, ClusterError, ZkDataError, admin_client
from kafkatool.cluster.model import Broker

TP = tuple[str, int]

LATEST = -1
EARLIEST = -2
MAX_TIMESTAMP = -3

# Broker error codes this module reacts to (Kafka's Errors enum).
_ERR_OFFSET_OUT_OF_RANGE = 1
_ERR_NOT_LEADER = 6
_ERR_UNSUPPORTED_VERSION = 35


@dataclass(slots=True)
class Member:
    """A group member; `assignment` in the order its consumer-protocol assignment lists it."""

    member_id: str
    client_id: str
    host: str
    group_instance_id: str | None = None
    assignment: list[TP] = field(default_factory=list)
    # KIP-848 groups (ConsumerGroupDescribe) only:
    member_epoch: int | None = None
    target_assignment: list[TP] = field(default_factory=list)
    upgraded: bool | None = None  # None: not said (v0, classic); False: a classic member of a consumer group


@dataclass(slots=True)
class GroupInfo:
    """What DescribeGroups (or ZooKeeper) says about a group.  `state` uses Kafka's names."""

    group: str
    state: str
    protocol_type: str = "consumer"
    protocol: str = ""
    coordinator: Broker | None = None
    members: list[Member] = field(default_factory=list)
    group_type: str = "classic"  # "consumer": the KIP-848 protocol, described by ConsumerGroupDescribe
    group_epoch: int | None = None
    target_assignment_epoch: int | None = None

    @property
    def active(self) -> bool:
        return bool(self.members) or self.state not in ("Empty", "Dead")


@dataclass(frozen=True, slots=True)
class Committed:
    offset: int
    metadata: str = ""
    leader_epoch: int = -1


@dataclass(frozen=True, slots=True)
class ListedOffset:
    """A ListOffsets answer: offset (None when the broker has none) and the record timestamp."""

    offset: int | None
    timestamp: int | None = None
    error: str | None = None


@dataclass(frozen=True, slots=True)
class RecordStamp:
    """The first record at or after an offset: its offset and timestamp.

    `caught_up` means there is no such record yet (the offset is the log end); `error` says why the
    record could not be read (out of range after retention, leader unavailable, ...); `note` marks
    an estimate (the first record time of a batch too large to fetch).
    """

    offset: int | None
    timestamp: int | None
    timestamp_type: str | None = None
    caught_up: bool = False
    error: str | None = None
    note: str | None = None


@dataclass(slots=True)
class ClusterMetadata:
    brokers: dict[int, Broker]
    leaders: dict[TP, int]
    topics: dict[str, list[int]]
    topic_ids: dict[str, Any]
    missing_topics: set[str]
    controller: int | None = None


_GROUP_ID_NOT_FOUND = "GroupIdNotFoundError"  # kafka-python's name for error 69


def _error_name(code: int) -> str:
    import kafka.errors as Errors

    try:
        return str(Errors.for_code(code).__name__)
    except Exception:  # noqa: BLE001 - an unknown code is still a code
        return f"error {code}"


# --------------------------------------------------------------------------------------------------
# Brokers: ListOffsets and Fetch, batched per leader


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


# --------------------------------------------------------------------------------------------------
# Kafka-coordinated groups


class KafkaGroups:
    """Groups stored and coordinated by the brokers, through kafka-python's Admin client.

    Coordinators move (a broker dies, `__consumer_offsets` leadership changes): as Kafka's admin
    client does, a call that meets a lost connection, NOT_COORDINATOR or
    COORDINATOR_LOAD_IN_PROGRESS forgets the groups' coordinators, looks them up again and retries,
    until the command's --timeout runs out.
    """

    def __init__(self, brokers: BrokerOffsets) -> None:
        self.brokers = brokers
        self.admin = brokers.admin

    def _call(self, what: str, make: Any, groups: Iterable[str] = ()) -> Any:
        """Run the coroutine `make()` returns, retried over coordinator moves within --timeout
        (`make` runs in the caller's thread before each attempt)."""
        delay = 0.05
        last: Exception | None = None
        until = self.brokers.until()
        while True:
            if until - time.monotonic() <= 0:
                raise self.brokers.out_of_time(what, last)
            try:
                return self.brokers.bounded(what, make(), until)
            except ClusterError:
                raise
            except Exception as exc:  # noqa: BLE001 - kafka-python raises many types
                if not _retriable(exc):
                    raise ClusterError(f"{what}: {exc}") from None
                last = exc
            self._forget_coordinators(groups)
            time.sleep(max(0.0, min(delay, until - time.monotonic())))
            delay = min(delay * 2, 1.0)

    def _forget_coordinators(self, groups: Iterable[str]) -> None:
        cache = getattr(self.admin._manager.cluster, "_coordinators", None)
        if isinstance(cache, dict):
            wanted = set(groups)
            for key in [k for k in cache if isinstance(k, tuple) and len(k) == 2 and k[1] in wanted]:
                cache.pop(key, None)

    def list_groups(self) -> list[str]:
        """Consumer groups (protocol type "consumer" or empty), as kafka-consumer-groups --list."""
        return sorted({g for g, _, _ in self.listings()})

    def listings(self) -> list[tuple[str, str, str]]:
        """(group, state, type) of each consumer group as ListGroups answers: the state from v4 (Kafka
        2.6), the type from v5 (3.8); '' where the negotiated version has none."""
        listed = self._call("ListGroups", lambda: self.admin._async_list_groups(
            broker_ids=sorted(self.brokers.metadata(refresh=True).brokers)))
        return [(g["group_id"], g.get("group_state") or "", g.get("group_type") or "")
                for g in listed if g.get("protocol_type", "") in ("consumer", "")]

    def coordinators(self, groups: list[str]) -> dict[str, Broker | None]:
        ids = self._call("FindCoordinator", lambda: self.admin._find_coordinator_ids(groups), groups=groups)
        brokers = self.brokers.metadata().brokers
        return {g: brokers.get(ids.get(g, -1)) for g in groups}

    def _consumer_describe_supported(self) -> bool:
        from kafkatool.cluster.kip848 import ConsumerGroupDescribeRequest

        try:
            return int(self.admin._manager.broker_version_data.api_version(ConsumerGroupDescribeRequest)) >= 0
        except Exception:  # noqa: BLE001 - IncompatibleBrokerVersion and the like: the broker lacks it
            return False

    async def _consumer_describe(self, groups: list[str]) -> dict[str, Any]:
        """ConsumerGroupDescribe per coordinator: the groups on the new protocol (others are left out:
        the broker answers GROUP_ID_NOT_FOUND for classic groups, as Kafka 4.0's admin client expects)."""
        from kafkatool.cluster.kip848 import GROUP_ID_NOT_FOUND, ConsumerGroupDescribeRequest

        mgr = self.admin._manager
        by_coordinator: dict[Any, list[str]] = defaultdict(list)
        for g, c in (await self.admin._find_coordinator_ids(groups)).items():
            by_coordinator[c].append(g)
        out: dict[str, Any] = {}
        for c, gs in by_coordinator.items():
            resp = await mgr.send(ConsumerGroupDescribeRequest(group_ids=gs, include_authorized_operations=False),
                                  node_id=c)
            for dg in resp.groups:
                if dg.error_code == 0:
                    out[dg.group_id] = dg
                elif dg.error_code in (GROUP_ID_NOT_FOUND, _ERR_UNSUPPORTED_VERSION):
                    continue  # a classic group (or none): DescribeGroups says which
                elif _error_name(dg.error_code).startswith(("NotCoordinator", "CoordinatorLoad", "CoordinatorNotAvail")):
                    raise _CoordinatorMoved(_error_name(dg.error_code))
                else:
                    raise ClusterError(f"ConsumerGroupDescribe {dg.group_id}: {_error_name(dg.error_code)}"
                                       + (f": {dg.error_message}" if dg.error_message else ""))
        return out

    def describe(self, groups: list[str]) -> dict[str, GroupInfo]:
        """The groups' state and members, one request per coordinator.

        As Kafka 4.0's admin client: ConsumerGroupDescribe first when the broker has it (groups on
        the KIP-848 consumer protocol), DescribeGroups for the rest (classic groups).
        """
        if not groups:
            return {}
        new_api = self._consumer_describe_supported()

        async def describe() -> Any:
            new = await self._consumer_describe(groups) if new_api else {}
            classic = [g for g in groups if g not in new]
            raw = await self.admin._async_describe_groups(classic) if classic else {}
            for d in raw.values():
                if d.get("error") and _retriable_text(str(d["error"])):
                    raise _CoordinatorMoved(str(d["error"]))
            return new, raw

        new, raw = self._call("DescribeGroups", describe, groups=groups)  # (describe() makes the coroutine)
        coords = self.coordinators(groups)
        from kafkatool.cluster.kip848 import assignment_partitions

        out = {}
        for g in groups:
            dg = new.get(g)
            if dg is not None:
                members = [Member(m.member_id, m.client_id, m.client_host, m.instance_id,
                                  assignment_partitions(m.assignment), m.member_epoch,
                                  assignment_partitions(m.target_assignment),
                                  None if getattr(m, "member_type", -1) == -1 else m.member_type == 1)
                           for m in dg.members]
                out[g] = GroupInfo(g, dg.group_state, "consumer", dg.assignor_name, coords.get(g), members, "consumer",
                                   dg.group_epoch, dg.assignment_epoch)
                continue
            d = raw.get(g)
            # DescribeGroups v6+ (Kafka 4.0, KIP-1043) answers an unknown group GROUP_ID_NOT_FOUND where
            # older versions answered Dead: both are the same "does not exist" (one exit code).
            if d is None or _GROUP_ID_NOT_FOUND in str(d.get("error") or ""):
                out[g] = GroupInfo(g, "Dead", "", "", coords.get(g), [])
                continue
            if d.get("error"):
                raise ClusterError(f"DescribeGroups {g}: {d['error']}")
            members = [self._member(m, d.get("protocol_type", "")) for m in d.get("members", [])]
            out[g] = GroupInfo(g, d.get("group_state", ""), d.get("protocol_type", ""), d.get("protocol_data", ""),
                               coords.get(g), members)
        return out

    @staticmethod
    def _member(m: dict[str, Any], protocol_type: str) -> Member:
        assignment: list[TP] = []
        a = m.get("member_assignment")
        if isinstance(a, dict):
            for tp in a.get("assigned_partitions") or []:
                assignment.extend((tp["topic"], p) for p in tp["partitions"])
        elif isinstance(a, (bytes, bytearray)) and a and protocol_type == "consumer":
            from kafkatool.log.decoders._wire import Reader
            from kafkatool.log.decoders.offsets import decode_consumer_assignment

            try:
                r = Reader(bytes(a))
                assignment = list(decode_consumer_assignment(r, r.int16()).partitions)
            except ValueError:
                assignment = []
        return Member(m.get("member_id", ""), m.get("client_id", ""), m.get("client_host", ""),
                      m.get("group_instance_id"), assignment)

    def committed(self, groups: list[str]) -> dict[str, dict[TP, Committed | None]]:
        """Every committed offset of each group (OffsetFetch per coordinator; per group before 3.0).

        A negative offset means "none" and maps to None, as Kafka's admin client does.
        """
        if not groups:
            return {}
        raw = self._call("OffsetFetch", lambda: self.admin._async_list_group_offsets({g: None for g in groups}),
                         groups=groups)
        out: dict[str, dict[TP, Committed | None]] = {}
        for g in groups:
            per = {}
            for tp, oam in (raw.get(g) or {}).items():
                off = oam.offset
                epoch = oam.leader_epoch if oam.leader_epoch is not None else -1
                per[(tp.topic, tp.partition)] = Committed(off, oam.metadata or "", epoch) if off is not None and off >= 0 else None
            out[g] = per
        return out

    def commit(self, group: str, offsets: dict[TP, int]) -> dict[TP, str | None]:
        """OffsetCommit as an admin (generation -1): the broker refuses it while the group has members."""
        from kafka.structs import OffsetAndMetadata, TopicPartition

        if not offsets:
            return {}
        req = {TopicPartition(t, p): OffsetAndMetadata(o, "", None) for (t, p), o in offsets.items()}

        async def commit() -> Any:
            res = await self.admin._async_alter_group_offsets(group, req)
            moved = [e for e in res.values() if _retriable_text(getattr(e, "__name__", str(e)))]
            if moved:
                raise _CoordinatorMoved(getattr(moved[0], "__name__", str(moved[0])))
            return res

        res = self._call("OffsetCommit", commit, groups=[group])  # (commit() makes the coroutine)
        out: dict[TP, str | None] = {}
        for tp, err in res.items():
            name = getattr(err, "__name__", str(err))
            out[(tp.topic, tp.partition)] = None if name == "NoError" else name
        return out


class _CoordinatorMoved(Exception):
    """A group-level NOT_COORDINATOR / COORDINATOR_LOAD_IN_PROGRESS inside a response."""


# What Kafka's admin client retries after looking the coordinator up again.
_RETRIABLE = ("NotCoordinator", "CoordinatorLoadInProgress", "CoordinatorNotAvailable", "KafkaConnectionError",
              "NodeNotReady", "RequestTimedOut", "KafkaTimeoutError", "ConnectionError", "Event loop stopped")


def _retriable_text(text: str) -> bool:
    return any(name in text for name in _RETRIABLE)


def _retriable(exc: Exception) -> bool:
    return isinstance(exc, (_CoordinatorMoved, ConnectionError)) or _retriable_text(f"{type(exc).__name__} {exc}")


# --------------------------------------------------------------------------------------------------
# ZooKeeper-stored groups (old consumers, Kafka 0.8 - 2.x)


def _offset(path: str, text: str) -> int:
    """An offset znode's value, as the old consumer writes it (a decimal number)."""
    value = text.strip()
    if not re.fullmatch(r"-?\d{1,19}", value):
        raise ZkDataError(f"ZooKeeper znode {path}: {text!r} is not an offset")
    return int(value)


class ZkGroups:
    """`/consumers/<group>/{ids,owners,offsets}`, next to the cluster metadata `ZkCluster` reads.

    Brokers, topics and leaders come from `kafkatool.cluster.zk.ZkCluster` (shared with the
    reassign tools); this class adds the consumer znodes, read in one round trip each batch.
    """

    def __init__(self, cluster: Any) -> None:
        self.cluster = cluster

    @classmethod
    def connect(cls, connect: str, timeout: float = DEFAULT_TIMEOUT) -> ZkGroups:
        from kafkatool.cluster.zk import ZkCluster

        return cls(ZkCluster.connect(connect, timeout))

    def close(self) -> None:
        self.cluster.close()

    def _text(self, paths: list[str]) -> list[str | None]:
        return [None if d is None else d.decode("utf-8", "replace") for d in self.cluster._get_many(paths)]

    def _exists(self, path: str) -> bool:
        return self.cluster._get(path) is not None

    def list_groups(self) -> list[str]:
        return sorted(self.cluster._children("/consumers"))

    def exists(self, group: str) -> bool:
        return self._exists(f"/consumers/{group}")

    def topics(self, group: str) -> list[str]:
        """The group's topics as ConsumerOffsetChecker finds them: children of `owners/` (else `offsets/`)."""
        owners = self.cluster._children(f"/consumers/{group}/owners")
        return sorted(owners or self.cluster._children(f"/consumers/{group}/offsets"))

    def offset_topics(self, group: str) -> list[str]:
        return sorted(self.cluster._children(f"/consumers/{group}/offsets"))

    def brokers(self) -> dict[int, Broker]:
        return {b.id: b for b in self.cluster.brokers()}

    def partitions(self, topics: Iterable[str]) -> tuple[dict[str, list[int]], dict[TP, int | None]]:
        """(partition ids per topic, leader per partition or None) for the topics that exist."""
        existing = set(self.cluster.topics())
        wanted = [t for t in dict.fromkeys(topics) if t in existing]
        states = self.cluster.partition_states(wanted) if wanted else {}
        parts: dict[str, list[int]] = defaultdict(list)
        leaders: dict[TP, int | None] = {}
        for tp, st in states.items():
            parts[tp.topic].append(tp.partition)
            leaders[(tp.topic, tp.partition)] = st.leader if st.leader >= 0 else None
        return {t: sorted(ps) for t, ps in parts.items()}, leaders

    def committed(self, group: str, partitions: dict[str, list[int]]) -> dict[TP, int | None]:
        """Offsets from `/consumers/g/offsets/t/p`: -1 when the topic dir exists but the partition
        has none (ConsumerOffsetChecker prints it as -1 with lag `unknown`), None when nothing exists."""
        out: dict[TP, int | None] = {}
        tps = [(t, p) for t in partitions for p in partitions[t]]
        dirs = {t: self._exists(f"/consumers/{group}/offsets/{t}") for t in partitions}
        datas = self._text([f"/consumers/{group}/offsets/{t}/{p}" for t, p in tps])
        for (t, p), raw in zip(tps, datas, strict=True):
            if raw is None:
                out[(t, p)] = -1 if dirs[t] else None
                continue
            out[(t, p)] = _offset(f"/consumers/{group}/offsets/{t}/{p}", raw)
        return out

    def owners(self, group: str, tps: list[TP]) -> dict[TP, str | None]:
        datas = self._text([f"/consumers/{group}/owners/{t}/{p}" for t, p in tps])
        return dict(zip(tps, datas, strict=True))

    def all_committed(self, group: str) -> dict[TP, int]:
        """Every offset znode of a group (what ExportZkOffsets exports); a znode that is not a
        partition number or does not hold an offset stops the read (ZkDataError naming it)."""
        tps: list[TP] = []
        for t in self.offset_topics(group):
            for p in self.cluster._children(f"/consumers/{group}/offsets/{t}"):
                if not p.isdigit():
                    raise ZkDataError(f"ZooKeeper znode /consumers/{group}/offsets/{t}/{p}: {p!r} is not a partition number")
                tps.append((t, int(p)))
        datas = self._text([f"/consumers/{group}/offsets/{t}/{p}" for t, p in tps])
        return {(t, p): _offset(f"/consumers/{group}/offsets/{t}/{p}", d)
                for (t, p), d in zip(tps, datas, strict=True) if d is not None}

    def members(self, group: str) -> list[str]:
        """Registered consumer ids (`/consumers/g/ids`): non-empty means the group is active."""
        return sorted(self.cluster._children(f"/consumers/{group}/ids"))

    def commit(self, group: str, offsets: dict[TP, int]) -> None:
        """Write offset znodes (created with parents when missing), as ImportZkOffsets does."""
        zk = self.cluster.client
        try:
            for (t, p), off in sorted(offsets.items()):
                path = f"/consumers/{group}/offsets/{t}/{p}"
                data = str(off).encode()
                if zk.exists(path) is None:
                    zk.create(path, data, makepath=True)
                else:
                    zk.set(path, data)
        except Exception as exc:  # noqa: BLE001 - kazoo raises many types; all mean "not written"
            raise ClusterError(f"ZooKeeper: cannot write offsets of {group}: {exc}") from None
