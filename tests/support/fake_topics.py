"""The fake brokers of `fake_admin`, plus what `topics` and `configs` need from a broker.

Added on top of `fake_admin` (which negotiates as a broker of its `release` does, answering at the
negotiated version from the message specs): CreateTopics, CreatePartitions, DeleteTopics and
DescribeTopicPartitions handlers with a KRaft controller's checks and messages (CreateTopics per
version: -1 counts are the brokers' defaults from v4, refused as Kafka 2.1 refused them before; v5+
answers carry the counts, validateOnly too; CreatePartitions as a ZooKeeper-mode broker answers it for
2.x releases, as a KRaft controller from 3.3), topic ids in Metadata, and DescribeConfigs answers that
list every topic config with its default (as real brokers do) so `min.insync.replicas` is always there.
Handlers build responses as fake_admin's do (`R = BODY`, `R.<Struct>(field=…)`).
"""

from __future__ import annotations

import uuid
from typing import Any

from kafka.protocol.admin import DescribeTopicPartitionsRequest

from tests.support.fake_admin import (
    DEFAULT_CONFIG,
    NONE,
    NOT_CONTROLLER,
    TOPIC,
    UNKNOWN_TOPIC_OR_PARTITION,
    FakeKafka,
    FakePartition,
)
from tests.support.kwire import BODY

TOPIC_ALREADY_EXISTS = 36
INVALID_PARTITIONS = 37
INVALID_REPLICATION_FACTOR = 38
INVALID_REPLICA_ASSIGNMENT = 39
INVALID_TOPIC_EXCEPTION = 17
INVALID_REQUEST = 42
REASSIGNMENT_IN_PROGRESS = 60

#: Defaults a broker reports for every topic (a few of the real list).
TOPIC_DEFAULTS = {"cleanup.policy": "delete", "min.insync.replicas": "1", "retention.ms": "604800000",
                  "segment.bytes": "1073741824"}

def _get(obj: Any, name: str) -> Any:
    """A field of a response body fake_admin built (a dict), or of a struct."""
    return obj[name] if isinstance(obj, dict) else getattr(obj, name)


def _set(obj: Any, name: str, value: Any) -> None:
    if isinstance(obj, dict):
        obj[name] = value
    else:
        setattr(obj, name, value)


class FakeTopicsKafka(FakeKafka):
    """FakeKafka that also creates, grows and deletes topics; `topic_ids` maps names to UUIDs."""

    def __init__(self, *args: Any, elr: bool = True, real_broker: str | None = None, **kwargs: Any) -> None:
        if real_broker is not None:
            kwargs["release"] = real_broker  # the release's real (or derived) ApiVersions table
        super().__init__(*args, **kwargs)
        self.topic_ids: dict[str, uuid.UUID] = {}
        self.elr: dict[tuple[str, int], tuple[list[int] | None, list[int] | None]] = {}
        self.default_partitions = 1  # the brokers' num.partitions and default.replication.factor (Kafka's defaults)
        self.default_replication_factor = 1
        if not elr:  # a broker before 3.7: no DescribeTopicPartitions
            self.api_versions.pop(DescribeTopicPartitionsRequest.API_KEY, None)

    def add_topic(self, name: str, assignment: dict[int, list[int]], size: int = 0) -> None:
        super().add_topic(name, assignment, size)
        self.topic_ids.setdefault(name, uuid.uuid5(uuid.NAMESPACE_URL, f"kafka-topic:{name}"))

    # -- Metadata with topic ids ----------------------------------------------------------------------

    def _on_3(self, broker: int, req: Any) -> Any:
        response = super()._on_3(broker, req)
        for t in _get(response, "topics"):
            if _get(t, "name") in self.topic_ids:
                _set(t, "topic_id", self.topic_ids[_get(t, "name")])
                _set(t, "is_internal", _get(t, "name").startswith("__"))
        return response

    # -- DescribeConfigs: every topic config, defaults included ---------------------------------------

    def _on_32(self, broker: int, req: Any) -> Any:
        response = super()._on_32(broker, req)
        R = BODY
        Entry = R.DescribeConfigsResult.DescribeConfigsResourceResult
        for res in _get(response, "results"):
            for c in _get(res, "configs"):
                if _get(c, "config_source") in (1, 2, 3):  # a dynamic value is its own first synonym
                    _set(c, "synonyms", [Entry.DescribeConfigsSynonym(name=_get(c, "name"), value=_get(c, "value"),
                                                                      source=_get(c, "config_source"))])
            if _get(res, "resource_type") != TOPIC or _get(res, "error_code"):
                continue
            dynamic = [c for c in _get(res, "configs") if _get(c, "config_source") != DEFAULT_CONFIG]
            named = {_get(c, "name") for c in dynamic}
            wanted = None
            for r in req.resources:
                if r.resource_name == _get(res, "resource_name"):
                    wanted = r.configuration_keys
            defaults = [Entry(name=k, value=v, read_only=False, config_source=DEFAULT_CONFIG, is_default=True,
                              is_sensitive=False, synonyms=[], config_type=2, documentation=None)
                        for k, v in TOPIC_DEFAULTS.items() if k not in named and (wanted is None or k in wanted)]
            _set(res, "configs", dynamic + defaults)
        return response

    # -- CreateTopics ---------------------------------------------------------------------------------

    def _on_19(self, broker: int, req: Any) -> Any:
        """CreateTopics as a controller answers it at the negotiated version: v5+ (2.4+) reports the partition
        count and replication factor it creates (defaults resolved), validateOnly included; kwire leaves
        them out below v5."""
        R = BODY
        out = []
        for t in req.topics:
            code, message, n, rf = (self._create_one(t, req.validate_only, req.api_version)
                                    if broker == self.controller_id else (NOT_CONTROLLER, None, -1, -1))
            out.append(R.CreatableTopicResult(name=t.name, topic_id=self.topic_ids.get(t.name, uuid.UUID(int=0)),
                                              error_code=code, error_message=message, topic_config_error_code=0,
                                              num_partitions=n, replication_factor=rf, configs=None))
        return R(throttle_time_ms=0, topics=out)

    def _create_one(self, t: Any, validate_only: bool, version: int) -> tuple[int, str | None, int, int]:
        """(error, message, partitions, replication factor) with the checks and messages of the release: a
        count and an assignment together are refused (Kafka 2.1's AdminManager), -1 without an assignment
        means the broker's default from v4 on (KIP-464) and, before, fails as 2.1's AdminUtils does."""
        if t.name in self.topics:
            return TOPIC_ALREADY_EXISTS, f"Topic '{t.name}' already exists.", -1, -1
        for other in self.topics:
            if other.replace(".", "_") == t.name.replace(".", "_"):
                return INVALID_TOPIC_EXCEPTION, f"Topic '{t.name}' collides with existing topic: {other}", -1, -1
        if t.assignments:
            if t.num_partitions != -1 or t.replication_factor != -1:
                return INVALID_REQUEST, ("Both numPartitions or replicationFactor and replicasAssignments were set. "
                                         "Both cannot be used at the same time."), -1, -1
            assignment = {a.partition_index: list(a.broker_ids) for a in t.assignments}
            for reps in assignment.values():
                if set(reps) - self.alive:
                    return (INVALID_REPLICA_ASSIGNMENT,
                            f"The manual partition assignment includes broker(s) that are not alive: {reps}", -1, -1)
        else:
            n, rf = t.num_partitions, t.replication_factor
            if version >= 4:
                n = self.default_partitions if n == -1 else n
                rf = self.default_replication_factor if rf == -1 else rf
            if n <= 0:
                return INVALID_PARTITIONS, "Number of partitions must be larger than 0.", -1, -1
            if rf <= 0:
                return INVALID_REPLICATION_FACTOR, "Replication factor must be larger than 0.", -1, -1
            brokers = sorted(self.alive)
            if rf > len(brokers):
                return INVALID_REPLICATION_FACTOR, (f"Unable to replicate the partition {rf} time(s): The target "
                                                    f"replication factor of {rf} cannot be reached because only "
                                                    f"{len(brokers)} broker(s) are registered."), -1, -1
            assignment = {p: [brokers[(p + i) % len(brokers)] for i in range(rf)] for p in range(n)}
        if not validate_only:
            self.add_topic(t.name, assignment)
            cfg = {c.name: c.value for c in t.configs or []}
            if cfg:
                self.set_config("topics", t.name, cfg)
        return NONE, None, len(assignment), len(assignment[min(assignment)])

    # -- CreatePartitions -----------------------------------------------------------------------------

    def _on_37(self, broker: int, req: Any) -> Any:
        """CreatePartitions as the controller of the fake's release answers it: a ZooKeeper-mode broker for
        2.x (`AdminManager`, `ZkAdminManager`), a KRaft controller from 3.3 (`ReplicationControlManager`),
        as the real brokers in shared/fixtures/brokers are; validateOnly changes nothing.  Each topic is
        answered on its own: the others are grown even when one is refused."""
        R = BODY
        out = []
        for t in req.topics:
            code, message = NOT_CONTROLLER, None
            if broker == self.controller_id:
                check = self._grow_kraft if self.kraft else self._grow_zk
                code, message, new = check(t)
                if code == NONE and not req.validate_only:
                    parts = self.topics[t.name]
                    for p, reps in new.items():
                        parts[p] = FakePartition(reps, reps[0], list(reps), log_dir={b: self.log_dirs[0] for b in reps})
            out.append(R.CreatePartitionsTopicResult(name=t.name, error_code=code, error_message=message))
        return R(throttle_time_ms=0, results=out)

    @property
    def kraft(self) -> bool:
        """Whether this release's broker is modelled as KRaft (3.3+: as the fixtures' 3.3.1 and 4.0.0 are)."""
        major, minor = (int(x) for x in self.release.split(".")[:2])
        return (major, minor) >= (3, 3)

    def _grow_zk(self, t: Any) -> tuple[int, str | None, dict[int, list[int]]]:
        """Kafka 2.1's `AdminManager.createPartitions` / 2.8's `ZkAdminManager` with `AdminZkClient`'s checks."""
        parts = self.topics.get(t.name, {})
        moving = [p for p in parts.values() if p.adding or p.removing]
        if self.release.startswith("2.1.") and any(p.adding or p.removing for ps in self.topics.values()
                                                    for p in ps.values()):
            return REASSIGNMENT_IN_PROGRESS, "A partition reassignment is in progress.", {}
        if moving and not self.release.startswith("2.1."):
            return REASSIGNMENT_IN_PROGRESS, f"A partition reassignment is in progress for the topic '{t.name}'.", {}
        if not parts:
            return UNKNOWN_TOPIC_OR_PARTITION, f"The topic '{t.name}' does not exist.", {}
        old, increment = len(parts), t.count - len(parts)
        if increment < 0:
            return INVALID_PARTITIONS, f"Topic currently has {old} partitions, which is higher than the requested {t.count}.", {}
        if increment == 0:
            return INVALID_PARTITIONS, f"Topic already has {old} partitions.", {}
        rf = len(parts[0].replicas)
        brokers = sorted(self.alive)  # ZooKeeper: a registered broker is a live one
        if t.assignments is None:
            if rf > len(brokers):
                return INVALID_REPLICATION_FACTOR, f"Replication factor: {rf} larger than available brokers: {len(brokers)}.", {}
            return NONE, None, {old + i: [brokers[(old + i + j) % len(brokers)] for j in range(rf)] for i in range(increment)}
        given = [list(a.broker_ids) for a in t.assignments]
        unknown = list(dict.fromkeys(b for reps in given for b in reps if b not in self.alive))
        if unknown:  # a Scala Set: insertion order up to 4 elements (the tests stay below)
            return INVALID_REPLICA_ASSIGNMENT, f"Unknown broker(s) in replica assignment: {', '.join(map(str, unknown))}.", {}
        if len(given) != increment:
            return (INVALID_REPLICA_ASSIGNMENT,
                    f"Increasing the number of partitions by {increment} but {len(given)} assignments provided.", {})
        new = {old + i: reps for i, reps in enumerate(given)}
        for p, reps in new.items():
            if not reps:
                return INVALID_REPLICA_ASSIGNMENT, f"Cannot have replication factor of 0 for partition id {p}.", {}
            if len(set(reps)) != len(reps):
                return (INVALID_REPLICA_ASSIGNMENT, "Duplicate brokers not allowed in replica assignment: "
                        f"{', '.join(map(str, reps))} for partition id {p}.", {})
        bad = [(p, len(reps)) for p, reps in new.items() if len(reps) != rf]
        if bad:
            return (INVALID_REPLICA_ASSIGNMENT, f"Inconsistent replication factor between partitions, partition 0 has "
                    f"{rf} while partitions [{', '.join(str(p) for p, _ in bad)}] have replication factors "
                    f"[{', '.join(str(n) for _, n in bad)}], respectively.", {})
        return NONE, None, new

    def _grow_kraft(self, t: Any) -> tuple[int, str | None, dict[int, list[int]]]:
        """`ReplicationControlManager.createPartitions` (3.3-4.x): registered brokers are the fake's brokers,
        the unfenced ones its `alive`; no message for an unknown topic (the client shows its default)."""
        parts = self.topics.get(t.name)
        if not parts:
            return UNKNOWN_TOPIC_OR_PARTITION, None, {}
        old = len(parts)
        if t.count == old:
            return INVALID_PARTITIONS, f"Topic already has {old} partition(s).", {}
        if t.count < old:
            return (INVALID_PARTITIONS,
                    f"The topic {t.name} currently has {old} partition(s); {t.count} would not be an increase.", {})
        additional = t.count - old
        if t.assignments is not None and len(t.assignments) != additional:
            return (INVALID_REPLICA_ASSIGNMENT, f"Attempted to add {additional} additional partition(s), but only "
                    f"{len(t.assignments)} assignment(s) were specified.", {})
        rf = len(parts[min(parts)].replicas)
        if t.assignments is None:
            if not self.alive:
                return INVALID_REPLICATION_FACTOR, "All brokers are currently fenced.", {}
            if rf > len(self.rack):
                return (INVALID_REPLICATION_FACTOR, f"The target replication factor of {rf} cannot be reached because "
                        f"only {len(self.rack)} broker(s) are registered.", {})
            order = sorted(self.alive) + sorted(set(self.rack) - self.alive)  # unfenced brokers first
            return NONE, None, {old + i: [order[(old + i + j) % len(order)] for j in range(rf)] for i in range(additional)}
        new = {}
        for i, a in enumerate(t.assignments):
            reps = list(a.broker_ids)
            error = self._manual_assignment_error(reps, rf)
            if error:
                return INVALID_REPLICA_ASSIGNMENT, error, {}
            if not set(reps) & self.alive:
                return (INVALID_REPLICA_ASSIGNMENT, "All brokers specified in the manual partition assignment for "
                        f"partition {old + i} are fenced or in controlled shutdown.", {})
            new[old + i] = reps
        return NONE, None, new

    def _manual_assignment_error(self, reps: list[int], rf: int) -> str | None:
        """`validateManualPartitionAssignment`: brokers checked in sorted order."""
        if not reps:
            return "The manual partition assignment includes an empty replica list."
        prev = None
        for b in sorted(reps):
            if b not in self.rack:
                return f"The manual partition assignment includes broker {b}, but no such broker is registered."
            if b == prev:
                return f"The manual partition assignment includes the broker {b} more than once."
            prev = b
        if len(reps) != rf:
            return (f"The manual partition assignment includes a partition with {len(reps)} replica(s), but this is "
                    f"not consistent with previous partitions, which have {rf} replica(s).")
        return None

    # -- DeleteTopics ---------------------------------------------------------------------------------

    def _on_20(self, broker: int, req: Any) -> Any:
        R = BODY
        names = [t.name for t in req.topics] if req.topics else list(req.topic_names or [])
        out = []
        for name in names:
            if broker != self.controller_id:
                code, message = NOT_CONTROLLER, None
            elif name in self.topics:
                del self.topics[name]
                self.configs.pop((TOPIC, name), None)
                code, message = NONE, None
            else:
                code, message = UNKNOWN_TOPIC_OR_PARTITION, "This server does not host this topic-partition."
            out.append(R.DeletableTopicResult(name=name, topic_id=self.topic_ids.pop(name, uuid.UUID(int=0)),
                                              error_code=code, error_message=message))
        return R(throttle_time_ms=0, responses=out)

    # -- DescribeTopicPartitions (KIP-966) ------------------------------------------------------------

    def _on_75(self, broker: int, req: Any) -> Any:
        R = BODY
        T = R.DescribeTopicPartitionsResponseTopic
        out = []
        for t in req.topics:
            parts = self.topics.get(t.name)
            if parts is None:
                out.append(T(error_code=UNKNOWN_TOPIC_OR_PARTITION, name=t.name, topic_id=uuid.UUID(int=0),
                             is_internal=False, partitions=[], topic_authorized_operations=-2147483648))
                continue
            ps = []
            for p, fp in sorted(parts.items()):
                elr, lke = self.elr.get((t.name, p), ([], []))
                ps.append(T.DescribeTopicPartitionsResponsePartition(
                    error_code=0, partition_index=p, leader_id=fp.leader, leader_epoch=0, replica_nodes=list(fp.replicas),
                    isr_nodes=list(fp.isr), eligible_leader_replicas=elr, last_known_elr=lke,
                    offline_replicas=[b for b in fp.replicas if b not in self.alive]))
            out.append(T(error_code=0, name=t.name, topic_id=self.topic_ids[t.name], is_internal=t.name.startswith("__"),
                         partitions=ps, topic_authorized_operations=-2147483648))
        return R(throttle_time_ms=0, topics=out, next_cursor=None)
