"""A record and the constants Kafka's log formats share (sizes, attribute bits, timestamp types).

What every format module builds on, as kafka-python's `kafka/record/abc.py` and `util.py` are: the
framing and batch header (`records`), the v0/v1 messages (`legacy_records`) and the v2 records
(`default_records`) all produce `Record`s and read these constants."""

from __future__ import annotations

import struct
from typing import NamedTuple

LOG_OVERHEAD = 12  # offset:int64 + size:int32
HEADER_SIZE_UP_TO_MAGIC = 17
V2_HEADER_SIZE = 61
V0_OVERHEAD = 14  # crc + magic + attributes + keyLen + valueLen
V1_OVERHEAD = 22
NO_TIMESTAMP = -1
NO_SEQUENCE = -1
INT32_MAX = 2**31 - 1

# v2 attribute bits
ATTR_CODEC_MASK = 0x07
ATTR_LOG_APPEND_TIME = 0x08
ATTR_TRANSACTIONAL = 0x10
ATTR_CONTROL = 0x20
ATTR_DELETE_HORIZON = 0x40
# legacy attribute bit
LEGACY_ATTR_LOG_APPEND_TIME = 0x08

TS_NONE = -1
TS_CREATE = 0
TS_LOG_APPEND = 1
TIMESTAMP_TYPE_NAMES = {TS_NONE: "NoTimestampType", TS_CREATE: "CreateTime", TS_LOG_APPEND: "LogAppendTime"}

LOG_ENTRY = struct.Struct(">qi")  # offset, size: the frame of every format

# ControlRecordType of a control batch's record (its key: version:int16, type:int16)
CONTROL_ABORT = 0
CONTROL_COMMIT = 1
_CONTROL_KEY = struct.Struct(">hh")


def control_type_of(key: bytes | None) -> int | None:
    """The ControlRecordType in a control record's key, or None when the key is too short to hold one."""
    if key is None or len(key) < 4:
        return None
    return _CONTROL_KEY.unpack_from(key)[1]


class Record(NamedTuple):
    """One record as consumers see it.  `crc`/`valid` are per-message for v0/v1 (None/True for v2)."""

    offset: int
    timestamp: int
    key: bytes | None
    value: bytes | None
    headers: tuple[tuple[str, bytes | None], ...]
    sequence: int = NO_SEQUENCE
    crc: int | None = None
    valid: bool = True

    @property
    def key_size(self) -> int:
        return -1 if self.key is None else len(self.key)

    @property
    def value_size(self) -> int:
        return -1 if self.value is None else len(self.value)


def increment_sequence(base: int, delta: int) -> int:
    """Kafka's sequence arithmetic: wraps to 0 past INT32_MAX."""
    if base > INT32_MAX - delta:
        return delta - (INT32_MAX - base) - 1
    return base + delta
