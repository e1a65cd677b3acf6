"""KRaft `__cluster_metadata` records and the control records of KRaft logs and snapshots.

`format_metadata_record` reproduces the payload text of `kafka-dump-log.sh --cluster-metadata-decoder`
of the Kafka release chosen with `--kafka-release` (see `kafkatool.release`): the record
frame (unsigned varints: frame version 1, api key, version), the message read by Kafka's generated
reader, and the generated JSON converter's output as Jackson prints it, or the tool's
`Error at <offset>, skipping. <message>` when any of that fails.  `format_control_record` (from
`control_records`) gives the text dump-log appends to control records.

Each release's record layouts are declared below as data (`_schema`); the two releases differ in the
records 3.4-4.0 added (ids 21-28, new versions of 0, 3, 5 and 17), in two records whose early layout
was replaced (10 DelegationTokenRecord, 11 UserScramCredentialRecord) and in one 4.0 dropped (6);
4.1 and 4.2 have 4.0's records, 4.3 adds cordoned log dirs (versions 4 of 0 and 3 of 17) and 4.4
UnregisterControllerRecord (29).
A record type or version the chosen release does not know comes back as an `ErrorText` with `newer`
set: what that release's tool prints for it, plus kafkatool's one-line reason.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from dataclasses import field as dc_field
from typing import Any

from kafkatool import release as _release
from kafkatool.log.decoders._schema import (
    MAX,
    NULLABLE,
    Message,
    field,
    json_struct,
    message,
    read_struct,
    tagged,
)
from kafkatool.log.decoders._wire import DecodeError, ErrorText, Reader, newer_reason
from kafkatool.log.decoders.control_records import CONTROL_TYPES, format_control_record

__all__ = [
    "CONTROL_TYPES",
    "METADATA_RECORD_TYPES",
    "MetadataRecord",
    "decode_metadata_record",
    "format_control_record",
    "format_metadata_record",
    "framed_record_text",
    "newer_than",
    "read_framed",
]

_Release = _release.Release

# The metadata record types of Kafka 3.3.1 (metadata/src/main/resources/common/metadata), all flexible.
_RECORDS_33: tuple[Message, ...] = (
    message(
        0,
        "RegisterBrokerRecord",
        [
            field("brokerId", "int32"),
            field("incarnationId", "uuid"),
            field("brokerEpoch", "int64"),
            field(
                "endPoints",
                "[]struct",
                fields=(
                    field("name", "string"),
                    field("host", "string"),
                    field("port", "uint16"),
                    field("securityProtocol", "int16"),
                ),
            ),
            field(
                "features",
                "[]struct",
                fields=(
                    field("name", "string"),
                    field("minSupportedVersion", "int16"),
                    field("maxSupportedVersion", "int16"),
                ),
            ),
            field("rack", "string", **NULLABLE, default=None),
            field("fenced", "bool", default=True),
            field("inControlledShutdown", "bool", (1, MAX), default=False),
        ],
        valid=(0, 1),
    ),
    message(1, "UnregisterBrokerRecord", [field("brokerId", "int32"), field("brokerEpoch", "int64")]),
    message(2, "TopicRecord", [field("name", "string"), field("topicId", "uuid")]),
    message(
        3,
        "PartitionRecord",
        [
            field("partitionId", "int32", default=-1),
            field("topicId", "uuid"),
            field("replicas", "[]int32"),
            field("isr", "[]int32"),
            field("removingReplicas", "[]int32"),
            field("addingReplicas", "[]int32"),
            field("leader", "int32", default=-1),
            tagged("leaderRecoveryState", "int8", 0, default=0),
            field("leaderEpoch", "int32", default=-1),
            field("partitionEpoch", "int32", default=-1),
        ],
    ),
    message(
        4,
        "ConfigRecord",
        [
            field("resourceType", "int8"),
            field("resourceName", "string"),
            field("name", "string"),
            field("value", "string", **NULLABLE, default=""),
        ],
    ),
    message(
        5,
        "PartitionChangeRecord",
        [
            field("partitionId", "int32", default=-1),
            field("topicId", "uuid"),
            tagged("isr", "[]int32", 0, **NULLABLE, default=None),
            tagged("leader", "int32", 1, default=-2),
            tagged("replicas", "[]int32", 2, **NULLABLE, default=None),
            tagged("removingReplicas", "[]int32", 3, **NULLABLE, default=None),
            tagged("addingReplicas", "[]int32", 4, **NULLABLE, default=None),
            tagged("leaderRecoveryState", "int8", 5, default=-1),
        ],
    ),
    message(
        6,
        "AccessControlRecord",
        [
            field("resourceType", "int8"),
            field("resourceName", "string", **NULLABLE, default=""),
            field("patternType", "int8"),
            field("principal", "string"),
            field("host", "string"),
            field("operation", "int8"),
            field("permissionType", "int8"),
        ],
    ),
    message(7, "FenceBrokerRecord", [field("id", "int32"), field("epoch", "int64")]),
    message(8, "UnfenceBrokerRecord", [field("id", "int32"), field("epoch", "int64")]),
    message(9, "RemoveTopicRecord", [field("topicId", "uuid")]),
    message(
        10,
        "DelegationTokenRecord",
        [
            field("owner", "string"),
            field("renewers", "[]string"),
            field("issueTimestamp", "int64"),
            field("maxTimestamp", "int64"),
            field("expirationTimestamp", "int64"),
            field("tokenId", "string"),
        ],
    ),
    message(
        11,
        "UserScramCredentialRecord",
        [
            field("name", "string"),
            field(
                "credentialInfos",
                "[]struct",
                fields=(
                    field("mechanism", "int8"),
                    field("salt", "bytes"),
                    field("saltedPassword", "bytes"),
                    field("iterations", "int32"),
                ),
            ),
        ],
    ),
    message(12, "FeatureLevelRecord", [field("name", "string"), field("featureLevel", "int16")]),
    message(
        14,
        "ClientQuotaRecord",
        [
            field(
                "entity",
                "[]struct",
                fields=(field("entityType", "string"), field("entityName", "string", **NULLABLE, default="")),
            ),
            field("key", "string"),
            field("value", "float64"),
            field("remove", "bool"),
        ],
    ),
    message(
        15,
        "ProducerIdsRecord",
        [
            field("brokerId", "int32"),
            field("brokerEpoch", "int64", default=-1),
            field("nextProducerId", "int64"),
        ],
    ),
    message(
        17,
        "BrokerRegistrationChangeRecord",
        [
            field("brokerId", "int32"),
            field("brokerEpoch", "int64"),
            tagged("fenced", "int8", 0),
            tagged("inControlledShutdown", "int8", 1, (1, MAX)),
        ],
        valid=(0, 1),
    ),
    message(
        18,
        "AccessControlEntryRecord",
        [
            field("id", "uuid"),
            field("resourceType", "int8"),
            field("resourceName", "string"),
            field("patternType", "int8"),
            field("principal", "string"),
            field("host", "string"),
            field("operation", "int8"),
            field("permissionType", "int8"),
        ],
    ),
    message(19, "RemoveAccessControlEntryRecord", [field("id", "uuid")]),
    message(20, "NoOpRecord", []),
)


def _endpoints() -> Any:
    return field(
        "endPoints",
        "[]struct",
        fields=(
            field("name", "string"),
            field("host", "string"),
            field("port", "uint16"),
            field("securityProtocol", "int16"),
        ),
    )


def _features() -> Any:
    return field(
        "features",
        "[]struct",
        fields=(
            field("name", "string"),
            field("minSupportedVersion", "int16"),
            field("maxSupportedVersion", "int16"),
        ),
    )


def _elr(tag: int, name: str) -> Any:
    """ELR fields (KIP-966): nullable tagged int32 arrays from version 2."""
    return tagged(name, "[]int32", tag, (2, MAX), nullable=(2, MAX), default=None)


# What Kafka 4.0 changed (metadata/src/main/resources/common/metadata at 4.0.0; also 4.0.x).
_CHANGED_IN_40: tuple[Message, ...] = (
    message(
        0,
        "RegisterBrokerRecord",
        [
            field("brokerId", "int32"),
            field("isMigratingZkBroker", "bool", (2, MAX)),
            field("incarnationId", "uuid"),
            field("brokerEpoch", "int64"),
            _endpoints(),
            _features(),
            field("rack", "string", **NULLABLE, default=None),
            field("fenced", "bool", default=True),
            field("inControlledShutdown", "bool", (1, MAX), default=False),
            tagged("logDirs", "[]uuid", 0, (3, MAX)),
        ],
        valid=(0, 3),
    ),
    message(
        3,
        "PartitionRecord",
        [
            field("partitionId", "int32", default=-1),
            field("topicId", "uuid"),
            field("replicas", "[]int32"),
            field("isr", "[]int32"),
            field("removingReplicas", "[]int32"),
            field("addingReplicas", "[]int32"),
            field("leader", "int32", default=-1),
            tagged("leaderRecoveryState", "int8", 0, default=0),
            field("leaderEpoch", "int32", default=-1),
            field("partitionEpoch", "int32", default=-1),
            field("directories", "[]uuid", (1, MAX)),
            _elr(1, "eligibleLeaderReplicas"),
            _elr(2, "lastKnownElr"),
        ],
        valid=(0, 2),
    ),
    message(
        5,
        "PartitionChangeRecord",
        [
            field("partitionId", "int32", default=-1),
            field("topicId", "uuid"),
            tagged("isr", "[]int32", 0, **NULLABLE, default=None),
            tagged("leader", "int32", 1, default=-2),
            tagged("replicas", "[]int32", 2, **NULLABLE, default=None),
            tagged("removingReplicas", "[]int32", 3, **NULLABLE, default=None),
            tagged("addingReplicas", "[]int32", 4, **NULLABLE, default=None),
            tagged("leaderRecoveryState", "int8", 5, default=-1),
            tagged("directories", "[]uuid", 8, (1, MAX), nullable=(1, MAX), default=None),
            _elr(6, "eligibleLeaderReplicas"),
            _elr(7, "lastKnownElr"),
        ],
        valid=(0, 2),
    ),
    message(
        10,
        "DelegationTokenRecord",
        [
            field("owner", "string"),
            field("requester", "string"),
            field("renewers", "[]string"),
            field("issueTimestamp", "int64"),
            field("maxTimestamp", "int64"),
            field("expirationTimestamp", "int64"),
            field("tokenId", "string"),
        ],
    ),
    message(
        11,
        "UserScramCredentialRecord",
        [
            field("name", "string"),
            field("mechanism", "int8"),
            field("salt", "bytes"),
            field("storedKey", "bytes"),
            field("serverKey", "bytes"),
            field("iterations", "int32"),
        ],
    ),
    message(
        17,
        "BrokerRegistrationChangeRecord",
        [
            field("brokerId", "int32"),
            field("brokerEpoch", "int64"),
            tagged("fenced", "int8", 0),
            tagged("inControlledShutdown", "int8", 1, (1, MAX)),
            tagged("logDirs", "[]uuid", 2, (2, MAX)),
        ],
        valid=(0, 2),
    ),
    message(21, "ZkMigrationStateRecord", [field("zkMigrationState", "int8")]),
    message(22, "RemoveUserScramCredentialRecord", [field("name", "string"), field("mechanism", "int8")]),
    message(23, "BeginTransactionRecord", [tagged("name", "string", 0, **NULLABLE, default=None)]),
    message(24, "EndTransactionRecord", []),
    message(25, "AbortTransactionRecord", [tagged("reason", "string", 0, **NULLABLE, default=None)]),
    message(26, "RemoveDelegationTokenRecord", [field("tokenId", "string")]),
    message(
        27,
        "RegisterControllerRecord",
        [
            field("controllerId", "int32"),
            field("incarnationId", "uuid"),
            field("zkMigrationReady", "bool"),
            _endpoints(),
            _features(),
        ],
    ),
    message(28, "ClearElrRecord", [field("topicName", "string")]),
)
_REMOVED_IN_40 = (6,)  # AccessControlRecord, never written, gone from 4.0's MetadataRecordType


def _table(records: tuple[Message, ...]) -> dict[int, Message]:
    return {m.api_key: m for m in sorted(records, key=lambda m: m.api_key)}


_TABLE_33 = _table(_RECORDS_33)
_TABLE_40 = _table(
    tuple(
        m
        for k, m in _TABLE_33.items()
        if k not in _REMOVED_IN_40 and k not in {c.api_key for c in _CHANGED_IN_40}
    )
    + _CHANGED_IN_40
)

# What Kafka 4.3 changed: cordoned log dirs (RegisterBrokerRecord v4, BrokerRegistrationChangeRecord v3).
_CORDONED_43 = {
    0: (4, tagged("cordonedLogDirs", "[]uuid", 1, (4, MAX), nullable=(4, MAX), default=None)),
    17: (3, tagged("cordonedLogDirs", "[]uuid", 3, (3, MAX), nullable=(3, MAX), default=None)),
}
_TABLE_43 = {
    k: (
        Message(m.name, (m.valid[0], _CORDONED_43[k][0]), m.flexible, m.fields + (_CORDONED_43[k][1],), m.api_key)
        if k in _CORDONED_43
        else m
    )
    for k, m in _TABLE_40.items()
}
# What Kafka 4.4 added: UnregisterControllerRecord (type 29).
_TABLE_44 = _table(
    tuple(_TABLE_43.values()) + (message(29, "UnregisterControllerRecord", [field("controllerId", "int32")]),)
)
#: Record layouts by release, oldest first (4.1 and 4.2 have 4.0's).
_TABLES: tuple[tuple[_Release, dict[int, Message]], ...] = (
    (_Release(3, 3), _TABLE_33),
    (_Release(4, 0), _TABLE_40),
    (_Release(4, 3), _TABLE_43),
    (_Release(4, 4), _TABLE_44),
)

#: Metadata record types by api key, as the newest release's `MetadataRecordType` names them.
METADATA_RECORD_TYPES: dict[int, str] = {k: m.type_name for k, m in _TABLES[-1][1].items()}


def _for_release(rel: _Release | None) -> tuple[_Release, dict[int, Message]]:
    """The layouts of `rel` (default: the release whose text is printed): the newest known not newer."""
    rel = rel or _release.text_release()
    chosen = _TABLES[0]
    for entry in _TABLES:
        if entry[0] <= rel:
            chosen = entry
    return chosen


# --------------------------------------------------------------------------------------------------
# Public API


@dataclass(frozen=True, slots=True)
class MetadataRecord:
    """A decoded metadata record: its type name, version, and fields by JSON name (bytes stay bytes)."""

    api_key: int
    type: str
    version: int
    data: dict[str, Any]
    spec: Message | None = dc_field(default=None, repr=False, compare=False)

    def to_json(self) -> str:
        """The JSON object dump-log prints for this record."""
        m = self.spec or _for_release(None)[1][self.api_key]
        return (
            f'{{"type":"{self.type}","version":{self.version},'
            f'"data":{json_struct(m.fields, self.data, self.version, m.valid)}}}'
        )


_PARSE = "org.apache.kafka.server.common.serialization.MetadataParseException"


def _frame_short(r: Reader, entity: str) -> int:
    try:
        val = r.uvarint()
    except DecodeError:
        raise DecodeError(f"Error while reading {entity}", _PARSE) from None
    if val > MAX:
        raise DecodeError(f"Value for {entity} was too large.", _PARSE)
    val &= 0xFFFF
    return val - 0x10000 if val & 0x8000 else val


def _frame_header(r: Reader) -> tuple[int, int]:
    """Frame version check, then (api key, version), as `AbstractApiMessageSerde.read` starts."""
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
    return _frame_short(r, "type"), _frame_short(r, "version")


def read_framed(value: bytes | None, table: dict[int, Message]) -> tuple[Message, int, dict[str, Any]]:
    """Kafka's `AbstractApiMessageSerde.read` over `table`: (spec, version, fields).

    The same frame carries KRaft metadata and tiered storage's remote log metadata records.  Raises
    DecodeError with Kafka's `MetadataParseException` message on any failure.
    """
    if value is None:
        raise DecodeError("Error while reading frame version", _PARSE)
    r = Reader(value)
    api_key, version = _frame_header(r)
    m = table.get(api_key)
    if m is None:
        raise DecodeError(
            f"org.apache.kafka.common.errors.UnsupportedVersionException: Unknown metadata id {api_key}",
            _PARSE,
        )
    try:
        data = read_struct(r, m.fields, version, m.valid, m.flexible)
    except DecodeError:
        raise DecodeError(f"Failed to deserialize record with type {api_key}", _PARSE) from None
    if r.remaining() > 0:
        raise DecodeError(f"Found {r.remaining()} byte(s) of garbage after {api_key}", _PARSE)
    return m, version, data


def newer_than(value: bytes | None, table: dict[int, Message], rel: _Release, what: str) -> str | None:
    """Why a framed record is newer than `table` (release `rel`) knows, or None when it is not.

    Newer means an api key above every key the release knows, or a known key at a version above
    the release's highest; a gap (an id never used or since dropped) is plain bad input.
    """
    if value is None:
        return None
    try:
        api_key, version = _frame_header(Reader(value))
    except DecodeError:
        return None
    m = table.get(api_key)
    if m is None and api_key <= max(table):
        return None
    if m is not None and version <= m.valid[1]:
        return None
    # a later release whose layouts read it (KRaft metadata only: the others have one release)
    later = [r for r, t in _TABLES if r > rel and api_key in t and version <= t[api_key].valid[1]]
    hint = f"; --kafka-release {later[0]} decodes it" if later and any(t is table for _, t in _TABLES) else ""
    if m is None:
        return newer_reason(f"{what} record type {api_key} (version {version})", rel, hint)
    return newer_reason(
        f"{what} record {m.type_name} version {version}", rel, f" (it reads versions {m.valid[0]} to {m.valid[1]}){hint}"
    )


def decode_metadata_record(value: bytes | None, rel: _Release | None = None) -> MetadataRecord:
    """Decode one framed metadata record with the layouts of `rel` (default: the chosen release).

    Raises DecodeError carrying Kafka's message on any failure.
    """
    m, version, data = read_framed(value, _for_release(rel)[1])
    return MetadataRecord(m.api_key, m.type_name, version, data, m)


def format_metadata_record(offset: int, value: bytes | None, rel: _Release | None = None) -> str:
    """The `payload:` text of the chosen release's cluster-metadata decoder for one record.

    On failure this is Kafka's own `Error at <offset>, skipping. <message>` (an `ErrorText` with
    `fatal=False`: the tool prints it and goes on).  A record newer than the release knows gives a
    text with `newer` set, holding what that release prints for it.
    """
    rel, table = _for_release(rel)
    return framed_record_text(
        value, table, rel, "metadata", lambda: decode_metadata_record(value, rel).to_json(), f"Error at {offset}"
    )


def framed_record_text(
    value: bytes | None, table: dict[int, Message], rel: _Release, what: str, render: Callable[[], str], at: str
) -> str:
    """What a dump-log parser of framed records (`read_framed` over `table`) prints: `render()`, or
    `<at>, skipping. <message>` where that raises, as an `ErrorText` with `fatal=False`; either with
    `newer` set when the record is newer than `table` (release `rel`) knows (see `newer_than`)."""
    try:
        text = render()
        java_class, message_ = "", None
    except DecodeError as err:
        message_ = "null" if err.message is None else err.message
        text, java_class = f"{at}, skipping. {message_}", err.java_class
    except (ValueError, IndexError, KeyError, OverflowError, MemoryError) as err:  # defensive
        message_ = f"undecodable record: {err}"
        text, java_class = f"{at}, skipping. {message_}", "java.lang.RuntimeException"
    reason = newer_than(value, table, rel, what)
    if message_ is None and reason is None:
        return text
    return ErrorText(text, java_class=java_class, message=message_, fatal=False, newer=reason)
