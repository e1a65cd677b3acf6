"""The fast paths of the offline `offsets --log-dir` report (issue 14): each against an independent oracle.

* the compiled replay's key table (keyed by the key's bytes, guessing each record's key from the last
  round) against the pure-Python replay, where two key versions name one partition in one run, where
  keys are long (past the inline prefix) and where the order of keys changes between rounds;
* its release of mapped pages on a long run: same result, called at batch ends 32 MiB apart;
* the report's TopicPartition hash orders against `jvm.java_collections.hash_order`;
* `PartitionLag.as_row` against `dataclasses.asdict`;
* `log_end_offset` on a segment read whole and on one mapped (over 1 MiB) against the writer's count.
"""

from __future__ import annotations

import dataclasses
import random
import struct
from pathlib import Path
from typing import Any

import pytest

from kafkatool.jvm.java_collections import capacity_for_copy, grown_capacity, hash_order
from kafkatool.log.core import load_speedups
from kafkatool.log.writer import Record, SegmentWriter, encode_v2_batch
from kafkatool.ops import offsets_log
from kafkatool.ops.offsets_log import _SKIP, log_end_offset, replay_log_dirs
from kafkatool.ops.offsets_report import PartitionLag
from kafkatool.ops.offsets_report.orders import _tp_hash, _tp_hash_order
from tests.test_offsets_core_diff import both
from tests.test_offsets_offline import OffsetsLogBuilder, _s, commit_value, group_key, group_value

speedups = load_speedups()
needs_core = pytest.mark.skipif(speedups is None, reason="the compiled core is not built (no C compiler?)")


def key_version(version: int, group: str, topic: str, partition: int) -> bytes:
    return struct.pack(">h", version) + _s(group) + _s(topic) + struct.pack(">i", partition)


@needs_core
def test_two_key_versions_of_one_partition_in_one_run(tmp_path: Path) -> None:
    """Key v0 and v1 bytes differ but name the same (group, topic, partition): the latest commit wins
    whichever bytes carried it (the compiled run keeps one latest entry per partition, found by value)."""
    b = OffsetsLogBuilder(tmp_path)
    b.batch([(key_version(0, "g", "t", 0), commit_value(10, 1)), (key_version(1, "g", "t", 1), commit_value(11, 1))])
    b.batch([(key_version(1, "g", "t", 0), commit_value(20, 2))])
    b.batch([(key_version(0, "g", "t", 0), commit_value(30, 3)), (key_version(0, "g", "t", 1), commit_value(31, 3))])
    b.close()
    c, py = both(lambda: replay_log_dirs([tmp_path]))
    assert c == py
    offsets = dict(c["offsets"])
    assert offsets[("g", "t", 0)].offset == 30 and offsets[("g", "t", 1)].offset == 31


@needs_core
def test_long_keys_and_changing_key_order(tmp_path: Path) -> None:
    """Keys past the table's inline prefix (40 bytes), keys equal in their first 40 bytes, and rounds that
    commit the same keys in another order (the guessed next key is wrong), seeded."""
    rnd = random.Random(1414)
    b = OffsetsLogBuilder(tmp_path, segment_records=5000)
    groups = [f"group-{'x' * rnd.randrange(0, 60)}-{i}" for i in range(12)]
    keys = [(g, f"topic-{'y' * 30}-{t}", p) for g in groups for t in range(2) for p in range(3)]
    for round_ in range(8):
        order = keys[:] if round_ % 3 else rnd.sample(keys, len(keys))
        for i in range(0, len(order), 7):
            chunk = order[i:i + 7]
            b.batch([(key_version(1, *k), commit_value(round_ * 100 + j, round_)) for j, k in enumerate(chunk)])
        g = rnd.choice(groups)
        b.batch([(group_key(g), group_value([("m-1", [(f"topic-{'y' * 30}-0", 0)])]))])
    b.close()
    c, py = both(lambda: replay_log_dirs([tmp_path]))
    assert c == py
    assert len(c["offsets"]) == len(keys)


def _batch(base: int, kvs: list[tuple[bytes, bytes]]) -> bytes:
    recs = [Record(base + i, 1_700_000_000_000, k, v, (), -1, None, True) for i, (k, v) in enumerate(kvs)]
    return encode_v2_batch(recs, base)


@needs_core
def test_a_long_run_releases_mapped_pages_at_batch_ends() -> None:
    """Over 64 MiB of one repeated batch: `release` is called at batch ends at least 32 MiB apart, and the
    state is the one a run without `release` leaves."""
    assert speedups is not None
    batch = _batch(0, [(key_version(1, "g", f"t-{p % 3}", p), commit_value(p, 5, "m" * 900)) for p in range(60)])
    count = (66 << 20) // len(batch) + 1
    buf = batch * count

    def run(release: Any) -> tuple[Any, ...]:
        keys: dict[bytes, Any] = {}
        loaded: dict[Any, Any] = {}
        groups: dict[str, bytes] = {}
        removed: set[str] = set()
        end, n = speedups.offsets_replay_run(buf, 0, len(buf), 0, keys, loaded, groups, removed, None, _SKIP,
                                             release)
        return end, n, loaded

    calls: list[int] = []
    with_release = run(calls.append)
    assert with_release == run(None)
    assert with_release[0] == len(buf) and with_release[1] == 60 * count
    assert len(calls) == 2 and all(p % len(batch) == 0 for p in calls)
    assert calls[0] >= 32 << 20 and calls[1] - calls[0] >= 32 << 20


@pytest.mark.parametrize("seed", range(20))
def test_topic_partition_hash_order_is_hash_order(seed: int) -> None:
    rnd = random.Random(seed)
    tps = list(dict.fromkeys((f"t{rnd.randrange(8)}{'-x' * rnd.randrange(3)}", rnd.randrange(-2, 400))
                             for _ in range(rnd.randrange(1, 300))))
    for cap in (capacity_for_copy(len(tps)), grown_capacity(len(tps)), grown_capacity(len(tps), 1 << rnd.randrange(8))):
        assert _tp_hash_order(tps, cap) == hash_order(tps, _tp_hash, cap)


def test_as_row_is_asdict() -> None:
    row = PartitionLag("g", "t", 3, 10, 20, 10, "c", "h", "cl", "o", 1, "meta", "Stable", 5, 6, "note", 1.5, 2.5, 3.5)
    assert row.as_row() == dataclasses.asdict(row)
    assert list(row.as_row()) == list(dataclasses.asdict(row))
    empty = PartitionLag("g", None, None, None, None, None)
    assert empty.as_row() == dataclasses.asdict(empty)


@pytest.mark.parametrize("records,value_size", [(5, 10), (300, 5000)])  # read whole; mapped (over 1 MiB)
def test_log_end_offset_small_and_mapped_segments(tmp_path: Path, records: int, value_size: int) -> None:
    pdir = tmp_path / "topic-0"
    w = SegmentWriter(pdir, 0, 4096)
    w.close()  # an empty first segment, then the one written
    base = 7
    w = SegmentWriter(pdir, base, 4096)
    for i in range(records):
        data = _batch(base + 2 * i, [(b"k", b"v" * value_size), (b"k", b"w")])
        w.append(data, base + 2 * i + 1, 1_700_000_000_000, base + 2 * i + 1)
    w.close()
    assert (w.size > offsets_log._SMALL_SEGMENT) == (records == 300)
    assert log_end_offset(pdir) == base + 2 * records


def test_rendered_rows_are_json_dumps_and_csv_cells() -> None:
    """render_rows' shared encoder and csv cells against json.dumps and the cell rule written out here."""
    import csv
    import io
    import json

    from kafkatool.cli.render import render_rows

    rows = [{"a": "x", "b": 1, "c": None, "d": True, "e": 1.5, "f": [1, "é"], "g": {"k": b"v"}, "h": "naïve,\"q\""},
            {"a": "", "b": -(2**70), "c": False, "d": None, "e": float("inf"), "f": [], "g": {}, "h": "\n"}]
    cols = list(rows[0])
    out = io.StringIO()
    render_rows(iter(rows), "json", cols, out=out)

    def default(o: Any) -> Any:
        return o.decode("utf-8", "replace") if isinstance(o, bytes) else str(o)

    lines = [json.dumps(r, default=default, ensure_ascii=False, separators=(",", ":")) for r in rows]
    assert out.getvalue() == "[\n" + ",\n".join(lines) + "\n]\n"

    def cell(v: Any) -> str:
        if v is None:
            return ""
        if isinstance(v, (list, dict)):
            return json.dumps(v, default=default, ensure_ascii=False, separators=(",", ":"))
        return ("true" if v else "false") if isinstance(v, bool) else str(v)

    expect = io.StringIO()
    w = csv.writer(expect, lineterminator="\n")
    w.writerow(cols)
    for r in rows:
        w.writerow([cell(r[c]) for c in cols])
    out = io.StringIO()
    render_rows(iter(rows), "csv", cols, out=out)
    assert out.getvalue() == expect.getvalue()
