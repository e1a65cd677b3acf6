"""summary, keys and timeline as plain RDD jobs: each task's partial aggregates, merged in the driver.

Why not Spark SQL for these three (the profile in benchmarks/README.md): the SQL route planned through
three Python planner daemons of the data source, turned every partial row into Arrow and then into the
JVM's rows, and merged them in a hash-aggregate shuffle.  Here the driver plans in this process, every
task hands back one pickled object (its keys as numpy or Arrow arrays: they pickle as plain buffers), and the
JVM only moves bytes.

Plan (driver): the data source's own planning (`discover`, `plan_slices`, `pack_slices`) gives one
group of slices per task.  A topic-partition whose slices all sit in one group is *whole* there, so
that task's distinct keys of it are final (and a topic whole in one group settles its top keys there).
Map (one task per group): the single-process engine's accumulator (`kafkatool.ops.scan.Scan`) over the
group; what is final is reduced to a few numbers (or `top` candidate rows); the keys of a split
partition (summary) or topic (keys) go back whole, with their latest record or their counts.
Driver: sums the numbers; for a split unit it first checks whether any key was read by two tasks
(summary: each task ships its keys sorted in fixed-width numpy blocks, `kafkatool.spark.keysets`, and
the driver merges the sorted runs and looks for equal neighbours; keys: Arrow's hash table over the
keys).  For high-cardinality keys the usual answer is no, and then each task's own numbers add up;
only if some were does it merge that unit's keys (summary: a lexicographic sort of the blocks; keys:
a dict), as `Scan` would have.  The driver holds the keys of split units at the end (summary: 16
bytes a key beside the key itself, padded to 8 if shorter; keys: key length + 24 bytes in Arrow, ~150
more in the dict of a merge): `--approx` is for logs where that is too much.
"""

from __future__ import annotations

import functools
import heapq
from array import array
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import accumulate
from operator import itemgetter
from typing import Any

from kafkatool.ops.scan import Scan, ScanSettings, _Partition, scan_slice, sort_key_rows
from kafkatool.slices.planning import Slice
from kafkatool.spark.keysets import PackedKeys, merge_count, pack

TopicPartition = tuple[str, int]


def split_units(groups: Sequence[Sequence[Slice]], query: str) -> frozenset[Any]:
    """Topic-partitions (summary) or topics (keys) read by more than one task: their keys need a merge."""
    seen: dict[Any, int] = {}
    split = set()
    for i, group in enumerate(groups):
        for slc in group:
            unit = slc.topic if query == "keys" else (slc.topic, slc.partition)
            if seen.setdefault(unit, i) != i:
                split.add(unit)
    return frozenset(split)


@dataclass
class KeyChunk:
    """One task's keys of one split unit: the keys and int columns as Arrow arrays, plus what the task
    could already say of them if no other task read any of these keys (`settled`)."""

    keys: Any  # pyarrow binary array
    columns: tuple[Any, ...]  # pyarrow int64 arrays, one value per key
    settled: Any  # summary: sum of the keys' latest payloads; keys: this chunk's top rows


_FIRST, _SECOND, _THIRD = itemgetter(0), itemgetter(1), itemgetter(2)


def _chunk(keys: list[bytes], columns: Sequence[array], settled: Any) -> KeyChunk:
    """Arrow arrays straight from buffers: `pa.array` would import pandas in every worker (~1 s)."""
    import pyarrow as pa

    ends = array("q", accumulate(map(len, keys), initial=0))
    binary = pa.Array.from_buffers(pa.large_binary(), len(keys), [None, pa.py_buffer(ends), pa.py_buffer(b"".join(keys))])
    ints = tuple(pa.Array.from_buffers(pa.int64(), len(c), [None, pa.py_buffer(c)]) for c in columns)
    return KeyChunk(binary, ints, settled)


def _disjoint(chunks: Sequence[KeyChunk]) -> bool:
    """Whether no key is in two chunks (the keys of one task's chunk are distinct)."""
    if len(chunks) < 2:
        return True
    import pyarrow as pa
    import pyarrow.compute as pc

    # Arrow's hash table: about half of a Python set's time over the same keys (no bytes objects made)
    return len(pc.unique(pa.chunked_array([c.keys for c in chunks]))) == sum(len(c.keys) for c in chunks)


# -- summary -------------------------------------------------------------------------------------


@dataclass
class SummaryPart:
    """Summary partials: counters per partition, final key numbers, and split partitions' key chunks."""

    partitions: dict[TopicPartition, _Partition] = field(default_factory=dict)  # their `keys` left empty
    keyed_payload: dict[TopicPartition, int] = field(default_factory=dict)  # payload bytes of keyed records
    distinct: dict[TopicPartition, int] = field(default_factory=dict)
    latest_payload: dict[TopicPartition, int] = field(default_factory=dict)  # summed over distinct keys
    chunks: dict[TopicPartition, list[PackedKeys]] = field(default_factory=dict)  # with their latest records

    def merge(self, other: SummaryPart) -> SummaryPart:
        for tp, p in other.partitions.items():
            mine = self.partitions.get(tp)
            self.partitions[tp] = p if mine is None else _merge_partition(mine, p)
        for have, theirs in ((self.keyed_payload, other.keyed_payload), (self.distinct, other.distinct),
                             (self.latest_payload, other.latest_payload)):
            for tp, n in theirs.items():
                have[tp] = have.get(tp, 0) + n
        for tp, chunks in other.chunks.items():
            self.chunks.setdefault(tp, []).extend(chunks)
        return self

    def finish(self) -> SummaryPart:
        """Count the split partitions' distinct keys and sum their latest payloads."""
        for tp, chunks in self.chunks.items():
            distinct, latest = merge_count(chunks)
            self.distinct[tp] = self.distinct.get(tp, 0) + distinct
            self.latest_payload[tp] = self.latest_payload.get(tp, 0) + latest
        self.chunks = {}
        return self

    def rows(self) -> list[dict[str, Any]]:
        """`Scan.summary_rows` for the merged partials (the same definitions: `_Partition.row`)."""
        out = []
        for (topic, partition), p in sorted(self.partitions.items()):
            row = p.row(topic, partition)
            distinct = self.distinct.get((topic, partition), 0)
            row["distinct_keys"] = distinct
            row["reclaimable_records"] = p.keyed - distinct
            row["reclaimable_bytes"] = (self.keyed_payload.get((topic, partition), 0)
                                        - self.latest_payload.get((topic, partition), 0))
            out.append(row)
        return out


_SUMMED = ("batches", "records", "log_bytes", "uncompressed_bytes", "keyed", "keyless", "tombstones",
           "txn_markers", "txn_aborts")
_LOWEST = ("min_record_offset", "min_base_offset", "min_ts")
_HIGHEST = ("last_offset", "max_ts")


def _merge_partition(a: _Partition, b: _Partition) -> _Partition:
    """One partition's counters from two tasks (their keys are merged apart)."""
    a.segments |= b.segments
    for name in _SUMMED:
        setattr(a, name, getattr(a, name) + getattr(b, name))
    for names, pick in ((_LOWEST, min), (_HIGHEST, max)):
        for name in names:
            x, y = getattr(a, name), getattr(b, name)
            setattr(a, name, y if x is None else x if y is None else pick(x, y))
    return a


def _summary_part(acc: Scan, split: frozenset[Any]) -> SummaryPart:
    part = SummaryPart()
    for tp, p in acc.partitions.items():
        keys, p.keys = p.keys, {}
        part.partitions[tp] = p
        if not keys:
            continue
        values = keys.values()  # [count, payload bytes, (offset, payload) of the latest record]
        part.keyed_payload[tp] = sum(map(_SECOND, values))  # map + itemgetter: ~2x a comprehension
        latest = list(map(_THIRD, values))
        latest_payloads = array("q", map(_SECOND, latest))
        latest_sum = sum(latest_payloads)
        if tp in split:
            part.chunks[tp] = [pack(list(keys), array("q", map(_FIRST, latest)), latest_payloads)]
        else:
            part.distinct[tp] = len(keys)
            part.latest_payload[tp] = latest_sum
    return part


# -- keys ----------------------------------------------------------------------------------------


def _top_rows(topic: str, keys: dict[bytes, list[int]], top: int, by: str) -> list[dict[str, Any]]:
    """The first `top` of `Scan.key_rows` for one topic's keys (same order, without sorting them all)."""
    i = 0 if by == "records" else 1
    j = 1 - i
    best = heapq.nsmallest(top, keys.items(), key=lambda kv: (-kv[1][i], -kv[1][j], kv[0]))
    return [{"topic": topic, "key": k, "records": v[0], "payload_bytes": v[1], "tombstones": v[2]}
            for k, v in best]


@dataclass
class KeysPart:
    """Top-keys partials: candidate rows of settled topics, and key chunks of split topics."""

    top: int
    by: str
    candidates: list[dict[str, Any]] = field(default_factory=list)
    chunks: dict[str, list[KeyChunk]] = field(default_factory=dict)  # keys: records, payload, tombstones

    def merge(self, other: KeysPart) -> KeysPart:
        self.candidates = sort_key_rows(self.candidates + other.candidates, self.by)[: self.top]
        for topic, chunks in other.chunks.items():
            self.chunks.setdefault(topic, []).extend(chunks)
        return self

    def finish(self) -> KeysPart:
        rows = list(self.candidates)
        for topic, chunks in self.chunks.items():
            if _disjoint(chunks):  # every key's counts are in one chunk: each chunk's own top rows are final
                rows.extend(r for c in chunks for r in c.settled)
                continue
            merged: dict[bytes, list[int]] = {}
            for c in chunks:
                for k, *counts in zip(c.keys.to_pylist(), *(col.to_pylist() for col in c.columns), strict=True):
                    have = merged.get(k)
                    if have is None:
                        merged[k] = counts
                    else:
                        have[0] += counts[0]
                        have[1] += counts[1]
                        have[2] += counts[2]
            rows.extend(_top_rows(topic, merged, self.top, self.by))
        self.candidates = sort_key_rows(rows, self.by)[: self.top]
        self.chunks = {}
        return self

    def rows(self) -> list[dict[str, Any]]:
        return self.candidates


def _keys_part(acc: Scan, split: frozenset[Any], top: int, by: str) -> KeysPart:
    part = KeysPart(top, by)
    per_topic: dict[str, dict[bytes, list[int]]] = {}
    for (topic, key), v in acc.keys.items():
        d = per_topic.get(topic)
        if d is None:
            d = per_topic[topic] = {}
        d[key] = v
    for topic, keys in per_topic.items():
        best = _top_rows(topic, keys, top, by)
        if topic in split:
            values = keys.values()
            columns = (array("q", map(_FIRST, values)), array("q", map(_SECOND, values)),
                       array("q", map(_THIRD, values)))
            part.chunks[topic] = [_chunk(list(keys), columns, best)]
        else:
            part.candidates.extend(best)
    part.candidates = sort_key_rows(part.candidates, by)[:top]
    return part


# -- timeline ------------------------------------------------------------------------------------


@dataclass
class TimelinePart:
    """(topic, minute) -> [records, payload bytes]: small, summed in the driver."""

    timeline: dict[tuple[str, int | None], list[int]] = field(default_factory=dict)

    def merge(self, other: TimelinePart) -> TimelinePart:
        for k, v in other.timeline.items():
            have = self.timeline.get(k)
            if have is None:
                self.timeline[k] = v
            else:
                have[0] += v[0]
                have[1] += v[1]
        return self

    def finish(self) -> TimelinePart:
        return self

    def rows(self) -> list[dict[str, Any]]:
        final = Scan(("timeline",))
        final.timeline = self.timeline
        return final.timeline_rows()


# -- the job -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Job:
    """What every task of one query needs to know (pickled into the tasks)."""

    query: str
    settings: ScanSettings
    split: frozenset[Any]  # units read by more than one task
    top: int = 20
    by: str = "records"

    def empty(self) -> Any:
        if self.query == "summary":
            return SummaryPart()
        return KeysPart(self.top, self.by) if self.query == "keys" else TimelinePart()


def scan_task(job: Job, groups: Iterable[list[Slice]]) -> Scan:
    """The single-process engine's accumulator over a task's slices."""
    acc = Scan((job.query,))
    measure = job.query == "summary"  # only the summary reports uncompressed bytes
    for group in groups:
        for slc in group:
            for _pos, b, size, recs in scan_slice(slc, job.settings, measure):
                acc.add(slc.topic, slc.partition, slc.log, b, size, recs)
    return acc


def part_of(job: Job, acc: Scan) -> Any:
    """A task's accumulator reduced to what the driver needs."""
    if job.query == "summary":
        return _summary_part(acc, job.split)
    if job.query == "keys":
        return _keys_part(acc, job.split, job.top, job.by)
    return TimelinePart(acc.timeline)


def map_task(job: Job, groups: Iterable[list[Slice]]) -> Iterator[Any]:
    """One task (an RDD partition holds one group): its part, as one object."""
    yield part_of(job, scan_task(job, groups))


def run(sc: Any, groups: Sequence[list[Slice]], job: Job) -> list[dict[str, Any]]:
    """The query's result rows: one task per group, merged here."""
    merged = job.empty()
    if groups:
        for part in sc.parallelize(list(groups), len(groups)).mapPartitions(functools.partial(map_task, job)).collect():
            merged = merged.merge(part)
    return merged.finish().rows()
