"""`kafkatool index`: index files checked against their log, rebuilt as a broker's recovery writes them, dumped.

The recovery walk itself is `kafkatool.log.segment.walk_segment` (Kafka's `LogSegment.recover`) and the
`.txnindex` contents come from `kafkatool.log.producer_state` (`ProducerStateManager`); this module
applies them to targets (files, partition dirs, log dirs).

Verification (`verify_segment`) is the broker's index sanity checks plus DumpLogSegments'
cross-checks, made cheap: an index file equal to what recovery rebuilds is consistent by construction,
so the walk keeps only the rebuilt index bytes (memory flat in segment size, issue 14).  Only for an
index that differs is the log walked again recording every batch's position, last offset and max
timestamp in compact arrays (24 bytes a batch), so each entry is checked with a binary search instead
of a log read.
"""

from __future__ import annotations

import os
import struct
from bisect import bisect_left
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from kafkatool.log.checkpoint import atomic_write
from kafkatool.log.errors import CorruptIndexError
from kafkatool.log.files import (
    INDEX_SUFFIX,
    LOG_SUFFIX,
    TIME_INDEX_SUFFIX,
    TXN_INDEX_SUFFIX,
    SegmentFiles,
    list_partition_dirs,
    list_segments,
    offset_from_name,
    parse_partition_dir,
)
from kafkatool.log.index import (
    DEFAULT_INDEX_INTERVAL,
    TXN_ENTRY_SIZE,
    OffsetEntry,
    OffsetIndex,
    TimeEntry,
    TimeIndex,
    read_txn_index,
)
from kafkatool.log.producer_state import TxnIndexState
from kafkatool.log.segment import (
    STOP_END,
    STOP_INVALID_OFFSET,
    STOP_OVERFLOW,
    STOP_PARTIAL,
    IndexChange,
    SegmentWalk,
    index_changes,
    rebuilt_files,
    walk_segment_file,
)
from kafkatool.ops.safety import crash_point

SEGMENT_FILE_SUFFIXES = (LOG_SUFFIX, INDEX_SUFFIX, TIME_INDEX_SUFFIX, TXN_INDEX_SUFFIX)


class TargetError(ValueError):
    """A path that is not a segment file, a partition dir or a log dir."""


@dataclass
class PartitionTarget:
    """One partition dir and the segments a command should look at (all when `whole`)."""

    dir: Path
    segments: list[SegmentFiles]
    whole: bool
    files: list[Path] = field(default_factory=list)  # explicit files given (for dump)


def _looks_like_partition_dir(path: Path) -> bool:
    try:
        names = os.listdir(path)
    except OSError:
        return False
    if any(n.endswith(SEGMENT_FILE_SUFFIXES) and n[:20].isdigit() for n in names):
        return True
    if any(parse_partition_dir(n) and (path / n).is_dir() for n in names):
        return False
    return parse_partition_dir(path.name) is not None


def resolve_targets(paths: Sequence[str | os.PathLike[str]]) -> list[PartitionTarget]:
    """Group segment files, partition dirs and log dirs into per-partition targets (order kept)."""
    targets: dict[Path, PartitionTarget] = {}
    for raw in paths:
        p = Path(raw)
        if not p.exists():
            raise FileNotFoundError(2, "No such file or directory", str(raw))
        if p.is_dir():
            dirs = [p] if _looks_like_partition_dir(p) else list_partition_dirs(p)
            if not dirs:
                raise TargetError(
                    f"{raw}: not a log dir or a partition dir (no segment files, no partition dirs)"
                )
            for d in dirs:
                key = d.resolve()
                t = targets.get(key)
                if t is None:
                    targets[key] = PartitionTarget(d, list_segments(d), True)
                else:
                    t.whole = True
                    t.segments = list_segments(d)
            continue
        name = p.name
        if not (name.endswith(SEGMENT_FILE_SUFFIXES) and name.split(".", 1)[0].isdigit()):
            raise TargetError(f"{raw}: not a segment file (.log, .index, .timeindex or .txnindex)")
        d = p.parent
        key = d.resolve()
        seg = SegmentFiles(d, offset_from_name(name))
        t = targets.setdefault(key, PartitionTarget(d, [], False))
        if not t.whole and seg not in t.segments:
            t.segments.append(seg)
            t.segments.sort(key=lambda s: s.base_offset)
        t.files.append(p)
    return list(targets.values())


# ---------------------------------------------------------------------------------------------
# verify
# ---------------------------------------------------------------------------------------------


@dataclass
class Finding:
    """One problem in one file; `kind` is stable for JSON consumers (docs/index.md)."""

    kind: str
    message: str
    entry: int | None = None
    position: int | None = None
    offset: int | None = None


@dataclass
class FileCheck:
    """The verdict on one file of a segment."""

    file: str
    type: str  # log | index | timeindex | txnindex
    exists: bool = True
    bytes: int = 0
    entries: int | None = None  # index entries, or batches for a log
    findings: list[Finding] = field(default_factory=list)
    note: str | None = None  # something worth knowing that is not a problem

    @property
    def ok(self) -> bool:
        return not self.findings

    def row(self) -> dict[str, object]:
        return {
            "file": self.file,
            "type": self.type,
            "status": "ok" if self.ok else ("missing" if not self.exists else "problems"),
            "bytes": self.bytes if self.exists else None,
            "entries": self.entries,
            "problems": len(self.findings),
            "findings": [
                {k: v for k, v in vars(f).items() if v is not None or k in ("kind", "message")}
                for f in self.findings
            ],
            "note": self.note,
        }


def _check_log(seg: SegmentFiles, scan: SegmentWalk) -> FileCheck:
    fc = FileCheck(str(seg.log), "log", bytes=scan.size, entries=scan.batches)
    if scan.stop == STOP_END:
        return fc
    pos = scan.error_position
    lost = scan.size - (pos or 0)
    if scan.stop == STOP_PARTIAL:
        msg = (
            f"incomplete batch at position {pos}: {lost} bytes at the end of the file "
            "(recovery truncates them)"
        )
    elif scan.stop == STOP_INVALID_OFFSET:
        msg = f"{scan.error} (recovery empties this segment)"
    elif scan.stop == STOP_OVERFLOW:
        msg = scan.error or "offset overflow"
    else:
        msg = (
            f"corrupt batch at position {pos}: {scan.error}; {lost} bytes from there to the end are not readable "
            "(recovery truncates them)"
        )
    fc.findings.append(Finding(scan.stop, msg, position=pos, offset=scan.next_offset))
    return fc


def _sanity_findings(index: OffsetIndex | TimeIndex, fc: FileCheck) -> int:
    """The broker's sanity check and a crashed broker's preallocated zero tail, for either index;
    returns the number of entries in use (before the zero tail)."""
    try:
        index.sanity_check()
    except CorruptIndexError as exc:
        fc.findings.append(Finding("index_sanity", str(exc)))
    used = index.used_entries()
    if used < index.entries:
        fc.findings.append(
            Finding(
                "trailing_zero_entries",
                f"{index.entries - used} zero entries at the end (a crashed broker's preallocated index)",
                entry=used,
            )
        )
    return used


class _BatchTable:
    """The per-batch arrays of a segment's walk, walked the first time an index needs them."""

    def __init__(self, seg: SegmentFiles, index_interval: int) -> None:
        self._seg = seg
        self._interval = index_interval
        self._scan: SegmentWalk | None = None

    def __call__(self) -> SegmentWalk:
        if self._scan is None:
            self._scan = walk_segment_file(self._seg.log, self._seg.base_offset, self._interval, record_batches=True)
        return self._scan


def _check_offset_index(
    seg: SegmentFiles, scan: SegmentWalk, batches: _BatchTable, index_interval: int, strict: bool
) -> FileCheck:
    path = seg.index
    if not path.exists():
        fc = FileCheck(str(path), "index", exists=False)
        fc.findings.append(Finding("missing", "no such file: the broker rebuilds it from the log on start"))
        return fc
    data = path.read_bytes()
    idx = OffsetIndex(data, seg.base_offset, path)
    fc = FileCheck(str(path), "index", bytes=len(data), entries=idx.entries)
    if scan.clean and data == scan.offset_index_bytes():
        return fc  # exactly what recovery builds from this log: consistent by construction
    used = _sanity_findings(idx, fc)
    table = batches()
    positions = table.positions
    lasts = table.last_offsets
    prev_off = prev_pos = None
    base = seg.base_offset
    entries = [OffsetEntry(base + rel, pos) for rel, pos in struct.iter_unpack(">ii", data[: used * 8])]
    for i, e in enumerate(entries):
        where = f"entry {i} (offset {e.offset}, position {e.position})"
        if prev_off is not None and prev_pos is not None and (e.offset <= prev_off or e.position <= prev_pos):
            fc.findings.append(
                Finding(
                    "index_not_increasing",
                    f"{where} does not follow entry {i - 1} (offset {prev_off}, position {prev_pos})",
                    entry=i,
                    position=e.position,
                    offset=e.offset,
                )
            )
        prev_off, prev_pos = e.offset, e.position
        j = bisect_left(positions, e.position)
        if j >= len(positions) or positions[j] != e.position:
            if e.position >= scan.valid_bytes:
                msg = f"{where} points past the valid log ({scan.valid_bytes} bytes)"
                fc.findings.append(
                    Finding("index_past_log", msg, entry=i, position=e.position, offset=e.offset)
                )
            else:
                msg = f"{where}: no batch starts at that position"
                fc.findings.append(
                    Finding("index_mismatch", msg, entry=i, position=e.position, offset=e.offset)
                )
            continue
        if strict:
            if lasts[j] != e.offset:
                fc.findings.append(
                    Finding(
                        "index_mismatch",
                        f"{where}: the batch at that position has last offset {lasts[j]}",
                        entry=i,
                        position=e.position,
                        offset=e.offset,
                    )
                )
            continue
        # What lookups rely on: every batch before the position ends below the offset, and the offset
        # is reached before the next entry's position (brokers index the first offset (<= 0.10), the
        # base offset (0.11-1.1) or the last offset of a whole append (2.0+, the cleaner)).
        if j > 0 and lasts[j - 1] >= e.offset:
            fc.findings.append(
                Finding(
                    "index_mismatch",
                    f"{where}: the batch before that position already reaches offset "
                    f"{lasts[j - 1]}, so lookups from this entry miss it",
                    entry=i,
                    position=e.position,
                    offset=e.offset,
                )
            )
            continue
        nxt_pos = entries[i + 1].position if i + 1 < len(entries) else None
        k = (bisect_left(positions, nxt_pos) - 1) if nxt_pos is not None else len(positions) - 1
        if k >= j and lasts[k] < e.offset:
            fc.findings.append(
                Finding(
                    "index_mismatch",
                    f"{where}: the log between this entry and the next ends at offset "
                    f"{lasts[k]}, below the indexed offset",
                    entry=i,
                    position=e.position,
                    offset=e.offset,
                )
            )
    if not fc.findings and scan.clean and data != scan.offset_index_bytes():
        fc.note = f"valid, but not what recovery writes with index.interval.bytes {index_interval}"
    return fc


def _check_time_index(
    seg: SegmentFiles, scan: SegmentWalk, batches: _BatchTable, index_interval: int, strict: bool
) -> FileCheck:
    path = seg.timeindex
    if not path.exists():
        fc = FileCheck(str(path), "timeindex", exists=False)
        fc.findings.append(
            Finding("missing", "no such file: time lookups in this segment find nothing until it is rebuilt")
        )
        return fc
    data = path.read_bytes()
    tidx = TimeIndex(data, seg.base_offset, path)
    fc = FileCheck(str(path), "timeindex", bytes=len(data), entries=tidx.entries)
    if scan.clean and data == scan.time_index_bytes():
        return fc  # exactly what recovery builds from this log
    used = _sanity_findings(tidx, fc)
    table = batches()
    lasts = table.last_offsets
    max_ts = table.max_timestamps
    prev_ts: int | None = None
    prev_off: int | None = None
    no_ts = False
    base = seg.base_offset
    for i, (ts, rel) in enumerate(struct.iter_unpack(">qi", data[: used * 12])):
        e = TimeEntry(ts, base + rel)
        if prev_ts is not None and e.timestamp <= prev_ts:
            fc.findings.append(
                Finding(
                    "time_out_of_order",
                    f"entry {i} (timestamp {e.timestamp}, offset {e.offset}): timestamp not above the previous "
                    f"entry's {prev_ts}",
                    entry=i,
                    offset=e.offset,
                )
            )
        if prev_off is not None and e.offset < prev_off:
            fc.findings.append(
                Finding(
                    "time_out_of_order",
                    f"entry {i} (timestamp {e.timestamp}, offset {e.offset}): offset below the previous entry's "
                    f"{prev_off}",
                    entry=i,
                    offset=e.offset,
                )
            )
        prev_ts, prev_off = e.timestamp, e.offset
        # The batch holding the offset.  Kafka's tool (--strict) wants the batch's last offset here, but
        # 2.x brokers index the offset of the record with the max timestamp; both name the same batch.
        j = bisect_left(lasts, e.offset)
        if strict and j < len(lasts) and lasts[j] != e.offset:
            fc.findings.append(
                Finding(
                    "time_offset_not_found",
                    f"entry {i} (timestamp {e.timestamp}, offset {e.offset}): no batch ends at that offset "
                    f"(found log offset {lasts[j]})",
                    entry=i,
                    offset=e.offset,
                )
            )
        elif j >= len(lasts):
            fc.findings.append(
                Finding(
                    "time_offset_not_found",
                    f"entry {i} (timestamp {e.timestamp}, offset {e.offset}): no batch holds that offset (the "
                    f"valid log ends at offset {lasts[-1] if lasts else scan.base_offset - 1})",
                    entry=i,
                    offset=e.offset,
                )
            )
        elif max_ts[j] == -1 and not strict:
            no_ts = True  # a v0 batch: the log holds no timestamps to check against
        elif max_ts[j] != e.timestamp:
            fc.findings.append(
                Finding(
                    "time_mismatch",
                    f"entry {i} (timestamp {e.timestamp}, offset {e.offset}): the max timestamp of the batch "
                    f"holding that offset (last offset {lasts[j]}) is {max_ts[j]}",
                    entry=i,
                    position=table.positions[j],
                    offset=e.offset,
                )
            )
    if no_ts:
        fc.note = "entries name v0 messages, which hold no timestamps to check (0.10 brokers indexed the producer's)"
    elif not fc.findings and scan.clean and data != scan.time_index_bytes():
        fc.note = f"valid, but not what recovery writes with index.interval.bytes {index_interval}"
    return fc


def _check_txn_index(seg: SegmentFiles, scan: SegmentWalk) -> FileCheck | None:
    path = seg.txnindex
    aborts = scan.aborts
    if not path.exists():
        if not aborts:
            return None
        fc = FileCheck(str(path), "txnindex", exists=False)
        fc.findings.append(
            Finding(
                "missing",
                f"missing, but the log holds {len(aborts)} ABORT markers (read_committed "
                "consumers would see aborted records)",
            )
        )
        return fc
    data = path.read_bytes()
    whole = len(data) - len(data) % TXN_ENTRY_SIZE
    entries = read_txn_index(data[:whole])
    fc = FileCheck(str(path), "txnindex", bytes=len(data), entries=len(entries))
    if whole != len(data):
        fc.findings.append(
            Finding(
                "txn_index_size",
                f"{len(data)} bytes is not a multiple of the {TXN_ENTRY_SIZE}-byte entry: the last "
                f"{len(data) - whole} bytes are a cut entry",
                entry=len(entries),
            )
        )
    seen: set[tuple[int, int]] = set()
    for i, e in enumerate(entries):
        if e.version > 0:
            fc.findings.append(
                Finding("txn_index_sanity", f"entry {i}: unknown version {e.version}", entry=i)
            )
        if e.last_offset < seg.base_offset:
            fc.findings.append(
                Finding(
                    "txn_index_sanity",
                    f"Last offset of aborted transaction {e} in index {path.absolute()} is less than start offset "
                    f"{seg.base_offset}",
                    entry=i,
                    offset=e.last_offset,
                )
            )
        if e.first_offset > e.last_offset:
            fc.findings.append(
                Finding(
                    "txn_index_sanity",
                    f"entry {i}: first offset {e.first_offset} is above last offset {e.last_offset}",
                    entry=i,
                    offset=e.first_offset,
                )
            )
        seen.add((e.producer_id, e.last_offset))
    wanted = set(aborts)
    for pid, off in sorted(seen - wanted, key=lambda t: t[1]):
        fc.findings.append(
            Finding(
                "txn_unexpected",
                f"entry for producer {pid} ending at offset {off}, but the log has no ABORT marker of that "
                "producer there",
                offset=off,
            )
        )
    for pid, off in sorted(wanted - seen, key=lambda t: t[1]):
        fc.findings.append(
            Finding(
                "txn_missing",
                f"no entry for the ABORT marker of producer {pid} at offset {off}",
                offset=off,
            )
        )
    return fc


def verify_segment(
    seg: SegmentFiles, index_interval: int = DEFAULT_INDEX_INTERVAL, strict: bool = False
) -> list[FileCheck]:
    """Check a segment's log and its index files the way the broker and DumpLogSegments do.

    By default an index entry is checked for what lookups need (every broker version's entries pass);
    `strict` applies DumpLogSegments' rule (the entry is the last offset of the batch at its position,
    a time entry names a batch's last offset), which 0.10 and 2.x brokers' own indexes fail.
    """
    if not seg.log.exists():
        checks = []
        for suffix, kind in (
            (INDEX_SUFFIX, "index"),
            (TIME_INDEX_SUFFIX, "timeindex"),
            (TXN_INDEX_SUFFIX, "txnindex"),
        ):
            p = seg.path(suffix)
            if p.exists():
                fc = FileCheck(str(p), kind, bytes=p.stat().st_size)
                fc.findings.append(
                    Finding("orphan", "no log file beside it: the broker deletes this index on start")
                )
                checks.append(fc)
        return checks
    scan = walk_segment_file(seg.log, seg.base_offset, index_interval)
    batches = _BatchTable(seg, index_interval)
    out = [
        _check_log(seg, scan),
        _check_offset_index(seg, scan, batches, index_interval, strict),
        _check_time_index(seg, scan, batches, index_interval, strict),
    ]
    txn = _check_txn_index(seg, scan)
    if txn is not None:
        out.append(txn)
    return out


def verify_targets(
    targets: Sequence[PartitionTarget],
    index_interval: int = DEFAULT_INDEX_INTERVAL,
    on_segment: Callable[[SegmentFiles], None] | None = None,
    strict: bool = False,
) -> list[FileCheck]:
    """verify_segment over every segment of the targets, plus orphan index files of whole partitions."""
    out: list[FileCheck] = []
    for t in targets:
        segs = list(t.segments)
        if t.whole:
            bases = {s.base_offset for s in segs}
            for name in sorted(os.listdir(t.dir)):
                if name.endswith((INDEX_SUFFIX, TIME_INDEX_SUFFIX, TXN_INDEX_SUFFIX)) and name[:20].isdigit():
                    b = offset_from_name(name)
                    if b not in bases:
                        bases.add(b)
                        segs.append(SegmentFiles(t.dir, b))
            segs.sort(key=lambda s: s.base_offset)
        for seg in segs:
            out.extend(verify_segment(seg, index_interval, strict))
            if on_segment is not None:
                on_segment(seg)
    return out


# ---------------------------------------------------------------------------------------------
# rebuild
# ---------------------------------------------------------------------------------------------


def write_index_files(files: dict[Path, bytes | None], step: str = "index-file-written") -> list[Path]:
    """Write the changed index files, each beside the old and renamed over it (atomic, fsynced)."""
    written = []
    for path, data in files.items():
        if data is None:
            continue
        if path.exists() and path.read_bytes() == data:
            continue
        atomic_write(path, data)
        written.append(path)
        crash_point(step)
    return written


@dataclass
class RebuildResult:
    changes: list[IndexChange] = field(default_factory=list)
    findings: list[FileCheck] = field(default_factory=list)  # logs that are corrupt past their valid part

    @property
    def changed(self) -> list[IndexChange]:
        return [c for c in self.changes if c.changed]


def rebuild_target(
    target: PartitionTarget,
    index_interval: int = DEFAULT_INDEX_INTERVAL,
    dry_run: bool = False,
    on_segment: Callable[[SegmentFiles], None] | None = None,
) -> RebuildResult:
    """Rebuild `.index`/`.timeindex`/`.txnindex` of a target's segments as broker recovery does.

    Only the valid part of a damaged log is indexed (what recovery keeps); the damage is reported so
    the caller can point at `recover`.  The caller holds the log dir's lock.
    """
    res = RebuildResult()
    all_segments = list_segments(target.dir)
    scans: list[tuple[SegmentFiles, SegmentWalk]] = []
    open_txns: set[int] = set()
    prev_base: int | None = None
    order = {s.base_offset: i for i, s in enumerate(all_segments)}
    for seg in target.segments:
        if not seg.log.exists():
            raise FileNotFoundError(2, "No such file or directory", str(seg.log))
        i = order.get(seg.base_offset)
        if prev_base is None or i is None or order.get(prev_base) != i - 1:
            open_txns = set()
        scan = walk_segment_file(seg.log, seg.base_offset, index_interval, open_txns=open_txns)
        scans.append((seg, scan))
        prev_base = seg.base_offset
        if not scan.clean:
            res.findings.append(_check_log(seg, scan))
        if on_segment is not None:
            on_segment(seg)
    aborted = TxnIndexState(target.dir, all_segments).entries([s for _, s in scans])
    for seg, scan in scans:
        files = rebuilt_files(seg, scan, aborted.get(seg.base_offset))
        res.changes.extend(index_changes(files))
        if not dry_run:
            write_index_files(files, "rebuild-index-written")
    return res


# ---------------------------------------------------------------------------------------------
# dump (Kafka's text through dump-log's dumper)
# ---------------------------------------------------------------------------------------------


def index_files_of(target: PartitionTarget) -> list[Path]:
    """The index files to dump for a target: the files given, or every index file of its segments."""
    out: list[Path] = []
    if target.files and not target.whole:
        for f in target.files:
            if f.name.endswith(LOG_SUFFIX):
                base = offset_from_name(f.name)
                seg = SegmentFiles(f.parent, base)
                out.extend(p for p in (seg.index, seg.timeindex, seg.txnindex) if p.exists())
            else:
                out.append(f)
        return out
    names = sorted(
        n
        for n in os.listdir(target.dir)
        if n.endswith((INDEX_SUFFIX, TIME_INDEX_SUFFIX, TXN_INDEX_SUFFIX)) and n[:20].isdigit()
    )
    order = {INDEX_SUFFIX: 0, TIME_INDEX_SUFFIX: 1, TXN_INDEX_SUFFIX: 2}
    names.sort(key=lambda n: (offset_from_name(n), order[n[n.index(".") :]]))
    return [target.dir / n for n in names]


def dump_index_files(paths: Sequence[Path], output: str, out: BinaryIO, err: BinaryIO) -> int:
    """Dump index files as `kafka-dump-log.sh --files` does (text), or as dump-log's JSON objects.

    Returns dump-log's exit code (0 ok, 1 a file could not be read to the end, 2 bad input).
    """
    from kafkatool.ops.dumplog import DumpOptions, dump_files

    result = dump_files([str(p) for p in paths], DumpOptions(output=output), out, err)
    return result.exit_code
