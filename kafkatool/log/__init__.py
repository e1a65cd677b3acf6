"""Kafka's on-disk formats: message sets and record batches, codecs, indexes, snapshots, checkpoints.

A pure library: no printing, no CLI.  Start with `kafkatool.log.records.iter_batches` (the batches of a
log) or `kafkatool.log.segment` (a segment as the broker's recovery reads it).  One format per module,
as kafka-python's `kafka/record/`: `records` (framing, scan, CRC), `legacy_records` (v0/v1),
`default_records` (v2), `record` (`Record` and the shared constants).

Importing the package (or any one of its modules) imports nothing else: the names below come from
their modules on first use, so reading a checkpoint does not load the record decoders.
"""

from kafkatool.lazy import lazy_exports

_HOMES = {
    **dict.fromkeys(("Codec", "compress", "decompress"), "codecs"),
    **dict.fromkeys(
        (
            "CheckpointError",
            "CorruptIndexError",
            "CorruptRecordError",
            "CorruptSnapshotError",
            "LogFormatError",
        ),
        "errors",
    ),
    "Record": "record",
    **dict.fromkeys(("Batch", "BatchScan", "iter_batches", "read_batch_header"), "records"),
}

__all__ = sorted(_HOMES)
__getattr__, __dir__ = lazy_exports(__name__, _HOMES)
