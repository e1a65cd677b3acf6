"""Share group state records of `__share_group_state` (`kafka-dump-log.sh --share-group-state-decoder`).

Kafka 4.0's share coordinator (KIP-932) writes coordinator records (see `coordinator`): the key's
version is the record type (0 ShareSnapshot, 1 ShareUpdate, see share-coordinator/src/main/resources/
common/message) and picks both messages.  Kafka 4.0's ShareGroupStateMessageParser reads them with
`ShareCoordinatorRecordSerde` and prints them as the offsets decoder does, except that the value's
version is labelled `"type"` as well: `payload: {"type":"<value version>","data":{...}}`.  A record
without a key stops the tool (dump-log says so before calling this module).
"""

from __future__ import annotations

from kafkatool.log.decoders._schema import MAX, Message, field
from kafkatool.log.decoders._spec_tables import coordinator_types
from kafkatool.log.decoders.coordinator import (
    CoordinatorRecord,
    RecordTypes,
    decode_coordinator_record,
    format_coordinator_record,
)
from kafkatool.release import Release

__all__ = ["SHARE_RECORD_TYPES", "decode_share_group_state", "format_share_group_state_record"]

_V0 = (0, 0)
_KEY_FIELDS = (field("groupId", "string"), field("topicId", "uuid"), field("partition", "int32"))
_BATCHES = field(
    "stateBatches",
    "[]struct",
    _V0,
    fields=(
        field("firstOffset", "int64", _V0),
        field("lastOffset", "int64", _V0),
        field("deliveryState", "int8", _V0),
        field("deliveryCount", "int16", _V0),
    ),
)


def _key(name: str, record_type: int) -> Message:
    """A key spec: valid at its record type only, not flexible."""
    versions = (record_type, record_type)
    return Message(name, versions, None, tuple(field(f.name, f.type, versions) for f in _KEY_FIELDS))


#: The share coordinator's records; values are flexible.
SHARE_RECORD_TYPES = RecordTypes(
    "share group state",
    keys={0: _key("ShareSnapshotKey", 0), 1: _key("ShareUpdateKey", 1)},
    values={
        0: Message(
            "ShareSnapshotValue",
            _V0,
            (0, MAX),
            (
                field("snapshotEpoch", "uint16", _V0),
                field("stateEpoch", "int32"),
                field("leaderEpoch", "int32"),
                field("startOffset", "int64", _V0),
                _BATCHES,
            ),
        ),
        1: Message(
            "ShareUpdateValue",
            _V0,
            (0, MAX),
            (
                field("snapshotEpoch", "uint16", _V0),
                field("leaderEpoch", "int32"),
                field("startOffset", "int64", _V0),
                _BATCHES,
            ),
        ),
    },
    value_label="type",
    known_by="4.0",
)


def decode_share_group_state(key: bytes, value: bytes | None) -> CoordinatorRecord:
    """`ShareCoordinatorRecordSerde.deserialize`; raises DecodeError with Kafka's message on failure."""
    return decode_coordinator_record(SHARE_RECORD_TYPES, key, value)


def format_share_group_state_record(
    offset: int, key: bytes, value: bytes | None, *, rel: Release | None = None
) -> tuple[str, str | None]:
    """(key text, payload text or None) as Kafka 4.0's share group state decoder prints them (or a
    later release's, from its specs: the value's version labelled `"version"` from 4.1); what Kafka
    skips is an `ErrorText` (`newer` set for record types and versions newer than the release's)."""
    types = (coordinator_types("share", rel) if rel is not None else None) or SHARE_RECORD_TYPES
    return format_coordinator_record(types, offset, key, value)
