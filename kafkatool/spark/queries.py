"""The `spark-scan` queries as Spark DataFrames over the `kafka-log` source.

Each query returns the same rows, with the same columns and definitions, as the single-process
scanner in `kafkatool.ops.scan` (see `kafkatool.slices.rows`); the differential tests hold them to that.
The three queries read the source once with its `aggregate` option: every task runs the single-process
scanner's accumulator over its slices and hands Spark only its partial sums (per segment, key or
minute), which Spark merges.  Handing Spark every record instead (20 columns, values and headers
included, through Arrow into the JVM) cost several times the decoding itself.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from kafkatool.slices.planning import DEFAULT_SPLIT_SIZE
from kafkatool.slices.rows import KEYS_COLUMNS, KEYS_ORDER, SUMMARY_COLUMNS, TIMELINE_COLUMNS
from kafkatool.spark.datasource import NAME, PARTITION_COUNTERS, PARTITION_MAXIMA, PARTITION_MINIMA, register


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


def _partial(spark: SparkSession, paths: Sequence[str], options: SourceOptions, query: str) -> DataFrame:
    """Each task's partial aggregates for `query` (the data source's aggregate option)."""
    return load(spark, paths, options, aggregate=query)


def summary(spark: SparkSession, paths: Sequence[str], options: SourceOptions = SourceOptions(),
            approx: bool = False) -> DataFrame:
    """One row per topic-partition (columns `kafkatool.slices.rows.SUMMARY_COLUMNS`).

    One scan: each task sums its slices in Python (the single-process engine's accumulator) into one
    row per segment and one per distinct key of its data records; Spark merges those by key, then
    by partition.  With approx, distinct keys come from HyperLogLog over the per-task keys and the
    reclaim estimate is keyed records minus that (no bytes): no shuffle by key, for very large logs.
    """
    tp = ["topic", "partition"]
    parts = _partial(spark, paths, options, "summary")
    if approx:
        merged = parts.groupBy(*tp).agg(
            F.size(F.collect_set("segment")).alias("segments"),
            *_partition_measures(),
            F.approx_count_distinct("key").alias("distinct_keys"),
        )
        merged = merged.withColumn(
            "reclaimable_records", F.greatest(F.col("keyed_records") - F.col("distinct_keys"), F.lit(0))
        ).withColumn("reclaimable_bytes", F.lit(None).cast("long"))
    else:
        # grouping by segment too keeps each segment once; key rows have no segment, segment rows no key
        per_key = parts.groupBy(*tp, "segment", "key").agg(
            *_partition_measures(),
            F.sum("key_records").alias("key_records"),
            F.sum("key_payload").alias("key_payload"),
            F.max(_latest()).alias("latest"),
        )
        merged = per_key.groupBy(*tp).agg(
            F.count("segment").alias("segments"),
            *_partition_measures(),
            F.count("key").alias("distinct_keys"),
            F.sum(F.col("key_records") - 1).alias("reclaimable_records"),
            F.sum(F.col("key_payload") - (F.col("latest") % _PAYLOAD_SPAN).cast("long")).alias("reclaimable_bytes"),
        )
    zero = F.lit(0).cast("long")
    out = merged
    for c in ("segments", *PARTITION_COUNTERS, "distinct_keys", "reclaimable_records",
              *(() if approx else ("reclaimable_bytes",))):
        out = out.withColumn(c, F.coalesce(F.col(c).cast("long"), zero))
    out = out.withColumn(
        "compression_ratio",
        F.when(F.col("bytes") > 0, F.col("uncompressed_bytes").cast("double") / F.col("bytes").cast("double")),
    ).withColumn("first_offset", F.coalesce("min_record_offset", "min_base_offset"))
    return _sorted(out.select(*SUMMARY_COLUMNS), *tp)


_PAYLOAD_SPAN = 1 << 32  # above any record's payload bytes (a batch is at most 2 GiB)


def _latest() -> Column:
    """(offset, payload) of a key's latest record as one number ordered like the pair, so the merge by
    key stays a hash aggregation (a max over a struct makes Spark sort every key instead)."""
    return F.col("latest_offset").cast("decimal(38,0)") * F.lit(_PAYLOAD_SPAN) + F.col("latest_payload")


def _partition_measures() -> list[Column]:
    """Counters summed, minima and maxima merged: the same at every merge step."""
    return [
        *[F.sum(c).alias(c) for c in PARTITION_COUNTERS],
        *[F.min(c).alias(c) for c in PARTITION_MINIMA],
        *[F.max(c).alias(c) for c in PARTITION_MAXIMA],
    ]


def top_keys(spark: SparkSession, paths: Sequence[str], options: SourceOptions = SourceOptions(), top: int = 20,
             by: str = "records") -> DataFrame:
    """Top keys of data records by count (or payload bytes), per topic, ties by topic then key."""
    if by not in KEYS_ORDER:
        raise ValueError(f"by must be one of {', '.join(KEYS_ORDER)}, got {by!r}")
    other = "payload_bytes" if by == "records" else "records"
    agg = _partial(spark, paths, options, "keys").groupBy("topic", "key").agg(
        *[F.sum(c).cast("long").alias(c) for c in ("records", "payload_bytes", "tombstones")]
    )
    return agg.orderBy(F.desc(by), F.desc(other), F.asc("topic"), F.asc("key")).limit(top).select(*KEYS_COLUMNS)


def timeline(spark: SparkSession, paths: Sequence[str], options: SourceOptions = SourceOptions()) -> DataFrame:
    """Data records and payload bytes per topic and minute (null minute: records without a timestamp)."""
    out = _partial(spark, paths, options, "timeline").groupBy("topic", "minute_ms").agg(
        *[F.sum(c).cast("long").alias(c) for c in ("records", "payload_bytes")]
    )
    return _sorted(out.select(*TIMELINE_COLUMNS), F.asc("topic"), F.asc_nulls_first("minute_ms"))


def register_views(spark: SparkSession, paths: Sequence[str], options: SourceOptions = SourceOptions()) -> None:
    """Temporary views `records` and `batches` over paths, for SQL."""
    load(spark, paths, options, "record").createOrReplaceTempView("records")
    load(spark, paths, options, "batch").createOrReplaceTempView("batches")


def rows(df: DataFrame) -> list[dict[str, Any]]:
    """Collect a result as plain dicts (nested rows and bytes kept as Python values)."""
    return [r.asDict(recursive=True) for r in df.collect()]
