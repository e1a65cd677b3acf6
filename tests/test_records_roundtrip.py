"""Property tests: v2 record batches written by `encode_v2_batch` read back field for field.

Covers every codec, CreateTime and LogAppendTime, null keys/values/header values, producer state
with sequences wrapping past INT32_MAX, transactional/control flags, the cleaner's delete horizon and
empty batches; then the framing walk (several batches, partial tails) and damage detection.
"""

from __future__ import annotations

import struct

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from kafkatool.log.codecs import Codec
from kafkatool.log.errors import CorruptRecordError
from kafkatool.log.record import INT32_MAX, NO_SEQUENCE, TS_CREATE, TS_LOG_APPEND, Record, increment_sequence
from kafkatool.log.records import BatchScan, iter_batches, read_batch_header
from kafkatool.log.writer import encode_control_record, encode_v2_batch

SETTINGS = settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])

nullable_bytes = st.one_of(st.none(), st.binary(max_size=40))
header_keys = st.text(st.characters(blacklist_categories=("Cs",)), max_size=8)
headers = st.lists(st.tuples(header_keys, nullable_bytes), max_size=3).map(tuple)
timestamps = st.integers(min_value=-1, max_value=2**42)


@st.composite
def record_lists(draw: st.DrawFn, max_size: int = 12) -> list[Record]:
    base = draw(st.integers(min_value=0, max_value=2**62))
    n = draw(st.integers(min_value=1, max_value=max_size))
    gaps = draw(st.lists(st.integers(min_value=1, max_value=5), min_size=n, max_size=n))
    offsets = [base + sum(gaps[:i]) - gaps[0] for i in range(1, n + 1)]
    return [
        Record(o, draw(timestamps), draw(nullable_bytes), draw(nullable_bytes), draw(headers)) for o in offsets
    ]


@st.composite
def batches(draw: st.DrawFn) -> tuple[bytes, dict, list[Record]]:
    recs = draw(record_lists())
    kw: dict = {
        "codec": draw(st.sampled_from(list(Codec))),
        "timestamp_type": draw(st.sampled_from([TS_CREATE, TS_LOG_APPEND])),
        "partition_leader_epoch": draw(st.integers(min_value=-1, max_value=2**31 - 1)),
        "is_transactional": draw(st.booleans()),
    }
    if draw(st.booleans()):
        kw["producer_id"] = draw(st.integers(min_value=0, max_value=2**63 - 1))
        kw["producer_epoch"] = draw(st.integers(min_value=0, max_value=2**15 - 1))
        # Sequences near INT32_MAX wrap to 0 inside the batch.
        kw["base_sequence"] = draw(
            st.one_of(st.integers(0, INT32_MAX), st.integers(INT32_MAX - 40, INT32_MAX))
        )
    if kw["timestamp_type"] == TS_LOG_APPEND:
        kw["max_timestamp"] = draw(timestamps)
    if draw(st.booleans()) and kw["timestamp_type"] == TS_CREATE:
        kw["delete_horizon_ms"] = draw(st.integers(min_value=0, max_value=2**42))
    return encode_v2_batch(recs, **kw), kw, recs


def _expected_sequence(kw: dict, base_offset: int, offset: int) -> int:
    base_seq = kw.get("base_sequence", NO_SEQUENCE)
    return NO_SEQUENCE if base_seq == NO_SEQUENCE else increment_sequence(base_seq, offset - base_offset)


@SETTINGS
@given(b=batches())
def test_v2_batch_round_trip(b: tuple[bytes, dict, list[Record]]) -> None:
    data, kw, recs = b
    batch = read_batch_header(data, 0, len(data))
    assert batch is not None
    assert (batch.position, batch.size, batch.end, batch.magic) == (0, len(data), len(data), 2)
    assert batch.base_offset == recs[0].offset and batch.last_offset == recs[-1].offset
    assert batch.next_offset == recs[-1].offset + 1
    assert batch.count == len(recs)
    assert batch.codec == kw["codec"]
    assert batch.timestamp_type == kw["timestamp_type"]
    assert batch.partition_leader_epoch == kw["partition_leader_epoch"]
    assert batch.producer_id == kw.get("producer_id", -1)
    assert batch.producer_epoch == kw.get("producer_epoch", -1)
    assert batch.base_sequence == kw.get("base_sequence", NO_SEQUENCE)
    assert batch.last_sequence == _expected_sequence(kw, batch.base_offset, batch.last_offset)
    assert batch.is_transactional == kw["is_transactional"] and not batch.is_control
    assert batch.delete_horizon_ms == kw.get("delete_horizon_ms")
    if kw["timestamp_type"] == TS_LOG_APPEND:
        assert batch.max_timestamp == kw["max_timestamp"]
    else:
        assert batch.max_timestamp == max(r.timestamp for r in recs)
    assert batch.is_valid() and batch.compute_crc() == batch.crc
    batch.validate()
    assert batch.raw() == data

    got = batch.records()
    assert [r.offset for r in got] == [r.offset for r in recs]
    if kw["timestamp_type"] == TS_LOG_APPEND:
        assert all(r.timestamp == kw["max_timestamp"] for r in got)
    else:
        assert [r.timestamp for r in got] == [r.timestamp for r in recs]
    assert [(r.key, r.value, r.headers) for r in got] == [(r.key, r.value, r.headers) for r in recs]
    assert [r.sequence for r in got] == [_expected_sequence(kw, batch.base_offset, r.offset) for r in recs]
    assert all(r.crc is None and r.valid for r in got)
    assert [(r.key_size, r.value_size) for r in got] == [
        (-1 if r.key is None else len(r.key), -1 if r.value is None else len(r.value)) for r in recs
    ]
    assert list(batch) == got


@pytest.mark.parametrize("base_sequence", [INT32_MAX, INT32_MAX - 1, INT32_MAX - 5])
def test_sequence_wraps_to_zero_past_int32_max(base_sequence: int) -> None:
    recs = [Record(100 + i, 1000, b"k", b"v", ()) for i in range(8)]
    data = encode_v2_batch(recs, producer_id=7, producer_epoch=1, base_sequence=base_sequence)
    batch = read_batch_header(data, 0, len(data))
    assert batch is not None
    seqs = [r.sequence for r in batch.records()]
    expected = [(base_sequence + i) % (INT32_MAX + 1) for i in range(8)]
    assert seqs == expected
    assert batch.last_sequence == expected[-1]


@SETTINGS
@given(
    base=st.integers(0, 2**62),
    span=st.integers(0, 1000),
    pid=st.integers(0, 2**40),
    epoch=st.integers(0, 2**15 - 1),
    seq=st.integers(-1, INT32_MAX),
    txn=st.booleans(),
    horizon=st.one_of(st.none(), st.integers(0, 2**42)),
)
def test_empty_batch(base: int, span: int, pid: int, epoch: int, seq: int, txn: bool, horizon: int | None) -> None:
    """The 61-byte header the cleaner keeps so producer state survives compaction."""
    data = encode_v2_batch(
        [], base_offset=base, last_offset=base + span, producer_id=pid, producer_epoch=epoch,
        base_sequence=seq, is_transactional=txn, delete_horizon_ms=horizon,
    )
    assert len(data) == 61
    batch = read_batch_header(data, 0, 61)
    assert batch is not None and batch.is_valid()
    assert (batch.count, batch.base_offset, batch.last_offset) == (0, base, base + span)
    assert (batch.producer_id, batch.producer_epoch, batch.base_sequence) == (pid, epoch, seq)
    assert batch.is_transactional == txn
    assert batch.delete_horizon_ms == horizon
    assert batch.base_timestamp == (-1 if horizon is None else horizon)
    assert batch.records() == []


@SETTINGS
@given(
    control_type=st.sampled_from([0, 1]),
    coordinator_epoch=st.integers(0, 2**31 - 1),
    offset=st.integers(0, 2**62),
    ts=timestamps,
)
def test_control_batch(control_type: int, coordinator_epoch: int, offset: int, ts: int) -> None:
    key, value = encode_control_record(control_type, coordinator_epoch)
    data = encode_v2_batch(
        [Record(offset, ts, key, value, ())], producer_id=5, producer_epoch=0, is_transactional=True,
        is_control=True,
    )
    batch = read_batch_header(data, 0, len(data))
    assert batch is not None and batch.is_control and batch.is_transactional and batch.is_valid()
    (rec,) = batch.records()
    assert struct.unpack(">hh", rec.key) == (0, control_type)
    assert struct.unpack(">hi", rec.value) == (0, coordinator_epoch)
    assert rec.offset == offset


@settings(SETTINGS, max_examples=25)
@given(bs=st.lists(batches(), min_size=1, max_size=4), cut=st.integers(0, 2**20))
def test_walk_several_batches_and_a_partial_tail(bs: list, cut: int) -> None:
    datas = [b[0] for b in bs]
    buf = b"".join(datas)
    walked = list(iter_batches(buf))
    assert [b.raw() for b in walked] == datas
    assert [b.position for b in walked] == [sum(len(d) for d in datas[:i]) for i in range(len(datas))]

    # Cut anywhere inside the last batch: every earlier batch reads, the tail is reported, nothing raises.
    last_start = len(buf) - len(datas[-1])
    end = last_start + cut % len(datas[-1])
    scan = BatchScan(buf, 0, end)
    assert [b.raw() for b in scan] == datas[:-1]
    assert scan.error is None
    assert scan.valid_bytes == last_start
    assert scan.trailing_bytes == end - last_start


@SETTINGS
@given(b=batches(), at=st.integers(0), bit=st.integers(0, 7))
def test_any_bit_flip_after_the_crc_field_is_detected(b: tuple, at: int, bit: int) -> None:
    """CRC-32C covers bytes 21..end: every single-bit error there fails is_valid()."""
    data, _kw, _recs = b
    pos = 21 + at % (len(data) - 21)
    damaged = bytearray(data)
    damaged[pos] ^= 1 << bit
    batch = read_batch_header(bytes(damaged), 0, len(damaged))
    assert batch is not None
    assert not batch.is_valid()
    with pytest.raises(CorruptRecordError, match="is corrupt"):
        batch.validate()


@SETTINGS
@given(b=batches(), at=st.integers(0), value=st.integers(0, 255))
def test_damaged_records_raise_only_corrupt_record_error(b: tuple, at: int, value: int) -> None:
    data, _kw, _recs = b
    pos = 61 + at % max(1, len(data) - 61)
    assume(pos < len(data))
    damaged = bytearray(data)
    damaged[pos] = value
    batch = read_batch_header(bytes(damaged), 0, len(damaged))
    assert batch is not None
    try:
        batch.records()
    except CorruptRecordError:
        pass


@pytest.mark.parametrize("size", [-1, 0, 13])
def test_size_below_minimum_is_corrupt(size: int) -> None:
    data = struct.pack(">qi", 0, size) + bytes(64)
    with pytest.raises(CorruptRecordError, match=f"Found record size {size} smaller than minimum"):
        read_batch_header(data, 0, len(data))
    scan = BatchScan(data)
    assert list(scan) == [] and isinstance(scan.error, CorruptRecordError)
    assert scan.valid_bytes == 0


def test_v2_size_below_header_is_corrupt() -> None:
    data = struct.pack(">qiib", 0, 30, 0, 2) + bytes(40)
    with pytest.raises(CorruptRecordError, match="smaller than the record batch overhead"):
        read_batch_header(data, 0, len(data))


@pytest.mark.parametrize("n", range(0, 18))
def test_short_buffers_are_partial_tails(n: int) -> None:
    data = encode_v2_batch([Record(0, 0, b"k", b"v", ())])
    assert read_batch_header(data[:n], 0, n) is None
    assert list(iter_batches(data[:n])) == []


@SETTINGS
@given(count=st.integers(-(2**31), -1))
def test_negative_record_count(count: int) -> None:
    data = bytearray(encode_v2_batch([Record(0, 0, b"k", b"v", ())]))
    struct.pack_into(">i", data, 57, count)
    batch = read_batch_header(bytes(data), 0, len(data))
    assert batch is not None
    with pytest.raises(CorruptRecordError, match="invalid record count"):
        batch.records()


@SETTINGS
@given(
    b=batches(),
    field=st.sampled_from([(21, ">h"), (23, ">i"), (27, ">q"), (53, ">i"), (57, ">i")]),
    value=st.integers(-(2**31), 2**31 - 1),
)
def test_damaged_header_fields_raise_only_corrupt_record_error(b: tuple, field: tuple, value: int) -> None:
    """attributes (codec ids 5-7), lastOffsetDelta, baseTimestamp, baseSequence, recordsCount."""
    data, _kw, _recs = b
    at, fmt = field
    damaged = bytearray(data)
    struct.pack_into(fmt, damaged, at, value if fmt != ">h" else value % 2**15)
    batch = read_batch_header(bytes(damaged), 0, len(damaged))
    assert batch is not None
    assert not batch.is_valid() or bytes(damaged) == data
    try:
        batch.records()
    except CorruptRecordError:
        pass


@pytest.mark.parametrize("codec", [Codec.GZIP, Codec.LZ4, Codec.ZSTD])
def test_empty_batch_with_a_codec_and_no_body_has_no_records(codec: Codec) -> None:
    data = bytearray(encode_v2_batch([], base_offset=5, last_offset=5))
    struct.pack_into(">h", data, 21, codec)
    batch = read_batch_header(bytes(data), 0, len(data))
    assert batch is not None and batch.count == 0
    assert batch.records() == []


# ------------------------------------------------------------------------------------------------
# header keys decode as Java's `new String(bytes, UTF_8)` (what Kafka's tools print)

_JAVA_UTF8_ECHO = """
import java.io.*;
import java.nio.charset.StandardCharsets;

public class Utf8Echo {
    public static void main(String[] args) throws IOException {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.US_ASCII));
        StringBuilder out = new StringBuilder();
        for (String line = in.readLine(); line != null; line = in.readLine()) {
            byte[] raw = new byte[line.length() / 2];
            for (int i = 0; i < raw.length; i++) raw[i] = (byte) Integer.parseInt(line.substring(2 * i, 2 * i + 2), 16);
            for (byte x : new String(raw, StandardCharsets.UTF_8).getBytes(StandardCharsets.UTF_8)) {
                out.append(Character.forDigit((x >> 4) & 15, 16)).append(Character.forDigit(x & 15, 16));
            }
            out.append('\\n');
        }
        System.out.print(out);
    }
}
"""


def test_header_keys_decode_like_java(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Malformed UTF-8 in header keys, decoded by our records reader vs a real JVM's String decoder."""
    import random
    import shutil
    import subprocess

    java = shutil.which("java")
    if java is None:
        pytest.skip("no java on PATH to compare with")
    rng = random.Random(7)
    # Lead/continuation bytes around every UTF-8 boundary, where Java's and Python's replacement rules differ.
    pool = [0x00, 0x41, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xC1, 0xC2, 0xDF, 0xE0, 0xE1, 0xEC, 0xED,
            0xEE, 0xEF, 0xF0, 0xF1, 0xF3, 0xF4, 0xF5, 0xF7, 0xF8, 0xFF]
    keys = sorted({bytes(rng.choice(pool) for _ in range(rng.randrange(1, 7))) for _ in range(6000)})
    src = tmp_path / "Utf8Echo.java"
    src.write_text(_JAVA_UTF8_ECHO)
    proc = subprocess.run([java, str(src)], input="\n".join(k.hex() for k in keys).encode() + b"\n",
                          capture_output=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    expected = proc.stdout.decode().split("\n")[: len(keys)]
    recs = [Record(i, 0, None, None, ((k, None),)) for i, k in enumerate(keys)]  # type: ignore[arg-type]
    data = encode_v2_batch(recs)
    batch = read_batch_header(data, 0, len(data))
    assert batch is not None
    got = [r.headers[0][0].encode("utf-8").hex() for r in batch.records()]
    mismatches = [(k.hex(), e, g) for k, e, g in zip(keys, expected, got, strict=True) if e != g]
    assert not mismatches, mismatches[:10]
