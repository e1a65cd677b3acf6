"""The Admin API backend: our `Cluster` mapped onto kafka-python's `KafkaAdminClient`.

kafka-python 3.0.12 has every call the tools need (Metadata, ListPartitionReassignments,
AlterPartitionReassignments, ElectLeaders, DescribeLogDirs, AlterReplicaLogDirs, DescribeConfigs,
IncrementalAlterConfigs), so this module mostly translates arguments and results and turns client
errors into one-line `ClusterError`s.  Two things it does itself:

- Brokers and controller come from a Metadata request we build, not `describe_cluster()`: kafka-python
  3.0.x reads DescribeCluster's `endpoint_type`, which versions 0 (all a 2.8-3.6 broker accepts) lacks,
  and Metadata answers the same (live, unfenced brokers; the controller id) on every release.
- Before a request an old broker does not have (ElectLeaders before 2.2, IncrementalAlterConfigs before
  2.3, the reassignment requests before 2.4) it checks the broker's ApiVersions and raises
  `BrokerTooOldError` (CLI exit 2) naming the request and the broker's release (cluster/versions.py),
  before anything is changed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, TypeVar

from kafkatool.cluster.backend import Cluster, UnknownTopicsError
from kafkatool.cluster.connect import ClusterError, ClusterInputError, admin_client, kafka_error_text
from kafkatool.cluster.model import (
    ELECTION_NOT_NEEDED,
    Broker,
    ConfigChange,
    ElectionResult,
    OngoingReassignment,
    PartitionState,
    TopicPartition,
    TopicPartitionReplica,
)
from kafkatool.cluster.versions import API, ApiKey, client_release, describe_broker, lacks
from kafkatool.release import Release

T = TypeVar("T")

UNKNOWN_TOPIC_OR_PARTITION = 3
ELECTION_NOT_NEEDED_CODE = 84
ELECTION_TYPES = {"preferred": 0, "unclean": 1}


def java_exception(error: Any, message: str | None = None) -> str:
    """`Throwable.toString()` of the Java client's exception for a kafka-python error class."""
    name = getattr(error, "__name__", type(error).__name__)
    if name.endswith("Error"):
        name = name[: -len("Error")] + "Exception"
    text = message if message is not None else getattr(error, "description", "")
    return f"org.apache.kafka.common.errors.{name}" + (f": {text}" if text else "")


class BrokerTooOldError(ClusterInputError):
    """The broker has no version of a request the command needs (exit 2: the command cannot work there)."""


class ConfigsRefusedError(ClusterError):
    """Some resources of an IncrementalAlterConfigs were refused: `refused` holds their (entity, name)."""

    def __init__(self, message: str, refused: set[tuple[str, str]]) -> None:
        super().__init__(message)
        self.refused = refused


class AdminCluster(Cluster):
    kind = "admin"

    def __init__(self, client: Any, bootstrap: str, timeout: float) -> None:
        self.client = client
        self.source = f"bootstrap-server:{bootstrap}"
        self.bootstrap = bootstrap
        self.timeout = timeout
        self._cluster: dict[str, Any] | None = None

    @classmethod
    def connect(cls, bootstrap: str, command_config: str | Path | None, timeout: float) -> AdminCluster:
        return cls(admin_client(bootstrap, command_config, timeout), bootstrap, timeout)

    @property
    def timeout_ms(self) -> int:
        return int(self.timeout * 1000)

    def _call(self, what: str, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        from kafka.errors import IncompatibleBrokerVersion, KafkaError, KafkaTimeoutError

        try:
            return fn(*args, **kwargs)
        except KafkaTimeoutError:
            raise ClusterError(f"{what}: no answer from {self.bootstrap} within {self.timeout:g}s") from None
        except IncompatibleBrokerVersion as exc:
            raise ClusterError(f"{what}: the brokers do not support it ({exc})") from None
        except KafkaError as exc:
            # kafka-python puts the whole request and response in some messages: keep the error's name.
            raise ClusterError(f"{what}: {kafka_error_text(exc)}") from None
        except OSError as exc:
            raise ClusterError(f"{what}: {exc}") from None

    def api_versions(self) -> dict[int, tuple[int, int]] | None:
        """The bootstrap broker's ApiVersions table (key -> (min, max)), None when the client has none."""
        data = getattr(getattr(self.client, "_manager", None), "broker_version_data", None)
        table = getattr(data, "api_versions", None)
        return dict(table) if isinstance(table, dict) else None

    def negotiated_release(self) -> Release | None:
        """The bootstrap broker's release as its ApiVersions show it (for `release.text_release`)."""
        return client_release(self.client)

    def _need(self, what: str, key: int, version: int = 0, since: Release | None = None) -> None:
        """BrokerTooOldError unless the broker accepts request `key` at `version` or later (which came with
        `since`); a client without a table passes: the call itself decides."""
        table = self.api_versions()
        if table is None or (not lacks(table, key) and table[key][1] >= version):
            return
        name, first = API[key]
        name, since = (f"{name} v{version}", since or first) if version else (name, first)
        who = "the broker at {} is" if "," not in self.bootstrap else "the brokers at {} are"
        raise BrokerTooOldError(f"{what} needs {name} (Kafka >= {since}); {who.format(self.bootstrap)} "
                                f"{describe_broker(table, since)}")

    def close(self) -> None:
        try:
            self.client.close()
        except Exception:  # closing must not mask the real error
            pass

    # -- reads --------------------------------------------------------------------------------

    def _describe_cluster(self) -> dict[str, Any]:
        """Brokers and controller id from a Metadata request for no topics (see the module docstring)."""
        if self._cluster is None:
            from kafka.protocol.metadata import MetadataRequest

            request = MetadataRequest(topics=[], allow_auto_topic_creation=False)
            manager = self.client._manager
            response = self._call("describe cluster", manager.run, manager.send, request)
            self._cluster = {
                "brokers": [(int(b.node_id), b.host, int(b.port), getattr(b, "rack", None)) for b in response.brokers],
                "controller_id": getattr(response, "controller_id", -1),
            }
        return self._cluster

    def brokers(self) -> list[Broker]:
        out = [Broker(bid, host or "", port, rack) for bid, host, port, rack in self._describe_cluster()["brokers"]]
        return sorted(out, key=lambda b: b.id)

    def node_ids(self) -> list[int]:
        """Broker ids as the Java admin's `describeCluster().nodes()` returns them: the values of a
        `HashMap<Integer, Node>` (MetadataResponse.brokers(), DescribeClusterResponse.nodes()), so in
        that map's order whatever order the broker listed them in."""
        from kafkatool.jvm.java_collections import int_set_order

        return int_set_order([bid for bid, _, _, _ in self._describe_cluster()["brokers"]])

    def describe_log_dirs(self, brokers: list[int]) -> dict[int, Any]:
        """DescribeLogDirs for all topics on each broker (cluster/logdirs.py), bounded by the timeout."""
        from kafkatool.cluster.logdirs import describe_log_dirs

        return describe_log_dirs(self.client, brokers, self.timeout)

    def controller(self) -> int | None:
        cid = self._describe_cluster()["controller_id"]
        return None if cid is None or cid < 0 else int(cid)

    def topics(self) -> list[str]:
        return sorted(self._call("list topics", self.client.list_topics))

    def partition_states(self, topics: Iterable[str] | None = None) -> dict[TopicPartition, PartitionState]:
        names = list(dict.fromkeys(topics)) if topics is not None else None
        if names == []:
            return {}
        described = self._call("describe topics", self.client.describe_topics, names)
        by_name = {t["name"]: t for t in described}
        out: dict[TopicPartition, PartitionState] = {}
        for name in names if names is not None else sorted(by_name):
            t = by_name.get(name)
            if t is None or t.get("error_code") == UNKNOWN_TOPIC_OR_PARTITION:
                raise UnknownTopicsError(f"Topic {name} not found.")
            for p in sorted(t.get("partitions", []), key=lambda p: p["partition_index"]):
                out[TopicPartition(name, int(p["partition_index"]))] = PartitionState(
                    replicas=list(p.get("replica_nodes") or []),
                    leader=int(p.get("leader_id", -1)),
                    isr=list(p.get("isr_nodes") or []),
                    leader_epoch=int(p.get("leader_epoch", -1)),
                )
        return out

    def ongoing_reassignments(self) -> dict[TopicPartition, OngoingReassignment]:
        self._need("list partition reassignments", ApiKey.LIST_PARTITION_REASSIGNMENTS)
        got = self._call(
            "list partition reassignments", self.client.list_partition_reassignments, None, timeout_ms=self.timeout_ms
        )
        return {
            TopicPartition(tp.topic, tp.partition): OngoingReassignment(
                list(r["replicas"]), list(r["adding_replicas"]), list(r["removing_replicas"])
            )
            for tp, r in got.items()
        }

    def describe_configs(self, entity: str, names: Iterable[str]) -> dict[str, dict[str, str]]:
        from kafka.admin import ConfigResource, ConfigResourceType

        rtype = ConfigResourceType.TOPIC if entity == "topics" else ConfigResourceType.BROKER
        names = list(names)
        if not names:
            return {}
        resources = [ConfigResource(rtype, n) for n in names]
        got = self._call("describe configs", self.client.describe_configs, resources, config_filter="modified")
        dynamic = "DYNAMIC_TOPIC_CONFIG" if entity == "topics" else "DYNAMIC_BROKER_CONFIG"
        section = got.get(rtype.name.lower(), {})
        out = {}
        for n in names:
            cfg = section.get(n, {})
            out[n] = {k: v["value"] for k, v in cfg.items() if v.get("config_source") == dynamic and v.get("value") is not None}
        return out

    def alter_configs(self, changes: list[ConfigChange]) -> None:
        from kafka.admin import AlterConfigOp, ConfigResource, ConfigResourceType

        if not changes:
            return
        self._need("alter configs", ApiKey.INCREMENTAL_ALTER_CONFIGS)
        resources = []
        for ch in changes:
            rtype = ConfigResourceType.TOPIC if ch.entity == "topics" else ConfigResourceType.BROKER
            ops: dict[str, Any] = {k: (AlterConfigOp.SET, v) for k, v in ch.set.items()}
            ops.update({k: (AlterConfigOp.DELETE, None) for k in ch.delete})
            resources.append(ConfigResource(rtype, ch.name, ops))
        got = self._call(
            "alter configs", self.client.alter_configs, resources, raise_on_unknown=False, incremental=True
        )
        failed = {(f"{kind}s", name): f"{kind} {name}: {res}"
                  for kind, by_name in got.items() for name, res in by_name.items() if res != "OK"}
        if failed:
            raise ConfigsRefusedError("alter configs: " + "; ".join(failed.values()), set(failed))

    def partition_sizes(self, topics: Iterable[str]) -> dict[TopicPartition, int] | None:
        names = list(topics)
        return self.partition_sizes_of(self.assignment(names)) if names else {}

    def partition_sizes_of(self, assignment: dict[TopicPartition, list[int]]) -> dict[TopicPartition, int] | None:
        """DescribeLogDirs to each broker holding replicas, for its partitions only, in parallel."""
        from concurrent.futures import ThreadPoolExecutor

        per_broker: dict[int, dict[str, list[int]]] = {}
        for tp, replicas in assignment.items():
            for b in replicas:
                per_broker.setdefault(b, {}).setdefault(tp.topic, []).append(tp.partition)
        alive = {b.id for b in self.brokers()}
        jobs = {b: parts for b, parts in per_broker.items() if b in alive}
        if not jobs:
            return {}
        with ThreadPoolExecutor(max_workers=min(16, len(jobs))) as pool:
            answers = list(pool.map(
                lambda item: self._call("describe log dirs", self.client.describe_log_dirs, item[1], [item[0]]),
                jobs.items(),
            ))
        sizes: dict[TopicPartition, int] = {}
        for got in answers:
            for broker in got:
                for d in broker.get("log_dirs", []):
                    for t in d.get("topics", []):
                        for p in t.get("partitions", []):
                            if p.get("is_future_key"):
                                continue
                            tp = TopicPartition(t["name"], int(p["partition_index"]))
                            sizes[tp] = max(sizes.get(tp, 0), int(p["partition_size"]))
        return sizes

    def replica_log_dirs(
        self, replicas: Iterable[TopicPartitionReplica]
    ) -> dict[TopicPartitionReplica, tuple[str | None, str | None]]:
        wanted = list(replicas)
        if not wanted:
            return {}
        brokers = sorted({r.broker for r in wanted})
        topics: dict[str, list[int]] = {}
        for r in wanted:
            topics.setdefault(r.topic, []).append(r.partition)
        got = self._call("describe log dirs", self.client.describe_log_dirs, topics, brokers)
        found: dict[TopicPartitionReplica, list[str | None]] = {}
        for broker in got:
            for d in broker.get("log_dirs", []):
                if d.get("error_code"):
                    continue
                for t in d.get("topics", []):
                    for p in t.get("partitions", []):
                        key = TopicPartitionReplica(t["name"], int(p["partition_index"]), int(broker["broker"]))
                        slot = found.setdefault(key, [None, None])
                        slot[1 if p.get("is_future_key") else 0] = d["log_dir"]
        return {r: (found[r][0], found[r][1]) for r in wanted if r in found}

    def alter_replica_log_dirs(self, moves: dict[TopicPartitionReplica, str]) -> dict[TopicPartitionReplica, str | None]:
        from kafka.errors import NoError
        from kafka.structs import TopicPartitionReplica as KTPR

        got = self._call(
            "alter replica log dirs",
            self.client.alter_replica_log_dirs,
            {KTPR(r.topic, r.partition, r.broker): d for r, d in moves.items()},
        )
        out: dict[TopicPartitionReplica, str | None] = {}
        for k, err in got.items():
            out[TopicPartitionReplica(k.topic, k.partition, k.broker_id)] = None if err is NoError else java_exception(err)
        return out

    # -- writes -------------------------------------------------------------------------------

    def _alter_reassignments(self, targets: dict[TopicPartition, list[int] | None]) -> dict[TopicPartition, str | None]:
        from kafka.structs import TopicPartition as KTP

        self._need("alter partition reassignments", ApiKey.ALTER_PARTITION_REASSIGNMENTS)
        got = self._call(
            "alter partition reassignments",
            self.client.alter_partition_reassignments,
            {KTP(tp.topic, tp.partition): reps for tp, reps in targets.items()},
            timeout_ms=self.timeout_ms,
        )
        out: dict[TopicPartition, str | None] = {}
        for k, err in got.items():
            out[TopicPartition(k.topic, k.partition)] = None if err is None else str(getattr(err, "description", err))
        for tp in targets:
            out.setdefault(tp, "the controller did not answer for this partition")
        return out

    def start_reassignment(
        self, targets: dict[TopicPartition, list[int]], throttles: list[ConfigChange]
    ) -> dict[TopicPartition, str | None]:
        self._need("alter partition reassignments", ApiKey.ALTER_PARTITION_REASSIGNMENTS)  # before any throttle
        if throttles:
            self._need("alter configs", ApiKey.INCREMENTAL_ALTER_CONFIGS)
        # Each failure says what was and was not done: the caller has printed the rollback block already.
        previous: dict[tuple[str, str], dict[str, str]] = {}
        try:
            for entity in ("topics", "brokers"):
                names = [c.name for c in throttles if c.entity == entity]
                for name, cfg in self.describe_configs(entity, names).items():
                    previous[(entity, name)] = cfg
        except ClusterError as exc:
            raise ClusterError(f"{exc}; nothing was changed: no throttle was set and no reassignment was started") from None
        try:
            self.alter_configs(throttles)
        except ClusterError as exc:  # some resources may have taken the throttle: put those back
            refused = exc.refused if isinstance(exc, ConfigsRefusedError) else set()
            self._restore([c for c in throttles if (c.entity, c.name) not in refused], previous, exc)
            raise ClusterError(f"{exc}; no reassignment was started and the throttle configs were put back") from None
        try:
            results = self._alter_reassignments(dict(targets))
        except ClusterError as exc:
            # No answer need not mean nothing started: keep the throttles if any target is moving.
            try:
                moving = set(self.ongoing_reassignments()) & set(targets)
            except ClusterError:
                raise ClusterError(f"{exc}; the throttles were left in place (could not tell whether the "
                                   "reassignment started: run --verify or --list)") from None
            if moving:
                raise ClusterError(f"{exc}; {len(moving)} of {len(targets)} partition(s) are being reassigned "
                                   "and the throttles were left in place: run --verify") from None
            self._restore(throttles, previous, exc)
            undone = " and the throttle configs were put back" if throttles else ""
            raise ClusterError(f"{exc}; no reassignment was started{undone}") from None
        if throttles and results and all(err is not None for err in results.values()):
            self._restore(throttles, previous, None)
        return results

    def _restore(self, throttles: list[ConfigChange], previous: dict[tuple[str, str], dict[str, str]],
                 cause: ClusterError | None) -> None:
        """Put back the configs `throttles` overwrote: nothing was started, so no throttle stays.

        When that fails too, the error names every config that may be left (with `cause`, the first failure)."""
        undo = []
        for ch in throttles:
            old = previous.get((ch.entity, ch.name), {})
            keys = list(ch.set) + list(ch.delete)
            undo.append(ConfigChange(
                ch.entity, ch.name,
                set={k: old[k] for k in keys if k in old},
                delete=[k for k in keys if k not in old],
            ))
        try:
            self.alter_configs(undo)
        except ClusterError as exc:
            left = "; ".join(f"{c.entity[:-1]} {c.name}: {','.join(list(c.set) + list(c.delete))}" for c in undo)
            raise ClusterError(f"{cause or 'nothing was reassigned'}; putting back the throttle configs failed too "
                               f"({exc}): check and restore with kafka-configs.sh --bootstrap-server {self.bootstrap} "
                               f"--describe/--alter: {left}") from None

    def cancel_reassignments(self, parts: Iterable[TopicPartition]) -> dict[TopicPartition, str | None]:
        return self._alter_reassignments(dict.fromkeys(parts))

    def elect_leaders(self, election_type: str, parts: list[TopicPartition] | None) -> ElectionResult:
        from kafka.errors import ClusterAuthorizationFailedError, for_code

        self._need("elect leaders", ApiKey.ELECT_LEADERS)
        if election_type != "preferred":  # ElectLeaders v0 (Kafka 2.2, 2.3) has no election type: always preferred
            self._need("unclean leader election", ApiKey.ELECT_LEADERS, 1, Release(2, 4))
        if parts is None:
            resp = self._elect_all(ELECTION_TYPES[election_type])
        else:
            by_topic: dict[str, list[int]] = {}
            for tp in parts:
                by_topic.setdefault(tp.topic, []).append(tp.partition)
            resp = self._call(
                "elect leaders",
                self.client.elect_leaders,
                ELECTION_TYPES[election_type],
                by_topic,
                timeout_ms=self.timeout_ms,
                raise_errors=False,
            )
        top = getattr(resp, "error_code", 0) or 0
        if top:
            err = for_code(top)
            if err is ClusterAuthorizationFailedError:
                raise ClusterError("Not authorized to perform leader election")
            raise ClusterError(f"elect leaders: {java_exception(err)}")
        results: dict[TopicPartition, str | None] = {}
        for topic in resp.replica_election_results:
            for p in topic.partition_result:
                tp = TopicPartition(topic.topic, int(p.partition_id))
                if p.error_code == 0:
                    results[tp] = None
                elif p.error_code == ELECTION_NOT_NEEDED_CODE:
                    results[tp] = ELECTION_NOT_NEEDED
                else:
                    results[tp] = java_exception(for_code(p.error_code), p.error_message)
        return ElectionResult(results=results)

    def _elect_all(self, election_type: int) -> Any:
        """ElectLeaders with a null partition list, as Kafka's tool sends for --all-topic-partitions.

        kafka-python's `elect_leaders(None)` lists every partition instead, which makes the
        controller answer ELECTION_NOT_NEEDED for each one already led by its preferred replica
        (and sends a request the size of the cluster), so the request is built here.
        """
        from kafka.errors import for_code
        from kafka.protocol.admin import ElectionType, ElectLeadersRequest

        request = ElectLeadersRequest(
            election_type=ElectionType(election_type), topic_partitions=None, timeout_ms=self.timeout_ms
        )

        def top_level(r: Any) -> Any:
            if r.API_VERSION >= 1:
                yield for_code(r.error_code)

        return self._call(
            "elect leaders",
            self.client._manager.run,
            self.client._send_request_to_controller,
            request,
            top_level,
            False,
        )
