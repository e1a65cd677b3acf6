"""A protocol-faithful fake Kafka cluster for the group-offsets tests and benchmark.

Each fake broker listens on its own 127.0.0.1 port and speaks the real Kafka wire protocol as a broker
of one Kafka release does: it advertises that release's ApiVersions table and encodes every response
at the negotiated version with exactly that version's fields, with tests/support/kwire.py (our own
description of the messages, not kafka-python's classes, which would agree with the client by
construction), so the real `KafkaAdminClient` and kafkatool's own requests talk to it over real
sockets.  It answers what `kafkatool offsets` uses — ApiVersions, Metadata, FindCoordinator,
ListGroups, DescribeGroups, OffsetFetch, ListOffsets, Fetch, OffsetCommit — with the broker's
rules where they matter: leaders and coordinators answer for their own partitions and groups only
(NOT_LEADER_OR_FOLLOWER / NOT_COORDINATOR otherwise), ListOffsets by timestamp finds the first
offset at or after it, Fetch returns whole v2 batches from the one holding the fetch offset and
honours partition and response byte limits (a partial batch when the first one does not fit, full
batch only for the first partition, as `minOneMessage` does), OffsetCommit with generation -1 is
refused while the group has members, and ApiVersions answers an unsupported version with a v0 error
response as brokers do.

Every request is counted per (broker id, API name) in `cluster.requests`, which is how the tests
check that work is batched per broker.
"""

from __future__ import annotations

import socket
import socketserver
import struct
import threading
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from kafka.protocol.api_key import ApiKey

from kafkatool.log.writer import Record, encode_v2_batch
from kafkatool.ops.offsets_log import OFFSETS_TOPIC, offsets_partition_for
from tests.support import kwire
from tests.support.fake_group_types import GroupTypesMixin
from tests.support.kwire import BODY

NONE = 0
OFFSET_OUT_OF_RANGE = 1
UNKNOWN_TOPIC_OR_PARTITION = 3
NOT_LEADER_OR_FOLLOWER = 6
COORDINATOR_LOAD_IN_PROGRESS = 14
GROUP_ID_NOT_FOUND = 69
NOT_COORDINATOR = 16
UNKNOWN_MEMBER_ID = 25
UNSUPPORTED_VERSION = 35

TP = tuple[str, int]


def encode_consumer_assignment(partitions: list[TP], user_data: bytes | None = None) -> bytes:
    """ConsumerProtocolAssignment v0: topics in order of first appearance."""
    by_topic: dict[str, list[int]] = {}
    for t, p in partitions:
        by_topic.setdefault(t, []).append(p)
    out = [struct.pack(">hi", 0, len(by_topic))]
    for t, ps in by_topic.items():
        tb = t.encode()
        out.append(struct.pack(">h", len(tb)) + tb + struct.pack(">i", len(ps)) + b"".join(struct.pack(">i", p) for p in ps))
    out.append(struct.pack(">i", -1) if user_data is None else struct.pack(">i", len(user_data)) + user_data)
    return b"".join(out)


def encode_consumer_subscription(topics: list[str]) -> bytes:
    out = [struct.pack(">hi", 0, len(topics))]
    for t in topics:
        tb = t.encode()
        out.append(struct.pack(">h", len(tb)) + tb)
    out.append(struct.pack(">i", -1))
    return b"".join(out)


@dataclass
class FakePartition:
    """A partition's log, described rather than stored: offsets [log_start, log_end), timestamps
    `first_timestamp + (offset * interval_ms)`, batches of `batch_records` aligned on multiples of it."""

    leader: int
    replicas: list[int]
    log_start: int = 0
    log_end: int = 0
    first_timestamp: int = 1_700_000_000_000
    interval_ms: int = 1000
    batch_records: int = 10
    value_bytes: int = 32

    # A log of real records instead (`__consumer_offsets`): each record its own batch.
    stored: list[Record] | None = None

    def append(self, key: bytes | None, value: bytes | None, timestamp: int) -> int:
        """Append one record to a stored log; its offset."""
        assert self.stored is not None
        off = self.log_end
        self.stored.append(Record(off, timestamp, key, value, (), -1, None, True))
        self.log_end = off + 1
        return off

    def timestamp_of(self, offset: int) -> int:
        if self.stored is not None:
            return self.stored[offset].timestamp
        return self.first_timestamp + offset * self.interval_ms

    def offset_for_time(self, ts: int) -> tuple[int, int]:
        """(offset, timestamp) of the first record at or after ts, or (-1, -1)."""
        if self.log_end <= self.log_start:
            return -1, -1
        if self.stored is not None:
            hit = next((r for r in self.stored[self.log_start:] if r.timestamp >= ts), None)
            return (hit.offset, hit.timestamp) if hit is not None else (-1, -1)
        if ts <= self.timestamp_of(self.log_start):
            return self.log_start, self.timestamp_of(self.log_start)
        off = self.log_start + -(-(ts - self.timestamp_of(self.log_start)) // self.interval_ms)
        if off >= self.log_end:
            return -1, -1
        return off, self.timestamp_of(off)

    codec: int = 0
    # Replica verification (Fetch as a debugging replica, id -2, answered by every replica): a
    # replica's own log end when it lags the leader's, and the offset from which its records differ.
    replica_end: dict[int, int] = field(default_factory=dict)
    diverged_from: dict[int, int] = field(default_factory=dict)
    # The last stable offset (an open transaction's first offset) a read_committed ListOffsets answers;
    # None: no open transaction (the high watermark, log_end here).
    stable_end: int | None = None
    _cache: dict[tuple[int, int, int], bytes] = field(default_factory=dict, repr=False)

    def end_of(self, replica: int) -> int:
        return self.replica_end.get(replica, self.log_end)

    def batch(self, base: int, replica: int | None = None, end: int | None = None) -> bytes:
        if self.stored is not None:
            return encode_v2_batch([self.stored[base]], base)
        last = min(base + self.batch_records, self.log_end if end is None else end) - 1
        differs = self.diverged_from.get(replica, -1) if replica is not None else -1
        key = (base, last, differs if 0 <= differs <= last else -1)
        if key not in self._cache:
            recs = [
                Record(o, self.timestamp_of(o), f"k{o}".encode(),
                       (b"w" if 0 <= key[2] <= o else b"v") * self.value_bytes, (), -1, None, True)
                for o in range(base, last + 1)
            ]
            self._cache[key] = encode_v2_batch(recs, base, codec=self.codec)
        return self._cache[key]


@dataclass
class FakeMember:
    member_id: str
    client_id: str
    client_host: str
    assignment: list[TP] = field(default_factory=list)
    group_instance_id: str | None = None
    assignment_bytes: bytes | None = None  # raw bytes to send instead (non-consumer protocols)


@dataclass
class FakeGroup:
    group_id: str
    state: str = "Empty"
    protocol_type: str = "consumer"
    protocol: str = ""
    group_type: str = "classic"  # "consumer": KIP-848, described by ConsumerGroupDescribe only
    members: list[FakeMember] = field(default_factory=list)
    offsets: dict[TP, tuple[int, str]] = field(default_factory=dict)
    commits: int = 0


class _Handler(socketserver.BaseRequestHandler):
    def handle(self) -> None:
        broker: _Broker = self.server.broker  # type: ignore[attr-defined]
        sock: socket.socket = self.request
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        broker.conns.add(sock)
        while True:
            head = _recv_exact(sock, 4)
            if head is None:
                return
            (size,) = struct.unpack(">i", head)
            body = _recv_exact(sock, size)
            if body is None:
                return
            if broker.frozen.is_set():  # accepts, reads, never answers (a hung JVM)
                broker.thawed.wait()
                return
            reply = broker.cluster._dispatch(broker.node_id, body)
            if reply is None:
                return
            sock.sendall(reply)
            broker.cluster._fire(ApiKey(struct.unpack_from(">h", body)[0]).name)


def _recv_exact(sock: socket.socket, n: int) -> bytes | None:
    chunks = []
    while n:
        try:
            c = sock.recv(n)
        except OSError:
            return None
        if not c:
            return None
        chunks.append(c)
        n -= len(c)
    return b"".join(chunks)


class _Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        import sys

        if isinstance(sys.exc_info()[1], OSError):
            return  # the client went away (timeout, close): nothing to report
        super().handle_error(request, client_address)


@dataclass
class _Broker:
    node_id: int
    cluster: FakeKafkaCluster
    server: _Server | None = None
    thread: threading.Thread | None = None
    conns: set[socket.socket] = field(default_factory=set)
    frozen: threading.Event = field(default_factory=threading.Event)
    thawed: threading.Event = field(default_factory=threading.Event)

    @property
    def port(self) -> int:
        assert self.server is not None
        return int(self.server.server_address[1])


class FakeKafkaCluster(GroupTypesMixin):
    """In-process brokers speaking Kafka's protocol; use as a context manager."""

    def __init__(self, brokers: int = 1, version: tuple[int, int] | str = "3.3.1", cluster_id: str = "fake-cluster") -> None:
        """`version`: a release of kwire.MATRIX ("2.1.1", "3.6", ...) or its (major, minor)."""
        if isinstance(version, tuple):
            version = next(r for r in kwire.MATRIX if f"{r}.".startswith(f"{version[0]}.{version[1]}."))
        self.version = version
        self.api_versions: dict[int, tuple[int, int]] = dict(kwire.release_api_versions(version))
        self.cluster_id = cluster_id
        self.brokers = {i: _Broker(i, self) for i in range(brokers)}
        self.topics: dict[str, dict[int, FakePartition]] = {}
        self.topic_ids: dict[str, uuid.UUID] = {}
        self.groups: dict[str, FakeGroup] = {}
        self.requests: Counter[tuple[int, str]] = Counter()
        self.busy_seconds = 0.0  # time spent answering (benchmarks subtract it from the client's time)
        self.lock = threading.RLock()
        self.down: set[int] = set()
        self.moved: dict[str, int] = {}
        self.loading: dict[str, int] = {}
        self.triggers: list[tuple[str, int, Any]] = []
        self.fetches: list[tuple[int, int, int]] = []  # (broker, Fetch version, replica id) of each Fetch
        self.clock_ms = lambda: int(time.time() * 1000)  # commit times of OffsetCommits (tests set their own)

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> FakeKafkaCluster:
        for b in self.brokers.values():
            b.server = _Server(("127.0.0.1", 0), _Handler)
            b.server.broker = b  # type: ignore[attr-defined]
            b.thread = threading.Thread(target=b.server.serve_forever, kwargs={"poll_interval": 0.05}, name=f"fake-broker-{b.node_id}", daemon=True)
            b.thread.start()
        return self

    def stop(self) -> None:
        for b in self.brokers.values():
            b.thawed.set()
            if b.server is not None:
                b.server.shutdown()
                b.server.server_close()
                b.server = None

    def __enter__(self) -> FakeKafkaCluster:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def bootstrap(self) -> str:
        return ",".join(f"127.0.0.1:{b.port}" for b in self.brokers.values())

    def endpoint(self, node_id: int) -> tuple[str, int]:
        return "127.0.0.1", self.brokers[node_id].port

    # ------------------------------------------------------------------ state
    def add_topic(self, name: str, partitions: int, log_end: int | list[int] = 0, **kw: Any) -> None:
        ids = sorted(self.brokers)
        with self.lock:
            self.topic_ids[name] = uuid.uuid5(uuid.NAMESPACE_DNS, name)
            parts = {}
            for p in range(partitions):
                leader = ids[p % len(ids)]
                end = log_end[p] if isinstance(log_end, list) else log_end
                parts[p] = FakePartition(leader, [leader], log_end=end, **kw)
            self.topics[name] = parts

    def partition(self, topic: str, partition: int) -> FakePartition:
        return self.topics[topic][partition]

    # ------------------------------------------------------------------ __consumer_offsets
    def add_offsets_topic(self, partitions: int = 3) -> None:
        """A readable `__consumer_offsets`: from now on every commit is also written there, as the
        coordinator writes it (key version 1, value version 3, by hand from the message specs)."""
        self.add_topic(OFFSETS_TOPIC, partitions, batch_records=1)
        for fp in self.topics[OFFSETS_TOPIC].values():
            fp.stored = []

    def write_commit(self, group: str, topic: str, partition: int, offset: int, commit_ms: int) -> None:
        """A commit as the coordinator stores it: in the group's `__consumer_offsets` partition,
        with its commit time (and the group's offset, as OffsetFetch serves it)."""
        with self.lock:
            g = self.groups.get(group) or self.add_group(group)
            g.offsets[(topic, partition)] = (offset, "")
            self._store_commit(group, topic, partition, offset, commit_ms)

    def _store_commit(self, group: str, topic: str, partition: int, offset: int, commit_ms: int) -> None:
        parts = self.topics.get(OFFSETS_TOPIC)
        if not parts:
            return
        s = lambda x: struct.pack(">h", len(x.encode())) + x.encode()  # noqa: E731 - a Kafka STRING
        key = struct.pack(">h", 1) + s(group) + s(topic) + struct.pack(">i", partition)
        value = struct.pack(">hqi", 3, offset, -1) + s("") + struct.pack(">q", commit_ms)
        parts[offsets_partition_for(group, len(parts))].append(key, value, commit_ms)

    def add_group(self, group_id: str, **kw: Any) -> FakeGroup:
        with self.lock:
            g = FakeGroup(group_id, **kw)
            self.groups[group_id] = g
            return g

    def coordinator_of(self, group: str) -> int:
        """The group's coordinator: moved there by `move_coordinator`, else by `__consumer_offsets`
        partition, skipping brokers that are down (their partitions' leadership moved on)."""
        if group in self.moved:
            return self.moved[group]
        ids = sorted(self.brokers)
        c = ids[offsets_partition_for(group, len(ids))]
        live = [i for i in ids if i not in self.down]
        return c if c not in self.down or not live else live[(ids.index(c) + 1) % len(live)]

    # ------------------------------------------------------------------ failures (coordinator failover tests)
    def kill(self, node_id: int) -> None:
        """SIGKILL: the port refuses connections, open ones are reset, the others stop listing it and
        its groups move to a live broker."""
        b = self.brokers[node_id]
        with self.lock:
            self.down.add(node_id)
            live = sorted(set(self.brokers) - self.down)
            for parts in self.topics.values():  # the controller elects new leaders
                for p, fp in parts.items():
                    if fp.leader == node_id and live:
                        fp.leader = live[p % len(live)]
                        fp.replicas = [fp.leader]
        if b.server is not None:
            b.server.shutdown()
            b.server.server_close()
            b.server = None
        for sock in list(b.conns):
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def freeze(self, node_id: int) -> None:
        """The broker keeps accepting connections and reading requests but never answers again."""
        self.brokers[node_id].frozen.set()

    def move_coordinator(self, group: str, to: int) -> None:
        """Coordination of the group moves: the old coordinator now answers NOT_COORDINATOR."""
        with self.lock:
            self.moved[group] = to

    def load_in_progress(self, group: str, times: int) -> None:
        """The coordinator answers COORDINATOR_LOAD_IN_PROGRESS for the group's next `times` requests."""
        with self.lock:
            self.loading[group] = times

    def after(self, api: str, count: int, action: Any) -> None:
        """Run `action()` once the `count`-th request of `api` (e.g. "DescribeGroups") has been answered."""
        self.triggers.append((api, count, action))

    def _group_error(self, node: int, group: str) -> int:
        """NOT_COORDINATOR / COORDINATOR_LOAD_IN_PROGRESS / NONE for a group request at this broker."""
        if self.coordinator_of(group) != node:
            return NOT_COORDINATOR
        if self.loading.get(group, 0) > 0:
            self.loading[group] -= 1
            return COORDINATOR_LOAD_IN_PROGRESS
        return NONE

    def count(self, api: str) -> dict[int, int]:
        """Requests of one API per broker id."""
        return {n: c for (n, a), c in self.requests.items() if a == api}

    # ------------------------------------------------------------------ protocol
    def _dispatch(self, node_id: int, body: bytes) -> bytes | None:
        start = time.perf_counter()
        try:
            return self._answer(node_id, body)
        finally:
            with self.lock:
                self.busy_seconds += time.perf_counter() - start

    def _answer(self, node_id: int, body: bytes) -> bytes | None:
        api_key, version, correlation_id, req = kwire.decode_request(body)
        name = ApiKey(api_key).name
        with self.lock:
            self.requests[(node_id, name)] += 1
        lo, hi = self.api_versions.get(api_key, (0, -1))
        handler = getattr(self, f"_on_{name}", None)
        if req is None or handler is None or not lo <= version <= hi:
            # ApiVersions: a v0 UNSUPPORTED_VERSION answer; anything else: the broker closes the connection
            return kwire.answer(api_key, version, correlation_id, self.api_versions, None)
        with self.lock:
            fields = handler(node_id, req, version, BODY)
        return kwire.encode_response(api_key, version, correlation_id, fields)

    def _fire(self, api: str) -> None:
        done = [t for t in self.triggers if t[0] == api and sum(self.count(api).values()) >= t[1]]
        for t in done:
            self.triggers.remove(t)
            t[2]()

    def _on_ApiVersions(self, node: int, req: Any, v: int, R: Any) -> dict[str, Any]:
        return kwire.api_versions_body(self.api_versions)

    def _on_Metadata(self, node: int, req: Any, v: int, R: Any) -> dict[str, Any]:
        brokers = [R.MetadataResponseBroker(node_id=i, host="127.0.0.1", port=b.port, rack=None)
                   for i, b in self.brokers.items() if i not in self.down]
        names = list(self.topics) if req.topics is None else [t.name for t in req.topics]
        topics = []
        for name in names:
            parts = self.topics.get(name)
            if parts is None:
                topics.append(R.MetadataResponseTopic(error_code=UNKNOWN_TOPIC_OR_PARTITION, name=name,
                                                      topic_id=uuid.UUID(int=0), is_internal=False, partitions=[]))
                continue
            topics.append(R.MetadataResponseTopic(
                error_code=0, name=name, topic_id=self.topic_ids[name], is_internal=False,
                partitions=[R.MetadataResponseTopic.MetadataResponsePartition(
                    error_code=0, partition_index=p, leader_id=fp.leader, leader_epoch=0,
                    replica_nodes=fp.replicas, isr_nodes=fp.replicas, offline_replicas=[])
                    for p, fp in sorted(parts.items())]))
        return {"throttle_time_ms": 0, "brokers": brokers, "cluster_id": self.cluster_id,
                "controller_id": min(set(self.brokers) - self.down), "topics": topics}

    def _on_FindCoordinator(self, node: int, req: Any, v: int, R: Any) -> dict[str, Any]:
        if v < 4:
            c = self.coordinator_of(req.key)
            return {"throttle_time_ms": 0, "error_code": 0, "error_message": None, "node_id": c,
                    "host": "127.0.0.1", "port": self.brokers[c].port}
        coords = []
        for key in req.coordinator_keys:
            c = self.coordinator_of(key)
            coords.append(R.Coordinator(key=key, node_id=c, host="127.0.0.1", port=self.brokers[c].port,
                                        error_code=0, error_message=None))
        return {"throttle_time_ms": 0, "coordinators": coords}

    def _on_ListGroups(self, node: int, req: Any, v: int, R: Any) -> dict[str, Any]:
        states = set(req.states_filter or []) if v >= 4 else set()
        types = {t.lower() for t in req.types_filter or []} if v >= 5 else set()  # (a 4.x broker matches case-blind)
        groups = [
            R.ListedGroup(group_id=g.group_id, protocol_type=g.protocol_type, group_state=g.state, group_type=g.group_type)
            for g in self.groups.values()
            if self.coordinator_of(g.group_id) == node and (not states or g.state in states)
            and (not types or g.group_type in types)
        ]
        return {"throttle_time_ms": 0, "error_code": 0, "groups": groups}

    def _on_DescribeGroups(self, node: int, req: Any, v: int, R: Any) -> dict[str, Any]:
        out = []
        M = R.DescribedGroup.DescribedGroupMember
        for gid in req.groups:
            code = self._group_error(node, gid)
            if code:
                out.append(R.DescribedGroup(error_code=code, error_message=None, group_id=gid, group_state="",
                                            protocol_type="", protocol_data="", members=[]))
                continue
            g = self.groups.get(gid)
            if g is None:  # v6+ (KIP-1043, Kafka 4.0): GROUP_ID_NOT_FOUND with the coordinator's message
                code, msg = (GROUP_ID_NOT_FOUND, f"Group {gid} not found.") if v >= 6 else (0, None)
                out.append(R.DescribedGroup(error_code=code, error_message=msg, group_id=gid, group_state="Dead",
                                            protocol_type="", protocol_data="", members=[]))
                continue
            members = [
                M(member_id=m.member_id, group_instance_id=m.group_instance_id, client_id=m.client_id,
                  client_host=m.client_host,
                  member_metadata=encode_consumer_subscription(sorted({t for t, _ in m.assignment})),
                  member_assignment=m.assignment_bytes if m.assignment_bytes is not None else encode_consumer_assignment(m.assignment))
                for m in g.members
            ]
            out.append(R.DescribedGroup(error_code=0, error_message=None, group_id=gid, group_state=g.state,
                                        protocol_type=g.protocol_type, protocol_data=g.protocol, members=members))
        return {"throttle_time_ms": 0, "groups": out}

    def _on_ConsumerGroupDescribe(self, node: int, req: Any, v: int, R: Any) -> dict[str, Any]:
        """Groups on the consumer protocol; GROUP_ID_NOT_FOUND for classic (and unknown) groups, as a
        4.0 broker answers, so the client falls back to DescribeGroups."""
        G = R.DescribedGroup
        M = G.Member
        A = M.Assignment
        out = []
        for gid in req.group_ids:
            code = self._group_error(node, gid)
            g = self.groups.get(gid)
            if not code and (g is None or g.group_type != "consumer"):
                code = GROUP_ID_NOT_FOUND
            if code:
                out.append(G(error_code=code, error_message=None if code != GROUP_ID_NOT_FOUND else
                             f"Group {gid} is not a consumer group.", group_id=gid, group_state="", group_epoch=-1,
                             assignment_epoch=-1, assignor_name="", members=[], authorized_operations=-2147483648))
                continue
            assert g is not None

            def assignment(tps: list[TP]) -> Any:
                by_topic: dict[str, list[int]] = {}
                for t, p in tps:
                    by_topic.setdefault(t, []).append(p)
                return A(topic_partitions=[A.TopicPartitions(topic_id=self.topic_ids.get(t, uuid.UUID(int=0)), topic_name=t,
                                                             partitions=ps) for t, ps in by_topic.items()])

            members = [M(member_id=m.member_id, instance_id=m.group_instance_id, rack_id=None, member_epoch=5,
                         client_id=m.client_id, client_host=m.client_host,
                         subscribed_topic_names=sorted({t for t, _ in m.assignment}), subscribed_topic_regex=None,
                         assignment=assignment(m.assignment), target_assignment=assignment(m.assignment), member_type=1)
                       for m in g.members]
            out.append(G(error_code=0, error_message=None, group_id=gid, group_state=g.state, group_epoch=5,
                         assignment_epoch=5, assignor_name=g.protocol or "uniform", members=members,
                         authorized_operations=-2147483648))
        return {"throttle_time_ms": 0, "groups": out}

    def _group_offsets(self, gid: str, topics: Any, R_topic: Any, R_part: Any) -> list[Any]:
        g = self.groups.get(gid)
        offsets = g.offsets if g else {}
        wanted: dict[str, list[int]] = {}
        if topics is None:
            for (t, p) in sorted(offsets):
                wanted.setdefault(t, []).append(p)
        else:
            for t in topics:
                wanted[t.name] = list(t.partition_indexes)
        out = []
        for t, ps in wanted.items():
            parts = []
            for p in ps:
                off, meta = offsets.get((t, p), (-1, ""))
                parts.append(R_part(partition_index=p, committed_offset=off, committed_leader_epoch=-1,
                                    metadata=meta, error_code=0))
            out.append(R_topic(name=t, partitions=parts))
        return out

    def _on_OffsetFetch(self, node: int, req: Any, v: int, R: Any) -> dict[str, Any]:
        if v < 8:
            code = self._group_error(node, req.group_id)
            if code:
                return {"throttle_time_ms": 0, "topics": [], "error_code": code}
            T = R.OffsetFetchResponseTopic
            return {"throttle_time_ms": 0, "error_code": 0,
                    "topics": self._group_offsets(req.group_id, req.topics, T, T.OffsetFetchResponsePartition)}
        groups = []
        G = R.OffsetFetchResponseGroup
        T = G.OffsetFetchResponseTopics
        for rg in req.groups:
            code = self._group_error(node, rg.group_id)
            if code:
                groups.append(G(group_id=rg.group_id, topics=[], error_code=code))
                continue
            groups.append(G(group_id=rg.group_id, error_code=0,
                            topics=self._group_offsets(rg.group_id, rg.topics, T, T.OffsetFetchResponsePartitions)))
        return {"throttle_time_ms": 0, "groups": groups}

    def _on_ListOffsets(self, node: int, req: Any, v: int, R: Any) -> dict[str, Any]:
        T = R.ListOffsetsTopicResponse
        P = T.ListOffsetsPartitionResponse
        topics = []
        for t in req.topics:
            parts = []
            for rp in t.partitions:
                fp = self.topics.get(t.name, {}).get(rp.partition_index)
                if fp is None:
                    parts.append(P(partition_index=rp.partition_index, error_code=UNKNOWN_TOPIC_OR_PARTITION,
                                   timestamp=-1, offset=-1, leader_epoch=-1, old_style_offsets=[]))
                    continue
                if fp.leader != node:
                    parts.append(P(partition_index=rp.partition_index, error_code=NOT_LEADER_OR_FOLLOWER,
                                   timestamp=-1, offset=-1, leader_epoch=-1, old_style_offsets=[]))
                    continue
                ts = rp.timestamp
                if ts == -1:  # isolation level 1 (read_committed, v2+): the last stable offset
                    committed = getattr(req, "isolation_level", 0) == 1 and fp.stable_end is not None
                    off, rts = (fp.stable_end if committed else fp.log_end), -1
                elif ts == -2:
                    off, rts = fp.log_start, -1
                elif ts == -3:
                    off, rts = (fp.log_end - 1, fp.timestamp_of(fp.log_end - 1)) if fp.log_end > fp.log_start else (-1, -1)
                else:
                    off, rts = fp.offset_for_time(ts)
                parts.append(P(partition_index=rp.partition_index, error_code=0, timestamp=rts, offset=off,
                               leader_epoch=0, old_style_offsets=[off]))
            topics.append(T(name=t.name, partitions=parts))
        return {"throttle_time_ms": 0, "topics": topics}

    def _on_Fetch(self, node: int, req: Any, v: int, R: Any) -> dict[str, Any]:
        T = R.FetchableTopicResponse
        P = T.PartitionData
        by_id = {tid: name for name, tid in self.topic_ids.items()}
        budget = req.max_bytes if v >= 3 else 2**31 - 1
        first_with_data = True
        responses = []
        state = getattr(req, "replica_state", None)
        replica_id = getattr(state, "replica_id", -1) if v >= 15 else req.replica_id
        debugging = replica_id == -2  # a debugging replica: any replica answers, from its own log
        self.fetches.append((node, v, replica_id))
        for t in req.topics:
            name = by_id.get(t.topic_id) if v >= 13 else t.topic
            parts = []
            for rp in t.partitions:
                fp = self.topics.get(name or "", {}).get(rp.partition)
                err, records = NONE, b""
                end = fp.log_end if fp is None or not debugging else fp.end_of(node)
                if fp is None:
                    err = UNKNOWN_TOPIC_OR_PARTITION
                elif fp.leader != node and not (debugging and node in fp.replicas):
                    err = NOT_LEADER_OR_FOLLOWER
                elif not fp.log_start <= rp.fetch_offset <= end:
                    err = OFFSET_OUT_OF_RANGE
                elif budget <= 0:
                    records = b""  # the response's max_bytes is used up: nothing more, no error
                else:
                    limit = min(rp.partition_max_bytes, budget)
                    base = rp.fetch_offset - (rp.fetch_offset % fp.batch_records)
                    base = max(base, fp.log_start)
                    chunks: list[bytes] = []
                    size = 0
                    while base < end:
                        b = fp.batch(base, node, end) if debugging else fp.batch(base)
                        if size + len(b) > limit:
                            if not chunks:
                                chunks.append(b if first_with_data else b[: max(0, limit)])
                                size += len(chunks[-1])
                            break
                        chunks.append(b)
                        size += len(b)
                        base = min(base + fp.batch_records, end)
                    records = b"".join(chunks)
                    if records:
                        first_with_data = False
                        budget -= len(records)
                hw = (min(end, fp.log_end) if debugging else fp.log_end) if fp else -1
                parts.append(P(partition_index=rp.partition, error_code=err, high_watermark=hw, last_stable_offset=hw,
                               log_start_offset=fp.log_start if fp else -1, aborted_transactions=None,
                               preferred_read_replica=-1, records=records))
            responses.append(T(topic=name, topic_id=t.topic_id, partitions=parts))
        return {"throttle_time_ms": 0, "error_code": 0, "session_id": 0, "responses": responses}

    def _on_OffsetCommit(self, node: int, req: Any, v: int, R: Any) -> dict[str, Any]:
        T = R.OffsetCommitResponseTopic
        P = T.OffsetCommitResponsePartition
        gid = req.group_id
        g = self.groups.get(gid)
        code = self._group_error(node, gid)
        if code:
            pass
        elif g is not None and g.state not in ("Empty", "Dead") and req.generation_id_or_member_epoch < 0:
            code = UNKNOWN_MEMBER_ID
        else:
            code = NONE
        if code == NONE and g is None:
            g = self.add_group(gid)
        topics = []
        for t in req.topics:
            parts = []
            for rp in t.partitions:
                pcode = code
                if pcode == NONE and rp.partition_index not in self.topics.get(t.name, {}):
                    pcode = UNKNOWN_TOPIC_OR_PARTITION
                if pcode == NONE:
                    assert g is not None
                    g.offsets[(t.name, rp.partition_index)] = (rp.committed_offset, rp.committed_metadata or "")
                    self._store_commit(gid, t.name, rp.partition_index, rp.committed_offset, self.clock_ms())
                parts.append(P(partition_index=rp.partition_index, error_code=pcode))
            topics.append(T(name=t.name, partitions=parts))
        if code == NONE and g is not None:
            g.commits += 1
        return {"throttle_time_ms": 0, "topics": topics}
