"""Tiered storage's `__remote_log_metadata` records (`kafka-dump-log.sh --remote-log-metadata-decoder`).

Kafka 4.0's TopicBasedRemoteLogMetadataManager writes four record types (storage/src/main/resources/
message, api keys 0-3) in the same frame as KRaft metadata records (`AbstractApiMessageSerde`).
The tool reads them with `RemoteLogMetadataSerde`, turns each into its domain object (which checks
offsets, leader epochs and the state id) and prints that object's `toString()`; any exception gives
`Error at offset <offset>, skipping. <message>`.  This module reproduces both, from the specs below
and the domain classes' checks and `toString` layouts.
"""

from __future__ import annotations

from typing import Any

from kafkatool.log.decoders._schema import NULLABLE, Message, field, message, tagged
from kafkatool.log.decoders._wire import DecodeError, uuid_str
from kafkatool.log.decoders.metadata import framed_record_text, read_framed
from kafkatool.release import Release

__all__ = ["RemoteLogMetadata", "decode_remote_log_metadata", "format_remote_log_metadata_record"]

_TOPIC_ID_PARTITION = field(
    "topicIdPartition",
    "struct",
    fields=(field("name", "string"), field("id", "uuid"), field("partition", "int32")),
)
_SEGMENT_ID = field("remoteLogSegmentId", "struct", fields=(_TOPIC_ID_PARTITION, field("id", "uuid")))
_LEADER_EPOCHS = field(
    "segmentLeaderEpochs", "[]struct", fields=(field("leaderEpoch", "int32"), field("offset", "int64"))
)
_CUSTOM = field("customMetadata", "bytes", **NULLABLE, default=None)
_SEGMENT_BODY = (
    field("startOffset", "int64"),
    field("endOffset", "int64"),
    field("brokerId", "int32"),
    field("maxTimestampMs", "int64"),
    field("eventTimestampMs", "int64"),
    _LEADER_EPOCHS,
    field("segmentSizeInBytes", "int32"),
    _CUSTOM,
    field("remoteLogSegmentState", "int8"),
    tagged("txnIndexEmpty", "bool", 0),
)

_RECORDS: dict[int, Message] = {
    m.api_key: m
    for m in (
        message(0, "RemoteLogSegmentMetadataRecord", [_SEGMENT_ID, *_SEGMENT_BODY]),
        message(
            1,
            "RemoteLogSegmentMetadataUpdateRecord",
            [
                _SEGMENT_ID,
                field("brokerId", "int32"),
                field("eventTimestampMs", "int64"),
                _CUSTOM,
                field("remoteLogSegmentState", "int8"),
            ],
        ),
        message(
            2,
            "RemotePartitionDeleteMetadataRecord",
            [
                _TOPIC_ID_PARTITION,
                field("brokerId", "int32"),
                field("eventTimestampMs", "int64"),
                field("remotePartitionDeleteState", "int8"),
            ],
        ),
        message(3, "RemoteLogSegmentMetadataSnapshotRecord", [field("segmentId", "uuid"), *_SEGMENT_BODY]),
    )
}
_KNOWN_BY = Release(4, 0)

# RemoteLogSegmentState and RemotePartitionDeleteState by id (`forId` gives null for others).
_SEGMENT_STATES = (
    "COPY_SEGMENT_STARTED",
    "COPY_SEGMENT_FINISHED",
    "DELETE_SEGMENT_STARTED",
    "DELETE_SEGMENT_FINISHED",
)
_DELETE_STATES = ("DELETE_PARTITION_MARKED", "DELETE_PARTITION_STARTED", "DELETE_PARTITION_FINISHED")

_IAE = "java.lang.IllegalArgumentException"
_NPE = "java.lang.NullPointerException"


class RemoteLogMetadata(dict):
    """A decoded record: `type` (the spec name), `version` and the fields by JSON name."""

    def __init__(self, type_: str, version: int, data: dict[str, Any]) -> None:
        super().__init__(data)
        self.type = type_
        self.version = version


def decode_remote_log_metadata(value: bytes | None) -> RemoteLogMetadata:
    """Read one record as `RemoteLogMetadataSerde.deserialize` does; DecodeError with Kafka's message."""
    m, version, data = read_framed(value, _RECORDS)
    return RemoteLogMetadata(m.name, version, data)


def _state(names: tuple[str, ...], state_id: int, message_: str | None) -> str:
    if 0 <= state_id < len(names):
        return names[state_id]
    raise DecodeError(message_, _NPE)  # Objects.requireNonNull on forId's null


def _topic_id_partition(tip: dict[str, Any]) -> str:
    return f"{uuid_str(tip['id'])}:{tip['name']}-{tip['partition']}"  # TopicIdPartition.toString


def _segment_id(entry: dict[str, Any]) -> str:
    tip = _topic_id_partition(entry["topicIdPartition"])
    return f"RemoteLogSegmentId{{topicIdPartition={tip}, id={uuid_str(entry['id'])}}}"


def _leader_epochs(entries: list[dict[str, Any]]) -> str:
    """The HashMap the transform fills (a later entry replaces an equal epoch), as a TreeMap prints."""
    epochs: dict[int, int] = {}
    for e in entries:
        epochs[e["leaderEpoch"]] = e["offset"]
    if not epochs:
        raise DecodeError("segmentLeaderEpochs can not be null or empty", _IAE)
    return "{" + ", ".join(f"{k}={epochs[k]}" for k in sorted(epochs)) + "}"


def _custom(raw: bytes | None) -> str:
    return "Optional.empty" if raw is None else f"Optional[CustomMetadata{{{len(raw)} bytes}}]"


def _segment_text(d: dict[str, Any]) -> str:
    start, end = d["startOffset"], d["endOffset"]
    if start < 0:
        raise DecodeError(
            f"Unexpected start offset = {start}. StartOffset for a remote segment cannot be negative", _IAE
        )
    if end < start:
        raise DecodeError(
            f"Unexpected end offset = {end}. "
            f"EndOffset for a remote segment cannot be less than startOffset = {start}",
            _IAE,
        )
    epochs = _leader_epochs(d["segmentLeaderEpochs"])
    state = _state(_SEGMENT_STATES, d["remoteLogSegmentState"], "state can not be null")
    return (
        f"RemoteLogSegmentMetadata{{remoteLogSegmentId={_segment_id(d['remoteLogSegmentId'])}, "
        f"startOffset={start}, endOffset={end}, brokerId={d['brokerId']}, "
        f"maxTimestampMs={d['maxTimestampMs']}, "
        f"eventTimestampMs={d['eventTimestampMs']}, segmentLeaderEpochs={epochs}, "
        f"segmentSizeInBytes={d['segmentSizeInBytes']}, customMetadata={_custom(d['customMetadata'])}, "
        f"state={state}, txnIdxEmpty={_bool(d['txnIndexEmpty'])}}}"
    )


def _update_text(d: dict[str, Any]) -> str:
    state = _state(_SEGMENT_STATES, d["remoteLogSegmentState"], "state can not be null")
    return (
        f"RemoteLogSegmentMetadataUpdate{{remoteLogSegmentId={_segment_id(d['remoteLogSegmentId'])}, "
        f"customMetadata={_custom(d['customMetadata'])}, state={state}, "
        f"eventTimestampMs={d['eventTimestampMs']}, brokerId={d['brokerId']}}}"
    )


def _delete_text(d: dict[str, Any]) -> str:
    state = _state(_DELETE_STATES, d["remotePartitionDeleteState"], None)
    return (
        f"RemotePartitionDeleteMetadata{{topicPartition={_topic_id_partition(d['topicIdPartition'])}, "
        f"state={state}, eventTimestampMs={d['eventTimestampMs']}, brokerId={d['brokerId']}}}"
    )


def _snapshot_text(d: dict[str, Any]) -> str:
    state = _state(_SEGMENT_STATES, d["remoteLogSegmentState"], "state can not be null")
    epochs = _leader_epochs(d["segmentLeaderEpochs"])
    return (
        f"RemoteLogSegmentMetadataSnapshot{{segmentId={uuid_str(d['segmentId'])}, "
        f"startOffset={d['startOffset']}, endOffset={d['endOffset']}, maxTimestampMs={d['maxTimestampMs']}, "
        f"segmentLeaderEpochs={epochs}, segmentSizeInBytes={d['segmentSizeInBytes']}, "
        f"customMetadata={_custom(d['customMetadata'])}, state={state}, "
        f"txnIdxEmpty={_bool(d['txnIndexEmpty'])}}}"
    )


def _bool(v: bool) -> str:
    return "true" if v else "false"


_TEXT = {
    "RemoteLogSegmentMetadataRecord": _segment_text,
    "RemoteLogSegmentMetadataUpdateRecord": _update_text,
    "RemotePartitionDeleteMetadataRecord": _delete_text,
    "RemoteLogSegmentMetadataSnapshotRecord": _snapshot_text,
}

# DumpLogSegments reads `record.value.remaining` first: a null value is the JVM's own (helpful) NPE.
_NULL_VALUE = (
    'Cannot invoke "java.nio.ByteBuffer.remaining()" because the return value of '
    '"org.apache.kafka.common.record.Record.value()" is null'
)


def format_remote_log_metadata_record(offset: int, value: bytes | None) -> str:
    """The `payload:` text of Kafka 4.0's `--remote-log-metadata-decoder` for one record.

    Kafka's tool prints its error text and goes on; that is an `ErrorText` with `fatal=False`.  A
    record type or version newer than 4.0's gives that same text with `newer` set.
    """
    return framed_record_text(
        value, _RECORDS, _KNOWN_BY, "remote log metadata", lambda: _text(value), f"Error at offset {offset}"
    )


def _text(value: bytes | None) -> str:
    if value is None:
        raise DecodeError(_NULL_VALUE, _NPE)
    rec = decode_remote_log_metadata(value)
    return _TEXT[rec.type](rec)
