"""The `kafka-log` data source on real PySpark (local[2]): rows, pushdown, and the differential test.

Every aggregate the Spark queries compute must equal the single-process scanner's on the same data
(generated logs and the real brokers' fixtures).  Spark jobs are slow to start, so each test runs as
few as it can.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kafkatool.ops.scan import ScanSettings, scan
from tests.support.spark import read_directly, spark, write_log_dir  # noqa: F401 - `spark` is a fixture

pytestmark = pytest.mark.spark

SPLIT = 5000  # bytes: the bigger generated segments (5-8 KB) are cut in two (~20 tasks: keep it to a few tests)
BIG = 1 << 20  # a few tasks, each packing several segments


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_log_dir(tmp_path_factory.mktemp("spark") / "logs")


def _options(split: int = BIG, **kw: object):  # type: ignore[no-untyped-def]
    from kafkatool.spark.queries import SourceOptions

    return SourceOptions(split_size=split, **kw)  # type: ignore[arg-type]


def test_record_rows_are_the_decoded_records(spark, logs: Path) -> None:  # noqa: F811
    from kafkatool.slices.planning import discover, plan_slices
    from kafkatool.spark.queries import load

    segments = discover([str(logs)])
    assert len(plan_slices(segments, SPLIT)) > len(segments)  # segments are split
    df = load(spark, [str(logs)], _options(SPLIT))
    assert df.rdd.getNumPartitions() > 4
    got = sorted(
        (r.topic, r.partition, r.segment, r.position, r.base_offset, r.last_offset, r.offset, r.timestamp,
         r.key, r.value, tuple((h.key, h.value) for h in r.headers), r.sequence, r.is_control, r.codec, r.magic)
        for r in df.collect()
    )
    want = sorted(
        (t, p, s, pos, b.base_offset, b.last_offset, r.offset, r.timestamp, r.key, r.value, r.headers, r.sequence,
         b.is_control, ["none", "gzip", "snappy", "lz4", "zstd"][b.codec], b.magic)
        for t, p, s, pos, b, recs in read_directly([logs])
        for r in recs
    )
    assert got == want


def test_batch_rows_need_no_decoding(spark, logs: Path) -> None:  # noqa: F811
    from kafkatool.spark.queries import load

    rows = load(spark, [str(logs)], _options(verify_crc=True), "batch", uncompressedSize="true").collect()
    got = sorted((r.segment, r.position, r.size, r.base_offset, r.last_offset, r.record_count, r.crc, r.crc_valid,
                  r.producer_id, r.is_transactional) for r in rows)
    want = sorted(
        (s, pos, b.size, b.base_offset, b.last_offset, b.count if b.magic >= 2 else (None if b.codec else 1),
         b.crc, True, b.producer_id, b.is_transactional)
        for _t, _p, s, pos, b, _recs in read_directly([logs])
    )
    assert got == want
    assert all(r.uncompressed_size >= (r.size if r.codec == "none" else 0) for r in rows)


def test_differential(spark, logs: Path) -> None:  # noqa: F811
    """Summary, keys and timeline on Spark equal the single-process scan: generated and real logs.

    One run over both (fewer Spark jobs); without the shared fixtures, over the generated logs only.
    Spark plans its own split size here (minPartitions) while the scanner reads whole segments, so
    slicing must not change any result either.
    """
    from kafkatool.spark import queries as q
    from tests.conftest import KAFKA_LOGS

    real = [KAFKA_LOGS / d for d in ("kafka-0.10.2.1", "kafka-2.1.1", "kafka-3.3.1-kraft")]
    paths = [str(logs)] + [str(d) for d in real if d.is_dir()]
    options = q.SourceOptions(min_partitions=3)
    expected = scan(paths, ScanSettings())
    assert q.summary_rows(spark, paths, options) == expected.summary_rows()
    assert q.top_keys_rows(spark, paths, options, 40) == expected.key_rows(40)
    assert q.top_keys_rows(spark, paths, options, 40, "payload_bytes") == expected.key_rows(40, "payload_bytes")
    assert q.rows(q.timeline(spark, paths, options)) == expected.timeline_rows()  # the DataFrame API too
    # segments cut across ~20 tasks: their keys, segments and minima merge across tasks
    assert q.summary_rows(spark, [str(logs)], _options(SPLIT)) == scan([str(logs)]).summary_rows()


def test_approx_summary_is_close(spark, logs: Path) -> None:  # noqa: F811
    from kafkatool.spark import queries as q

    exact = {(r["topic"], r["partition"]): r for r in scan([str(logs)]).summary_rows()}
    for row in q.rows(q.summary(spark, [str(logs)], _options(), approx=True)):
        want = exact[(row["topic"], row["partition"])]
        assert abs(row["distinct_keys"] - want["distinct_keys"]) <= max(2, 0.1 * want["distinct_keys"])
        assert row["reclaimable_bytes"] is None
        assert {k: v for k, v in row.items() if k not in ("distinct_keys", "reclaimable_records", "reclaimable_bytes")} \
            == {k: v for k, v in want.items() if k not in ("distinct_keys", "reclaimable_records", "reclaimable_bytes")}


def test_filters_are_pushed_down_and_still_exact(spark, logs: Path) -> None:  # noqa: F811
    from kafkatool.spark.queries import load

    df = load(spark, [str(logs)], _options(SPLIT))
    since = 1_700_000_000_000 + 40 * 20_000
    where = f"offset >= 150 AND offset <= 260 AND timestamp >= {since} AND topic = 'plain'"
    filtered = df.where(where)
    assert filtered.rdd.getNumPartitions() < df.where("topic = 'plain'").rdd.getNumPartitions()
    got = sorted((r.partition, r.offset, r.key, r.value) for r in filtered.collect())
    want = sorted(
        (p, r.offset, r.key, r.value)
        for t, p, _s, _pos, _b, recs in read_directly([logs])
        for r in recs
        if t == "plain" and 150 <= r.offset <= 260 and r.timestamp >= since
    )
    assert got and got == want


def test_pushdown_bounds() -> None:
    """What each Spark filter lets planning skip (no Spark job: the reader is driven directly)."""
    pytest.importorskip("pyspark")
    from pyspark.sql.datasource import EqualTo, GreaterThan, In, LessThan, StringStartsWith

    from kafkatool.slices.planning import ScanFilter
    from kafkatool.spark.datasource import KafkaLogFilteringReader, ReadOptions

    reader = KafkaLogFilteringReader(ReadOptions(paths=("/x",)), None)  # type: ignore[arg-type]
    filters = [GreaterThan(("offset",), 9), LessThan(("last_offset",), 100), In(("topic",), ("a", "b")),
               EqualTo(("partition",), 3), GreaterThan(("timestamp",), 5), StringStartsWith(("topic",), "a"),
               EqualTo(("key",), b"k")]
    assert list(reader.pushFilters(filters)) == filters  # all still evaluated by Spark
    assert reader.filter == ScanFilter(frozenset({"a", "b"}), frozenset({3}), 10, 99, 6)
    batch = KafkaLogFilteringReader(ReadOptions(paths=("/x",), level="batch"), None)  # type: ignore[arg-type]
    list(batch.pushFilters([GreaterThan(("timestamp",), 5), GreaterThan(("max_timestamp",), 7)]))
    assert batch.filter == ScanFilter(min_timestamp=8)
    from pyspark.sql.datasource import InputPartition

    assert list(batch.read(InputPartition(None))) == []  # what Spark reads when nothing was planned
    # partial aggregates: only topic and partition prune (their last_offset is a result, not a bound)
    partial = KafkaLogFilteringReader(ReadOptions(paths=("/x",), aggregate="summary"), None)  # type: ignore[arg-type]
    pushed = [GreaterThan(("last_offset",), 9), EqualTo(("partition",), 3), EqualTo(("topic",), "a")]
    assert list(partial.pushFilters(pushed)) == pushed
    assert partial.filter == ScanFilter(frozenset({"a"}), frozenset({3}))


def test_options_are_checked() -> None:
    pytest.importorskip("pyspark")
    from kafkatool.slices.planning import ScanInputError
    from kafkatool.spark.datasource import ReadOptions

    opts = ReadOptions.parse({"paths": '["/a", "/b"]', "level": "BATCH", "splitSize": "64m", "topics": "x, y",
                              "minPartitions": "4", "onCorrupt": "skip", "verifyCrc": "true"})
    assert (opts.paths, opts.level, opts.split_size, opts.topics) == (("/a", "/b"), "batch", 64 << 20, {"x", "y"})
    assert (opts.min_partitions, opts.on_corrupt, opts.verify_crc, opts.pushdown) == (4, "skip", True, True)
    assert opts.aggregate is None and ReadOptions.parse({"path": "/a", "aggregate": "Keys"}).aggregate == "keys"
    for bad in ({}, {"path": "/a", "level": "rows"}, {"path": "/a", "splitSize": "big"},
                {"path": "/a", "useIndex": "yes"}, {"path": "/a", "onCorrupt": "ignore"},
                {"path": "/a", "minPartitions": "many"}, {"path": "/a", "aggregate": "records"}):
        with pytest.raises(ScanInputError):
            ReadOptions.parse(bad)


def test_corrupt_data_fails_the_query_with_its_position(spark, kafka_logs: Path) -> None:  # noqa: F811
    from kafkatool.spark.queries import load
    from kafkatool.spark.session import explain_error

    path = [str(kafka_logs / "corrupt" / "v2-crc-flip-0")]
    with pytest.raises(Exception) as err:
        load(spark, path, _options(verify_crc=True)).collect()
    message, code = explain_error(err.value)
    assert code == 1
    assert message.startswith("corrupt data: ") and "00000000000000000000.log: position 641: CRC mismatch" in message
    skipped = load(spark, path, _options(verify_crc=True, on_corrupt="skip")).count()
    rows = read_directly([kafka_logs / "corrupt" / "v2-crc-flip-0"])
    assert skipped == sum(len(r) for _t, _p, s, pos, _b, r in rows if (s.endswith("0000.log"), pos) != (True, 641))


def test_bad_paths_and_options_explain_as_usage_errors(spark, tmp_path: Path) -> None:  # noqa: F811
    from kafkatool.spark.datasource import NAME
    from kafkatool.spark.session import explain_error

    for reader, expect in (
        (spark.read.format(NAME), f"{tmp_path / 'missing'}"),
        (spark.read.format(NAME).option("level", "rows"), "option level: expected record or batch, got 'rows'"),
    ):
        with pytest.raises(Exception) as err:
            reader.load(str(tmp_path / "missing")).collect()
        message, code = explain_error(err.value)
        assert code == 2 and expect in message, message
