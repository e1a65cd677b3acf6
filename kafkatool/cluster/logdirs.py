"""Live log-dir usage: DescribeLogDirs to every broker, and `kafka-log-dirs.sh --describe`'s text.

The request asks for every topic (`topics` null), as Kafka's tool does, and is sent to each broker
through the Admin client's connection manager (kafka-python's `describe_log_dirs` drops the
response's top-level error code and total/usable bytes).  What the tool prints is decided by hash
tables, so the order of brokers, log dirs and partitions is modelled here from Kafka's source:

* 3.3 (Scala, `core/.../admin/LogDirsCommand.scala`): the brokers are an immutable Scala `Set`
  (`describeCluster` nodes `.toSet`, or the `--broker-list` set `intersect`/`diff` it); the
  admin client's `allDescriptions` is a Java `HashMap` (filled from `new HashMap<>(futures)` of a
  `HashMap(n)` keyed by broker), turned by `asScala.map` into a Scala `mutable.HashMap`; each
  broker's log dirs are a Java `HashMap(results.size())` and its partitions a Java `HashMap` that
  `asScala.filter` copies into a Scala `mutable.HashMap`.  JSON objects are small Scala maps
  (insertion order); the ERROR line goes to stdout.
* 4.0 (Java, `tools/.../LogDirsCommand.java`): broker sets are Java `HashSet`s
  (`Collectors.toSet`, copies, `retainAll`/`removeAll`), every JSON object a `HashMap` (so its keys
  come out in hash order) and the filtered partitions `Collectors.toMap`'s `HashMap`; the ERROR
  line is a TerseException on stderr.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from kafkatool.cluster.connect import ClusterError
from kafkatool.jvm import java_collections as jc
from kafkatool.jvm import scala_collections as sc
from kafkatool.jvm.hashing import int_hash, string_hash, topic_partition_hash
from kafkatool.log.decoders._wire import json_str
from kafkatool.release import Release, tools_in_scala

#: `Errors.forCode(code).exception()`'s class, for the codes a log dir can carry.
_EXCEPTIONS = {
    56: "KafkaStorageException",
    31: "ClusterAuthorizationException",
    57: "LogDirNotFoundException",
    -1: "UnknownServerException",
}
QUERYING = "Querying brokers for log directories information"


def exception_class(code: int) -> str | None:
    """The Java exception class Kafka's tool names for a log dir's error code (None: no error)."""
    if code == 0:
        return None
    return "org.apache.kafka.common.errors." + _EXCEPTIONS.get(code, "UnknownServerException")


@dataclass(frozen=True)
class ReplicaDir:
    topic: str
    partition: int
    size: int
    offset_lag: int
    is_future: bool


@dataclass
class LogDirInfo:
    path: str
    error_code: int = 0
    replicas: list[ReplicaDir] = field(default_factory=list)
    total_bytes: int | None = None  # v4+ only (-1 from the broker: unknown)
    usable_bytes: int | None = None


class LogDirsInputError(ValueError):
    """--broker-list names brokers the cluster does not have; `message` is Kafka's ERROR line."""


# -- the request ---------------------------------------------------------------------------------


def describe_log_dirs(admin: Any, brokers: Sequence[int], timeout: float) -> dict[int, list[LogDirInfo]]:
    """DescribeLogDirs (all topics) to each broker concurrently; its log dirs in the response's order.

    A broker that answers no log dir fails the whole call, as the Java admin client does
    (`ClusterAuthorizationException`, or the v3+ top-level error).
    """
    from kafka.protocol.admin import DescribeLogDirsRequest

    mgr = admin._manager
    timeout_ms = max(1, int(timeout * 1000))

    async def run_all() -> list[Any]:
        futures = [mgr.send(DescribeLogDirsRequest(topics=None), node_id=b, request_timeout_ms=timeout_ms)
                   for b in brokers]
        out: list[Any] = []
        for fut in futures:
            try:
                out.append(await mgr.wait_for(fut, timeout_ms))
            except Exception as exc:  # noqa: BLE001 - reported per broker below
                out.append(exc)
        return out

    started = time.monotonic()
    try:
        answers = list(mgr.run(run_all))
    except Exception as exc:  # noqa: BLE001
        raise ClusterError(f"describe log dirs: {exc}") from None
    result: dict[int, list[LogDirInfo]] = {}
    for broker, got in zip(brokers, answers, strict=True):
        if isinstance(got, Exception):
            why = str(got) or type(got).__name__
            if "timed out" in why.lower() or time.monotonic() - started >= timeout:
                why = f"no answer within {timeout:g}s"
            raise ClusterError(f"describe log dirs: broker {broker}: {why}")
        dirs = [_log_dir(r) for r in got.results]
        if not dirs:
            code = int(getattr(got, "error_code", 0) or 0) or 31
            raise ClusterError(f"describe log dirs: broker {broker}: {exception_class(code)}")
        result[broker] = dirs
    return result


def _log_dir(r: Any) -> LogDirInfo:
    replicas = [ReplicaDir(t.name, int(p.partition_index), int(p.partition_size), int(p.offset_lag),
                           bool(p.is_future_key)) for t in r.topics for p in t.partitions]
    total = getattr(r, "total_bytes", None)
    usable = getattr(r, "usable_bytes", None)
    return LogDirInfo(r.log_dir, int(r.error_code), replicas, None if total is None else int(total),
                      None if usable is None else int(usable))


def rows(described: dict[int, list[LogDirInfo]], topics: Iterable[str] | None = None) -> list[dict]:
    """One row per broker / log dir / replica (sorted), the documented columns of the live mode."""
    wanted = set(topics or ())
    out = []
    for broker in sorted(described):
        for d in sorted(described[broker], key=lambda d: d.path):
            error = exception_class(d.error_code)
            reps = [r for r in d.replicas if not wanted or r.topic in wanted]
            if error is not None and not reps:
                out.append({"broker": broker, "log_dir": d.path, "topic": None, "partition": None,
                            "is_future": None, "size": None, "offset_lag": None, "error": error})
            for r in sorted(reps, key=lambda r: (r.topic, r.partition, r.is_future)):
                out.append({"broker": broker, "log_dir": d.path, "topic": r.topic, "partition": r.partition,
                            "is_future": r.is_future, "size": r.size, "offset_lag": r.offset_lag, "error": error})
    return out


# -- Kafka's tool: which brokers ---------------------------------------------------------------


@dataclass(frozen=True)
class BrokerChoice:
    cluster: list[int]  # describeCluster's brokers, in the order the tool prints them
    existing: list[int]  # the brokers queried, in the tool's order
    missing: list[int]  # --broker-list entries the cluster lacks, in the tool's order


def _scala_set(ids: Sequence[int]) -> list[int]:
    return sc.int_set_order(ids)


def _scala_subset(source: list[int], keep: set[int], small: bool) -> list[int]:
    """`filter` of an immutable Set: Set1..Set4 keep their order, a HashSet's result is a HashSet."""
    kept = [b for b in source if b in keep]
    return kept if small else sc.champ_order(kept, int_hash)


def choose_brokers(nodes: Sequence[int], broker_list: Sequence[int] | None, text: Release) -> BrokerChoice:
    """The tool's cluster/existing/non-existing broker sets, each in its iteration order."""
    if tools_in_scala(text):
        cluster = _scala_set(nodes)
        if broker_list is None:
            return BrokerChoice(cluster, cluster, [])
        given = _scala_set(broker_list)
        small = len(given) <= sc.SMALL_SET_MAX
        known = set(cluster)
        return BrokerChoice(cluster, _scala_subset(given, known, small),
                            _scala_subset(given, set(given) - known, small))
    cluster = jc.int_set_order(list(nodes))
    given = jc.int_set_order(list(broker_list or []))
    source = given if broker_list else cluster
    existing = [b for b in jc.hash_order(source, int_hash, jc.capacity_for_copy(len(source))) if b in set(cluster)]
    missing = [b for b in jc.hash_order(given, int_hash, jc.capacity_for_copy(len(given))) if b not in set(cluster)]
    return BrokerChoice(cluster, existing, missing)


def missing_brokers_line(choice: BrokerChoice) -> str:
    """Kafka's ERROR line for --broker-list entries the cluster does not have."""
    return (f"ERROR: The given brokers do not exist from --broker-list: {','.join(map(str, choice.missing))}."
            f" Current existent brokers: {','.join(map(str, choice.cluster))}")


# -- Kafka's tool: the JSON ----------------------------------------------------------------------


def _java_map_capacity(n: int) -> int:
    """Capacity of `new HashMap<>(n)` after n puts."""
    return jc.grown_capacity(n, jc.table_size_for(n))


def _java_copy_capacity(n: int) -> int:
    """Capacity of `new HashMap<>(map)` holding n entries (putMapEntries: tableSizeFor(n / 0.75 + 1))."""
    return jc.grown_capacity(n, jc.table_size_for(int(n / jc.LOAD_FACTOR + 1.0)))


def descriptions_order(queried: Sequence[int]) -> list[int]:
    """Iteration order of `allDescriptions()`'s Java HashMap for brokers queried in this order."""
    n = len(queried)
    futures = jc.hash_order(list(queried), int_hash, _java_map_capacity(n))
    copied = jc.hash_order(futures, int_hash, _java_copy_capacity(n))
    return jc.hash_order(copied, int_hash, _java_map_capacity(n))


def _tp_hash(r: ReplicaDir) -> int:
    return topic_partition_hash(r.topic, r.partition)


def _java_replica_order(replicas: list[ReplicaDir]) -> list[ReplicaDir]:
    """`logDirDescriptions`' `replicaInfoMap` (a default `HashMap`, put in response order)."""
    by_key = {(r.topic, r.partition): r for r in replicas}  # a later put of an equal key replaces the value
    keys = jc.hash_order(list(by_key), lambda k: topic_partition_hash(*k))
    return [by_key[k] for k in keys]


def _scala_mutable(keys: list[Any], hash_fn: Any) -> list[Any]:
    table = sc.ScalaHashTable()
    for k in keys:
        table.put(k, hash_fn(k))
    return table.keys()


def _object(pairs: list[tuple[str, str]], java: bool) -> str:
    """A JSON object of (key, encoded value): insertion order (small Scala maps) or HashMap order."""
    if java:
        order = jc.string_set_order([k for k, _ in pairs])
        pairs = sorted(pairs, key=lambda kv: order.index(kv[0]))
    return "{" + ",".join(f"{json_str(k)}:{v}" for k, v in pairs) + "}"


def _partition_json(r: ReplicaDir, java: bool) -> str:
    return _object([("partition", json_str(f"{r.topic}-{r.partition}")), ("size", str(r.size)),
                    ("offsetLag", str(r.offset_lag)), ("isFuture", "true" if r.is_future else "false")], java)


def _dir_json(d: LogDirInfo, topics: set[str], java: bool) -> str:
    reps = _java_replica_order(d.replicas)
    kept = [r for r in reps if not topics or r.topic in topics]
    if java:  # Collectors.toMap: a default HashMap filled in the replicaInfoMap's order
        ordered = jc.hash_order(kept, _tp_hash)
    else:  # asScala.filter: a Scala mutable.HashMap filled in that order
        ordered = _scala_mutable(kept, _tp_hash)
    parts = "[" + ",".join(_partition_json(r, java) for r in ordered) + "]"
    return _object([("logDir", json_str(d.path)), ("error", json_str(exception_class(d.error_code))),
                    ("partitions", parts)], java)


def describe_json(described: dict[int, list[LogDirInfo]], queried: Sequence[int], topics: Iterable[str],
                  text: Release) -> str:
    """The JSON line of `kafka-log-dirs.sh --describe` (brokers queried in `queried` order)."""
    java = not tools_in_scala(text)
    wanted = set(topics)
    brokers = descriptions_order(queried)
    if not java:  # asScala.map { case (k, v) => k -> v.asScala }: a Scala mutable.HashMap
        brokers = _scala_mutable(brokers, int_hash)
    out = []
    for b in brokers:
        dirs = described[b]
        by_path = {d.path: d for d in dirs}
        order = jc.hash_order(list(by_path), string_hash, _java_map_capacity(len(dirs)))
        logdirs = "[" + ",".join(_dir_json(by_path[p], wanted, java) for p in order) + "]"
        out.append(_object([("broker", str(b)), ("logDirs", logdirs)], java))
    return _object([("version", "1"), ("brokers", "[" + ",".join(out) + "]")], java)


def describe_text(described: dict[int, list[LogDirInfo]], choice: BrokerChoice, topics: Iterable[str],
                  text: Release) -> str:
    """The whole stdout of a successful `kafka-log-dirs.sh --describe`."""
    received = ",".join(map(str, choice.existing))
    return (f"{QUERYING}\nReceived log directory information from brokers {received}\n"
            f"{describe_json(described, choice.existing, topics, text)}\n")
