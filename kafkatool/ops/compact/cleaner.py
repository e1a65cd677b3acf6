"""One cleaning pass over one partition: Kafka's `Cleaner` (offset map, batch retention, record retention)."""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable
from itertools import compress
from typing import Any

import numpy as np

from kafkatool.log.core import speedups
from kafkatool.log.files import MappedFile
from kafkatool.log.producer_state import ProducerLast
from kafkatool.log.record import NO_TIMESTAMP, TS_LOG_APPEND, Record
from kafkatool.log.records import Batch
from kafkatool.log.writer import encode_legacy_batch, encode_v2_batch
from kafkatool.ops.compact.config import CompactConfig
from kafkatool.ops.compact.decoded import DecodedRecords
from kafkatool.ops.compact.keys import BatchKeyColumns, decode_key_columns
from kafkatool.ops.compact.manager import CleanerSegment, PartitionLog
from kafkatool.ops.compact.offsetmap import KEY_HASH, OffsetMap
from kafkatool.ops.compact.scan import CleanerScan
from kafkatool.ops.compact.stats import CleanerStats, GroupResult
from kafkatool.ops.compact.transactions import TransactionTracker, control_type
from kafkatool.ops.compact.writer import ChunkPieces, CleanedSegment, read_chunks
from kafkatool.ops.safety import replace_segments

MAP_KEYS_PER_PUT = 32768  # keys hashed and put into the offset map per vectorised call
MAP_BYTES_PER_PUT = 8 * 1024 * 1024  # ...or fewer, to bound the decompressed batches held at once
RECORDS_PER_JUDGEMENT = 32768  # records decoded and judged per vectorised round while cleaning
CLEAN_BYTES_PER_JUDGEMENT = 4 * 1024 * 1024  # ...or fewer, to bound the decoded records held at once

# Batch retention decisions (MemoryRecords.RecordFilter.BatchRetention)
# batch, retention, discard records, empty-txn marker, records (a control batch's; others are decoded later)
_Plan = tuple[Batch, int, bool, bool, list[Record] | None]
DELETE = 0  # drop the batch without looking at its records
RETAIN_EMPTY = 1  # keep the batch even if no record survives (a 61-byte header)
DELETE_EMPTY = 2  # keep the batch only if a record survives


def _decode_planned(pending: list[tuple[int, list[_Plan]]]) -> None:
    """Decode the planned data batches only to raise the error of the first damaged one, if any."""
    decode_key_columns([p[0] for _, plans in pending for p in plans if p[4] is None])



class Cleaner:
    """One cleaning pass over one partition (Kafka's Cleaner.doClean), writing or only measuring."""

    def __init__(
        self,
        log: PartitionLog,
        cfg: CompactConfig,
        now_ms: int,
        offset_map: OffsetMap,
        *,
        dry_run: bool = False,
        progress: Callable[[int], None] | None = None,
    ) -> None:
        self.log = log
        self.cfg = cfg
        self.now = now_ms
        self.map = offset_map
        self.dry_run = dry_run
        self.progress = progress
        self.stats = CleanerStats()
        self.map_full = False
        self.decoded: DecodedRecords | None = None  # filled by build_offset_map, read by cleaning

    # -- building the offset map ------------------------------------------------------------
    def build_offset_map(self, start: int, end: int) -> None:
        """Map key → latest offset over [start, end), stopping where the map fills (buildOffsetMap)."""
        self.map.clear()
        self.map.reserve(end - start)  # no more keys than offsets: a table that small, not the whole buffer
        self.map.track_offsets(start, end)  # lets cleaning judge the records mapped here by offset
        self.decoded = DecodedRecords(start, end, self.map.memory // 16)
        dirty = self.log.segments_in(start, end)
        txn = TransactionTracker()
        txn.add_aborted(self.log.collect_aborted(start, end))
        for i, seg in enumerate(dirty):
            next_start = dirty[i + 1].base_offset if i + 1 < len(dirty) else end
            if self._map_segment(seg, start, next_start, txn):
                self.map_full = True
                return

    def _map_segment(self, seg: CleanerSegment, start: int, next_start: int, txn: TransactionTracker) -> bool:
        """buildOffsetMapForSegment.  Keys go to the map MAP_KEYS_PER_PUT at a time (the fill point is
        still exact to the record), because numpy calls cost the same for 200 keys as for 50,000; the
        batches' keys are decoded together too, without their values (`decode_key_columns`)."""
        to_decode: list[Batch] = []  # batches whose keys go to the map, in log order
        decoded: list[bool] = []  # for every batch read since the last put: is it in to_decode?
        lasts: list[int] = []  # last offset of each of those batches
        records = 0
        pending_bytes = 0
        st = self.stats
        with MappedFile(seg.files.log) as mf:
            for b in CleanerScan(mf.buf, 0, seg.size):
                pending_bytes += b.size
                if b.last_offset < start:
                    continue  # before the dirty range: the broker starts at the index entry for it
                if b.is_control:
                    txn.on_control_batch(b, control_type(b))
                    st.map_records_read += 1
                    decoded.append(False)
                elif txn.on_batch(b):
                    st.map_records_read += b.count or 0
                    decoded.append(False)
                else:
                    to_decode.append(b)
                    records += b.count or 0
                    decoded.append(True)
                lasts.append(b.last_offset)
                if records >= MAP_KEYS_PER_PUT or pending_bytes >= MAP_BYTES_PER_PUT:
                    if self._map_put(seg, to_decode, decoded, lasts, start, pending_bytes):
                        return True
                    to_decode, decoded, lasts, records, pending_bytes = [], [], [], 0, 0
                    mf.release(b.end)  # every batch read is in the map: drop the mapped pages behind
            if self._map_put(seg, to_decode, decoded, lasts, start, pending_bytes):
                return True
        if not self.cfg.before_kip534:
            self.map.update_latest_offset(next_start - 1)  # offset gaps at a segment's end (Kafka 3.x)
        return False

    def _map_put(
        self, seg: CleanerSegment, batches: list[Batch], decoded: list[bool], lasts: list[int], start: int, size: int
    ) -> bool:
        """Put the batches' keys (keyed records from `start` on) until the map fills; the map covers every
        batch read before the one that filled it."""
        st = self.stats
        cols = decode_key_columns(batches)
        if self.decoded is not None:
            self.decoded.note(seg.base_offset, batches, cols)
        st.map_records_read += len(cols)
        st.map_keyless += int(cols.null_keys.sum())
        wanted = ~cols.null_keys & (cols.offsets >= start)
        digests = cols.key_digests(wanted, KEY_HASH)
        if len(digests) == len(cols):
            offsets, ends = cols.offsets, cols.starts[1:]
        else:
            offsets = cols.offsets[wanted]
            ends = np.concatenate(([0], np.cumsum(wanted)))[cols.starts[1:]].tolist()
        bounds: list[int] = []  # keys collected up to each batch (a batch without keys adds none)
        it = iter(ends)
        bound = 0
        for has_keys in decoded:
            if has_keys:
                bound = next(it)
            bounds.append(bound)
        omap = self.map
        consumed = omap.put_until_full(digests, offsets) if len(digests) else 0
        full = consumed < len(digests)
        covered = lasts[: bisect_right(bounds, consumed)] if full else lasts
        if covered:
            omap.update_latest_offset(covered[-1])
        st.map_bytes_read += size
        if self.progress:
            self.progress(size)
        return full

    # -- cleaning ---------------------------------------------------------------------------
    def clean_group(
        self,
        group: list[CleanerSegment],
        txn: TransactionTracker,
        legacy_delete_horizon_ms: int,
        upper_bound_offset: int,
        producers: dict[int, ProducerLast],
    ) -> GroupResult:
        """cleanSegments: copy a group into one cleaned segment and (unless dry) swap it in."""
        out = CleanedSegment(self.log.dir, group[0].base_offset, self.cfg.index_interval_bytes, not self.dry_run)
        txn.cleaned_index = out.aborted
        records_before = self.stats.records_read
        records_after = self.stats.records_written
        try:
            for i, seg in enumerate(group):
                if self.cfg.before_kip534:  # Kafka 2.1: fresh transaction state for every segment
                    upper = group[i + 1].base_offset if i + 1 < len(group) else self.map.latest_offset + 1
                    txn = TransactionTracker()
                    txn.cleaned_index = out.aborted
                else:
                    upper = group[i + 1].base_offset if i + 1 < len(group) else seg.next_offset
                txn.add_aborted(self.log.collect_aborted(seg.base_offset, upper))
                retain_deletes = seg.mtime_ms > legacy_delete_horizon_ms  # the segment-age rule
                self._clean_into(seg, out, txn, retain_deletes, producers, upper_bound_offset)
            out.close(group[-1].mtime_ms)
        except BaseException:
            out.discard()
            raise
        if not self.dry_run:
            replace_segments(self.log.dir, [out.base_offset], [s.base_offset for s in group])
        return GroupResult(
            out.base_offset,
            [s.base_offset for s in group],
            sum(s.size for s in group),
            out.size,
            self.stats.records_read - records_before,
            self.stats.records_written - records_after,
        )

    def _batch_retention(
        self,
        b: Batch,
        txn: TransactionTracker,
        producers: dict[int, ProducerLast],
        upper_bound_offset: int,
        retain_segment_deletes: bool,
    ) -> tuple[int, bool, bool, int | None]:
        """checkBatchRetention: (retention, discard its records, marker of an empty txn, control type)."""
        ctype: int | None = None
        old = self.cfg.before_kip534
        if b.is_control:
            ctype = control_type(b)
            can_discard = txn.on_control_batch(b, ctype)
            horizon = b.delete_horizon_ms
            if old:
                discard = can_discard and not retain_segment_deletes
            else:
                discard = can_discard and horizon is not None and horizon <= self.now
        else:
            can_discard = txn.on_batch(b)
            discard = can_discard
            if can_discard:
                self.stats.aborted_batches += 1
                self.stats.aborted_bytes += b.size
        last_of_producer = False
        if b.magic >= 2 and b.producer_id >= 0:
            p = producers.get(b.producer_id)
            if p is None:
                pass
            elif old:
                last_of_producer = p.last_sequence == b.last_sequence
            elif p.last_data_offset >= 0:
                last_of_producer = b.last_offset == p.last_data_offset
            else:
                last_of_producer = b.is_control and b.producer_epoch == p.epoch
        if last_of_producer:
            retention = RETAIN_EMPTY
        elif b.next_offset == upper_bound_offset and not old:
            retention = RETAIN_EMPTY  # keep the round's last offset even if nothing else survives
        elif discard:
            retention = DELETE
        else:
            retention = DELETE_EMPTY
        return retention, discard, can_discard and b.is_control, ctype

    def _clean_into(
        self,
        seg: CleanerSegment,
        out: CleanedSegment,
        txn: TransactionTracker,
        retain_segment_deletes: bool,
        producers: dict[int, ProducerLast],
        upper_bound_offset: int,
    ) -> None:
        """cleanInto: filter a segment chunk by chunk (each chunk one append to the cleaned segment).

        Batch decisions run in log order as Kafka's do; the records of several chunks are then decoded,
        looked up and judged together before their chunks are written.
        """
        st = self.stats
        pending: list[tuple[int, list[_Plan]]] = []
        pending_bytes = 0
        pending_records = 0
        with MappedFile(seg.files.log) as mf:
            for chunk in read_chunks(mf.buf, seg.size, self.cfg):
                plans: list[_Plan] = []
                chunk_bytes = 0
                try:
                    for b in chunk:
                        chunk_bytes += b.size
                        st.bytes_read += b.size
                        st.batches_read += 1
                        retention, discard, empty_txn_marker, _ = self._batch_retention(
                            b, txn, producers, upper_bound_offset, retain_segment_deletes
                        )
                        if retention == DELETE:
                            st.records_read += b.count or 0
                            continue
                        recs = None  # decoded in _write_chunks, but a control batch's record now
                        if b.is_control:
                            recs = b.records()
                            st.records_read += len(recs)
                        else:
                            pending_records += b.count or 0
                        plans.append((b, retention, discard, empty_txn_marker, recs))
                except Exception:
                    # a damaged batch planned before this one would have stopped the cleaner first
                    _decode_planned([*pending, (chunk_bytes, plans)])
                    raise
                pending.append((chunk_bytes, plans))
                pending_bytes += chunk_bytes
                if pending_records >= RECORDS_PER_JUDGEMENT or pending_bytes >= CLEAN_BYTES_PER_JUDGEMENT:
                    self._write_chunks(seg, pending, out, retain_segment_deletes)
                    pending, pending_bytes, pending_records = [], 0, 0
                    mf.release(chunk[-1].end)  # every chunk read is written: drop the mapped pages behind
            if pending:
                self._write_chunks(seg, pending, out, retain_segment_deletes)

    def _write_chunks(
        self, seg: CleanerSegment, pending: list[tuple[int, list[_Plan]]], out: CleanedSegment, retain_segment_deletes: bool
    ) -> None:
        """filterTo for planned chunks: keep records, copy or rebuild batches, append each chunk.

        The records of all data batches are decoded together, without values (`decode_key_columns`;
        batches the offset-map pass decoded are not decoded again, see `DecodedRecords`), and
        shouldRetainRecord is evaluated with numpy over all of them at once: a record stays if it is past
        the map, or keyed, not older than its key's mapped offset, and either has a value or its
        tombstone is still retained.  Whether a record is its key's latest is known by offset for the
        records the map was built from (`OffsetMap.latest_by_offset`); only the others have their key
        digested and looked up.  A batch that keeps every record is copied from the segment as it is
        (consecutive ones as one piece); only a batch that loses records is rebuilt: by the compiled core
        when it is plain (uncompressed, create time, headers that re-encode to their own bytes, no horizon
        to keep or stamp), else decoded in full and re-encoded by `_rebuild`, the reference the compiled
        rebuild is tested against.
        """
        st = self.stats
        old = self.cfg.before_kip534
        now = self.now
        latest = self.map.latest_offset
        horizons: list[int | None] = []  # each planned batch's delete horizon
        batches: list[Batch] = []  # the data batches, whose records are decoded here
        judged: list[bool] = []  # ...whether their records are judged one by one (not discarded)
        retained: list[bool] = []  # ...whether their tombstones are still retained
        for _, plans in pending:
            for b, _retention, discard, _marker, recs in plans:
                if b.magic >= 2 and not old:
                    horizon = b.delete_horizon_ms
                    retain_deletes = horizon is None or now < horizon
                else:
                    horizon = b.delete_horizon_ms if b.magic >= 2 else None
                    retain_deletes = retain_segment_deletes
                horizons.append(horizon)
                if recs is None:
                    batches.append(b)
                    judged.append(not discard)
                    retained.append(retain_deletes)
        columns = self._record_columns(seg, batches)
        offsets, null_keys, tombstone, starts, counts = columns[:5]
        st.records_read += len(offsets)
        judged_rec = np.repeat(np.array(judged, dtype=bool), counts)
        keyed = ~null_keys
        in_map = judged_rec & keyed & (offsets <= latest)
        # records the map was built from are known by offset; only the others need their key looked up
        put, put_latest = self.map.latest_by_offset(offsets)
        latest_of_key = in_map & put & put_latest
        lookup = in_map & ~put
        if bool(lookup.any()):
            cols, decoded_rec = columns[5], columns[6]
            if bool((lookup & ~decoded_rec).any()):  # noted records are all in the map: cannot happen
                columns = self._record_columns(seg, batches, use_noted=False)
                cols, decoded_rec = columns[5], columns[6]
            mapped = self.map.get_many(cols.key_digests(lookup[decoded_rec], KEY_HASH))
            latest_of_key[lookup] = offsets[lookup] >= mapped
        past_map = offsets > latest
        st.keyless_dropped += int((judged_rec & ~keyed & ~past_map).sum())
        st.tombstones_read += int(tombstone.sum())
        retain_rec = np.repeat(np.array(retained, dtype=bool), counts)
        keep = judged_rec & (past_map | (latest_of_key & (~tombstone | retain_rec)))
        bounds = np.asarray(starts)
        kept_total = np.concatenate(([0], np.cumsum(keep)))
        kept_counts = (kept_total[bounds[1:]] - kept_total[bounds[:-1]]).tolist()
        tomb_total = np.concatenate(([0], np.cumsum(keep & tombstone)))
        kept_tombstones = (tomb_total[bounds[1:]] - tomb_total[bounds[:-1]]).tolist()
        plan_no = 0
        data_no = 0
        for chunk_bytes, plans in pending:
            pieces = ChunkPieces()
            max_offset = -1
            max_ts = NO_TIMESTAMP
            shallow = -1
            for b, retention, discard, empty_txn_marker, recs in plans:
                horizon = horizons[plan_no]
                plan_no += 1
                if recs is not None:  # a control batch: its marker stays unless it may be discarded
                    n = len(recs)
                    n_kept = 0 if discard else n
                    tombstones = 0
                    st.tombstones_read += sum(1 for r in recs if r.value is None)
                else:
                    first = starts[data_no]
                    n = starts[data_no + 1] - first
                    n_kept = kept_counts[data_no]
                    tombstones = kept_tombstones[data_no]
                    data_no += 1
                if n_kept:
                    stamp = b.magic >= 2 and (tombstones or empty_txn_marker) and horizon is None and not old
                    if n_kept == n and not stamp:
                        pieces.add_batch(b)
                        ts, ts_offset, largest = b.max_timestamp, b.last_offset, b.last_offset
                    else:
                        fast = None  # the compiled rebuild of a plain batch: the same bytes as _rebuild
                        if speedups is not None and recs is None and not stamp and horizon is None:
                            fast = speedups.rebuild_v2(b.buf, b.position, b.size, keep[first : first + n].tobytes())
                        if fast is not None:
                            rebuilt, ts, largest = fast
                            ts_offset = b.last_offset
                        else:
                            if recs is None:
                                recs = b.records()
                            kept = recs if n_kept == n else list(compress(recs, keep[first : first + n].tolist()))
                            if stamp:
                                horizon = now + self.cfg.delete_retention_ms
                                st.horizons_stamped += 1
                            rebuilt, ts, ts_offset = self._rebuild(b, kept, horizon)
                            largest = kept[-1].offset
                        pieces.add(rebuilt)
                    st.records_written += n_kept
                    st.tombstones_written += tombstones
                elif retention == RETAIN_EMPTY and b.magic >= 2:
                    pieces.add(_encode_like(b, [], max_timestamp=b.max_timestamp))
                    ts, ts_offset, largest = b.max_timestamp, b.last_offset, b.last_offset
                    st.empty_batches_written += 1
                else:
                    continue
                st.batches_written += 1
                if ts > max_ts:
                    max_ts, shallow = ts, ts_offset
                max_offset = max(max_offset, largest)
            written = pieces.joined()
            if written is not None:
                out.append(written, max_offset, max_ts, shallow)
                st.bytes_written += len(written)
            if self.progress:
                self.progress(chunk_bytes)

    def _record_columns(
        self, seg: CleanerSegment, batches: list[Batch], use_noted: bool = True
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[int], np.ndarray, BatchKeyColumns, np.ndarray]:
        """Offsets, null keys, null values, batch starts and counts of the batches' records, in order,
        plus the decoded columns of those not noted by the offset-map pass and which records they are.

        Batches the first pass noted (`DecodedRecords`) are not decoded again; notes are used only while
        the map still tracks offsets, so their records' retention is known without their keys.
        """
        noted = self.decoded if use_noted and self.map.tracks_offsets else None
        known = noted.knows_many(seg.base_offset, batches) if noted is not None else np.zeros(len(batches), bool)
        cols = decode_key_columns([b for b, k in zip(batches, known.tolist(), strict=True) if not k])
        counts = np.zeros(len(batches), dtype=np.int64)
        counts[~known] = np.diff(cols.starts)
        if noted is None or not known.any():
            return cols.offsets, cols.null_keys, cols.null_values, cols.starts, counts, cols, np.ones(len(cols), bool)
        known_batches = list(compress(batches, known.tolist()))
        counts[known] = [b.last_offset - b.base_offset + 1 for b in known_batches]
        known_rec = np.repeat(known, counts)
        n = int(counts.sum())
        offsets = np.empty(n, dtype=np.int64)
        null_keys = np.empty(n, dtype=bool)
        null_values = np.empty(n, dtype=bool)
        offsets[known_rec], null_keys[known_rec], null_values[known_rec] = noted.columns(known_batches)
        offsets[~known_rec], null_keys[~known_rec], null_values[~known_rec] = cols.offsets, cols.null_keys, cols.null_values
        starts = [0, *np.cumsum(counts).tolist()]
        return offsets, null_keys, null_values, starts, counts, cols, ~known_rec

    @staticmethod
    def _rebuild(b: Batch, kept: list[Record], horizon: int | None) -> tuple[bytes, int, int]:
        """buildRetainedRecordsInto: the batch's surviving records in its own magic, codec and header.

        Returns the bytes and MemoryRecordsBuilder.info(): the max timestamp and its shallow offset.
        """
        if b.magic >= 2:
            data = _encode_like(b, kept, codec=b.codec, delete_horizon_ms=horizon)
            if b.timestamp_type == TS_LOG_APPEND:
                return data, b.max_timestamp, b.last_offset
            return data, max(r.timestamp for r in kept), b.last_offset
        lat = b.max_timestamp if b.timestamp_type == TS_LOG_APPEND else None
        data = encode_legacy_batch(kept, magic=b.magic, codec=b.codec, log_append_time=lat)
        if lat is not None:
            return data, lat, kept[-1].offset
        ts = max(r.timestamp for r in kept) if b.magic >= 1 else NO_TIMESTAMP
        return data, ts, kept[-1].offset


def _encode_like(b: Batch, records: list, **overrides: Any) -> bytes:
    """A v2 batch with b's header fields (offsets, producer state, flags) around `records`."""
    return encode_v2_batch(
        records,
        b.base_offset,
        timestamp_type=b.timestamp_type,
        producer_id=b.producer_id,
        producer_epoch=b.producer_epoch,
        base_sequence=b.base_sequence,
        partition_leader_epoch=b.partition_leader_epoch,
        is_transactional=b.is_transactional,
        is_control=b.is_control,
        last_offset=b.last_offset,
        **overrides,
    )
