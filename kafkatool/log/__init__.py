"""Kafka's on-disk formats: message sets and record batches, codecs, indexes, snapshots, checkpoints.

A pure library: no printing, no CLI.  Start with `kafkatool.log.records.iter_batches` (the batches of a
log) or `kafkatool.log.segment` (a segment as the broker's recovery reads it).  One format per module,
as kafka-python's `kafka/record/`: `records` (framing, scan, CRC), `legacy_records` (v0/v1),
`default_records` (v2), `record` (`Record` and the shared constants).
"""

from kafkatool.log.codecs import Codec, compress, decompress
from kafkatool.log.errors import (
    CheckpointError,
    CorruptIndexError,
    CorruptRecordError,
    CorruptSnapshotError,
    LogFormatError,
)
from kafkatool.log.record import Record
from kafkatool.log.records import Batch, BatchScan, iter_batches, read_batch_header

__all__ = [
    "Batch",
    "BatchScan",
    "CheckpointError",
    "Codec",
    "CorruptIndexError",
    "CorruptRecordError",
    "CorruptSnapshotError",
    "LogFormatError",
    "Record",
    "compress",
    "decompress",
    "iter_batches",
    "read_batch_header",
]
