"""Offsets files: Kafka's `--reset-offsets --export` CSV, ExportZkOffsets lines, kafkatool's JSON.

The writers (`export_*`) and the one reader of all three (`parse_offsets_file`, what
`--reset-offsets --from-file` reads), following ConsumerGroupService's `exportOffsetsToCsv` and
`parseResetPlan` (OffsetsUtils' from 4.2; CsvUtils' `topic,partition,offset` and
`group,topic,partition,offset` lines).
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Sequence

from kafkatool.ops.offsets_report.rows import TP, PartitionLag


def export_csv(offsets: dict[str, dict[TP, int]], with_group: bool, keep_order: bool = False) -> str:
    """Kafka's `--reset-offsets --export` CSV: `topic,partition,offset` (one group) or with the group
    first; rows end with a newline and Kafka's `println` adds one more.  Rows are sorted unless
    `keep_order` (the caller already has Kafka's hash-map order, `reset_rows`)."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    for g in (offsets if keep_order else sorted(offsets)):
        for (t, p), o in (offsets[g].items() if keep_order else sorted(offsets[g].items())):
            w.writerow([g, t, p, o] if with_group else [t, p, o])
    return buf.getvalue() + "\n"


def export_zk(offsets: dict[str, dict[TP, int]]) -> str:
    """ExportZkOffsets lines: `/consumers/<group>/offsets/<topic>/<partition>:<offset>`."""
    return "".join(
        f"/consumers/{g}/offsets/{t}/{p}:{o}\n" for g in sorted(offsets) for (t, p), o in sorted(offsets[g].items())
    )


EXPORT_JSON_VERSION = 1


def export_json(rows: list[PartitionLag], exported_at_ms: int) -> str:
    """Our JSON export: committed offset, log-end offset, lag and the committed record's timestamp."""
    doc = {
        "version": EXPORT_JSON_VERSION,
        "exported_at": exported_at_ms,
        "offsets": [
            {
                "group": r.group, "topic": r.topic, "partition": r.partition, "offset": r.current_offset,
                "metadata": r.metadata, "log_end_offset": r.log_end_offset, "lag": r.lag,
                "committed_timestamp": r.committed_timestamp, "time_lag_ms": r.time_lag_ms,
            }
            for r in rows
            if r.topic is not None and r.partition is not None and r.current_offset is not None and r.current_offset >= 0
        ],
    }
    return json.dumps(doc, indent=2) + "\n"


class OffsetsFileError(ValueError):
    """A reset plan file that is not one of the export formats."""


_ZK_LINE = re.compile(r"^/consumers/(?P<g>[^/]+)/offsets/(?P<t>[^/]+)/(?P<p>-?\d+)(?:-\d+)?:(?P<o>-?\d+)\s*$")


def parse_offsets_file(text: str, groups: Sequence[str] = (), source: str = "<file>") -> dict[str, dict[TP, int]]:
    """Read a reset plan in any export format: JSON, ExportZkOffsets lines or Kafka's CSV.

    CSV follows Kafka's rule: with exactly one `--group` and a first line that parses as
    `topic,partition,offset`, every line is read so (for that group); otherwise every line must be
    `group,topic,partition,offset`.
    """
    stripped = text.lstrip()
    if not stripped:
        raise OffsetsFileError(f"{source}: empty")
    if stripped[0] in "[{":
        return _parse_json_plan(stripped, source)
    lines = [ln for ln in text.splitlines() if ln.strip()]
    if lines[0].startswith("/consumers/"):
        out: dict[str, dict[TP, int]] = {}
        for n, ln in enumerate(lines, 1):
            m = _ZK_LINE.match(ln.strip())
            if not m:
                raise OffsetsFileError(f"{source}:{n}: not /consumers/<group>/offsets/<topic>/<partition>:<offset>: {ln!r}")
            out.setdefault(m["g"], {})[(m["t"], int(m["p"]))] = int(m["o"])
        return out
    rows = list(csv.reader(lines))
    single = len(groups) == 1 and _csv_no_group(rows[0])
    out = {}
    for n, row in enumerate(rows, 1):
        try:
            if single:
                t, p, o = row
                g = groups[0]
            else:
                g, t, p, o = row
            out.setdefault(g, {})[(t, int(p))] = int(o)
        except ValueError:
            want = "topic,partition,offset" if single else "group,topic,partition,offset"
            raise OffsetsFileError(f"{source}:{n}: expected {want}: {','.join(row)!r}") from None
    return out


def _csv_no_group(row: list[str]) -> bool:
    if len(row) != 3:
        return False
    try:
        int(row[1])
        int(row[2])
    except ValueError:
        return False
    return True


def _parse_json_plan(text: str, source: str) -> dict[str, dict[TP, int]]:
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise OffsetsFileError(f"{source}: malformed JSON: {exc.msg} at line {exc.lineno}") from None
    items = doc.get("offsets") if isinstance(doc, dict) else doc
    if not isinstance(items, list):
        raise OffsetsFileError(f'{source}: JSON must be a list of offsets or {{"offsets": [...]}}')
    out: dict[str, dict[TP, int]] = {}
    for n, it in enumerate(items):
        try:
            if it.get("offset") is None:
                continue
            out.setdefault(str(it["group"]), {})[(str(it["topic"]), int(it["partition"]))] = int(it["offset"])
        except (KeyError, TypeError, ValueError, AttributeError):
            raise OffsetsFileError(f"{source}: entry {n}: needs group, topic, partition and offset") from None
    return out
