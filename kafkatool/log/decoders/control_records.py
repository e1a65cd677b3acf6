"""Control records of Kafka logs (transaction markers, KRaft's leader changes, snapshot headers and
footers, kraft.version and voters) and the text dump-log appends to their record lines.

`format_control_record` reproduces `DumpLogSegments.printControlRecord` of the chosen release: the
type read from the record's key (`ControlRecordType`), an end-transaction marker's type and
coordinator epoch, the JSON of the control messages it decodes (clients/src/main/resources/common/
message, read at version 0 by `ControlRecordUtils` and printed at the record's own Version field), or
`controlType: NAME(id)` for the others.  3.3 knows types 0-4 and prints SnapshotHeader/Footer, 4.0
adds KRaftVersion and KRaftVoters, 4.1 prints LeaderChange (before: `controlType: LEADER_CHANGE(2)`).
"""

from __future__ import annotations

from kafkatool import release as _release
from kafkatool.log.decoders._schema import MAX, Message, field, json_struct, message, read_struct
from kafkatool.log.decoders._wire import DecodeError, ErrorText, Reader
from kafkatool.release import Release as _Release

__all__ = ["CONTROL_TYPES", "format_control_record"]

# Control records (clients/src/main/resources/common/message), read at version 0.
_SNAPSHOT_HEADER = message(
    -1, "SnapshotHeaderRecord", [field("version", "int16"), field("lastContainedLogTimestamp", "int64")]
)
_SNAPSHOT_FOOTER = message(-1, "SnapshotFooterRecord", [field("version", "int16")])
_KRAFT_VERSION = message(
    -1, "KRaftVersionRecord", [field("version", "int16"), field("kRaftVersion", "int16")]
)
_VOTERS = message(
    -1,
    "VotersRecord",
    [
        field("version", "int16"),
        field(
            "voters",
            "[]struct",
            fields=(
                field("voterId", "int32"),
                field("voterDirectoryId", "uuid"),
                field(
                    "endpoints",
                    "[]struct",
                    fields=(field("name", "string"), field("host", "string"), field("port", "uint16")),
                ),
                field(
                    "kRaftVersionFeature",
                    "struct",
                    fields=(field("minSupportedVersion", "int16"), field("maxSupportedVersion", "int16")),
                ),
            ),
        ),
    ],
)

#: `ControlRecordType` names by type id (4.0's; 3.3 knows 0-4 and calls the rest UNKNOWN).
CONTROL_TYPES: dict[int, str] = {
    0: "ABORT",
    1: "COMMIT",
    2: "LEADER_CHANGE",
    3: "SNAPSHOT_HEADER",
    4: "SNAPSHOT_FOOTER",
    5: "KRAFT_VERSION",
    6: "KRAFT_VOTERS",
}
_LEADER_CHANGE_VOTER = (field("voterId", "int32"), field("voterDirectoryId", "uuid", (1, MAX)))
_LEADER_CHANGE = message(
    -1,
    "LeaderChangeMessage",
    [
        field("version", "int16"),
        field("leaderId", "int32"),
        field("voters", "[]struct", fields=_LEADER_CHANGE_VOTER),
        field("grantingVoters", "[]struct", fields=_LEADER_CHANGE_VOTER),
    ],
    valid=(0, 1),
)
# What DumpLogSegments prints before the JSON of the control records it decodes, the spec, and the
# first release that decodes it (LeaderChange from 4.1; before, `controlType: LEADER_CHANGE(2)`).
_CONTROL_JSON: dict[int, tuple[str, Message, _Release]] = {
    2: ("LeaderChange:", _LEADER_CHANGE, _Release(4, 1)),
    3: ("SnapshotHeader", _SNAPSHOT_HEADER, _Release(3, 3)),
    4: ("SnapshotFooter", _SNAPSHOT_FOOTER, _Release(3, 3)),
    5: ("KRaftVersion", _KRAFT_VERSION, _Release(4, 0)),
    6: ("KRaftVoters", _VOTERS, _Release(4, 0)),
}
_CONTROL_TYPES_33 = 4  # Kafka 3.3 knows control types 0..4


def format_control_record(
    control_type: int, key: bytes, value: bytes | None, rel: _Release | None = None
) -> str:
    """The text the chosen release's dump-log appends after `headerKeys: [...]` for a control record.

    Kafka reads the type from `key` (validating its size and version), so this does too and the key
    wins over `control_type`, which callers pass as they parsed it from the same key.  When Kafka
    would throw here (the tool then dies), the result is an `ErrorText` with `fatal=True`.
    """
    try:
        return _format_control(key, value, rel or _release.text_release())
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


def _versioned(data: bytes | None, minimum: int, null_text: str, size_of: str, version_of: str) -> Reader:
    """Kafka's checks before it reads a control record's key or an end-transaction marker (ControlRecordType,
    EndTransactionMarker): not null, at least `minimum` bytes, a version >= 0; the reader past the version."""
    if data is None:
        raise DecodeError(null_text, _NPE)
    if len(data) < minimum:
        raise DecodeError(
            f"Invalid value size found for {size_of}. Must have at least {minimum} bytes, "
            f"but found only {len(data)}",
            _INVALID_RECORD,
        )
    r = Reader(data)
    version = r.int16()
    if version < 0:
        raise DecodeError(
            f"Invalid version found for {version_of}: {version}. May indicate data corruption",
            _INVALID_RECORD,
        )
    return r


def _control_type_id(key: bytes | None) -> int:
    r = _versioned(key, 4, "control record has a null key", "end control record key", "control record")
    return r.int16()


def _format_control(key: bytes, value: bytes | None, rel: _Release) -> str:
    type_id = _control_type_id(key)
    known = type_id in CONTROL_TYPES and (type_id <= _CONTROL_TYPES_33 or rel.at_least("4.0"))
    name = CONTROL_TYPES[type_id] if known else "UNKNOWN"
    if type_id in (0, 1):
        marker = "end transaction marker"
        r = _versioned(value, 6, f"{marker} has a null value", marker, marker)
        return f" endTxnMarker: {name} coordinatorEpoch: {r.int32()}"
    if known and type_id in _CONTROL_JSON and rel >= _CONTROL_JSON[type_id][2]:
        label, spec, _since = _CONTROL_JSON[type_id]
        if value is None:
            raise DecodeError(f"{spec.name} control record has a null value", _NPE)
        data = read_struct(Reader(value), spec.fields, 0, spec.valid, spec.flexible)
        # Kafka passes the record's own Version field as the JSON version; every field is 0+.
        return f" {label} {json_struct(spec.fields, data, data['version'], spec.valid)}"
    return f" controlType: {name}({type_id})"
