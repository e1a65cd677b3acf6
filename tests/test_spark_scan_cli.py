"""`kafkatool spark-scan`: output formats, SQL, writing results, and one-line errors with exit codes.

Commands run in-process and reuse the test session's SparkSession (a command stops only a session it
started); input errors are caught before Spark starts, and one test runs the real console script.
"""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kafkatool.cli.main import full_app
from kafkatool.ops.scan import scan
from tests.support.spark import spark, write_log_dir  # noqa: F401 - `spark` is a fixture

runner = CliRunner()
app = full_app()


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_log_dir(tmp_path_factory.mktemp("cli") / "logs", seed=11, batches=30)


def _run(*args: str):  # type: ignore[no-untyped-def]
    return runner.invoke(app, ["spark-scan", *args, "--quiet"])


@pytest.mark.spark
def test_summary_json_matches_the_local_engine(spark, logs: Path) -> None:  # noqa: F811
    result = _run(str(logs), "--format", "json")
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)
    assert rows == scan([str(logs)]).summary_rows()
    assert {"topic", "partition", "records", "bytes", "first_offset", "last_offset"} <= set(rows[0])
    local = _run(str(logs), "--engine", "local", "--format", "json")
    assert local.exit_code == 0 and json.loads(local.stdout) == rows


@pytest.mark.spark
def test_keys_and_timeline_print_text_and_iso_minutes(spark, logs: Path) -> None:  # noqa: F811
    keys = _run(str(logs), "--query", "keys", "--topic", "plain", "--top", "3", "--by", "payload_bytes",
                "--format", "json")
    assert keys.exit_code == 0, keys.output
    got = json.loads(keys.stdout)
    acc = scan([str(logs)])
    want = [r for r in acc.key_rows(10_000, by="payload_bytes") if r["topic"] == "plain"][:3]
    assert [(r["key"], r["key_hex"], r["records"]) for r in got] == [
        (r["key"].decode(), r["key"].hex(), r["records"]) for r in want
    ]
    timeline = _run(str(logs), "--query", "timeline", "--format", "csv", "--engine", "local")
    assert timeline.exit_code == 0, timeline.output
    table = list(csv.DictReader(io.StringIO(timeline.stdout)))
    assert table[0].keys() == {"topic", "minute", "minute_ms", "records", "payload_bytes"}
    stamped = [r for r in table if r["minute_ms"]]
    assert stamped[0]["minute"].endswith("Z") and stamped[0]["minute"].startswith("2023-11-14T22:")


@pytest.mark.spark
def test_sql_over_the_records_view(spark, logs: Path) -> None:  # noqa: F811
    sql = ("SELECT topic, count(*) AS n, max(offset) AS last FROM records "
           "WHERE offset >= 10 AND NOT is_control GROUP BY topic ORDER BY topic")
    result = _run(str(logs), "--sql", sql, "--format", "json")
    assert result.exit_code == 0, result.output
    want: dict[str, list[int]] = {}
    from tests.support.spark import read_directly

    for t, _p, _s, _pos, b, recs in read_directly([logs]):
        for r in recs:
            if r.offset >= 10 and not b.is_control:
                n = want.setdefault(t, [0, 0])
                n[0] += 1
                n[1] = max(n[1], r.offset)
    assert json.loads(result.stdout) == [{"topic": t, "n": n, "last": last} for t, (n, last) in sorted(want.items())]
    bad = _run(str(logs), "--sql", "SELECT nope FROM records")
    assert bad.exit_code == 2
    assert bad.stderr.startswith("kafkatool: SQL: ") and len(bad.stderr.strip().splitlines()) == 1


@pytest.mark.spark
def test_output_directory(spark, logs: Path, tmp_path: Path) -> None:  # noqa: F811
    import pyarrow.parquet as pq

    out = tmp_path / "timeline"
    result = _run(str(logs), "--query", "timeline", "--output", str(out))
    assert result.exit_code == 0, result.output
    assert result.stdout == ""
    table = pq.read_table(out).to_pylist()
    assert table == scan([str(logs)]).timeline_rows()
    again = _run(str(logs), "--output", str(out))
    assert again.exit_code == 2 and "already exists (--overwrite replaces it)" in again.stderr


@pytest.mark.spark
def test_corruption_is_a_finding(spark, kafka_logs: Path) -> None:  # noqa: F811
    path = str(kafka_logs / "corrupt" / "v2-length-flip-0")
    result = _run(path, "--split-size", "2048", "--query", "timeline")
    assert result.exit_code == 1
    assert result.stderr == (
        f"kafkatool: corrupt data: {path}/00000000000000000000.log: position 1089: batch size 1073742168 runs "
        "past the end of the file (3939 bytes) (--on-corrupt skip reads past it)\n"
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["{missing}"], "{missing}: no such file or directory"),
        (["{logs}", "--query", "everything"], "--query: 'everything' is not one of summary, keys, timeline, sql"),
        (["{logs}", "--query", "sql"], "--query sql needs --sql"),
        (["{logs}", "--engine", "local", "--sql", "SELECT 1"], "--engine local computes summary, keys and timeline"),
        (["{logs}", "--split-size", "huge"], "'huge' is not a size"),
        (["{logs}", "--topic", "nope"], "--topic: no segments of nope under"),
        (["{logs}", "--spark-conf", "novalue"], "--spark-conf: 'novalue' is not KEY=VALUE"),
        (["{logs}", "--format", "xml"], "--format: 'xml' is not one of table, json, ndjson, csv"),
        (["{logs}/plain-0/00000000000000000000.index"], "not a segment file"),
    ],
)
def test_input_errors_exit_2_before_spark_starts(logs: Path, tmp_path: Path, args: list[str], message: str) -> None:
    subst = {"logs": str(logs), "missing": str(tmp_path / "missing")}
    result = _run(*[a.format(**subst) for a in args])
    assert result.exit_code == 2
    assert result.stderr.startswith("kafkatool: ") and message.format(**subst) in result.stderr
    assert len(result.stderr.splitlines()) == 1


def test_console_script_help_and_errors(tmp_path: Path) -> None:
    help_text = subprocess.run([sys.executable, "-m", "kafkatool", "spark-scan", "--help"],
                               capture_output=True, text=True, timeout=60)
    assert help_text.returncode == 0 and "Examples:" in help_text.stdout and "--split-size" in help_text.stdout
    missing = subprocess.run([sys.executable, "-m", "kafkatool", "spark-scan", str(tmp_path / "nothing")],
                             capture_output=True, text=True, timeout=60)
    assert missing.returncode == 2
    assert missing.stderr == f"kafkatool: {tmp_path / 'nothing'}: no such file or directory\n"
