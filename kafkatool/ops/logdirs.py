"""Where the bytes are, offline: sizes, segments, time spans and what retention would reclaim.

The live answer comes from DescribeLogDirs (size and offset lag per replica).  On disk there is
more to know: per partition the log's size as the broker counts it (the `.log` files), its index
overhead, segment count, offset range and time span, and — given `retention.ms`/`retention.bytes`
— the segments the broker's next retention pass would delete, computed with the broker's rules:

* time: segments are taken from the oldest while `now - largestTimestamp > retention.ms`, the
  largest timestamp being the segment's max timestamp (its time index's last entry, or its last
  batches when the index lags), or the file's modification time when it has none;
* size: segments are taken from the oldest while the log minus them still holds at least
  `retention.bytes`;
* the active segment only goes when it is not empty (the broker then rolls a new one), and the
  high watermark is taken to be the log end (offline it is not known).

Only index files and batch headers at segment edges are read: a terabyte of logs takes seconds.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from kafkatool.log.errors import CorruptIndexError, CorruptRecordError
from kafkatool.log.files import (
    MappedFile,
    list_partition_dirs,
    list_segments,
    parse_partition_dir,
)
from kafkatool.log.index import OffsetIndex, TimeIndex
from kafkatool.log.records import BatchScan, read_batch_header

NO_TIMESTAMP = -1


class LogDirsInputError(ValueError):
    """A path that is neither a log dir nor a partition dir."""


@dataclass(frozen=True)
class Retention:
    """The topic settings that decide deletion; None: not enforced (Kafka's -1)."""

    ms: int | None = None
    bytes: int | None = None

    @property
    def enforced(self) -> bool:
        return self.ms is not None or self.bytes is not None


@dataclass
class SegmentUsage:
    base_offset: int
    log_bytes: int
    index_bytes: int  # .index + .timeindex + .txnindex (+ the rest of the segment's files)
    largest_timestamp: int  # NO_TIMESTAMP when the segment holds no timestamps
    mtime_ms: int


@dataclass
class PartitionUsage:
    log_dir: str
    topic: str
    partition: int
    segments: list[SegmentUsage] = field(default_factory=list)
    log_start_offset: int | None = None
    log_end_offset: int | None = None
    oldest_timestamp: int = NO_TIMESTAMP  # max timestamp of the first batch
    future: bool = False  # a `.future` dir: a replica being moved here between log dirs
    reclaimable_segments: int | None = None
    reclaimable_bytes: int | None = None
    problem: str | None = None

    @property
    def size(self) -> int:
        return sum(s.log_bytes for s in self.segments)

    @property
    def index_bytes(self) -> int:
        return sum(s.index_bytes for s in self.segments)

    @property
    def newest_timestamp(self) -> int:
        return self.segments[-1].largest_timestamp if self.segments else NO_TIMESTAMP

    def row(self) -> dict:
        """The documented row (docs/log-dirs.md)."""
        return {
            "log_dir": self.log_dir,
            "topic": self.topic,
            "partition": self.partition,
            "is_future": self.future,
            "size": self.size,
            "index_bytes": self.index_bytes,
            "segments": len(self.segments),
            "log_start_offset": self.log_start_offset,
            "log_end_offset": self.log_end_offset,
            "oldest_timestamp": None if self.oldest_timestamp < 0 else self.oldest_timestamp,
            "newest_timestamp": None if self.newest_timestamp < 0 else self.newest_timestamp,
            "reclaimable_segments": self.reclaimable_segments,
            "reclaimable_bytes": self.reclaimable_bytes,
            "problem": self.problem,
        }


def _largest_timestamp(seg_log: Path, timeindex: Path, index: Path, base: int) -> int:
    """The segment's max timestamp: its time index's last entry, or later batches' if greater."""
    largest = NO_TIMESTAMP
    start = 0
    try:
        if timeindex.exists():
            ti = TimeIndex.open(timeindex, base)
            used = ti.used_entries()
            if used:
                largest = ti.entry(used - 1).timestamp
        if index.exists():
            oi = OffsetIndex.open(index, base)
            used = oi.used_entries()
            if used:
                start = oi.entry(used - 1).position
    except (CorruptIndexError, OSError):
        start = 0
    with MappedFile(seg_log) as mf:
        if start > len(mf.buf):
            start = 0
        scan = BatchScan(mf.buf, start, release=mf.release)
        for b in scan:
            if b.max_timestamp > largest:
                largest = b.max_timestamp
    return largest


def _partition_of(dir_name: str) -> tuple[str, int, bool]:
    """(topic, partition, is_future) of `topic-N` or of a future replica's `topic-N.<uuid>-future`."""
    future = dir_name.endswith("-future")
    name = dir_name.removesuffix("-future")
    if future and "." in name:
        name = name.rsplit(".", 1)[0]
    parsed = parse_partition_dir(name)
    return (parsed[0], parsed[1], future) if parsed else (name, -1, future)


def partition_usage(pdir: Path, log_dir: str) -> PartitionUsage:
    topic, partition, future = _partition_of(pdir.name)
    usage = PartitionUsage(log_dir, topic, partition, future=future)
    segs = list_segments(pdir)
    for seg in segs:
        try:
            log_bytes = seg.log.stat().st_size
            mtime_ms = int(seg.log.stat().st_mtime * 1000)
            extra = 0
            for suffix in (".index", ".timeindex", ".txnindex"):
                p = seg.path(suffix)
                if p.exists():
                    extra += p.stat().st_size
            ts = _largest_timestamp(seg.log, seg.timeindex, seg.index, seg.base_offset)
        except (OSError, CorruptRecordError) as exc:
            usage.problem = f"{seg.log.name}: {exc}"
            continue
        usage.segments.append(SegmentUsage(seg.base_offset, log_bytes, extra, ts, mtime_ms))
    if segs:
        usage.log_start_offset, usage.log_end_offset = _offset_range(segs[0].log, segs[-1].log, segs[-1].base_offset)
        try:
            with MappedFile(segs[0].log) as mf:
                first = read_batch_header(mf.buf, 0, len(mf.buf))
                if first is not None:
                    usage.oldest_timestamp = first.max_timestamp
        except (OSError, CorruptRecordError):
            pass
    return usage


def _offset_range(first_log: Path, last_log: Path, last_base: int) -> tuple[int | None, int | None]:
    start = end = None
    try:
        with MappedFile(first_log) as mf:
            b = read_batch_header(mf.buf, 0, len(mf.buf))
            start = b.base_offset if b is not None else None
        with MappedFile(last_log) as mf:
            scan = BatchScan(mf.buf, release=mf.release)
            last = None
            for b in scan:
                last = b.last_offset
            end = last + 1 if last is not None else last_base
    except (OSError, CorruptRecordError):
        pass
    if start is None:
        start = end
    return start, end


def apply_retention(usage: PartitionUsage, retention: Retention, now_ms: int) -> None:
    """Mark what the broker's next retention pass would delete (time first, then size, as Kafka)."""
    if not retention.enforced:
        return
    segs = usage.segments
    deleted = 0
    if retention.ms is not None and retention.ms >= 0:
        while deleted < len(segs) and _deletable(segs, deleted):
            s = segs[deleted]
            ts = s.largest_timestamp if s.largest_timestamp >= 0 else s.mtime_ms
            if now_ms - ts > retention.ms:
                deleted += 1
            else:
                break
    if retention.bytes is not None and retention.bytes >= 0:
        diff = sum(s.log_bytes for s in segs[deleted:]) - retention.bytes
        while deleted < len(segs) and _deletable(segs, deleted) and diff - segs[deleted].log_bytes >= 0:
            diff -= segs[deleted].log_bytes
            deleted += 1
    usage.reclaimable_segments = deleted
    usage.reclaimable_bytes = sum(s.log_bytes + s.index_bytes for s in segs[:deleted])


def _deletable(segs: Sequence[SegmentUsage], i: int) -> bool:
    """The active (last) segment goes only when it holds data; every other one may."""
    return i < len(segs) - 1 or segs[i].log_bytes > 0


def scan_log_dirs(
    paths: Iterable[Path], retention: Retention | None = None, now_ms: int | None = None,
    topics: set[str] | None = None,
) -> list[PartitionUsage]:
    """Usage of every partition under the given log dirs (or of the given partition dirs)."""
    import time

    now = now_ms if now_ms is not None else int(time.time() * 1000)
    out = []
    for path in paths:
        if not path.is_dir():
            raise LogDirsInputError(f"{path}: not a directory")
        if parse_partition_dir(path.name) is not None and any(path.glob("*.log")):
            pdirs, log_dir = [path], str(path.parent)
        else:
            pdirs, log_dir = _partition_dirs_with_future(path), str(path)
            if not pdirs and not (path / "meta.properties").exists():
                raise LogDirsInputError(f"{path}: neither a log dir nor a partition dir")
        for pdir in pdirs:
            usage = partition_usage(pdir, log_dir)
            if topics is not None and usage.topic not in topics:
                continue
            if retention is not None:
                apply_retention(usage, retention, now)
            out.append(usage)
    return out


def _partition_dirs_with_future(log_dir: Path) -> list[Path]:
    dirs = list_partition_dirs(log_dir)
    for entry in os.scandir(log_dir):
        if entry.is_dir() and entry.name.endswith("-future"):
            dirs.append(Path(entry.path))
    return dirs


def aggregate(usages: Sequence[PartitionUsage], by: str) -> list[dict]:
    """Rows summed by `topic` or `log_dir` (partition rows unchanged for `partition`)."""
    if by == "partition":
        return [u.row() for u in usages]
    groups: dict[str, dict] = {}
    for u in usages:
        key = u.topic if by == "topic" else u.log_dir
        g = groups.setdefault(key, {by: key, "partitions": 0, "size": 0, "index_bytes": 0, "segments": 0,
                                    "oldest_timestamp": None, "newest_timestamp": None,
                                    "reclaimable_bytes": None})
        r = u.row()
        g["partitions"] += 1
        g["size"] += r["size"]
        g["index_bytes"] += r["index_bytes"]
        g["segments"] += r["segments"]
        for k, pick in (("oldest_timestamp", min), ("newest_timestamp", max)):
            if r[k] is not None:
                g[k] = r[k] if g[k] is None else pick(g[k], r[k])
        if r["reclaimable_bytes"] is not None:
            g["reclaimable_bytes"] = (g["reclaimable_bytes"] or 0) + r["reclaimable_bytes"]
    return sorted(groups.values(), key=lambda g: (-g["size"], g[by]))
