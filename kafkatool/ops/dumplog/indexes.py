"""dumpIndex and dumpTimeIndex: offset and time index entries, checked against the log.

Each `.index` entry's position must start a batch whose last offset is the entry's offset (else an
index mismatch); each `.timeindex` entry's offset must be a batch's last offset whose largest
timestamp is the entry's, in increasing order (else TimeIndexDumpErrors' problems).  The problems go
to the deferred reports (`reports._Stderr`); `--verify-index-only` prints only those, and
`--index-sanity-check` runs the index's own sanityCheck instead.
"""

from __future__ import annotations

from pathlib import Path

from kafkatool.log.errors import CorruptIndexError, LogFormatError
from kafkatool.log.files import MappedFile
from kafkatool.log.index import OffsetIndex, TimeIndex
from kafkatool.log.records import Batch, iter_batches, read_batch_header
from kafkatool.ops.dumplog.base import DumperBase, _base_offset
from kafkatool.ops.dumplog.options import Problem


class IndexDumps(DumperBase):
    """The `.index` and `.timeindex` dumps."""

    # -- .index ----------------------------------------------------------------------------
    def _open_log_for_index(self, path: Path) -> MappedFile:
        log = path.absolute().parent / (path.name.split(".")[0] + ".log")
        if not log.exists():
            raise LogFormatError(f"the segment's log file {log.name} does not exist beside it")
        return MappedFile(log)

    def dump_index(self, path: Path, shown: str) -> None:
        opts = self.opts
        base = _base_offset(path)
        index = OffsetIndex(path.read_bytes(), base, path)
        with self._open_log_for_index(path) as log:
            if index.entries == 0:
                if self.json:
                    self._emit({"type": "index_summary", "file": shown, "entries": 0})
                else:
                    self._w(f"{shown} is empty.\n".encode())
                return
            if opts.index_sanity_check:
                self._sanity(index, shown)
                return
            abs_path = str(path.absolute())
            mismatches = self.deferred.index_mismatches
            lines: list[bytes] = []
            try:
                for i in range(index.entries):
                    e = index.entry(i)
                    if e.offset == base and i > 0:
                        break
                    found = self._first_batch_last_offset(log, e.position, shown)
                    if found != e.offset:
                        if self.json:
                            self.result.problems.append(
                                Problem(
                                    shown, "index_mismatch", f"index offset {e.offset}, log offset {found}"
                                )
                            )
                        else:
                            mismatches.setdefault(abs_path, []).append((e.offset, found))
                            self.result.problems.append(Problem(shown, "index_mismatch", ""))
                    if self.json:
                        self._emit(
                            {
                                "type": "index_entry",
                                "file": shown,
                                "offset": e.offset,
                                "position": e.position,
                                "log_offset": found,
                                "valid": found == e.offset,
                            }
                        )
                    elif not opts.verify_index_only:
                        lines.append(b"offset: %d position: %d\n" % (e.offset, e.position))
            except LogFormatError as exc:
                found = len(mismatches.pop(abs_path, []))
                raise LogFormatError(f"{exc} (reading stopped there; {found} mismatches before it)") from None
            finally:
                self._w(b"".join(lines))

    def _first_batch_last_offset(self, log: MappedFile, position: int, shown: str) -> int:
        """Last offset of the first batch at position, within max-message-size (as Kafka slices)."""
        if position < 0 or position > log.size:
            raise LogFormatError(
                f"index entry points at position {position}, past the end of the log ({log.size} bytes)"
            )
        end = min(log.size, position + self.opts.max_message_size)
        batch = read_batch_header(log.buf, position, end)
        if batch is None:
            raise LogFormatError(f"no complete batch in the log at indexed position {position}")
        return batch.last_offset

    def _sanity(self, index: OffsetIndex | TimeIndex, shown: str) -> None:
        try:
            index.sanity_check()
        except CorruptIndexError as exc:
            self.problem(shown, "index_sanity", str(exc))
            return
        if self.json:
            self._emit({"type": "index_summary", "file": shown, "sanity_check": "passed"})
        else:
            self._w(f"{shown} passed sanity check.\n".encode())

    # -- .timeindex ------------------------------------------------------------------------
    def dump_time_index(self, path: Path, shown: str) -> None:
        opts = self.opts
        base = _base_offset(path)
        tindex = TimeIndex(path.read_bytes(), base, path)
        ipath = path.absolute().parent / (path.name.split(".")[0] + ".index")
        oindex = OffsetIndex(ipath.read_bytes() if ipath.exists() else b"", base, ipath)
        with self._open_log_for_index(path) as log:
            if opts.index_sanity_check:
                self._sanity(tindex, shown)
                return
            abs_path = str(path.absolute())
            d = self.deferred
            prev_ts = -1
            lines: list[bytes] = []
            try:
                for i in range(tindex.entries):
                    e = tindex.entry(i)
                    if e.offset == base and i > 0:
                        break
                    position = oindex.lookup(e.offset).position
                    batch = self._find_batch(log, position, e.offset)
                    status = "ok"
                    log_ts = None
                    if batch is None:
                        d.time_not_found.setdefault(abs_path, []).append((e.offset, -1))
                        status = "offset_not_found"
                    elif batch.last_offset != e.offset:
                        d.time_not_found.setdefault(abs_path, []).append((e.offset, batch.last_offset))
                        status = "offset_not_found"
                    else:
                        log_ts = max((r.timestamp for r in batch.records()), default=-1)
                        log_ts = max(log_ts, -1)
                        if log_ts != e.timestamp:
                            d.time_mismatches.setdefault(abs_path, []).append((e.timestamp, log_ts))
                            status = "timestamp_mismatch"
                        if prev_ts >= e.timestamp:
                            d.time_out_of_order.setdefault(abs_path, []).append((e.timestamp, prev_ts))
                            status = "out_of_order"
                    if status != "ok":
                        self.result.problems.append(Problem(shown, status, ""))
                    if self.json:
                        self._emit(
                            {
                                "type": "time_index_entry",
                                "file": shown,
                                "timestamp": e.timestamp,
                                "offset": e.offset,
                                "log_timestamp": log_ts,
                                "status": status,
                            }
                        )
                    elif not opts.verify_index_only:
                        lines.append(b"timestamp: %d offset: %d\n" % (e.timestamp, e.offset))
                    prev_ts = e.timestamp
            except LogFormatError as exc:
                found = sum(
                    len(m.pop(abs_path, []))
                    for m in (d.time_not_found, d.time_mismatches, d.time_out_of_order)
                )
                raise LogFormatError(f"{exc} (reading stopped there; {found} problems before it)") from None
            finally:
                self._w(b"".join(lines))

    @staticmethod
    def _find_batch(log: MappedFile, position: int, offset: int) -> Batch | None:
        """First batch from position whose last offset >= offset (Kafka's batches.find)."""
        if position < 0 or position > log.size:
            raise LogFormatError(f"offset index points at position {position}, past the end of the log")
        for b in iter_batches(log.buf, position, log.size):
            if b.last_offset >= offset:
                return b
        return None
