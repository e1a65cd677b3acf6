"""The v2 record format (Kafka's `DefaultRecord`): the records inside a v2 batch, decoded.

`Batch` (`kafkatool.log.records`) frames a v2 batch and decompresses its records; `decode_v2_records`
turns those bytes into `Record`s.  It is the hottest loop of the product, so varints of one and two
bytes are decoded inline by table lookup (`ZIGZAG`), and the compiled core (`kafkatool.log.core`)
replaces it when built: `py_decode_v2_records` is the reference the C version is tested against."""

from __future__ import annotations

from kafkatool.jvm.text import java_utf8
from kafkatool.log.core import speedups
from kafkatool.log.errors import CorruptRecordError
from kafkatool.log.record import INT32_MAX, NO_SEQUENCE, Record
from kafkatool.log.varint import read_varint

_new = tuple.__new__


# zig-zag decoding of every 1- and 2-byte varint payload (7 or 14 bits), by table lookup
ZIGZAG = [0] * (1 << 14)
ZIGZAG[0::2] = range(1 << 13)  # even raw values are non-negative: raw >> 1
ZIGZAG[1::2] = range(-1, -(1 << 13) - 1, -1)  # odd ones negative: -(raw >> 1) - 1


def read_headers(d: bytes, pos: int) -> tuple[tuple[tuple[str, bytes | None], ...], int]:
    """Decode a record's headers (count, then key/value pairs) starting at pos."""
    hcount, pos = read_varint(d, pos)
    if hcount < 0:
        raise CorruptRecordError(f"invalid header count {hcount}")
    hs = []
    for _h in range(hcount):
        b = d[pos]
        if b < 0x80:
            hklen = ZIGZAG[b]
            pos += 1
        else:
            hklen, pos = read_varint(d, pos)
        if hklen < 0:
            raise CorruptRecordError(f"invalid header key length {hklen}")
        hkey = java_utf8(d[pos : pos + hklen])
        pos += hklen
        b = d[pos]
        if b < 0x80:
            hvlen = ZIGZAG[b]
            pos += 1
        else:
            hvlen, pos = read_varint(d, pos)
        if hvlen >= 0:
            hval: bytes | None = d[pos : pos + hvlen]
            pos += hvlen
        elif hvlen == -1:
            hval = None
        else:
            raise CorruptRecordError(f"invalid header value length {hvlen}")
        hs.append((hkey, hval))
    return tuple(hs), pos


def py_decode_v2_records(
    d: bytes,
    count: int,
    base_offset: int,
    base_timestamp: int,
    log_append_time: int | None,
    base_sequence: int,
) -> list[Record]:
    """Decode `count` v2 records from d.  The hot loop of the product: single-byte varints inline."""
    out: list[Record] = []
    append = out.append
    pos = 0
    n = len(d)
    seq_ok = base_sequence != NO_SEQUENCE
    last_hraw = None
    last_headers: tuple = ()
    try:
        for _ in range(count):
            b = d[pos]
            if b < 0x80:
                length = ZIGZAG[b]
                pos += 1
            else:
                b2 = d[pos + 1]
                if b2 < 0x80:
                    length = ZIGZAG[(b & 0x7F) | (b2 << 7)]
                    pos += 2
                else:
                    length, pos = read_varint(d, pos)
            end = pos + length  # checked once the record is read (pos must land exactly there)
            b = d[pos + 1]  # skips the record attributes byte (unused)
            if b < 0x80:
                ts_delta = ZIGZAG[b]
                pos += 2
            else:
                b2 = d[pos + 2]
                if b2 < 0x80:
                    ts_delta = ZIGZAG[(b & 0x7F) | (b2 << 7)]
                    pos += 3
                else:
                    ts_delta, pos = read_varint(d, pos + 1)
            b = d[pos]
            if b < 0x80:
                off_delta = ZIGZAG[b]
                pos += 1
            else:
                b2 = d[pos + 1]
                if b2 < 0x80:
                    off_delta = ZIGZAG[(b & 0x7F) | (b2 << 7)]
                    pos += 2
                else:
                    off_delta, pos = read_varint(d, pos)
            b = d[pos]
            if b < 0x80:
                klen = ZIGZAG[b]
                pos += 1
            else:
                b2 = d[pos + 1]
                if b2 < 0x80:
                    klen = ZIGZAG[(b & 0x7F) | (b2 << 7)]
                    pos += 2
                else:
                    klen, pos = read_varint(d, pos)
            if klen >= 0:
                key: bytes | None = d[pos : pos + klen]
                pos += klen
            elif klen == -1:
                key = None
            else:
                raise CorruptRecordError(f"invalid key length {klen}")
            b = d[pos]
            if b < 0x80:
                vlen = ZIGZAG[b]
                pos += 1
            else:
                b2 = d[pos + 1]
                if b2 < 0x80:
                    vlen = ZIGZAG[(b & 0x7F) | (b2 << 7)]
                    pos += 2
                else:
                    vlen, pos = read_varint(d, pos)
            if vlen >= 0:
                value: bytes | None = d[pos : pos + vlen]
                pos += vlen
            elif vlen == -1:
                value = None
            else:
                raise CorruptRecordError(f"invalid value length {vlen}")
            if d[pos] == 0:
                headers: tuple = ()
                pos += 1
            elif d[pos:end] == last_hraw:  # headers are the record's tail; producers repeat them
                headers = last_headers
                pos = end
            else:
                last_hraw = d[pos:end]
                headers, pos = read_headers(d, pos)
                last_headers = headers
            if pos != end:
                if length < 0 or end > n:
                    raise CorruptRecordError(f"record length {length} runs past the end of the batch")
                raise CorruptRecordError(
                    f"Invalid record size: expected to read {length} bytes in record payload, "
                    f"but instead read {pos - end + length}"
                )
            append(
                _new(
                    Record,
                    (
                        base_offset + off_delta,
                        log_append_time if log_append_time is not None else base_timestamp + ts_delta,
                        key,
                        value,
                        headers,
                        (
                            (
                                base_sequence + off_delta
                                if base_sequence <= INT32_MAX - off_delta
                                else off_delta - (INT32_MAX - base_sequence) - 1
                            )
                            if seq_ok
                            else NO_SEQUENCE
                        ),
                        None,
                        True,
                    ),
                )
            )
    except IndexError:
        err = CorruptRecordError("record runs past the end of the batch")
        err.partial = out
        raise err from None
    except CorruptRecordError as err:
        err.partial = out  # the records before the damage, for tools that show what was readable
        raise
    return out


decode_v2_records = py_decode_v2_records if speedups is None else speedups.decode_v2_records
