"""KRaft `__cluster_metadata` records and the control records of KRaft logs and snapshots.

`format_metadata_record` reproduces the payload text of `kafka-dump-log.sh --cluster-metadata-decoder`
of Kafka 3.3.1: the record frame (unsigned varints: frame version 1, api key, version), the message
read by Kafka's generated reader, and the generated JSON converter's output as Jackson prints it, or
the tool's `Error at <offset>, skipping. <message>` when any of that fails.  `format_control_record`
gives the text dump-log appends to control records.

The message layouts of Kafka 3.3.1 are declared below as data and interpreted by one reader and one
JSON writer that follow the rules of Kafka's message generator, including how it tests versions
(which decides what an out-of-range version reads as) and that tagged fields appear in JSON only
when they differ from their default.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kafkatool.log.decoders._schema import ALL as _ALL
from kafkatool.log.decoders._schema import MAX, Versions
from kafkatool.log.decoders._schema import Field as _Field
from kafkatool.log.decoders._schema import field as _f
from kafkatool.log.decoders._schema import json_struct as _json_struct
from kafkatool.log.decoders._schema import read_struct as _read_struct
from kafkatool.log.decoders._schema import tagged as _tagged
from kafkatool.log.decoders._wire import DecodeError, ErrorText, Reader

__all__ = [
    "CONTROL_TYPES",
    "METADATA_RECORD_TYPES",
    "MetadataRecord",
    "decode_metadata_record",
    "format_control_record",
    "format_metadata_record",
]


@dataclass(frozen=True, slots=True)
class _Message:
    api_key: int
    type_name: str  # MetadataRecordType enum constant
    class_name: str
    valid: tuple[int, int]
    flexible: Versions
    fields: tuple[_Field, ...]


def _msg(api_key: int, class_name: str, fields: list[_Field], valid: tuple[int, int] = (0, 0)) -> _Message:
    snake = "".join(("_" + c if c.isupper() and i else c) for i, c in enumerate(class_name)).upper()
    return _Message(api_key, snake, class_name, valid, _ALL, tuple(fields))


_N = {"nullable": _ALL}

# The metadata record types of Kafka 3.3.1 (metadata/src/main/resources/common/metadata), all flexible.
_MESSAGES: tuple[_Message, ...] = (
    _msg(
        0,
        "RegisterBrokerRecord",
        [
            _f("brokerId", "int32"),
            _f("incarnationId", "uuid"),
            _f("brokerEpoch", "int64"),
            _f(
                "endPoints",
                "[]struct",
                fields=(
                    _f("name", "string"),
                    _f("host", "string"),
                    _f("port", "uint16"),
                    _f("securityProtocol", "int16"),
                ),
            ),
            _f(
                "features",
                "[]struct",
                fields=(
                    _f("name", "string"),
                    _f("minSupportedVersion", "int16"),
                    _f("maxSupportedVersion", "int16"),
                ),
            ),
            _f("rack", "string", **_N, default=None),
            _f("fenced", "bool", default=True),
            _f("inControlledShutdown", "bool", (1, MAX), default=False),
        ],
        valid=(0, 1),
    ),
    _msg(1, "UnregisterBrokerRecord", [_f("brokerId", "int32"), _f("brokerEpoch", "int64")]),
    _msg(2, "TopicRecord", [_f("name", "string"), _f("topicId", "uuid")]),
    _msg(
        3,
        "PartitionRecord",
        [
            _f("partitionId", "int32", default=-1),
            _f("topicId", "uuid"),
            _f("replicas", "[]int32"),
            _f("isr", "[]int32"),
            _f("removingReplicas", "[]int32"),
            _f("addingReplicas", "[]int32"),
            _f("leader", "int32", default=-1),
            _tagged("leaderRecoveryState", "int8", 0, default=0),
            _f("leaderEpoch", "int32", default=-1),
            _f("partitionEpoch", "int32", default=-1),
        ],
    ),
    _msg(
        4,
        "ConfigRecord",
        [
            _f("resourceType", "int8"),
            _f("resourceName", "string"),
            _f("name", "string"),
            _f("value", "string", **_N, default=""),
        ],
    ),
    _msg(
        5,
        "PartitionChangeRecord",
        [
            _f("partitionId", "int32", default=-1),
            _f("topicId", "uuid"),
            _tagged("isr", "[]int32", 0, **_N, default=None),
            _tagged("leader", "int32", 1, default=-2),
            _tagged("replicas", "[]int32", 2, **_N, default=None),
            _tagged("removingReplicas", "[]int32", 3, **_N, default=None),
            _tagged("addingReplicas", "[]int32", 4, **_N, default=None),
            _tagged("leaderRecoveryState", "int8", 5, default=-1),
        ],
    ),
    _msg(
        6,
        "AccessControlRecord",
        [
            _f("resourceType", "int8"),
            _f("resourceName", "string", **_N, default=""),
            _f("patternType", "int8"),
            _f("principal", "string"),
            _f("host", "string"),
            _f("operation", "int8"),
            _f("permissionType", "int8"),
        ],
    ),
    _msg(7, "FenceBrokerRecord", [_f("id", "int32"), _f("epoch", "int64")]),
    _msg(8, "UnfenceBrokerRecord", [_f("id", "int32"), _f("epoch", "int64")]),
    _msg(9, "RemoveTopicRecord", [_f("topicId", "uuid")]),
    _msg(
        10,
        "DelegationTokenRecord",
        [
            _f("owner", "string"),
            _f("renewers", "[]string"),
            _f("issueTimestamp", "int64"),
            _f("maxTimestamp", "int64"),
            _f("expirationTimestamp", "int64"),
            _f("tokenId", "string"),
        ],
    ),
    _msg(
        11,
        "UserScramCredentialRecord",
        [
            _f("name", "string"),
            _f(
                "credentialInfos",
                "[]struct",
                fields=(
                    _f("mechanism", "int8"),
                    _f("salt", "bytes"),
                    _f("saltedPassword", "bytes"),
                    _f("iterations", "int32"),
                ),
            ),
        ],
    ),
    _msg(12, "FeatureLevelRecord", [_f("name", "string"), _f("featureLevel", "int16")]),
    _msg(
        14,
        "ClientQuotaRecord",
        [
            _f(
                "entity",
                "[]struct",
                fields=(_f("entityType", "string"), _f("entityName", "string", **_N, default="")),
            ),
            _f("key", "string"),
            _f("value", "float64"),
            _f("remove", "bool"),
        ],
    ),
    _msg(
        15,
        "ProducerIdsRecord",
        [
            _f("brokerId", "int32"),
            _f("brokerEpoch", "int64", default=-1),
            _f("nextProducerId", "int64"),
        ],
    ),
    _msg(
        17,
        "BrokerRegistrationChangeRecord",
        [
            _f("brokerId", "int32"),
            _f("brokerEpoch", "int64"),
            _tagged("fenced", "int8", 0),
            _tagged("inControlledShutdown", "int8", 1, (1, MAX)),
        ],
        valid=(0, 1),
    ),
    _msg(
        18,
        "AccessControlEntryRecord",
        [
            _f("id", "uuid"),
            _f("resourceType", "int8"),
            _f("resourceName", "string"),
            _f("patternType", "int8"),
            _f("principal", "string"),
            _f("host", "string"),
            _f("operation", "int8"),
            _f("permissionType", "int8"),
        ],
    ),
    _msg(19, "RemoveAccessControlEntryRecord", [_f("id", "uuid")]),
    _msg(20, "NoOpRecord", []),
)

#: Metadata record types by api key, as `MetadataRecordType` names them.
METADATA_RECORD_TYPES: dict[int, str] = {m.api_key: m.type_name for m in _MESSAGES}
_BY_KEY: dict[int, _Message] = {m.api_key: m for m in _MESSAGES}

# Control records (clients/src/main/resources/common/message), read at version 0.
_SNAPSHOT_HEADER = _Message(
    -1,
    "",
    "SnapshotHeaderRecord",
    (0, 0),
    _ALL,
    (_f("version", "int16"), _f("lastContainedLogTimestamp", "int64")),
)
_SNAPSHOT_FOOTER = _Message(-1, "", "SnapshotFooterRecord", (0, 0), _ALL, (_f("version", "int16"),))

#: `ControlRecordType` names by type id.
CONTROL_TYPES: dict[int, str] = {
    0: "ABORT",
    1: "COMMIT",
    2: "LEADER_CHANGE",
    3: "SNAPSHOT_HEADER",
    4: "SNAPSHOT_FOOTER",
}


# --------------------------------------------------------------------------------------------------
# Public API


@dataclass(frozen=True, slots=True)
class MetadataRecord:
    """A decoded metadata record: its type name, version, and fields by JSON name (bytes stay bytes)."""

    api_key: int
    type: str
    version: int
    data: dict[str, Any]

    def to_json(self) -> str:
        """The JSON object Kafka 3.3.1's dump-log prints for this record."""
        m = _BY_KEY[self.api_key]
        return (
            f'{{"type":"{self.type}","version":{self.version},'
            f'"data":{_json_struct(m.fields, self.data, self.version, m.valid)}}}'
        )


def _frame_short(r: Reader, entity: str) -> int:
    try:
        val = r.uvarint()
    except DecodeError:
        raise DecodeError(f"Error while reading {entity}", _PARSE) from None
    if val > MAX:
        raise DecodeError(f"Value for {entity} was too large.", _PARSE)
    val &= 0xFFFF
    return val - 0x10000 if val & 0x8000 else val


_PARSE = "org.apache.kafka.server.common.serialization.MetadataParseException"


def decode_metadata_record(value: bytes | None) -> MetadataRecord:
    """Decode one framed metadata record.  Raises DecodeError carrying Kafka's message on any failure."""
    if value is None:
        raise DecodeError("Error while reading frame version", _PARSE)
    r = Reader(value)
    frame = _frame_short(r, "frame version")
    if frame == 0:
        raise DecodeError(
            "Could not deserialize metadata record with frame version 0. Note that upgrades from the "
            "preview release of KRaft in 2.8 to newer versions are not supported.",
            _PARSE,
        )
    if frame != 1:
        raise DecodeError(
            f"Could not deserialize metadata record due to unknown frame version {frame}"
            "(only frame version 1 is supported)",
            _PARSE,
        )
    api_key = _frame_short(r, "type")
    version = _frame_short(r, "version")
    m = _BY_KEY.get(api_key)
    if m is None:
        raise DecodeError(
            f"org.apache.kafka.common.errors.UnsupportedVersionException: Unknown metadata id {api_key}",
            _PARSE,
        )
    try:
        data = _read_struct(r, m.fields, version, m.valid, m.flexible)
    except DecodeError:
        raise DecodeError(f"Failed to deserialize record with type {api_key}", _PARSE) from None
    if r.remaining() > 0:
        raise DecodeError(f"Found {r.remaining()} byte(s) of garbage after {api_key}", _PARSE)
    return MetadataRecord(api_key, m.type_name, version, data)


def format_metadata_record(offset: int, value: bytes | None) -> str:
    """The `payload:` text of Kafka 3.3.1's cluster-metadata decoder for one record.

    On failure this is Kafka's own `Error at <offset>, skipping. <message>` (an `ErrorText` with
    `fatal=False`: the tool prints it and goes on).
    """
    try:
        return decode_metadata_record(value).to_json()
    except DecodeError as err:
        message = "null" if err.message is None else err.message
        return ErrorText(
            f"Error at {offset}, skipping. {message}",
            java_class=err.java_class,
            message=err.message,
            fatal=False,
        )
    except (ValueError, IndexError, KeyError, OverflowError, MemoryError) as err:  # defensive
        msg = f"undecodable record: {err}"
        return ErrorText(
            f"Error at {offset}, skipping. {msg}",
            java_class="java.lang.RuntimeException",
            message=msg,
            fatal=False,
        )


def format_control_record(control_type: int, key: bytes, value: bytes | None) -> str:
    """The text Kafka 3.3.1's dump-log appends after `headerKeys: [...]` for a control record.

    Kafka reads the type from `key` (validating its size and version), so this does too and the key
    wins over `control_type`, which callers pass as they parsed it from the same key.  When Kafka
    would throw here (the tool then dies), the result is an `ErrorText` with `fatal=True`.
    """
    try:
        return _format_control(control_type, key, value)
    except DecodeError as err:
        return ErrorText.from_error(err)
    except (ValueError, IndexError, KeyError, OverflowError, MemoryError) as err:  # defensive
        return ErrorText(
            f"java.lang.RuntimeException: undecodable control record: {err}",
            java_class="java.lang.RuntimeException",
            message=f"undecodable control record: {err}",
            fatal=True,
        )


_INVALID_RECORD = "org.apache.kafka.common.InvalidRecordException"
_NPE = "java.lang.NullPointerException"


def _control_type_id(key: bytes | None) -> int:
    if key is None:
        raise DecodeError("control record has a null key", _NPE)
    if len(key) < 4:
        raise DecodeError(
            "Invalid value size found for end control record key. Must have at least 4 bytes, "
            f"but found only {len(key)}",
            _INVALID_RECORD,
        )
    r = Reader(key)
    version = r.int16()
    if version < 0:
        raise DecodeError(
            f"Invalid version found for control record: {version}. May indicate data corruption",
            _INVALID_RECORD,
        )
    return r.int16()


def _format_control(control_type: int, key: bytes, value: bytes | None) -> str:
    type_id = _control_type_id(key)
    name = CONTROL_TYPES.get(type_id, "UNKNOWN")
    if type_id in (0, 1):
        if value is None:
            raise DecodeError("end transaction marker has a null value", _NPE)
        if len(value) < 6:
            raise DecodeError(
                "Invalid value size found for end transaction marker. Must have at least 6 bytes, "
                f"but found only {len(value)}",
                _INVALID_RECORD,
            )
        r = Reader(value)
        marker_version = r.int16()
        if marker_version < 0:
            raise DecodeError(
                f"Invalid version found for end transaction marker: {marker_version}. "
                "May indicate data corruption",
                _INVALID_RECORD,
            )
        return f" endTxnMarker: {name} coordinatorEpoch: {r.int32()}"
    if type_id in (3, 4):
        spec = _SNAPSHOT_HEADER if type_id == 3 else _SNAPSHOT_FOOTER
        if value is None:
            raise DecodeError(f"{spec.class_name} control record has a null value", _NPE)
        data = _read_struct(Reader(value), spec.fields, 0, spec.valid, spec.flexible)
        # Kafka passes the record's own Version field as the JSON version; every field is 0+.
        body = _json_struct(spec.fields, data, data["version"], spec.valid)
        return f" {'SnapshotHeader' if type_id == 3 else 'SnapshotFooter'} {body}"
    return f" controlType: {name}({type_id})"
