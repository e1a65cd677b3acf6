"""What the group and offset calls return, and the broker error codes they react to.

The values of `ConsumerGroupCommand`'s describe output before it is printed: members and their
assignments (`MemberAssignmentState`), a group's state and coordinator (`GroupInformation`), committed
offsets (OffsetFetch), listed offsets (ListOffsets) and record timestamps (Fetch).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

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
