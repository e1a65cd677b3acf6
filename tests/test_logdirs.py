"""`kafkatool log-dirs` offline: sizes as the broker counts them and the broker's retention rules.

Segments are written with the project's writer with known timestamps and sizes; the expected
deletions follow from Kafka's rules by hand (UnifiedLog.deleteRetentionMsBreachedSegments /
deleteRetentionSizeBreachedSegments: oldest first, stop at the first segment kept; by size, delete
while the rest still holds retention.bytes; the active segment only when not empty).
"""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

import kafkatool.cli.logdirs  # noqa: F401 - registers the command
from kafkatool.cli.app import app
from kafkatool.log.records import Record
from kafkatool.log.writer import SegmentWriter, encode_v2_batch

HOUR = 3_600_000
T0 = 1_700_000_000_000


def _segment(pdir: Path, base: int, n: int, ts: int) -> int:
    """One segment of n records at timestamps ts, ts+1, ...; returns its .log size."""
    w = SegmentWriter(pdir, base)
    recs = [Record(base + i, ts + i, b"k", b"v" * 100, ()) for i in range(n)]
    w.append(encode_v2_batch(recs), recs[-1].offset, recs[-1].timestamp, recs[-1].offset)
    w.close()
    return (pdir / f"{base:020d}.log").stat().st_size


def _run(*args: str):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(app, ["log-dirs", *args], catch_exceptions=False)


def test_sizes_offsets_timestamps_and_retention(tmp_path: Path) -> None:
    log_dir = tmp_path / "data"
    pdir = log_dir / "orders-0"
    pdir.mkdir(parents=True)
    sizes = [_segment(pdir, base, 10, T0 + h * HOUR) for h, base in enumerate((0, 10, 20, 30))]
    (log_dir / "payments-1").mkdir()
    _segment(log_dir / "payments-1", 0, 5, T0)
    now = T0 + 3 * HOUR + 30 * 60_000  # segments' newest timestamps are 3.5, 2.5, 1.5, 0.5 hours old
    res = _run(str(log_dir), "--retention-ms", str(2 * HOUR), "--now", str(now), "--format", "json")
    assert res.exit_code == 0, res.output
    rows = {(r["topic"], r["partition"]): r for r in json.loads(res.stdout)}
    o = rows[("orders", 0)]
    assert o["size"] == sum(sizes) and o["segments"] == 4
    assert (o["log_start_offset"], o["log_end_offset"]) == (0, 40)
    assert (o["oldest_timestamp"], o["newest_timestamp"]) == (T0 + 9, T0 + 3 * HOUR + 9)
    assert o["reclaimable_segments"] == 2  # 3.5 h and 2.5 h old: over 2 h; 1.5 h old stops the pass
    files = [pdir / f"{b:020d}{s}" for b in (0, 10) for s in (".log", ".index", ".timeindex")]
    assert o["reclaimable_bytes"] == sum(f.stat().st_size for f in files)
    # payments-1's only (active, non-empty) segment is 3.5 h old: it goes too (the broker rolls first)
    assert rows[("payments", 1)]["reclaimable_segments"] == 1


def test_retention_bytes_keeps_at_least_the_limit(tmp_path: Path) -> None:
    pdir = tmp_path / "data" / "orders-0"
    pdir.mkdir(parents=True)
    sizes = [_segment(pdir, b, 10, T0) for b in (0, 10, 20, 30)]
    limit = sizes[2] + sizes[3] + 1  # deleting two segments would leave less than the limit
    res = _run(str(pdir), "--retention-bytes", str(limit), "--format", "json")
    (row,) = json.loads(res.stdout)
    assert row["reclaimable_segments"] == 1
    res = _run(str(pdir), "--retention-bytes", str(sizes[2] + sizes[3]), "--format", "json")
    assert json.loads(res.stdout)[0]["reclaimable_segments"] == 2


def test_by_topic_and_text_and_errors(tmp_path: Path) -> None:
    log_dir = tmp_path / "data"
    for p in (0, 1):
        (log_dir / f"orders-{p}").mkdir(parents=True)
        _segment(log_dir / f"orders-{p}", 0, 10, T0)
    res = _run(str(log_dir), "--by", "topic", "--format", "json")
    (row,) = json.loads(res.stdout)
    assert row["topic"] == "orders" and row["partitions"] == 2 and row["segments"] == 2
    res = _run(str(log_dir))
    assert res.exit_code == 0 and res.stdout.splitlines()[0].split()[:4] == ["LOG-DIR", "PARTITION", "SIZE", "SEGMENTS"]
    assert _run(str(tmp_path / "nope")).exit_code == 2
    assert _run(str(log_dir), "--by", "broker").exit_code == 2
    assert _run(str(log_dir), "--retention-ms", "-5").exit_code == 2
