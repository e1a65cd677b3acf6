"""Property tests: the cleaner's key-only decoders agree with `Batch.records()`, damage included.

`decode_v2_keys` (one batch, no values or `Record`s) and `decode_key_columns` (many batches, fields
decoded with numpy) must give the offsets, keys and null-value positions that decoding every batch in
turn with `Batch.records()` gives, and on a damaged batch raise that decoding's first error, message
and all.  Batches mix codecs, v0/v1 messages, headers, null keys and values, 1-3 byte varints (values
up to 9000 bytes, offset gaps) and records past 3-byte lengths.
"""

from __future__ import annotations

import hashlib
import random

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafkatool.log.codecs import Codec
from kafkatool.log.core import load_speedups
from kafkatool.log.crc import crc32c
from kafkatool.log.default_records import decode_v2_records
from kafkatool.log.record import Record
from kafkatool.log.records import BatchScan
from kafkatool.log.writer import encode_legacy_batch, encode_v2_batch
from kafkatool.ops.compact import keys as keys_module
from kafkatool.ops.compact.keys import batch_key_columns, decode_key_columns, decode_v2_keys

SETTINGS = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _batch_bytes(rng: random.Random, offset: int) -> tuple[bytes, int]:
    """One random batch at offset; returns its bytes and the next offset."""
    n = rng.randrange(0, 25)
    if n == 0:
        return encode_v2_batch([], offset, last_offset=offset), offset + 1
    recs = []
    for _ in range(n):
        key = None if rng.random() < 0.1 else rng.randbytes(rng.choice([0, 3, 16, 70]))
        value = None if rng.random() < 0.15 else rng.randbytes(rng.choice([0, 5, 100, 1000, 9000, 70000]))
        hdrs = () if rng.random() < 0.8 else (("h", b"v"), ("k", None))[: rng.randrange(1, 3)]
        recs.append(Record(offset, 1_700_000_000_000 + rng.randrange(-(10**7), 10**7), key, value, hdrs))
        offset += rng.choice([1, 1, 1, 2, 100, 20000])
    if rng.random() < 0.1:
        codec = rng.choice([Codec.NONE, Codec.GZIP])
        legacy = [r._replace(headers=(), offset=recs[0].offset + i) for i, r in enumerate(recs)]
        return encode_legacy_batch(legacy, magic=1, codec=codec), legacy[-1].offset + 1
    codec = rng.choice([Codec.NONE, Codec.NONE, Codec.GZIP, Codec.SNAPPY, Codec.LZ4, Codec.ZSTD])
    return encode_v2_batch(recs, recs[0].offset, codec=codec), offset


def _log(seed: int, damage: int) -> bytes:
    """A few batches; `damage` record bytes changed with the CRC fixed (so only decoding notices)."""
    rng = random.Random(seed)
    parts = []
    offset = rng.randrange(0, 2**40)
    for _ in range(rng.randrange(1, 6)):
        data, offset = _batch_bytes(rng, offset)
        parts.append(bytearray(data))
    for _ in range(damage):
        part = rng.choice(parts)
        if part[16] == 2 and len(part) > 61:
            part[rng.randrange(61, len(part))] = rng.randrange(256)
            part[17:21] = crc32c(bytes(part[21:])).to_bytes(4, "big")
    return b"".join(parts)


def _one_by_one(buf: bytes) -> tuple:
    out: tuple = ([], [], [], [0])
    try:
        for b in BatchScan(buf):
            recs = b.records()
            out[0].extend(r.offset for r in recs)
            out[1].extend(r.key for r in recs)
            out[2].extend(r.value is None for r in recs)
            out[3].append(len(out[0]))
    except Exception as exc:  # noqa: BLE001 - the error itself is compared
        return ("error", type(exc), str(exc))
    return ("ok", *out)


@SETTINGS
@given(seed=st.integers(0, 2**32), damage=st.sampled_from([0, 0, 1, 2]))
def test_decode_key_columns_is_records_decoding_batch_by_batch(seed, damage):
    buf = _log(seed, damage)
    expected = _one_by_one(buf)
    batches = list(BatchScan(buf))
    for max_bytes in (None, seed % 5000):  # also in rounds of a few KB of decompressed data
        try:
            cols = decode_key_columns(batches) if max_bytes is None else decode_key_columns(batches, max_bytes=max_bytes)
            got: tuple = ("ok", cols.offsets.tolist(), cols.keys(), cols.null_values.tolist(), list(cols.starts))
        except Exception as exc:  # noqa: BLE001
            got = ("error", type(exc), str(exc))
        assert got == expected
        if expected[0] != "ok":
            continue
        assert cols.null_keys.tolist() == [k is None for k in expected[2]]
        assert cols.offsets.dtype == np.int64 and cols.null_values.dtype == bool and len(cols) == len(expected[1])
        which = np.array([random.Random(seed + i).random() < 0.5 for i in range(len(cols))], dtype=bool)
        assert cols.keys(which) == [k for k, w in zip(expected[2], which, strict=True) if w]
        assert cols.keys(which, hashlib.md5) == [
            None if k is None else hashlib.md5(k).digest() for k, w in zip(expected[2], which, strict=True) if w
        ]
        keyed = which & ~cols.null_keys  # the cleaner's digests (MD5 compiled when built): hashlib's bytes
        want = b"".join(hashlib.md5(k).digest() for k, w in zip(expected[2], keyed, strict=True) if w)
        for core in (load_speedups(), None):
            saved, keys_module.speedups = keys_module.speedups, core
            try:
                assert cols.key_digests(keyed, hashlib.md5).tobytes() == want
                assert cols.key_digests(keyed, hashlib.md5).shape == (int(keyed.sum()), 16)
            finally:
                keys_module.speedups = saved


@pytest.mark.skipif(load_speedups() is None, reason="the compiled core is not built")
def test_compiled_md5_is_hashlibs_at_every_padding_length() -> None:
    sp = load_speedups()
    rng = random.Random(5)
    buf = rng.randbytes(3000)
    spans = [(0, n) for n in range(0, 260)] + [(rng.randrange(3100), rng.randrange(3100)) for _ in range(2000)]
    starts = np.array([a for a, _ in spans], dtype=np.int64).tobytes()
    ends = np.array([b for _, b in spans], dtype=np.int64).tobytes()
    assert sp.md5_slices(buf, starts, ends) == b"".join(hashlib.md5(buf[a:b]).digest() for a, b in spans)
    for n in range(1, 10):  # short keys are hashed four at a time: every remainder, long keys between them
        some = [(0, 16 + 40 * (i % 3)) for i in range(n)]
        s, e = (np.array(col, dtype=np.int64).tobytes() for col in zip(*some, strict=True))
        assert sp.md5_slices(buf, s, e) == b"".join(hashlib.md5(buf[a:b]).digest() for a, b in some)
    assert sp.md5_slices(buf, np.array([-1], dtype=np.int64).tobytes(), np.array([3], dtype=np.int64).tobytes()) is None
    with pytest.raises(ValueError):
        sp.md5_slices(buf, starts, ends[:8])


@SETTINGS
@given(seed=st.integers(0, 2**32), damage=st.sampled_from([0, 1, 1, 3]))
def test_decode_v2_keys_is_decode_v2_records_without_values(seed, damage):
    buf = _log(seed, damage)
    for b in BatchScan(buf):
        if b.magic < 2 or not b.count:
            continue
        try:
            data = b.records_data()
        except Exception:  # noqa: BLE001 - a damaged compressed batch: nothing to compare
            continue
        try:
            recs = decode_v2_records(data, b.count, b.base_offset, 0, None, -1)
            expected: tuple = ([r.offset for r in recs], [r.key for r in recs],
                               [i for i, r in enumerate(recs) if r.value is None])
        except Exception as exc:  # noqa: BLE001
            expected = ("error", type(exc), str(exc))
        try:
            got: tuple = tuple(decode_v2_keys(data, b.count, b.base_offset))
        except Exception as exc:  # noqa: BLE001
            got = ("error", type(exc), str(exc))
        assert got == expected
        if expected[0] != "error":
            assert tuple(batch_key_columns(b)) == expected


def test_an_empty_list_and_legacy_only_batches():
    assert decode_key_columns([]).keys() == []
    legacy = encode_legacy_batch([Record(5, 1, b"k", None, ()), Record(6, 2, None, b"v", ())], magic=1)
    cols = decode_key_columns(list(BatchScan(legacy)))
    assert cols.offsets.tolist() == [5, 6] and cols.keys() == [b"k", None]
    assert cols.null_values.tolist() == [True, False] and list(cols.starts) == [0, 1, 2]


def test_plain_v2_batches_take_the_vectorised_path(monkeypatch):
    """Undamaged v2 batches, with headers or without, never go through the one-by-one decoder (in either
    core: the numpy field checks as well as the compiled ones)."""
    import kafkatool.ops.compact.keys as records

    def one_by_one(*_args):
        raise AssertionError("fell back to the one-by-one decoder")

    monkeypatch.setattr(records, "batch_key_columns", one_by_one)
    rng = random.Random(7)
    parts, offset = [], 0
    for n in (1, 64, 100):  # 1- and 2-byte deltas; values needing 1-, 2- and 3-byte lengths
        recs = [Record(offset + i, 10**12 + i, b"key-%d" % i if i % 9 else None,
                       None if i % 7 == 0 else rng.randbytes(rng.choice([1, 200, 20000])),
                       (("source", b"kafkatool-generate"), ("n", None))[: i % 3]) for i in range(n)]
        parts.append(encode_v2_batch(recs, offset, codec=Codec.LZ4 if n == 64 else Codec.NONE))
        offset += n
    buf = b"".join(parts)
    want = _one_by_one(buf)
    cols = decode_key_columns(list(BatchScan(buf)))
    assert want == ("ok", cols.offsets.tolist(), cols.keys(), cols.null_values.tolist(), list(cols.starts))
    monkeypatch.setattr(records, "speedups", None)
    cols = decode_key_columns(list(BatchScan(buf)))
    assert want == ("ok", cols.offsets.tolist(), cols.keys(), cols.null_values.tolist(), list(cols.starts))


@pytest.mark.skipif(load_speedups() is None, reason="the compiled core is not built")
@SETTINGS
@given(seed=st.integers(0, 2**32))
def test_compiled_record_walk_is_the_python_walk(seed):
    """The cleaner's walk over record lengths, compiled and in Python, over real logs' record data and
    random bytes with random spans (runs off the end, long varints, impossible counts)."""
    rng = random.Random(seed)
    if seed % 2:
        buf = _log(seed, seed % 3)
        spans = [(0, b.position + 61, b.position + b.size, b.count or 0) for b in BatchScan(buf) if b.magic >= 2]
    else:
        buf = rng.randbytes(rng.randrange(0, 400))
        spans = []
        for _ in range(rng.randrange(0, 8)):
            at = rng.randrange(0, len(buf) + 5)
            spans.append((0, at, at + rng.randrange(0, 200), rng.randrange(0, 40)))
    sp = load_speedups()
    got = sp.walk_record_starts(buf, np.array([w[1:] for w in spans], dtype=np.int64).tobytes()) if spans else None
    want_starts, want_walked = keys_module._walk_record_starts(buf, spans)
    if got is None:
        assert not spans
        return
    assert np.frombuffer(got[0], dtype=np.int64).tolist() == want_starts.tolist()
    assert [w for w, ok in zip(spans, got[1], strict=True) if ok] == want_walked


@pytest.mark.skipif(load_speedups() is None, reason="the compiled core is not built")
@SETTINGS
@given(seed=st.integers(0, 2**32))
def test_compiled_field_checks_are_the_numpy_checks(seed):
    """Step 3 of the key decoder, compiled and with numpy: the same batches pass, with the same columns,
    over real logs' records (damaged too) and random bytes walked from random positions."""
    rng = random.Random(seed)
    if seed % 3:  # batches' record data laid end to end, decompressed, as the decoder lays it out
        if seed % 3 == 1:
            log = _log(seed, seed % 4)
        else:  # records with and without headers, then a few bytes changed
            offset, parts = 0, []
            for _ in range(rng.randrange(1, 5)):
                n = rng.randrange(1, 30)
                recs = [
                    Record(offset + i * rng.choice([1, 1, 70, 9000]), 10**12 + rng.randrange(-(10**5), 10**5),
                           None if rng.random() < 0.1 else rng.randbytes(rng.choice([0, 16, 200])),
                           None if rng.random() < 0.2 else rng.randbytes(rng.choice([0, 9, 300, 20000])),
                           rng.choice([(), (), (("source", b"gen"),), (("a", None), ("\u00e9", b"x" * 200))]))
                    for i in range(n)
                ]
                parts.append(encode_v2_batch(recs, offset))
                offset = recs[-1].offset + 1
            log = bytearray(b"".join(parts))
            for _ in range(rng.choice([0, 0, 1, 3])):
                log[rng.randrange(len(log))] = rng.randrange(256)
            log = bytes(log)
        spans, parts, at = [], [], 0
        for b in BatchScan(log):
            if b.magic >= 2 and b.count:  # (the decoder leaves batches without records out, as here)
                try:
                    data = b.records_data()
                except Exception:  # noqa: BLE001 - damaged compressed data: not this step's business
                    continue
                parts.append(data)
                spans.append((at, at + len(data), b.count))
                at += len(data)
        buf = b"".join(parts)
    else:
        buf = rng.randbytes(rng.randrange(1, 400))
        spans = []
        for _ in range(rng.randrange(0, 8)):
            at = rng.randrange(0, len(buf))
            spans.append((at, at + rng.randrange(0, 200), rng.randrange(1, 30)))
    starts, walked = keys_module._walk_record_starts(buf, [(0, *w) for w in spans])
    if not len(starts):
        return
    quads = np.array([(w[1], w[2], w[3], rng.randrange(-(2**40), 2**40)) for w in walked], dtype=np.int64)
    ok_c, cols_c = keys_module._check_fields_compiled(buf, quads, starts.copy(), load_speedups())
    ok_py, cols_py = keys_module._check_fields(buf, quads, starts.copy())
    assert ok_c == ok_py
    good = np.repeat(np.array(ok_py, dtype=bool), quads[:, 2])
    for c, p in zip(cols_c, cols_py, strict=True):
        assert c.dtype == p.dtype and c[good].tolist() == p[good].tolist()
