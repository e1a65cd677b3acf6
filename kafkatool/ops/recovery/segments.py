"""Loading a partition's segment files: LogLoader.loadSegmentFiles and the choice of what to recover.

The broker deletes index files without a `.log` beside them, sanity-checks every segment's indexes
(`index_reason`: a missing or corrupt `.index`/`.timeindex`/`.txnindex` makes it recover that
segment), and recovers every segment from the one holding the recovery point unless the log dir
holds `.kafka_cleanshutdown` (LogLoader.recoverLog).  `DirView` reads the directory as it will be
once interrupted swaps are resolved, so a dry run sees what a real run would.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from kafkatool.log.errors import CorruptIndexError
from kafkatool.log.files import (
    INDEX_SUFFIX,
    LOG_SUFFIX,
    TIME_INDEX_SUFFIX,
    TXN_INDEX_SUFFIX,
    MappedFile,
    offset_from_name,
    segment_name,
)
from kafkatool.log.index import OffsetIndex, TimeIndex, read_txn_index
from kafkatool.log.records import BatchScan
from kafkatool.ops.recovery.plan import INDEX_SUFFIXES, Action, PartitionPlan
from kafkatool.ops.safety import SwapResolution


class DirView:
    """A partition dir as it will be once interrupted swaps are resolved.

    Names are final names (`...0042.log`); `real(name)` is the file that holds them now (a `.swap`
    file in a dry run).  In a real run swaps are resolved first and the view is the directory.
    """

    def __init__(
        self, partition_dir: Path, resolution: SwapResolution | None = None, gone: Iterable[str] = ()
    ) -> None:
        self.dir = partition_dir
        names = set(os.listdir(partition_dir)) - set(gone)
        self._real = {n: partition_dir / n for n in names}
        if resolution is not None:
            for n in resolution.deleted:
                self._real.pop(n, None)
            for src, dst in resolution.renamed:
                self._real.pop(src, None)
                self._real[dst] = partition_dir / src

    def names(self) -> list[str]:
        return sorted(self._real)

    def exists(self, name: str) -> bool:
        return name in self._real

    def real(self, name: str) -> Path:
        return self._real.get(name, self.dir / name)

    def get(self, name: str) -> Path | None:
        """The file holding `name`, or None when it will not exist."""
        return self._real.get(name)

    def size(self, name: str) -> int:
        return self.real(name).stat().st_size if name in self._real else 0

    def read(self, name: str) -> bytes:
        return self.real(name).read_bytes()

    def segment_bases(self) -> list[int]:
        return sorted(
            int(n[: -len(LOG_SUFFIX)])
            for n in self._real
            if n.endswith(LOG_SUFFIX) and n[: -len(LOG_SUFFIX)].isdigit()
        )


def last_offset_of(path: Path, base: int) -> int | None:
    """Last offset of a log file without CRC checks: from its index's last entry, then a header walk."""
    start = 0
    idx = path.with_name(segment_name(base, INDEX_SUFFIX))
    if idx.exists():
        try:
            oi = OffsetIndex(idx.read_bytes(), base, idx)
            oi.sanity_check()
            used = oi.used_entries()
            if used:
                start = oi.entry(used - 1).position
        except (CorruptIndexError, OSError):
            start = 0
    last = None
    with MappedFile(path) as mf:
        if start > mf.size:
            start = 0
        for b in BatchScan(mf.buf, start):
            last = b.last_offset
        if last is None and start:
            for b in BatchScan(mf.buf, 0):
                last = b.last_offset
    return last


def index_reason(view: DirView, base: int) -> str | None:
    """Why the broker would recover a segment at load time (its indexes), or None."""
    idx = segment_name(base, INDEX_SUFFIX)
    tidx = segment_name(base, TIME_INDEX_SUFFIX)
    txn = segment_name(base, TXN_INDEX_SUFFIX)
    if not view.exists(idx):
        return "offset index missing"
    if not view.exists(tidx):
        return "time index missing"
    try:
        OffsetIndex(view.read(idx), base, view.dir / idx).sanity_check()
        TimeIndex(view.read(tidx), base, view.dir / tidx).sanity_check()
    except CorruptIndexError as exc:
        return f"corrupt index: {exc}"
    if view.exists(txn):
        data = view.read(txn)
        if len(data) % 34:
            return f"corrupt transaction index: {len(data)} bytes is not a multiple of 34"
        for e in read_txn_index(data):
            if e.last_offset < base:
                return f"corrupt transaction index: entry ending at {e.last_offset} is below the base offset"
    return None


# ---------------------------------------------------------------------------------------------


def plan_orphan_indexes(plan: PartitionPlan, view: DirView) -> list[int]:
    """Index files without their log file are deleted; returns the segments' base offsets."""
    bases = view.segment_bases()
    base_set = set(bases)
    for n in view.names():
        if n.endswith(INDEX_SUFFIXES) and n[:20].isdigit() and offset_from_name(n) not in base_set:
            plan.orphan_deletes.append(n)
            plan.actions.append(
                Action(
                    "delete_orphan_index",
                    n,
                    f"delete {n} (an index without a log file)",
                    {"bytes": view.size(n)},
                )
            )
    plan.segments = bases
    return bases


def choose_segments(
    plan: PartitionPlan, view: DirView, bases: list[int], swapped_bases: set[int]
) -> set[int]:
    """Which segments the broker recovers, and why (into plan.reasons); returns the unflushed ones
    (past the recovery point), whose truncation deletes every later segment."""
    options = plan.options
    recovery_point = plan.recovery_point
    rp = recovery_point if recovery_point is not None else 0
    if options.full:
        unflushed = set(bases)
        why_unflushed = "--full"
    elif plan.clean_shutdown:
        unflushed = set()
        why_unflushed = ""
    else:
        floor = max((i for i, b in enumerate(bases) if b <= rp), default=0)
        unflushed = set(bases[floor:])
        why_unflushed = (
            f"at or past the recovery point {rp}"
            if recovery_point is not None
            else "no recovery point (every segment)"
        )
    for b in bases:
        reason = "swapped in by an interrupted swap" if b in swapped_bases else index_reason(view, b)
        if reason:
            plan.reasons[b] = reason
        elif b in unflushed:
            plan.reasons[b] = why_unflushed
    return unflushed
