"""Producer-state snapshots at load (ProducerStateManager / LogLoader's producer-state rebuild).

A snapshot past the new log end offset, or corrupt, is deleted: the broker deletes those when it
loads and rebuilds producer state from an older snapshot and the log.  (The broker also writes new
snapshots; recover does not, and the broker rebuilds them.)
"""

from __future__ import annotations

from kafkatool.log.errors import CorruptSnapshotError
from kafkatool.log.producer_state import snapshot_files
from kafkatool.log.snapshot import read_producer_snapshot
from kafkatool.ops.recovery.plan import Action, PartitionPlan
from kafkatool.ops.recovery.segments import DirView


def plan_snapshots(plan: PartitionPlan, view: DirView) -> None:
    """Snapshots past the log end offset, or unreadable, are deleted."""
    assert plan.log_end_after is not None
    for off, path in snapshot_files(plan.dir):
        n = path.name
        if not view.exists(n):
            continue
        if off > plan.log_end_after:
            _delete(
                plan, n, off, f"producer state past the log end offset {plan.log_end_after}", "past_log_end"
            )
            continue
        try:
            read_producer_snapshot(view.read(n))
        except CorruptSnapshotError as exc:
            _delete(plan, n, off, f"{exc} (the broker rebuilds producer state from the log)", "corrupt")


def _delete(plan: PartitionPlan, name: str, offset: int, why: str, reason: str) -> None:
    """Plan the deletion of snapshot `name`, saying why (`reason` the machine-readable word)."""
    plan.snapshot_deletes.append(name)
    plan.actions.append(
        Action("delete_snapshot", name, f"delete {name}: {why}", {"offset": offset, "reason": reason})
    )
