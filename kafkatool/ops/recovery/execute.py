"""Applying a real run's plan: every step leaves a directory that a broker and a re-run load alike.

Order and protocol: salvage first, then the clean-shutdown marker goes (so a broker started after an
interruption recovers and rebuilds producer state itself), then per partition orphan indexes,
rewritten indexes, later segments renamed to `.deleted` newest first (an interruption leaves a prefix
of the log) and deleted, snapshots, the truncated segment written beside the old and swapped in with
Kafka's protocol (`safety.replace_segments`: `.cleaned` -> `.swap` -> `.deleted`), the leader-epoch
checkpoint, fsyncs; the log dir's checkpoints last.  `crash_point`s let the fault-injection tests kill
it between any two steps.
"""

from __future__ import annotations

import os
from pathlib import Path

from kafkatool.log.checkpoint import atomic_write, format_checkpoint, fsync_dir
from kafkatool.log.files import (
    CLEAN_SHUTDOWN_FILE,
    CLEANED_SUFFIX,
    DELETED_SUFFIX,
    LEADER_EPOCH_CHECKPOINT,
    LOG_SUFFIX,
    segment_name,
)
from kafkatool.ops import salvage as salv
from kafkatool.ops.recovery.plan import SEGMENT_SUFFIXES, LogDirPlan, PartitionPlan
from kafkatool.ops.safety import crash_point, replace_segments


def _copy_prefix(src: Path, dst: Path, length: int) -> None:
    """Copy the first `length` bytes of src to a new file dst, fsynced."""
    with open(src, "rb") as fi, open(dst, "wb") as fo:
        remaining = length
        try:
            while remaining > 0:
                n = os.copy_file_range(fi.fileno(), fo.fileno(), remaining)
                if n == 0:
                    break
                remaining -= n
        except (AttributeError, OSError):
            fi.seek(length - remaining)
            while remaining > 0:
                chunk = fi.read(min(remaining, 8 << 20))
                if not chunk:
                    break
                fo.write(chunk)
                remaining -= len(chunk)
        if remaining:
            raise OSError(f"{src}: could not copy {length} bytes (file shorter than expected)")
        fo.flush()
        os.fsync(fo.fileno())


def _fsync_file(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def execute_partition(plan: PartitionPlan) -> None:
    """Apply a (real-run) partition plan; every step leaves a loadable directory."""
    if plan.error:
        return
    pdir = plan.dir
    for n in plan.orphan_deletes:
        (pdir / n).unlink(missing_ok=True)
    if plan.orphan_deletes:
        fsync_dir(pdir)
        crash_point("recover-orphans-deleted")
    # indexes of segments that stay as they are
    for path, data in plan.index_writes.items():
        if data is not None:
            atomic_write(path, data)
            crash_point("recover-index-written")
    # later segments: newest first to .deleted, so an interruption leaves a prefix of the log
    for base in sorted(plan.segment_deletes, reverse=True):
        for suffix in SEGMENT_SUFFIXES:
            f = pdir / segment_name(base, suffix)
            if f.exists():
                os.replace(f, f.with_name(f.name + DELETED_SUFFIX))
        fsync_dir(pdir)
        crash_point("recover-segment-renamed-deleted")
    for base in plan.segment_deletes:
        for suffix in SEGMENT_SUFFIXES:
            (pdir / (segment_name(base, suffix) + DELETED_SUFFIX)).unlink(missing_ok=True)
    if plan.segment_deletes:
        fsync_dir(pdir)
        crash_point("recover-segments-deleted")
    for n in plan.snapshot_deletes:
        (pdir / n).unlink(missing_ok=True)
    if plan.snapshot_deletes:
        fsync_dir(pdir)
        crash_point("recover-snapshots-deleted")
    # the truncated segment: a new copy beside the old, swapped in with Kafka's protocol
    for base, valid, files in plan.truncations:
        log = pdir / segment_name(base, LOG_SUFFIX)
        _copy_prefix(log, log.with_name(log.name + CLEANED_SUFFIX), valid)
        for path, data in files.items():
            if data is None:
                continue
            tmp = path.with_name(path.name + CLEANED_SUFFIX)
            with open(tmp, "wb") as fh:
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())
        crash_point("recover-cleaned-written")
        replace_segments(pdir, [base], [base])
    if plan.epoch_bytes is not None:
        atomic_write(pdir / LEADER_EPOCH_CHECKPOINT, plan.epoch_bytes)
        crash_point("recover-epoch-checkpoint-written")
    for base in plan.fsync_logs:
        log = pdir / segment_name(base, LOG_SUFFIX)
        if log.exists():
            _fsync_file(log)
    fsync_dir(pdir)


def execute_log_dir(plan: LogDirPlan) -> None:
    """Apply a real-run plan: salvage first, then the marker, partitions, and checkpoints last."""
    opts = plan.options
    if opts.salvage_dir is not None:
        _write_salvage(plan)
    if plan.remove_marker:
        (plan.log_dir / CLEAN_SHUTDOWN_FILE).unlink(missing_ok=True)
        fsync_dir(plan.log_dir)
        crash_point("recover-marker-removed")
    for p in plan.partitions:
        execute_partition(p)
    for name, offsets in plan.checkpoint_writes.items():
        entries = [(t, q, o) for (t, q), o in sorted(offsets.items())]
        atomic_write(plan.log_dir / name, format_checkpoint(entries).encode())  # type: ignore[arg-type]
        crash_point("recover-checkpoint-written")


def _write_salvage(plan: LogDirPlan) -> None:
    out = plan.options.salvage_dir
    assert out is not None
    reports = []
    for p in plan.partitions:
        if not p.salvage:
            continue
        target = out / p.name
        written = []
        if any(fs.batches for _, fs in p.salvage):
            written = salv.write_salvage(target, p.salvage, plan.options.index_interval)
        reports.append(
            salv.SalvageReport(p.name, str(target), [fs for _, fs in p.salvage], written, p.lost_offsets)
        )
    plan.salvage_reports = reports
    if reports:
        out.mkdir(parents=True, exist_ok=True)
        salv.write_report(out, reports)
        crash_point("recover-salvage-written")
