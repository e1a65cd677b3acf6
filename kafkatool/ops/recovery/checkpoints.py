"""The log dir's offset checkpoints after recovery (LogManager's recovery-point, replication and
cleaner checkpoints, and the log-start-offset one it reads).

The recovery point becomes the new log end offset (every recovered file is fsynced first); the high
watermark and the cleaner offset are lowered to it when above.  An unreadable checkpoint is warned
about and left as it is.
"""

from __future__ import annotations

from pathlib import Path

from kafkatool.log.checkpoint import read_offset_checkpoint
from kafkatool.log.errors import CheckpointError
from kafkatool.log.files import (
    CLEANER_CHECKPOINT,
    LOG_START_CHECKPOINT,
    RECOVERY_POINT_CHECKPOINT,
    REPLICATION_CHECKPOINT,
)
from kafkatool.ops.recovery.plan import Action, LogDirPlan


def read_offsets(path: Path, warnings: list[str]) -> dict[tuple[str, int], int] | None:
    """An offset checkpoint, {} for an empty file, None when absent; unreadable ones are warned about."""
    if not path.is_file():
        return None
    if path.stat().st_size == 0:
        return {}
    try:
        return read_offset_checkpoint(path)
    except (CheckpointError, UnicodeDecodeError) as exc:
        warnings.append(f"{path.name}: cannot read it ({exc}); left as it is")
        return None


def plan_checkpoints(plan: LogDirPlan, recovery: dict | None, log_starts: dict | None) -> None:
    w = plan.warnings
    done = [
        p
        for p in plan.partitions
        if not p.error
        and p.topic_partition
        and p.segments
        and p.dir.name == f"{p.topic_partition[0]}-{p.topic_partition[1]}"
    ]
    if not done:
        return
    # recovery point := log end offset (files fsynced first)
    rp_new = dict(recovery or {})
    changed = False
    for p in done:
        tp = p.topic_partition
        assert tp is not None and p.log_end_after is not None
        old_rp = rp_new.get(tp)
        if old_rp != p.log_end_after and (p.recovered or (old_rp is not None and old_rp > p.log_end_after)):
            old = rp_new.get(tp)
            rp_new[tp] = p.log_end_after
            changed = True
            was = "(no entry: added)" if old is None else str(old)
            plan.actions.append(
                Action(
                    "update_checkpoint",
                    RECOVERY_POINT_CHECKPOINT,
                    f"set {tp[0]} {tp[1]} in {RECOVERY_POINT_CHECKPOINT}: {was} -> {p.log_end_after} "
                    "(the new log end offset)",
                    {"partition": p.name, "old": old, "new": p.log_end_after, "added": old is None},
                )
            )
    unreadable = recovery is None and (plan.log_dir / RECOVERY_POINT_CHECKPOINT).is_file()
    if changed and not unreadable:  # an unreadable checkpoint is left as it is (warned about above)
        plan.checkpoint_writes[RECOVERY_POINT_CHECKPOINT] = rp_new
    elif changed:
        plan.actions = [a for a in plan.actions if a.file != RECOVERY_POINT_CHECKPOINT]
    for name in (REPLICATION_CHECKPOINT, CLEANER_CHECKPOINT):
        cur = read_offsets(plan.log_dir / name, w)
        if not cur:
            continue
        new = dict(cur)
        for p in done:
            tp = p.topic_partition
            assert tp is not None and p.log_end_after is not None
            if tp in new and new[tp] > p.log_end_after:
                plan.actions.append(
                    Action(
                        "update_checkpoint",
                        name,
                        f"set {tp[0]} {tp[1]} in {name}: {new[tp]} -> {p.log_end_after} (it was above the new log end offset)",
                        {"partition": p.name, "old": new[tp], "new": p.log_end_after},
                    )
                )
                new[tp] = p.log_end_after
        if new != cur:
            plan.checkpoint_writes[name] = new
    for p in done:
        tp = p.topic_partition
        ls = (log_starts or {}).get(tp)  # type: ignore[arg-type]
        if ls is not None and p.log_end_after is not None and ls > p.log_end_after:
            p.warnings.append(
                f"log start offset {ls} ({LOG_START_CHECKPOINT}) is above the new log end offset "
                f"{p.log_end_after}: a Kafka 3.x broker deletes every segment of this partition on start"
            )
