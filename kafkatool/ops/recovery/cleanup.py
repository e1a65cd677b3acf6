"""The broker's first loading step: LogLoader.removeTempFilesAndCollectSwapFiles and the swaps.

`*.deleted` files are deleted; `*.cleaned` files and the `.swap` files they invalidate are deleted; the
other interrupted swaps are completed (`safety.finish_interrupted_swaps`, Kafka's protocol); kafkatool's
own interrupted writes (`*.index.tmp` ...) are deleted.  A real run does this first, under the lock
(`run_phase_a`); a dry run previews it, and `plan_cleanup` writes the actions down either way.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from kafkatool.log.files import (
    CLEANED_SUFFIX,
    DELETED_SUFFIX,
    LEADER_EPOCH_CHECKPOINT,
    LOG_SUFFIX,
    SWAP_SUFFIX,
    offset_from_name,
)
from kafkatool.ops.recovery.plan import INDEX_SUFFIXES, TMP_SUFFIX, Action, PartitionPlan
from kafkatool.ops.safety import SwapResolution, crash_point, finish_interrupted_swaps


@dataclass
class PhaseA:
    """The broker's first loading step (temporary files, interrupted swaps): done or previewed."""

    temp: list[tuple[str, int]]  # our own interrupted writes (*.index.tmp ...): name, bytes
    swap: SwapResolution
    sizes: dict[str, int]


def _is_our_tmp(name: str) -> bool:
    return name.endswith(TMP_SUFFIX) and name[: -len(TMP_SUFFIX)].endswith(
        (*INDEX_SUFFIXES, LEADER_EPOCH_CHECKPOINT)
    )


def run_phase_a(partition_dir: Path, dry_run: bool) -> PhaseA:
    """Delete leftovers of interrupted writes and resolve interrupted swaps (or preview it).

    Crash-safe: it is the broker's own start-up step, which a broker or a re-run simply redoes.
    """
    sizes = {}
    for entry in os.scandir(partition_dir):
        if entry.is_file():
            sizes[entry.name] = entry.stat().st_size
    temp = [(n, sizes[n]) for n in sorted(sizes) if _is_our_tmp(n)]
    if not dry_run:
        for n, _ in temp:
            (partition_dir / n).unlink(missing_ok=True)
    swap = finish_interrupted_swaps(partition_dir, dry_run=dry_run)
    if not dry_run and (temp or swap.deleted or swap.renamed):
        crash_point("recover-swaps-resolved")
    return PhaseA(temp, swap, sizes)


def plan_cleanup(plan: PartitionPlan, phase_a: PhaseA) -> set[int]:
    """The actions of the first step (temporary files, interrupted swaps); returns the base offsets of
    the segments an interrupted swap brings in (the broker recovers each)."""
    swap = phase_a.swap
    plan.swap = swap
    plan.temp_deletes = [n for n, _ in phase_a.temp]
    for n, size in phase_a.temp:
        plan.actions.append(
            Action(
                "delete_temp_file",
                n,
                f"delete {n} ({size} bytes, left by an interrupted write)",
                {"bytes": size},
            )
        )
    swapped_bases = {offset_from_name(dst) for _src, dst in swap.renamed if dst.endswith(LOG_SUFFIX)}
    for n in swap.deleted:
        size = phase_a.sizes.get(n, 0)
        if n.endswith(DELETED_SUFFIX):
            text = f"delete {n} ({size} bytes, already marked for deletion)"
            kind = "delete_deleted_file"
        elif n.endswith((CLEANED_SUFFIX, SWAP_SUFFIX)):
            text = f"delete {n} ({size} bytes, left by an interrupted cleaning or split)"
            kind = "delete_temp_file"
        else:
            text = f"delete {n} ({size} bytes, replaced by an interrupted swap, which is completed)"
            kind = "delete_replaced_file"
        plan.actions.append(Action(kind, n, text, {"bytes": size}))
    for src, dst in swap.renamed:
        plan.actions.append(
            Action(
                "complete_swap", src, f"rename {src} to {dst} (complete an interrupted swap)", {"target": dst}
            )
        )
    return swapped_bases
