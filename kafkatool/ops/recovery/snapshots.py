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
            plan.snapshot_deletes.append(n)
            plan.actions.append(
                Action(
                    "delete_snapshot",
                    n,
                    f"delete {n}: producer state past the log end offset {plan.log_end_after}",
                    {"offset": off, "reason": "past_log_end"},
                )
            )
            continue
        try:
            read_producer_snapshot(view.read(n))
        except CorruptSnapshotError as exc:
            plan.snapshot_deletes.append(n)
            plan.actions.append(
                Action(
                    "delete_snapshot",
                    n,
                    f"delete {n}: {exc} (the broker rebuilds producer state from the log)",
                    {"offset": off, "reason": "corrupt"},
                )
            )
