"""Property tests: v0/v1 messages and compressed wrappers written by `encode_legacy_batch` read back.

v1 wrappers carry relative inner offsets and the absolute offset of the last inner message; v0
wrappers carry absolute inner offsets; a v1 LogAppendTime wrapper's timestamp wins over the inner ones.
"""

from __future__ import annotations

import struct
import zlib

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafkatool.log.codecs import Codec, decompress
from kafkatool.log.errors import CorruptRecordError
from kafkatool.log.record import TS_CREATE, TS_LOG_APPEND, TS_NONE, Record
from kafkatool.log.records import BatchScan, iter_batches
from kafkatool.log.writer import encode_legacy_batch, encode_legacy_message

SETTINGS = settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
LEGACY_CODECS = [Codec.NONE, Codec.GZIP, Codec.SNAPPY, Codec.LZ4]

nullable_bytes = st.one_of(st.none(), st.binary(max_size=40))
timestamps = st.integers(min_value=0, max_value=2**42)


@st.composite
def contiguous_records(draw: st.DrawFn) -> list[Record]:
    base = draw(st.integers(min_value=0, max_value=2**62))
    n = draw(st.integers(min_value=1, max_value=10))
    return [Record(base + i, draw(timestamps), draw(nullable_bytes), draw(nullable_bytes), ()) for i in range(n)]


def _inner_offsets(wrapper: bytes, magic: int, codec: int) -> list[int]:
    """Offsets exactly as stored inside a wrapper's compressed message set."""
    inner = decompress(codec, _wrapper_value(wrapper, magic), magic)
    out, pos = [], 0
    while pos < len(inner):
        off, size = struct.unpack_from(">qi", inner, pos)
        out.append(off)
        pos += 12 + size
    return out


def _wrapper_value(wrapper: bytes, magic: int) -> bytes:
    kpos = 12 + (14 if magic == 1 else 6)
    (klen,) = struct.unpack_from(">i", wrapper, kpos)
    vpos = kpos + 4 + max(klen, 0)
    (vlen,) = struct.unpack_from(">i", wrapper, vpos)
    return wrapper[vpos + 4 : vpos + 4 + vlen]


@SETTINGS
@given(
    recs=contiguous_records(),
    magic=st.sampled_from([0, 1]),
    codec=st.sampled_from(LEGACY_CODECS),
    log_append_time=st.one_of(st.none(), timestamps),
)
def test_legacy_round_trip(recs: list[Record], magic: int, codec: int, log_append_time: int | None) -> None:
    data = encode_legacy_batch(recs, magic=magic, codec=codec, log_append_time=log_append_time)
    batches = list(iter_batches(data))
    lat = log_append_time if magic == 1 else None
    if codec == Codec.NONE:
        assert len(batches) == len(recs)
        assert [b.last_offset for b in batches] == [r.offset for r in recs]
        assert [b.base_offset for b in batches] == [r.offset for r in recs]
    else:
        assert len(batches) == 1
        assert batches[0].last_offset == recs[-1].offset
        assert _inner_offsets(data, magic, codec) == (
            list(range(len(recs))) if magic == 1 else [r.offset for r in recs]
        )
    expected_type = TS_NONE if magic == 0 else (TS_LOG_APPEND if lat is not None else TS_CREATE)
    got: list[Record] = []
    for b in batches:
        assert b.magic == magic and b.codec == codec
        assert b.timestamp_type == expected_type
        assert b.is_valid() and b.compute_crc() == b.crc
        assert (b.producer_id, b.producer_epoch, b.base_sequence, b.count) == (-1, -1, -1, None)
        assert not (b.is_transactional or b.is_control) and b.delete_horizon_ms is None
        assert b.last_sequence == -1
        got.extend(b.records())
    assert [r.offset for r in got] == [r.offset for r in recs]
    assert [(r.key, r.value) for r in got] == [(r.key, r.value) for r in recs]
    if magic == 0:
        expected_ts = [-1] * len(recs)
    elif lat is not None:
        expected_ts = [lat] * len(recs)
    else:
        expected_ts = [r.timestamp for r in recs]
    assert [r.timestamp for r in got] == expected_ts
    assert all(r.valid and r.headers == () and r.sequence == -1 for r in got)
    if codec == Codec.NONE:
        assert [r.crc for r in got] == [b.crc for b in batches]
    elif magic == 1:
        assert batches[0].max_timestamp == (lat if lat is not None else max(r.timestamp for r in recs))


@SETTINGS
@given(
    offset=st.integers(0, 2**63 - 1),
    key=nullable_bytes,
    value=nullable_bytes,
    magic=st.sampled_from([0, 1]),
    ts=timestamps,
)
def test_single_message_layout(offset: int, key: bytes | None, value: bytes | None, magic: int, ts: int) -> None:
    msg = encode_legacy_message(offset, key, value, magic=magic, timestamp=ts)
    off, size = struct.unpack_from(">qi", msg, 0)
    assert (off, size) == (offset, len(msg) - 12)
    assert size == (14 if magic == 0 else 22) + len(key or b"") + len(value or b"")
    assert struct.unpack_from(">I", msg, 12)[0] == zlib.crc32(msg[16:])
    (b,) = list(iter_batches(msg))
    (r,) = b.records()
    assert (r.offset, r.key, r.value, r.timestamp) == (offset, key, value, ts if magic else -1)
    assert r.key_size == (-1 if key is None else len(key))


def test_v1_wrapper_at_offset_zero_keeps_relative_offsets() -> None:
    """Some librdkafka versions left the wrapper offset 0: Kafka then reports inner offsets as stored."""
    recs = [Record(i, 10 + i, b"k", b"v", ()) for i in range(3)]
    data = bytearray(encode_legacy_batch([r._replace(offset=100 + r.offset) for r in recs], codec=Codec.GZIP))
    struct.pack_into(">q", data, 0, 0)
    (b,) = list(iter_batches(bytes(data)))
    assert [r.offset for r in b.records()] == [0, 1, 2]


@SETTINGS
@given(
    gaps=st.lists(st.integers(1, 5), min_size=2, max_size=8),
    codec=st.sampled_from([Codec.GZIP, Codec.SNAPPY, Codec.LZ4]),
)
def test_v1_wrapper_with_offset_gaps(gaps: list[int], codec: int) -> None:
    """Compaction leaves gaps: inner offsets are relative to the first record, gaps kept (Kafka's toInnerOffset)."""
    offsets = [100 + sum(gaps[:i]) for i in range(len(gaps))]
    recs = [Record(o, 1, b"k", b"v", ()) for o in offsets]
    (b,) = list(iter_batches(encode_legacy_batch(recs, codec=codec)))
    assert [r.offset for r in b.records()] == offsets


@SETTINGS
@given(
    recs=contiguous_records(),
    magic=st.sampled_from([0, 1]),
    codec=st.sampled_from(LEGACY_CODECS),
    at=st.integers(0),
    bit=st.integers(0, 7),
)
def test_bit_flips_in_crc_range_are_detected(recs: list[Record], magic: int, codec: int, at: int, bit: int) -> None:
    data = encode_legacy_batch(recs[:1] if codec == Codec.NONE else recs, magic=magic, codec=codec)
    pos = 16 + at % (len(data) - 16)
    damaged = bytearray(data)
    damaged[pos] ^= 1 << bit
    scan = BatchScan(bytes(damaged))
    found = list(scan)
    if scan.error is not None:  # the flip hit the magic byte: too small for a v1 message or v2 batch
        assert pos == 16 and not found
        return
    (b,) = found
    assert not b.is_valid()
    try:
        for r in b.records():
            assert codec != Codec.NONE or not r.valid
    except CorruptRecordError:
        pass


@SETTINGS
@given(
    recs=contiguous_records(),
    magic=st.sampled_from([0, 1]),
    codec=st.sampled_from(LEGACY_CODECS),
    at=st.integers(0),
    value=st.integers(0, 255),
)
def test_damaged_messages_raise_only_corrupt_record_error(
    recs: list[Record], magic: int, codec: int, at: int, value: int
) -> None:
    data = bytearray(encode_legacy_batch(recs, magic=magic, codec=codec))
    data[at % len(data)] = value
    scan = BatchScan(bytes(data))
    for b in scan:
        try:
            b.records()
        except CorruptRecordError:
            pass
