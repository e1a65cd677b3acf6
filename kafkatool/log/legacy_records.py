"""The v0 and v1 message formats (Kafka's `LegacyRecord`, `AbstractLegacyRecordBatch`).

A v0/v1 log entry is one message, which may be a compressed wrapper holding a message set of inner
messages; `Batch` (`kafkatool.log.records`) frames the entry and calls here to decode it."""

from __future__ import annotations

import struct
import zlib

from kafkatool.log.errors import CorruptRecordError
from kafkatool.log.record import (
    ATTR_CODEC_MASK,
    LOG_ENTRY,
    LOG_OVERHEAD,
    NO_SEQUENCE,
    NO_TIMESTAMP,
    V0_OVERHEAD,
    V1_OVERHEAD,
    Record,
)

_LEGACY_V0 = struct.Struct(">Ibbi")  # crc magic attributes keyLen
_LEGACY_V1 = struct.Struct(">Ibbqi")  # crc magic attributes timestamp keyLen
_INT32 = struct.Struct(">i")
_new = tuple.__new__


def legacy_message(buf: bytes, pos: int, size: int, ts_type: int, ts_override: int | None) -> Record:
    """Decode the v0/v1 message of the log entry at pos (offset, size, message)."""
    offset, msg_size = LOG_ENTRY.unpack_from(buf, pos)
    msg = pos + LOG_OVERHEAD
    end = msg + msg_size
    magic = buf[msg + 4]
    if magic == 0:
        crc, _m, _attr, key_len = _LEGACY_V0.unpack_from(buf, msg)
        ts = NO_TIMESTAMP
        kpos = msg + V0_OVERHEAD - 8
    elif magic == 1:
        if msg_size < V1_OVERHEAD:
            raise CorruptRecordError(f"message size {msg_size} below the v1 minimum of 22", pos)
        crc, _m, _attr, ts, key_len = _LEGACY_V1.unpack_from(buf, msg)
        kpos = msg + V1_OVERHEAD - 8
    else:
        raise CorruptRecordError(f"invalid magic {magic} in legacy message", pos)
    kpos += 4
    if key_len < -1 or kpos + max(key_len, 0) + 4 > end:
        raise CorruptRecordError(f"invalid key length {key_len} in message at offset {offset}", pos)
    key = None if key_len < 0 else bytes(buf[kpos : kpos + key_len])
    vpos = kpos + max(key_len, 0)
    (value_len,) = _INT32.unpack_from(buf, vpos)
    vpos += 4
    if value_len < -1 or vpos + max(value_len, 0) > end:
        raise CorruptRecordError(f"invalid value length {value_len} in message at offset {offset}", pos)
    value = None if value_len < 0 else bytes(buf[vpos : vpos + value_len])
    computed = zlib.crc32(buf[msg + 4 : end])
    if ts_override is not None:
        ts = ts_override
    return _new(Record, (offset, ts, key, value, (), NO_SEQUENCE, crc, computed == crc))


def legacy_value(buf: bytes, msg: int, msg_size: int) -> bytes | None:
    """The value of the v0/v1 message at msg (its crc field) of msg_size bytes: a wrapper's compressed set."""
    magic = buf[msg + 4]
    key_pos = msg + (V1_OVERHEAD - 8 if magic == 1 else V0_OVERHEAD - 8)
    (key_len,) = _INT32.unpack_from(buf, key_pos)
    vpos = key_pos + 4 + max(key_len, 0)
    if key_len < -1 or vpos + 4 > msg + msg_size:
        raise CorruptRecordError(f"invalid key length {key_len} in message at {msg - LOG_OVERHEAD}")
    (value_len,) = _INT32.unpack_from(buf, vpos)
    if value_len < -1 or vpos + 4 + max(value_len, 0) > msg + msg_size:
        raise CorruptRecordError(f"invalid value length {value_len} in message at {msg - LOG_OVERHEAD}")
    if value_len < 0:
        return None
    return bytes(buf[vpos + 4 : vpos + 4 + value_len])


def read_wrapper_into(
    recs: list[Record], inner: bytes, magic: int, ts_type: int, wrapper_ts: int | None, position: int
) -> None:
    """Append the inner messages of a compressed wrapper (its decompressed set) to recs, in order.

    recs is filled as messages are read, so on damage the caller still holds those before it.
    `position` is the wrapper's, for the errors.
    """
    pos = 0
    n = len(inner)
    while pos < n:
        if pos + LOG_OVERHEAD > n:
            raise CorruptRecordError("truncated inner message header in compressed wrapper", position)
        _off, size = LOG_ENTRY.unpack_from(inner, pos)
        if size < V0_OVERHEAD or pos + LOG_OVERHEAD + size > n:
            raise CorruptRecordError(f"invalid inner message size {size} in compressed wrapper", position)
        rec = legacy_message(inner, pos, size + LOG_OVERHEAD, ts_type, wrapper_ts)
        if inner[pos + 16] != magic:
            raise CorruptRecordError(
                f"inner message magic {inner[pos + 16]} does not match wrapper magic {magic}", position
            )
        if inner[pos + 17] & ATTR_CODEC_MASK:
            raise CorruptRecordError("nested compression in compressed wrapper", position)
        recs.append(rec)
        pos += LOG_OVERHEAD + size


def rebase_offsets(recs: list[Record], magic: int, wrapper_last_offset: int) -> list[Record]:
    """v1 wrappers store relative inner offsets: rebase them on the wrapper's (last) offset."""
    if magic >= 1 and recs:
        base = wrapper_last_offset - recs[-1].offset
        if base >= 0:
            recs = [r._replace(offset=base + r.offset) for r in recs]
    return recs
