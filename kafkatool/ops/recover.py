"""`recover`: a broker's startup log recovery, offline, with an exact preview of every change.

The steps and their order are the broker's (Kafka 2.1 `Log.loadSegments`/`recoverLog`, 3.x
`LogLoader`), so the result is what a broker would leave, byte for byte in `.log`, `.index`,
`.timeindex` and `.txnindex` (tested against a real 2.1.1 broker's recovery of damaged copies):

1. delete `*.deleted`; delete `*.cleaned` and the `.swap` files they invalidate; complete the other
   interrupted swaps (`safety.finish_interrupted_swaps`);
2. delete orphan index files (no `.log` beside them);
3. choose segments: every segment whose `.index` (or `.timeindex`) is missing or fails the broker's
   sanity check, every swapped-in segment, and - unless the log dir holds `.kafka_cleanshutdown` -
   every segment from the one holding the recovery point (`recovery-point-offset-checkpoint`, 0 when
   absent) to the end; `--full` takes every segment;
4. recover each in order (`log.segment.walk_segment` = `LogSegment.recover`): validate batches, stop
   at the first invalid or partial one, truncate there, and - when that segment was past the
   recovery point - delete every later segment; rebuild `.index`/`.timeindex`/`.txnindex`;
5. leader-epoch cache, at every load: epochs recovery assigns, then entries at or past the new log
   end offset go (`truncateFromEnd`) and the first is moved up to the log start (`truncateFromStart`:
   Kafka 2.1 takes the log start offset, 3.x the log-start-offset checkpoint as it is, so leftover
   `.deleted` segments that moved the start change the cache under 2.1 only; 3.x also loads the file
   through `assign`, dropping non-monotonic entries); a missing `leader-epoch-checkpoint` is created
   empty, as the broker's CheckpointFile does;
6. producer snapshots past the new log end offset, or corrupt, are deleted (the broker deletes them
   when it loads; it then rebuilds producer state from an older snapshot and the log);
7. checkpoints: the recovery point becomes the new log end offset (every recovered file is fsynced
   first); high watermark and cleaner offset are lowered to it if above.

Not done as the broker does (documented in README): producer snapshots are deleted, not rewritten;
a topic whose message.format.version is below 0.11 (the broker deletes its leader-epoch-checkpoint)
is not known offline, so the file is kept; a segment holding offsets beyond int32 of its base (the
broker splits it) is reported and its partition left alone.

Safety: a real run happens under the log dir's lock (a dry run takes none and is planned again when
files change under it: `safety.read_consistently`); new data is written beside the old and renamed
in (`safety.replace_segments`: `.cleaned` -> `.swap` -> `.deleted`), later segments are renamed to
`.deleted` newest first before they are removed, and the clean-shutdown marker is removed before the
first change of data, so a kill at any point leaves a directory that both a broker and a re-run load
to the same result.  `plan_*` functions only read; `execute_*` write.

Size: the broker's LogLoader as one plan and its application (swaps, orphan indexes, validation from the
recovery point, truncation, deletions, index rebuilds, leader-epoch and checkpoint updates, salvage hooks):
the steps share one plan object and one crash/interrupt protocol, and their order is the broker's.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from kafkatool.log.checkpoint import (
    atomic_write,
    format_checkpoint,
    fsync_dir,
    read_leader_epoch_checkpoint,
    read_offset_checkpoint,
)
from kafkatool.log.errors import CheckpointError, CorruptIndexError, CorruptSnapshotError
from kafkatool.log.files import (
    CLEAN_SHUTDOWN_FILE,
    CLEANED_SUFFIX,
    CLEANER_CHECKPOINT,
    DELETED_SUFFIX,
    INDEX_SUFFIX,
    LEADER_EPOCH_CHECKPOINT,
    LOG_START_CHECKPOINT,
    LOG_SUFFIX,
    RECOVERY_POINT_CHECKPOINT,
    REPLICATION_CHECKPOINT,
    SWAP_SUFFIX,
    TIME_INDEX_SUFFIX,
    TXN_INDEX_SUFFIX,
    MappedFile,
    SegmentFiles,
    list_partition_dirs,
    offset_from_name,
    parse_partition_dir,
    segment_name,
)
from kafkatool.log.index import DEFAULT_INDEX_INTERVAL, OffsetIndex, TimeIndex, read_txn_index
from kafkatool.log.producer_state import TxnIndexState, snapshot_files
from kafkatool.log.records import BatchScan
from kafkatool.log.segment import STOP_OVERFLOW, SegmentWalk, walk_segment_file
from kafkatool.log.snapshot import read_producer_snapshot
from kafkatool.ops import salvage as salv
from kafkatool.ops.indexcheck import index_changes, rebuilt_files
from kafkatool.ops.safety import (
    SwapResolution,
    crash_point,
    finish_interrupted_swaps,
    read_consistently,
    replace_segments,
)

INDEX_SUFFIXES = (INDEX_SUFFIX, TIME_INDEX_SUFFIX, TXN_INDEX_SUFFIX)
SEGMENT_SUFFIXES = (LOG_SUFFIX, *INDEX_SUFFIXES)
TMP_SUFFIX = ".tmp"


class RecoverInputError(ValueError):
    """A path recover cannot work on (not a log dir or partition dir, salvage dir inside the log dir)."""


@dataclass
class RecoverOptions:
    full: bool = False  # recover every segment, ignoring the recovery point and a clean-shutdown marker
    dry_run: bool = False
    index_interval: int = DEFAULT_INDEX_INTERVAL
    salvage_dir: Path | None = None
    kafka_version: str = "3"  # whose load rules for the leader-epoch cache: "3" (3.x LogLoader) or "2.1"


KAFKA_VERSIONS = ("3", "2.1")


@dataclass
class Action:
    """One change recover makes (or would make).  `kind` and the fields are stable for JSON."""

    kind: str
    file: str | None
    text: str  # one line for people
    fields: dict[str, object] = field(default_factory=dict)
    data_loss: bool = False  # removes records (truncation, segment deletion)

    def to_json(self) -> dict[str, object]:
        return {
            "action": self.kind,
            "file": self.file,
            **self.fields,
            "data_loss": self.data_loss,
            "description": self.text,
        }


@dataclass
class PartitionPlan:
    """Everything recover found and will change in one partition dir."""

    dir: Path
    options: RecoverOptions
    topic_partition: tuple[str, int] | None = None
    recovery_point: int | None = None
    clean_shutdown: bool = False
    segments: list[int] = field(default_factory=list)
    recovered: list[int] = field(default_factory=list)
    reasons: dict[int, str] = field(default_factory=dict)
    log_end_before: int | None = None
    log_end_after: int | None = None
    log_start: int = 0
    actions: list[Action] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    error: str | None = None  # the partition is left alone (e.g. offset overflow)
    # what execute_partition needs
    swap: SwapResolution | None = None
    temp_deletes: list[str] = field(default_factory=list)
    orphan_deletes: list[str] = field(default_factory=list)
    index_writes: dict[Path, bytes | None] = field(default_factory=dict)
    truncations: list[tuple[int, int, dict[Path, bytes | None]]] = field(
        default_factory=list
    )  # base, valid, indexes
    segment_deletes: list[int] = field(default_factory=list)
    snapshot_deletes: list[str] = field(default_factory=list)
    epoch_bytes: bytes | None = None  # new leader-epoch-checkpoint, when it changes
    salvage: list[tuple[Path, salv.FileSalvage]] = field(default_factory=list)
    salvage_next_bases: list[int | None] = field(default_factory=list)
    lost_offsets: list[tuple[int, int | None]] = field(default_factory=list)
    fsync_logs: list[int] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.dir.name

    @property
    def data_loss(self) -> bool:
        return any(a.data_loss for a in self.actions)

    @property
    def changes_data(self) -> bool:
        """Changes that need the broker to re-check producer state and recovery (not index-only)."""
        return bool(
            self.truncations
            or self.segment_deletes
            or self.snapshot_deletes
            or self.temp_deletes
            or (self.swap and (self.swap.deleted or self.swap.renamed))
        )

    def to_json(self) -> dict[str, object]:
        return {
            "partition": self.name,
            "dir": str(self.dir),
            "recovery_point": self.recovery_point,
            "segments": self.segments,
            "recovered_segments": self.recovered,
            "recovery_reasons": {str(k): v for k, v in self.reasons.items()},
            "log_start_offset": self.log_start,
            "log_end_offset_before": self.log_end_before,
            "log_end_offset": self.log_end_after,
            "data_loss": self.data_loss,
            "lost_offset_ranges": [list(r) for r in self.lost_offsets],
            "salvageable_batches": sum(len(fs.batches) for _, fs in self.salvage),
            "actions": [a.to_json() for a in self.actions],
            "warnings": self.warnings,
            "error": self.error,
        }


@dataclass
class LogDirPlan:
    """recover's plan for one log dir: its partitions plus the log-dir files it changes."""

    log_dir: Path
    options: RecoverOptions
    partitions: list[PartitionPlan] = field(default_factory=list)
    actions: list[Action] = field(default_factory=list)
    remove_marker: bool = False
    checkpoint_writes: dict[str, dict[tuple[str, int], int]] = field(default_factory=dict)
    salvage_reports: list[salv.SalvageReport] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def data_loss(self) -> bool:
        return any(p.data_loss for p in self.partitions)

    @property
    def errors(self) -> list[str]:
        return [f"{p.name}: {p.error}" for p in self.partitions if p.error]

    def to_json(self) -> dict[str, object]:
        return {
            "log_dir": str(self.log_dir),
            "dry_run": self.options.dry_run,
            "full": self.options.full,
            "index_interval": self.options.index_interval,
            "salvage_dir": None if self.options.salvage_dir is None else str(self.options.salvage_dir),
            "clean_shutdown_marker": (self.log_dir / CLEAN_SHUTDOWN_FILE).exists() or self.remove_marker,
            "data_loss": self.data_loss,
            "partitions": [p.to_json() for p in self.partitions],
            "log_dir_actions": [a.to_json() for a in self.actions],
            "salvage": [r.to_json() for r in self.salvage_reports],
            "warnings": self.warnings,
        }


# ---------------------------------------------------------------------------------------------
# reading what is there (through swaps not yet completed, for dry runs)
# ---------------------------------------------------------------------------------------------


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


def _read_offsets(path: Path, warnings: list[str]) -> dict[tuple[str, int], int] | None:
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


def _last_offset_of(path: Path, base: int) -> int | None:
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


def _index_reason(view: DirView, base: int) -> str | None:
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
# planning
# ---------------------------------------------------------------------------------------------


def _epoch_assign(entries: list[tuple[int, int]], epoch: int, start: int) -> list[tuple[int, int]]:
    """LeaderEpochFileCache.assign: drop entries not below the new one, append it."""
    if entries and entries[-1][0] == epoch and start >= entries[-1][1]:
        return entries
    return [e for e in entries if e[0] < epoch and e[1] < start] + [(epoch, start)]


def _epoch_load(entries: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Kafka 3.x's cache as loaded from a file: every entry assigned in turn (no flush)."""
    out: list[tuple[int, int]] = []
    for epoch, start in entries:
        out = _epoch_assign(out, epoch, start)
    return out


def _epoch_file_after_load(
    current: bytes | None,
    loaded: list[tuple[int, int]],
    assigned: list[tuple[int, int]],
    log_end: int | None,
    start: int,
) -> tuple[list[tuple[int, int]], bytes]:
    """The leader-epoch cache and its file's bytes as a broker leaves them after loading a partition.

    `loaded` is the cache as loaded from `current`, `assigned` after recovery's assigns.
    LeaderEpochFileCache writes the whole file (`flush`) whenever `assign` changes the entries, when
    `truncateFromEnd(log end)` removes entries starting at or past the log end, and whenever
    `truncateFromStart(start)` finds an entry at or below `start` (it then moves that entry up to
    `start`, rewriting the file even when nothing moved).  A missing file is created empty by the
    CheckpointFile constructor and stays empty until the first flush.  `start` is the release's:
    Kafka 2.1 uses the log start offset (the checkpoint's, raised to the first segment's base);
    3.x's LogLoader passes the log-start-offset checkpoint as it is.
    """
    entries = list(assigned)
    flushed = entries != loaded  # recovery's assign flushes when it changes the cache
    if log_end is not None and log_end >= 0 and entries and entries[-1][1] >= log_end:
        entries = [e for e in entries if e[1] < log_end]
        flushed = True
    before = [e for e in entries if e[1] <= start]
    if before:
        entries = [(before[-1][0], start)] + [e for e in entries if e[1] > start]
        flushed = True
    if flushed:
        return entries, format_checkpoint(list(entries)).encode()  # type: ignore[arg-type]
    return entries, b"" if current is None else current


def _describe_range(first: int, last: int | None) -> str:
    if last is None:
        return f"offsets {first} and up (how far is unknown)"
    return f"offset {first}" if first == last else f"offsets {first}..{last}"


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


def plan_partition(
    partition_dir: Path,
    options: RecoverOptions,
    recovery_point: int | None,
    clean_shutdown: bool,
    log_start_checkpoint: int | None = None,
    phase_a: PhaseA | None = None,
    on_segment: Callable[[int], None] | None = None,
) -> PartitionPlan:
    """Work out (reading only) what broker recovery does to one partition dir.

    `phase_a` is what run_phase_a did (real run) or would do (dry run); None previews it here.
    """
    if phase_a is None:
        phase_a = run_phase_a(partition_dir, dry_run=True)
    plan = PartitionPlan(
        partition_dir, options, parse_partition_dir(partition_dir.name), recovery_point, clean_shutdown
    )
    pdir = partition_dir

    # 0-1. leftovers of an interrupted kafkatool write, temporary files and interrupted swaps
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
    view = DirView(pdir, swap, [n for n, _ in phase_a.temp]) if options.dry_run else DirView(pdir)

    # 2. orphan indexes
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
    if not bases:
        plan.warnings.append("no segments: a broker creates an empty one at the log start offset")
        return plan
    plan.log_start = max(bases[0], log_start_checkpoint or 0)

    # 3. which segments the broker recovers, and why
    rp = recovery_point if recovery_point is not None else 0
    if options.full:
        unflushed = set(bases)
        why_unflushed = "--full"
    elif clean_shutdown:
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
        reason = "swapped in by an interrupted swap" if b in swapped_bases else _index_reason(view, b)
        if reason:
            plan.reasons[b] = reason
        elif b in unflushed:
            plan.reasons[b] = why_unflushed
    to_recover = sorted(plan.reasons)

    # 4. recover segment by segment
    epochs_file = view.exists(LEADER_EPOCH_CHECKPOINT)
    epochs: list[tuple[int, int]] = []
    epochs_ok = True
    if epochs_file:
        try:
            text_path = view.real(LEADER_EPOCH_CHECKPOINT)
            epochs = read_leader_epoch_checkpoint(text_path) if text_path.stat().st_size else []
        except (CheckpointError, UnicodeDecodeError) as exc:
            epochs_ok = False
            plan.warnings.append(f"{LEADER_EPOCH_CHECKPOINT}: cannot read it ({exc}); left as it is")
    epochs_before = list(epochs)
    if options.kafka_version != "2.1":
        # 3.x's LeaderEpochFileCache loads the file through assign, dropping non-monotonic entries
        # (in memory: the file changes at its next flush); 2.1's keeps the list as read
        epochs = _epoch_load(epochs)
    epochs_loaded = list(epochs)
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
            latest_epoch=epochs[-1][0] if epochs else None,
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
            return plan
        scans[b] = scan
        plan.recovered.append(b)
        plan.fsync_logs.append(b)
        for epoch, start in scan.epochs:
            epochs = _epoch_assign(epochs, epoch, start)
        if scan.truncated_bytes > 0:
            truncated.append(b)
            if b in unflushed:
                later = [x for x in bases if x > b]
                break
            plan.warnings.append(
                f"segment {b} is below the recovery point: like the broker, recover truncates it but keeps "
                "the segments after it (their offsets no longer follow on)"
            )

    # log end offsets
    last_base = bases[-1]
    last_before = _last_offset_of(view.real(segment_name(last_base, LOG_SUFFIX)), last_base)
    plan.log_end_before = (last_before + 1) if last_before is not None else last_base
    remaining = [x for x in bases if x not in later]
    new_last = remaining[-1]
    plan.log_end_after = scans[new_last].next_offset if new_last in scans else plan.log_end_before

    # truncations (with what salvage can read past the damage), deletion of later segments
    trunc_actions: dict[int, Action] = {}
    delete_actions: list[Action] = []
    for tb in truncated:
        scan = scans[tb]
        name = segment_name(tb, LOG_SUFFIX)
        real = view.real(name)
        fs = salv.scan_file(real, tb, scan.valid_bytes, scan.next_offset)
        nxt_base = next((x for x in bases if x > tb), None)
        deletes_after = bool(later) and tb == truncated[-1]
        files_s: list[tuple[Path, salv.FileSalvage]] = [(real, fs)]
        nexts: list[int | None] = [nxt_base]
        if options.salvage_dir is not None and deletes_after:
            for i, x in enumerate(later):
                lp = view.real(segment_name(x, LOG_SUFFIX))
                files_s.append((lp, salv.scan_file(lp, x)))
                nexts.append(later[i + 1] if i + 1 < len(later) else None)
        plan.salvage.extend(files_s)
        plan.salvage_next_bases.extend(nexts)
        if options.salvage_dir is not None:
            plan.lost_offsets.extend(
                salv.lost_offset_ranges(scan.next_offset, [f for _, f in files_s], nexts)
            )
        elif deletes_after:
            plan.lost_offsets.extend(_lost_without_salvage(scan.next_offset, fs, later, plan.log_end_before))
        else:
            bound = None if nxt_base is None else nxt_base - 1
            plan.lost_offsets.extend(_lost_without_salvage(scan.next_offset, fs, [], None, bound))
        readable = (
            f"; {len(fs.batches)} valid batches ({fs.salvaged_bytes} bytes) were found past the damage"
            + (
                " and are written to the salvage dir"
                if options.salvage_dir
                else ", use --salvage DIR to keep them"
            )
            if fs.batches
            else ""
        )
        kind = "empty_segment" if scan.valid_bytes == 0 and scan.stop == "invalid_offset" else "truncate_log"
        trunc_actions[tb] = Action(
            kind,
            name,
            f"truncate {name} at byte {scan.valid_bytes}: {scan.truncated_bytes} bytes removed, from offset "
            f"{scan.next_offset} ({scan.error}){readable}",
            {
                "from_position": scan.valid_bytes,
                "to_position": scan.size,
                "bytes": scan.truncated_bytes,
                "first_offset_lost": scan.next_offset,
                "reason": scan.error,
                "stop": scan.stop,
                "salvageable_batches": len(fs.batches),
                "salvageable_bytes": fs.salvaged_bytes,
            },
            data_loss=True,
        )
    for i, x in enumerate(later):
        files_x = [segment_name(x, s) for s in SEGMENT_SUFFIXES if view.exists(segment_name(x, s))]
        nbytes = sum(view.size(f) for f in files_x)
        lp = view.real(segment_name(x, LOG_SUFFIX))
        last_x = later[i + 1] - 1 if i + 1 < len(later) else _last_offset_of(lp, x)
        span = _describe_range(x, last_x) if last_x is None or last_x >= x else "no offsets"
        plan.segment_deletes.append(x)
        delete_actions.append(
            Action(
                "delete_segment",
                segment_name(x, LOG_SUFFIX),
                f"delete segment {x} ({', '.join(files_x)}; {nbytes} bytes, {span}): it follows the truncation",
                {"files": files_x, "bytes": nbytes, "base_offset": x, "last_offset": last_x},
                data_loss=True,
            )
        )

    # index rebuilds (txn indexes need the transactions open before each run of segments)
    kept_scans = [s for b, s in scans.items() if b not in later]
    aborted = TxnIndexState(pdir, [SegmentFiles(pdir, x) for x in bases], plan.log_start).entries(kept_scans)
    for b in sorted(scans):
        if b in later:
            continue
        files = rebuilt_files(
            SegmentFiles(pdir, b), scans[b], aborted.get(b), view.exists(segment_name(b, TXN_INDEX_SUFFIX))
        )
        if b in trunc_actions:
            plan.truncations.append((b, scans[b].valid_bytes, files))
            plan.actions.append(trunc_actions[b])
            for c in index_changes(files, actual=lambda q: view.get(q.name)):
                if c.changed:
                    plan.actions.append(_index_action(c, "written with the truncated log"))
            continue
        for c in index_changes(files, actual=lambda q: view.get(q.name)):
            if c.changed:
                plan.actions.append(_index_action(c, plan.reasons.get(b, "")))
                plan.index_writes[Path(c.file)] = files[Path(c.file)]
    plan.actions.extend(delete_actions)

    # 5. leader-epoch cache, as the broker leaves it after every load (not only after a truncation)
    if epochs_ok:
        start = plan.log_start if options.kafka_version == "2.1" else (log_start_checkpoint or 0)
        old_bytes = view.read(LEADER_EPOCH_CHECKPOINT) if epochs_file else None
        new_epochs, new_bytes = _epoch_file_after_load(old_bytes, epochs_loaded, epochs, plan.log_end_after, start)
        if new_bytes != old_bytes:
            plan.epoch_bytes = new_bytes
            if old_bytes is None:
                text = f"create {LEADER_EPOCH_CHECKPOINT} (empty, as a broker creates it)"
            elif new_epochs == epochs_before:
                text = f"rewrite {LEADER_EPOCH_CHECKPOINT} in the broker's format: {_fmt_epochs(new_epochs)}"
            else:
                text = f"rewrite {LEADER_EPOCH_CHECKPOINT}: {_fmt_epochs(epochs_before)} -> {_fmt_epochs(new_epochs)}"
            plan.actions.append(
                Action(
                    "write_leader_epoch_checkpoint",
                    LEADER_EPOCH_CHECKPOINT,
                    text,
                    {
                        "old": None if old_bytes is None else [list(e) for e in epochs_before],
                        "new": [list(e) for e in new_epochs],
                    },
                )
            )

    # 6. producer snapshots
    for off, path in snapshot_files(pdir):
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
    if truncated and plan.lost_offsets:
        spans = ", ".join(_describe_range(a, b) for a, b in plan.lost_offsets)
        plan.warnings.append(f"records lost: {spans}")
    return plan


def _lost_without_salvage(
    first: int, fs: salv.FileSalvage, later: list[int], log_end_before: int | None, bound: int | None = None
) -> list[tuple[int, int | None]]:
    """Offsets a truncation without --salvage drops: from the first dropped one to the last known
    (`bound`: the offset before the next segment, when that one is kept)."""
    if bound is not None:
        return [(first, bound)] if bound >= first else []
    hi: int | None = None
    if later:
        hi = None if log_end_before is None else log_end_before - 1
    else:
        if fs.batches:
            hi = fs.batches[-1].last_offset
        lost = fs.lost_ranges
        if lost and lost[-1][1] == fs.end and not fs.tail_zero:
            if fs.tail_last is None:
                return [(first, None)]
            hi = max(hi if hi is not None else -1, fs.tail_last)
    if hi is not None and hi >= first:
        return [(first, hi)]
    return []


def _fmt_epochs(entries: list[tuple[int, int]]) -> str:
    return "[" + ", ".join(f"{e} {o}" for e, o in entries) + "]"


def _index_action(c, why: str) -> Action:  # type: ignore[no-untyped-def]
    name = Path(c.file).name
    if c.old_bytes is None:
        text = f"create {name} ({c.new_entries} entries)"
    else:
        text = f"rewrite {name}: {c.old_bytes} -> {c.new_bytes} bytes ({c.old_entries} -> {c.new_entries} entries)"
    if why:
        text += f" [{why}]"
    return Action(
        "write_index" if c.old_bytes is None else "rewrite_index",
        name,
        text,
        {
            "type": c.type,
            "old_bytes": c.old_bytes,
            "new_bytes": c.new_bytes,
            "old_entries": c.old_entries,
            "new_entries": c.new_entries,
        },
    )


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
    recovery = _read_offsets(log_dir / RECOVERY_POINT_CHECKPOINT, w)
    log_starts = _read_offsets(log_dir / LOG_START_CHECKPOINT, w)
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
    _plan_checkpoints(plan, recovery, log_starts)
    return plan


def _plan_checkpoints(plan: LogDirPlan, recovery: dict | None, log_starts: dict | None) -> None:
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
        cur = _read_offsets(plan.log_dir / name, w)
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


# ---------------------------------------------------------------------------------------------
# executing
# ---------------------------------------------------------------------------------------------


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
