"""Lag in time and rates: the age of the record at each committed offset, consume/produce rates.

No Kafka tool prints these: the record at the committed offset is read with
one bounded Fetch per leader (`add_time_lag`), two samples give the rates and the time to drain
(`sample_key`, `apply_rates`), and `format_time_lag` is kafkatool's own table for them.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from kafkatool.ops.offsets_report.rows import MISSING, TP, GroupReport, PartitionLag, _s


def apply_time_lag(rows: list[PartitionLag], stamps: dict[tuple[str, int, int], Any], now_ms: int) -> None:
    """Fill `committed_timestamp` / `time_lag_ms` from the record found at each committed offset
    (`stamps` keyed by topic, partition and offset).

    A group at the log end has no record to wait for: its time lag is 0.  Records without a
    timestamp (message format v0) or unreadable ones leave the time lag empty with a note.
    """
    for r in rows:
        if r.topic is None or r.partition is None:
            continue
        st = stamps.get((r.topic, r.partition, r.current_offset))  # type: ignore[arg-type]
        if st is None:
            continue
        if st.caught_up:
            r.time_lag_ms = 0
            r.time_lag_note = "caught up"
        elif st.error:
            r.time_lag_note = st.error
        elif st.timestamp is None:
            r.time_lag_note = "record has no timestamp"
        else:
            r.committed_timestamp = st.timestamp
            r.time_lag_ms = max(0, now_ms - st.timestamp)
            if getattr(st, "note", None):
                r.time_lag_note = st.note
            elif st.offset is not None and r.current_offset is not None and st.offset != r.current_offset:
                r.time_lag_note = f"next record at offset {st.offset}"


def apply_rates(rows: list[PartitionLag], before: dict[tuple[str, str, int], tuple[int | None, int | None]], seconds: float) -> None:
    """Consume/produce rates (messages per second) from two samples `seconds` apart, and time to drain.

    `before` maps (group, topic, partition) to (committed, log end) at the first sample; the rows
    hold the second.  Time to drain = lag / (consume - produce) when the group gains on the
    producers; None when it does not (it never drains at these rates).
    """
    if seconds <= 0:
        return
    for r in rows:
        if r.topic is None or r.partition is None:
            continue
        b = before.get((r.group, r.topic, r.partition))
        if b is None:
            continue
        c0, l0 = b
        if c0 is not None and c0 >= 0 and r.current_offset is not None and r.current_offset >= 0:
            r.consume_rate = (r.current_offset - c0) / seconds
        if l0 is not None and r.log_end_offset is not None:
            r.produce_rate = (r.log_end_offset - l0) / seconds
        if r.lag is not None and r.consume_rate is not None and r.produce_rate is not None:
            gain = r.consume_rate - r.produce_rate
            if r.lag <= 0:
                r.drain_seconds = 0.0
            elif gain > 0:
                r.drain_seconds = r.lag / gain


def format_duration_ms(ms: float | None) -> str:
    """`1d2h3m4.5s`-style age for humans (`-` when unknown)."""
    if ms is None:
        return MISSING
    s = ms / 1000.0
    if s < 60:
        return f"{s:.1f}s" if s < 10 and s != int(s) else f"{int(round(s))}s"
    m, sec = divmod(int(round(s)), 60)
    h, m = divmod(m, 60)
    d, h = divmod(h, 24)
    parts = [f"{d}d" if d else "", f"{h}h" if h else "", f"{m}m" if m else "", f"{sec}s" if sec else ""]
    return "".join(parts) or "0s"


def format_timestamp(ms: int | None) -> str:
    if ms is None:
        return MISSING
    return datetime.fromtimestamp(ms / 1000, tz=UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def format_time_lag(rows: list[PartitionLag], rates: bool = False) -> str:
    """kafkatool's own table (no Kafka tool has lag in time); column widths follow the data."""
    head = ["GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG", "RECORD-TIME", "TIME-LAG"]
    if rates:
        head += ["CONSUME/S", "PRODUCE/S", "TIME-TO-DRAIN"]
    table = []
    for r in rows:
        line = [r.group, _s(r.topic), _s(r.partition), _s(r.current_offset), _s(r.log_end_offset), _s(r.lag),
                format_timestamp(r.committed_timestamp),
                format_duration_ms(r.time_lag_ms) if r.time_lag_ms is not None else (r.time_lag_note or MISSING)]
        if rates:
            if r.drain_seconds is not None:
                drain = format_duration_ms(r.drain_seconds * 1000)
            elif r.lag and r.consume_rate is not None and r.produce_rate is not None:
                drain = "never"
            else:
                drain = MISSING
            line += [_rate(r.consume_rate), _rate(r.produce_rate), drain]
        table.append(line)
    return _columns(head, table)


def _rate(v: float | None) -> str:
    return MISSING if v is None else f"{v:.1f}"


def _columns(head: list[str], table: list[list[str]]) -> str:
    widths = [max([len(h)] + [len(row[i]) for row in table]) for i, h in enumerate(head)]
    lines = [" ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in [head, *table]]
    return "\n".join(lines) + "\n"


def add_time_lag(reports: list[GroupReport], brokers: Any, now_ms: int, fetch_bytes: int = 2048) -> None:
    """Time lag of every row: one bounded Fetch per leader for all groups' committed offsets (a
    partition several groups read at different offsets adds a round per extra offset)."""
    wanted: dict[TP, set[int]] = {}
    for rep in reports:
        for r in rep.rows:
            if r.topic is not None and r.partition is not None and r.current_offset is not None and r.current_offset >= 0:
                wanted.setdefault((r.topic, r.partition), set()).add(r.current_offset)
    stamps: dict[tuple[str, int, int], Any] = {}
    while wanted:
        round_ = {tp: min(offs) for tp, offs in wanted.items()}
        for tp, st in brokers.record_timestamps(round_, fetch_bytes).items():
            stamps[(tp[0], tp[1], round_[tp])] = st
        wanted = {tp: offs - {round_[tp]} for tp, offs in wanted.items() if len(offs) > 1}
    for rep in reports:
        apply_time_lag(rep.rows, stamps, now_ms)


def sample_key(reports: list[GroupReport]) -> dict[tuple[str, str, int], tuple[int | None, int | None]]:
    return {
        (r.group, r.topic, r.partition): (r.current_offset, r.log_end_offset)
        for rep in reports for r in rep.rows if r.topic is not None and r.partition is not None
    }
