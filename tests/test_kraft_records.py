"""`kafkatool records delete` (kafka-delete-records.sh) against Kafka 4.0.0's output at S15.

The fake brokers hold fx-orders (30 records a partition) and fx-events (20) as the real cluster did; the
oracle is Kafka 4.0.0's text for the fixture's own JSON files (the admin client's ERROR log line compared
by shape: its timestamp is the clock's).  Malformed JSON is one line and exit 2 (fuzzed: never a traceback).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafkatool.cluster.records_delete import OffsetJsonError, parse_offset_json
from tests.conftest import FIXTURES
from tests.support.cli import run_console
from tests.support.fake_kraft import FakeKraftKafka
from tests.support.kwire import MATRIX

ROOT = FIXTURES / "kraft-4.0.0"
GOLDENS = ROOT / "goldens" / "kafka-delete-records"


def _golden(name: str, ext: str) -> str:
    if not GOLDENS.is_dir():
        pytest.skip(f"kraft-4.0.0 goldens not found at {GOLDENS}")
    return (GOLDENS / f"{name}.{ext}").read_text()


def _cluster(release: str = "4.0.0") -> FakeKraftKafka:
    k = FakeKraftKafka({4: None, 5: None}, controllers=[1], release=release)
    k.add_topic("fx-orders", {0: [4, 5], 1: [5, 4], 2: [4, 5]})
    k.add_topic("fx-events", {0: [5], 1: [5], 2: [4], 3: [5]})
    for p in range(3):
        k.high_watermark[("fx-orders", p)] = 30
    for p in range(4):
        k.high_watermark[("fx-events", p)] = 20
    return k


_STAMP = re.compile(r"^\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}\]", re.M)


@pytest.mark.parametrize(
    "case,json_file",
    [("fx-orders-0-fx-events-1", "delete-records.json"), ("offset-out-of-range", "delete-records-bad.json")],
)
def test_goldens(case: str, json_file: str) -> None:
    out, err = _golden(case, "stdout"), _golden(case, "stderr")
    with _cluster() as k:
        res = run_console(
            "records",
            "delete",
            "--offset-json-file",
            str(ROOT / "work" / json_file),
            "--bootstrap-server",
            k.bootstrap,
        )
    assert res.returncode == int(_golden(case, "rc"))
    assert res.stdout == out  # (4.0 prints the partitions in a random order: the file's is one of them)
    assert _STAMP.sub("[T]", res.stderr) == _STAMP.sub("[T]", err)
    if case.startswith("fx-orders"):
        assert k.low_watermark == {("fx-orders", 0): 10, ("fx-events", 1): 5}


@pytest.mark.parametrize("release", MATRIX)
def test_release_matrix(release: str, tmp_path: Path) -> None:
    f = tmp_path / "d.json"
    f.write_text(
        json.dumps(
            {
                "partitions": [
                    {"topic": "fx-orders", "partition": p, "offset": -1 if p == 2 else 7} for p in range(3)
                ]
            }
        )
    )
    with _cluster(release) as k:
        dry = run_console(
            "records", "delete", "--offset-json-file", str(f), "--dry-run", "--bootstrap-server", k.bootstrap
        )
        assert (
            dry.returncode == 0
            and k.low_watermark == {}
            and dry.stdout.endswith("Dry run: nothing deleted.\n")
        )
        res = run_console(
            "records",
            "delete",
            "--offset-json-file",
            str(f),
            "--bootstrap-server",
            k.bootstrap,
            "--format",
            "json",
        )
    assert res.returncode == 0
    rows = json.loads(res.stdout)
    assert sorted((r["partition"], r["low_watermark"]) for r in rows) == [(0, 7), (1, 7), (2, 30)]
    assert k.low_watermark == {("fx-orders", 0): 7, ("fx-orders", 1): 7, ("fx-orders", 2): 30}


@pytest.mark.parametrize(
    "text,message",
    [
        ("{", "The input string is not a valid JSON"),
        ('{"version": 2, "partitions": []}', "Not supported version field value 2"),
        ('{"version": 1}', "Missing partitions field"),
        ('{"partitions": [{"topic": "a", "partition": 0}]}', "No such field exists: `offset`"),
        (
            '{"partitions": [{"topic": "a", "partition": 0, "offset": 1}, {"topic": "a", "partition": 0, "offset": 2}]}',
            "Offset json file contains duplicate topic partitions: a-0",
        ),
    ],
)
def test_bad_json_is_one_line(tmp_path: Path, text: str, message: str) -> None:
    f = tmp_path / "bad.json"
    f.write_text(text)
    res = run_console("records", "delete", "--offset-json-file", str(f), "--bootstrap-server", "127.0.0.1:1")
    assert res.returncode == 2 and res.stdout == ""
    assert (
        res.stderr.count("\n") == 1
        and message in res.stderr
        and res.stderr.startswith("kafkatool: records delete: ")
    )


def test_missing_file(tmp_path: Path) -> None:
    res = run_console(
        "records", "delete", "--offset-json-file", str(tmp_path / "nope.json"), "--bootstrap-server", "x:1"
    )
    assert res.returncode == 2 and "no such file" in res.stderr


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
        lambda inner: (
            st.lists(inner, max_size=4)
            | st.dictionaries(
                st.sampled_from(["version", "partitions", "topic", "partition", "offset", "x"]),
                inner,
                max_size=4,
            )
        ),
        max_leaves=12,
    )
    | st.text(max_size=40)
)
def test_parser_never_raises_anything_else(doc: object) -> None:
    text = doc if isinstance(doc, str) else json.dumps(doc)
    try:
        parsed = parse_offset_json(text)
    except OffsetJsonError as exc:
        assert "\n" not in str(exc)
        return
    assert all(isinstance(t, str) and p >= 0 and o >= -1 for (t, p), o in parsed.items())
