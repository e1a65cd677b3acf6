"""`recover`: a broker's startup log recovery, offline, with an exact preview of every change.

The steps and their order are the broker's (Kafka 2.1 `Log.loadSegments`/`recoverLog`, 3.x
`LogLoader`), so the result is what a broker would leave, byte for byte in `.log`, `.index`,
`.timeindex` and `.txnindex` (tested against a real 2.1.1 broker's recovery of damaged copies).
This module runs them in order; each step is a module of `kafkatool.ops.recovery`:

1. delete `*.deleted`; delete `*.cleaned` and the `.swap` files they invalidate; complete the other
   interrupted swaps (`recovery.cleanup`, LogLoader.removeTempFilesAndCollectSwapFiles);
2. delete orphan index files (no `.log` beside them) (`recovery.segments`, loadSegmentFiles);
3. choose segments: every segment whose `.index` (or `.timeindex`) is missing or fails the broker's
   sanity check, every swapped-in segment, and - unless the log dir holds `.kafka_cleanshutdown` -
   every segment from the one holding the recovery point (`recovery-point-offset-checkpoint`, 0 when
   absent) to the end; `--full` takes every segment (`recovery.segments`);
4. recover each in order (`log.segment.walk_segment` = `LogSegment.recover`, here): validate batches,
   stop at the first invalid or partial one, truncate there, and - when that segment was past the
   recovery point - delete every later segment; rebuild `.index`/`.timeindex`/`.txnindex`
   (`recovery.truncation`);
5. leader-epoch cache, at every load (`recovery.epochs`, LeaderEpochFileCache);
6. producer snapshots past the new log end offset, or corrupt, are deleted (`recovery.snapshots`);
7. checkpoints: the recovery point becomes the new log end offset (every recovered file is fsynced
   first); high watermark and cleaner offset are lowered to it if above (`recovery.checkpoints`).

Not done as the broker does (documented in README): producer snapshots are deleted, not rewritten;
a topic whose message.format.version is below 0.11 (the broker deletes its leader-epoch-checkpoint)
is not known offline, so the file is kept; a segment holding offsets beyond int32 of its base (the
broker splits it) is reported and its partition left alone.

Safety: a real run happens under the log dir's lock (a dry run takes none and is planned again when
files change under it: `safety.read_consistently`); every change is planned first (`recovery.plan`)
and then applied (`recovery.execute`), so a kill at any point leaves a directory that both a broker
and a re-run load to the same result.  `plan_*` functions only read; `execute_*` write.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from pathlib import Path

from kafkatool.log.files import (
    CLEAN_SHUTDOWN_FILE,
    LOG_START_CHECKPOINT,
    LOG_SUFFIX,
    RECOVERY_POINT_CHECKPOINT,
    list_partition_dirs,
    parse_partition_dir,
    segment_name,
)
from kafkatool.log.segment import STOP_OVERFLOW, SegmentWalk, walk_segment_file
from kafkatool.ops import salvage as salv
from kafkatool.ops.recovery.checkpoints import plan_checkpoints, read_offsets
from kafkatool.ops.recovery.cleanup import PhaseA, plan_cleanup, run_phase_a
from kafkatool.ops.recovery.epochs import EpochCache, plan_epoch_checkpoint, read_epoch_cache
from kafkatool.ops.recovery.execute import execute_log_dir, execute_partition
from kafkatool.ops.recovery.plan import (
    INDEX_SUFFIXES,
    KAFKA_VERSIONS,
    SEGMENT_SUFFIXES,
    TMP_SUFFIX,
    Action,
    LogDirPlan,
    PartitionPlan,
    RecoverInputError,
    RecoverOptions,
)
from kafkatool.ops.recovery.segments import DirView, choose_segments, last_offset_of, plan_orphan_indexes
from kafkatool.ops.recovery.snapshots import plan_snapshots
from kafkatool.ops.recovery.truncation import describe_range, plan_truncations
from kafkatool.ops.safety import read_consistently

__all__ = [
    "INDEX_SUFFIXES",
    "KAFKA_VERSIONS",
    "SEGMENT_SUFFIXES",
    "TMP_SUFFIX",
    "Action",
    "DirView",
    "LogDirPlan",
    "PartitionPlan",
    "PhaseA",
    "RecoverInputError",
    "RecoverOptions",
    "check_salvage_dir",
    "classify",
    "execute_log_dir",
    "execute_partition",
    "plan_log_dir",
    "plan_partition",
    "recover",
    "run_phase_a",
]


def plan_partition(
    partition_dir: Path,
    options: RecoverOptions,
    recovery_point: int | None,
    clean_shutdown: bool,
    log_start_checkpoint: int | None = None,
    phase_a: PhaseA | None = None,
    on_segment: Callable[[int], None] | None = None,
) -> PartitionPlan:
    """Work out (reading only) what broker recovery does to one partition dir: LogLoader.load's steps.

    `phase_a` is what run_phase_a did (real run) or would do (dry run); None previews it here.
    """
    if phase_a is None:
        phase_a = run_phase_a(partition_dir, dry_run=True)
    plan = PartitionPlan(
        partition_dir, options, parse_partition_dir(partition_dir.name), recovery_point, clean_shutdown
    )
    # 0-1. leftovers of an interrupted kafkatool write, temporary files and interrupted swaps
    swapped_bases = plan_cleanup(plan, phase_a)
    temp = [n for n, _ in phase_a.temp]
    view = DirView(partition_dir, phase_a.swap, temp) if options.dry_run else DirView(partition_dir)
    # 2. orphan indexes
    bases = plan_orphan_indexes(plan, view)
    if not bases:
        plan.warnings.append("no segments: a broker creates an empty one at the log start offset")
        return plan
    plan.log_start = max(bases[0], log_start_checkpoint or 0)
    # 3. which segments the broker recovers, and why
    unflushed = choose_segments(plan, view, bases, swapped_bases)
    # 4. recover segment by segment
    epochs = read_epoch_cache(plan, view)
    walked = _recover_segments(plan, view, bases, unflushed, epochs, on_segment)
    if walked is None:
        return plan
    scans, truncated, later = walked
    # log end offsets
    last_base = bases[-1]
    last_before = last_offset_of(view.real(segment_name(last_base, LOG_SUFFIX)), last_base)
    plan.log_end_before = (last_before + 1) if last_before is not None else last_base
    remaining = [x for x in bases if x not in later]
    new_last = remaining[-1]
    plan.log_end_after = scans[new_last].next_offset if new_last in scans else plan.log_end_before
    # truncations (with what salvage can read past the damage), later segments, index rebuilds
    plan_truncations(plan, view, bases, scans, truncated, later)
    # 5. leader-epoch cache, as the broker leaves it after every load (not only after a truncation)
    plan_epoch_checkpoint(plan, view, epochs, log_start_checkpoint)
    # 6. producer snapshots
    plan_snapshots(plan, view)
    if truncated and plan.lost_offsets:
        spans = ", ".join(describe_range(a, b) for a, b in plan.lost_offsets)
        plan.warnings.append(f"records lost: {spans}")
    return plan


def _recover_segments(
    plan: PartitionPlan,
    view: DirView,
    bases: list[int],
    unflushed: set[int],
    epochs: EpochCache,
    on_segment: Callable[[int], None] | None,
) -> tuple[dict[int, SegmentWalk], list[int], list[int]] | None:
    """LogLoader.recoverLog's walk: each chosen segment in order (LogSegment.recover), the epochs of
    its batches assigned; a truncation past the recovery point ends the walk and condemns every later
    segment.  Returns (walks, truncated segments, later segments), or None with plan.error set for a
    segment the broker would split."""
    options = plan.options
    to_recover = sorted(plan.reasons)
    scans: dict[int, SegmentWalk] = {}
    open_txns: set[int] = set()
    prev: int | None = None
    truncated: list[int] = []
    later: list[int] = []
    pos_of = {b: i for i, b in enumerate(bases)}
    for b in to_recover:
        if prev is None or pos_of[b] != pos_of[prev] + 1:
            open_txns = set()
        name = segment_name(b, LOG_SUFFIX)
        scan = walk_segment_file(
            view.real(name),
            b,
            options.index_interval,
            latest_epoch=epochs.latest_epoch,
            open_txns=open_txns,
        )
        if on_segment is not None:
            on_segment(b)
        prev = b
        if scan.stop == STOP_OVERFLOW:
            plan.error = (
                f"{name}: {scan.error}; kafkatool does not split segments, so this partition is left "
                "unchanged (a broker splits the segment on start)"
            )
            return None
        scans[b] = scan
        plan.recovered.append(b)
        plan.fsync_logs.append(b)
        for epoch, start in scan.epochs:
            epochs.assign(epoch, start)
        if scan.truncated_bytes > 0:
            truncated.append(b)
            if b in unflushed:
                later = [x for x in bases if x > b]
                break
            plan.warnings.append(
                f"segment {b} is below the recovery point: like the broker, recover truncates it but keeps "
                "the segments after it (their offsets no longer follow on)"
            )
    return scans, truncated, later


# ---------------------------------------------------------------------------------------------
# log dirs
# ---------------------------------------------------------------------------------------------


def classify(path: Path) -> tuple[Path, list[Path]]:
    """(log dir, partition dirs to recover) for a log dir or a partition dir."""
    from kafkatool.ops.safety import log_dir_of

    if not path.exists():
        raise FileNotFoundError(2, "No such file or directory", str(path))
    if not path.is_dir():
        raise RecoverInputError(f"{path}: not a directory (give a log dir or a partition dir)")
    names = os.listdir(path)
    has_segments = any(n.endswith(SEGMENT_SUFFIXES) and n[:20].isdigit() for n in names)
    if has_segments or (parse_partition_dir(path.name) and not list_partition_dirs(path)):
        if parse_partition_dir(path.name) is None:
            raise RecoverInputError(f"{path}: segment files in a directory not named <topic>-<partition>")
        return log_dir_of(path), [path]
    parts = list_partition_dirs(path)
    if not parts:
        raise RecoverInputError(
            f"{path}: not a log dir or a partition dir (no partition dirs, no segment files)"
        )
    return path.resolve(), parts


def plan_log_dir(
    log_dir: Path,
    partition_dirs: list[Path],
    options: RecoverOptions,
    phase_a: dict[Path, PhaseA] | None = None,
    on_segment: Callable[[str, int], None] | None = None,
) -> LogDirPlan:
    """Plan every partition, then the log-dir changes (marker, checkpoints)."""
    plan = LogDirPlan(log_dir, options)
    w = plan.warnings
    recovery = read_offsets(log_dir / RECOVERY_POINT_CHECKPOINT, w)
    log_starts = read_offsets(log_dir / LOG_START_CHECKPOINT, w)
    clean = (log_dir / CLEAN_SHUTDOWN_FILE).exists()
    for d in partition_dirs:
        tp = parse_partition_dir(d.name)
        plain = tp is not None and d.name == f"{tp[0]}-{tp[1]}"
        rp = recovery.get(tp) if (recovery is not None and tp and plain) else None
        ls = log_starts.get(tp) if (log_starts is not None and tp and plain) else None
        cb = None if on_segment is None else (lambda b, _n=d.name: on_segment(_n, b))
        pa = (phase_a or {}).get(d)
        plan.partitions.append(plan_partition(d, options, rp, clean, ls, pa, cb))
    if options.salvage_dir is not None:
        for p in plan.partitions:
            if any(fs.batches for _, fs in p.salvage):
                out = options.salvage_dir / p.name
                plan.actions.append(
                    Action(
                        "salvage",
                        str(out),
                        f"write {sum(len(fs.batches) for _, fs in p.salvage)} valid batches found past the damage of "
                        f"{p.name} to {out}",
                        {"partition": p.name},
                    )
                )
    if clean and any(p.changes_data and not p.error for p in plan.partitions):
        plan.remove_marker = True
        plan.actions.append(
            Action(
                "remove_clean_shutdown_marker",
                CLEAN_SHUTDOWN_FILE,
                f"delete {CLEAN_SHUTDOWN_FILE} first, so that a broker started after an interruption recovers and "
                "rebuilds producer state itself",
            )
        )
    plan_checkpoints(plan, recovery, log_starts)
    return plan


def check_salvage_dir(salvage_dir: Path, log_dir: Path, partitions: Iterable[Path]) -> None:
    """Refuse a salvage dir inside the log dir (a broker would load it) or one that already holds data."""
    s = salvage_dir.resolve()
    ld = log_dir.resolve()
    if s == ld or ld in s.parents:
        raise RecoverInputError(f"--salvage {salvage_dir}: must be outside the log dir {log_dir}")
    for d in partitions:
        t = s / d.name
        if t.exists() and any(t.iterdir()):
            raise RecoverInputError(f"--salvage {salvage_dir}: {t} already holds files; give an empty dir")


def recover(
    path: Path, options: RecoverOptions, on_segment: Callable[[str, int], None] | None = None
) -> LogDirPlan:
    """recover one log dir or partition dir.

    A real run needs the caller to hold the log dir's lock.  A dry run takes none (it previews a live
    log dir too): it is planned again when a segment is renamed, replaced or truncated meanwhile.
    """
    log_dir, parts = classify(path)
    if options.salvage_dir is not None:
        check_salvage_dir(options.salvage_dir, log_dir, parts)
    if options.dry_run:
        return read_consistently(lambda: _preview(log_dir, parts, options, on_segment), parts)
    phase_a = {d: run_phase_a(d, False) for d in parts}
    plan = plan_log_dir(log_dir, parts, options, phase_a, on_segment)
    execute_log_dir(plan)
    return plan


def _preview(
    log_dir: Path, parts: list[Path], options: RecoverOptions, on_segment: Callable[[str, int], None] | None
) -> LogDirPlan:
    """The dry run's plan: reads only."""
    phase_a = {d: run_phase_a(d, True) for d in parts}
    plan = plan_log_dir(log_dir, parts, options, phase_a, on_segment)
    if options.salvage_dir is not None:
        plan.salvage_reports = [
            salv.SalvageReport(
                p.name, str(options.salvage_dir / p.name), [fs for _, fs in p.salvage], [], p.lost_offsets
            )
            for p in plan.partitions
            if p.salvage
        ]
    return plan
