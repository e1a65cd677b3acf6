"""The compiled core against the pure-Python reference, byte for byte (issue 14).

Both cores run over every fixture log a real broker wrote (../shared/fixtures, Kafka 0.10 to 4.0),
generated logs of every format, codec and transaction mix, and seeded mutations of them (bit flips,
cuts, random bytes): the recovery walk (`walk_segment`), `verify_crcs` and v2 record decoding must
return equal results or raise the same exception with the same message and the same partial records.
The oracle is the Python code these functions replaced, which the rest of the suite checks against
Kafka's own output.  Also: the CLI with `KAFKATOOL_PURE_PYTHON=1` prints the same bytes as with C.
"""

from __future__ import annotations

import dataclasses
import os
import random
import shutil
import struct
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from kafkatool.log import default_records, records, segment
from kafkatool.log.core import load_speedups
from kafkatool.log.errors import CorruptRecordError
from kafkatool.log.files import offset_from_name
from kafkatool.log.record import Record
from kafkatool.log.records import BatchScan
from kafkatool.log.writer import encode_v2_batch
from kafkatool.ops import dumplog
from kafkatool.ops.dumplog import log_text, parallel
from kafkatool.ops.generate import GenerateSpec, generate_partition
from tests.conftest import FIXTURES, REPO

speedups = load_speedups()  # whatever KAFKATOOL_PURE_PYTHON says: both cores are compared explicitly
needs_c = pytest.mark.skipif(speedups is None, reason="the compiled core is not built (no C compiler?)")
pytestmark = needs_c

SEED = 1414


def fixture_logs() -> list[Path]:
    if not FIXTURES.is_dir():
        return []
    roots = [FIXTURES / "kafka-logs", FIXTURES / "kafka-4.0.0" / "kafka-logs"]
    return sorted(p for r in roots if r.is_dir() for p in r.rglob("*.log") if p.is_file())


def outcome(fn: Callable[[], Any]) -> tuple[Any, ...]:
    """What a call did: its result, or its exception's type, message, position and partial records."""
    try:
        return ("ok", fn())
    except CorruptRecordError as exc:
        return ("error", type(exc), str(exc), exc.position, exc.partial)


def walk(buf: bytes, base: int, core: Any, **kw: Any) -> tuple[Any, ...]:
    saved = segment.speedups
    segment.speedups = core
    try:
        return outcome(lambda: dataclasses.asdict(segment.walk_segment(buf, base, **kw)))
    finally:
        segment.speedups = saved


def verify(buf: bytes, core: Any) -> tuple[Any, ...]:
    saved = records.speedups
    records.speedups = core
    try:
        return outcome(lambda: records.verify_crcs(buf))
    finally:
        records.speedups = saved


def check_walks(buf: bytes, base: int, interval: int = 4096) -> None:
    for kw in ({}, {"record_batches": True, "latest_epoch": 0}):
        assert walk(buf, base, speedups, index_interval=interval, **kw) == walk(
            buf, base, None, index_interval=interval, **kw
        )
    assert verify(buf, speedups) == verify(buf, None)


def v2_inputs(buf: bytes) -> Iterator[tuple[bytes, int, int, int, int | None, int]]:
    """The decode_v2_records arguments of every v2 batch of buf that decompresses."""
    for b in BatchScan(buf):
        if b.magic < 2 or b.size < 61 or not b.count:
            continue
        try:
            data = b.records_data()
        except Exception:  # a damaged compressed batch: nothing to decode
            continue
        ts = b.max_timestamp if b.timestamp_type == 1 else None
        yield data, b.count, b.base_offset, b.base_timestamp, ts, b.base_sequence


def check_decode(args: tuple[bytes, int, int, int, int | None, int]) -> None:
    c = outcome(lambda: speedups.decode_v2_records(*args))
    py = outcome(lambda: default_records.py_decode_v2_records(*args))
    assert c == py, args[1:]
    if c[0] == "ok":  # same types too: Records, bytes, None, the shared empty headers tuple
        for rc, rp in zip(c[1], py[1], strict=True):
            assert type(rc) is type(rp) and [type(x) for x in rc] == [type(x) for x in rp]


def mutations(data: bytes, rng: random.Random, n: int) -> Iterator[bytes]:
    """Seeded damage: bit flips, byte overwrites, cuts, inserted and random bytes."""
    for _ in range(n):
        b = bytearray(data)
        kind = rng.randrange(5)
        if kind == 0 and b:
            for _f in range(rng.randint(1, 3)):
                b[rng.randrange(len(b))] ^= 1 << rng.randrange(8)
        elif kind == 1 and b:
            for _f in range(rng.randint(1, 4)):
                b[rng.randrange(len(b))] = rng.choice((0x00, 0x01, 0x7F, 0x80, 0xFF, rng.randrange(256)))
        elif kind == 2:
            b = b[: rng.randrange(len(b) + 1)]
        elif kind == 3:
            at = rng.randrange(len(b) + 1)
            b[at:at] = bytes(rng.choice((0x80, 0xFF, 0x00, 0x02)) for _ in range(rng.randint(1, 12)))
        else:
            b = bytearray(rng.randbytes(rng.randint(0, 200)))
        yield bytes(b)


# -- fixtures a real broker wrote -------------------------------------------------------------------


@pytest.mark.skipif(not fixture_logs(), reason=f"shared fixtures not found at {FIXTURES}")
def test_every_fixture_log_walks_and_decodes_the_same() -> None:
    logs = fixture_logs()
    assert len(logs) > 50
    decoded = 0
    for path in logs:
        buf = path.read_bytes()
        try:
            base = offset_from_name(path.name)
        except ValueError:
            base = 0
        check_walks(buf, base)
        check_walks(buf, base, interval=100)
        for args in v2_inputs(buf):
            check_decode(args)
            decoded += 1
    assert decoded > 500


@pytest.mark.skipif(not fixture_logs(), reason=f"shared fixtures not found at {FIXTURES}")
def test_mutated_fixture_segments_walk_the_same() -> None:
    rng = random.Random(SEED)
    logs = [p for p in fixture_logs() if 0 < p.stat().st_size < 200_000]
    for path in rng.sample(logs, min(40, len(logs))):
        buf = path.read_bytes()
        for bad in mutations(buf, rng, 15):
            check_walks(bad, 0, interval=rng.choice((0, 64, 4096)))


@pytest.mark.skipif(not fixture_logs(), reason=f"shared fixtures not found at {FIXTURES}")
def test_mutated_fixture_records_decode_the_same() -> None:
    rng = random.Random(SEED + 1)
    inputs = [a for p in fixture_logs() if p.stat().st_size < 200_000 for a in v2_inputs(p.read_bytes())]
    for data, count, base, ts, lat, seq in rng.sample(inputs, min(400, len(inputs))):
        for bad in mutations(data, rng, 12):
            check_decode((bad, count, base, ts, lat, seq))
            check_decode((bad, count + rng.randint(-1, 3), base, ts, lat, seq))


# -- the rebuilt indexes are kept compact (issue 14) ------------------------------------------------


def _indexed_log(base: int, n: int) -> tuple[bytes, list[tuple[int, int, int]]]:
    """n v2 batches of ~1 KiB at offsets from base, every 7th transactional (the C run stops there and
    the Python walk takes over, so both hand the builder's state to each other), and their
    (position, last offset, max timestamp)."""
    parts, batches, pos, off = [], [], 0, base
    for i in range(n):
        recs = [Record(off + k, 1_000 + 3 * off + k, b"k%d" % k, b"v" * 300, ()) for k in range(3)]
        kw = {"producer_id": 9, "producer_epoch": 0, "base_sequence": i, "is_transactional": True}
        data = encode_v2_batch(recs, **(kw if i % 7 == 3 else {}))  # type: ignore[arg-type]
        parts.append(data)
        batches.append((pos, off + 2, recs[-1].timestamp))
        pos += len(data)
        off += 3
    return b"".join(parts), batches


def test_walk_keeps_the_rebuilt_indexes_as_index_bytes_in_both_cores() -> None:
    base, interval = 1_000_000, 4096
    buf, batches = _indexed_log(base, 600)
    # LogSegment.recover's rule, written out here: an entry where a batch starts more than the interval
    # past the last entry, keyed by its last offset; the time index gets the max timestamp so far, then
    # the segment's max on close (timestamps only grow here, so every entry is new).
    want_off, want_time, last_pos = bytearray(), bytearray(), 0
    for pos, last, ts in batches:
        if pos - last_pos > interval:
            want_off += struct.pack(">ii", last - base, pos)
            want_time += struct.pack(">qi", ts, last - base)
            last_pos = pos
    want_time += struct.pack(">qi", batches[-1][2], batches[-1][1] - base)
    assert len(want_off) // 8 > 100
    for core in (speedups, None):
        saved = segment.speedups
        segment.speedups = core
        try:
            scan = segment.walk_segment(buf, base, interval)
        finally:
            segment.speedups = saved
        assert scan.clean and scan.batches == len(batches)
        for got, want, entry in ((scan.offset_index, want_off, 8), (scan.time_index, want_time, 12)):
            # the index file's bytes in one buffer: no Python object per entry (~120 bytes each before)
            assert isinstance(got, (bytes, bytearray)) and got == want
            assert sys.getsizeof(got) <= len(got) * 1.25 + 128, (entry, sys.getsizeof(got), len(got))
        assert scan.offset_index_bytes() == bytes(want_off) and scan.time_index_bytes() == bytes(want_time)
        # no per-batch arrays unless asked for
        assert len(scan.positions) == len(scan.last_offsets) == len(scan.max_timestamps) == 0


# -- generated logs of every format and codec ----------------------------------------------------


@pytest.mark.parametrize("magic", [0, 1, 2])
@pytest.mark.parametrize("codec", ["none", "gzip", "snappy", "lz4", "zstd"])
def test_generated_logs_walk_and_decode_the_same(tmp_path: Path, magic: int, codec: str) -> None:
    if codec == "zstd" and magic < 2:
        pytest.skip("zstd needs the v2 format")
    spec = GenerateSpec(
        records=600,
        batch_records=7,
        magic=magic,
        codec=codec,
        transactional=magic == 2,
        abort_ratio=0.3 if magic == 2 else 0.0,
        log_append_time=codec == "lz4",
        tombstone_ratio=0.1,
        segment_bytes=20_000,
        index_interval=300,
    )
    res = generate_partition(tmp_path, spec)
    rng = random.Random(f"{SEED}-{magic}-{codec}")
    for log in sorted(res.partition_dir.glob("*.log")):
        buf = log.read_bytes()
        check_walks(buf, offset_from_name(log.name), interval=300)
        for args in v2_inputs(buf):
            check_decode(args)
        for bad in mutations(buf, rng, 10):
            check_walks(bad, offset_from_name(log.name), interval=300)


# -- edge values the Python ints handle without bounds ------------------------------------------


def varint(v: int) -> bytes:
    raw = ((v << 1) ^ (v >> 63)) & 0xFFFFFFFFFFFFFFFF
    out = bytearray()
    while raw >= 0x80:
        out.append((raw & 0x7F) | 0x80)
        raw >>= 7
    out.append(raw)
    return bytes(out)


@pytest.mark.parametrize(
    ("delta", "base", "seq"),
    [
        (2**63 - 1, 2**63 - 1, 2**31 - 1),
        (-(2**63), -(2**63), 0),
        (5, 2**63 - 3, 2**31 - 3),
        (-1, 0, -1),
        (2**40, 7, 12),
    ],
)
def test_offsets_past_64_bits_are_python_ints(delta: int, base: int, seq: int) -> None:
    body = b"\x00" + varint(delta) + varint(delta) + varint(-1) + varint(2) + b"v" + b"\x00"
    data = varint(len(body)) + body
    for lat in (None, 42):
        check_decode((data, 1, base, base, lat, seq))
        check_decode((data + data, 2, base, -(2**63), lat, seq))


def test_random_bytes_decode_the_same() -> None:
    rng = random.Random(SEED + 2)
    for _ in range(3000):
        data = rng.randbytes(rng.randint(0, 64))
        check_decode((data, rng.randint(0, 5), rng.randint(-5, 5), 0, None, rng.choice((-1, 0, 2**31 - 1))))


def test_a_header_key_that_is_not_utf8_decodes_as_java_does() -> None:
    hdr = varint(1) + varint(3) + b"k\xff\xc3" + varint(-1)
    body = b"\x00" + varint(0) + varint(0) + varint(-1) + varint(-1) + hdr
    data = varint(len(body)) + body
    check_decode((data + data, 2, 0, 0, None, -1))


# -- dump-log's record lines ------------------------------------------------------------------------


def record_lines(recs: list[Record], ts_name: bytes, printing: bool, core: Any) -> tuple[bytes, Any]:
    """What LogDumper._v2_record_lines appends with one core: the bytes, and any exception."""
    saved = log_text.speedups  # the record lines look the core up in log_text
    log_text.speedups = core
    out: list[bytes] = []
    dumper = dumplog.LogDumper(dumplog.DumpOptions(print_data_log=printing), None, None)  # type: ignore[arg-type]
    try:
        dumper._v2_record_lines(ts_name, printing, recs, out.append)
        error = None
    except Exception as exc:  # noqa: BLE001 - compared, not hidden
        error = (type(exc), str(exc))
    finally:
        log_text.speedups = saved
    return b"".join(out), error


@pytest.mark.skipif(not fixture_logs(), reason=f"shared fixtures not found at {FIXTURES}")
def test_record_lines_are_the_same_bytes() -> None:
    n = 0
    for path in fixture_logs():
        for b in BatchScan(path.read_bytes()):
            if b.magic < 2 or b.is_control:
                continue
            try:
                recs = b.records()
            except CorruptRecordError as exc:
                recs = exc.partial
            for ts_name in (b"CreateTime", b"LogAppendTime"):
                for printing in (False, True):
                    assert record_lines(recs, ts_name, printing, speedups) == record_lines(
                        recs, ts_name, printing, None
                    ), path
            n += len(recs)
    assert n > 5000


@pytest.mark.parametrize(
    "rec",
    [
        Record(2**70, -(2**65), b"k\xff\xfe", "é€".encode(), (("h\u00e9", b"x"), ("", None)), -(2**40)),
        Record(0, 0, None, None, ()),
        Record(1, 2, b"", b"", (("a", None),), 3),
        Record(1, 2, b"\xc3\x28\xed\xa0\x80", None, (("k\ud800", b"v"),), 3),  # a key .encode() refuses
    ],
)
def test_record_lines_of_odd_records(rec: Record) -> None:
    recs = [Record(5, 6, b"a", b"b", (("x", b"y"),)), rec, rec]
    for printing in (False, True):
        assert record_lines(recs, b"CreateTime", printing, speedups) == record_lines(
            recs, b"CreateTime", printing, None
        )


def test_dump_log_goldens_pass_with_the_pure_python_core() -> None:
    """The Kafka 3.3.1 goldens, byte for byte, with KAFKATOOL_PURE_PYTHON=1 (a fresh interpreter)."""
    env = {**os.environ, "PYTHONPATH": str(REPO), "KAFKATOOL_PURE_PYTHON": "1"}
    p = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/test_dumplog_goldens.py"],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO,
        timeout=600,
    )
    assert p.returncode in (0, 5), p.stdout[-3000:] + p.stderr[-2000:]
    assert p.returncode == 5 or " passed" in p.stdout


# -- the CLI with either core -------------------------------------------------------------------------


def kt(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "kafkatool", *args], capture_output=True, env=env, cwd=REPO, timeout=120
    )


def test_the_cli_prints_the_same_with_either_core(tmp_path: Path) -> None:
    generate_partition(tmp_path, GenerateSpec(records=300, codec="lz4", transactional=True, abort_ratio=0.3))
    part = tmp_path / "demo-0"
    log = str(sorted(part.glob("*.log"))[0])
    env_c = {**os.environ, "PYTHONPATH": str(REPO)}
    env_c.pop("KAFKATOOL_PURE_PYTHON", None)
    env_py = {**env_c, "KAFKATOOL_PURE_PYTHON": "1"}
    assert kt(env_c, "--version").stdout.endswith(b"(core: C)\n")
    assert kt(env_py, "--version").stdout.endswith(b"(core: pure Python)\n")
    for args in (
        ["dump-log", "--files", log, "--print-data-log"],
        ["dump-log", "--files", log, "--deep-iteration"],
        ["index", "verify", str(tmp_path)],
        ["recover", str(tmp_path), "--full"],
    ):
        c, py = kt(env_c, *args), kt(env_py, *args)
        assert (c.returncode, c.stdout, c.stderr) == (py.returncode, py.stdout, py.stderr), args
        assert c.returncode in (0, 1) and c.stdout, args


def test_crc32c_matches_the_crc32c_package() -> None:
    from kafkatool.log.crc import crc32c

    rng = random.Random(SEED + 3)
    data = rng.randbytes(5000)
    for _ in range(500):
        a = rng.randrange(len(data))
        b = rng.randrange(a, len(data) + 1)
        assert speedups.crc32c(memoryview(data)[a:b]) == crc32c(data[a:b])


# -- the offline cleaner: every output byte the same with either core ---------------------------

COMPACT_NOW = 1_800_000_000_000


class _PurePython:
    """Every kafkatool module's handle on the compiled core set to None while inside (the cores are
    chosen at import, so this is what KAFKATOOL_PURE_PYTHON=1 would have given them)."""

    def __enter__(self) -> None:
        self.saved = [
            (m, m.speedups)
            for name, m in list(sys.modules.items())
            if name.startswith("kafkatool.") and getattr(m, "speedups", None) is speedups
        ]
        for m, _ in self.saved:
            m.speedups = None

    def __exit__(self, *exc: object) -> None:
        for m, core in self.saved:
            m.speedups = core


def _compact_outcome(partition_dir: Path, passes: list[dict[str, Any]]) -> list[Any]:
    """Each pass's result (or error) and, after it, every file of the partition and its log dir's
    cleaner checkpoint, byte for byte."""
    from kafkatool.ops.compact import compact_partition

    out: list[Any] = []
    for kw in passes:
        try:
            res = dataclasses.asdict(compact_partition(partition_dir, **kw))
            res.pop("elapsed_s")
            res.pop("dir")
            out.append(("ok", res))
        except Exception as exc:  # noqa: BLE001 - the error itself is compared
            out.append(("error", type(exc).__name__, str(exc).replace(str(partition_dir.parent), "")))
        files = {p.name: p.read_bytes() for p in sorted(partition_dir.iterdir()) if p.is_file()}
        ckpt = partition_dir.parent / "cleaner-offset-checkpoint"
        out.append((files, ckpt.read_bytes() if ckpt.is_file() else None))
    return out


def _compact_both(src: Path, tmp_path: Path, passes: list[dict[str, Any]]) -> None:
    got = []
    for core in ("c", "py"):
        work = tmp_path / core / "logs" / src.name
        shutil.copytree(src, work)
        if core == "py":
            with _PurePython():
                got.append(_compact_outcome(work, passes))
        else:
            got.append(_compact_outcome(work, passes))
    assert got[0] == got[1]


def _passes(cfg: Any) -> list[dict[str, Any]]:
    """A first clean, then one a week later from offset 0 (tombstones and markers past their horizon)."""
    week = 7 * 86_400_000
    return [dict(cfg=cfg, now_ms=COMPACT_NOW), dict(cfg=cfg, now_ms=COMPACT_NOW + week, first_dirty_offset=0)]


def fixture_partitions() -> list[Path]:
    return sorted({p.parent for p in fixture_logs()} | {p.parent for p in (FIXTURES / "cleaned").rglob("*.log")}
                  if FIXTURES.is_dir() else set())


def test_every_fixture_partition_compacts_the_same(tmp_path: Path) -> None:
    """Both rule sets (3.x and 2.1), with the default buffer and one that fills every few keys."""
    from kafkatool.ops.compact import CompactConfig

    parts = fixture_partitions()
    if not parts:
        pytest.skip("no fixtures")
    cfgs = [
        CompactConfig(segment_bytes=16384, policy_confirmed=True),
        CompactConfig(segment_bytes=16384, policy_confirmed=True, kafka_version="2.1", dedupe_buffer_size=24 * 40),
    ]
    for i, src in enumerate(parts):
        for j, cfg in enumerate(cfgs):
            _compact_both(src, tmp_path / f"{i}-{j}", _passes(cfg))


@pytest.mark.parametrize("magic", [0, 1, 2])
@pytest.mark.parametrize("codec", ["none", "gzip", "snappy", "lz4", "zstd"])
def test_generated_logs_compact_the_same(tmp_path: Path, magic: int, codec: str) -> None:
    """Tombstones, transactions (aborted ones too), headers, keyless records, every format and codec;
    the default buffer, one that fills, and one whose table must grow past what was reserved."""
    from kafkatool.ops.compact import CompactConfig
    from kafkatool.ops.compact.offsetmap import OffsetMap

    if codec == "zstd" and magic < 2:
        pytest.skip("zstd needs the v2 format")
    spec = GenerateSpec(
        records=3000,
        batch_records=9,
        magic=magic,
        codec=codec,
        key_space=150,
        headers=codec == "snappy",
        transactional=magic == 2 and codec != "none",
        abort_ratio=0.3 if magic == 2 and codec != "none" else 0.0,
        log_append_time=codec == "lz4",
        tombstone_ratio=0.15,
        segment_bytes=12_000,
        index_interval=300,
        start_timestamp=COMPACT_NOW - 86_400_000,
        seed=SEED + magic,
    )
    src = generate_partition(tmp_path / "src", spec).partition_dir
    for n, buffer in enumerate((128 * 1024 * 1024, 24 * 60)):
        cfg = CompactConfig(segment_bytes=30_000, policy_confirmed=True, dedupe_buffer_size=buffer)
        _compact_both(src, tmp_path / f"b{n}", _passes(cfg))

    class Unreserved(OffsetMap):  # a table far smaller than the keys: it grows while mapping
        def reserve(self, max_keys: int) -> None:
            super().reserve(1)

    cfg = CompactConfig(segment_bytes=30_000, policy_confirmed=True)
    got = []
    for core in ("c", "py"):
        work = tmp_path / "grow" / core / "logs" / src.name
        shutil.copytree(src, work)
        run = [dict(cfg=cfg, now_ms=COMPACT_NOW, offset_map=Unreserved(cfg.dedupe_buffer_size))]
        if core == "py":
            with _PurePython():
                got.append(_compact_outcome(work, run))
        else:
            got.append(_compact_outcome(work, run))
    plain = tmp_path / "plain" / "logs" / src.name
    shutil.copytree(src, plain)
    assert got[0] == got[1] == _compact_outcome(plain, [dict(cfg=cfg, now_ms=COMPACT_NOW)])


@pytest.mark.parametrize("seed", range(60))
def test_compiled_rebuild_is_the_python_rebuild(seed: int) -> None:
    """A batch that loses records, rebuilt by the compiled core and by `Cleaner._rebuild`: the same
    bytes, max timestamp and last offset; None (the Python path) for what it does not cover (codecs,
    log-append time, header keys that are not ASCII, delete horizons) and for damaged records whatever
    Python makes of them."""
    from itertools import compress

    from kafkatool.log.record import TS_LOG_APPEND
    from kafkatool.log.writer import encode_v2_batch
    from kafkatool.ops.compact.cleaner import Cleaner

    rng = random.Random(seed)
    base = rng.choice([0, 5, 2**40])
    offset, recs = base, []
    for _ in range(rng.randrange(1, 40)):
        recs.append(Record(
            offset, rng.choice([1_700_000_000_000, 0, -5]) + rng.randrange(-(10**9), 10**9),
            None if rng.random() < 0.1 else rng.randbytes(rng.choice([0, 16, 300])),
            None if rng.random() < 0.2 else rng.randbytes(rng.choice([0, 9, 200, 20000])),
            rng.choice([(), (), (), (("h", b"v"),), (("source", b"gen"), ("n", None)), (("\u00e9t\u00e9", b""),)]),
        ))
        offset += rng.choice([1, 1, 1, 3, 70000])
    plain = rng.random() < 0.8
    data = bytearray(encode_v2_batch(
        recs, base, codec=0 if plain or rng.random() < 0.5 else 1,
        timestamp_type=TS_LOG_APPEND if not plain and rng.random() < 0.5 else 0,
        producer_id=rng.choice([-1, 77]), producer_epoch=rng.choice([-1, 3]), base_sequence=rng.choice([-1, 9]),
        partition_leader_epoch=rng.randrange(0, 5), is_transactional=rng.random() < 0.3,
        delete_horizon_ms=1_800_000_000_000 if not plain and rng.random() < 0.3 else None,
        last_offset=recs[-1].offset + rng.choice([0, 0, 4]),
    ))
    damaged = rng.random() < 0.3
    if damaged:
        for _ in range(rng.randrange(1, 4)):
            data[rng.randrange(61, len(data))] = rng.randrange(256)
    data = b"\0" * 7 + bytes(data)  # not at the buffer's start
    b = next(iter(BatchScan(data, 7, len(data))))
    keep = [rng.random() < 0.6 for _ in recs]
    got = speedups.rebuild_v2(data, 7, b.size, bytes(keep))
    try:
        decoded = b.records()
    except CorruptRecordError:
        assert got is None
        return
    kept = list(compress(decoded, keep))
    covered = b.codec == 0 and b.timestamp_type != TS_LOG_APPEND and b.delete_horizon_ms is None
    covered = covered and all(k.isascii() for r in decoded for k, _ in r.headers) and len(kept) > 0
    if got is None:
        assert damaged or not covered
        return
    assert covered
    want, ts, _ = Cleaner._rebuild(b, kept, None)
    assert got == (want, ts, kept[-1].offset)


@pytest.mark.parametrize("seed", range(12))
def test_offset_map_puts_are_the_same_with_either_core(seed: int) -> None:
    """put_until_full key by key in C and in numpy rounds: the same keys consumed (up to the map filling),
    the same answers to lookups, the same per-offset tracking, whether the table was reserved small
    (and grows), exactly or not at all; offsets going backwards turn tracking off in both."""
    import numpy as np

    from kafkatool.ops.compact import offsetmap
    from kafkatool.ops.compact.offsetmap import OffsetMap, digests

    rng = random.Random(seed)
    keys = [b"k%d" % rng.randrange(rng.choice([50, 3000])) for _ in range(4000)]
    offsets = np.arange(100, 100 + len(keys), dtype=np.int64)
    if seed % 4 == 3:
        offsets[2000] = 50  # not increasing: tracking ends
    probe = digests([b"k%d" % i for i in range(3000)])
    answers = []
    for core in (speedups, None):
        saved, offsetmap.speedups = offsetmap.speedups, core
        try:
            omap = OffsetMap(24 * (1000, 4000, 100_000)[seed % 3])
            omap.track_offsets(100, 100 + len(keys))
            omap.reserve((1, 300, len(keys))[seed % 3])
            consumed = []
            for lo in range(0, len(keys), 700):
                consumed.append(omap.put_until_full(digests(keys[lo : lo + 700]), offsets[lo : lo + 700]))
                if omap.is_full:
                    break
            put, latest = omap.latest_by_offset(offsets)
            answers.append((consumed, omap.size, omap.tracks_offsets, omap.get_many(probe).tolist(),
                            put.tolist(), latest.tolist()))
        finally:
            offsetmap.speedups = saved
    assert answers[0] == answers[1]


# -- dump-log's shallow batch lines (speedups.shallow_lines) --------------------------------------


def shallow_dump(path: Path, core: Any, monkeypatch: pytest.MonkeyPatch, **opts: Any) -> tuple[Any, ...]:
    """dump-log of one file without --deep-iteration with one core: stdout, stderr and the counts."""
    import io

    with monkeypatch.context() as m:
        m.setattr(log_text, "speedups", core)  # the batch lines
        m.setattr(parallel, "speedups", core)  # whether workers render
        out, err = io.BytesIO(), io.BytesIO()
        res = dumplog.dump_files([str(path)], dumplog.DumpOptions(kafka_release="4.0", **opts), out, err)
    return out.getvalue(), err.getvalue(), res.exit_code, res.batches, res.bytes_read


def check_shallow(path: Path, monkeypatch: pytest.MonkeyPatch, **opts: Any) -> bytes:
    c = shallow_dump(path, speedups, monkeypatch, **opts)
    assert c == shallow_dump(path, None, monkeypatch, **opts), path
    return c[0]


@pytest.fixture
def small_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    """Runs of a line or two, so every test crosses the compiled walk's run boundaries too."""
    monkeypatch.setattr(log_text, "SHALLOW_OUT_BYTES", 300)
    monkeypatch.setattr(log_text, "SHALLOW_IN_BYTES", 2000)


@pytest.mark.skipif(not fixture_logs(), reason=f"shared fixtures not found at {FIXTURES}")
@pytest.mark.parametrize("runs", ["default", "small"])
def test_shallow_lines_of_every_fixture_are_the_same(
    runs: str, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> None:
    if runs == "small":
        request.getfixturevalue("small_runs")
    lines = 0
    for log in fixture_logs():
        out = check_shallow(log, monkeypatch)
        lines += out.count(b"\n")
        size = log.stat().st_size
        if size > 100:
            check_shallow(log, monkeypatch, max_bytes=size // 3)  # --max-bytes cuts a batch
    assert lines > 1000


@pytest.mark.skipif(not fixture_logs(), reason=f"shared fixtures not found at {FIXTURES}")
def test_shallow_lines_of_mutated_fixtures_are_the_same(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(SEED + 20)
    bad = tmp_path / "00000000000000000000.log"
    for log in fixture_logs()[::3]:
        data = log.read_bytes()[:60_000]
        for mutated in mutations(data, rng, 6):
            bad.write_bytes(mutated)
            check_shallow(bad, monkeypatch)


@pytest.mark.parametrize("magic", [0, 1, 2])
@pytest.mark.parametrize("codec", ["none", "gzip", "snappy", "lz4", "zstd"])
def test_shallow_lines_of_generated_logs_are_the_same(
    tmp_path: Path, magic: int, codec: str, monkeypatch: pytest.MonkeyPatch, small_runs: None
) -> None:
    if codec == "zstd" and magic < 2:
        pytest.skip("zstd needs the v2 format")
    spec = GenerateSpec(
        records=400,
        batch_records=7,
        magic=magic,
        codec=codec,
        transactional=magic == 2,
        abort_ratio=0.3 if magic == 2 else 0.0,
        log_append_time=codec == "lz4",
        segment_bytes=1 << 20,
    )
    res = generate_partition(tmp_path / "gen", spec)
    log = sorted(res.partition_dir.glob("*.log"))[0]
    out = check_shallow(log, monkeypatch)
    assert out.count(b"isvalid: true") == out.count(b"\n") - 2  # the two header lines
    if magic == 2:
        assert b"isControl: true" in out and b"isTransactional: true" in out
    rng = random.Random(f"{SEED}-shallow-{magic}-{codec}")
    bad = tmp_path / "00000000000000000000.log"
    for mutated in mutations(log.read_bytes(), rng, 12):
        bad.write_bytes(mutated)
        check_shallow(bad, monkeypatch)


def _fuzzed_headers(template: bytes, rng: random.Random, n: int) -> bytes:
    """Entries framed like the template (same size), every header byte after the frame random: all
    attribute bits and codec ids, any magic, sequences at the wrap, offsets at the 64-bit edges."""
    out = bytearray()
    for _ in range(n):
        b = bytearray(template)
        hdr_end = 61 if template[16] >= 2 else 34
        for i in range(12, min(hdr_end, len(b))):
            if rng.random() < 0.5:
                b[i] = rng.randrange(256)
        if rng.random() < 0.3:
            b[0:8] = struct.pack(">q", rng.choice((2**63 - 1, -(2**63), -1, 2**63 - 5)))
        if rng.random() < 0.3 and len(b) >= 61:
            b[23:27] = struct.pack(">i", rng.choice((2**31 - 1, -(2**31), 5, -1)))
            b[53:57] = struct.pack(">i", rng.choice((2**31 - 1, 2**31 - 3, -1, 0)))
        if rng.random() < 0.5:
            b[16] = rng.choice((0, 1, 2, 3, 0x80, 0xFF)) if rng.random() < 0.2 else template[16]
        if rng.random() < 0.5:
            b[21] &= 0x7F  # keep the codec bits valid more often, so the walk goes on
            b[22] = rng.choice((0, 1, 2, 3, 4, 8, 0x10, 0x20, 0x30, 0x40, 0x78, 0x7C)) | (b[22] & 0x80)
        out += b
    return bytes(out)


@pytest.mark.parametrize("magic", [0, 1, 2])
def test_shallow_lines_of_fuzzed_headers_are_the_same(
    tmp_path: Path, magic: int, monkeypatch: pytest.MonkeyPatch, small_runs: None
) -> None:
    res = generate_partition(tmp_path / "gen", GenerateSpec(records=10, batch_records=10, magic=magic))
    template = sorted(res.partition_dir.glob("*.log"))[0].read_bytes()
    first = struct.unpack_from(">i", template, 8)[0] + 12
    template = template[:first]
    rng = random.Random(f"{SEED}-headers-{magic}")
    log = tmp_path / "00000000000000000000.log"
    lines = 0
    for _ in range(300):
        log.write_bytes(_fuzzed_headers(template, rng, rng.randint(1, 6)) + rng.randbytes(rng.choice((0, 0, 5, 30))))
        lines += check_shallow(log, monkeypatch).count(b"\n")
    assert lines > 600


def test_shallow_lines_of_random_bytes_are_the_same(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(SEED + 21)
    log = tmp_path / "00000000000000000000.log"
    for _ in range(300):
        size = rng.randint(14, 120)
        frame = struct.pack(">qi", rng.randrange(-(2**63), 2**63), size)
        log.write_bytes(frame + rng.randbytes(size + rng.choice((0, 0, -3, 9))))
        check_shallow(log, monkeypatch)


def test_crc32c_of_long_buffers_matches_the_crc32c_package() -> None:
    """Lengths around the three-stream blocks (3 x 8 KiB and 3 x 256 bytes) and every alignment."""
    from kafkatool.log.crc import crc32c

    rng = random.Random(SEED + 22)
    data = rng.randbytes(3 * 8192 * 3 + 3 * 256 * 2 + 64)
    for n in (767, 768, 769, 1536, 24575, 24576, 24577, 3 * 8192 + 3 * 256 + 7, len(data) - 8):
        for a in range(8):
            assert speedups.crc32c(memoryview(data)[a : a + n]) == crc32c(data[a : a + n]), (n, a)


# -- the cleaner's compiled batch header walk (issue 14) --------------------------------------------


def _scan(scan: BatchScan) -> tuple[Any, ...]:
    """Every slot of every batch a walk yields (the buffer and view by identity), then where and why it stopped."""
    got = []
    for b in scan:
        got.append(tuple(getattr(b, f) for f in records.Batch.__slots__ if f not in ("buf", "view")))
        assert b.buf is scan.buf and b.view is not None and b.view.obj is scan.buf
    err = None if scan.error is None else (str(scan.error), scan.error.position)
    return got, scan.valid_bytes, err, scan.trailing_bytes


def _check_scans(buf: bytes, rng: random.Random) -> None:
    from kafkatool.ops.compact import scan as cleaner_scan

    start = rng.choice([0, 0, rng.randrange(0, len(buf) + 1)])
    end = rng.choice([len(buf), len(buf), rng.randrange(start, len(buf) + 1)])
    want = _scan(BatchScan(buf, start, end))
    released: list[int] = []
    got = _scan(cleaner_scan.CleanerScan(buf, start, end, release=released.append))
    assert got == want
    assert released == sorted(released) and all(start <= r <= want[1] for r in released)


@pytest.mark.parametrize("run", [(512, 4 << 20), (1, 1), (3, 5000)])
def test_cleaner_scan_is_batch_scan(run: tuple[int, int], monkeypatch: pytest.MonkeyPatch) -> None:
    """`CleanerScan` (runs of v2 headers read by the compiled `batch_run`, the rest by Python) yields the
    batches `BatchScan` yields, every slot equal, and stops at the same place with the same error: over
    every fixture log a broker wrote (v0/v1, v2, transactions, codecs), seeded mutations of them (cuts,
    flipped bytes, random bytes), sub-ranges, generated logs at offsets near 2^63, and several run sizes."""
    from kafkatool.ops.compact import scan as cleaner_scan

    monkeypatch.setattr(cleaner_scan, "speedups", speedups)
    monkeypatch.setattr(cleaner_scan, "RUN_BATCHES", run[0])
    monkeypatch.setattr(cleaner_scan, "RUN_BYTES", run[1])
    rng = random.Random(SEED + run[0])
    logs = fixture_logs()
    for path in logs:
        _check_scans(path.read_bytes(), rng)
    small = [p for p in logs if 0 < p.stat().st_size < 200_000]
    for path in rng.sample(small, min(30, len(small))):
        for bad in mutations(path.read_bytes(), rng, 10):
            _check_scans(bad, rng)
    for base in (0, 2**63 - 150, 2**63 - 2):
        recs = [Record(base + i, 1_000 + i, b"k", b"v" * rng.randrange(0, 300), ()) for i in range(2)]
        one = encode_v2_batch(recs, base, last_offset=base + 200)  # past 2^63 - 1 from the middle one on
        _check_scans(one * 3 + one[:40], rng)
    for _ in range(50):
        _check_scans(rng.randbytes(rng.randrange(0, 300)), rng)


@pytest.mark.parametrize("window", [4 << 20, 1, 700])
def test_loading_refuses_the_first_bad_crc_in_both_cores(
    tmp_path: Path, window: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Loading checks CRCs a window of batches at a time (`verify_crcs`): a bad CRC anywhere (first,
    middle, last batch; v2 and v1) is refused with the message naming that batch, in both cores, as the
    batch-by-batch `Batch.is_valid` check names it; intact logs load."""
    from kafkatool.log.files import segment_name
    from kafkatool.log.writer import encode_legacy_batch
    from kafkatool.ops.compact import manager

    monkeypatch.setattr(manager, "CRC_WINDOW", window)
    recs = [Record(i, 1_000 + i, b"k%d" % (i % 3), b"v" * 200, ()) for i in range(12)]
    v2 = b"".join(encode_v2_batch(recs[i : i + 3], i) for i in range(0, 12, 3))
    v1 = b"".join(encode_legacy_batch([r._replace(offset=i)], magic=1) for i, r in enumerate(recs[:4]))
    for name, log in (("v2", v2), ("v1", v1)):
        batches = list(BatchScan(log))
        for bad in (None, *batches):
            data = bytearray(log)
            if bad is not None:
                data[bad.position + bad.size - 1] ^= 0x55
            d = tmp_path / f"{name}-{window}-{'ok' if bad is None else bad.position}" / "t-0"
            d.mkdir(parents=True)
            (d / segment_name(0, ".log")).write_bytes(bytes(data))
            got = []
            for pure in (False, True):
                try:
                    if pure:
                        with _PurePython():
                            manager.PartitionLog(d)
                    else:
                        manager.PartitionLog(d)
                    got.append(None)
                except CorruptRecordError as exc:
                    got.append((str(exc), exc.position))
            want = None if bad is None else bad.position
            assert got[0] == got[1] and (got[0] is None) == (want is None)
            assert want is None or (got[0][1] == want and f"at position {want} " in got[0][0])
