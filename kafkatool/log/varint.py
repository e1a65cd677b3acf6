"""Zig-zag varints as the v2 record format uses them (protobuf style, little-endian groups of 7)."""

from __future__ import annotations

from kafkatool.log.errors import CorruptRecordError

_U64 = 0xFFFFFFFFFFFFFFFF


def read_uvarint(buf: bytes, pos: int) -> tuple[int, int]:
    """Decode an unsigned varint (no zig-zag), as KRaft frames and compact fields use (at most 64 bits)."""
    raw = 0
    shift = 0
    while True:
        try:
            b = buf[pos]
        except IndexError:
            raise CorruptRecordError("varint runs past the end of the buffer") from None
        pos += 1
        raw |= (b & 0x7F) << shift
        if b < 0x80:
            return raw & _U64, pos
        shift += 7
        if shift > 63:
            raise CorruptRecordError("varint is longer than 10 bytes")


def read_varint(buf: bytes, pos: int) -> tuple[int, int]:
    """Decode a zig-zag varint (up to 10 bytes) at pos; return (value, next position).

    Like Kafka's ByteUtils.readVarlong the value is always a signed 64-bit integer, so a damaged
    10-byte varint can never yield a number that later breaks struct packing.
    """
    raw, pos = read_uvarint(buf, pos)  # a 10th byte's high bits fall off, as in Java's long arithmetic
    return (raw >> 1) ^ -(raw & 1), pos


def encode_varint(value: int) -> bytes:
    """Zig-zag encode a signed 64-bit value."""
    raw = ((value << 1) ^ (value >> 63)) & 0xFFFFFFFFFFFFFFFF
    if raw < 0x80:
        return bytes((raw,))
    out = bytearray()
    while raw >= 0x80:
        out.append((raw & 0x7F) | 0x80)
        raw >>= 7
    out.append(raw)
    return bytes(out)


def encode_uvarint(value: int) -> bytes:
    """Unsigned varint encoding."""
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def varint_size(value: int) -> int:
    """Bytes encode_varint(value) takes, without building them."""
    raw = ((value << 1) ^ (value >> 63)) & 0xFFFFFFFFFFFFFFFF
    n = 1
    while raw >= 0x80:
        raw >>= 7
        n += 1
    return n
