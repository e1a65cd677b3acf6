"""`kafkatool transactions find-hanging --log-dir DIR`: open and hanging transactions from a partition's files.

`find_hanging_log_dir` is the whole offline command; `transactions find-hanging` (kafkatool.cli.transactions)
calls it when `--log-dir` is given.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from kafkatool.cli.errors import EXIT_FINDINGS, EXIT_USAGE, CliError
from kafkatool.cli.render import check_format, render_rows

LOG_DIR_HELP = (
    "A partition dir (topic-N) or a log dir holding partition dirs: read offline, no cluster needed."
)

OFFLINE_HELP = """Find open and hanging transactions in a partition's log and producer snapshots, offline.

The producer state is rebuilt as a broker does at startup (the newest producer snapshot, then the log
after it): each open transaction with its producer id and epoch, coordinator epoch, first offset,
last timestamp, age against --now, and the last stable offset it holds back (the smallest first
offset of the open transactions: read_committed consumers stop there).  A transaction is hanging
when its producer wrote nothing for --max-transaction-timeout minutes (kafka-transactions.sh's rule).
--at reads the log only up to an offset (included) or the batches appended up to an ISO-8601 time.
Text: kafka-transactions.sh find-hanging's table with LastStableOffset and Hanging added; with
--format, rows (ROW_COLUMNS in the docs).

\b
Exit codes: 0 no hanging transaction; 1 a hanging transaction, or a damaged log (read up to the
damage, which is named on stderr); 2 bad path or option.

\b
Examples:
  kafkatool transactions find-hanging --log-dir /var/lib/kafka/data/orders-3
  kafkatool transactions find-hanging --log-dir /var/lib/kafka/data --topic orders --format json
  kafkatool transactions find-hanging --log-dir orders-3 --at 2026-11-28T07:45:00Z --now 2026-11-28T07:45:00Z
"""

#: after find-hanging's columns (kafkatool.cluster.transactions.HANGING_HEADERS): what only the offline search knows
_MORE_HEADERS = ("LastStableOffset", "Hanging")
_KEYS = (
    "topic",
    "partition",
    "producerId",
    "producerEpoch",
    "coordinatorEpoch",
    "startOffset",
    "lastTimestamp",
    "durationMin",
    "lastStableOffset",
    "hanging",
)


def _table(rows: list[dict]) -> str:
    """`ToolsUtils.prettyPrintTable` of the rows (booleans as Java prints them)."""
    from kafkatool.cluster.quorum import pretty_table
    from kafkatool.cluster.transactions import HANGING_HEADERS

    body = [[str(r[k]).lower() if isinstance(r[k], bool) else str(r[k]) for k in _KEYS] for r in rows]
    return pretty_table([*HANGING_HEADERS, *_MORE_HEADERS], body)


def _millis(text: str, what: str) -> int:
    from kafkatool.ops.metadata.load import PointError, parse_point

    try:
        p = parse_point(text)
    except PointError as exc:
        raise CliError(f"{what}: {exc}", EXIT_USAGE) from None
    if p.time_ms is None:
        raise CliError(f"{what}: give an ISO-8601 time such as 2026-11-28T07:45:00Z", EXIT_USAGE)
    return p.time_ms


def find_hanging_log_dir(
    log_dir: Path,
    topic: str | None = None,
    partition: int | None = None,
    at: str | None = None,
    now: str | None = None,
    max_transaction_timeout_min: int = 15,
    fmt: str = "text",
) -> int:
    """Print the open transactions under `log_dir`; the exit code (1 when one is hanging or a log is damaged)."""
    from kafkatool.ops.metadata.load import PointError, parse_point
    from kafkatool.ops.txn_offline import (
        ROW_COLUMNS,
        TxnInputError,
        offset_at_time,
        partition_dirs,
        read_partition,
    )
    from kafkatool.ops.txn_offline import rows as txn_rows

    check_format(fmt)
    if max_transaction_timeout_min < 0:
        raise CliError("--max-transaction-timeout: must be 0 or more minutes", EXIT_USAGE)
    now_ms = _millis(now, "--now") if now else int(time.time() * 1000)
    try:
        point = parse_point(at) if at else None
        dirs = partition_dirs(log_dir, topic, partition)
    except (TxnInputError, PointError) as exc:
        raise CliError(str(exc), EXIT_USAGE) from None
    out: list[dict] = []
    damaged = []
    for d in dirs:
        upto = (
            None
            if point is None
            else point.offset
            if point.offset is not None
            else offset_at_time(d, point.time_ms or 0)
        )
        st = read_partition(d, upto)
        out.extend(txn_rows(st, now_ms, max_transaction_timeout_min * 60000))
        if st.damage:
            damaged.append(st.damage)
    if fmt == "text":
        sys.stdout.write(_table(out))
    else:
        render_rows(out, fmt, ROW_COLUMNS)
    sys.stdout.flush()
    for where in damaged:
        sys.stderr.write(f"kafkatool: {where}; read up to there\n")
    return EXIT_FINDINGS if damaged or any(r["hanging"] for r in out) else 0
