"""Property tests of the v2 zig-zag varints against the format's rules and kafka-python's encoder."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kafka.record.util import decode_varint as kp_decode_varint
from kafka.record.util import encode_varint as kp_encode_varint
from kafka.record.util import size_of_varint as kp_size_of_varint

from kafkatool.log.errors import CorruptRecordError
from kafkatool.log.varint import encode_uvarint, encode_varint, read_uvarint, read_varint, varint_size

INT64 = st.integers(min_value=-(2**63), max_value=2**63 - 1)
UINT64 = st.integers(min_value=0, max_value=2**64 - 1)
SETTINGS = settings(max_examples=300, deadline=None)


def _kp_encode(v: int) -> bytes:
    out = bytearray()
    kp_encode_varint(v, out.append)
    return bytes(out)


@SETTINGS
@given(v=INT64, prefix=st.binary(max_size=4), suffix=st.binary(max_size=4))
def test_varint_round_trip(v: int, prefix: bytes, suffix: bytes) -> None:
    enc = encode_varint(v)
    assert len(enc) == varint_size(v) <= 10
    assert read_varint(prefix + enc + suffix, len(prefix)) == (v, len(prefix) + len(enc))


@SETTINGS
@given(v=INT64)
def test_varint_matches_kafka_python(v: int) -> None:
    enc = encode_varint(v)
    assert enc == _kp_encode(v)
    assert varint_size(v) == kp_size_of_varint(v)
    assert kp_decode_varint(bytearray(enc), 0) == (v, len(enc))


@SETTINGS
@given(v=UINT64)
def test_uvarint_round_trip(v: int) -> None:
    enc = encode_uvarint(v)
    assert read_uvarint(enc, 0) == (v, len(enc))
    assert all(b & 0x80 for b in enc[:-1]) and enc[-1] < 0x80


@pytest.mark.parametrize(
    ("v", "enc"),
    [(0, b"\x00"), (-1, b"\x01"), (1, b"\x02"), (-64, b"\x7f"), (64, b"\x80\x01"), (2**63 - 1, b"\xfe" + b"\xff" * 8 + b"\x01"),
     (-(2**63), b"\xff" * 9 + b"\x01")],
)
def test_known_encodings(v: int, enc: bytes) -> None:
    assert encode_varint(v) == enc
    assert read_varint(enc, 0) == (v, len(enc))


@settings(max_examples=500, deadline=None)
@given(data=st.binary(max_size=14), pos=st.integers(0, 3))
def test_any_bytes_decode_to_int64_or_corrupt(data: bytes, pos: int) -> None:
    """Damaged input: a signed 64-bit value (Java's readVarlong wraps), or CorruptRecordError."""
    for reader, lo, hi in ((read_varint, -(2**63), 2**63 - 1), (read_uvarint, 0, 2**64 - 1)):
        try:
            v, nxt = reader(data, pos)
        except CorruptRecordError:
            continue
        assert lo <= v <= hi
        assert pos < nxt <= min(len(data), pos + 10)


def test_errors() -> None:
    with pytest.raises(CorruptRecordError, match="past the end"):
        read_varint(b"\x80\x80", 0)
    with pytest.raises(CorruptRecordError, match="past the end"):
        read_varint(b"", 0)
    with pytest.raises(CorruptRecordError, match="longer than 10 bytes"):
        read_varint(b"\x80" * 11, 0)
    with pytest.raises(CorruptRecordError, match="longer than 10 bytes"):
        read_uvarint(b"\xff" * 10 + b"\x01", 0)


def test_tenth_byte_high_bits_fall_off_as_in_java() -> None:
    # 0x7f in the 10th byte: Java keeps only bit 63 of the shifted value.
    assert read_varint(b"\xff" * 9 + b"\x7f", 0) == (-(2**63), 10)
    assert read_uvarint(b"\xff" * 9 + b"\x7f", 0) == (2**64 - 1, 10)
