"""`dump-log`: Kafka's DumpLogSegments, byte for byte, plus JSON/NDJSON output.

The text renderer reproduces Kafka 3.3's tool, quirks included (the stray `}` after legacy record
CRCs, ` payload:` without the `|` when metadata is skipped and the key is null, newest-first
mismatch lists).  Where Kafka's tool crashes (a file name without a dot, a corrupt size field, an
index pointing past the log) we print everything Kafka printed up to that point and then one line
that says what is wrong, instead of a stack trace.

The module writes to binary streams handed to it; it never prints.

Size: kafka-dump-log.sh's whole output in one place — batch and record lines of every format, index,
time-index, txn-index, snapshot and checkpoint dumps, the JSON forms and Kafka's crash policy — because every
mode shares the same line writers and the same stop-where-Kafka-stops rules; the payload decoders live in
`log/decoders`. The index/snapshot dumps are the next piece to move out.
"""

from __future__ import annotations

import base64
import errno
import functools
import json
import os
import re
import struct
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO, cast

from kafkatool.jvm.text import java_utf8_bytes
from kafkatool.log.checkpoint import (
    CheckpointError,
    parse_checkpoint,
)
from kafkatool.log.codecs import Codec
from kafkatool.log.core import speedups
from kafkatool.log.errors import CorruptIndexError, CorruptRecordError, CorruptSnapshotError, LogFormatError
from kafkatool.log.files import LEADER_EPOCH_CHECKPOINT, TOPIC_CHECKPOINTS, MappedFile
from kafkatool.log.index import OffsetIndex, TimeIndex, read_txn_index
from kafkatool.log.record import TIMESTAMP_TYPE_NAMES, Record
from kafkatool.log.records import Batch, BatchScan, iter_batches, read_batch_header
from kafkatool.log.snapshot import read_producer_snapshot
from kafkatool.ops.dumplog_text import DumpText
from kafkatool.ops.safety import file_identity, identity_changed
from kafkatool.release import Release, parse_release, resolve, text_release

INT32_MAX = 2**31 - 1
DEFAULT_MAX_MESSAGE_SIZE = 5 * 1024 * 1024
_CONTROL_KEY = struct.Struct(">hh")


# ---------------------------------------------------------------------------------------------
# options and value decoders
# ---------------------------------------------------------------------------------------------


_utf8 = java_utf8_bytes


def _decode_int(b: bytes) -> bytes:
    if len(b) != 4:
        raise LogFormatError(f"Size of data received by IntegerDeserializer is not 4 (got {len(b)})")
    return str(struct.unpack(">i", b)[0]).encode()


def _decode_long(b: bytes) -> bytes:
    if len(b) != 8:
        raise LogFormatError(f"Size of data received by LongDeserializer is not 8 (got {len(b)})")
    return str(struct.unpack(">q", b)[0]).encode()


def _decode_json(b: bytes) -> bytes:
    try:
        return json.dumps(json.loads(b), separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    except (ValueError, UnicodeDecodeError):
        return _utf8(b)


VALUE_DECODERS: dict[str, Callable[[bytes], bytes]] = {
    "string": _utf8,
    "hex": lambda b: b.hex().encode(),
    "base64": lambda b: base64.b64encode(b),
    "json": _decode_json,
    "integer": _decode_int,
    "long": _decode_long,
    # Kafka's DefaultDecoder returns the byte[] itself, which Scala prints as `[B@hash`; we print hex.
    "bytes": lambda b: b.hex().encode(),
}
_DECODER_CLASS_ALIASES = {
    "kafka.serializer.stringdecoder": "string",
    "org.apache.kafka.tools.api.stringdecoder": "string",
    "kafka.serializer.defaultdecoder": "bytes",
    "org.apache.kafka.tools.api.defaultdecoder": "bytes",
    "kafka.serializer.integerdecoder": "integer",
    "org.apache.kafka.tools.api.integerdecoder": "integer",
    "kafka.serializer.longdecoder": "long",
    "org.apache.kafka.tools.api.longdecoder": "long",
}


def resolve_decoder(name: str) -> str:
    """Map a short decoder name or one of Kafka's decoder class names to our decoder key."""
    key = name.strip().lower()
    key = _DECODER_CLASS_ALIASES.get(key, key)
    if key not in VALUE_DECODERS:
        raise ValueError(
            f"unknown decoder {name!r}: use one of {', '.join(sorted(VALUE_DECODERS))} or a Kafka decoder class name"
        )
    return key


@dataclass
class DumpOptions:
    """Kafka's DumpLogSegments options (any decoder implies print, print implies deep)."""

    print_data_log: bool = False
    deep_iteration: bool = False
    verify_index_only: bool = False
    index_sanity_check: bool = False
    max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE
    max_bytes: int = INT32_MAX
    skip_record_metadata: bool = False
    # "offsets" | "transaction" | "cluster-metadata" | "remote-log-metadata" | "share-group-state"
    payload_decoder: str | None = None
    key_decoder: str = "string"
    value_decoder: str = "string"
    output: str = "text"  # text | json | ndjson
    per_record: bool = False  # JSON: one object per record instead of per batch
    jobs: int = 0  # processes for deep/print text on big logs (0: one per CPU; 1: this process only)
    #: whose tool text to print (3.3 or 4.0, or a string naming one; see kafkatool.release);
    #: None: the process-wide choice.  A Release after construction.
    kafka_release: Release | str | None = None

    def __post_init__(self) -> None:
        if isinstance(self.kafka_release, str):
            self.kafka_release = resolve(self.kafka_release)[0]
        elif self.kafka_release is None:
            self.kafka_release = text_release()
        if self.payload_decoder:
            self.print_data_log = True
        if self.print_data_log or self.verify_index_only or self.index_sanity_check:
            pass
        if self.print_data_log:
            self.deep_iteration = True
        self.key_decoder = resolve_decoder(self.key_decoder)
        self.value_decoder = resolve_decoder(self.value_decoder)
        if self.key_decoder != "string" or self.value_decoder != "string":
            self.print_data_log = True
            self.deep_iteration = True

    @property
    def release(self) -> Release:
        """The Kafka release whose text is printed (`kafka_release` once resolved)."""
        rel = self.kafka_release
        return rel if isinstance(rel, Release) else parse_release(rel) if rel else text_release()

    @property
    def text(self) -> DumpText:
        """The text choices of the chosen release's kafka-dump-log (`dumplog_text`)."""
        return DumpText.of(self.release)

    @property
    def kafka4(self) -> bool:
        """Print Kafka 4.x's text (else 3.3's)."""
        return self.release.at_least("4.0")


@dataclass
class Problem:
    """Something wrong found while dumping; `kind` is stable for JSON consumers."""

    file: str
    kind: str
    message: str
    fatal: bool = False  # reading stopped here (Kafka's tool would have crashed)


@dataclass
class DumpResult:
    problems: list[Problem] = field(default_factory=list)
    files: int = 0
    batches: int = 0
    records: int = 0
    bytes_read: int = 0

    @property
    def ok(self) -> bool:
        return not self.problems

    @property
    def exit_code(self) -> int:
        """0: Kafka's tool would have succeeded; 1: a file was corrupt past reading; 2: bad input;
        3: a file changed while it was read (another process renamed, replaced or truncated it)."""
        kinds = {p.kind for p in self.problems if p.fatal}
        if "changed" in kinds:
            return 3
        if "io" in kinds or "input" in kinds:
            return 2
        return 1 if kinds else 0


# ---------------------------------------------------------------------------------------------
# record payload parsers (Kafka's MessageParser)
# ---------------------------------------------------------------------------------------------

Parser = Callable[[Record], tuple[bytes | None, bytes | None]]
#: Called with (offset, reason) for each record newer than the decoders' release knows that Kafka's
#: tool prints and goes on from (`ErrorText.newer`).
NewerSink = Callable[[int, str], None]


#: A payload formatter over (offset, key, value), as chosen for the options.
KeyedFormatter = Callable[[int, bytes | None, bytes | None], tuple[str | None, str | None]]
#: A payload formatter over (offset, value), for topics whose records have no key.
ValueFormatter = Callable[[int, bytes | None], str]


def _keyed_parser(
    load: Callable[[DumpOptions], KeyedFormatter], missing_key: str | None
) -> Callable[[DumpOptions, NewerSink], Parser]:
    """A parser over a keyed internal topic's formatter (`load` imports it when used).  `missing_key`
    names the decoder in Kafka's error for a record without a key; None where the formatter says it."""

    def make(opts: DumpOptions, newer: NewerSink) -> Parser:
        fmt = load(opts)
        # 4.1 on: one CoordinatorRecordMessageParser for the three coordinators' topics
        missing = "the specified" if opts.text.coordinator_parser else missing_key

        def parse(r: Record) -> tuple[bytes | None, bytes | None]:
            if r.key is None and missing is not None:
                raise LogFormatError(
                    f"Failed to decode message at offset {r.offset} using {missing} decoder "
                    "(message had a missing key)"
                )
            k, v = fmt(r.offset, r.key, r.value)
            _check(r.offset, newer, k, v)
            return _enc(k), _enc(v)

        return parse

    return make


def _value_parser(load: Callable[[DumpOptions], ValueFormatter]) -> Callable[[DumpOptions, NewerSink], Parser]:
    """A parser over the formatter of a topic whose records carry no key (Kafka prints none)."""

    def make(opts: DumpOptions, newer: NewerSink) -> Parser:
        fmt = load(opts)

        def parse(r: Record) -> tuple[bytes | None, bytes | None]:
            v = fmt(r.offset, r.value)
            _check(r.offset, newer, v)
            return None, _enc(v)

        return parse

    return make


def _offsets(opts: DumpOptions) -> KeyedFormatter:
    from kafkatool.log.decoders.offsets import format_offsets_record

    return functools.partial(format_offsets_record, kafka4=opts.kafka4, rel=opts.release)


def _transactions(opts: DumpOptions) -> KeyedFormatter:
    from kafkatool.log.decoders.transactions import format_transaction_record

    return functools.partial(format_transaction_record, kafka4=opts.kafka4, rel=opts.release)


def _cluster_metadata(opts: DumpOptions) -> ValueFormatter:
    from kafkatool.log.decoders.metadata import format_metadata_record

    return functools.partial(format_metadata_record, rel=opts.release)


def _remote_log_metadata(opts: DumpOptions) -> ValueFormatter:  # Kafka 4.0's text on every release
    from kafkatool.log.decoders.remote_log_metadata import format_remote_log_metadata_record

    return format_remote_log_metadata_record


def _share_group_state(opts: DumpOptions) -> KeyedFormatter:  # Kafka 4.0's text on 3.3 (which has no decoder)
    from kafkatool.log.decoders.share_group_state import format_share_group_state_record

    rel = opts.release if opts.kafka4 else None
    return cast(KeyedFormatter, functools.partial(format_share_group_state_record, rel=rel))


#: `--*-decoder` name -> parser factory (DumpOptions.payload_decoder takes these names).
PAYLOAD_PARSERS: dict[str, Callable[[DumpOptions, NewerSink], Parser]] = {
    "offsets": _keyed_parser(_offsets, "offset topic"),
    "transaction": _keyed_parser(_transactions, None),
    "cluster-metadata": _value_parser(_cluster_metadata),
    "remote-log-metadata": _value_parser(_remote_log_metadata),
    "share-group-state": _keyed_parser(_share_group_state, "share group state topic"),
}


def make_parser(opts: DumpOptions, newer: NewerSink | None = None) -> Parser:
    """The record → (key text, payload text) function for the chosen decoders, as UTF-8 bytes.

    Records newer than the decoders' Kafka release knows, which Kafka's tool prints a line for and goes
    on, are told to `newer` with the reason.
    """
    if opts.payload_decoder is not None:
        return PAYLOAD_PARSERS[opts.payload_decoder](opts, newer or (lambda _offset, _reason: None))
    kdec = VALUE_DECODERS[opts.key_decoder]
    vdec = VALUE_DECODERS[opts.value_decoder]

    def parse_plain(r: Record) -> tuple[bytes | None, bytes | None]:
        k = r.key
        v = r.value
        return (None if k is None else kdec(k)), (None if v is None else vdec(v))

    return parse_plain


def _enc(s: str | None) -> bytes | None:
    return None if s is None else s.encode("utf-8", "replace")


def _check(offset: int, newer: NewerSink, *texts: str | None) -> None:
    """Kafka's parser threw here (its tool dies): stop the file with one line saying why.  A record
    Kafka prints and goes on from that is newer than the decoders' release knows goes to `newer`."""
    from kafkatool.log.decoders import ErrorText

    for t in texts:
        if isinstance(t, ErrorText):
            if t.fatal:
                if t.newer:
                    raise LogFormatError(f"record at offset {offset}: {t.newer}: {t}")
                raise LogFormatError(f"record at offset {offset} cannot be decoded: {t}")
            if t.newer:
                newer(offset, t.newer)


def control_text(r: Record, rel: Release | None = None) -> bytes:
    """The text Kafka (release `rel`, default the chosen one) prints after a control record's metadata."""
    from kafkatool.log.decoders.metadata import format_control_record

    key = r.key or b""
    if len(key) < 4:
        return b" controlType: UNKNOWN(-1)"
    _version, ctype = _CONTROL_KEY.unpack_from(key, 0)
    text = format_control_record(ctype, key, r.value, rel)
    _check(r.offset, lambda _o, _w: None, text)
    return text.encode("utf-8", "replace")


# ---------------------------------------------------------------------------------------------
# the dumper
# ---------------------------------------------------------------------------------------------


def java_file_str(arg: str) -> str:
    """How java.io.File prints a path given on the command line (duplicate/trailing slashes go)."""
    if not arg:
        return arg
    lead = "/" if arg.startswith("/") else ""
    parts = [p for p in arg.split("/") if p]
    return lead + "/".join(parts)


PARALLEL_MIN_BYTES = 32 * 1024 * 1024  # below this, starting workers costs more than it saves
PARALLEL_CHUNK_BYTES = 4 * 1024 * 1024
# the compiled shallow walk hands back this much text, or stops after this much input (so the mapped
# pages are released as the scan goes), whichever comes first
SHALLOW_OUT_BYTES = 256 * 1024
SHALLOW_IN_BYTES = 16 * 1024 * 1024
PARALLEL_CHUNK_BYTES_COMPRESSED = 512 * 1024


def _jobs(requested: int) -> int:
    """Worker processes for deep/print text: --jobs, or one per CPU (at most 8) when 0; never more
    than the CPUs this process may run on (more workers only cost memory and start-up)."""
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return max(1, min(requested, cpus) if requested > 0 else min(8, cpus))


def _render_chunk(task: tuple[str, int, int, DumpOptions]) -> tuple:
    """Worker: the text of the batches in [start, end) of a log, as the one-process dumper writes it."""
    import io

    path, start, end, opts = task
    out = io.BytesIO()
    dumper = LogDumper(opts, out, io.BytesIO())
    error = None
    with MappedFile(path) as mf:
        scan = BatchScan(mf.buf, start, end, release=mf.release)
        first = last = -1
        try:
            first, last = dumper._dump_batches_text(scan, Path(path), path)
        except CorruptRecordError as exc:
            error = (str(exc), exc.position)
    nc = next(iter(dumper.deferred.non_consecutive.values()), [])
    return out.getvalue(), first, last, nc, dumper.result.batches, dumper.result.records, error


class _Stderr:
    """Deferred stderr reports, printed after all files as DumpLogSegments does."""

    def __init__(self, java: bool = False) -> None:
        self.java = java  # Kafka 4.3's Java tool: TreeMaps where the Scala tool kept prepended Lists
        self.index_mismatches: dict[str, list[tuple[int, int]]] = {}
        self.time_mismatches: dict[str, list[tuple[int, int]]] = {}
        self.time_out_of_order: dict[str, list[tuple[int, int]]] = {}
        self.time_not_found: dict[str, list[tuple[int, int]]] = {}
        self.non_consecutive: dict[str, list[tuple[int, int]]] = {}

    def lines(self) -> Iterable[str]:
        for f, pairs in self.index_mismatches.items():
            yield f"Mismatches in :{f}"
            for a, b in (sorted(dict(pairs).items(), reverse=True) if self.java else reversed(pairs)):
                yield f"  Index offset: {a}, log offset: {b}"
        for f, pairs in self.time_mismatches.items():
            yield f"Found timestamp mismatch in :{f}"
            for a, b in pairs:
                yield f"  Index timestamp: {a}, log timestamp: {b}"
        for f, pairs in self.time_out_of_order.items():
            yield f"Found out of order timestamp in :{f}"
            for a, b in pairs:
                yield f"  Index timestamp: {a}, Previously indexed timestamp: {b}"
        for f, pairs in self.time_not_found.items():
            yield f"The following indexed offsets are not found in :{f}" if self.java else (
                "The following indexed offsets are not found in the log."
            )
            for a, b in pairs:
                yield f"Indexed offset: {a}, found log offset: {b}"
        for f, pairs in self.non_consecutive.items():
            yield f"Non-consecutive offsets in {f}"
            for a, b in (sorted(dict(pairs).items()) if self.java else reversed(pairs)):
                yield f"  {a} is followed by {b}"


class LogDumper:
    """Dumps files to `out` (stdout bytes) and `err` (stderr bytes) per DumpOptions."""

    def __init__(self, opts: DumpOptions, out: BinaryIO, err: BinaryIO) -> None:
        self.opts = opts
        self.out = out
        self.err = err
        self.result = DumpResult()
        self.text = opts.text
        self.deferred = _Stderr(self.text.java_tool)
        self._newer: list[tuple[int, str]] = []  # (offset, reason): records of this file newer than known
        self.parser = make_parser(opts, lambda offset, reason: self._newer.append((offset, reason)))
        self._plain_strings = (
            opts.payload_decoder is None and opts.key_decoder == "string" and opts.value_decoder == "string"
        )
        self.json = opts.output in ("json", "ndjson")
        self._json_first = True
        self._line_open = False  # stdout ends with the start of a batch line Kafka's tool died on

    # -- output helpers ------------------------------------------------------------------------
    def _w(self, data: bytes) -> None:
        if self._line_open:  # Kafka's tool would have died after the line's start; we go on below it
            self._line_open = False
            data = b"\n" + data
        self.out.write(data)

    def _emit(self, obj: dict) -> None:
        data = json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
        if self.opts.output == "json":
            self._w((b"[\n" if self._json_first else b",\n") + data)
        else:
            self._w(data + b"\n")
        self._json_first = False

    def problem(self, file: str, kind: str, message: str, *, to_stderr: bool = True, fatal: bool = True) -> None:
        if fatal and self._newer and kind != "newer_record":
            message += f"; before that, {self._newer_summary()}"  # still one line for the file
        self.result.problems.append(Problem(file, kind, message, fatal))
        if self.json:
            self._emit({"type": "problem", "file": file, "kind": kind, "message": message})
        elif to_stderr:
            # our own errors carry the tool's name, like every other command's; Kafka's own
            # messages (a corrupt snapshot) are printed bare, as Kafka prints them
            prefix = "kafkatool: " if fatal else ""
            self.err.write(f"{prefix}{message}\n".encode("utf-8", "replace"))

    def finish(self) -> DumpResult:
        if self.json:
            if self.opts.output == "json":
                self._w(b"[]\n" if self._json_first else b"\n]\n")
            return self.result
        for line in self.deferred.lines():
            self.err.write(line.encode("utf-8", "replace") + b"\n")
        return self.result

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
            if identity_changed(before, file_identity(path)):  # no lock is taken: a broker or compact may swap it
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

    def _newer_summary(self) -> str:
        """The records of this file newer than the decoders know, in a few words (and forget them)."""
        (offset, reason), n = self._newer[0], len(self._newer) - 1
        self._newer.clear()
        more = f" (and {n} more record{'s' if n > 1 else ''})" if n else ""
        return f"offset {offset}: {reason}{more}"

    def _report_newer(self, shown: str) -> None:
        """One line for the records of a file that are newer than the decoders know (exit 1); Kafka's
        tool printed them and went on, and so did we."""
        if self._newer:
            self.problem(shown, "newer_record", f"{shown}: {self._newer_summary()}")

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
            elif (
                opts.deep_iteration
                and not opts.print_data_log  # printed values would all travel through a pipe: slower
                # the compiled core's record lines outrun the pipe from workers: one process unless asked
                and (opts.jobs > 1 or speedups is None)
                and _jobs(opts.jobs) > 1
                and end >= PARALLEL_MIN_BYTES
            ):
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
                        {"type": "trailing_bytes", "file": shown, "position": scan.valid_bytes, "bytes": trailing}
                    )
                else:
                    self._w(f"Found {trailing} invalid bytes at the end of {name}\n".encode())

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
                w(b"".join(pending) + lines if pending else lines)
                pending.clear()
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
            lines, pos, count = core.shallow_lines(scan.buf, pos, scan.end, SHALLOW_OUT_BYTES, SHALLOW_IN_BYTES)
            if count == 0:
                return n
            self._w(lines)
            n += count
            scan.start = scan.valid_bytes = pos
            if scan.release is not None:
                scan.release(pos)

    def _dump_text_parallel(self, mf: MappedFile, end: int, path: Path, shown: str) -> BatchScan:
        """Deep/print text on several cores: chunks of whole batches are rendered by worker
        processes and written here in file order, so the output is byte-identical to one process."""
        import multiprocessing as mp
        from collections import deque

        scan = BatchScan(mf.buf, 0, end, release=mf.release)
        cuts = [0]
        chunk = PARALLEL_CHUNK_BYTES
        for batch in scan:  # header walk only: finds the chunk boundaries, the valid end and any error
            if batch.codec and chunk == PARALLEL_CHUNK_BYTES:
                chunk = PARALLEL_CHUNK_BYTES_COMPRESSED  # compressed input expands: keep results small
            if batch.end - cuts[-1] >= chunk:
                cuts.append(batch.end)
        if cuts[-1] != scan.valid_bytes:
            cuts.append(scan.valid_bytes)
        tasks = [(str(path), a, b, self.opts) for a, b in zip(cuts, cuts[1:], strict=False)]
        jobs = _jobs(self.opts.jobs)
        abs_path = str(path.absolute())
        stitched: list[tuple[int, int]] = []
        prev_last = -1
        with mp.get_context("fork").Pool(jobs) as pool:
            it = iter(tasks)
            inflight: deque = deque()
            for t in [next(it, None) for _ in range(jobs + 1)]:
                if t is not None:
                    inflight.append(pool.apply_async(_render_chunk, (t,)))
            while inflight:
                out, first, last, non_consecutive, nbatches, nrecords, error = inflight.popleft().get()
                t = next(it, None)
                if t is not None:
                    inflight.append(pool.apply_async(_render_chunk, (t,)))
                self._w(out)
                self._line_open = error is not None and out[-1:] not in (b"", b"\n")
                self.result.batches += nbatches
                self.result.records += nrecords
                if first != -1:
                    if prev_last != -1 and first != prev_last + 1:
                        stitched.append((prev_last, first))
                    if prev_last != -1 and non_consecutive[:1] == [(-1, first)]:
                        non_consecutive = non_consecutive[1:]  # the chunk's own start, not the file's
                    stitched.extend(non_consecutive)
                    prev_last = last
                if error is not None:
                    if stitched:
                        self.deferred.non_consecutive.setdefault(abs_path, []).extend(stitched)
                    raise CorruptRecordError(error[0], error[1])
        if stitched:
            self.deferred.non_consecutive.setdefault(abs_path, []).extend(stitched)
        return scan

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
            meta = b"| offset: %d " + ts_name + b": %d keySize: %d valueSize: %d sequence: %d headerKeys: [%b]"
        else:
            meta = (b"| offset: %d " + ts_name + b": %d keySize: %d valueSize: %d isValid: %s crc: %d"
                    + self.text.legacy_crc_brace)
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
                    % (r[0], r[1], len(k), len(v), r[5], hk, k if k.isascii() else jb(k), v if v.isascii() else jb(v))
                )
            else:
                pend(f_none % (r[0], r[1], len(k), len(v), r[5], hk))

    def _dump_batches_json(self, scan: BatchScan, shown: str) -> None:
        opts = self.opts
        for batch in scan:
            self.result.batches += 1
            obj = batch_json(batch)
            obj["file"] = shown
            if opts.deep_iteration:
                recs = batch.records()
                self.result.records += len(recs)
                rec_objs = [self._record_json(batch, r) for r in recs]
                if opts.per_record:
                    for ro in rec_objs:
                        ro["file"] = shown
                        ro["batch_base_offset"] = batch.base_offset
                        ro["batch_position"] = batch.position
                        ro["timestamp_type"] = obj["timestamp_type"]
                        ro["type"] = "record"
                        self._emit(ro)
                    continue
                obj["records"] = rec_objs
            if not opts.per_record or not opts.deep_iteration:
                self._emit(obj)

    def _record_json(self, batch: Batch, r: Record) -> dict:
        obj: dict = {
            "offset": r.offset,
            "timestamp": r.timestamp,
            "key_size": r.key_size,
            "value_size": r.value_size,
        }
        if batch.magic >= 2:
            obj["sequence"] = r.sequence
        else:
            obj["crc"] = r.crc
            obj["valid"] = r.valid
        _put_bytes(obj, "key", r.key)
        _put_bytes(obj, "value", r.value)
        if batch.magic >= 2:
            hs = []
            for hk, hv in r.headers:
                h: dict = {"key": hk}
                _put_bytes(h, "value", hv)
                hs.append(h)
            obj["headers"] = hs
        if batch.is_control:
            obj["control"] = control_json(r)
        elif self.opts.payload_decoder:
            kt, vt = self.parser(r)
            obj["key_decoded"] = None if kt is None else kt.decode("utf-8", "replace")
            obj["value_decoded"] = None if vt is None else vt.decode("utf-8", "replace")
        return obj

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
                                Problem(shown, "index_mismatch", f"index offset {e.offset}, log offset {found}")
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
            raise LogFormatError(f"index entry points at position {position}, past the end of the log ({log.size} bytes)")
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
                found = sum(len(m.pop(abs_path, [])) for m in (d.time_not_found, d.time_mismatches, d.time_out_of_order))
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

    # -- .snapshot / .txnindex -------------------------------------------------------------
    def dump_producer_snapshot(self, path: Path, shown: str) -> None:
        kafka4 = self.opts.kafka4
        try:
            entries = read_producer_snapshot(path.read_bytes())
        except CorruptSnapshotError as exc:
            message = str(exc)
            if kafka4 and message.startswith("Snapshot contained an unknown file version"):
                # 4.0 checks the version inside the block that wraps every failure in this prefix
                message = "Snapshot failed schema validation: " + message
            self.problem(shown, "corrupt_snapshot", message, fatal=False)
            return
        # Kafka 3.3 prints a Scala Option, 4.0 a java.util.OptionalLong
        some, none = ("OptionalLong[%d]", "OptionalLong.empty") if kafka4 else ("Some(%d)", "None")
        lines = []
        for e in entries:
            if self.json:
                self._emit(
                    {
                        "type": "producer_snapshot_entry",
                        "file": shown,
                        "producer_id": e.producer_id,
                        "producer_epoch": e.producer_epoch,
                        "coordinator_epoch": e.coordinator_epoch,
                        "current_txn_first_offset": (
                            e.current_txn_first_offset if e.current_txn_first_offset >= 0 else None
                        ),
                        "last_timestamp": e.timestamp,
                        "first_sequence": e.first_sequence if e.has_batch else None,
                        "last_sequence": e.last_sequence if e.has_batch else None,
                        "last_offset": e.last_offset if e.has_batch else None,
                        "offset_delta": e.offset_delta if e.has_batch else None,
                    }
                )
                continue
            txn = some % e.current_txn_first_offset if e.current_txn_first_offset >= 0 else none
            line = (
                f"producerId: {e.producer_id} producerEpoch: {e.producer_epoch} coordinatorEpoch: "
                f"{e.coordinator_epoch} currentTxnFirstOffset: {txn} lastTimestamp: {e.timestamp}"
            )
            if e.has_batch or self.text.snapshot_trailing_space:
                line += " "
            if e.has_batch:
                line += (
                    f"firstSequence: {e.first_sequence} lastSequence: {e.last_sequence} lastOffset: "
                    f"{e.last_offset} offsetDelta: {e.offset_delta} timestamp: {e.timestamp}"
                )
            lines.append(line + "\n")
        self._w("".join(lines).encode())

    def dump_txn_index(self, path: Path, shown: str) -> None:
        data = path.read_bytes()
        whole = len(data) - len(data) % 34
        entries = read_txn_index(data[:whole])
        if self.json:
            for e in entries:
                self._emit(
                    {
                        "type": "txn_index_entry",
                        "file": shown,
                        "version": e.version,
                        "producer_id": e.producer_id,
                        "first_offset": e.first_offset,
                        "last_offset": e.last_offset,
                        "last_stable_offset": e.last_stable_offset,
                    }
                )
            if whole != len(data):
                self.problem(
                    shown, "truncated", f"{shown}: {len(data) - whole} trailing bytes are not a whole entry", fatal=False
                )
            return
        # Kafka reads whole entries only and says nothing about a partial tail; neither do we here.
        self._w(
            "".join(
                f"version: {0 if self.text.txn_index_message_version else e.version} producerId: {e.producer_id} "
                f"firstOffset: {e.first_offset} "
                f"lastOffset: {e.last_offset} lastStableOffset: {e.last_stable_offset}\n"
                for e in entries
            ).encode()
        )

    # -- files Kafka's tool cannot dump ----------------------------------------------------
    def dump_dotless(self, path: Path, shown: str) -> None:
        """Checkpoint files (Kafka's tool crashes on names without a dot): dump their entries."""
        name = path.name
        text = path.read_text("utf-8", errors="replace")
        if name in TOPIC_CHECKPOINTS or name == LEADER_EPOCH_CHECKPOINT:
            try:
                cp = parse_checkpoint(text, str(path))
            except CheckpointError as exc:
                self.problem(shown, "corrupt_checkpoint", str(exc))
                return
            fields: tuple[str, ...] = (
                ("epoch", "startOffset") if name == LEADER_EPOCH_CHECKPOINT else ("topic", "partition", "offset")
            )
            if self.json:
                for e in cp.entries:
                    self._emit({"type": "checkpoint_entry", "file": shown, **dict(zip(fields, _typed(e), strict=False))})
                return
            lines = [f"Checkpoint version: {cp.version} entries: {len(cp.entries)}\n"]
            lines += [" ".join(f"{k}: {v}" for k, v in zip(fields, e, strict=False)) + "\n" for e in cp.entries]
            self._w("".join(lines).encode())
            return
        if name == "quorum-state":
            try:
                state = json.loads(text)
            except ValueError as exc:
                self.problem(shown, "corrupt", f"{shown}: not valid JSON: {exc}")
                return
            if self.json:
                self._emit({"type": "quorum_state", "file": shown, "state": state})
            else:
                self._w(("quorum-state: " + json.dumps(state, separators=(",", ":")) + "\n").encode())
            return
        if self.json:
            self._emit({"type": "ignored", "file": shown, "reason": "unknown file"})
        else:
            self.err.write(f"Ignoring unknown file {shown}\n".encode("utf-8", "replace"))


_DECIMAL = re.compile(r"-?[0-9]+")


def _typed(fields: tuple[str, ...]) -> list[object]:
    return [int(f) if _DECIMAL.fullmatch(f) else f for f in fields]


class BadFileName(LogFormatError):
    """A segment/index file whose name does not encode its base offset (an input error)."""


def _base_offset(path: Path) -> int:
    stem = path.name.split(".")[0]
    if not (stem.isascii() and stem.isdigit()):  # "²".isdigit() is True, int("²") raises
        raise BadFileName(
            f"the file name must start with the segment's base offset (e.g. 00000000000000000000{path.suffix})"
        )
    return int(stem)


def _put_bytes(obj: dict, name: str, b: bytes | None) -> None:
    """JSON bytes: UTF-8 text when valid, else base64, with the encoding named beside it."""
    if b is None:
        obj[name] = None
        obj[name + "_encoding"] = None
        return
    try:
        obj[name] = b.decode("utf-8")
        obj[name + "_encoding"] = "utf8"
    except UnicodeDecodeError:
        obj[name] = base64.b64encode(b).decode()
        obj[name + "_encoding"] = "base64"


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
    """Kafka's batch-level line (printBatchLevel)."""
    if b.magic >= 2:
        return _V2_LINE % (
            *_v2_start_fields(b),
            b.position,
            _TS_NAMES[b.timestamp_type],
            b.max_timestamp,
            b.size,
            b.magic,
            codec_name(b.codec).encode(),
            b.crc,
            _BOOL[b.is_valid()],
        )
    return _LEGACY_LINE % (
        b.last_offset,
        b.position,
        _TS_NAMES[b.timestamp_type],
        b.max_timestamp,
        b.size,
        b.magic,
        codec_name(b.codec).encode(),
        b.crc,
        _BOOL[b.is_valid()],
    )


def batch_json(b: Batch) -> dict:
    """The stable JSON schema of a batch (see README, "JSON output")."""
    return {
        "type": "batch",
        "position": b.position,
        "size": b.size,
        "magic": b.magic,
        "base_offset": b.base_offset,
        "last_offset": b.last_offset,
        "count": b.count,
        "codec": codec_name(b.codec),
        "crc": b.crc,
        "valid": b.is_valid(),
        "timestamp_type": TIMESTAMP_TYPE_NAMES[b.timestamp_type],
        "max_timestamp": b.max_timestamp,
        "base_timestamp": b.base_timestamp if b.magic >= 2 else None,
        "producer_id": b.producer_id,
        "producer_epoch": b.producer_epoch,
        "base_sequence": b.base_sequence,
        "last_sequence": b.last_sequence,
        "partition_leader_epoch": b.partition_leader_epoch,
        "is_transactional": b.is_transactional,
        "is_control": b.is_control,
        "delete_horizon_ms": b.delete_horizon_ms,
    }


def control_json(r: Record) -> dict:
    key = r.key or b""
    if len(key) < 4:
        return {"type": "UNKNOWN", "type_id": -1}
    _v, ctype = _CONTROL_KEY.unpack_from(key, 0)
    names = {0: "ABORT", 1: "COMMIT", 2: "LEADER_CHANGE", 3: "SNAPSHOT_HEADER", 4: "SNAPSHOT_FOOTER",
             5: "KRAFT_VERSION", 6: "KRAFT_VOTERS"}
    obj: dict = {"type": names.get(ctype, "UNKNOWN"), "type_id": ctype}
    if ctype in (0, 1) and r.value is not None and len(r.value) >= 6:
        obj["coordinator_epoch"] = struct.unpack_from(">i", r.value, 2)[0]
    return obj


def dump_files(paths: list[str], opts: DumpOptions, out: BinaryIO, err: BinaryIO) -> DumpResult:
    """Dump every file in order, then the deferred reports; returns what was found."""
    dumper = LogDumper(opts, out, err)
    for p in paths:
        dumper.dump(p)
    return dumper.finish()


__all__ = ["DumpOptions", "DumpResult", "LogDumper", "Problem", "dump_files", "batch_line", "os"]
