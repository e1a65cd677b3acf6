"""Compression codecs as Kafka frames them on disk.

Kafka stores one compressed stream per wrapper message (v0/v1) or per batch (v2).  Each codec has
a Kafka-specific framing quirk that a plain library call would reject or produce differently:
snappy uses the xerial block stream, lz4 under magic 0 carries a header checksum computed the
wrong way (KAFKA-1493), gzip streams may be concatenated members.  Every decoder here is C-backed.
"""

from __future__ import annotations

import struct
import threading
import zlib
from enum import IntEnum
from functools import cache
from typing import Any

from kafkatool.log.errors import CorruptRecordError


class Codec(IntEnum):
    """Compression type ids from the attributes field (bits 0-2)."""

    NONE = 0
    GZIP = 1
    SNAPPY = 2
    LZ4 = 3
    ZSTD = 4

    @property
    def label(self) -> str:
        """Kafka's lowercase name, as dump-log prints it."""
        return self.name.lower()


CODEC_NAMES = {c.label: c for c in Codec}

_XERIAL_MAGIC = b"\x82SNAPPY\x00"
_XERIAL_HEADER = _XERIAL_MAGIC + struct.pack(">ii", 1, 1)
_XERIAL_BLOCK = 32 * 1024  # Kafka's SnappyOutputStream block size
_LZ4_MAGIC = b"\x04\x22\x4d\x18"


@cache
def _cramjam() -> Any:
    import cramjam

    return cramjam


@cache
def _lz4f() -> Any:
    import lz4.frame

    return lz4.frame


@cache
def _zstd() -> Any:
    import zstandard

    return zstandard


@cache
def _zstd_dctx() -> Any:
    """Codec libraries load on first use: a shallow dump of an uncompressed log never needs them."""
    return _zstd().ZstdDecompressor()


def _xxh32(data: bytes, seed: int = 0) -> int:
    """xxHash32 of a few bytes: only the LZ4 frame descriptor checksum needs it."""
    p1, p2, p3, p4, p5 = 2654435761, 2246822519, 3266489917, 668265263, 374761393
    mask = 0xFFFFFFFF
    n = len(data)
    i = 0
    if n >= 16:
        v = [(seed + p1 + p2) & mask, (seed + p2) & mask, seed & mask, (seed - p1) & mask]
        while i + 16 <= n:
            for j in range(4):
                (lane,) = struct.unpack_from("<I", data, i)
                x = (v[j] + lane * p2) & mask
                x = ((x << 13) | (x >> 19)) & mask
                v[j] = (x * p1) & mask
                i += 4
        h = 0
        for j, r in enumerate((1, 7, 12, 18)):
            h += ((v[j] << r) | (v[j] >> (32 - r))) & mask
        h &= mask
    else:
        h = (seed + p5) & mask
    h = (h + n) & mask
    while i + 4 <= n:
        (lane,) = struct.unpack_from("<I", data, i)
        h = (h + lane * p3) & mask
        h = (((h << 17) | (h >> 15)) & mask) * p4 & mask
        i += 4
    while i < n:
        h = (h + data[i] * p5) & mask
        h = (((h << 11) | (h >> 21)) & mask) * p1 & mask
        i += 1
    h ^= h >> 15
    h = (h * p2) & mask
    h ^= h >> 13
    h = (h * p3) & mask
    h ^= h >> 16
    return h


def _lz4_descriptor_len(data: bytes) -> int:
    """Length of FLG+BD(+content size)(+dict id) after the 4-byte magic."""
    if len(data) < 7 or data[:4] != _LZ4_MAGIC:
        raise CorruptRecordError("lz4: bad frame magic")
    flg = data[4]
    return 2 + (8 if flg & 0x08 else 0) + (4 if flg & 0x01 else 0)


def _lz4_fix_header_checksum(data: bytes) -> bytes:
    """Rewrite a KAFKA-1493 header checksum (computed over magic+descriptor) to the standard one."""
    dlen = _lz4_descriptor_len(data)
    hc_pos = 4 + dlen
    if len(data) <= hc_pos:
        raise CorruptRecordError("lz4: truncated frame header")
    good = (_xxh32(bytes(data[4:hc_pos])) >> 8) & 0xFF
    if data[hc_pos] == good:
        return data
    return bytes(data[:hc_pos]) + bytes((good,)) + bytes(data[hc_pos + 1 :])


def _lz4_break_header_checksum(frame: bytes) -> bytes:
    """Make a standard frame carry Kafka's magic-0 checksum (over magic+descriptor)."""
    dlen = _lz4_descriptor_len(frame)
    hc_pos = 4 + dlen
    broken = (_xxh32(frame[:hc_pos]) >> 8) & 0xFF
    return frame[:hc_pos] + bytes((broken,)) + frame[hc_pos + 1 :]


def _snappy_decompress(data: bytes) -> bytes:
    """xerial's SnappyInputStream: empty is empty; a full 16-byte header starts a block stream;
    anything else (including a cut header) is one raw snappy block."""
    if not data:
        return b""
    if len(data) >= len(_XERIAL_HEADER) and data[:8] == _XERIAL_MAGIC:
        out = []
        pos = 16
        n = len(data)
        while pos < n:
            if pos + 4 > n:
                raise CorruptRecordError("snappy: truncated xerial block header")
            (blen,) = struct.unpack_from(">i", data, pos)
            pos += 4
            if blen < 0 or pos + blen > n:
                raise CorruptRecordError("snappy: xerial block length out of range")
            out.append(bytes(_cramjam().snappy.decompress_raw(data[pos : pos + blen])))
            pos += blen
        return b"".join(out)
    return bytes(_cramjam().snappy.decompress_raw(data))


def _snappy_compress(data: bytes) -> bytes:
    parts = [_XERIAL_HEADER]
    for i in range(0, len(data), _XERIAL_BLOCK) or [0]:
        block = bytes(_cramjam().snappy.compress_raw(data[i : i + _XERIAL_BLOCK]))
        parts.append(struct.pack(">i", len(block)))
        parts.append(block)
    return b"".join(parts)


def _gzip_decompress(data: bytes) -> bytes:
    d = zlib.decompressobj(16 + zlib.MAX_WBITS)
    out = [d.decompress(data)]
    rest = d.unused_data
    while rest and rest[:2] == b"\x1f\x8b":  # concatenated members
        d = zlib.decompressobj(16 + zlib.MAX_WBITS)
        out.append(d.decompress(rest))
        rest = d.unused_data
    if not d.eof:
        raise CorruptRecordError("gzip: truncated stream")
    return b"".join(out)


def _zstd_decompress(data: bytes) -> bytes:
    """Every frame of the stream (zstd-jni's input stream reads across frames); a cut frame is damage."""
    out = []
    rest = data
    while True:
        d = _zstd_dctx().decompressobj()
        out.append(d.decompress(rest))
        if not d.eof:
            raise CorruptRecordError("zstd: truncated frame")
        rest = d.unused_data
        if not rest:
            return b"".join(out)


class _Scratch(threading.local):
    """One decompression buffer a thread, reused batch after batch (see `lz4_into_scratch`)."""

    buf = bytearray(0)


_scratch = _Scratch()
_SCRATCH_MIN = 1 << 20
_SCRATCH_MAX = 1 << 31  # a batch's records never decompress to more than Kafka's 2 GiB int sizes


def lz4_into_scratch(data: memoryview) -> memoryview | None:
    """A v2 batch's LZ4 frame decompressed into this thread's reused buffer: a view valid until the next
    call (release it), or None when it did not decompress (the caller then takes `decompress`, whose
    error is the one to report).

    A new bytes object a batch meant a fresh few hundred KiB of memory for every batch; decompressing
    into one buffer is 2.5x faster on small-record lz4 logs (benchmarks/README.md)."""
    scratch = _scratch.buf
    if not scratch:
        scratch = _scratch.buf = bytearray(_SCRATCH_MIN)
    lz4 = _cramjam().lz4
    while True:
        try:
            n = lz4.decompress_into(data, scratch)
        except Exception as exc:  # noqa: BLE001 - the reference path reports the damage
            if "whole buffer" not in str(exc) or len(scratch) >= _SCRATCH_MAX:
                return None
            scratch = _scratch.buf = bytearray(len(scratch) * 4)  # a bigger batch than any before
            continue
        return memoryview(scratch)[:n]


def decompress(codec: int, data: bytes, magic: int = 2) -> bytes:
    """Decompress one Kafka compressed stream; raise CorruptRecordError on any damage."""
    try:
        if codec == Codec.GZIP:
            return _gzip_decompress(data)
        if codec == Codec.SNAPPY:
            return _snappy_decompress(data)
        if codec == Codec.LZ4:
            if magic == 0:
                data = _lz4_fix_header_checksum(data)
            return _lz4f().decompress(data)
        if codec == Codec.ZSTD:
            return _zstd_decompress(data)
        if codec == Codec.NONE:
            return bytes(data)
    except CorruptRecordError:
        raise
    except Exception as exc:  # codec libraries raise assorted types on damaged input
        raise CorruptRecordError(f"{Codec(codec).label}: {exc or type(exc).__name__}") from None
    raise CorruptRecordError(f"unknown compression codec id {codec}")


def compress(codec: int, data: bytes, magic: int = 2, level: int | None = None) -> bytes:
    """Compress as a Kafka producer of that message format would frame it."""
    if codec == Codec.NONE:
        return data
    if codec == Codec.GZIP:
        import gzip  # writing only (reading uses zlib): not at every start-up

        out = bytearray(gzip.compress(data, compresslevel=6 if level is None else level, mtime=0))
        out[9] = 0xFF  # OS byte "unknown", as the JVM's GZIPOutputStream writes it (byte-identical batches)
        return bytes(out)
    if codec == Codec.SNAPPY:
        return _snappy_compress(data)
    if codec == Codec.LZ4:
        frame = _lz4f().compress(
            data,
            block_size=_lz4f().BLOCKSIZE_MAX64KB,
            block_linked=False,
            content_checksum=False,
            store_size=False,
            compression_level=level or 0,
        )
        return _lz4_break_header_checksum(frame) if magic == 0 else frame
    if codec == Codec.ZSTD:
        if magic < 2:
            raise ValueError("zstd needs message format v2")
        return _zstd().ZstdCompressor(level=level or 3).compress(data)
    raise ValueError(f"unknown compression codec id {codec}")
