"""Property tests of Kafka's compression framings: round trips, and damage always reported as CorruptRecordError."""

from __future__ import annotations

import gzip
import struct

import cramjam
import lz4.frame
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafkatool.log.codecs import CODEC_NAMES, Codec, _lz4_descriptor_len, _xxh32, compress, decompress
from kafkatool.log.errors import CorruptRecordError

# Payloads with some repetition so compressors do real work, not only literals.
payloads = st.one_of(
    st.binary(max_size=2048),
    st.lists(st.binary(min_size=1, max_size=16), max_size=40).map(lambda xs: b"".join(x * 7 for x in xs)),
)
# (codec, magic) pairs a Kafka producer can write; zstd only exists in v2.
CODEC_MAGICS = [(c, m) for c in Codec for m in (0, 1, 2) if not (c == Codec.ZSTD and m < 2)]
SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.mark.parametrize(("codec", "magic"), CODEC_MAGICS, ids=lambda v: str(v))
@SETTINGS
@given(data=payloads)
def test_round_trip(codec: Codec, magic: int, data: bytes) -> None:
    assert decompress(codec, compress(codec, data, magic), magic) == data


@given(data=st.binary(min_size=0, max_size=200_000))
@settings(max_examples=10, deadline=None)
def test_snappy_xerial_blocks_of_32k(data: bytes) -> None:
    """Kafka's SnappyOutputStream writes 32 KiB xerial blocks: each block decodes on its own."""
    framed = compress(Codec.SNAPPY, data)
    assert framed[:16] == b"\x82SNAPPY\x00" + struct.pack(">ii", 1, 1)
    pos, blocks = 16, []
    while pos < len(framed):
        (n,) = struct.unpack_from(">i", framed, pos)
        blocks.append(bytes(cramjam.snappy.decompress_raw(framed[pos + 4 : pos + 4 + n])))
        pos += 4 + n
    assert b"".join(blocks) == data
    assert all(len(b) == 32 * 1024 for b in blocks[:-1])


@SETTINGS
@given(data=payloads)
def test_snappy_reads_unframed_raw_snappy(data: bytes) -> None:
    """xerial's SnappyInputStream falls back to raw snappy when the magic is absent."""
    assert decompress(Codec.SNAPPY, bytes(cramjam.snappy.compress_raw(data))) == data


@SETTINGS
@given(data=payloads)
def test_lz4_magic0_carries_kafka_1493_checksum(data: bytes) -> None:
    """Magic 0 frames hash magic+descriptor (KAFKA-1493); standard decoders reject them, ours does not."""
    broken = compress(Codec.LZ4, data, magic=0)
    standard = compress(Codec.LZ4, data, magic=1)
    hc = 4 + 2  # no content size, no dict id in what Kafka's producer writes
    assert broken[hc] == (_xxh32(broken[:hc]) >> 8) & 0xFF
    assert standard[hc] == (_xxh32(standard[4:hc]) >> 8) & 0xFF
    assert broken[:hc] == standard[:hc] and broken[hc + 1 :] == standard[hc + 1 :]
    assert decompress(Codec.LZ4, broken, magic=0) == data
    # A magic-0 reader also accepts a correct checksum (Kafka 0.10+ wrote v0 with either).
    assert decompress(Codec.LZ4, standard, magic=0) == data
    if broken != standard:
        with pytest.raises(CorruptRecordError):
            decompress(Codec.LZ4, broken, magic=1)


@SETTINGS
@given(data=payloads, content_size=st.booleans())
def test_lz4_frames_with_optional_fields(data: bytes, content_size: bool) -> None:
    """Frames from other producers may carry a content size and a content checksum."""
    frame = lz4.frame.compress(data, store_size=content_size, content_checksum=True)
    assert decompress(Codec.LZ4, frame, magic=1) == data


@given(xs=st.lists(payloads, min_size=1, max_size=4))
@settings(max_examples=30, deadline=None)
def test_gzip_concatenated_members(xs: list[bytes]) -> None:
    assert decompress(Codec.GZIP, b"".join(gzip.compress(x) for x in xs)) == b"".join(xs)


@given(xs=st.lists(payloads, min_size=1, max_size=4))
@settings(max_examples=30, deadline=None)
def test_zstd_concatenated_frames(xs: list[bytes]) -> None:
    assert decompress(Codec.ZSTD, b"".join(compress(Codec.ZSTD, x) for x in xs)) == b"".join(xs)


@pytest.mark.parametrize(("codec", "magic"), [(c, m) for c, m in CODEC_MAGICS if c != Codec.NONE], ids=str)
@settings(max_examples=200, deadline=None)
@given(garbage=st.binary(max_size=300))
def test_garbage_raises_only_corrupt_record_error(codec: Codec, magic: int, garbage: bytes) -> None:
    try:
        decompress(codec, garbage, magic)
    except CorruptRecordError:
        pass


@pytest.mark.parametrize(("codec", "magic"), [(c, m) for c, m in CODEC_MAGICS if c != Codec.NONE], ids=str)
@settings(max_examples=80, deadline=None)
@given(data=payloads, cut=st.integers(min_value=1, max_value=64), flip=st.tuples(st.integers(0), st.integers(0, 7)))
def test_damaged_streams_never_raise_other_exceptions(
    codec: Codec, magic: int, data: bytes, cut: int, flip: tuple[int, int]
) -> None:
    """Truncated streams are always errors; bit-flipped ones are errors or (rarely) other bytes."""
    framed = compress(codec, data, magic)
    cut_framed = framed[: max(0, len(framed) - cut)]
    if codec == Codec.SNAPPY and (len(cut_framed) in (0, 16)):
        # xerial reads an empty stream or a bare header as empty, as a stream cut between blocks.
        assert decompress(codec, cut_framed, magic) == b""
    else:
        with pytest.raises(CorruptRecordError):
            decompress(codec, cut_framed, magic)
    at, bit = flip
    damaged = bytearray(framed)
    damaged[at % len(damaged)] ^= 1 << bit
    try:
        decompress(codec, bytes(damaged), magic)
    except CorruptRecordError:
        pass


def test_empty_streams() -> None:
    assert decompress(Codec.NONE, b"") == b""
    assert decompress(Codec.SNAPPY, b"") == b""  # xerial: an empty stream reads as empty
    for codec in (Codec.GZIP, Codec.LZ4, Codec.ZSTD):
        with pytest.raises(CorruptRecordError):
            decompress(codec, b"")
    with pytest.raises(CorruptRecordError):  # a cut xerial header is read as (bad) raw snappy
        decompress(Codec.SNAPPY, b"\x82SNAPPY\x00\x00\x00")


@pytest.mark.parametrize("codec_id", [5, 6, 7])
def test_unknown_codec_id(codec_id: int) -> None:
    with pytest.raises(CorruptRecordError, match=f"unknown compression codec id {codec_id}"):
        decompress(codec_id, b"abc")
    with pytest.raises(ValueError):
        compress(codec_id, b"abc")


def test_zstd_refused_below_v2() -> None:
    with pytest.raises(ValueError, match="zstd needs message format v2"):
        compress(Codec.ZSTD, b"abc", magic=1)


def test_codec_names() -> None:
    assert CODEC_NAMES == {"none": 0, "gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4}
    assert [c.label for c in Codec] == ["none", "gzip", "snappy", "lz4", "zstd"]


@settings(max_examples=200, deadline=None)
@given(data=st.binary(max_size=200))
def test_xxh32_matches_liblz4(data: bytes) -> None:
    """Our xxHash32 against what liblz4 writes: the content checksum and the descriptor checksum."""
    frame = lz4.frame.compress(data, store_size=True, content_checksum=True)
    assert frame[-4:] == struct.pack("<I", _xxh32(data))
    dlen = _lz4_descriptor_len(frame)  # liblz4 drops the content size of an empty frame
    assert frame[4 + dlen] == (_xxh32(frame[4 : 4 + dlen]) >> 8) & 0xFF
