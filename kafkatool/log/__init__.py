"""Kafka's on-disk formats: message sets and record batches, codecs, indexes, snapshots, checkpoints.

A pure library: no printing, no CLI.  Start with `kafkatool.log.records.iter_batches` or
`kafkatool.log.segment.open_segment`.
"""

from kafkatool.log.codecs import Codec, compress, decompress
from kafkatool.log.errors import (
    CheckpointError,
    CorruptIndexError,
    CorruptRecordError,
    CorruptSnapshotError,
    LogFormatError,
)
from kafkatool.log.records import Batch, BatchScan, Record, iter_batches, read_batch_header

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
