"""Share group state records of `__share_group_state` (`kafka-dump-log.sh --share-group-state-decoder`).

Kafka 4.0's share coordinator (KIP-932) writes coordinator records: the key and the value each start
with an int16 version; the key's version is the record type (0 ShareSnapshot, 1 ShareUpdate, see
share-coordinator/src/main/resources/common/message) and picks both messages.  Kafka's tool reads
them with `ShareCoordinatorRecordSerde` and prints `key: {"type":"<key version>","data":{...}}` and
`payload: {"type":"<value version>","data":{...}}` (`<DELETE>` for a tombstone), each `data` as the
generated JSON converter writes it; a failure replaces the key with one error sentence and prints
no payload.  A record without a key stops the tool.
"""

from __future__ import annotations

from typing import Any

from kafkatool.log.decoders._spec import Message, field, json_struct, message, read_struct
from kafkatool.log.decoders._wire import DecodeError, ErrorText, NewerRecordText, Reader

__all__ = ["ShareStateRecord", "decode_share_group_state", "format_share_group_state_record"]

_KEY_FIELDS = [field("groupId", "string"), field("topicId", "uuid"), field("partition", "int32")]
_BATCHES = field(
    "stateBatches",
    "[]struct",
    (0, 0),
    fields=(
        field("firstOffset", "int64", (0, 0)),
        field("lastOffset", "int64", (0, 0)),
        field("deliveryState", "int8", (0, 0)),
        field("deliveryCount", "int16", (0, 0)),
    ),
)
_V0 = (0, 0)

# record type -> (key spec, value spec); keys are not flexible, values are.
_RECORDS: dict[int, tuple[Message, Message]] = {
    0: (
        message(-1, "ShareSnapshotKey", [field(f.name, f.type, _V0) for f in _KEY_FIELDS], flexible=None),
        message(
            -1,
            "ShareSnapshotValue",
            [
                field("snapshotEpoch", "uint16", _V0),
                field("stateEpoch", "int32"),
                field("leaderEpoch", "int32"),
                field("startOffset", "int64", _V0),
                _BATCHES,
            ],
        ),
    ),
    1: (
        message(
            -1, "ShareUpdateKey", [field(f.name, f.type, (1, 1)) for f in _KEY_FIELDS], (1, 1), flexible=None
        ),
        message(
            -1,
            "ShareUpdateValue",
            [
                field("snapshotEpoch", "uint16", _V0),
                field("leaderEpoch", "int32"),
                field("startOffset", "int64", _V0),
                _BATCHES,
            ],
        ),
    ),
}
_NEWEST_TYPE = max(_RECORDS)
_RUNTIME = "java.lang.RuntimeException"


class _UnknownType(DecodeError):
    """Deserializer.UnknownRecordTypeException, which the tool reports in its own words."""

    def __init__(self, record_type: int) -> None:
        super().__init__(f"Found an unknown record type {record_type}", _RUNTIME)
        self.record_type = record_type


class ShareStateRecord(dict):
    """A decoded record: `record_type` (the key's version), `value_version` (None for a tombstone),
    `key` and `value` fields by JSON name (`value` None for a tombstone)."""

    def __init__(self, record_type: int, key: dict[str, Any], value_version: int | None, value: Any) -> None:
        super().__init__(key=key, value=value)
        self.record_type = record_type
        self.value_version = value_version


def _version(r: Reader, what: str) -> int:
    try:
        return r.int16()
    except DecodeError:
        raise DecodeError(f"Could not read version from {what}'s buffer.", _RUNTIME) from None


def _read(r: Reader, spec: Message, version: int, what: str) -> dict[str, Any]:
    # the generated reader over the rest of the buffer; what follows the message is ignored
    try:
        return read_struct(r, spec.fields, version, spec.valid, spec.flexible)
    except DecodeError as err:
        cause = "null" if err.message is None else err.message
        raise DecodeError(
            f"Could not read record with version {version} from {what}'s buffer due to: {cause}.", _RUNTIME
        ) from None


def decode_share_group_state(key: bytes, value: bytes | None) -> ShareStateRecord:
    """`CoordinatorRecordSerde.deserialize` with the share coordinator's messages."""
    kr = Reader(key)
    record_type = _version(kr, "key")
    if record_type not in _RECORDS:
        raise _UnknownType(record_type)
    key_spec, value_spec = _RECORDS[record_type]
    key_data = _read(kr, key_spec, record_type, "key")
    if value is None:
        return ShareStateRecord(record_type, key_data, None, None)
    vr = Reader(value)
    version = _version(vr, "value")
    if not value_spec.valid[0] <= version <= value_spec.valid[1]:
        raise DecodeError(f"Found an unknown record version {version} for {record_type} type", _RUNTIME)
    return ShareStateRecord(record_type, key_data, version, _read(vr, value_spec, version, "value"))


def _json(version: int, spec: Message, data: dict[str, Any]) -> str:
    return f'{{"type":"{version}","data":{json_struct(spec.fields, data, version, spec.valid)}}}'


def _newer(key: bytes, value: bytes | None) -> str | None:
    """Why the record is newer than Kafka 4.0's share coordinator knows, or None."""
    if len(key) < 2:
        return None
    record_type = Reader(key).int16()
    if record_type > _NEWEST_TYPE:
        return f"share group state record type {record_type} is newer than Kafka 4.0 knows"
    if record_type < 0 or value is None or len(value) < 2:
        return None
    version = Reader(value).int16()
    spec = _RECORDS[record_type][1]
    if version > spec.valid[1]:
        return (
            f"share group state {spec.class_name} version {version} is newer than Kafka 4.0 knows "
            f"(it reads versions {spec.valid[0]} to {spec.valid[1]})"
        )
    return None


def format_share_group_state_record(
    offset: int, key: bytes | None, value: bytes | None
) -> tuple[str, str | None]:
    """(key text, payload text or None) as Kafka 4.0's share group state decoder prints them.

    A record without a key is fatal in Kafka's tool: the key text is then an `ErrorText` with
    `fatal=True`.  Kafka's per-record errors (printed in place of the key, no payload) are
    `ErrorText`s with `fatal=False`, or `NewerRecordText`s for record types and versions newer
    than 4.0's.
    """
    if key is None:
        msg = (
            f"Failed to decode message at offset {offset} using share group state topic decoder "
            "(message had a missing key)"
        )
        return ErrorText(f"{_RUNTIME}: {msg}", java_class=_RUNTIME, message=msg, fatal=True), None
    try:
        rec = decode_share_group_state(key, value)
    except _UnknownType as err:
        text = f"Unknown record type {err.record_type} at offset {offset}, skipping."
        return _error(text, err, _newer(key, value)), None
    except DecodeError as err:
        text = f"Error at offset {offset}, skipping. {'null' if err.message is None else err.message}"
        return _error(text, err, _newer(key, value)), None
    except (ValueError, IndexError, KeyError, OverflowError, MemoryError) as err:  # defensive
        text = f"Error at offset {offset}, skipping. undecodable record: {err}"
        return _error(text, DecodeError(f"undecodable record: {err}"), None), None
    key_spec, value_spec = _RECORDS[rec.record_type]
    key_text = _json(rec.record_type, key_spec, rec["key"])
    if rec.value_version is None:
        return key_text, "<DELETE>"
    return key_text, _json(rec.value_version, value_spec, rec["value"])


def _error(text: str, err: DecodeError, newer: str | None) -> str:
    if newer is not None:
        return NewerRecordText(text, reason=newer, java_class=err.java_class, message=err.message)
    return ErrorText(text, java_class=err.java_class, message=err.message, fatal=False)
