"""`--verify`: where each partition's reassignment and each replica's log-dir move stands.

`ReassignPartitionsCommand.findPartitionReassignmentStates` and `findLogDirMoveStates`, with
`partitionReassignmentStatesToString` and `replicaMoveStatesToString`'s text.  Clearing the
throttles once done is in `throttles`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kafkatool.cluster.backend import Cluster, UnknownTopicsError
from kafkatool.cluster.model import (
    Assignment,
    TopicPartition,
    TopicPartitionReplica,
)
from kafkatool.cluster.reassign.plan_file import ReassignmentFile


@dataclass
class PartitionReassignmentState:
    current: list[int]
    target: list[int]
    done: bool


@dataclass
class LogDirMoveState:
    """`kind`: missing-replica, missing-log-dir, active, cancelled, completed (Kafka's move states)."""

    kind: str
    target: str
    current: str | None = None
    future: str | None = None

    @property
    def done(self) -> bool:
        return self.kind in ("completed", "cancelled")


@dataclass
class VerifyResult:
    states: dict[TopicPartition, PartitionReassignmentState]
    parts_ongoing: bool
    moves: dict[TopicPartitionReplica, LogDirMoveState] = field(default_factory=dict)
    moves_ongoing: bool = False

    @property
    def in_progress(self) -> bool:
        return any(not s.done for s in self.states.values()) or self.moves_ongoing

    @property
    def failed(self) -> list[TopicPartition]:
        return [tp for tp, s in sorted(self.states.items()) if s.done and s.current != s.target]

    def status(self, tp: TopicPartition) -> str:
        s = self.states[tp]
        if not s.done:
            return "in_progress"
        return "completed" if s.current == s.target else "failed"

    def rows(self) -> list[dict[str, Any]]:
        return [
            {"topic": tp.topic, "partition": tp.partition, "status": self.status(tp),
             "current_replicas": s.current, "target_replicas": s.target}
            for tp, s in sorted(self.states.items())
        ]


def verify(cluster: Cluster, rf: ReassignmentFile) -> VerifyResult:
    """Kafka's `findPartitionReassignmentStates` and `findLogDirMoveStates`."""
    targets = rf.partitions
    ongoing = cluster.ongoing_reassignments()
    states: dict[TopicPartition, PartitionReassignmentState] = {}
    lookup = sorted({tp.topic for tp, _ in targets if tp not in ongoing})
    described: Assignment = {}
    for topic in lookup:
        try:
            described.update(cluster.assignment([topic]))
        except UnknownTopicsError:
            pass
    for tp, target in targets:
        if tp in ongoing:
            states[tp] = PartitionReassignmentState(list(ongoing[tp].replicas), list(target), False)
        else:
            states[tp] = PartitionReassignmentState(list(described.get(tp, [])), list(target), True)
    result = VerifyResult(states, bool(ongoing))
    if rf.log_dirs:
        found = cluster.replica_log_dirs(rf.log_dirs)
        for replica, target_dir in rf.log_dirs.items():
            if replica not in found:
                result.moves[replica] = LogDirMoveState("missing-replica", target_dir)
                continue
            cur, fut = found[replica]
            if cur is None:
                result.moves[replica] = LogDirMoveState("missing-log-dir", target_dir)
            elif fut is None:
                kind = "completed" if cur == target_dir else "cancelled"
                result.moves[replica] = LogDirMoveState(kind, target_dir, cur)
            else:
                result.moves[replica] = LogDirMoveState("active", target_dir, cur, fut)
        result.moves_ongoing = any(not m.done for m in result.moves.values())
    return result


def partition_states_text(states: dict[TopicPartition, PartitionReassignmentState]) -> str:
    lines = ["Status of partition reassignment:"]
    for tp in sorted(states):
        s = states[tp]
        if s.done:
            if s.current == s.target:
                lines.append(f"Reassignment of partition {tp} is completed.")
            else:
                lines.append(
                    f"There is no active reassignment of partition {tp}, but replica set is "
                    f"{','.join(map(str, s.current))} rather than {','.join(map(str, s.target))}."
                )
        else:
            lines.append(f"Reassignment of partition {tp} is still in progress.")
    return "\n".join(lines)


def _replica_order(r: TopicPartitionReplica) -> tuple[int, str, int]:
    return (r.broker, r.topic, r.partition)


def move_states_text(moves: dict[TopicPartitionReplica, LogDirMoveState]) -> str:
    lines = []
    for r in sorted(moves, key=_replica_order):
        m = moves[r]
        name = f"{r.topic}-{r.partition}"
        if m.kind == "missing-log-dir":
            lines.append(f"Partition {name} is not found in any live log dir on broker {r.broker}. "
                         "There is likely an offline log directory on the broker.")
        elif m.kind == "missing-replica":
            lines.append(f"Partition {name} cannot be found in any live log directory on broker {r.broker}.")
        elif m.kind == "active":
            if m.target == m.future:
                lines.append(f"Reassignment of replica {r} is still in progress.")
            else:
                lines.append(f"Partition {name} on broker {r.broker} is being moved to log dir {m.future} instead of {m.target}.")
        elif m.kind == "cancelled":
            lines.append(f"Partition {name} on broker {r.broker} is not being moved from log dir {m.current} to {m.target}.")
        else:
            lines.append(f"Reassignment of replica {r} completed successfully.")
    return "\n".join(lines)


def verify_text(result: VerifyResult, admin_api: bool) -> str:
    """Kafka 3.x prints the replica-move block (possibly empty) after the partition block."""
    text = partition_states_text(result.states) + "\n"
    if admin_api:
        text += move_states_text(result.moves) + "\n"
    return text
