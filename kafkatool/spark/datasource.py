"""The `kafka-log` PySpark data source: raw Kafka segment files as a DataFrame.

    from kafkatool.spark.datasource import register
    register(spark)
    df = spark.read.format("kafka-log").load(["/data/kafka-logs", "s3://backups/kafka/orders-3"])
    batches = spark.read.format("kafka-log").option("level", "batch").load("/data/kafka-logs")

Planning (driver) discovers segments and cuts them into slices on batch boundaries
(`kafkatool.slices.planning`); each task reads its slices with `kafkatool.slices.reading`, decodes with
`kafkatool.log`, and hands Spark Arrow record batches.  Offset, timestamp, topic and partition filters
are pushed down to prune segments and start positions; Spark still applies every filter exactly.

Options (case-insensitive):
  level            record (default: one row per record) or batch (one row per batch, no decompression)
  splitSize        target bytes per task, e.g. 134217728, 128m, 64MiB (default 128 MiB)
  minPartitions    shrink splitSize so at least this many slices exist (default: none)
  useIndex         true (default) / false: use .index/.timeindex files to split and prune
  onCorrupt        fail (default: the query fails naming file and position) or skip (skip damaged
                   batches; a broken size field ends that slice)
  verifyCrc        false (default) / true: check every batch's CRC
  uncompressedSize false (default) / true: level=batch fills uncompressed_size (decompresses)
  topics           comma-separated topics to read (same as a pushed-down topic filter)
  filterPushdown   true (default) / false: needs spark.sql.python.filterPushdown.enabled=true when true
  aggregate        summary, keys or timeline: instead of records, each task's partial aggregates for that
                   query (computed in Python by `kafkatool.ops.scan.Scan`, merged by
                   `kafkatool.spark.queries`): no per-record row crosses into the JVM
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from pyspark.sql.datasource import (
    DataSource,
    DataSourceReader,
    EqualTo,
    GreaterThan,
    GreaterThanOrEqual,
    In,
    InputPartition,
    LessThan,
    LessThanOrEqual,
)
from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    BooleanType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
)

from kafkatool.log.codecs import Codec
from kafkatool.log.record import TIMESTAMP_TYPE_NAMES
from kafkatool.sizes import SizeError, parse_size
from kafkatool.slices.planning import (
    DEFAULT_SPLIT_SIZE,
    NO_FILTER,
    ScanFilter,
    ScanInputError,
    Slice,
    plan_tasks,
)
from kafkatool.slices.reading import check_policy, decode_records, read_slice, uncompressed_size

NAME = "kafka-log"
LEVELS = ("record", "batch")
AGGREGATES = ("summary", "keys", "timeline")
ROWS_PER_ARROW_BATCH = 65536
BYTES_PER_ARROW_BATCH = 32 * 1024 * 1024

HEADER_TYPE = ArrayType(StructType([StructField("key", StringType()), StructField("value", BinaryType())]))

RECORD_SCHEMA = StructType(
    [
        StructField("topic", StringType()),
        StructField("partition", IntegerType()),
        StructField("offset", LongType()),
        StructField("timestamp", LongType()),
        StructField("timestamp_type", StringType()),
        StructField("key", BinaryType()),
        StructField("value", BinaryType()),
        StructField("headers", HEADER_TYPE),
        StructField("base_offset", LongType()),
        StructField("last_offset", LongType()),
        StructField("magic", IntegerType()),
        StructField("codec", StringType()),
        StructField("producer_id", LongType()),
        StructField("producer_epoch", IntegerType()),
        StructField("sequence", IntegerType()),
        StructField("is_transactional", BooleanType()),
        StructField("is_control", BooleanType()),
        StructField("partition_leader_epoch", IntegerType()),
        StructField("segment", StringType()),
        StructField("position", LongType()),
    ]
)

BATCH_SCHEMA = StructType(
    [
        StructField("topic", StringType()),
        StructField("partition", IntegerType()),
        StructField("segment", StringType()),
        StructField("position", LongType()),
        StructField("size", IntegerType()),
        StructField("base_offset", LongType()),
        StructField("last_offset", LongType()),
        StructField("record_count", IntegerType()),
        StructField("magic", IntegerType()),
        StructField("codec", StringType()),
        StructField("timestamp_type", StringType()),
        StructField("base_timestamp", LongType()),
        StructField("max_timestamp", LongType()),
        StructField("producer_id", LongType()),
        StructField("producer_epoch", IntegerType()),
        StructField("base_sequence", IntegerType()),
        StructField("last_sequence", IntegerType()),
        StructField("is_transactional", BooleanType()),
        StructField("is_control", BooleanType()),
        StructField("partition_leader_epoch", IntegerType()),
        StructField("crc", LongType()),
        StructField("crc_valid", BooleanType()),
        StructField("uncompressed_size", LongType()),
    ]
)

# aggregate=summary: per task, one row per (topic, partition, segment read) -- the first of a partition's
# rows carries its counters, the others only name a segment (segments are counted distinct when merged) --
# and one row per (topic, partition, key) of data records (key null on the segment rows).
PARTITION_COUNTERS = ("batches", "records", "bytes", "uncompressed_bytes", "keyed_records", "keyless_records",
                      "tombstones", "txn_markers", "txn_aborts")
PARTITION_MINIMA = ("min_record_offset", "min_base_offset", "min_timestamp")
PARTITION_MAXIMA = ("last_offset", "max_timestamp")
SUMMARY_PARTIAL_SCHEMA = StructType(
    [StructField("topic", StringType()), StructField("partition", IntegerType()),
     StructField("segment", StringType()), StructField("key", BinaryType())]
    + [StructField(c, LongType()) for c in (*PARTITION_COUNTERS, *PARTITION_MINIMA, *PARTITION_MAXIMA)]
    + [StructField(c, LongType()) for c in ("key_records", "key_payload", "latest_offset", "latest_payload")]
)
# aggregate=keys / timeline: one row per (topic, key) / (topic, minute) per task, summed when merged
KEYS_PARTIAL_SCHEMA = StructType(
    [StructField("topic", StringType()), StructField("key", BinaryType())]
    + [StructField(c, LongType()) for c in ("records", "payload_bytes", "tombstones")]
)
TIMELINE_PARTIAL_SCHEMA = StructType(
    [StructField("topic", StringType()), StructField("minute_ms", LongType())]
    + [StructField(c, LongType()) for c in ("records", "payload_bytes")]
)
PARTIAL_SCHEMAS = {"summary": SUMMARY_PARTIAL_SCHEMA, "keys": KEYS_PARTIAL_SCHEMA,
                   "timeline": TIMELINE_PARTIAL_SCHEMA}

_CODEC_NAMES = {int(c): c.label for c in Codec}
_OFFSET_COLUMNS = {"offset", "base_offset", "last_offset"}
_TIMESTAMP_COLUMNS = {"record": "timestamp", "batch": "max_timestamp"}


def _flag(options: dict[str, str], name: str, default: bool) -> bool:
    raw = options.get(name.lower())
    if raw is None:
        return default
    value = str(raw).strip().lower()
    if value not in ("true", "false"):
        raise ScanInputError(f"option {name}: expected true or false, got {raw!r}")
    return value == "true"


@dataclass(frozen=True)
class ReadOptions:
    """The data source options, parsed and checked once on the driver."""

    paths: tuple[str, ...]
    level: str = "record"
    split_size: int = DEFAULT_SPLIT_SIZE
    min_partitions: int | None = None
    use_index: bool = True
    on_corrupt: str = "fail"
    verify_crc: bool = False
    uncompressed_size: bool = False
    topics: frozenset[str] | None = None
    pushdown: bool = True
    aggregate: str | None = None

    @property
    def schema(self) -> StructType:
        if self.aggregate is not None:
            return PARTIAL_SCHEMAS[self.aggregate]
        return BATCH_SCHEMA if self.level == "batch" else RECORD_SCHEMA

    @classmethod
    def parse(cls, options: Any) -> ReadOptions:
        opts = {str(k).lower(): v for k, v in dict(options).items()}
        if "paths" in opts:
            paths = tuple(json.loads(opts["paths"]))
        elif "path" in opts:
            paths = (opts["path"],)
        else:
            raise ScanInputError("kafka-log: give the log dirs, partition dirs or segment files to load()")
        level = opts.get("level", "record").lower()
        if level not in LEVELS:
            raise ScanInputError(f"option level: expected record or batch, got {opts['level']!r}")
        min_parts = opts.get("minpartitions")
        if min_parts is not None and not str(min_parts).strip().isdigit():
            raise ScanInputError(f"option minPartitions: expected a whole number, got {min_parts!r}")
        try:
            on_corrupt = check_policy(opts.get("oncorrupt", "fail").lower())
        except ValueError as exc:
            raise ScanInputError(f"option onCorrupt: {exc}") from None
        try:
            split_size = parse_size(opts.get("splitsize", DEFAULT_SPLIT_SIZE))
        except SizeError as exc:
            raise ScanInputError(f"option splitSize: {exc}") from None
        topics = opts.get("topics")
        aggregate = opts.get("aggregate")
        if aggregate is not None and aggregate.lower() not in AGGREGATES:
            raise ScanInputError(f"option aggregate: expected {', '.join(AGGREGATES)}, got {aggregate!r}")
        return cls(
            paths=paths,
            level=level,
            split_size=split_size,
            min_partitions=int(min_parts) if min_parts else None,
            use_index=_flag(opts, "useIndex", True),
            on_corrupt=on_corrupt,
            verify_crc=_flag(opts, "verifyCrc", False),
            uncompressed_size=_flag(opts, "uncompressedSize", False),
            topics=frozenset(t.strip() for t in topics.split(",") if t.strip()) if topics else None,
            pushdown=_flag(opts, "filterPushdown", True),
            aggregate=aggregate.lower() if aggregate is not None else None,
        )


class SliceGroup(InputPartition):
    """The slices one task reads (small segments are packed together)."""

    def __init__(self, slices: Sequence[Slice]) -> None:
        self.slices = list(slices)


class KafkaLogDataSource(DataSource):
    """`spark.read.format("kafka-log")`: records (or batches) of raw Kafka segment files."""

    @classmethod
    def name(cls) -> str:
        return NAME

    def schema(self) -> StructType:
        return ReadOptions.parse(self.options).schema

    def reader(self, schema: StructType) -> DataSourceReader:
        opts = ReadOptions.parse(self.options)
        fixed = opts.schema
        if [(f.name, f.dataType) for f in schema.fields] != [(f.name, f.dataType) for f in fixed.fields]:
            raise ScanInputError(f"{NAME} has a fixed schema for level={opts.level}; read it without .schema()")
        return KafkaLogFilteringReader(opts, schema) if opts.pushdown else KafkaLogReader(opts, schema)


class KafkaLogReader(DataSourceReader):
    """Plans slices on the driver and reads them in tasks."""

    def __init__(self, options: ReadOptions, schema: StructType) -> None:
        self.options = options
        self.schema = schema
        self.filter = ScanFilter(topics=options.topics) if options.topics else NO_FILTER

    def partitions(self) -> list[InputPartition]:
        o = self.options
        return [SliceGroup(g) for g in plan_tasks(o.paths, o.split_size, self.filter, o.use_index, o.min_partitions)]

    def read(self, partition: InputPartition) -> Iterator[Any]:
        from pyspark.sql.pandas.types import to_arrow_schema

        if not isinstance(partition, SliceGroup):
            return  # nothing planned: Spark then asks for one empty InputPartition(None)
        arrow_schema = to_arrow_schema(self.schema, timezone="UTC")
        if self.options.aggregate is not None:
            yield from _partial_batches(self._aggregate(partition.slices), self.options.aggregate, arrow_schema)
            return
        batch_level = self.options.level == "batch"
        columns = _BatchColumns(self.options) if batch_level else _RecordColumns(self.options)
        for slc in partition.slices:
            for pos, b in read_slice(slc, self.filter, self.options.on_corrupt, self.options.verify_crc,
                                     headers_only=batch_level and not self.options.uncompressed_size):
                columns.add(slc, pos, b)
                if columns.full():
                    yield columns.flush(arrow_schema)
        if columns.rows:
            yield columns.flush(arrow_schema)


    def _aggregate(self, slices: Sequence[Slice]) -> Any:
        """One query's accumulator over this task's slices: the single-process engine's own code."""
        from kafkatool.ops.scan import Scan, ScanSettings, scan_slice

        o = self.options
        settings = ScanSettings(flt=self.filter, on_corrupt=o.on_corrupt, verify_crc=o.verify_crc,
                                use_index=o.use_index)
        assert o.aggregate is not None  # only aggregate reads get here
        acc = Scan((o.aggregate,))
        measure = o.aggregate == "summary"  # only the summary reports uncompressed bytes
        for slc in slices:
            for _pos, b, size, recs in scan_slice(slc, settings, measure):
                acc.add(slc.topic, slc.partition, slc.log, b, size, recs)
        return acc


def _partial_batches(acc: Any, aggregate: str, arrow_schema: Any) -> Iterator[Any]:
    """One task's accumulator as Arrow record batches in the layout of PARTIAL_SCHEMAS[aggregate]."""
    if aggregate == "keys":
        rows = [(t, k, *v) for (t, k), v in acc.keys.items()]
        yield from _row_batches(rows, arrow_schema)
        return
    if aggregate == "timeline":
        yield from _row_batches([(t, m, *v) for (t, m), v in acc.timeline.items()], arrow_schema)
        return
    none_counters = (None,) * (len(PARTITION_COUNTERS) + len(PARTITION_MINIMA) + len(PARTITION_MAXIMA))
    no_key = (None,) * 4
    segment_rows = []
    for (topic, partition), p in acc.partitions.items():
        segments = sorted(p.segments) or [None]
        counters = (p.batches, p.records, p.log_bytes, p.uncompressed_bytes, p.keyed, p.keyless, p.tombstones,
                    p.txn_markers, p.txn_aborts, p.min_record_offset, p.min_base_offset, p.min_ts,
                    p.last_offset, p.max_ts)
        segment_rows.append((topic, partition, segments[0], None, *counters, *no_key))
        segment_rows.extend((topic, partition, s, None, *none_counters, *no_key) for s in segments[1:])
    yield from _row_batches(segment_rows, arrow_schema)
    # Key rows are most of the rows: built column by column, the columns they leave empty as nulls.
    cols: dict[str, list[Any]] = {n: [] for n in _KEY_ROW_COLUMNS}
    for (topic, partition), p in acc.partitions.items():
        if not p.keys:
            continue
        counts, payloads, latest = zip(*p.keys.values(), strict=True)
        cols["topic"].extend([topic] * len(counts))
        cols["partition"].extend([partition] * len(counts))
        cols["key"].extend(p.keys)
        cols["key_records"].extend(counts)
        cols["key_payload"].extend(payloads)
        cols["latest_offset"].extend(o for o, _ in latest)
        cols["latest_payload"].extend(n for _, n in latest)
        if len(cols["key"]) >= ROWS_PER_ARROW_BATCH:
            yield _column_batch(cols, arrow_schema)
            cols = {n: [] for n in _KEY_ROW_COLUMNS}
    if cols["key"]:
        yield _column_batch(cols, arrow_schema)


_KEY_ROW_COLUMNS = ("topic", "partition", "key", "key_records", "key_payload", "latest_offset", "latest_payload")


def _column_batch(cols: dict[str, list[Any]], arrow_schema: Any) -> Any:
    import pyarrow as pa

    n = len(next(iter(cols.values())))
    return pa.RecordBatch.from_arrays(
        [pa.array(cols[f.name], type=f.type) if f.name in cols else pa.nulls(n, f.type) for f in arrow_schema],
        schema=arrow_schema,
    )


def _row_batches(rows: list[tuple[Any, ...]], arrow_schema: Any) -> Iterator[Any]:
    """Arrow record batches of up to ROWS_PER_ARROW_BATCH of these rows (none for no rows)."""
    for start in range(0, len(rows), ROWS_PER_ARROW_BATCH):
        columns = zip(*rows[start : start + ROWS_PER_ARROW_BATCH], strict=True)
        yield _column_batch({f.name: list(c) for f, c in zip(arrow_schema, columns, strict=True)}, arrow_schema)


class KafkaLogFilteringReader(KafkaLogReader):
    """The reader with filter pushdown (Spark only uses it when its pushdown setting is on)."""

    def pushFilters(self, filters: list[Any]) -> Iterator[Any]:
        level = self.options.level
        for f in filters:
            if self.options.aggregate is not None and tuple(getattr(f, "attribute", ())) not in (
                ("topic",), ("partition",)
            ):
                yield f  # a partial aggregate's other columns (last_offset...) bound no batch
                continue
            self.filter = self.filter.merge(filter_bounds(f, level))
            yield f  # pruning is coarse (whole segments and batches): Spark keeps filtering rows


def _bounds(f: Any) -> tuple[Any, Any] | None:
    """(lowest, highest) inclusive value a comparison lets through; None where a side is open."""
    if isinstance(f, EqualTo):
        return f.value, f.value
    if isinstance(f, In):
        values = [v for v in f.value if v is not None]
        if not values:
            return None
        return min(values), max(values)
    if isinstance(f, GreaterThan):
        return (f.value + 1 if isinstance(f.value, int) else f.value), None
    if isinstance(f, GreaterThanOrEqual):
        return f.value, None
    if isinstance(f, LessThan):
        return None, (f.value - 1 if isinstance(f.value, int) else f.value)
    if isinstance(f, LessThanOrEqual):
        return None, f.value
    return None


def filter_bounds(f: Any, level: str = "record") -> ScanFilter:
    """What one pushed-down Spark filter lets planning and reading skip (NO_FILTER when nothing)."""
    attr: tuple[str, ...] = tuple(getattr(f, "attribute", ()))
    if len(attr) != 1:
        return NO_FILTER
    column = attr[0]
    if column in ("topic", "partition") and isinstance(f, (EqualTo, In)):
        values = [f.value] if isinstance(f, EqualTo) else list(f.value)
        kind = str if column == "topic" else int
        if not all(isinstance(v, kind) and not isinstance(v, bool) for v in values):
            return NO_FILTER
        return ScanFilter(topics=frozenset(values)) if column == "topic" else ScanFilter(partitions=frozenset(values))
    bounds = _bounds(f)
    if bounds is None:
        return NO_FILTER
    lo, hi = bounds
    if not all(v is None or (isinstance(v, int) and not isinstance(v, bool)) for v in (lo, hi)):
        return NO_FILTER
    if column in _OFFSET_COLUMNS:
        # A row's offset, its batch's base and last offset all lie inside the batch's offset range,
        # so a bound on any of them bounds the batches worth reading.
        return ScanFilter(min_offset=lo, max_offset=hi)
    if column == _TIMESTAMP_COLUMNS[level] and lo is not None:
        return ScanFilter(min_timestamp=lo)
    return NO_FILTER


class _Columns:
    """Column lists filled batch by batch and turned into Arrow record batches."""

    names: tuple[str, ...] = ()

    def __init__(self, options: ReadOptions) -> None:
        self.options = options
        self.cols: dict[str, list[Any]] = {n: [] for n in self.names}
        self.rows = 0
        self.payload = 0

    def full(self) -> bool:
        return self.rows >= ROWS_PER_ARROW_BATCH or self.payload >= BYTES_PER_ARROW_BATCH

    def _arrays(self, arrow_schema: Any) -> list[Any]:
        import pyarrow as pa

        return [pa.array(self.cols[f.name], type=f.type) for f in arrow_schema]

    def flush(self, arrow_schema: Any) -> Any:
        import pyarrow as pa

        arrays = self._arrays(arrow_schema)
        self.cols = {n: [] for n in self.names}
        self.rows = self.payload = 0
        return pa.RecordBatch.from_arrays(arrays, schema=arrow_schema)


_RECORD_FIELDS = ("offset", "timestamp", "key", "value", "headers", "sequence")  # Record's first six


class _RecordColumns(_Columns):
    """Record fields go in per record; batch fields once per batch, expanded by an Arrow take."""

    names = tuple(f.name for f in RECORD_SCHEMA.fields)

    def __init__(self, options: ReadOptions) -> None:
        super().__init__(options)
        self.batch_of_row: list[int] = []  # for each row, the index of its batch in the batch columns

    def add(self, slc: Slice, pos: int, b: Any) -> None:
        recs = decode_records(b, pos, slc.log, self.options.on_corrupt)
        if not recs:
            return
        c = self.cols
        for name, values in zip(_RECORD_FIELDS, zip(*recs, strict=True), strict=False):
            c[name].extend(values)
        self.batch_of_row.extend([len(c["topic"])] * len(recs))
        for name, value in (
            ("topic", slc.topic),
            ("partition", slc.partition),
            ("timestamp_type", TIMESTAMP_TYPE_NAMES[b.timestamp_type]),
            ("base_offset", b.base_offset),
            ("last_offset", b.last_offset),
            ("magic", b.magic),
            ("codec", _CODEC_NAMES.get(b.codec, str(b.codec))),
            ("producer_id", b.producer_id),
            ("producer_epoch", b.producer_epoch),
            ("is_transactional", b.is_transactional),
            ("is_control", b.is_control),
            ("partition_leader_epoch", b.partition_leader_epoch),
            ("segment", slc.log),
            ("position", pos),
        ):
            c[name].append(value)
        self.rows += len(recs)
        self.payload += b.size

    def _arrays(self, arrow_schema: Any) -> list[Any]:
        import pyarrow as pa

        rows = pa.array(self.batch_of_row, type=pa.int32())
        self.batch_of_row = []
        return [
            pa.array(self.cols[f.name], type=f.type) if f.name in _RECORD_FIELDS
            else pa.array(self.cols[f.name], type=f.type).take(rows)
            for f in arrow_schema
        ]


class _BatchColumns(_Columns):
    names = tuple(f.name for f in BATCH_SCHEMA.fields)

    def add(self, slc: Slice, pos: int, b: Any) -> None:
        o = self.options
        size = None
        if o.uncompressed_size:
            size = uncompressed_size(b, pos, slc.log, o.on_corrupt)
            if size is None:
                return  # damaged and skipped, as the record level skips it
        c = self.cols
        for name, value in (
            ("topic", slc.topic),
            ("partition", slc.partition),
            ("segment", slc.log),
            ("position", pos),
            ("size", b.size),
            ("base_offset", b.base_offset),
            ("last_offset", b.last_offset),
            ("record_count", b.count if b.magic >= 2 else (1 if b.codec == 0 else None)),
            ("magic", b.magic),
            ("codec", _CODEC_NAMES.get(b.codec, str(b.codec))),
            ("timestamp_type", TIMESTAMP_TYPE_NAMES[b.timestamp_type]),
            ("base_timestamp", b.base_timestamp),
            ("max_timestamp", b.max_timestamp),
            ("producer_id", b.producer_id),
            ("producer_epoch", b.producer_epoch),
            ("base_sequence", b.base_sequence),
            ("last_sequence", b.last_sequence),
            ("is_transactional", b.is_transactional),
            ("is_control", b.is_control),
            ("partition_leader_epoch", b.partition_leader_epoch),
            ("crc", b.crc),
            ("crc_valid", b.is_valid() if o.verify_crc else None),
            ("uncompressed_size", size),
        ):
            c[name].append(value)
        self.rows += 1


def register(spark: Any) -> None:
    """Register `kafka-log` on a session and switch on Python filter pushdown it relies on."""
    spark.conf.set("spark.sql.python.filterPushdown.enabled", "true")
    spark.dataSource.register(KafkaLogDataSource)
