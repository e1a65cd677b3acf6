"""Records of Kafka 4.0's coordinators (`__consumer_offsets`, `__share_group_state`) and their dump-log text.

A coordinator record's key starts with an int16 record type (in the specs, the key message's
version) and its value with an int16 value version; the rest of each is the message of the spec
that the type selects (`CoordinatorRecordSerde`).  Kafka 4.0's dump-log prints such a record as
`{"type":"<type>","data":<key JSON>}` and `{"version":"<version>","data":<value JSON>}` (the share
group state decoder labels the value's version `"type"` too; a tombstone's payload is `<DELETE>`),
and where the serde fails it prints a `skipping` line as the key, no payload, and goes on:
`Unknown record type <t> at offset <o>, skipping.` or `Error at offset <o>, skipping. <message>`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kafkatool.log.decoders._schema import Message
from kafkatool.log.decoders._wire import DecodeError, ErrorText, NewerThanKnown, Reader

__all__ = ["CoordinatorRecord", "RecordTypes", "decode_coordinator_record", "format_coordinator_record"]

_RUNTIME = "java.lang.RuntimeException"


@dataclass(frozen=True)
class RecordTypes:
    """A coordinator's key and value specs by record type; `name` names its records in kafkatool's
    messages, `value_label` is the key dump-log gives the value's version in its JSON."""

    name: str
    keys: dict[int, Message]
    values: dict[int, Message]
    value_label: str = "version"
    #: the version the key's JSON is written at: None for the record type (4.0's converters), 0 from
    #: 4.1 (`CoordinatorRecordJsonConverters.writeRecordKeyAsJson`)
    key_json_version: int | None = None
    #: the release these specs are (for "newer than Kafka X knows"); None: the newest kafkatool knows
    known_by: object = None

    @property
    def newest(self) -> int:
        return max(self.keys)


@dataclass(frozen=True)
class CoordinatorRecord:
    """A decoded record: fields by JSON name; `value_version`/`value` are None for a tombstone."""

    type: int
    key: dict[str, Any]
    value_version: int | None
    value: dict[str, Any] | None


class _UnknownType(NewerThanKnown):
    def __init__(self, record_type: int, types: RecordTypes) -> None:
        super().__init__(
            f"Found an unknown record type {record_type}",
            _RUNTIME,
            what=f"{types.name} record type {record_type}" if record_type > types.newest else "",
            **_known(types),
        )
        self.record_type = record_type


def _known(types: RecordTypes) -> dict[str, Any]:
    return {} if types.known_by is None else {"known_by": types.known_by}


def _version(r: Reader, name: str) -> int:
    try:
        return r.int16()
    except DecodeError:
        raise DecodeError(f"Could not read version from {name}'s buffer.", _RUNTIME) from None


def _read(spec: Message, r: Reader, version: int, name: str) -> dict[str, Any]:
    try:
        return spec.read(r, version)
    except DecodeError as err:
        message = "null" if err.message is None else err.message
        raise DecodeError(
            f"Could not read record with version {version} from {name}'s buffer due to: {message}.", _RUNTIME
        ) from None


def decode_coordinator_record(types: RecordTypes, key: bytes, value: bytes | None) -> CoordinatorRecord:
    """`CoordinatorRecordSerde.deserialize`; raises DecodeError with Kafka's message on failure
    (NewerThanKnown for an unknown record type or value version)."""
    r = Reader(key)
    record_type = _version(r, "key")
    key_spec = types.keys.get(record_type)
    if key_spec is None:
        raise _UnknownType(record_type, types)
    key_data = _read(key_spec, r, record_type, "key")
    if value is None:
        return CoordinatorRecord(record_type, key_data, None, None)
    value_spec = types.values[record_type]
    r = Reader(value)
    version = _version(r, "value")
    if not value_spec.valid[0] <= version <= value_spec.valid[1]:
        raise NewerThanKnown(
            f"Found an unknown record version {version} for {record_type} type",
            _RUNTIME,
            # a legacy record (4.1's LegacyOffsetCommitValue, type 0) never gets newer versions
            what=f"{types.name} {value_spec.name} version {version}"
            if version > value_spec.valid[1] and not value_spec.name.startswith("Legacy")
            else "",
            **_known(types),
        )
    return CoordinatorRecord(record_type, key_data, version, _read(value_spec, r, version, "value"))


#: Renders a value's data as JSON in place of the spec's converter (type -> (spec, data, version) -> JSON).
ValueJson = Callable[[Message, dict[str, Any], int], str]


def format_coordinator_record(
    types: RecordTypes,
    offset: int,
    key: bytes,
    value: bytes | None,
    value_json: dict[int, ValueJson] | None = None,
) -> tuple[str, str | None]:
    """(key_text, payload_text) as Kafka 4.x's dump-log prints a coordinator record.

    A record Kafka skips comes back as `(ErrorText, None)` with `fatal=False`, with `newer` set when
    the record type or value version is newer than `types` know.
    """
    try:
        rec = decode_coordinator_record(types, key, value)
    except _UnknownType as err:
        text = f"Unknown record type {err.record_type} at offset {offset}, skipping."
        return ErrorText.from_error(err, text, fatal=False), None
    except DecodeError as err:
        text = f"Error at offset {offset}, skipping. {'null' if err.message is None else err.message}"
        return ErrorText.from_error(err, text, fatal=False), None
    key_version = rec.type if types.key_json_version is None else types.key_json_version
    key_json = types.keys[rec.type].to_json(rec.key, key_version)
    key_text = f'{{"type":"{rec.type}","data":{key_json}}}'
    if rec.value is None or rec.value_version is None:
        return key_text, "<DELETE>"
    spec = types.values[rec.type]
    render = (value_json or {}).get(rec.type)
    data = render(spec, rec.value, rec.value_version) if render else spec.to_json(rec.value, rec.value_version)
    return key_text, f'{{"{types.value_label}":"{rec.value_version}","data":{data}}}'
