"""Fake Kafka brokers that speak the wire protocol, for testing the Admin API path without a JVM.

Each broker listens on its own 127.0.0.1 port and behaves as a broker of one Kafka `release` does on
the wire: it advertises that release's ApiVersions table (kwire.release_api_versions), answers every
request at the version the client negotiated with exactly the fields that version has (kwire's own
encoder, not kafka-python's classes), closes the connection on a version the release does not
accept and answers an unsupported ApiVersions with UNSUPPORTED_VERSION, as brokers do.  It serves
ApiVersions, Metadata, DescribeCluster, ListPartitionReassignments, AlterPartitionReassignments,
ElectLeaders, DescribeLogDirs, AlterReplicaLogDirs, DescribeConfigs, AlterConfigs and IncrementalAlterConfigs.
Cluster state is shared and follows a KRaft/2.4+ controller's rules (a reassignment's replica set
is target + removing, adding/removing listed until the test completes it; controller-only
requests to another broker get NOT_CONTROLLER; elections over all partitions omit
ELECTION_NOT_NEEDED).  Tests drive the "controller" with `complete_reassignment` and friends, and
read `requests` to see what the client sent.
"""

from __future__ import annotations

import socket
import struct
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from tests.support import kwire
from tests.support.kwire import BODY

NONE = 0
UNKNOWN_TOPIC_OR_PARTITION = 3
REPLICA_NOT_AVAILABLE = 9
INVALID_REPLICA_ASSIGNMENT = 39
INVALID_CONFIG = 40
INVALID_REQUEST = 42
NOT_CONTROLLER = 41
PREFERRED_LEADER_NOT_AVAILABLE = 80
ELIGIBLE_LEADERS_NOT_AVAILABLE = 83
ELECTION_NOT_NEEDED = 84
NO_REASSIGNMENT_IN_PROGRESS = 85

TOPIC, BROKER = 2, 4
DYNAMIC_TOPIC_CONFIG, DYNAMIC_BROKER_CONFIG, STATIC_BROKER_CONFIG, DEFAULT_CONFIG = 1, 2, 4, 5
SET, DELETE, APPEND, SUBTRACT = 0, 1, 2, 3

@dataclass
class FakePartition:
    replicas: list[int]
    leader: int = -1
    isr: list[int] = field(default_factory=list)
    adding: list[int] = field(default_factory=list)
    removing: list[int] = field(default_factory=list)
    target: list[int] | None = None
    size: int = 0
    log_dir: dict[int, str] = field(default_factory=dict)
    future_dir: dict[int, str] = field(default_factory=dict)


class FakeKafka:
    """A cluster of fake brokers: `with FakeKafka({1: "r1", 2: "r2"}) as k: k.bootstrap`."""

    def __init__(self, brokers: dict[int, str | None], controller: int | None = None,
                 log_dirs: tuple[str, ...] = ("/var/lib/kafka/data",), release: str = kwire.MATRIX[-1]) -> None:
        self.release = release
        self.api_versions = dict(kwire.release_api_versions(release))
        self.fail_request: dict[int, int] = {}  # api key -> how many more of its requests get no answer
        self.rack = dict(brokers)
        self.alive = set(brokers)
        self.controller_id = controller if controller is not None else min(brokers)
        self.log_dirs = log_dirs
        self.log_dir_errors: dict[tuple[int, str], int] = {}  # (broker, log dir) -> error code (56: offline)
        self.topics: dict[str, dict[int, FakePartition]] = {}
        self.configs: dict[tuple[int, str], dict[str, str]] = {}
        self.static_broker = {"num.io.threads": "8"}
        self.requests: list[tuple[int, Any]] = []
        self.fail_alter: dict[tuple[str, int], tuple[int, str]] = {}
        self.fail_alter_request: int | None = None  # a top-level error code for AlterPartitionReassignments
        self.fail_configs: dict[tuple[int, str], str] = {}
        self.silent = False
        self.broker_order: list[int] | None = None  # the order Metadata/DescribeCluster list brokers in
        self.busy_seconds = 0.0  # time spent building and encoding answers (benchmarks subtract it)
        self.lock = threading.RLock()
        self._servers: dict[int, socket.socket] = {}
        self._threads: list[threading.Thread] = []
        self._conns: list[socket.socket] = []
        self._stop = threading.Event()
        self.port: dict[int, int] = {}

    # -- lifecycle ---------------------------------------------------------------------------------

    def start(self) -> FakeKafka:
        for b in self.rack:
            srv = socket.socket()
            srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            srv.bind(("127.0.0.1", 0))
            srv.listen(16)
            srv.settimeout(0.2)
            self._servers[b] = srv
            self.port[b] = srv.getsockname()[1]
            t = threading.Thread(target=self._accept, args=(b, srv), daemon=True)
            t.start()
            self._threads.append(t)
        return self

    def stop(self) -> None:
        self._stop.set()
        for srv in self._servers.values():
            try:
                srv.shutdown(socket.SHUT_RDWR)  # wakes the accept() at once (Linux)
            except OSError:
                pass
            srv.close()
        for c in list(self._conns):
            try:
                c.close()
            except OSError:
                pass
        for t in self._threads:
            t.join(2)

    def __enter__(self) -> FakeKafka:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def bootstrap(self) -> str:
        return ",".join(f"127.0.0.1:{self.port[b]}" for b in sorted(self.port))

    def _accept(self, broker: int, srv: socket.socket) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = srv.accept()
            except (TimeoutError, OSError):
                continue
            self._conns.append(conn)
            threading.Thread(target=self._serve, args=(broker, conn), daemon=True).start()

    def _serve(self, broker: int, conn: socket.socket) -> None:
        try:
            while not self._stop.is_set():
                head = _recv(conn, 4)
                data = _recv(conn, struct.unpack(">i", head)[0])
                key, version, correlation_id, request = kwire.decode_request(data)
                started = time.perf_counter()
                frame = None
                with self.lock:
                    lo, hi = self.table_for(broker).get(key, (0, -1))
                    if request is not None and lo <= version <= hi:
                        self.requests.append((key, request))
                        if self.silent and key != 18:
                            continue
                        if self.fail_request.get(key, 0) > 0:  # the broker dies mid-request
                            self.fail_request[key] -= 1
                            break
                        frame = kwire.encode_response(key, version, correlation_id,
                                                      getattr(self, f"_on_{key}")(broker, request))
                if frame is None:
                    frame = kwire.answer(key, version, correlation_id, self.table_for(broker), None)
                    if frame is None:
                        break  # a version the release does not accept: brokers close the connection
                with self.lock:
                    self.busy_seconds += time.perf_counter() - started
                conn.sendall(frame)
        except (EOFError, OSError, ValueError, struct.error):  # gone, or a request we cannot parse: close
            pass
        finally:
            conn.close()

    # -- cluster state helpers (tests call these) -------------------------------------------------

    def add_topic(self, name: str, assignment: dict[int, list[int]], size: int = 0) -> None:
        with self.lock:
            parts = {}
            for p, reps in assignment.items():
                isr = [b for b in reps if b in self.alive]
                parts[p] = FakePartition(list(reps), isr[0] if isr else -1, isr, size=size,
                                         log_dir={b: self.log_dirs[0] for b in reps})
            self.topics[name] = parts

    def partition(self, topic: str, p: int) -> FakePartition:
        return self.topics[topic][p]

    def assignment(self, topic: str) -> dict[int, list[int]]:
        return {p: list(fp.replicas) for p, fp in self.topics[topic].items()}

    def ongoing(self) -> dict[tuple[str, int], FakePartition]:
        return {(t, p): fp for t, parts in self.topics.items() for p, fp in parts.items() if fp.target is not None}

    def complete_reassignment(self, only: set[tuple[str, int]] | None = None) -> None:
        with self.lock:
            for (t, p), fp in self.ongoing().items():
                if only is not None and (t, p) not in only:
                    continue
                target = fp.target or fp.replicas
                for b in fp.removing:
                    fp.log_dir.pop(b, None)
                for b in fp.adding:
                    fp.log_dir[b] = self.log_dirs[0]
                fp.replicas, fp.isr = list(target), [b for b in target if b in self.alive]
                if fp.leader not in target:
                    fp.leader = fp.isr[0] if fp.isr else -1
                fp.adding, fp.removing, fp.target = [], [], None

    def complete_log_dir_moves(self) -> None:
        with self.lock:
            for parts in self.topics.values():
                for fp in parts.values():
                    fp.log_dir.update(fp.future_dir)
                    fp.future_dir.clear()

    def config(self, entity: str, name: str) -> dict[str, str]:
        return dict(self.configs.get((TOPIC if entity == "topics" else BROKER, name), {}))

    def set_config(self, entity: str, name: str, values: dict[str, str]) -> None:
        self.configs[(TOPIC if entity == "topics" else BROKER, name)] = dict(values)

    def sent(self, cls: type) -> list[Any]:
        """The requests of one API (a kafka-python request class names it) the brokers answered."""
        return [r for k, r in self.requests if k == cls.API_KEY]  # type: ignore[attr-defined]

    # -- handlers ----------------------------------------------------------------------------------

    def table_for(self, node: int) -> dict[int, tuple[int, int]]:
        """The ApiVersions table node `node` advertises (subclasses with controller listeners differ)."""
        return self.api_versions

    def _on_18(self, broker: int, req: Any) -> Any:
        return kwire.api_versions_body(self.table_for(broker))

    def _brokers(self, cls: Any, id_field: str) -> list[Any]:
        # a real broker lists them in its metadata cache's order, not always sorted (`broker_order`)
        order = [b for b in self.broker_order if b in self.alive] if self.broker_order else sorted(self.alive)
        return [cls(**{id_field: b}, host="127.0.0.1", port=self.port[b], rack=self.rack[b]) for b in order]

    def _on_3(self, broker: int, req: Any) -> Any:
        R = BODY
        everything = req.topics is None or (req.api_version == 0 and not req.topics)  # v0: [] means all
        names = sorted(self.topics) if everything else [t.name for t in req.topics]
        topics = []
        for name in names:
            parts = self.topics.get(name)
            if parts is None:
                topics.append(R.MetadataResponseTopic(error_code=UNKNOWN_TOPIC_OR_PARTITION, name=name, partitions=[]))
                continue
            topics.append(R.MetadataResponseTopic(error_code=0, name=name, is_internal=False, partitions=[
                R.MetadataResponseTopic.MetadataResponsePartition(
                    error_code=0, partition_index=p, leader_id=fp.leader, leader_epoch=0,
                    replica_nodes=list(fp.replicas), isr_nodes=list(fp.isr),
                    offline_replicas=[b for b in fp.replicas if b not in self.alive])
                for p, fp in sorted(parts.items())]))
        return R(throttle_time_ms=0, brokers=self._brokers(R.MetadataResponseBroker, "node_id"),
                 cluster_id="fake-cluster", controller_id=self.controller_id, topics=topics)

    def _on_60(self, broker: int, req: Any) -> Any:
        R = BODY
        return R(throttle_time_ms=0, error_code=0, error_message=None, cluster_id="fake-cluster",
                 controller_id=self.controller_id, brokers=self._brokers(R.DescribeClusterBroker, "broker_id"))

    def _on_46(self, broker: int, req: Any) -> Any:
        R = BODY
        if broker != self.controller_id:
            return R(throttle_time_ms=0, error_code=NOT_CONTROLLER, error_message=None, topics=[])
        wanted = None if req.topics is None else {(t.name, p) for t in req.topics for p in t.partition_indexes}
        by_topic: dict[str, list[Any]] = {}
        for (t, p), fp in sorted(self.ongoing().items()):
            if wanted is not None and (t, p) not in wanted:
                continue
            by_topic.setdefault(t, []).append(R.OngoingTopicReassignment.OngoingPartitionReassignment(
                partition_index=p, replicas=list(fp.replicas), adding_replicas=list(fp.adding),
                removing_replicas=list(fp.removing)))
        return R(throttle_time_ms=0, error_code=0, error_message=None, topics=[
            R.OngoingTopicReassignment(name=t, partitions=ps) for t, ps in by_topic.items()])

    def _alter_one(self, topic: str, p: int, replicas: list[int] | None) -> tuple[int, str | None]:
        if (topic, p) in self.fail_alter:
            return self.fail_alter[(topic, p)]
        fp = self.topics.get(topic, {}).get(p)
        if fp is None:
            return UNKNOWN_TOPIC_OR_PARTITION, None
        if replicas is None:
            if fp.target is None:
                return NO_REASSIGNMENT_IN_PROGRESS, None
            original = [b for b in fp.replicas if b not in fp.adding]
            fp.replicas, fp.isr = original, [b for b in fp.isr if b in original]
            fp.adding, fp.removing, fp.target = [], [], None
            return NONE, None
        if len(set(replicas)) != len(replicas):
            return INVALID_REPLICA_ASSIGNMENT, f"Duplicate replica assignment: {replicas}"
        dead = [b for b in replicas if b not in self.alive]
        if dead:
            return INVALID_REPLICA_ASSIGNMENT, f"Replica assignment has brokers that are not alive. Replica list: {replicas}, live broker list: {sorted(self.alive)}"
        original = [b for b in fp.replicas if b not in fp.adding] if fp.target is not None else list(fp.replicas)
        if set(replicas) == set(original):  # same replicas, maybe reordered: done at once
            fp.replicas, fp.adding, fp.removing, fp.target = list(replicas), [], [], None
            return NONE, None
        fp.adding = [b for b in replicas if b not in original]
        fp.removing = [b for b in original if b not in replicas]
        fp.replicas = list(replicas) + fp.removing
        fp.target = list(replicas)
        return NONE, None

    def _on_45(self, broker: int, req: Any) -> Any:
        R = BODY
        if broker != self.controller_id:
            return R(throttle_time_ms=0, error_code=NOT_CONTROLLER, error_message=None, responses=[])
        if self.fail_alter_request is not None:
            return R(throttle_time_ms=0, error_code=self.fail_alter_request, error_message="refused", responses=[])
        out = []
        for t in req.topics:
            parts = []
            for p in t.partitions:
                code, msg = self._alter_one(t.name, p.partition_index, None if p.replicas is None else list(p.replicas))
                parts.append(R.ReassignableTopicResponse.ReassignablePartitionResponse(
                    partition_index=p.partition_index, error_code=code, error_message=msg))
            out.append(R.ReassignableTopicResponse(name=t.name, partitions=parts))
        return R(throttle_time_ms=0, error_code=0, error_message=None, responses=out)

    def _elect_one(self, topic: str, p: int, unclean: bool) -> tuple[int, str | None]:
        fp = self.topics.get(topic, {}).get(p)
        if fp is None:
            return UNKNOWN_TOPIC_OR_PARTITION, "The partition does not exist."
        if unclean:
            if fp.leader in self.alive:
                return ELECTION_NOT_NEEDED, "Leader election not needed for topic partition."
            live = [b for b in fp.replicas if b in self.alive]
            if not live:
                return ELIGIBLE_LEADERS_NOT_AVAILABLE, f"Failed to elect leader for partition {topic}-{p} under strategy UncleanLeaderElectionStrategy"
            fp.leader, fp.isr = live[0], [live[0]]
            return NONE, None
        preferred = fp.replicas[0]
        if fp.leader == preferred:
            return ELECTION_NOT_NEEDED, "Leader election not needed for topic partition."
        if preferred in self.alive and preferred in fp.isr:
            fp.leader = preferred
            return NONE, None
        return PREFERRED_LEADER_NOT_AVAILABLE, f"Failed to elect leader for partition {topic}-{p} under strategy PreferredReplicaPartitionLeaderElectionStrategy"

    def _on_43(self, broker: int, req: Any) -> Any:
        R = BODY
        if broker != self.controller_id:
            return R(throttle_time_ms=0, error_code=NOT_CONTROLLER, replica_election_results=[])
        unclean = getattr(req, "election_type", 0) == 1
        everything = req.topic_partitions is None
        wanted = ([(t, p) for t in sorted(self.topics) for p in sorted(self.topics[t])] if everything
                  else [(tp.topic, p) for tp in req.topic_partitions for p in tp.partitions])
        by_topic: dict[str, list[Any]] = {}
        for t, p in wanted:
            code, msg = self._elect_one(t, p, unclean)
            if everything and code == ELECTION_NOT_NEEDED:
                continue  # KafkaApis drops these when the request named no partitions
            by_topic.setdefault(t, []).append(R.ReplicaElectionResult.PartitionResult(
                partition_id=p, error_code=code, error_message=msg))
        return R(throttle_time_ms=0, error_code=0, replica_election_results=[
            R.ReplicaElectionResult(topic=t, partition_result=ps) for t, ps in by_topic.items()])

    def _on_35(self, broker: int, req: Any) -> Any:
        R = BODY
        wanted = None if req.topics is None else {(t.topic, p) for t in req.topics for p in t.partitions}
        results = []
        for d in self.log_dirs:
            by_topic: dict[str, list[Any]] = {}
            if self.log_dir_errors.get((broker, d)):  # an offline dir: the error and no partitions
                results.append(R.DescribeLogDirsResult(error_code=self.log_dir_errors[(broker, d)], log_dir=d,
                                                       topics=[]))
                continue
            keys = sorted(wanted) if wanted is not None else [(t, p) for t in sorted(self.topics) for p in sorted(self.topics[t])]
            for t, p in keys:
                fp = self.topics.get(t, {}).get(p)
                if fp is not None:
                    if fp.log_dir.get(broker) == d:
                        by_topic.setdefault(t, []).append(R.DescribeLogDirsResult.DescribeLogDirsTopic.DescribeLogDirsPartition(
                            partition_index=p, partition_size=fp.size, offset_lag=0, is_future_key=False))
                    if fp.future_dir.get(broker) == d:
                        by_topic.setdefault(t, []).append(R.DescribeLogDirsResult.DescribeLogDirsTopic.DescribeLogDirsPartition(
                            partition_index=p, partition_size=0, offset_lag=fp.size, is_future_key=True))
            results.append(R.DescribeLogDirsResult(error_code=0, log_dir=d, topics=[
                R.DescribeLogDirsResult.DescribeLogDirsTopic(name=t, partitions=ps) for t, ps in by_topic.items()]))
        return R(throttle_time_ms=0, error_code=0, results=results)

    def _on_34(self, broker: int, req: Any) -> Any:
        R = BODY
        out: dict[str, list[Any]] = {}
        for d in req.dirs:
            for t in d.topics:
                for p in t.partitions:
                    fp = self.topics.get(t.name, {}).get(p)
                    if fp is None or broker not in fp.log_dir:
                        code = REPLICA_NOT_AVAILABLE
                    else:
                        code = NONE
                        if fp.log_dir[broker] != d.path:
                            fp.future_dir[broker] = d.path
                    out.setdefault(t.name, []).append(
                        R.AlterReplicaLogDirTopicResult.AlterReplicaLogDirPartitionResult(partition_index=p, error_code=code))
        return R(throttle_time_ms=0, results=[
            R.AlterReplicaLogDirTopicResult(topic_name=t, partitions=ps) for t, ps in out.items()])

    def _on_32(self, broker: int, req: Any) -> Any:
        R = BODY
        results = []
        for res in req.resources:
            key = (res.resource_type, res.resource_name)
            entries = []
            if res.resource_type == TOPIC and res.resource_name not in self.topics:
                results.append(R.DescribeConfigsResult(error_code=UNKNOWN_TOPIC_OR_PARTITION, error_message=None,
                                                       resource_type=res.resource_type, resource_name=res.resource_name,
                                                       configs=[]))
                continue
            dynamic = DYNAMIC_TOPIC_CONFIG if res.resource_type == TOPIC else DYNAMIC_BROKER_CONFIG
            items = [(k, v, dynamic) for k, v in sorted(self.configs.get(key, {}).items())]
            if res.resource_type == BROKER:
                items += [(k, v, STATIC_BROKER_CONFIG) for k, v in self.static_broker.items()]
            else:
                items.append(("cleanup.policy", "delete", DEFAULT_CONFIG))
            for k, v, source in items:
                if res.configuration_keys is not None and k not in res.configuration_keys:
                    continue
                entries.append(R.DescribeConfigsResult.DescribeConfigsResourceResult(
                    name=k, value=v, read_only=source == STATIC_BROKER_CONFIG, config_source=source,
                    is_default=source == DEFAULT_CONFIG, is_sensitive=False, synonyms=[], config_type=2,
                    documentation=None))
            results.append(R.DescribeConfigsResult(error_code=0, error_message=None, resource_type=res.resource_type,
                                                   resource_name=res.resource_name, configs=entries))
        return R(throttle_time_ms=0, results=results)

    def _on_33(self, broker: int, req: Any) -> Any:
        """AlterConfigs (before IncrementalAlterConfigs): each resource's dynamic configs become exactly the
        request's; a broker's own configs only on that broker (Kafka 2.x AdminManager: "Unexpected broker id")."""
        R = BODY
        out = []
        for res in req.resources:
            key = (res.resource_type, res.resource_name)
            code, message = NONE, None
            if key in self.fail_configs:
                code, message = INVALID_CONFIG, self.fail_configs[key]
            elif res.resource_type == BROKER and res.resource_name not in ("", str(broker)):
                code, message = INVALID_REQUEST, f"Unexpected broker id, expected {broker} but received {res.resource_name}"
            elif res.resource_type == TOPIC and res.resource_name not in self.topics:
                code = UNKNOWN_TOPIC_OR_PARTITION
            elif not req.validate_only:
                self.configs[key] = {c.name: c.value for c in res.configs}
                if not self.configs[key]:
                    self.configs.pop(key)
            out.append(R.AlterConfigsResourceResponse(error_code=code, error_message=message,
                                                      resource_type=res.resource_type, resource_name=res.resource_name))
        return R(throttle_time_ms=0, responses=out)

    def _on_44(self, broker: int, req: Any) -> Any:
        R = BODY
        out = []
        for res in req.resources:
            key = (res.resource_type, res.resource_name)
            if key in self.fail_configs:
                out.append(R.AlterConfigsResourceResponse(error_code=INVALID_CONFIG, error_message=self.fail_configs[key],
                                                          resource_type=res.resource_type, resource_name=res.resource_name))
                continue
            if not req.validate_only:
                cfg = self.configs.setdefault(key, {})
                for c in res.configs:
                    if c.config_operation == SET:
                        cfg[c.name] = c.value
                    elif c.config_operation == DELETE:
                        cfg.pop(c.name, None)
                    elif c.config_operation == APPEND:
                        cfg[c.name] = ",".join(x for x in (cfg.get(c.name, ""), c.value) if x)
                    elif c.config_operation == SUBTRACT:
                        drop = set((c.value or "").split(","))
                        cfg[c.name] = ",".join(x for x in cfg.get(c.name, "").split(",") if x and x not in drop)
                if not cfg:
                    self.configs.pop(key, None)
            out.append(R.AlterConfigsResourceResponse(error_code=0, error_message=None, resource_type=res.resource_type,
                                                      resource_name=res.resource_name))
        return R(throttle_time_ms=0, responses=out)


def _recv(conn: socket.socket, n: int) -> bytes:
    buf = b""
    while len(buf) < n:
        chunk = conn.recv(n - len(buf))
        if not chunk:
            raise EOFError
        buf += chunk
    return buf
