"""DumpLogSegments' main loop: each file dumped by its suffix, then the deferred reports.

`LogDumper` combines the dumps of every kind of file (its bases, one module each) and dispatches on
the file name as Kafka's main does: `.log` and KRaft `.checkpoint` to `dump_log` (Kafka's dumpLog:
the file's header line, its batches as text, in workers or as JSON, then the trailing bytes),
`.index`, `.timeindex`, `.snapshot`, `.txnindex`, and names without a dot.  Where Kafka's tool
crashes (a missing file, a bad name, damage) the file ends with one line saying what is wrong, and
the next file is dumped.  A file swapped under us while read is reported (exit 3).
"""

from __future__ import annotations

import errno
from pathlib import Path
from typing import BinaryIO

from kafkatool.log.errors import CorruptIndexError, CorruptRecordError, LogFormatError
from kafkatool.log.files import MappedFile
from kafkatool.log.records import BatchScan
from kafkatool.ops.dumplog.base import BadFileName, _base_offset
from kafkatool.ops.dumplog.checkpoints import CheckpointDumps
from kafkatool.ops.dumplog.indexes import IndexDumps
from kafkatool.ops.dumplog.log_json import LogJson
from kafkatool.ops.dumplog.options import INT32_MAX, DumpOptions, DumpResult
from kafkatool.ops.dumplog.parallel import ParallelText, use_workers
from kafkatool.ops.dumplog.producer_state import ProducerStateDumps
from kafkatool.ops.safety import file_identity, identity_changed


def java_file_str(arg: str) -> str:
    """How java.io.File prints a path given on the command line (duplicate/trailing slashes go)."""
    if not arg:
        return arg
    lead = "/" if arg.startswith("/") else ""
    parts = [p for p in arg.split("/") if p]
    return lead + "/".join(parts)


class LogDumper(ParallelText, LogJson, IndexDumps, ProducerStateDumps, CheckpointDumps):
    """Dumps files to `out` (stdout bytes) and `err` (stderr bytes) per DumpOptions."""

    # -- dispatch ------------------------------------------------------------------------------
    def dump(self, arg: str) -> None:
        shown = java_file_str(arg)
        path = Path(arg)
        self.result.files += 1
        if not self.json:
            self._w(f"Dumping {shown}\n".encode("utf-8", "replace"))
        name = path.name
        dot = name.rfind(".")
        suffix = name[dot:] if dot >= 0 else ""
        try:
            if not path.exists():
                raise FileNotFoundError(f"{shown}: no such file")
            if path.is_dir():
                raise IsADirectoryError(f"{shown}: is a directory (give segment files, e.g. {shown}/*.log)")
            if not path.is_file():  # a FIFO would block the open() forever, a device would never end
                raise OSError(errno.EINVAL, "not a regular file")
            before = file_identity(path)
            if suffix in (".log", ".checkpoint"):
                self.dump_log(path, shown)
            elif suffix == ".index":
                self.dump_index(path, shown)
            elif suffix == ".timeindex":
                self.dump_time_index(path, shown)
            elif suffix == ".snapshot":
                self.dump_producer_snapshot(path, shown)
            elif suffix == ".txnindex":
                self.dump_txn_index(path, shown)
            elif dot < 0 and not (self.text.ignores_dotless_files and not self.json):
                self.dump_dotless(path, shown)
            elif dot < 0:
                self.err.write(f"Ignoring unknown file {shown}\n".encode("utf-8", "replace"))
            else:
                if self.json:
                    self._emit({"type": "ignored", "file": shown, "reason": "unknown file suffix"})
                else:
                    self.err.write(f"Ignoring unknown file {shown}\n".encode("utf-8", "replace"))
            # no lock is taken: a broker or compact may swap it
            if identity_changed(before, file_identity(path)):
                self.problem(
                    shown,
                    "changed",
                    f"{shown}: changed while being read (renamed, replaced or truncated by another process); "
                    "run again",
                )
        except BadFileName as exc:
            self.problem(shown, "input", f"{shown}: {exc}")
        except (CorruptRecordError, CorruptIndexError, LogFormatError) as exc:
            self.problem(shown, "corrupt", f"{shown}: {exc}")
        except BrokenPipeError:
            raise
        except OSError as exc:
            self.problem(shown, "io", f"{shown}: {exc.strerror}" if exc.strerror else f"{exc}")
        finally:
            self._report_newer(shown)

    # -- .log / KRaft .checkpoint --------------------------------------------------------------
    def dump_log(self, path: Path, shown: str) -> None:
        opts = self.opts
        name = path.name
        header = None
        if name.endswith(".log"):
            header = f"Log starting offset: {_base_offset(path)}"
        elif name == "bootstrap.checkpoint":
            header = "KRaft bootstrap snapshot"
        else:
            stem = name[: -len(".checkpoint")]
            off, _, epoch = stem.partition("-")
            if not (off.isascii() and off.isdigit() and epoch.isascii() and epoch.isdigit()):
                raise LogFormatError(f"not a KRaft snapshot name (<offset>-<epoch>.checkpoint): {name}")
            header = f"Snapshot end offset: {int(off)}, epoch: {int(epoch)}"
        if self.json:
            self._emit({"type": "file", "file": shown, "header": header})
        else:
            self._w(header.encode() + b"\n")
        with MappedFile(path) as mf:
            end = min(mf.size, max(opts.max_bytes, 0))
            scan = BatchScan(mf.buf, 0, end, release=mf.release)
            if self.json:
                self._dump_batches_json(scan, shown)
            elif use_workers(opts, end):
                scan = self._dump_text_parallel(mf, end, path, shown)
            else:
                self._dump_batches_text(scan, path, shown)
            self.result.bytes_read += scan.valid_bytes
            trailing = end - scan.valid_bytes
            if scan.error is not None:
                self.problem(
                    shown,
                    "corrupt",
                    f"{shown}: corrupt batch at position {scan.valid_bytes}: {scan.error}; "
                    f"{mf.size - scan.valid_bytes} bytes from there on were not read",
                )
            elif trailing > 0 and opts.max_bytes == INT32_MAX:
                if self.json:
                    self._emit(
                        {
                            "type": "trailing_bytes",
                            "file": shown,
                            "position": scan.valid_bytes,
                            "bytes": trailing,
                        }
                    )
                else:
                    self._w(f"Found {trailing} invalid bytes at the end of {name}\n".encode())


def dump_files(paths: list[str], opts: DumpOptions, out: BinaryIO, err: BinaryIO) -> DumpResult:
    """Dump every file in order, then the deferred reports; returns what was found."""
    dumper = LogDumper(opts, out, err)
    for p in paths:
        dumper.dump(p)
    return dumper.finish()
