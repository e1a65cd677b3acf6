"""Find the segments under some paths and cut them into slices that parallel tasks can read alone.

A slice is a byte range of one segment that starts on a batch boundary, so a 1 GiB segment becomes
several tasks.  Boundaries come from the segment's `.index` (every entry points at a batch start) and
are checked by reading the batch there and verifying its CRC; without a trustworthy index a header
walk finds them.  Offset and timestamp ranges prune whole segments and move the first slice's start
forward with the indexes, the way the broker answers a fetch or an offsets-for-times request.  Pure
Python (no pyspark): the single-process scanner plans with the same code.
"""

from __future__ import annotations

import bisect
import math
import struct
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from kafkatool.log.errors import CorruptIndexError, CorruptRecordError
from kafkatool.log.files import INDEX_SUFFIX, LOG_SUFFIX, TIME_INDEX_SUFFIX, parse_partition_dir
from kafkatool.log.index import OffsetIndex, TimeIndex
from kafkatool.log.record import LOG_OVERHEAD, V0_OVERHEAD
from kafkatool.log.records import read_batch_header
from kafkatool.slices import storage

MIB = 1024 * 1024
DEFAULT_SPLIT_SIZE = 128 * MIB
OPEN_COST = 4 * MIB  # what opening one more slice costs a task, in bytes (Spark's openCostInBytes)
MAX_CHECKED_BATCH = 64 * MIB
WALK_WINDOW = 1 * MIB
INDEX_CANDIDATES = 8  # index entries tried per cut before the index is given up

_LOG_ENTRY = struct.Struct(">qi")
_INDEX_ENTRY = struct.Struct(">ii")


class ScanInputError(ValueError):
    """Paths or options that cannot be scanned (the CLI reports these as usage errors)."""


# -- discovery ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class SegmentLocation:
    """Where one segment's `.log` file is (a local path or a URI: it may be remote) and what planning needs
    to know of it and its neighbours.  Local segments of a partition dir are `log.files.SegmentFiles`."""

    topic: str
    partition: int
    log: str  # location of the .log file
    base_offset: int
    size: int
    next_base: int | None  # base offset of the next segment of the partition; None for the last one
    has_index: bool = False
    has_timeindex: bool = False

    @property
    def index(self) -> str:
        return self.log[: -len(LOG_SUFFIX)] + INDEX_SUFFIX

    @property
    def timeindex(self) -> str:
        return self.log[: -len(LOG_SUFFIX)] + TIME_INDEX_SUFFIX


def _partition_of(dir_name: str) -> tuple[str, int] | None:
    """(topic, partition) of a live partition directory; None for others and for -delete/-future/-stray."""
    parsed = parse_partition_dir(dir_name)
    if parsed is None or dir_name != f"{parsed[0]}-{parsed[1]}":
        return None
    return parsed


def _is_segment_name(name: str) -> bool:
    return name.endswith(LOG_SUFFIX) and name[: -len(LOG_SUFFIX)].isdigit()


def _segments_of_dir(dir_location: str, files: dict[str, int]) -> list[SegmentLocation]:
    """Segments of one partition directory, given its file names and sizes."""
    parsed = _partition_of(storage.basename(dir_location))
    if parsed is None:
        return []
    topic, partition = parsed
    bases = sorted(int(n[: -len(LOG_SUFFIX)]) for n in files if _is_segment_name(n))
    out = []
    for i, base in enumerate(bases):
        stem = f"{base:020d}"
        name = stem + LOG_SUFFIX
        if name not in files:  # a non-padded name: keep what is on disk
            name = next(n for n in files if _is_segment_name(n) and int(n[: -len(LOG_SUFFIX)]) == base)
            stem = name[: -len(LOG_SUFFIX)]
        out.append(
            SegmentLocation(
                topic,
                partition,
                storage.child(dir_location, name),
                base,
                files[name],
                bases[i + 1] if i + 1 < len(bases) else None,
                has_index=(stem + INDEX_SUFFIX) in files,
                has_timeindex=(stem + TIME_INDEX_SUFFIX) in files,
            )
        )
    return out


def discover(paths: Iterable[str]) -> list[SegmentLocation]:
    """Segments under log dirs, partition dirs (searched recursively) or named `.log` files.

    Raises FileNotFoundError for a path that does not exist and ScanInputError for a path that holds
    no segment, so a typo never reads as an empty result.
    """
    found: dict[str, SegmentLocation] = {}
    for raw in paths:
        location = storage.normalize(raw)
        entry = storage.stat(location)
        if entry.is_dir:
            by_dir: dict[str, dict[str, int]] = {}
            for e in storage.list_tree(location):
                if not e.is_dir:
                    by_dir.setdefault(storage.parent(e.location), {})[e.name] = e.size
            segments = [s for d, files in by_dir.items() for s in _segments_of_dir(d, files)]
            if not segments:
                raise ScanInputError(
                    f"{raw}: no Kafka segments found (<offset>.log files inside <topic>-<partition> directories)"
                )
        else:
            dir_location = storage.parent(location)
            if not _is_segment_name(entry.name):
                raise ScanInputError(f"{raw}: not a segment file (expected <offset>.log)")
            if _partition_of(storage.basename(dir_location)) is None:
                raise ScanInputError(
                    f"{raw}: cannot tell its topic and partition: its directory is not named <topic>-<partition>"
                )
            files = {e.name: e.size for e in storage.list_tree(dir_location, recursive=False) if not e.is_dir}
            segments = [s for s in _segments_of_dir(dir_location, files) if s.log == location]
        for s in segments:
            found.setdefault(s.log, s)
    return sorted(found.values(), key=lambda s: (s.topic, s.partition, storage.parent(s.log), s.base_offset))


# -- filters -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class ScanFilter:
    """Conditions that let planning and reading skip data; rows are still filtered exactly by Spark.

    Offsets bound the offsets wanted (inclusive); `min_timestamp` is the smallest record timestamp
    wanted.  An upper timestamp bound prunes nothing: record timestamps are not ordered in a log.
    """

    topics: frozenset[str] | None = None
    partitions: frozenset[int] | None = None
    min_offset: int | None = None
    max_offset: int | None = None
    min_timestamp: int | None = None

    def accepts(self, topic: str, partition: int) -> bool:
        return (self.topics is None or topic in self.topics) and (
            self.partitions is None or partition in self.partitions
        )

    @property
    def is_empty(self) -> bool:
        """True when no row can match (contradicting bounds)."""
        return (
            (self.topics is not None and not self.topics)
            or (self.partitions is not None and not self.partitions)
            or (self.min_offset is not None and self.max_offset is not None and self.min_offset > self.max_offset)
        )

    def merge(self, other: ScanFilter) -> ScanFilter:
        """Both conditions at once (AND)."""

        def meet(a, b, pick):  # type: ignore[no-untyped-def]
            if a is None:
                return b
            if b is None:
                return a
            return pick(a, b)

        return ScanFilter(
            meet(self.topics, other.topics, frozenset.intersection),
            meet(self.partitions, other.partitions, frozenset.intersection),
            meet(self.min_offset, other.min_offset, max),
            meet(self.max_offset, other.max_offset, min),
            meet(self.min_timestamp, other.min_timestamp, max),
        )


NO_FILTER = ScanFilter()


# -- slices ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Slice:
    """Bytes [start, end) of a segment: the batches that start in that range."""

    topic: str
    partition: int
    log: str
    base_offset: int
    start: int
    end: int

    @property
    def length(self) -> int:
        return self.end - self.start


@dataclass
class _Indexes:
    """A segment's offset and time indexes, loaded once and only when trustworthy."""

    segment: SegmentLocation
    offset: OffsetIndex | None = None
    time: TimeIndex | None = None
    positions: list[int] = field(default_factory=list)

    @classmethod
    def load(cls, seg: SegmentLocation, want_time: bool) -> _Indexes:
        out = cls(seg)
        if seg.has_index:
            out.offset = _load_offset_index(seg)
            if out.offset is not None:
                last = -1
                for _rel, pos in _INDEX_ENTRY.iter_unpack(out.offset.data):
                    if last < pos < seg.size:
                        out.positions.append(pos)
                        last = pos
        if want_time and seg.has_timeindex:
            out.time = _load_time_index(seg)
        return out


def _load_offset_index(seg: SegmentLocation) -> OffsetIndex | None:
    try:
        data = storage.read_all(seg.index)
    except OSError:
        return None
    idx = OffsetIndex(data[: len(data) - len(data) % 8], seg.base_offset)
    idx = OffsetIndex(idx.data[: idx.used_entries() * 8], seg.base_offset)
    try:
        idx.sanity_check()
    except CorruptIndexError:
        return None
    return idx


def _load_time_index(seg: SegmentLocation) -> TimeIndex | None:
    try:
        data = storage.read_all(seg.timeindex)
    except OSError:
        return None
    idx = TimeIndex(data[: len(data) - len(data) % 12], seg.base_offset)
    idx = TimeIndex(idx.data[: idx.used_entries() * 12], seg.base_offset)
    try:
        idx.sanity_check()
    except CorruptIndexError:
        return None
    for i in range(1, idx.entries):  # strictly increasing, or the lookups below are meaningless
        if idx.entry(i).timestamp <= idx.entry(i - 1).timestamp:
            return None
    return idx


def batch_starts_at(reader: storage.RangeReader, position: int, seg: SegmentLocation) -> bool:
    """True when a whole, CRC-valid batch of this segment starts at position.

    An index entry is only a hint (a damaged index may point anywhere); a matching CRC over the
    batch proves the position is a real boundary.
    """
    head = reader.read(position, LOG_OVERHEAD)
    if len(head) < LOG_OVERHEAD:
        return False
    offset, size = _LOG_ENTRY.unpack(head)
    if size < V0_OVERHEAD or size > MAX_CHECKED_BATCH or offset < seg.base_offset:
        return False
    if seg.next_base is not None and offset >= seg.next_base:
        return False
    data = reader.read(position, LOG_OVERHEAD + size)
    try:
        batch = read_batch_header(data, 0, len(data))
    except CorruptRecordError:
        return False
    return batch is not None and batch.magic in (0, 1, 2) and batch.is_valid()


def _walk_cuts(reader: storage.RangeReader, start: int, end: int, split: int) -> list[int]:
    """Batch starts at or just past start+split, start+2*split, ... found by walking batch headers.

    Stops quietly at damage (a size field below the minimum, a batch past the end of the file):
    the reader meets the same damage and applies its policy there.
    """
    cuts = []
    target = start + split
    pos = start
    buf = b""
    buf_start = 0
    while pos < end:
        if pos >= target:
            cuts.append(pos)
            target = pos + split
        rel = pos - buf_start
        if rel < 0 or rel + LOG_OVERHEAD > len(buf):
            buf = reader.read(pos, WALK_WINDOW)
            buf_start, rel = pos, 0
            if len(buf) < LOG_OVERHEAD:
                break
        _offset, size = _LOG_ENTRY.unpack_from(buf, rel)
        if size < V0_OVERHEAD or pos + LOG_OVERHEAD + size > reader.size:
            break
        pos += LOG_OVERHEAD + size
    return cuts


def _index_cuts(reader: storage.RangeReader, idx: _Indexes, start: int, end: int, split: int) -> list[int] | None:
    """Cuts taken from index positions (each verified), or None when the index cannot be trusted.

    An entry that fails verification (a damaged batch, or a damaged entry) is passed over for the
    next one; only when none of several in a row verify is the index given up for a header walk.
    """
    cuts: list[int] = []
    positions = idx.positions
    target = start + split
    while target < end:
        i = bisect.bisect_left(positions, target)
        for pos in positions[i : i + INDEX_CANDIDATES]:
            if pos >= end:
                return cuts
            if batch_starts_at(reader, pos, idx.segment):
                break
        else:
            if i + INDEX_CANDIDATES < len(positions):
                return None
            break
        cuts.append(pos)
        target = pos + split
    return cuts


def _start_position(reader: storage.RangeReader, seg: SegmentLocation, idx: _Indexes, flt: ScanFilter) -> int:
    """The first byte worth reading: a verified batch start at or before the first wanted batch."""
    if idx.offset is None:
        return 0
    target = None
    if flt.min_offset is not None and flt.min_offset > seg.base_offset:
        target = flt.min_offset
    if flt.min_timestamp is not None and idx.time is not None and idx.time.entries:
        # Every record up to the offset of a time entry is no newer than its timestamp, so the
        # first record at or after min_timestamp lies past the last entry older than it.
        slot = idx.time.slot_for(flt.min_timestamp - 1)
        if slot >= 0:
            after = idx.time.entry(slot).offset + 1
            target = after if target is None else max(target, after)
    if target is None:
        return 0
    position = idx.offset.lookup(target).position
    if position <= 0 or position >= seg.size or not batch_starts_at(reader, position, seg):
        return 0
    return position


def _pruned(seg: SegmentLocation, flt: ScanFilter, idx: _Indexes | None) -> bool:
    """True when no wanted row can be in this segment."""
    if not flt.accepts(seg.topic, seg.partition) or seg.size == 0:
        return True
    if flt.max_offset is not None and seg.base_offset > flt.max_offset:
        return True
    if flt.min_offset is not None and seg.next_base is not None and seg.next_base <= flt.min_offset:
        return True
    if flt.min_timestamp is not None and seg.next_base is not None and idx is not None and idx.time is not None:
        # A rolled segment's last time entry holds its largest timestamp (the broker appends it on roll).
        if idx.time.entries and idx.time.last_entry().timestamp < flt.min_timestamp:
            return True
    return False


def plan_slices(
    segments: Sequence[SegmentLocation],
    split_size: int = DEFAULT_SPLIT_SIZE,
    flt: ScanFilter = NO_FILTER,
    use_index: bool = True,
) -> list[Slice]:
    """Slices of about split_size bytes covering every batch the filter may want."""
    if flt.is_empty:
        return []
    out: list[Slice] = []
    for seg in segments:
        if _pruned(seg, flt, None):
            continue
        needs_start = (flt.min_offset is not None and flt.min_offset > seg.base_offset) or flt.min_timestamp is not None
        needs_cuts = seg.size > split_size
        idx = None
        if use_index and (needs_start or needs_cuts):
            idx = _Indexes.load(seg, want_time=flt.min_timestamp is not None)
            if _pruned(seg, flt, idx):
                continue
        start, cuts = 0, []
        if needs_start or needs_cuts:
            with storage.RangeReader(seg.log) as reader:
                if idx is not None and needs_start:
                    start = _start_position(reader, seg, idx, flt)
                if seg.size - start > split_size:
                    found = _index_cuts(reader, idx, start, seg.size, split_size) if idx is not None else None
                    cuts = found if found is not None else _walk_cuts(reader, start, seg.size, split_size)
        bounds = [start, *cuts, seg.size]
        for a, b in zip(bounds, bounds[1:], strict=False):
            if b > a:
                out.append(Slice(seg.topic, seg.partition, seg.log, seg.base_offset, a, b))
    return out


def effective_split_size(sizes: Sequence[int], split_size: int, min_partitions: int | None) -> int:
    """Shrink the split size so the work spreads over at least min_partitions tasks.

    Spark's own rule for files (maxSplitBytes): every file also costs OPEN_COST, and a split never
    drops below OPEN_COST, so many small segments are packed rather than scattered.
    """
    if not min_partitions or min_partitions <= 1 or not sizes:
        return split_size
    per_task = math.ceil(sum(size + OPEN_COST for size in sizes) / min_partitions)
    return min(split_size, max(OPEN_COST, per_task))


def pack_slices(slices: Sequence[Slice], target: int, open_cost: int | None = None) -> list[list[Slice]]:
    """Group small slices into tasks of about target bytes, as Spark packs small files.

    Largest first, next-fit, each slice costing at least open_cost (4 MiB, or a quarter of a smaller
    target): big slices get a task each and a thousand small segments do not become a thousand tasks.
    """
    if open_cost is None:
        open_cost = min(OPEN_COST, max(1, target // 4))
    groups: list[list[Slice]] = []
    current: list[Slice] = []
    size = 0
    for s in sorted(slices, key=lambda s: (-s.length, s.log, s.start)):
        cost = max(s.length, open_cost)
        if current and size + cost > target:
            groups.append(current)
            current, size = [], 0
        current.append(s)
        size += cost
    if current:
        groups.append(current)
    return groups


def plan_tasks(paths: Sequence[str], split_size: int, flt: ScanFilter = NO_FILTER, use_index: bool = True,
               min_partitions: int | None = None) -> list[list[Slice]]:
    """The slices of each parallel task: discovered, cut and packed as the Spark engines read them."""
    segments = discover(paths)
    sizes = [s.size for s in segments if flt.accepts(s.topic, s.partition)]
    split = effective_split_size(sizes, split_size, min_partitions)
    return pack_slices(plan_slices(segments, split, flt, use_index), split)
