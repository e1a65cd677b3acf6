"""The `spark-scan` queries as Spark DataFrames over the `kafka-log` source.

Each query returns the same rows, with the same columns and definitions, as the single-process
scanner in `kafkatool.ops.scan` (see `kafkatool.slices.rows`); the differential tests hold them to that.
The summary reads twice: the batch level gives bytes and batches (empty batches included, nothing
decoded), the record level gives everything about records.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from kafkatool.log.record import CONTROL_ABORT, CONTROL_COMMIT
from kafkatool.slices.planning import DEFAULT_SPLIT_SIZE
from kafkatool.slices.rows import KEYS_ORDER, MINUTE_MS, SUMMARY_COLUMNS
from kafkatool.spark.datasource import NAME, register


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


def _payload() -> Column:
    return F.coalesce(F.length("key"), F.lit(0)) + F.coalesce(F.length("value"), F.lit(0))


def _control_type(col: str = "key") -> Column:
    """Type field (bytes 2-3, signed) of a control record key; null when the key is too short."""
    k = F.col(col)
    return F.when(
        F.length(k) >= 4,
        F.conv(F.hex(F.substring(k, 3, 2)), 16, 10).cast("int"),
    )


def summary(spark: SparkSession, paths: Sequence[str], options: SourceOptions = SourceOptions(),
            approx: bool = False) -> DataFrame:
    """One row per topic-partition (columns `kafkatool.slices.rows.SUMMARY_COLUMNS`).

    With approx, distinct keys come from HyperLogLog (approx_count_distinct) and the reclaim
    estimate is records minus that (no bytes): no shuffle by key, for very large logs.
    """
    tp = ["topic", "partition"]
    batches = load(spark, paths, options, "batch", uncompressedSize="true").groupBy(*tp).agg(
        F.countDistinct("segment").alias("segments"),
        F.count(F.lit(1)).alias("batches"),
        F.sum(F.col("size").cast("long")).alias("bytes"),
        F.sum("uncompressed_size").alias("uncompressed_bytes"),
        F.min("base_offset").alias("min_base_offset"),
        F.max("last_offset").alias("last_offset"),
    )
    records = load(spark, paths, options, "record").withColumn("payload", _payload())
    per_record = _per_record_approx(records) if approx else _per_record_exact(records)
    joined = batches.join(per_record, tp, "full_outer")
    zero = F.lit(0).cast("long")
    counts = ("segments", "batches", "records", "bytes", "uncompressed_bytes", "keyed_records", "keyless_records",
              "distinct_keys", "tombstones", "txn_markers", "txn_aborts", "reclaimable_records")
    out = joined
    for c in counts:
        out = out.withColumn(c, F.coalesce(F.col(c).cast("long"), zero))
    if not approx:
        out = out.withColumn("reclaimable_bytes", F.coalesce(F.col("reclaimable_bytes").cast("long"), zero))
    out = out.withColumn(
        "compression_ratio",
        F.when(F.col("bytes") > 0, F.col("uncompressed_bytes").cast("double") / F.col("bytes").cast("double")),
    ).withColumn("first_offset", F.coalesce("min_record_offset", "min_base_offset"))
    return _sorted(out.select(*SUMMARY_COLUMNS), *tp)


def _record_measures(control: Column, keyed: Column) -> list[Column]:
    """Aggregates shared by both summary variants, over rows holding the columns of the records view."""
    data = ~control
    ctype = _control_type()
    stamp = F.when(F.col("timestamp") >= 0, F.col("timestamp"))
    return [
        F.count(F.lit(1)).alias("records"),
        F.min("offset").alias("min_record_offset"),
        F.min(stamp).alias("min_timestamp"),
        F.max(stamp).alias("max_timestamp"),
        F.count(F.when(keyed, 1)).alias("keyed_records"),
        F.count(F.when(data & F.col("key").isNull(), 1)).alias("keyless_records"),
        F.count(F.when(data & F.col("value").isNull(), 1)).alias("tombstones"),
        F.count(F.when(control & ctype.isin(CONTROL_ABORT, CONTROL_COMMIT), 1)).alias("txn_markers"),
        F.count(F.when(control & (ctype == CONTROL_ABORT), 1)).alias("txn_aborts"),
    ]


def _per_record_approx(records: DataFrame) -> DataFrame:
    keyed = ~F.col("is_control") & F.col("key").isNotNull()
    out = records.groupBy("topic", "partition").agg(
        *_record_measures(F.col("is_control"), keyed),
        F.approx_count_distinct(F.when(keyed, F.col("key"))).alias("distinct_keys"),
    )
    return out.withColumn(
        "reclaimable_records", F.greatest(F.col("keyed_records") - F.col("distinct_keys"), F.lit(0))
    ).withColumn("reclaimable_bytes", F.lit(None).cast("long"))


def _per_record_exact(records: DataFrame) -> DataFrame:
    """Record aggregates with exact distinct keys and reclaim, from one scan.

    Records are first grouped by (topic, partition, is_control, key): partial aggregation keeps the
    shuffle to one row per key and task.  Keyless data records form one group per partition.
    """
    tp = ["topic", "partition"]
    keyed = ~F.col("is_control") & F.col("key").isNotNull()  # a row, then a group, of keyed data records
    per_key = records.groupBy(*tp, "is_control", "key").agg(
        *_record_measures(F.col("is_control"), keyed),
        F.sum("payload").alias("payload"),
        F.max(F.struct("offset", "payload")).alias("latest"),
    )
    return per_key.groupBy(*tp).agg(
        F.sum("records").alias("records"),
        F.min("min_record_offset").alias("min_record_offset"),
        F.min("min_timestamp").alias("min_timestamp"),
        F.max("max_timestamp").alias("max_timestamp"),
        *[F.sum(c).alias(c) for c in ("keyed_records", "keyless_records", "tombstones", "txn_markers", "txn_aborts")],
        F.count(F.when(keyed, 1)).alias("distinct_keys"),
        F.sum(F.when(keyed, F.col("records") - 1)).alias("reclaimable_records"),
        F.sum(F.when(keyed, F.col("payload") - F.col("latest.payload"))).alias("reclaimable_bytes"),
    )


def top_keys(records: DataFrame, top: int = 20, by: str = "records") -> DataFrame:
    """Top keys of data records by count (or payload bytes), per topic, ties by topic then key."""
    if by not in KEYS_ORDER:
        raise ValueError(f"by must be one of {', '.join(KEYS_ORDER)}, got {by!r}")
    other = "payload_bytes" if by == "records" else "records"
    agg = (
        records.where(~F.col("is_control") & F.col("key").isNotNull())
        .withColumn("payload", _payload())
        .groupBy("topic", "key")
        .agg(
            F.count(F.lit(1)).alias("records"),
            F.sum("payload").cast("long").alias("payload_bytes"),
            F.count(F.when(F.col("value").isNull(), 1)).alias("tombstones"),
        )
    )
    return agg.orderBy(F.desc(by), F.desc(other), F.asc("topic"), F.asc("key")).limit(top)


def timeline(records: DataFrame) -> DataFrame:
    """Data records and payload bytes per topic and minute (null minute: records without a timestamp)."""
    minute = F.when(F.col("timestamp") >= 0, F.col("timestamp") - F.col("timestamp") % MINUTE_MS)
    out = (
        records.where(~F.col("is_control"))
        .withColumn("payload", _payload())
        .groupBy("topic", minute.alias("minute_ms"))
        .agg(F.count(F.lit(1)).alias("records"), F.sum("payload").cast("long").alias("payload_bytes"))
    )
    return _sorted(out, F.asc("topic"), F.asc_nulls_first("minute_ms"))


def register_views(spark: SparkSession, paths: Sequence[str], options: SourceOptions = SourceOptions()) -> None:
    """Temporary views `records` and `batches` over paths, for SQL."""
    load(spark, paths, options, "record").createOrReplaceTempView("records")
    load(spark, paths, options, "batch").createOrReplaceTempView("batches")


def rows(df: DataFrame) -> list[dict[str, Any]]:
    """Collect a result as plain dicts (nested rows and bytes kept as Python values)."""
    return [r.asDict(recursive=True) for r in df.collect()]
