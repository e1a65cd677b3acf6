"""The `spark-scan` queries on Spark: summary, top keys and timeline as rows or DataFrames, and the SQL views.

Each query returns the same rows, with the same columns and definitions, as the single-process
scanner in `kafkatool.ops.scan` (see `kafkatool.slices.rows`); the differential tests hold them to that.
The exact queries run as plain RDD jobs (`kafkatool.spark.partials`: every task runs the single-process
scanner's accumulator over its slices, keys cross tasks only where a partition or topic was split);
the SQL views `records` and `batches` and the `--approx` summary read the `kafka-log` data source.
Going through Spark SQL for the exact queries cost 4-5x the tasks' own work (issue 14's profile).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pyspark import SparkContext
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import (
    BinaryType,
    DoubleType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
)

from kafkatool.ops.scan import ScanSettings
from kafkatool.slices.planning import DEFAULT_SPLIT_SIZE, NO_FILTER, ScanFilter, plan_tasks
from kafkatool.slices.rows import KEYS_COLUMNS, KEYS_ORDER, SUMMARY_COLUMNS, TIMELINE_COLUMNS
from kafkatool.spark import partials
from kafkatool.spark.datasource import NAME, PARTITION_COUNTERS, PARTITION_MAXIMA, PARTITION_MINIMA, register
from kafkatool.spark.session import context_of


@dataclass(frozen=True)
class SourceOptions:
    """The data source options a query reads with."""

    split_size: int = DEFAULT_SPLIT_SIZE
    min_partitions: int | None = None
    on_corrupt: str = "fail"
    verify_crc: bool = False
    use_index: bool = True
    topics: tuple[str, ...] = ()

    def as_options(self) -> dict[str, str]:
        opts = {
            "splitSize": str(self.split_size),
            "onCorrupt": self.on_corrupt,
            "verifyCrc": str(self.verify_crc).lower(),
            "useIndex": str(self.use_index).lower(),
        }
        if self.min_partitions:
            opts["minPartitions"] = str(self.min_partitions)
        if self.topics:
            opts["topics"] = ",".join(self.topics)
        return opts


def load(
    spark: SparkSession, paths: Sequence[str], options: SourceOptions = SourceOptions(), level: str = "record",
    **extra: str,
) -> DataFrame:
    """`spark.read.format("kafka-log")` with these options (registers the source if needed)."""
    register(spark)
    return spark.read.format(NAME).options(**options.as_options(), level=level, **extra).load(list(paths))


def _sorted(df: DataFrame, *order: str | Column) -> DataFrame:
    """Sort a small result in one partition (orderBy would first run a sampling job for ranges)."""
    return df.coalesce(1).sortWithinPartitions(*order)


def scan_settings(options: SourceOptions) -> ScanSettings:
    """The single-process engine's settings for these source options (the tasks read with them)."""
    flt = ScanFilter(topics=frozenset(options.topics)) if options.topics else NO_FILTER
    return ScanSettings(split_size=options.split_size, flt=flt, on_corrupt=options.on_corrupt,
                        verify_crc=options.verify_crc, use_index=options.use_index)


def _run(spark: SparkSession | SparkContext, paths: Sequence[str], options: SourceOptions, query: str, top: int = 20,
         by: str = "records") -> list[dict[str, Any]]:
    """One query as an RDD job (`kafkatool.spark.partials`): planned here, merged by key only if split."""
    settings = scan_settings(options)
    groups = plan_tasks(paths, settings.split_size, settings.flt, settings.use_index, options.min_partitions)
    split = partials.split_units(groups, query)
    return partials.run(context_of(spark), groups, partials.Job(query, settings, split, top, by))


def summary_rows(spark: SparkSession | SparkContext, paths: Sequence[str], options: SourceOptions = SourceOptions()
                 ) -> list[dict[str, Any]]:
    """One row per topic-partition, as `kafkatool.ops.scan.Scan.summary_rows` (exact distinct keys)."""
    return _run(spark, paths, options, "summary")


def top_keys_rows(spark: SparkSession | SparkContext, paths: Sequence[str], options: SourceOptions = SourceOptions(),
                  top: int = 20, by: str = "records") -> list[dict[str, Any]]:
    """Top keys of data records by count (or payload bytes), ties by topic then key, as `Scan.key_rows`."""
    if by not in KEYS_ORDER:
        raise ValueError(f"by must be one of {', '.join(KEYS_ORDER)}, got {by!r}")
    return _run(spark, paths, options, "keys", top, by)


def timeline_rows(spark: SparkSession | SparkContext, paths: Sequence[str], options: SourceOptions = SourceOptions()
                  ) -> list[dict[str, Any]]:
    """Data records and payload bytes per topic and minute, as `Scan.timeline_rows`."""
    return _run(spark, paths, options, "timeline")


SUMMARY_SCHEMA = StructType(
    [StructField("topic", StringType()), StructField("partition", IntegerType())]
    + [StructField(c, DoubleType() if c == "compression_ratio" else LongType()) for c in SUMMARY_COLUMNS[2:]]
)
KEYS_SCHEMA = StructType([StructField("topic", StringType()), StructField("key", BinaryType())]
                         + [StructField(c, LongType()) for c in KEYS_COLUMNS[2:]])
TIMELINE_SCHEMA = StructType([StructField("topic", StringType())]
                             + [StructField(c, LongType()) for c in TIMELINE_COLUMNS[1:]])


SCHEMAS = {"summary": SUMMARY_SCHEMA, "keys": KEYS_SCHEMA, "timeline": TIMELINE_SCHEMA}


def frame(spark: SparkSession, query: str, rows: list[dict[str, Any]]) -> DataFrame:
    """One query's result rows as a one-partition DataFrame (for `--output` and users' own Spark code)."""
    schema = SCHEMAS[query]
    names = schema.fieldNames()
    return spark.createDataFrame([tuple(r[n] for n in names) for r in rows], schema).coalesce(1)


def summary(spark: SparkSession, paths: Sequence[str], options: SourceOptions = SourceOptions(),
            approx: bool = False) -> DataFrame:
    """One row per topic-partition (columns `kafkatool.slices.rows.SUMMARY_COLUMNS`).

    Exact: `summary_rows` (computed when called) as a DataFrame.  With approx, distinct keys come from
    HyperLogLog over each task's keys (the data source's `aggregate=summary` rows) and the reclaim
    estimate is keyed records minus that (no bytes): no key crosses tasks, for very large logs.
    """
    if not approx:
        return frame(spark, "summary", summary_rows(spark, paths, options))
    tp = ["topic", "partition"]
    parts = load(spark, paths, options, aggregate="summary")
    merged = parts.groupBy(*tp).agg(
        F.size(F.collect_set("segment")).alias("segments"),
        *_partition_measures(),
        F.approx_count_distinct("key").alias("distinct_keys"),
    )
    merged = merged.withColumn(
        "reclaimable_records", F.greatest(F.col("keyed_records") - F.col("distinct_keys"), F.lit(0))
    ).withColumn("reclaimable_bytes", F.lit(None).cast("long"))
    zero = F.lit(0).cast("long")
    out = merged
    for c in ("segments", *PARTITION_COUNTERS, "distinct_keys", "reclaimable_records"):
        out = out.withColumn(c, F.coalesce(F.col(c).cast("long"), zero))
    out = out.withColumn(
        "compression_ratio",
        F.when(F.col("bytes") > 0, F.col("uncompressed_bytes").cast("double") / F.col("bytes").cast("double")),
    ).withColumn("first_offset", F.coalesce("min_record_offset", "min_base_offset"))
    return _sorted(out.select(*SUMMARY_COLUMNS), *tp)


def _partition_measures() -> list[Column]:
    """Counters summed, minima and maxima merged over a partition's partial rows."""
    return [
        *[F.sum(c).alias(c) for c in PARTITION_COUNTERS],
        *[F.min(c).alias(c) for c in PARTITION_MINIMA],
        *[F.max(c).alias(c) for c in PARTITION_MAXIMA],
    ]


def top_keys(spark: SparkSession, paths: Sequence[str], options: SourceOptions = SourceOptions(), top: int = 20,
             by: str = "records") -> DataFrame:
    """`top_keys_rows` (computed when called) as a DataFrame."""
    return frame(spark, "keys", top_keys_rows(spark, paths, options, top, by))


def timeline(spark: SparkSession, paths: Sequence[str], options: SourceOptions = SourceOptions()) -> DataFrame:
    """`timeline_rows` (computed when called) as a DataFrame."""
    return frame(spark, "timeline", timeline_rows(spark, paths, options))


def register_views(spark: SparkSession, paths: Sequence[str], options: SourceOptions = SourceOptions()) -> None:
    """Temporary views `records` and `batches` over paths, for SQL."""
    load(spark, paths, options, "record").createOrReplaceTempView("records")
    load(spark, paths, options, "batch").createOrReplaceTempView("batches")


def rows(df: DataFrame) -> list[dict[str, Any]]:
    """Collect a result as plain dicts (nested rows and bytes kept as Python values)."""
    return [r.asDict(recursive=True) for r in df.collect()]
