"""What a cluster looks like to the reassign and elect tools, whichever backend read it.

ZooKeeper znodes and Admin API responses both reduce to these few values, so planners, verifiers
and printers are written once and never see a znode or a protocol struct.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple


class TopicPartition(NamedTuple):
    """A partition; prints as Kafka prints `TopicPartition` (`orders-3`)."""

    topic: str
    partition: int

    def __str__(self) -> str:
        return f"{self.topic}-{self.partition}"


class TopicPartitionReplica(NamedTuple):
    """A replica of a partition on a broker; prints as Kafka's `TopicPartitionReplica`."""

    topic: str
    partition: int
    broker: int

    def __str__(self) -> str:
        return f"{self.topic}-{self.partition}-{self.broker}"


Assignment = dict[TopicPartition, list[int]]
"""Replica lists by partition; the first replica is the preferred leader."""


@dataclass(frozen=True)
class Broker:
    id: int
    host: str = ""
    port: int = -1
    rack: str | None = None


@dataclass
class PartitionState:
    """Replicas (assignment order), current leader (-1: none), ISR, and any ongoing move."""

    replicas: list[int]
    leader: int = -1
    isr: list[int] = field(default_factory=list)
    leader_epoch: int = -1
    adding: list[int] = field(default_factory=list)
    removing: list[int] = field(default_factory=list)

    @property
    def preferred(self) -> int:
        return self.replicas[0] if self.replicas else -1


@dataclass
class OngoingReassignment:
    """A reassignment the cluster is running: replicas now (incl. adding), adding, removing.

    `target` is the requested replica list when the backend knows it (ZooKeeper's
    `/admin/reassign_partitions` holds it; the Admin API reports adding/removing instead).
    """

    replicas: list[int]
    adding: list[int] = field(default_factory=list)
    removing: list[int] = field(default_factory=list)
    target: list[int] | None = None


@dataclass
class ConfigChange:
    """Dynamic config edits for one entity: `entity` is "topics" or "brokers" (ZooKeeper's names)."""

    entity: str
    name: str
    set: dict[str, str] = field(default_factory=dict)
    delete: list[str] = field(default_factory=list)

    def apply(self, current: dict[str, str]) -> dict[str, str]:
        out = {k: v for k, v in current.items() if k not in self.delete}
        out.update(self.set)
        return out


@dataclass
class ElectionResult:
    """Outcome of a leader election request.

    Admin API: `results` maps each partition to None (elected), "ElectionNotNeeded", or an error
    string.  ZooKeeper: the request is only written (`znode_json`), the controller acts later.
    """

    results: dict[TopicPartition, str | None] = field(default_factory=dict)
    znode_json: str | None = None


ELECTION_NOT_NEEDED = "ElectionNotNeeded"


def sort_partitions(parts: list[TopicPartition] | set[TopicPartition]) -> list[TopicPartition]:
    """Kafka's `compareTopicPartitions`: by topic name, then partition number."""
    return sorted(parts)
