"""`--execute`: every check before a reassignment starts, and what the tool prints while it does.

`ReassignPartitionsCommand.executeAssignment`, in Kafka's order: the file's checks, an existing
reassignment (`--additional`), unknown brokers and partitions; plus kafkatool's drift check against
a plan file's recorded assignment.  Over ZooKeeper with a reassignment running, Kafka 2.x only
changes its throttle (`RunningThrottleUpdate`).  `start_log_dir_moves` is `executeMoves`
(AlterReplicaLogDirs until each move started).  The throttle configs are in `throttles`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

from kafkatool.cluster.backend import Cluster, UnknownTopicsError
from kafkatool.cluster.model import (
    Assignment,
    ConfigChange,
    OngoingReassignment,
    TopicPartition,
    TopicPartitionReplica,
)
from kafkatool.cluster.reassign.errors import LogDirMoveTimeout, ReassignInputError, ReassignRefused
from kafkatool.cluster.reassign.plan_file import (
    PlanMeta,
    ReassignmentFile,
    format_reassignment_json,
    validate_for_execute,
)
from kafkatool.cluster.reassign.throttles import (
    FOLLOWER_RATE,
    LEADER_RATE,
    LOG_DIR_RATE,
    move_map,
    throttle_changes,
)
from kafkatool.cluster.reassign.verify import _replica_order
from kafkatool.release import Release, tools_in_scala

CANNOT_EXECUTE_BECAUSE_OF_EXISTING = (
    "Cannot execute because there is an existing partition assignment.  Use --additional to override "
    "this and create a new partition assignment in addition to the existing one. The --additional flag "
    "can also be used to change the throttle by resubmitting the current reassignment."
)

VERIFY_PERIODICALLY = (
    "Warning: You must run --verify periodically, until the reassignment completes, to ensure the "
    "throttle is removed."
)


def current_assignment_text(current: Assignment, log_dirs: dict[TopicPartitionReplica, str] | None = None) -> str:
    """Kafka's rollback block printed before a reassignment starts (`log_dirs`: the replicas' current dirs, 4.2+)."""
    return (
        f"Current partition replica assignment\n\n{format_reassignment_json(current, log_dirs)}\n\n"
        "Save this to use as the --reassignment-json-file option during rollback\n"
    )


@dataclass
class Drift:
    partition: TopicPartition
    planned: list[int]
    now: list[int] | None


def detect_drift(plan: PlanMeta, now: Assignment) -> list[Drift]:
    out = []
    for tp, planned in sorted(plan.current.items()):
        cur = now.get(tp)
        if cur is None or list(cur) != list(planned):
            out.append(Drift(tp, list(planned), None if cur is None else list(cur)))
    return out


def drift_message(drifts: list[Drift], limit: int = 5) -> str:
    shown = "; ".join(
        f"{d.partition}: plan saw {','.join(map(str, d.planned))}, now "
        f"{'missing' if d.now is None else ','.join(map(str, d.now))}"
        for d in drifts[:limit]
    )
    more = f" (and {len(drifts) - limit} more)" if len(drifts) > limit else ""
    return (
        f"the cluster's assignment changed since the plan was made for {len(drifts)} partition(s): {shown}{more}; "
        "generate a new plan, or pass --force to execute anyway"
    )


RUNNING_ASSIGNMENT = "There is an existing assignment running."


@dataclass
class RunningThrottleUpdate:
    """Kafka 2.x's `--execute` while `/admin/reassign_partitions` exists (`maybeLimit`).

    It starts nothing and sets the throttle rates given on every broker of the file's topics (all
    their partitions' replicas) and of its target replicas, keeping other broker configs.
    `not_started` lists the file's partitions that the running reassignment does not move there.
    """

    changes: list[ConfigChange]
    not_started: list[TopicPartition]


def running_throttle_update(
    cluster: Cluster,
    targets: dict[TopicPartition, list[int]],
    ongoing: dict[TopicPartition, OngoingReassignment],
    throttle: int,
    log_dir_throttle: int,
) -> RunningThrottleUpdate:
    existing = cluster.assignment(sorted({tp.topic for tp in targets}))
    brokers = dict.fromkeys(b for reps in list(existing.values()) + list(targets.values()) for b in reps)
    rates: dict[str, str] = {}
    if throttle >= 0:
        rates = {LEADER_RATE: str(throttle), FOLLOWER_RATE: str(throttle)}
    if log_dir_throttle >= 0:
        rates[LOG_DIR_RATE] = str(log_dir_throttle)
    changes = [ConfigChange("brokers", str(b), set=dict(rates)) for b in brokers] if rates else []
    def moving_there(tp: TopicPartition, reps: list[int]) -> bool:
        target = ongoing[tp].target if tp in ongoing else None
        return tp in ongoing and (target is None or list(target) == reps)

    not_started = [tp for tp, reps in targets.items() if not moving_there(tp, reps)]
    return RunningThrottleUpdate(changes, sorted(not_started))


@dataclass
class ExecutePlan:
    targets: dict[TopicPartition, list[int]]
    current: Assignment
    ongoing: dict[TopicPartition, OngoingReassignment]
    throttles: list[ConfigChange]
    log_dirs: dict[TopicPartitionReplica, str]
    drift: list[Drift]
    notes: list[str] = field(default_factory=list)
    #: Set when a ZooKeeper reassignment is running: Kafka 2.x then only changes its throttle.
    running: RunningThrottleUpdate | None = None

    def rollback_meta(self, cluster: str) -> PlanMeta:
        return PlanMeta(current=dict(self.targets), kind="rollback", cluster=cluster, strategy="execute",
                        brokers=sorted({b for r in self.current.values() for b in r}), seed=None)


def prepare_execute(
    cluster: Cluster,
    rf: ReassignmentFile,
    *,
    throttle: int = -1,
    log_dir_throttle: int = -1,
    additional: bool = False,
    force: bool = False,
) -> ExecutePlan:
    """Every check before `--execute` changes anything, in Kafka's order, plus drift detection.

    Over ZooKeeper with a reassignment running, Kafka 2.x starts nothing and changes the running
    throttle instead: the plan then only carries that (`running`).
    """
    targets = validate_for_execute(rf)
    if rf.log_dirs and cluster.kind == "zookeeper":
        raise ReassignInputError("bootstrap-server needs to be provided when replica reassignments are present.")
    ongoing = cluster.ongoing_reassignments()
    if cluster.kind == "zookeeper" and any(r.target is not None for r in ongoing.values()):
        running = running_throttle_update(cluster, targets, ongoing, throttle, log_dir_throttle)
        return ExecutePlan(targets, {}, ongoing, running.changes, {}, [], running=running)
    if ongoing and not additional:
        raise ReassignRefused(CANNOT_EXECUTE_BECAUSE_OF_EXISTING)
    alive = {b.id for b in cluster.brokers()}
    wanted = sorted({b for reps in targets.values() for b in reps})
    unknown = [b for b in wanted if b not in alive]
    if unknown:
        raise ReassignInputError(f"Unknown broker id {unknown[0]}")
    try:
        now = cluster.assignment(sorted({tp.topic for tp in targets}))
    except UnknownTopicsError:
        raise
    missing = [tp for tp in targets if tp not in now]
    if missing:
        raise UnknownTopicsError("Unable to find partition: " + ", ".join(str(tp) for tp in missing))
    current = {tp: now[tp] for tp in targets}
    drift = detect_drift(rf.plan, now) if rf.plan is not None else []
    if drift and not force:
        raise ReassignRefused(drift_message(drift))
    throttles = throttle_changes(move_map(ongoing, targets, current), throttle) if throttle >= 0 else []
    notes = []
    if rf.plan is None:
        notes.append("the reassignment file records no current assignment (not a kafkatool plan): drift check skipped")
    return ExecutePlan(targets, current, ongoing, throttles, dict(rf.log_dirs), drift, notes)


def start_log_dir_moves(
    cluster: Cluster,
    moves: dict[TopicPartitionReplica, str],
    timeout: float,
    *,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> Iterator[list[TopicPartitionReplica]]:
    """Kafka's `executeMoves`: send AlterReplicaLogDirs for the pending replicas every 100 ms until
    each move started (a replica still arriving on its new broker cannot move yet); yields each
    round's started replicas in Kafka's order, raises LogDirMoveTimeout after `timeout` seconds."""
    pending = dict(moves)
    deadline = clock() + timeout
    while pending:
        results = cluster.alter_replica_log_dirs(pending)
        started = sorted((r for r, err in results.items() if err is None and r in pending),
                         key=_replica_order)
        for r in started:
            del pending[r]
        if started:
            yield started
        if not pending:
            return
        if clock() >= deadline:
            left = ",".join(str(r) for r in sorted(pending, key=_replica_order))
            plural = "" if len(pending) == 1 else "s"
            raise LogDirMoveTimeout(f"Timed out before log directory move{plural} could be started for: {left}")
        sleep(0.1)


def log_dir_moves_started_text(
    started: list[TopicPartitionReplica], moves: dict[TopicPartitionReplica, str], text: Release
) -> str:
    """One round of started log-dir moves as Kafka prints it (the Scala tool: one line a round)."""
    if tools_in_scala(text):
        return (f"Successfully started log directory move{'' if len(started) == 1 else 's'} for: "
                f"{','.join(map(str, started))}\n")
    return "".join(f"Successfully started moving log directory to {moves[r]} for replica {r.topic}-{r.partition} "
                   f"with broker {r.broker} \n" for r in started)


def started_text(targets: Iterable[TopicPartition]) -> str:
    parts = sorted(targets)
    return f"Successfully started partition reassignment{'' if len(parts) == 1 else 's'} for {','.join(map(str, parts))}\n"


def reassign_errors_text(errors: dict[TopicPartition, str]) -> str:
    return "Error reassigning partition(s):\n" + "\n".join(f"{tp}: {errors[tp]}" for tp in sorted(errors))
