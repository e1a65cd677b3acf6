"""The rows `spark-scan` computes, shared by its two engines (Spark's `kafkatool.spark.queries` and the
single-process `kafkatool.ops.scan`): queries, column lists and the definitions both follow.

Definitions (both engines):
- a record's payload bytes are its key length plus its value length (null counts as 0);
- data records are records of non-control batches; control records are transaction markers and
  other control records;
- `records` counts every record, data and control;
- `first_offset` is the smallest record offset (the smallest batch base offset when no record is
  left), `last_offset` the largest batch last offset;
- timestamps below 0 (none) are left out of min/max and grouped under a null minute;
- a keyed data record is reclaimable when a record with the same key has a larger offset in the same
  partition (what compaction would remove, tombstone retention and transactions aside).
"""

QUERIES = ("summary", "keys", "timeline")

SUMMARY_COLUMNS = (
    "topic",
    "partition",
    "segments",
    "batches",
    "records",
    "bytes",
    "uncompressed_bytes",
    "compression_ratio",
    "first_offset",
    "last_offset",
    "min_timestamp",
    "max_timestamp",
    "keyed_records",
    "keyless_records",
    "distinct_keys",
    "tombstones",
    "txn_markers",
    "txn_aborts",
    "reclaimable_records",
    "reclaimable_bytes",
)
KEYS_COLUMNS = ("topic", "key", "records", "payload_bytes", "tombstones")
TIMELINE_COLUMNS = ("topic", "minute_ms", "records", "payload_bytes")
KEYS_ORDER = ("records", "payload_bytes")
MINUTE_MS = 60_000

