"""One cluster interface for the reassign and elect tools, over ZooKeeper or the Admin API.

Two implementations: `zk.ZkCluster` reads and writes the znodes of Kafka 0.8–2.x (kazoo),
`admin.AdminCluster` talks to brokers through kafka-python's `KafkaAdminClient`; `open.open_cluster`
picks one.  Everything above this module (planners, verifiers, printers) sees only `Cluster` and the
values in `kafkatool.cluster.model`.  Every call is bounded by the timeout given to `open_cluster`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable

from kafkatool import release
from kafkatool.cluster.connect import ClusterError, ClusterInputError
from kafkatool.cluster.model import (
    Assignment,
    Broker,
    ConfigChange,
    ElectionResult,
    OngoingReassignment,
    PartitionState,
    TopicPartition,
    TopicPartitionReplica,
)
from kafkatool.release import Release

__all__ = [
    "Cluster",
    "ClusterError",
    "ClusterInputError",
    "ClusterUnsupported",
    "UnknownTopicsError",
    "ReassignmentInProgressError",
    "ElectionInProgressError",
]


class ClusterUnsupported(ClusterInputError):
    """The chosen backend cannot do this (e.g. cancel over ZooKeeper): a usage error, exit 2."""


class UnknownTopicsError(ClusterInputError):
    """Topics or partitions named by the user do not exist (Kafka's wording in the message)."""


class ReassignmentInProgressError(ClusterError):
    """`/admin/reassign_partitions` already exists: a reassignment is running."""


class ElectionInProgressError(ClusterError):
    """`/admin/preferred_replica_election` already exists: an election is running."""


class Cluster(ABC):
    """What the tools need from a cluster; see `zk.ZkCluster` and `admin.AdminCluster`."""

    kind: str = "cluster"
    source: str = ""
    #: The brokers' Kafka release when the backend can tell (e.g. from ApiVersions); None otherwise.
    broker_release: Release | None = None

    def text_release(self) -> Release:
        """Which release's tool text to print for this cluster (`release.text_release`)."""
        return release.text_release(self.broker_release)

    @abstractmethod
    def brokers(self) -> list[Broker]:
        """Live brokers, by id."""

    @abstractmethod
    def controller(self) -> int | None:
        """The controller's broker id, when known."""

    @abstractmethod
    def topics(self) -> list[str]:
        """All topic names, sorted."""

    @abstractmethod
    def partition_states(self, topics: Iterable[str] | None = None) -> dict[TopicPartition, PartitionState]:
        """Replicas, leader and ISR of every partition of `topics` (all topics when None).

        Raises UnknownTopicsError naming the first missing topic as Kafka does.
        """

    def assignment(self, topics: Iterable[str] | None = None) -> Assignment:
        return {tp: list(st.replicas) for tp, st in self.partition_states(topics).items()}

    @abstractmethod
    def ongoing_reassignments(self) -> dict[TopicPartition, OngoingReassignment]:
        """Reassignments the cluster is running now."""

    @abstractmethod
    def start_reassignment(
        self, targets: dict[TopicPartition, list[int]], throttles: list[ConfigChange]
    ) -> dict[TopicPartition, str | None]:
        """Apply throttle configs and start moving `targets`; per-partition error or None.

        Never leaves half the admin state behind: ZooKeeper writes configs and the reassignment in
        one transaction; the Admin backend restores the old configs when no partition was accepted.
        """

    def cancel_reassignments(self, parts: Iterable[TopicPartition]) -> dict[TopicPartition, str | None]:
        raise ClusterUnsupported(
            "--cancel needs --bootstrap-server: reassignments started through ZooKeeper cannot be cancelled"
        )

    @abstractmethod
    def describe_configs(self, entity: str, names: Iterable[str]) -> dict[str, dict[str, str]]:
        """Dynamic config overrides of topics ("topics") or brokers ("brokers") by name."""

    @abstractmethod
    def alter_configs(self, changes: list[ConfigChange]) -> None:
        """Set and delete dynamic config overrides."""

    def partition_sizes(self, topics: Iterable[str]) -> dict[TopicPartition, int] | None:
        """Bytes per partition (largest replica), or None when the backend cannot tell."""
        return None

    def partition_sizes_of(self, assignment: Assignment) -> dict[TopicPartition, int] | None:
        """Sizes of the partitions of `assignment` (a backend may ask only their brokers)."""
        return self.partition_sizes(sorted({tp.topic for tp in assignment}))

    def replica_log_dirs(
        self, replicas: Iterable[TopicPartitionReplica]
    ) -> dict[TopicPartitionReplica, tuple[str | None, str | None]]:
        """(current log dir, future log dir) of replicas found on their brokers."""
        raise ClusterUnsupported("bootstrap-server needs to be provided when replica reassignments are present.")

    def alter_replica_log_dirs(self, moves: dict[TopicPartitionReplica, str]) -> dict[TopicPartitionReplica, str | None]:
        raise ClusterUnsupported("bootstrap-server needs to be provided when replica reassignments are present.")

    @abstractmethod
    def elect_leaders(self, election_type: str, parts: list[TopicPartition] | None) -> ElectionResult:
        """Run (Admin) or request (ZooKeeper) a "preferred" or "unclean" leader election."""

    @abstractmethod
    def close(self) -> None:
        """Release connections."""

    def __enter__(self) -> Cluster:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
