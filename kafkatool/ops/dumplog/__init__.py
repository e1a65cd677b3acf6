"""`dump-log`: Kafka's DumpLogSegments, byte for byte, plus JSON/NDJSON output.

The text renderer reproduces the chosen Kafka release's tool (`kafkatool.release`), quirks included
(the stray `}` after legacy record CRCs, ` payload:` without the `|` when metadata is skipped and the
key is null, newest-first mismatch lists); where the text changed between releases is in
`kafkatool.ops.dumplog_text`.  Where Kafka's tool crashes (a file name without a dot, a corrupt size
field, an index pointing past the log) we print everything Kafka printed up to that point and then
one line that says what is wrong, instead of a stack trace.

The package writes to binary streams handed to it; it never prints.  One module a piece of Kafka's
tool:

- `options`    DumpLogSegmentsOptions: DumpOptions, DumpResult, Problem
- `decoders`   the key/value `Decoder`s (`--key-decoder-class`, `--value-decoder-class`)
- `parsers`    the MessageParser family and `make_parser` (internal topics via `log/decoders`),
  printControlRecord (`control_text`)
- `base`       what every file's dump shares: streams, result, problems, the deferred reports
- `reports`    the stderr reports printed after all files (mismatches, TimeIndexDumpErrors,
  non-consecutive offsets)
- `log_text`   dumpLog's text: printBatchLevel (`batch_line`), dumpBatchRecords' record lines, the
  compiled core's fast paths
- `log_json`   dumpLog's JSON form (ours: Kafka's tool has none)
- `parallel`   deep/print text of a big log rendered by worker processes, byte-identical
- `indexes`    dumpIndex, dumpTimeIndex (`--verify-index-only`, `--index-sanity-check`)
- `producer_state`  dumpProducerIdSnapshot, dumpTxnIndex
- `checkpoints`  files without a dot (checkpoints, `quorum-state`), which Kafka's tool cannot dump
- `dumper`     main's loop: `LogDumper.dump` by file suffix, `dump_log`, `dump_files`

Tests that swap the compiled core or shrink a threshold patch the module that reads it:
`log_text.speedups`, `log_text.SHALLOW_*`, `parallel.speedups`, `parallel.PARALLEL_*`.
"""

from __future__ import annotations

from kafkatool.ops.dumplog.base import BadFileName
from kafkatool.ops.dumplog.decoders import VALUE_DECODERS, resolve_decoder
from kafkatool.ops.dumplog.dumper import LogDumper, dump_files, java_file_str
from kafkatool.ops.dumplog.log_json import batch_json, control_json
from kafkatool.ops.dumplog.log_text import batch_line, batch_line_start, codec_name
from kafkatool.ops.dumplog.options import (
    DEFAULT_MAX_MESSAGE_SIZE,
    INT32_MAX,
    DumpOptions,
    DumpResult,
    Problem,
)
from kafkatool.ops.dumplog.parallel import _jobs
from kafkatool.ops.dumplog.parsers import (
    PAYLOAD_PARSERS,
    KeyedFormatter,
    NewerSink,
    Parser,
    ValueFormatter,
    control_text,
    make_parser,
)

__all__ = [
    "DEFAULT_MAX_MESSAGE_SIZE",
    "INT32_MAX",
    "PAYLOAD_PARSERS",
    "VALUE_DECODERS",
    "BadFileName",
    "DumpOptions",
    "DumpResult",
    "KeyedFormatter",
    "LogDumper",
    "NewerSink",
    "Parser",
    "Problem",
    "ValueFormatter",
    "_jobs",
    "batch_json",
    "batch_line",
    "batch_line_start",
    "codec_name",
    "control_json",
    "control_text",
    "dump_files",
    "java_file_str",
    "make_parser",
    "resolve_decoder",
]
