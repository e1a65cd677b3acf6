"""What every file's dump shares: the output streams, the result, the deferred reports, the parser.

`DumperBase` writes stdout lines (`_w`, keeping Kafka's unfinished line when its tool died mid-line)
or JSON objects (`_emit`), records Problems (one stderr line each, or a JSON object), and ends the
run with DumpLogSegments' deferred stderr reports (`finish`).  Each kind of file is dumped by a
subclass beside it (`log_text`, `log_json`, `parallel`, `indexes`, `producer_state`, `checkpoints`);
`dumper.LogDumper` combines them.  `_base_offset` reads a segment's base offset from its file name
(Kafka's UnifiedLog.offsetFromFile) and refuses names that do not hold one.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import BinaryIO

from kafkatool.log.errors import LogFormatError
from kafkatool.ops.dumplog.options import DumpOptions, DumpResult, Problem
from kafkatool.ops.dumplog.parsers import make_parser
from kafkatool.ops.dumplog.reports import _Stderr


class DumperBase:
    """The state of a run of dumps to `out` (stdout bytes) and `err` (stderr bytes) per DumpOptions;
    the file dumps build on it (`dumper.LogDumper` has them all)."""

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

    def problem(
        self, file: str, kind: str, message: str, *, to_stderr: bool = True, fatal: bool = True
    ) -> None:
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


class BadFileName(LogFormatError):
    """A segment/index file whose name does not encode its base offset (an input error)."""


def _base_offset(path: Path) -> int:
    stem = path.name.split(".")[0]
    if not (stem.isascii() and stem.isdigit()):  # "²".isdigit() is True, int("²") raises
        raise BadFileName(
            f"the file name must start with the segment's base offset (e.g. 00000000000000000000{path.suffix})"
        )
    return int(stem)
