"""dumpLog's text: the batch lines (printBatchLevel) and record lines (dumpBatchRecords).

`batch_line` is Kafka's batch-level line, `batch_line_start` the part its tool printed before an
unknown codec made it die.  `LogText._dump_batches_text` writes a scan's batch lines and, with deep
iteration, each record's `| offset: ...` line (printRecordMetadata, printRecordContents, control
records via `parsers.control_text`), and collects the non-consecutive offsets for the deferred report.
The compiled core (`speedups`, looked up here) writes the same bytes on the hot paths: the shallow
walk (`_shallow_run`), plain v2 record lines straight from a batch's bytes, and `_v2_record_lines`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from kafkatool.jvm.text import java_utf8_bytes
from kafkatool.log.codecs import Codec
from kafkatool.log.core import speedups
from kafkatool.log.errors import CorruptRecordError
from kafkatool.log.record import TIMESTAMP_TYPE_NAMES, Record
from kafkatool.log.records import Batch, BatchScan
from kafkatool.ops.dumplog.base import DumperBase
from kafkatool.ops.dumplog.parsers import control_text

# the compiled shallow walk hands back this much text, or stops after this much input (so the mapped
# pages are released as the scan goes), whichever comes first
SHALLOW_OUT_BYTES = 256 * 1024
SHALLOW_IN_BYTES = 16 * 1024 * 1024


_V2_LINE = (
    b"baseOffset: %d lastOffset: %d count: %d baseSequence: %d lastSequence: %d producerId: %d "
    b"producerEpoch: %d partitionLeaderEpoch: %d isTransactional: %b isControl: %b deleteHorizonMs: %b "
    b"position: %d %b: %d size: %d magic: %d compresscodec: %b crc: %d isvalid: %b\n"
)
_LEGACY_LINE = b"offset: %d position: %d %b: %d size: %d magic: %d compresscodec: %b crc: %d isvalid: %b\n"
_TS_NAMES = {k: v.encode() for k, v in TIMESTAMP_TYPE_NAMES.items()}
_BOOL = {True: b"true", False: b"false"}


_CODEC_LABELS = tuple(c.label for c in sorted(Codec))


def codec_name(codec: int) -> str:
    if 0 <= codec < len(_CODEC_LABELS):
        return _CODEC_LABELS[codec]
    raise CorruptRecordError(f"Unknown compression type id: {codec}")


def _v2_start_fields(b: Batch) -> tuple:
    dh = b.delete_horizon_ms
    return (
        b.base_offset,
        b.last_offset,
        b.count,
        b.base_sequence,
        b.last_sequence,
        b.producer_id,
        b.producer_epoch,
        b.partition_leader_epoch,
        _BOOL[b.is_transactional],
        _BOOL[b.is_control],
        b"OptionalLong.empty" if dh is None else b"OptionalLong[%d]" % dh,
    )


_V2_START = _V2_LINE[: _V2_LINE.index(b" position: ")]


def batch_line_start(b: Batch) -> bytes:
    """The part of the batch line Kafka's printBatchLevel prints (`print`, no newline) before it builds
    the rest, whose compression type an unknown codec id makes throw: all the tool shows of that batch."""
    if b.magic >= 2:
        return _V2_START % _v2_start_fields(b)
    return b"offset: %d" % b.last_offset


def batch_line(b: Batch) -> bytes:
    """Kafka's batch-level line (printBatchLevel): v2's start fields or the legacy offset, then the same tail."""
    tail = (
        b.position,
        _TS_NAMES[b.timestamp_type],
        b.max_timestamp,
        b.size,
        b.magic,
        codec_name(b.codec).encode(),
        b.crc,
        _BOOL[b.is_valid()],
    )
    if b.magic >= 2:
        return _V2_LINE % (*_v2_start_fields(b), *tail)
    return _LEGACY_LINE % (b.last_offset, *tail)


class LogText(DumperBase):
    """The text of a log's batches and records."""

    def _dump_batches_text(self, scan: BatchScan, path: Path, shown: str) -> tuple[int, int]:
        """Write the batch (and record) lines of a scan; returns (first, last) record offsets seen
        (-1, -1 for none) so chunks dumped in parallel can be stitched for the continuity report."""
        opts = self.opts
        deep = opts.deep_iteration
        w = self._w
        pending: list[bytes] = []
        pend = pending.append
        last_offset = -1
        first_offset = -1
        non_consecutive: list[tuple[int, int]] = []
        from_minus_one = self.text.continuity_from_minus_one
        nbatches = 0
        nrecords = 0
        # the compiled core pends a batch's record lines as one item (pure Python one item a line):
        # those are written as they are, without joining megabytes
        whole_batches = speedups is not None and deep
        flush_at = 16 if whole_batches else 256
        # the compiled core prints a plain batch's record lines straight from its bytes (None: not plain)
        raw_lines = (
            speedups.v2_raw_record_lines
            if speedups is not None
            and deep
            and not opts.skip_record_metadata
            and (not opts.print_data_log or self._plain_strings)
            else None
        )
        deep_run = raw_lines is not None and speedups is not None and hasattr(speedups, "deep_lines")

        def run_from(pos: int) -> int:
            """The compiled core's deep lines from pos over plain batches; where it stopped."""
            nonlocal nbatches, nrecords, first_offset, last_offset
            assert speedups is not None
            while True:
                lines, pos_, n, recs, first, last = speedups.deep_lines(
                    scan.buf, pos, scan.end, SHALLOW_OUT_BYTES, SHALLOW_IN_BYTES, opts.print_data_log,
                    last_offset, from_minus_one,
                )
                if n == 0:
                    return pos
                if pending:  # what the Python loop printed before the run, then the run's lines (no copy of them)
                    w(b"".join(pending))
                    pending.clear()
                w(lines)
                nbatches += n
                nrecords += recs
                if first_offset == -1:
                    first_offset = first
                last_offset = last
                pos = scan.valid_bytes = pos_
                if scan.release is not None:
                    scan.release(pos)

        def resume(pos: int) -> None:
            """After a batch the Python loop printed: the compiled run from its end, the walk on from there."""
            to = run_from(pos)
            if to != pos:
                scan.jump_to = to

        try:
            if not deep and speedups is not None:
                nbatches += self._shallow_run(scan)
            if deep_run:
                scan.start = scan.valid_bytes = run_from(scan.start)
            for batch in scan:
                nbatches += 1
                try:
                    pend(batch_line(batch))
                except CorruptRecordError:  # an unknown codec: Kafka printed the line's start, then died
                    w(b"".join(pending) + batch_line_start(batch))
                    pending.clear()
                    self._line_open = True
                    raise
                if raw_lines is not None and not batch.is_control:
                    fast = batch.in_place(raw_lines, _TS_NAMES[batch.timestamp_type], opts.print_data_log)
                    if fast is not None:
                        lines, first, last = fast
                        pend(lines)
                        nrecords += last - first + 1
                        if first_offset == -1:
                            first_offset = first
                        if not ((last_offset == -1 and not from_minus_one) or first == last_offset + 1):
                            non_consecutive.append((last_offset, first))  # consecutive within the batch
                        last_offset = last
                        if len(pending) >= flush_at:
                            for chunk in pending:
                                w(chunk)
                            pending.clear()
                        if deep_run:
                            resume(batch.end)
                        continue
                if deep:
                    try:
                        recs = batch.records()
                    except CorruptRecordError as exc:
                        # Kafka prints the records it could read before the damage, then dies.
                        self._record_lines(batch, exc.partial, pend)
                        raise CorruptRecordError(
                            f"batch at position {batch.position} (offsets {batch.base_offset}..{batch.last_offset}): "
                            f"{exc}",
                            batch.position,
                        ) from None
                    nrecords += len(recs)
                    if recs:
                        first = recs[0][0]
                        if first_offset == -1:
                            first_offset = first
                        if ((last_offset == -1 and not from_minus_one) or first == last_offset + 1) and (
                            recs[-1][0] - first == len(recs) - 1
                        ):
                            last_offset = recs[-1][0]  # the usual case: one check per batch
                        else:
                            for r in recs:
                                o = r[0]
                                if (last_offset != -1 or from_minus_one) and o != last_offset + 1:
                                    non_consecutive.append((last_offset, o))
                                last_offset = o
                    self._record_lines(batch, recs, pend)
                if len(pending) >= flush_at:
                    if whole_batches:
                        for chunk in pending:  # big chunks go to the stream without another copy
                            w(chunk)
                    else:
                        w(b"".join(pending))
                    pending.clear()
                if deep_run:
                    resume(batch.end)
        finally:
            if pending:
                w(b"".join(pending))
            self.result.batches += nbatches
            self.result.records += nrecords
            if non_consecutive:
                self.deferred.non_consecutive.setdefault(str(path.absolute()), []).extend(non_consecutive)
        return first_offset, last_offset

    def _shallow_run(self, scan: BatchScan) -> int:
        """The compiled core's batch lines (the shallow hot path) from the scan's start for as long as
        it can go; moves the scan on to where it stopped: the end, or an entry the Python loop then
        prints or reports (a damaged frame, an unknown codec).  Returns the batches written."""
        core = speedups
        assert core is not None  # called only when the compiled core is loaded
        n = 0
        pos = scan.start
        while True:
            lines, pos, count = core.shallow_lines(
                scan.buf, pos, scan.end, SHALLOW_OUT_BYTES, SHALLOW_IN_BYTES
            )
            if count == 0:
                return n
            self._w(lines)
            n += count
            scan.start = scan.valid_bytes = pos
            if scan.release is not None:
                scan.release(pos)

    def _record_lines(self, batch: Batch, recs: list[Record], pend: Callable[[bytes], None]) -> None:
        """Append the `| offset: …` lines of a batch's records (the hot path of deep/print modes)."""
        opts = self.opts
        ts_name = TIMESTAMP_TYPE_NAMES[batch.timestamp_type].encode()
        control = batch.is_control
        printing = opts.print_data_log and not control
        skip_meta = opts.skip_record_metadata
        v2 = batch.magic >= 2
        if v2 and not control and not skip_meta and (not printing or self._plain_strings):
            self._v2_record_lines(ts_name, printing, recs, pend)
            return
        if v2:
            meta = (
                b"| offset: %d " + ts_name + b": %d keySize: %d valueSize: %d sequence: %d headerKeys: [%b]"
            )
        else:
            meta = (
                b"| offset: %d "
                + ts_name
                + b": %d keySize: %d valueSize: %d isValid: %s crc: %d"
                + self.text.legacy_crc_brace
            )
        parser = self.parser
        for r in recs:
            k = r[2]
            v = r[3]
            if skip_meta:
                line = b"|"
                sep = b" "
            else:
                if v2:
                    h = r[4]
                    line = meta % (
                        r[0],
                        r[1],
                        -1 if k is None else len(k),
                        -1 if v is None else len(v),
                        r[5],
                        b",".join([x[0].encode("utf-8", "replace") for x in h]) if h else b"",
                    )
                else:
                    line = meta % (
                        r[0],
                        r[1],
                        -1 if k is None else len(k),
                        -1 if v is None else len(v),
                        b"true" if r[7] else b"false",
                        r[6],
                    )
                if control:
                    line += control_text(r, self.opts.release)
                sep = b" "
            if printing:
                kt, vt = parser(r)
                if skip_meta:
                    # Kafka prints "| " in front of a key; a keyless record starts with " payload:"
                    # (Kafka 4.3 on: "| payload:").
                    line = b"| key: " + kt if kt is not None else b""
                    if vt is not None:
                        line += (b" payload: " if kt is not None else self.text.keyless_payload_indent) + vt
                else:
                    if kt is not None:
                        line += sep + b"key: " + kt
                    if vt is not None:
                        line += b" payload: " + vt
            elif skip_meta:
                line = b""
            pend(line + b"\n")

    def _v2_record_lines(
        self, ts_name: bytes, printing: bool, recs: list[Record], pend: Callable[[bytes], None]
    ) -> None:
        """Fast path for v2 data records with string decoders: one %-format per record (the compiled
        core's `v2_record_lines` writes the same bytes when built)."""
        if speedups is not None:
            try:
                pend(speedups.v2_record_lines(recs, ts_name, printing, java_utf8_bytes))
                return
            except Exception:  # noqa: BLE001 - the loop below writes the lines before the failure, then raises
                pass
        meta = b"| offset: %d " + ts_name + b": %d keySize: %d valueSize: %d sequence: %d headerKeys: [%b]"
        f_none = meta + b"\n"
        f_k = meta + b" key: %b\n"
        f_v = meta + b" payload: %b\n"
        f_kv = meta + b" key: %b payload: %b\n"
        jb = java_utf8_bytes
        last_h: tuple = ()
        hk = b""
        for r in recs:
            k = r[2]
            v = r[3]
            h = r[4]
            if h != last_h:
                hk = b",".join([x[0].encode("utf-8") for x in h])
                last_h = h
            if k is None:
                if v is None or not printing:
                    pend(f_none % (r[0], r[1], -1, -1 if v is None else len(v), r[5], hk))
                else:
                    pend(f_v % (r[0], r[1], -1, len(v), r[5], hk, v if v.isascii() else jb(v)))
            elif v is None:
                if printing:
                    pend(f_k % (r[0], r[1], len(k), -1, r[5], hk, k if k.isascii() else jb(k)))
                else:
                    pend(f_none % (r[0], r[1], len(k), -1, r[5], hk))
            elif printing:
                pend(
                    f_kv
                    % (
                        r[0],
                        r[1],
                        len(k),
                        len(v),
                        r[5],
                        hk,
                        k if k.isascii() else jb(k),
                        v if v.isascii() else jb(v),
                    )
                )
            else:
                pend(f_none % (r[0], r[1], len(k), len(v), r[5], hk))
