"""Cross-check with kafka-python's independent record decoder and builders.

Both directions, on generated data: batches we encode must read the same through kafka-python's
`MemoryRecords`/`DefaultRecordBatch`/`LegacyRecordBatch` (every field it exposes), and batches its
`DefaultRecordBatchBuilder`/`LegacyRecordBatchBuilder` build must read the same through ours.

Codec libraries kafka-python uses (`kafka.codec`): gzip (stdlib), lz4 (`lz4.frame`), zstd
(`zstandard`) are installed; snappy needs python-snappy and Kafka-0.8 lz4 (magic 0) needs `xxhash`,
neither of which is installed. For those two the tests install small stand-ins on `kafka.codec`
(raw snappy blocks from cramjam; xxHash32 from our liblz4-verified `_xxh32`), so kafka-python's own
xerial framing and KAFKA-1493 header rewriting are still what is being checked.
"""

from __future__ import annotations

import struct
import types
import zlib

import cramjam
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

kafka_codec = pytest.importorskip("kafka.codec")
from kafka.record.default_records import DefaultRecordBatch, DefaultRecordBatchBuilder  # noqa: E402
from kafka.record.legacy_records import LegacyRecordBatch, LegacyRecordBatchBuilder  # noqa: E402
from kafka.record.memory_records import MemoryRecords  # noqa: E402

from kafkatool.log.codecs import Codec, _xxh32  # noqa: E402
from kafkatool.log.record import TS_CREATE, TS_LOG_APPEND, Record  # noqa: E402
from kafkatool.log.records import BatchScan, read_batch_header  # noqa: E402
from kafkatool.log.writer import encode_control_record, encode_legacy_batch, encode_v2_batch  # noqa: E402
from tests.test_records_roundtrip import batches  # noqa: E402

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
LEGACY_CODECS = [Codec.NONE, Codec.GZIP, Codec.SNAPPY, Codec.LZ4]


class _Xxh32:
    def __init__(self, data: bytes) -> None:
        self._h = _xxh32(bytes(data))

    def digest(self) -> bytes:
        return struct.pack(">I", self._h)


@pytest.fixture(autouse=True)
def _codec_stand_ins(monkeypatch: pytest.MonkeyPatch) -> None:
    if not kafka_codec.has_snappy():
        monkeypatch.setattr(
            kafka_codec,
            "snappy",
            types.SimpleNamespace(
                compress=lambda b: bytes(cramjam.snappy.compress_raw(bytes(b))),
                decompress=lambda b: bytes(cramjam.snappy.decompress_raw(bytes(b))),
            ),
        )
    if kafka_codec.xxhash is None:
        monkeypatch.setattr(kafka_codec, "xxhash", types.SimpleNamespace(xxh32=_Xxh32))


def test_codec_support_in_kafka_python() -> None:
    """Which codecs kafka-python can use here (the stand-ins above fill the gaps)."""
    assert kafka_codec.has_gzip() and kafka_codec.has_lz4() and kafka_codec.has_zstd()
    assert kafka_codec.has_snappy()  # real python-snappy, or the cramjam stand-in


def _assert_v2_same(data: bytes) -> None:
    """Every field kafka-python exposes for a v2 batch and its records equals ours."""
    ours = read_batch_header(data, 0, len(data))
    assert ours is not None
    kp = DefaultRecordBatch(data)
    assert kp.base_offset == ours.base_offset
    assert kp.size_in_bytes == ours.size
    assert kp.leader_epoch == ours.partition_leader_epoch
    assert kp.magic == ours.magic == 2
    assert kp.crc == ours.crc
    assert kp.attributes == ours.attributes
    assert kp.last_offset == ours.last_offset and kp.next_offset == ours.next_offset
    assert kp.compression_type == ours.codec
    assert kp.timestamp_type == ours.timestamp_type
    assert kp.is_transactional == ours.is_transactional
    assert kp.is_control_batch == ours.is_control
    assert kp.first_timestamp == ours.base_timestamp
    assert kp.max_timestamp == ours.max_timestamp
    assert kp.producer_id == ours.producer_id
    assert kp.producer_epoch == ours.producer_epoch
    assert kp.base_sequence == ours.base_sequence
    assert kp.last_sequence == ours.last_sequence
    assert kp.records_count == ours.count
    assert kp.validate_crc() == ours.is_valid()
    kp_recs = list(kp)
    our_recs = ours.records()
    assert len(kp_recs) == len(our_recs) == ours.count
    for k, o in zip(kp_recs, our_recs, strict=True):
        assert k.offset == o.offset
        assert k.timestamp == o.timestamp
        assert k.timestamp_type == ours.timestamp_type
        assert k.key == o.key and k.value == o.value
        assert tuple(k.headers) == o.headers
        if ours.is_control:
            assert (k.version, k.type) == struct.unpack(">hh", o.key[:4])


def _assert_legacy_same(data: bytes) -> None:
    """Every field kafka-python exposes for v0/v1 messages (wrappers decompressed) equals ours."""
    kp_batches = list(MemoryRecords(data))
    scan = BatchScan(data)
    ours = list(scan)
    assert scan.error is None and scan.valid_bytes == len(data)
    assert len(kp_batches) == len(ours)
    for kb, ob in zip(kp_batches, ours, strict=True):
        assert isinstance(kb, LegacyRecordBatch)
        assert kb.base_offset == ob.last_offset
        assert kb.size_in_bytes == ob.size
        assert kb.magic == ob.magic
        assert kb.compression_type == ob.codec
        assert (kb.timestamp_type if kb.timestamp_type is not None else -1) == ob.timestamp_type
        assert kb.validate_crc() == ob.is_valid()
        kp_recs = list(kb)
        our_recs = ob.records()
        assert len(kp_recs) == len(our_recs)
        for k, o in zip(kp_recs, our_recs, strict=True):
            assert k.offset == o.offset
            assert (k.timestamp if k.timestamp is not None else -1) == o.timestamp
            assert k.key == o.key and k.value == o.value
            assert k.checksum == o.crc
            assert k.validate_crc() == o.valid
            assert k.headers == [] and o.headers == ()


# ------------------------------------------------------------------------------------------------
# ours → kafka-python


@SETTINGS
@given(b=batches())
def test_our_v2_batches_read_the_same_in_kafka_python(b: tuple) -> None:
    _assert_v2_same(b[0])


@settings(SETTINGS, max_examples=20)
@given(bs=st.lists(batches(), min_size=1, max_size=4), cut=st.integers(0, 2**20))
def test_memory_records_walk_agrees(bs: list, cut: int) -> None:
    """Several batches and a partial tail: both walks yield the same batches and the same valid bytes."""
    buf = b"".join(b[0] for b in bs)
    buf = buf[: len(buf) - cut % len(bs[-1][0])]
    mr = MemoryRecords(buf)
    kp = list(mr)
    scan = BatchScan(buf)
    ours = list(scan)
    assert [k.base_offset for k in kp] == [o.base_offset for o in ours]
    assert [k.size_in_bytes for k in kp] == [o.size for o in ours]
    assert mr.valid_bytes() == scan.valid_bytes


@SETTINGS
@given(control_type=st.sampled_from([0, 1]), epoch=st.integers(0, 2**31 - 1), offset=st.integers(0, 2**40))
def test_our_control_batches_read_the_same(control_type: int, epoch: int, offset: int) -> None:
    key, value = encode_control_record(control_type, epoch)
    data = encode_v2_batch(
        [Record(offset, 5, key, value, ())], producer_id=9, producer_epoch=1, is_transactional=True, is_control=True
    )
    _assert_v2_same(data)
    (rec,) = list(DefaultRecordBatch(data))
    assert rec.commit == (control_type == 1) and rec.abort == (control_type == 0)


@SETTINGS
@given(
    recs=st.lists(
        st.tuples(st.integers(0, 2**42), st.one_of(st.none(), st.binary(max_size=30)), st.binary(max_size=30)),
        min_size=1,
        max_size=8,
    ),
    base=st.integers(0, 2**40),
    magic=st.sampled_from([0, 1]),
    codec=st.sampled_from(LEGACY_CODECS),
    log_append_time=st.one_of(st.none(), st.integers(0, 2**42)),
)
def test_our_legacy_messages_read_the_same_in_kafka_python(
    recs: list, base: int, magic: int, codec: int, log_append_time: int | None
) -> None:
    records = [Record(base + i, ts, k, v, ()) for i, (ts, k, v) in enumerate(recs)]
    _assert_legacy_same(encode_legacy_batch(records, magic=magic, codec=codec, log_append_time=log_append_time))


# ------------------------------------------------------------------------------------------------
# kafka-python → ours

kp_headers = st.lists(
    st.tuples(st.text(st.characters(blacklist_categories=("Cs",)), max_size=6), st.one_of(st.none(), st.binary(max_size=10))),
    max_size=3,
)


@SETTINGS
@given(
    recs=st.lists(
        st.tuples(
            st.integers(1, 4),  # offset step
            st.integers(0, 2**41),
            st.one_of(st.none(), st.binary(max_size=40)),
            st.one_of(st.none(), st.binary(max_size=40).map(lambda b: b * 3)),
            kp_headers,
        ),
        min_size=1,
        max_size=10,
    ),
    codec=st.sampled_from(list(Codec)),
    producer=st.one_of(
        st.none(),
        st.tuples(st.integers(0, 2**40), st.integers(0, 2**15 - 1), st.integers(2**31 - 20, 2**31 - 1), st.booleans()),
    ),
    base_offset=st.integers(0, 2**50),
    ple=st.integers(0, 1000),
)
def test_kafka_python_v2_builder_reads_the_same_in_ours(
    recs: list, codec: int, producer: tuple | None, base_offset: int, ple: int
) -> None:
    pid, epoch, seq, txn = producer if producer else (-1, -1, -1, False)
    builder = DefaultRecordBatchBuilder(
        magic=2, compression_type=codec, is_transactional=txn, producer_id=pid, producer_epoch=epoch,
        base_sequence=seq, batch_size=2**30,
    )
    offset = -1
    for step, ts, key, value, headers in recs:
        offset += step
        assert builder.append(offset, ts, key, value, headers) is not None
    data = bytearray(builder.build())
    # What a broker does on append: set the base offset and leader epoch (both outside the CRC).
    struct.pack_into(">q", data, 0, base_offset)
    struct.pack_into(">i", data, 12, ple)
    _assert_v2_same(bytes(data))
    ours = read_batch_header(bytes(data), 0, len(data))
    assert ours is not None and ours.is_valid() and ours.timestamp_type == TS_CREATE
    got = ours.records()
    assert [(r.key, r.value, list(r.headers)) for r in got] == [(k, v, h) for _s, _t, k, v, h in recs]
    assert [r.timestamp for r in got] == [t for _s, t, _k, _v, _h in recs]


@SETTINGS
@given(
    recs=st.lists(
        st.tuples(st.integers(0, 2**41), st.one_of(st.none(), st.binary(max_size=30)), st.binary(max_size=60)),
        min_size=1,
        max_size=8,
    ),
    magic=st.sampled_from([0, 1]),
    codec=st.sampled_from(LEGACY_CODECS),
    wrapper_offset=st.one_of(st.none(), st.integers(0, 2**40)),
    log_append_time=st.one_of(st.none(), st.integers(0, 2**41)),
)
def test_kafka_python_legacy_builder_reads_the_same_in_ours(
    recs: list, magic: int, codec: int, wrapper_offset: int | None, log_append_time: int | None
) -> None:
    builder = LegacyRecordBatchBuilder(magic=magic, compression_type=codec, batch_size=2**30)
    for i, (ts, key, value) in enumerate(recs):
        assert builder.append(i, ts, key, value) is not None
    data = bytearray(builder.build())
    if codec != Codec.NONE:
        if wrapper_offset is not None:  # the broker's offset assignment: the wrapper gets the last offset
            struct.pack_into(">q", data, 0, wrapper_offset + len(recs) - 1)
        if magic == 1 and log_append_time is not None:  # ... and LogAppendTime topics restamp the wrapper
            struct.pack_into(">bq", data, 17, codec | 0x08, log_append_time)
            struct.pack_into(">I", data, 12, zlib.crc32(bytes(data[16:])))
    _assert_legacy_same(bytes(data))
    got = [r for b in BatchScan(bytes(data)) for r in b.records()]
    assert [(r.key, r.value) for r in got] == [(k, v) for _t, k, v in recs]
    if codec != Codec.NONE and magic == 1 and log_append_time is not None:
        assert all(r.timestamp == log_append_time for r in got)
        assert next(iter(BatchScan(bytes(data)))).timestamp_type == TS_LOG_APPEND
    if codec != Codec.NONE and magic == 1 and wrapper_offset is not None:
        assert [r.offset for r in got] == [wrapper_offset + i for i in range(len(recs))]


# ------------------------------------------------------------------------------------------------
# real broker data


def test_every_fixture_log_reads_the_same(kafka_logs) -> None:  # type: ignore[no-untyped-def]
    """All v0/v1/v2 logs real brokers wrote (every codec, transactions, compaction) agree field by field."""
    checked = 0
    for path in sorted(kafka_logs.rglob("*.log")):
        if "corrupt" in path.parts:
            continue
        data = path.read_bytes()
        scan = BatchScan(data)
        for b in scan:
            if b.magic >= 2:
                _assert_v2_same(b.raw())
            else:
                _assert_legacy_same(b.raw())
            checked += 1
        assert scan.error is None
    assert checked > 1000
