"""The cluster image a KRaft node holds, and how each metadata record changes it.

Follows Kafka 4.0's `MetadataImage` and the `replay` methods of `MetadataDelta` and its parts
(`FeaturesDelta`, `ClusterDelta`, `TopicsDelta`/`TopicDelta`, `ConfigurationsDelta`, `ClientQuotasDelta`,
`ProducerIdsDelta`, `AclsDelta`, `ScramDelta`, `DelegationTokenDelta`), with `PartitionRegistration.merge`
for partition changes.  Records between a `BeginTransactionRecord` and its end take effect together at
the `EndTransactionRecord` and never after an `AbortTransactionRecord` (`MetadataBatchLoader`).

Every part is plain data (dicts and lists of record fields, UUIDs as their 16 bytes) so an image can
be copied, compared and written as JSON.  A record that cannot apply (a change to an unknown
partition, a fence of an unknown broker) raises `ImageError`, Kafka's `IllegalStateException`.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from kafkatool.log.decoders.metadata import MetadataRecord

NO_LEADER_CHANGE = -2
MIGRATING_DIR = bytes(15) + b"\x02"  # DirectoryId.MIGRATING
SCRAM_MECHANISMS = {1: "SCRAM-SHA-256", 2: "SCRAM-SHA-512"}


class ImageError(ValueError):
    """A record that cannot apply to the image it meets."""


@dataclass
class Provenance:
    """What the image contains up to: `MetadataProvenance` (last offset, its epoch and append time)."""

    offset: int = -1
    epoch: int = -1
    time_ms: int = -1


@dataclass
class Image:
    """Kafka's `MetadataImage`, as plain data."""

    provenance: Provenance = field(default_factory=Provenance)
    metadata_version: int | None = None  # the metadata.version feature level
    finalized: dict[str, int] = field(default_factory=dict)  # the other finalized features
    brokers: dict[int, dict[str, Any]] = field(default_factory=dict)
    controllers: dict[int, dict[str, Any]] = field(default_factory=dict)
    topics: dict[bytes, dict[str, Any]] = field(default_factory=dict)  # id -> {name, id, partitions}
    configs: dict[tuple[int, str], dict[str, str]] = field(default_factory=dict)  # (type id, name) -> data
    client_quotas: dict[tuple[tuple[str, str | None], ...], dict[str, float]] = field(default_factory=dict)
    next_producer_id: int = -1
    acls: dict[bytes, dict[str, Any]] = field(default_factory=dict)
    scram: dict[int, dict[str, dict[str, Any]]] = field(default_factory=dict)  # mechanism -> user -> data
    tokens: dict[str, dict[str, Any]] = field(default_factory=dict)

    def copy(self) -> Image:
        return copy.deepcopy(self)

    def topic_by_name(self, name: str) -> dict[str, Any] | None:
        for t in self.topics.values():
            if t["name"] == name:
                return t
        return None

    @property
    def topics_by_name(self) -> dict[str, dict[str, Any]]:
        return {t["name"]: t for t in self.topics.values()}


class ImageBuilder:
    """Applies records in log order, holding back a metadata transaction until it ends."""

    def __init__(self, image: Image | None = None) -> None:
        self.image = image or Image()
        self._pending: list[MetadataRecord] | None = None

    @property
    def in_transaction(self) -> bool:
        return self._pending is not None

    def apply(self, rec: MetadataRecord) -> list[MetadataRecord]:
        """Apply one record; returns the records that took effect now (none inside a transaction)."""
        kind = rec.type
        if kind == "BEGIN_TRANSACTION_RECORD":
            self._pending = []
            return []
        if kind == "END_TRANSACTION_RECORD":
            done, self._pending = self._pending or [], None
            for r in done:
                apply_record(self.image, r)
            return done
        if kind == "ABORT_TRANSACTION_RECORD":
            self._pending = None
            return []
        if self._pending is not None:
            self._pending.append(rec)
            return []
        apply_record(self.image, rec)
        return [rec]


def _partition_from_record(d: dict[str, Any]) -> dict[str, Any]:
    dirs = list(d.get("directories") or ())
    if not dirs:
        dirs = [MIGRATING_DIR] * len(d["replicas"])
    return {
        "replicas": list(d["replicas"]),
        "directories": dirs,
        "isr": list(d["isr"]),
        "removingReplicas": list(d["removingReplicas"]),
        "addingReplicas": list(d["addingReplicas"]),
        "elr": list(d.get("eligibleLeaderReplicas") or ()),
        "lastKnownElr": list(d.get("lastKnownElr") or ()),
        "leader": d["leader"],
        "leaderRecoveryState": d.get("leaderRecoveryState", 0),
        "leaderEpoch": d["leaderEpoch"],
        "partitionEpoch": d["partitionEpoch"],
    }


def merge_partition(p: dict[str, Any], d: dict[str, Any]) -> dict[str, Any]:
    """`PartitionRegistration.merge(PartitionChangeRecord)`."""
    replicas = p["replicas"] if d.get("replicas") is None else list(d["replicas"])
    dirs = p["directories"] if d.get("directories") is None else list(d["directories"])
    if not dirs:
        dirs = [MIGRATING_DIR] * len(replicas)
    leader, epoch = p["leader"], p["leaderEpoch"]
    if d.get("leader", NO_LEADER_CHANGE) != NO_LEADER_CHANGE:
        leader, epoch = d["leader"], epoch + 1
    lrs = d.get("leaderRecoveryState", -1)
    return {
        "replicas": replicas,
        "directories": dirs,
        "isr": p["isr"] if d.get("isr") is None else list(d["isr"]),
        "removingReplicas": p["removingReplicas"]
        if d.get("removingReplicas") is None
        else list(d["removingReplicas"]),
        "addingReplicas": p["addingReplicas"]
        if d.get("addingReplicas") is None
        else list(d["addingReplicas"]),
        "elr": p["elr"] if d.get("eligibleLeaderReplicas") is None else list(d["eligibleLeaderReplicas"]),
        "lastKnownElr": p["lastKnownElr"] if d.get("lastKnownElr") is None else list(d["lastKnownElr"]),
        "leader": leader,
        "leaderRecoveryState": p["leaderRecoveryState"] if lrs == -1 else lrs,
        "leaderEpoch": epoch,
        "partitionEpoch": p["partitionEpoch"] + 1,
    }


def _broker(img: Image, broker_id: int, epoch: int, what: str) -> dict[str, Any]:
    b = img.brokers.get(broker_id)
    if b is None:
        raise ImageError(f"Tried to {what} broker {broker_id}, but that broker was not registered.")
    if b["epoch"] != epoch:
        raise ImageError(
            f"Tried to {what} broker {broker_id}, but the given epoch, {epoch}, did not match "
            f"the current broker epoch, {b['epoch']}."
        )
    return b


def _topic(img: Image, topic_id: bytes, what: str) -> dict[str, Any]:
    t = img.topics.get(bytes(topic_id))
    if t is None:
        raise ImageError(f"{what} refers to an unknown topic")
    return t


def apply_record(img: Image, rec: MetadataRecord) -> None:  # noqa: C901 - one branch per record type
    """One record's `replay` on the image."""
    d = rec.data
    kind = rec.type
    if kind == "FEATURE_LEVEL_RECORD":
        if d["name"] == "metadata.version":
            img.metadata_version = d["featureLevel"]
        elif d["featureLevel"] == 0:
            img.finalized.pop(d["name"], None)
        else:
            img.finalized[d["name"]] = d["featureLevel"]
    elif kind == "REGISTER_BROKER_RECORD":
        img.brokers[d["brokerId"]] = {
            "id": d["brokerId"],
            "epoch": d["brokerEpoch"],
            "incarnationId": d["incarnationId"],
            "endPoints": list(d["endPoints"]),
            "features": list(d["features"]),
            "rack": d["rack"],
            "fenced": d["fenced"],
            "inControlledShutdown": d.get("inControlledShutdown", False),
            "isMigratingZkBroker": d.get("isMigratingZkBroker", False),
            "directories": list(d.get("logDirs") or ()),
        }
    elif kind == "UNREGISTER_BROKER_RECORD":
        _broker(img, d["brokerId"], d["brokerEpoch"], "unregister")
        del img.brokers[d["brokerId"]]
    elif kind in ("FENCE_BROKER_RECORD", "UNFENCE_BROKER_RECORD"):
        b = _broker(img, d["id"], d["epoch"], "fence" if kind == "FENCE_BROKER_RECORD" else "unfence")
        b["fenced"] = kind == "FENCE_BROKER_RECORD"
    elif kind == "BROKER_REGISTRATION_CHANGE_RECORD":
        b = _broker(img, d["brokerId"], d["brokerEpoch"], "change")
        fenced = d.get("fenced", 0)
        if fenced not in (-1, 0, 1) or d.get("inControlledShutdown", 0) not in (0, 1):
            raise ImageError(
                f"Unable to replay a broker registration change of broker {d['brokerId']}: "
                f"unknown value for fenced or inControlledShutdown"
            )
        if fenced:
            b["fenced"] = fenced == 1
        if d.get("inControlledShutdown", 0) == 1:
            b["inControlledShutdown"] = True
        if d.get("logDirs"):
            b["directories"] = list(d["logDirs"])
    elif kind == "REGISTER_CONTROLLER_RECORD":
        img.controllers[d["controllerId"]] = dict(d)
    elif kind == "TOPIC_RECORD":
        tid = bytes(d["topicId"])
        img.topics[tid] = {"name": d["name"], "id": tid, "partitions": {}}
    elif kind == "PARTITION_RECORD":
        t = _topic(img, d["topicId"], f"PartitionRecord of partition {d['partitionId']}")
        t["partitions"][d["partitionId"]] = _partition_from_record(d)
    elif kind == "PARTITION_CHANGE_RECORD":
        t = _topic(img, d["topicId"], f"PartitionChangeRecord of partition {d['partitionId']}")
        p = t["partitions"].get(d["partitionId"])
        if p is None:
            raise ImageError(
                f"Unable to apply a change to partition {t['name']}-{d['partitionId']}: it does not exist"
            )
        t["partitions"][d["partitionId"]] = merge_partition(p, d)
    elif kind == "REMOVE_TOPIC_RECORD":
        t = _topic(img, d["topicId"], "RemoveTopicRecord")
        del img.topics[t["id"]]
        img.configs.pop((2, t["name"]), None)  # TopicsDelta drops the deleted topic's configs too
    elif kind == "CLEAR_ELR_RECORD":
        for t in img.topics.values():
            if not d["topicName"] or t["name"] == d["topicName"]:
                for p in t["partitions"].values():
                    if p["elr"] or p["lastKnownElr"]:
                        p["elr"], p["lastKnownElr"] = [], []
                        p["partitionEpoch"] += 1
    elif kind == "CONFIG_RECORD":
        key = (d["resourceType"], d["resourceName"])
        data = img.configs.setdefault(key, {})
        if d["value"] is None:
            data.pop(d["name"], None)
        else:
            data[d["name"]] = d["value"]
        if not data:
            del img.configs[key]
    elif kind == "CLIENT_QUOTA_RECORD":
        entity = tuple(sorted((e["entityType"], e["entityName"]) for e in d["entity"]))
        quotas = img.client_quotas.setdefault(entity, {})
        if d["remove"]:
            quotas.pop(d["key"], None)
        else:
            quotas[d["key"]] = d["value"]
        if not quotas:
            del img.client_quotas[entity]
    elif kind == "PRODUCER_IDS_RECORD":
        img.next_producer_id = d["nextProducerId"]
    elif kind == "ACCESS_CONTROL_ENTRY_RECORD":
        img.acls[bytes(d["id"])] = dict(d)
    elif kind == "REMOVE_ACCESS_CONTROL_ENTRY_RECORD":
        if bytes(d["id"]) not in img.acls:
            raise ImageError("Failed to find the ACL to remove")
        del img.acls[bytes(d["id"])]
    elif kind == "USER_SCRAM_CREDENTIAL_RECORD":
        if "mechanism" in d:  # the 3.5+ layout; 3.3's never reached a released image
            img.scram.setdefault(d["mechanism"], {})[d["name"]] = dict(d)
    elif kind == "REMOVE_USER_SCRAM_CREDENTIAL_RECORD":
        img.scram.get(d["mechanism"], {}).pop(d["name"], None)
    elif kind == "DELEGATION_TOKEN_RECORD":
        img.tokens[d["tokenId"]] = dict(d)
    elif kind == "REMOVE_DELEGATION_TOKEN_RECORD":
        img.tokens.pop(d["tokenId"], None)
    # NoOpRecord, ZkMigrationStateRecord, AccessControlRecord: nothing the image shows
