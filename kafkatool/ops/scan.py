"""Single-process scan of raw segments: summary, top keys and timeline, without Spark.

It plans and reads exactly as the `kafka-log` Spark data source does (same slices, same batch walk,
same corruption policy) and computes the same rows as `kafkatool.spark.queries`, so it is both the
small-data engine of `spark-scan --engine local` and the reference the Spark results are checked
against.

The rows, their columns and their definitions are `kafkatool.slices.rows`'.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from kafkatool.log.record import CONTROL_ABORT, CONTROL_COMMIT, Record, control_type_of
from kafkatool.log.records import Batch
from kafkatool.slices.planning import DEFAULT_SPLIT_SIZE, NO_FILTER, ScanFilter, Slice, discover, plan_slices
from kafkatool.slices.reading import decode_records, read_slice, uncompressed_size
from kafkatool.slices.rows import KEYS_ORDER, MINUTE_MS, QUERIES


@dataclass(frozen=True)
class ScanSettings:
    """How to plan and read: the same knobs as the data source's options."""

    split_size: int = DEFAULT_SPLIT_SIZE
    flt: ScanFilter = NO_FILTER
    on_corrupt: str = "fail"
    verify_crc: bool = False
    use_index: bool = True


def payload_bytes(r: Record) -> int:
    return (0 if r.key is None else len(r.key)) + (0 if r.value is None else len(r.value))


def iter_scan(
    paths: Sequence[str], settings: ScanSettings = ScanSettings()
) -> Iterator[tuple[str, int, str, int, Batch, int | None, list[Record] | None]]:
    """(topic, partition, segment, position, batch, uncompressed size, records) of every batch read.

    Uncompressed size and records are None where the policy skipped them (on_corrupt='skip').
    """
    segments = discover(paths)
    for slc in plan_slices(segments, settings.split_size, settings.flt, settings.use_index):
        for pos, b, size, recs in scan_slice(slc, settings):
            yield slc.topic, slc.partition, slc.log, pos, b, size, recs


def scan_slice(
    slc: Slice, settings: ScanSettings = ScanSettings(), measure: bool = True
) -> Iterator[tuple[int, Batch, int | None, list[Record] | None]]:
    """(position, batch, uncompressed size, records) of every batch of one slice.

    The one read loop of both engines' aggregates (the Spark data source runs it in its tasks).
    Without measure the uncompressed size is not computed (nothing decompressed twice) and the
    batch's own size stands in for it: for callers that only want records.
    """
    for pos, b in read_slice(slc, settings.flt, settings.on_corrupt, settings.verify_crc):
        size = uncompressed_size(b, pos, slc.log, settings.on_corrupt) if measure else b.size
        yield pos, b, size, decode_records(b, pos, slc.log, settings.on_corrupt)


@dataclass
class _Partition:
    segments: set[str] = field(default_factory=set)
    batches: int = 0
    records: int = 0
    log_bytes: int = 0
    uncompressed_bytes: int = 0
    min_record_offset: int | None = None
    min_base_offset: int | None = None
    last_offset: int | None = None
    min_ts: int | None = None
    max_ts: int | None = None
    keyed: int = 0
    keyless: int = 0
    tombstones: int = 0
    txn_markers: int = 0
    txn_aborts: int = 0
    # key -> (count, payload bytes, (offset, payload) of the latest record)
    keys: dict[bytes, list[Any]] = field(default_factory=dict)

    def row(self, topic: str, partition: int) -> dict[str, Any]:
        reclaim_records = sum(v[0] - 1 for v in self.keys.values())
        reclaim_bytes = sum(v[1] - v[2][1] for v in self.keys.values())
        first = self.min_record_offset if self.min_record_offset is not None else self.min_base_offset
        return {
            "topic": topic,
            "partition": partition,
            "segments": len(self.segments),
            "batches": self.batches,
            "records": self.records,
            "bytes": self.log_bytes,
            "uncompressed_bytes": self.uncompressed_bytes,
            "compression_ratio": self.uncompressed_bytes / self.log_bytes if self.log_bytes else None,
            "first_offset": first,
            "last_offset": self.last_offset,
            "min_timestamp": self.min_ts,
            "max_timestamp": self.max_ts,
            "keyed_records": self.keyed,
            "keyless_records": self.keyless,
            "distinct_keys": len(self.keys),
            "tombstones": self.tombstones,
            "txn_markers": self.txn_markers,
            "txn_aborts": self.txn_aborts,
            "reclaimable_records": reclaim_records,
            "reclaimable_bytes": reclaim_bytes,
        }


class Scan:
    """Accumulates summary, keys and timeline in one pass over `iter_scan`.

    `queries` limits the per-record work to what will be asked for (the summary's per-key map,
    the keys query's per-topic map, the timeline's per-minute map).
    """

    def __init__(self, queries: Sequence[str] = QUERIES) -> None:
        unknown = set(queries) - set(QUERIES)
        if unknown:
            raise ValueError(f"unknown queries: {', '.join(sorted(unknown))}")
        self.queries = frozenset(queries)
        self.partitions: dict[tuple[str, int], _Partition] = {}
        self.keys: dict[tuple[str, bytes], list[int]] = {}  # -> [records, payload bytes, tombstones]
        self.timeline: dict[tuple[str, int | None], list[int]] = {}  # -> [records, payload bytes]

    def add(self, topic: str, partition: int, segment: str, b: Batch, size: int | None,
            recs: list[Record] | None) -> None:
        p = self.partitions.get((topic, partition))
        if p is None:
            p = self.partitions[(topic, partition)] = _Partition()
        if size is not None:  # the batch-level view keeps every batch it could measure
            p.segments.add(segment)
            p.batches += 1
            p.log_bytes += b.size
            p.uncompressed_bytes += size
            p.min_base_offset = b.base_offset if p.min_base_offset is None else min(p.min_base_offset, b.base_offset)
            p.last_offset = b.last_offset if p.last_offset is None else max(p.last_offset, b.last_offset)
        if not recs:
            return
        p.records += len(recs)
        first = min(r.offset for r in recs)
        p.min_record_offset = first if p.min_record_offset is None else min(p.min_record_offset, first)
        stamps = [r.timestamp for r in recs if r.timestamp >= 0]
        if stamps:
            lo, hi = min(stamps), max(stamps)
            p.min_ts = lo if p.min_ts is None else min(p.min_ts, lo)
            p.max_ts = hi if p.max_ts is None else max(p.max_ts, hi)
        if b.is_control:
            for r in recs:
                kind = control_type_of(r.key)
                if kind in (CONTROL_ABORT, CONTROL_COMMIT):
                    p.txn_markers += 1
                    if kind == CONTROL_ABORT:
                        p.txn_aborts += 1
            return
        sizes = [(0 if r.key is None else len(r.key)) + (0 if r.value is None else len(r.value)) for r in recs]
        p.tombstones += sum(1 for r in recs if r.value is None)
        keyless = sum(1 for r in recs if r.key is None)
        p.keyless += keyless
        p.keyed += len(recs) - keyless
        if "timeline" in self.queries:
            self._add_timeline(topic, recs, sizes)
        if "summary" in self.queries and keyless < len(recs):
            pkeys = p.keys
            for r, size_r in zip(recs, sizes, strict=True):
                key = r.key
                if key is None:
                    continue
                k = pkeys.get(key)
                latest = (r.offset, size_r)
                if k is None:
                    pkeys[key] = [1, size_r, latest]
                else:
                    k[0] += 1
                    k[1] += size_r
                    if latest > k[2]:
                        k[2] = latest
        if "keys" in self.queries and keyless < len(recs):
            tkeys = self.keys
            for r, size_r in zip(recs, sizes, strict=True):
                if r.key is None:
                    continue
                tk = tkeys.get((topic, r.key))
                if tk is None:
                    tkeys[(topic, r.key)] = [1, size_r, int(r.value is None)]
                else:
                    tk[0] += 1
                    tk[1] += size_r
                    tk[2] += r.value is None

    def _add_timeline(self, topic: str, recs: list[Record], sizes: list[int]) -> None:
        timeline = self.timeline
        for r, size_r in zip(recs, sizes, strict=True):
            ts = r.timestamp
            minute = ts - ts % MINUTE_MS if ts >= 0 else None
            t = timeline.get((topic, minute))
            if t is None:
                timeline[(topic, minute)] = [1, size_r]
            else:
                t[0] += 1
                t[1] += size_r

    def summary_rows(self) -> list[dict[str, Any]]:
        return [p.row(t, n) for (t, n), p in sorted(self.partitions.items())]

    def key_rows(self, top: int = 20, by: str = "records") -> list[dict[str, Any]]:
        rows = [
            {"topic": t, "key": k, "records": v[0], "payload_bytes": v[1], "tombstones": v[2]}
            for (t, k), v in self.keys.items()
        ]
        return sort_key_rows(rows, by)[:top]

    def timeline_rows(self) -> list[dict[str, Any]]:
        rows = [
            {"topic": t, "minute_ms": m, "records": v[0], "payload_bytes": v[1]}
            for (t, m), v in self.timeline.items()
        ]
        rows.sort(key=lambda r: (r["topic"], r["minute_ms"] is not None, r["minute_ms"] or 0))
        return rows


def sort_key_rows(rows: list[dict[str, Any]], by: str) -> list[dict[str, Any]]:
    """Largest first by `by` then the other measure, ties broken by topic and key (both engines)."""
    if by not in KEYS_ORDER:
        raise ValueError(f"by must be one of {', '.join(KEYS_ORDER)}, got {by!r}")
    other = "payload_bytes" if by == "records" else "records"
    return sorted(rows, key=lambda r: (-r[by], -r[other], r["topic"], r["key"]))


def scan(
    paths: Sequence[str], settings: ScanSettings = ScanSettings(), progress: Any = None,
    queries: Sequence[str] = QUERIES,
) -> Scan:
    """One pass over everything under paths; `progress.advance(bytes)` per batch when given."""
    acc = Scan(queries)
    for topic, partition, segment, _pos, b, size, recs in iter_scan(paths, settings):
        acc.add(topic, partition, segment, b, size, recs)
        if progress is not None:
            progress.advance(b.size)
    return acc


def planned_bytes(paths: Iterable[str], settings: ScanSettings = ScanSettings()) -> int:
    """Bytes the scan will read (for a progress bar's total)."""
    segments = discover(list(paths))
    return sum(s.length for s in plan_slices(segments, settings.split_size, settings.flt, settings.use_index))
