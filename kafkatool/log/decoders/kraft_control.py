"""KRaft control records as data: what a metadata log's and snapshot's control batches hold.

`kafkatool.log.decoders.control_records` prints them as dump-log does; `decode_control_record` gives their
fields to the readers of a metadata log dir (the quorum's voters, leader changes, the snapshot header's
last contained log time), read as Kafka's `ControlRecordUtils` reads them.
"""

from __future__ import annotations

from typing import Any

from kafkatool.log.decoders._schema import Message, read_struct
from kafkatool.log.decoders._wire import DecodeError, Reader
from kafkatool.log.decoders.control_records import (
    _CONTROL_JSON,
    _INVALID_RECORD,
    _NPE,
    CONTROL_TYPES,
    _control_type_id,
)

__all__ = ["decode_control_record"]

# The control records KRaft reads as data (leader changes, snapshot frame, kraft.version, voters).
_CONTROL_DATA: dict[int, Message] = {k: spec for k, (_, spec, _since) in _CONTROL_JSON.items()}


def decode_control_record(key: bytes | None, value: bytes | None) -> tuple[str, dict[str, Any]]:
    """A control record's type name and fields: KRaft's own (LEADER_CHANGE, SNAPSHOT_HEADER/FOOTER,
    KRAFT_VERSION, KRAFT_VOTERS) read as Kafka's `ControlRecordUtils` does, at the record's own version;
    transaction markers give `version` and `coordinatorEpoch`, other types no fields.

    Raises DecodeError on bytes Kafka would reject.
    """
    type_id = _control_type_id(key)
    name = CONTROL_TYPES.get(type_id, "UNKNOWN")
    if type_id in (0, 1):
        if value is None or len(value) < 6:
            raise DecodeError("Invalid value size found for end transaction marker", _INVALID_RECORD)
        r = Reader(value)
        return name, {"version": r.int16(), "coordinatorEpoch": r.int32()}
    spec = _CONTROL_DATA.get(type_id)
    if spec is None:
        return name, {}
    if value is None or len(value) < 2:
        raise DecodeError(f"{spec.name} control record has no version", _NPE)
    version = Reader(value).int16()
    if not 0 <= version <= spec.valid[1]:
        raise DecodeError(f"{spec.name} control record version {version} is not one this release reads", _NPE)
    r = Reader(value)
    data = read_struct(r, spec.fields, version, spec.valid, spec.flexible)
    return name, data
