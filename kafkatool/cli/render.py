"""Machine-readable and tabular output shared by every command (`--format json|ndjson|csv|table`).

Commands build rows (dicts with stable keys, documented in docs/) in the library and hand them
here; only this module and the command modules write to stdout.
"""

from __future__ import annotations

import io
import json
import sys
from collections.abc import Iterable, Sequence
from typing import Any, TextIO

FORMATS = ("text", "json", "ndjson", "csv", "table")


def check_format(fmt: str, allowed: Sequence[str] = FORMATS) -> str:
    from kafkatool.cli.errors import CliError

    if fmt not in allowed:
        raise CliError(f"--format: {fmt!r} is not one of {', '.join(allowed)}")
    return fmt


def _json_default(o: Any) -> Any:
    if isinstance(o, bytes):
        return o.decode("utf-8", "replace")
    if hasattr(o, "__dict__"):
        return vars(o)
    if isinstance(o, (set, frozenset)):
        return sorted(o)
    return str(o)


# json.dumps with options builds a new encoder per call; one shared encoder writes the same text, and
# a report writes a row per partition (tens of thousands)
_ENCODER = json.JSONEncoder(default=_json_default, ensure_ascii=False, separators=(",", ":"))


def dumps(obj: Any) -> str:
    return _ENCODER.encode(obj)


def render_rows(
    rows: Iterable[dict[str, Any]],
    fmt: str,
    columns: Sequence[str] | None = None,
    out: TextIO | None = None,
    title: str | None = None,
) -> None:
    """Write rows as json (one array), ndjson, csv (header + rows) or a rich table."""
    out = out or sys.stdout
    if fmt == "ndjson":
        for r in rows:
            out.write(dumps(r) + "\n")
        return
    if fmt == "json":
        out.write("[")
        first = True
        for r in rows:
            out.write(("\n" if first else ",\n") + dumps(r))
            first = False
        out.write("\n]\n" if not first else "]\n")
        return
    rows = list(rows)
    cols = list(columns) if columns else list(dict.fromkeys(k for r in rows for k in r))
    if fmt == "csv":
        import csv

        w = csv.writer(out, lineterminator="\n")
        w.writerow(cols)
        w.writerows([_csv_cell(r.get(c)) for c in cols] for r in rows)
        return
    if fmt == "table":
        from rich.console import Console
        from rich.table import Table

        table = Table(title=title, show_lines=False)
        for c in cols:
            table.add_column(c)
        for r in rows:
            table.add_row(*["-" if r.get(c) is None else _cell(r.get(c)) for c in cols])
        Console(file=out, width=max(120, sum(len(c) + 3 for c in cols))).print(table)
        return
    raise ValueError(f"render_rows cannot write {fmt!r}")


def aligned_text(head: Sequence[str], body: Sequence[Sequence[str]]) -> str:
    """Space-aligned columns, a header line first (kafkatool's own text tables, like `du`/`df`)."""
    widths = [max(len(x) for x in col) for col in zip(head, *body, strict=True)]
    return "".join(
        " ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)).rstrip() + "\n" for line in [head, *body]
    )


def _csv_cell(v: Any) -> Any:
    """A csv cell: "" for None, str and int as they are (csv writes an int as str() does), else `_cell`."""
    t = type(v)
    if t is str or t is int:
        return v
    return "" if v is None else _cell(v)


def _cell(v: Any) -> str:
    if isinstance(v, (list, dict)):
        return dumps(v)
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


def render_json(obj: Any, out: TextIO | None = None) -> None:
    """One JSON document (objects that are not lists of rows)."""
    (out or sys.stdout).write(json.dumps(obj, default=_json_default, ensure_ascii=False, indent=2) + "\n")


def to_csv_string(rows: list[dict[str, Any]], columns: Sequence[str]) -> str:
    buf = io.StringIO()
    render_rows(rows, "csv", columns, buf)
    return buf.getvalue()
