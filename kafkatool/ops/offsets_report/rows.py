"""The rows of a group report: one partition's offsets and lag, a member, a group's state, a group.

ConsumerGroupCommand's own value classes, as kafkatool's rows: `PartitionLag` is Kafka's
`PartitionAssignmentState` (plus lag in time and rates), `MemberRow` its `MemberAssignmentState`,
`StateRow` its `GroupInformation`, `GroupReport` the rows of one group as `collectGroupsOffsets` returns
them.  `lag_of` is its `getLag`.  Every other part of the report (Kafka's texts, exports, reset plans)
reads these.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass, field, fields
from operator import attrgetter
from typing import Any

TP = tuple[str, int]
MISSING = "-"


@dataclass(slots=True)
class PartitionLag:
    """One row of a group's offsets.  `current_offset` None = no committed offset (-1 = the ZooKeeper
    topic dir exists without this partition, which Kafka shows as -1 / lag unknown)."""

    group: str
    topic: str | None
    partition: int | None
    current_offset: int | None
    log_end_offset: int | None
    lag: int | None
    consumer_id: str | None = None
    host: str | None = None
    client_id: str | None = None
    owner: str | None = None
    leader: int | None = None
    metadata: str | None = None
    state: str | None = None
    committed_timestamp: int | None = None
    time_lag_ms: int | None = None
    time_lag_note: str | None = None
    consume_rate: float | None = None
    produce_rate: float | None = None
    drain_seconds: float | None = None

    def as_row(self) -> dict[str, Any]:
        # asdict's field-by-field deep copy, without its cost (the fields are all scalars): a report
        # renders a row per partition
        return dict(zip(_LAG_FIELDS, _lag_values(self), strict=True))


_LAG_FIELDS = tuple(f.name for f in fields(PartitionLag))
_lag_values = attrgetter(*_LAG_FIELDS)

ROW_COLUMNS = [
    "group", "state", "topic", "partition", "current_offset", "log_end_offset", "lag", "consumer_id", "host",
    "client_id", "owner", "leader", "metadata",
]
TIME_COLUMNS = ["committed_timestamp", "time_lag_ms", "time_lag_note"]
RATE_COLUMNS = ["consume_rate", "produce_rate", "drain_seconds"]


def lag_of(offset: int | None, log_end: int | None) -> int | None:
    """Kafka's getLag: no lag without a committed offset (or -1) or without a log-end offset."""
    if offset is None or offset == -1 or log_end is None:
        return None
    return log_end - offset


def _s(v: object) -> str:
    return MISSING if v is None else str(v)


@dataclass(slots=True)
class MemberRow:
    group: str
    consumer_id: str
    group_instance_id: str
    host: str
    client_id: str
    partitions: int
    assignment: list[TP]
    member_epoch: int | None = None  # KIP-848 groups: the member's epoch, its target, the group's target epoch
    target_assignment: list[TP] = field(default_factory=list)
    target_epoch: int | None = None
    upgraded: bool | None = None

    def as_row(self) -> dict[str, Any]:
        d = asdict(self)
        d["assignment"] = [{"topic": t, "partition": p} for t, p in self.assignment]
        d["target_assignment"] = [{"topic": t, "partition": p} for t, p in self.target_assignment]
        return d


def member_rows(group: str, members: Iterable[Any], target_epoch: int | None = None) -> list[MemberRow]:
    return [
        MemberRow(group, m.member_id, m.group_instance_id or "", m.host, m.client_id, len(set(m.assignment)),
                  list(m.assignment), getattr(m, "member_epoch", None), list(getattr(m, "target_assignment", []) or []),
                  target_epoch, getattr(m, "upgraded", None))
        for m in members
    ]


@dataclass(slots=True)
class StateRow:
    group: str
    coordinator_id: int | None
    coordinator: str
    assignment_strategy: str
    state: str
    members: int

    def as_row(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(slots=True)
class GroupReport:
    """One group's rows; `state` None means the group does not exist."""

    group: str
    kind: str
    state: str | None
    rows: list[PartitionLag]
    members: list[MemberRow]
    coordinator: str = MISSING
    coordinator_id: int | None = None
    protocol: str = ""
    pending: int = 0
