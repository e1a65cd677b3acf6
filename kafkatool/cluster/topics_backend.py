"""Reading topics into `TopicDescription`s and carrying out topic plans, over ZooKeeper or the Admin API.

ZooKeeper: what Kafka 2.1's `AdminZkClient`/`KafkaZkClient` read and write — `/brokers/topics/T`
(`{"version":1,"partitions":{…}}`), `/config/topics/T` (`{"version":1,"config":{…}}`, written before
the assignment, no change notification at creation), partition `state` znodes, and an empty
`/admin/delete_topics/T` to ask the controller to delete.

Admin API (kafka-python): Metadata (+ DescribeTopicPartitions for 4.0's ELR columns when the broker
has it), DescribeConfigs, DescribeCluster, ListPartitionReassignments (skipped as Kafka's tool does
when the broker lacks it), CreateTopics, CreatePartitions, DeleteTopics.  A call the broker does not
support raises the Admin backend's `BrokerTooOldError` naming the broker's release and the API (exit 2).
"""

from __future__ import annotations

import base64
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from kafkatool.cluster.backend import Cluster, UnknownTopicsError
from kafkatool.cluster.connect import ClusterError
from kafkatool.cluster.topics import (
    AlterPlan,
    ConfigEntry,
    CreatePlan,
    PartitionDescription,
    TopicDescription,
    TopicError,
    TopicExistsError,
    is_internal,
)
from kafkatool.cluster.topics_text import admin_topic_order, config_entries_order
from kafkatool.cluster.versions import ApiKey, lacks
from kafkatool.jvm.hashtable import properties_order
from kafkatool.release import Release

DELETE_TOPICS = "/admin/delete_topics"

CONFIG_SOURCES = {0: "UNKNOWN", 1: "DYNAMIC_TOPIC_CONFIG", 2: "DYNAMIC_BROKER_CONFIG", 3: "DYNAMIC_DEFAULT_BROKER_CONFIG",
                  4: "STATIC_BROKER_CONFIG", 5: "DEFAULT_CONFIG", 6: "DYNAMIC_BROKER_LOGGER_CONFIG"}


def uuid_text(value: Any) -> str | None:
    """Kafka's `Uuid.toString()`: URL-safe base64 of the 16 bytes, no padding."""
    if value is None:
        return None
    if isinstance(value, str):
        import uuid

        try:
            value = uuid.UUID(value)
        except ValueError:
            return value  # already Kafka's text
    raw = value.bytes if hasattr(value, "bytes") else bytes(value)
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


# == ZooKeeper ======================================================================================


def _json(data: bytes | None) -> dict[str, Any]:
    if not data:
        return {}
    try:
        got = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return {}
    return got if isinstance(got, dict) else {}


def zk_marked_for_deletion(cluster: Any) -> set[str]:
    return set(cluster.children(DELETE_TOPICS))


def zk_topic_configs(cluster: Any, names: Sequence[str], entity: str = "topics") -> dict[str, list[tuple[str, str]]]:
    """Config overrides per entity in the order a Java 9+ `Properties` (a `ConcurrentHashMap`) iterates them (what 2.1's tools print)."""
    datas = cluster.read_many([f"/config/{entity}/{n}" for n in names])
    out = {}
    for n, d in zip(names, datas, strict=True):
        cfg = {str(k): str(v) for k, v in (_json(d).get("config") or {}).items()}
        out[n] = [(k, cfg[k]) for k in properties_order(cfg)]
    return out


def zk_describe(cluster: Any, names: Sequence[str]) -> list[TopicDescription]:
    """Topics in sorted order; a leader -1 stays -1 (2.1 prints it), a missing state znode means no leader."""
    names = sorted(names)
    topic_datas = cluster.read_many([f"/brokers/topics/{t}" for t in names])
    marked = zk_marked_for_deletion(cluster)
    configs = zk_topic_configs(cluster, names)
    found: list[tuple[str, dict[str, Any]]] = [(t, _json(d)) for t, d in zip(names, topic_datas, strict=True) if d is not None]
    tps = [(t, int(p)) for t, z in found for p in sorted((z.get("partitions") or {}), key=int)]
    states = cluster.read_many([f"/brokers/topics/{t}/partitions/{p}/state" for t, p in tps])
    state_of = dict(zip(tps, states, strict=True))
    out = []
    for t, z in found:
        parts = []
        adding = z.get("adding_replicas") or {}
        removing = z.get("removing_replicas") or {}
        for p_text, replicas in sorted((z.get("partitions") or {}).items(), key=lambda kv: int(kv[0])):
            p = int(p_text)
            st = _json(state_of[(t, p)]) if state_of[(t, p)] is not None else None
            moving = p_text in adding or p_text in removing
            parts.append(PartitionDescription(
                partition=p,
                leader=None if st is None else int(st.get("leader", -1)),
                replicas=[int(b) for b in replicas],
                isr=[] if st is None else [int(b) for b in st.get("isr", [])],
                adding=[int(b) for b in adding.get(p_text, [])] if moving else None,
                removing=[int(b) for b in removing.get(p_text, [])] if moving else None,
            ))
        out.append(TopicDescription(
            t, parts, [ConfigEntry(k, v) for k, v in configs[t]], marked_for_deletion=t in marked, internal=is_internal(t),
        ))
    return out


def zk_dumps(obj: Any) -> bytes:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def zk_create(cluster: Any, plan: CreatePlan) -> None:
    """Config znode, then the assignment (as AdminZkClient does; here in one transaction)."""
    assert plan.assignment is not None, "over ZooKeeper kafkatool places the replicas (plan_create(place=True))"
    if cluster.read(f"/brokers/topics/{plan.topic}") is not None:
        raise TopicExistsError(f"Topic '{plan.topic}' already exists.")
    cluster.ensure_paths(["/config/topics", "/brokers/topics"])
    config_path = f"/config/topics/{plan.topic}"
    had_config = cluster.read(config_path) is not None
    config = zk_dumps({"version": 1, "config": plan.configs})
    topic = zk_dumps({"version": 1, "partitions": {str(p): r for p, r in sorted(plan.assignment.items())}})

    def build(tx: Any) -> None:
        if had_config:  # a leftover of a deleted topic: AdminZkClient overwrites it
            tx.set_data(config_path, config)
        else:
            tx.create(config_path, config)
        tx.create(f"/brokers/topics/{plan.topic}", topic)

    try:
        cluster.commit(build, f"create topic {plan.topic}")
    except ClusterError:
        if cluster.read(f"/brokers/topics/{plan.topic}") is not None:  # created meanwhile by someone else
            raise TopicExistsError(f"Topic '{plan.topic}' already exists.") from None
        raise


def zk_add_partitions(cluster: Any, plan: AlterPlan) -> None:
    """Rewrite `/brokers/topics/T` with the old and new partitions (version-checked), keeping other fields."""
    path = f"/brokers/topics/{plan.topic}"
    data, version = cluster.read_versioned(path)
    if data is None:
        raise UnknownTopicsError(f"The topic {plan.topic} does not exist")
    znode = _json(data)
    partitions = dict(znode.get("partitions") or {})
    for p, reps in sorted((plan.new_partitions or {}).items()):
        partitions[str(p)] = reps
    znode["partitions"] = dict(sorted(partitions.items(), key=lambda kv: int(kv[0])))
    cluster.commit(lambda tx: tx.set_data(path, zk_dumps(znode), version=version), f"add partitions to {plan.topic}")


def zk_mark_deleted(cluster: Any, topic: str) -> bool:
    """Create `/admin/delete_topics/T`; False when it was already there."""
    cluster.ensure_paths([DELETE_TOPICS])
    return cluster.create_if_absent(f"{DELETE_TOPICS}/{topic}", b"")


# == Admin API ======================================================================================


def has_api(cluster: Any, key: int) -> bool:
    """Whether the broker accepts request `key` (True when the client has no table: the call decides)."""
    table = cluster.api_versions()
    return table is None or not lacks(table, key)


def topic_ids(cluster: Any) -> dict[str, str | None]:
    """Every topic's id (Kafka's text form; None before Kafka 2.8's Metadata v10)."""
    return {t["name"]: uuid_text(t.get("topic_id")) for t in _metadata(cluster, None)["topics"]}


def admin_list(cluster: Any) -> list[str]:
    return sorted(cluster._call("list topics", cluster.client.list_topics))


def _send(cluster: Any, what: str, request: Any, controller: Any = None, node_id: int | None = None) -> Any:
    """One request (to a broker, to any, or with `controller` = a function yielding the response's error
    classes, to the controller, asked again once when it answers NOT_CONTROLLER), bounded by the timeout."""
    client = cluster.client
    if controller is not None:
        try:
            return cluster._call(what, client._manager.run, client._send_request_to_controller, request, controller, False)
        except RuntimeError as exc:  # kafka-python: "Failed to find active controller id!"
            raise ClusterError(f"{what}: {exc}") from None
    if node_id is not None:
        return cluster._call(what, client._manager.run, client._manager.send, request, node_id)
    return cluster._call(what, client._manager.run, client._manager.send, request)


def _configs_of(cluster: Any, names: Sequence[str]) -> dict[str, list[ConfigEntry]]:
    """Every config of each topic (defaults too), in `Config.entries()` order."""
    from kafka.protocol.admin import DescribeConfigsRequest

    if not names:
        return {}
    R = DescribeConfigsRequest
    request = R(resources=[R.DescribeConfigsResource(resource_type=2, resource_name=n, configuration_keys=None)
                           for n in names], include_synonyms=True, include_documentation=False)
    response = _send(cluster, "describe configs", request)
    out: dict[str, list[ConfigEntry]] = {}
    for res in response.results:
        if res.error_code:
            raise ClusterError(f"describe configs of {res.resource_name}: {res.error_message or res.error_code}")
        out[res.resource_name] = entries_from_response(res.configs, response.API_VERSION)
    return out


def entries_from_response(configs: Sequence[Any], version: int) -> list[ConfigEntry]:
    """DescribeConfigs entries as the Java client builds a `Config`, in its `HashMap` order."""
    by_name: dict[str, ConfigEntry] = {}
    for c in configs:
        if version == 0:
            source = "DEFAULT_CONFIG" if c.is_default else ("STATIC_BROKER_CONFIG" if c.read_only else "UNKNOWN")
        else:
            source = CONFIG_SOURCES.get(int(c.config_source), "UNKNOWN")
        synonyms = [(CONFIG_SOURCES.get(int(s.source), "UNKNOWN"), s.name, s.value) for s in (getattr(c, "synonyms", None) or [])]
        by_name[c.name] = ConfigEntry(c.name, c.value, source, source == "DEFAULT_CONFIG", bool(c.is_sensitive),
                                      bool(c.read_only), synonyms)
    return [by_name[n] for n in config_entries_order(list(by_name))]


def _metadata(cluster: Any, names: Sequence[str] | None) -> dict[str, Any]:
    """One Metadata request: brokers (with racks) and the topics asked for (kafka-python's dict)."""
    client = cluster.client
    topics = None if names is None else list(names)
    return cluster._call("describe topics", client._manager.run, client._get_cluster_metadata, topics)  # type: ignore[no-any-return]


def _reassignments(cluster: Any) -> dict[tuple[str, int], tuple[list[int], list[int]]]:
    if not has_api(cluster, ApiKey.LIST_PARTITION_REASSIGNMENTS):  # Kafka's tool treats UnsupportedVersionException as "none"
        return {}
    got = cluster._call("list partition reassignments", cluster.client.list_partition_reassignments, None,
                        timeout_ms=cluster.timeout_ms)
    return {(tp.topic, tp.partition): (list(r["adding_replicas"]), list(r["removing_replicas"])) for tp, r in got.items()}


def _elr_of(cluster: Any, names: Sequence[str]) -> dict[tuple[str, int], tuple[list[int] | None, list[int] | None]]:
    """ELR and last known ELR per partition from DescribeTopicPartitions, paged with its cursor."""
    from kafka.protocol.admin import DescribeTopicPartitionsRequest as R

    out: dict[tuple[str, int], tuple[list[int] | None, list[int] | None]] = {}
    cursor = None
    while True:
        request = R(topics=[R.TopicRequest(name=t) for t in names], response_partition_limit=2000, cursor=cursor)
        response = _send(cluster, "describe topic partitions", request)
        for t in response.topics:
            for p in t.partitions:
                elr = None if p.eligible_leader_replicas is None else list(p.eligible_leader_replicas)
                lke = None if p.last_known_elr is None else list(p.last_known_elr)
                out[(t.name, int(p.partition_index))] = (elr, lke)
        nxt = response.next_cursor
        if nxt is None:
            return out
        cursor = R.Cursor(topic_name=nxt.topic_name, partition_index=nxt.partition_index)


def admin_describe(cluster: Any, names: Sequence[str], release: Release) -> tuple[list[TopicDescription], set[int]]:
    """Descriptions in the order Kafka's tool prints them, and the live broker ids."""
    if not names:
        return [], {b.id for b in cluster.brokers()}
    metadata = _metadata(cluster, names)
    by_name = {t["name"]: t for t in metadata["topics"]}
    for n in names:
        t = by_name.get(n)
        if t is None or t.get("error_code"):
            raise UnknownTopicsError(f"Topic '{n}' does not exist as expected")
    metadata_brokers = {b.id for b in cluster.brokers()}
    configs = _configs_of(cluster, list(names))
    moves = _reassignments(cluster)
    elr = _elr_of(cluster, list(names)) if release.at_least("4.0") and has_api(cluster, ApiKey.DESCRIBE_TOPIC_PARTITIONS) else {}
    out = []
    for n in admin_topic_order(list(names), release):
        t = by_name[n]
        parts = []
        for p in sorted(t.get("partitions", []), key=lambda p: p["partition_index"]):
            idx = int(p["partition_index"])
            leader = int(p.get("leader_id", -1))
            move = moves.get((n, idx))
            e = elr.get((n, idx), (None, None))
            parts.append(PartitionDescription(
                partition=idx,
                leader=leader if leader >= 0 and leader in metadata_brokers else None,
                replicas=list(p.get("replica_nodes") or []),
                isr=list(p.get("isr_nodes") or []),
                adding=move[0] if move else None,
                removing=move[1] if move else None,
                elr=e[0], last_known_elr=e[1],
            ))
        out.append(TopicDescription(n, parts, configs.get(n, []), topic_id=uuid_text(t.get("topic_id")),
                                    internal=bool(t.get("is_internal"))))
    return out, metadata_brokers


def _error_classes(field: str) -> Any:
    """The error classes of a response's per-topic results (kafka-python retries NOT_CONTROLLER with them)."""
    from kafka.errors import for_code

    return lambda response: [for_code(r.error_code) for r in getattr(response, field)]


#: What the Java client says for an error the broker sent without a message (its exception's default text).
JAVA_DEFAULT_MESSAGES = {3: "This server does not host this topic-partition."}

#: Errors that are the controller refusing the request (exit 2 with its message), not a failure to reach it.
REFUSALS = frozenset({
    "InvalidTopicError", "InvalidPartitionsError", "InvalidReplicationFactorError", "InvalidReplicationAssignmentError",
    "InvalidConfigurationError", "InvalidRequestError", "UnknownTopicOrPartitionError", "PolicyViolationError",
    "ReassignmentInProgressError", "ThrottlingQuotaExceededError", "BrokerNotAvailableError",
})


def _refusal(r: Any, name_attr: str = "name") -> Exception | None:
    """The error of one per-topic result as Kafka's tool reports it: the broker's message, else the Java
    client's default text; None when the topic succeeded."""
    from kafka.errors import for_code

    if not r.error_code:
        return None
    err = for_code(r.error_code)
    sent = getattr(r, "error_message", None)
    message = sent or JAVA_DEFAULT_MESSAGES.get(r.error_code) or getattr(err, "description", "") or err.__name__
    name = getattr(r, name_attr, "")
    if err.__name__ == "TopicAlreadyExistsError":
        return TopicExistsError(message if sent else f"Topic '{name}' already exists.")
    if err.__name__ in REFUSALS:
        return TopicError(message)
    return ClusterError(f"{name}: {err.__name__}: {message}")


def _errors(results: Sequence[Any], name_attr: str = "name") -> None:
    for r in results:
        exc = _refusal(r, name_attr)
        if exc is not None:
            raise exc


#: CreateTopics v4 (Kafka 2.4, KIP-464) is the first to take -1 for "the brokers' default" without an assignment.
BROKER_DEFAULTS_SINCE_VERSION = 4


@dataclass(frozen=True)
class CreateAnswer:
    """What the controller said it creates (or, validating only, would create): CreateTopics v5+ (Kafka
    2.4+) reports the partition count and replication factor, defaults resolved; None before that."""

    partitions: int | None
    replication_factor: int | None


def _create_topics_version(cluster: Any) -> int | None:
    """The CreateTopics version kafka-python negotiates with the broker (None when the client has no table)."""
    from kafka.protocol.admin import CreateTopicsRequest

    table = cluster.api_versions()
    if table is None or lacks(table, ApiKey.CREATE_TOPICS):
        return None
    return min(int(CreateTopicsRequest.max_version), table[ApiKey.CREATE_TOPICS][1])


def admin_create(cluster: Any, plan: CreatePlan, validate_only: bool = False) -> CreateAnswer:
    """CreateTopics as Kafka's TopicCommand sends it: the assignment when there is one (counts -1), else
    the counts, -1 for one not given; `validate_only` has the controller check it and create nothing.

    A count left to the brokers' default needs CreateTopics v4: against an older broker this refuses
    with the Java client's message (`UnsupportedVersionException`), as Kafka's tool does, before sending.
    """
    from kafka.protocol.admin import CreateTopicsRequest as R

    cluster._need("create topics", ApiKey.CREATE_TOPICS)
    version = _create_topics_version(cluster)
    defaults = plan.assignment is None and (plan.partitions is None or plan.replication_factor is None)
    if defaults and version is not None and version < BROKER_DEFAULTS_SINCE_VERSION:
        raise TopicError("Creating topics with default partitions/replication factor are only supported in "
                         "CreateTopicRequest version 4+. The following topics need values for partitions and "
                         f"replicas: [{plan.topic}]")
    T = R.CreatableTopic
    given = plan.assignment is not None
    request = R(topics=[T(
        name=plan.topic,
        num_partitions=-1 if given or plan.partitions is None else plan.partitions,
        replication_factor=-1 if given or plan.replication_factor is None else plan.replication_factor,
        assignments=[T.CreatableReplicaAssignment(partition_index=p, broker_ids=r)
                     for p, r in sorted((plan.assignment or {}).items())],
        configs=[T.CreatableTopicConfig(name=k, value=v) for k, v in plan.configs.items()],
    )], timeout_ms=cluster.timeout_ms, validate_only=validate_only)
    response = _send(cluster, "create topics", request, controller=_error_classes("topics"))
    _errors(response.topics)
    return _create_answer(response)


def _create_answer(response: Any) -> CreateAnswer:
    if getattr(response, "API_VERSION", 0) < 5 or not response.topics:
        return CreateAnswer(None, None)
    t = response.topics[0]
    n, rf = int(getattr(t, "num_partitions", None) or -1), int(getattr(t, "replication_factor", None) or -1)
    return CreateAnswer(n if n > 0 else None, rf if rf > 0 else None)


def admin_add_partitions(cluster: Any, plans: Sequence[AlterPlan], validate_only: bool = False) -> dict[str, Exception]:
    """One CreatePartitions for all `plans`, as Kafka's TopicCommand sends it (`NewPartitions.increaseTo`):
    each topic's new count and, only where the plan has one, the new partitions' replicas (else null: the
    controller places them); `validate_only` has the controller check it and change nothing.

    The controller answers per topic (the others are grown even when one is refused): returns the refused
    topics with their errors, empty when all were accepted.
    """
    from kafka.protocol.admin import CreatePartitionsRequest as R

    cluster._need("add partitions", ApiKey.CREATE_PARTITIONS)
    T = R.CreatePartitionsTopic
    request = R(topics=[T(name=p.topic, count=p.total, assignments=None if p.new_partitions is None else [
        T.CreatePartitionsAssignment(broker_ids=r) for _, r in sorted(p.new_partitions.items())]) for p in plans],
        timeout_ms=cluster.timeout_ms, validate_only=validate_only)
    response = _send(cluster, "create partitions", request, controller=_error_classes("results"))
    refused = {}
    for r in response.results:
        exc = _refusal(r)
        if exc is not None:
            refused[r.name] = exc
    return refused


def admin_delete(cluster: Any, topics: Sequence[str]) -> None:
    from kafka.protocol.admin import DeleteTopicsRequest as R

    cluster._need("delete topics", ApiKey.DELETE_TOPICS)
    request = R(topics=[R.DeleteTopicState(name=t) for t in topics], topic_names=list(topics),
                timeout_ms=cluster.timeout_ms)
    _errors(_send(cluster, "delete topics", request, controller=_error_classes("responses")).responses)


def current_assignment(cluster: Cluster, topic: str) -> dict[int, list[int]]:
    return {tp.partition: reps for tp, reps in cluster.assignment([topic]).items()}


__all__ = ["TopicError", "TopicExistsError"]
