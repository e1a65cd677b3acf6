"""Encoders for v0/v1 messages and v2 record batches, and a segment writer with broker indexing.

The same encoders serve the test-data generator, the benchmarks, `compact` (which re-encodes kept
records with the original magic and codec) and `recover --salvage`.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from kafkatool.log import crc as _crc32c
from kafkatool.log.codecs import Codec, compress
from kafkatool.log.files import INDEX_SUFFIX, LOG_SUFFIX, TIME_INDEX_SUFFIX, segment_name
from kafkatool.log.indexer import IndexBuilder
from kafkatool.log.record import (
    ATTR_CONTROL,
    ATTR_DELETE_HORIZON,
    ATTR_LOG_APPEND_TIME,
    ATTR_TRANSACTIONAL,
    LEGACY_ATTR_LOG_APPEND_TIME,
    NO_SEQUENCE,
    NO_TIMESTAMP,
    TS_LOG_APPEND,
    Record,
)
from kafkatool.log.varint import encode_varint

_V2_TAIL = struct.Struct(">hiqqqhii")  # attributes .. recordsCount (bytes 21..61)
_V2_HEAD = struct.Struct(">qiib")  # baseOffset batchLength ple magic
_INT32 = struct.Struct(">i")


def _encode_v2_record(offset_delta: int, ts_delta: int, key: bytes | None, value: bytes | None, headers) -> bytes:  # type: ignore[no-untyped-def]
    parts = [b"\x00", encode_varint(ts_delta), encode_varint(offset_delta)]
    if key is None:
        parts.append(b"\x01")
    else:
        parts.append(encode_varint(len(key)))
        parts.append(key)
    if value is None:
        parts.append(b"\x01")
    else:
        parts.append(encode_varint(len(value)))
        parts.append(value)
    parts.append(encode_varint(len(headers)))
    for hk, hv in headers:
        hkb = hk.encode("utf-8") if isinstance(hk, str) else hk
        parts.append(encode_varint(len(hkb)))
        parts.append(hkb)
        if hv is None:
            parts.append(b"\x01")
        else:
            parts.append(encode_varint(len(hv)))
            parts.append(hv)
    body = b"".join(parts)
    return encode_varint(len(body)) + body


def encode_v2_batch(
    records: Sequence[Record],
    base_offset: int | None = None,
    *,
    codec: int = Codec.NONE,
    timestamp_type: int = 0,
    producer_id: int = -1,
    producer_epoch: int = -1,
    base_sequence: int = NO_SEQUENCE,
    partition_leader_epoch: int = 0,
    is_transactional: bool = False,
    is_control: bool = False,
    delete_horizon_ms: int | None = None,
    last_offset: int | None = None,
    max_timestamp: int | None = None,
    compression_level: int | None = None,
) -> bytes:
    """Encode a v2 record batch.  Offsets are the records' absolute offsets.

    An empty `records` gives the 61-byte empty batch the cleaner keeps for producer state
    (pass `base_offset` and `last_offset`).
    """
    if base_offset is None:
        base_offset = records[0].offset if records else 0
    if last_offset is None:
        last_offset = records[-1].offset if records else base_offset
    if delete_horizon_ms is not None:
        base_ts = delete_horizon_ms
    elif records:
        base_ts = min(r.timestamp for r in records) if timestamp_type != TS_LOG_APPEND else records[0].timestamp
    else:
        base_ts = NO_TIMESTAMP
    if max_timestamp is None:
        max_timestamp = max((r.timestamp for r in records), default=NO_TIMESTAMP)
    if timestamp_type == TS_LOG_APPEND and records:
        base_ts = max_timestamp if delete_horizon_ms is None else base_ts
    body = b"".join(
        _encode_v2_record(r.offset - base_offset, r.timestamp - base_ts, r.key, r.value, r.headers) for r in records
    )
    if codec != Codec.NONE and records:
        body = compress(codec, body, 2, compression_level)
    attributes = (codec & 0x07) if records else 0
    if timestamp_type == TS_LOG_APPEND:
        attributes |= ATTR_LOG_APPEND_TIME
    if is_transactional:
        attributes |= ATTR_TRANSACTIONAL
    if is_control:
        attributes |= ATTR_CONTROL
    if delete_horizon_ms is not None:
        attributes |= ATTR_DELETE_HORIZON
    tail = _V2_TAIL.pack(
        attributes,
        last_offset - base_offset,
        base_ts,
        max_timestamp,
        producer_id,
        producer_epoch,
        base_sequence,
        len(records),
    )
    crc = _crc32c.crc32c(tail + body) if body else _crc32c.crc32c(tail)
    head = _V2_HEAD.pack(base_offset, 61 - 12 + len(body), partition_leader_epoch, 2)
    return head + struct.pack(">I", crc) + tail + body


def encode_control_record(control_type: int, coordinator_epoch: int = 0) -> tuple[bytes, bytes]:
    """(key, value) of a COMMIT(1)/ABORT(0) end-transaction marker."""
    return struct.pack(">hh", 0, control_type), struct.pack(">hi", 0, coordinator_epoch)


def encode_legacy_message(
    offset: int,
    key: bytes | None,
    value: bytes | None,
    *,
    magic: int = 1,
    timestamp: int = NO_TIMESTAMP,
    codec: int = Codec.NONE,
    log_append_time: bool = False,
) -> bytes:
    """Encode one v0/v1 log entry (offset, size, message) with its CRC32."""
    attributes = codec & 0x07
    if magic == 1 and log_append_time:
        attributes |= LEGACY_ATTR_LOG_APPEND_TIME
    parts = [struct.pack(">bb", magic, attributes)]
    if magic == 1:
        parts.append(struct.pack(">q", timestamp))
    for field in (key, value):
        if field is None:
            parts.append(b"\xff\xff\xff\xff")
        else:
            parts.append(_INT32.pack(len(field)))
            parts.append(field)
    msg = b"".join(parts)
    msg = struct.pack(">I", zlib.crc32(msg)) + msg
    return struct.pack(">qi", offset, len(msg)) + msg


def encode_legacy_batch(
    records: Sequence[Record],
    *,
    magic: int = 1,
    codec: int = Codec.NONE,
    log_append_time: int | None = None,
    compression_level: int | None = None,
) -> bytes:
    """Encode records as a v0/v1 message set: plain messages, or one compressed wrapper.

    With a codec, v1 inner offsets are relative to the first record (0..n-1 when consecutive; gaps
    stay, as Kafka's toInnerOffset keeps them) and the wrapper carries the last absolute offset; v0
    inner offsets stay absolute.  `log_append_time` stamps the wrapper (v1).
    """
    if codec == Codec.NONE:
        return b"".join(
            encode_legacy_message(
                r.offset,
                r.key,
                r.value,
                magic=magic,
                timestamp=(log_append_time if log_append_time is not None else r.timestamp),
                log_append_time=log_append_time is not None,
            )
            for r in records
        )
    if codec == Codec.ZSTD:
        raise ValueError("zstd needs message format v2")
    inner = b"".join(
        encode_legacy_message(
            (r.offset - records[0].offset if magic >= 1 else r.offset), r.key, r.value, magic=magic,
            timestamp=r.timestamp,
        )
        for r in records
    )
    wrapper_ts = (
        log_append_time if log_append_time is not None else max((r.timestamp for r in records), default=-1)
    )
    return encode_legacy_message(
        records[-1].offset,
        None,
        compress(codec, inner, magic, compression_level),
        magic=magic,
        timestamp=wrapper_ts,
        codec=codec,
        log_append_time=log_append_time is not None,
    )


@dataclass
class SegmentWriter:
    """Append encoded batches to `<base>.log` and index them as a broker's LogSegment.append does."""

    dir: Path
    base_offset: int
    index_interval: int = 4096
    suffix: str = ""  # appended to every file name, e.g. ".cleaned" for a segment not yet swapped in

    def __post_init__(self) -> None:
        self.dir.mkdir(parents=True, exist_ok=True)
        self.path = self.dir / segment_name(self.base_offset, LOG_SUFFIX + self.suffix)
        self._f = open(self.path, "wb")  # noqa: SIM115 - closed in close()
        self.size = 0
        self.indexer = IndexBuilder(self.base_offset, self.index_interval)

    def append(self, data: bytes, last_offset: int, max_timestamp: int, offset_of_max_timestamp: int) -> None:
        """Append the bytes of one or more batches whose last offset/max timestamp are given."""
        self.indexer.on_append(last_offset, self.size, max_timestamp, offset_of_max_timestamp, len(data))
        self._f.write(data)
        self.size += len(data)

    def close(self) -> None:
        self._f.close()
        self.indexer.finish_on_close()
        (self.dir / segment_name(self.base_offset, INDEX_SUFFIX + self.suffix)).write_bytes(
            self.indexer.offset_index_bytes()
        )
        (self.dir / segment_name(self.base_offset, TIME_INDEX_SUFFIX + self.suffix)).write_bytes(
            self.indexer.time_index_bytes()
        )
