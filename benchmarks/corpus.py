"""Deterministic dump-log benchmark corpora (issue 2), generated with the project's own writer.

Three single-segment logs mirror the corpora Kafka 3.3.1's kafka-dump-log.sh was timed on:

  A  512 MiB v2 uncompressed, 15 records/batch, 1 KiB random-hex values, keys `key-%012d`, header h=v
  B  256 MiB v2 uncompressed, 100 records/batch, 100-byte random A-Z values, keys `%08d`, no headers
  C  256 MiB v2 lz4, 200 records/batch, 1 KiB values over `a`..`k` (mostly `a`), keys `%08d`

Generation is fast because every batch of a corpus has the same layout: one template batch is encoded
with `encode_v2_batch`, split around its keys and values, and each real batch is the template with
that batch's keys and values spliced in, its offsets/timestamps patched and its CRC recomputed.  The
first and last batches are re-encoded with `encode_v2_batch` and must match byte for byte, so the
shortcut cannot drift from the real encoder.  Record `o` has key derived from `o` and timestamp
`T0 + o`; a smaller `--scale` gives a prefix of the full corpus.

Corpora are cached under `benchmarks/data/<name>-<records>/` with a `corpus.json` describing them.

    python benchmarks/corpus.py --corpus A,B,C --scale 0.05
"""

from __future__ import annotations

import argparse
import array
import json
import os
import random
import shutil
import struct
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

import crc32c

from kafkatool.log.codecs import Codec, compress
from kafkatool.log.files import LOG_SUFFIX, segment_name
from kafkatool.log.record import V2_HEADER_SIZE, Record
from kafkatool.log.records import read_batch_header
from kafkatool.log.writer import SegmentWriter, encode_v2_batch

DATA_DIR = Path(__file__).resolve().parent / "data"
FORMAT_VERSION = 1  # bump when generation changes, so stale caches are not reused
T0 = 1_700_000_000_000  # timestamp of offset 0 (ms); record o has timestamp T0 + o
MIB = 1 << 20

# Where the fields this generator patches sit in a v2 batch header.
_OFF_BASE_OFFSET = 0
_OFF_LENGTH = 8
_OFF_CRC = 17
_OFF_CRC_START = 21
_OFF_BASE_TS = 27
_OFF_MAX_TS = 35

# C's values: 11 letters, `a` everywhere except a rare letter b..k at about this fraction of bytes.
# Tuned so 7.83 M records of 1 KiB compress to ~256 MiB with lz4 (Kafka's 64 KiB independent blocks).
SKEWED_RARE_FRACTION = 0.00282
SKEWED_POOL_BYTES = 64 * MIB
SKEWED_ALPHABET = b"abcdefghijk"

_HEX = bytes(b"0123456789abcdef"[i % 16] for i in range(256))
_UPPER = bytes(65 + i % 26 for i in range(256))  # near-uniform A-Z (256 is not a multiple of 26)


@dataclass(frozen=True)
class CorpusSpec:
    """What a corpus holds at scale 1.0, and Kafka 3.3.1's dump-log seconds on it (warm cache)."""

    name: str
    description: str
    records: int
    records_per_batch: int
    codec: int
    key_format: bytes
    value_kind: str  # "hex" | "upper" | "skewed"
    value_size: int
    headers: tuple[tuple[str, bytes], ...]
    seed: int
    kafka_seconds: dict[str, float]
    nominal_bytes: int

    def records_at(self, scale: float) -> int:
        """Record count at `scale` (a fraction of full size), rounded to whole batches, at least one."""
        batches = max(1, round(self.records * scale / self.records_per_batch))
        return batches * self.records_per_batch


CORPORA: dict[str, CorpusSpec] = {
    "A": CorpusSpec(
        name="A",
        description="512 MiB v2 none, 15 rec/batch, 1 KiB random-hex values, 16 B keys, header h=v",
        records=507_900,
        records_per_batch=15,
        codec=Codec.NONE,
        key_format=b"key-%012d",
        value_kind="hex",
        value_size=1024,
        headers=(("h", b"v"),),
        seed=0xA,
        kafka_seconds={"shallow": 1.55, "deep": 2.68, "print": 4.81},
        nominal_bytes=512 * MIB,
    ),
    "B": CorpusSpec(
        name="B",
        description="256 MiB v2 none, 100 rec/batch, 100 B random A-Z values, 8 B keys, no headers",
        records=2_270_000,
        records_per_batch=100,
        codec=Codec.NONE,
        key_format=b"%08d",
        value_kind="upper",
        value_size=100,
        headers=(),
        seed=0xB,
        kafka_seconds={"shallow": 1.63, "deep": 5.34, "print": 6.91},
        nominal_bytes=256 * MIB,
    ),
    "C": CorpusSpec(
        name="C",
        description="256 MiB v2 lz4, 200 rec/batch, 1 KiB values over 11 letters (~30x), 8 B keys",
        records=7_830_000,
        records_per_batch=200,
        codec=Codec.LZ4,
        key_format=b"%08d",
        value_kind="skewed",
        value_size=1024,
        headers=(),
        seed=0xC,
        kafka_seconds={"shallow": 1.55, "deep": 19.6, "print": 47.7},
        nominal_bytes=256 * MIB,
    ),
}


@dataclass
class CorpusInfo:
    """A generated corpus on disk (also written as `corpus.json` beside the log)."""

    name: str
    path: str
    records: int
    batches: int
    bytes: int
    uncompressed_record_bytes: int  # the batches' record sections before compression
    compression_ratio: float
    scale: float
    generation_seconds: float
    format_version: int = FORMAT_VERSION

    @property
    def log(self) -> Path:
        return Path(self.path)


# ---------------------------------------------------------------------------------------------
# values and keys
# ---------------------------------------------------------------------------------------------


def skewed_pool(seed: int, size: int = SKEWED_POOL_BYTES, rare: float = SKEWED_RARE_FRACTION) -> bytes:
    """`size` bytes of `a` with about `rare * size` random letters b..k sprinkled in (deterministic)."""
    rnd = random.Random(seed)
    buf = bytearray(SKEWED_ALPHABET[:1] * size)
    count = int(size * rare)
    positions = array.array("I", rnd.randbytes(4 * count))
    letters = rnd.randbytes(count)
    others = SKEWED_ALPHABET[1:]
    for i, p in enumerate(positions):
        buf[p % size] = others[letters[i] % len(others)]
    return bytes(buf)


def value_source(spec: CorpusSpec, rnd: random.Random) -> Callable[[int], list[bytes]]:
    """A function giving the next `n` values of the corpus, drawn from `rnd`."""
    size = spec.value_size
    if spec.value_kind == "hex":

        def hex_values(n: int) -> list[bytes]:
            block = rnd.randbytes(n * size // 2).hex().encode()
            return [block[i : i + size] for i in range(0, n * size, size)]

        return hex_values
    if spec.value_kind == "upper":

        def upper_values(n: int) -> list[bytes]:
            block = rnd.randbytes(n * size).translate(_UPPER)
            return [block[i : i + size] for i in range(0, n * size, size)]

        return upper_values
    if spec.value_kind == "skewed":
        pool = skewed_pool(spec.seed)
        span = len(pool) - size

        def skewed_values(n: int) -> list[bytes]:
            starts = array.array("I", rnd.randbytes(4 * n))
            return [pool[o : o + size] for o in map(span.__rmod__, starts)]

        return skewed_values
    raise ValueError(f"unknown value kind {spec.value_kind!r}")


def keys_for(spec: CorpusSpec, base: int, n: int) -> list[bytes]:
    fmt = spec.key_format
    if fmt == b"%08d":
        return [fmt % (o % 100_000_000) for o in range(base, base + n)]
    return [fmt % o for o in range(base, base + n)]


def key_size(spec: CorpusSpec) -> int:
    return len(keys_for(spec, 0, 1)[0])


def batch_records(spec: CorpusSpec, base: int, keys: list[bytes], values: list[bytes]) -> list[Record]:
    return [
        Record(base + i, T0 + base + i, k, v, spec.headers)
        for i, (k, v) in enumerate(zip(keys, values, strict=True))
    ]


# ---------------------------------------------------------------------------------------------
# the template batch
# ---------------------------------------------------------------------------------------------


class BatchTemplate:
    """One encoded batch split around its keys and values, to splice new ones into.

    `segments` are the 2n+1 fixed byte runs of the uncompressed record section between the n keys and
    n values; `header` is the template's 61-byte header (attributes, counts, producer fields).
    """

    def __init__(self, spec: CorpusSpec) -> None:
        self.spec = spec
        n = spec.records_per_batch
        klen = key_size(spec)
        kmark = b"\xfe" * klen
        vmark = b"\xfd" * spec.value_size
        recs = batch_records(spec, 0, [kmark] * n, [vmark] * n)
        plain = encode_v2_batch(recs)
        coded = plain if spec.codec == Codec.NONE else encode_v2_batch(recs, codec=spec.codec)
        self.header = bytearray(coded[:V2_HEADER_SIZE])
        body = plain[V2_HEADER_SIZE:]
        segments: list[bytes] = []
        pos = 0
        for _ in range(n):
            for mark in (kmark, vmark):
                at = body.find(mark, pos)
                if at < 0:
                    raise AssertionError("template: placeholder not found")
                segments.append(body[pos:at])
                pos = at + len(mark)
        segments.append(body[pos:])
        self.segments = segments
        self._parts: list[bytes] = [b""] * (4 * n + 1)
        self._parts[0::2] = segments

    def body(self, keys: list[bytes], values: list[bytes]) -> bytes:
        """The uncompressed record section with these keys and values."""
        parts = self._parts
        parts[1::4] = keys
        parts[3::4] = values
        return b"".join(parts)

    def batch(self, base: int, keys: list[bytes], values: list[bytes]) -> tuple[bytes, int]:
        """(batch bytes, uncompressed record-section size) for the batch starting at offset `base`."""
        plain = self.body(keys, values)
        body = compress(self.spec.codec, plain) if self.spec.codec != Codec.NONE else plain
        n = self.spec.records_per_batch
        h = self.header
        struct.pack_into(">q", h, _OFF_BASE_OFFSET, base)
        struct.pack_into(">i", h, _OFF_LENGTH, V2_HEADER_SIZE - 12 + len(body))
        struct.pack_into(">qq", h, _OFF_BASE_TS, T0 + base, T0 + base + n - 1)
        crc = crc32c.crc32c(body, crc32c.crc32c(memoryview(h)[_OFF_CRC_START:]))
        struct.pack_into(">I", h, _OFF_CRC, crc)
        return bytes(h) + body, len(plain)


# ---------------------------------------------------------------------------------------------
# generation and cache
# ---------------------------------------------------------------------------------------------


def corpus_dir(spec: CorpusSpec, records: int, data_dir: Path = DATA_DIR) -> Path:
    return data_dir / f"{spec.name}-{records}"


def load_cached(spec: CorpusSpec, records: int, data_dir: Path = DATA_DIR) -> CorpusInfo | None:
    meta = corpus_dir(spec, records, data_dir) / "corpus.json"
    try:
        info = CorpusInfo(**json.loads(meta.read_text()))
    except (OSError, ValueError, TypeError):
        return None
    if (
        info.format_version != FORMAT_VERSION
        or not info.log.exists()
        or info.log.stat().st_size != info.bytes
    ):
        return None
    return info


def _check_against_encoder(
    spec: CorpusSpec, data: bytes, base: int, keys: list[bytes], values: list[bytes]
) -> None:
    """The spliced batch must equal what `encode_v2_batch` makes of the same records."""
    want = encode_v2_batch(batch_records(spec, base, keys, values), codec=spec.codec)
    if data != want:
        raise AssertionError(
            f"corpus {spec.name}: spliced batch at offset {base} differs from encode_v2_batch"
        )


def generate(
    spec: CorpusSpec,
    scale: float = 1.0,
    data_dir: Path = DATA_DIR,
    *,
    force: bool = False,
    progress: Callable[[int, int], None] | None = None,
) -> CorpusInfo:
    """Generate (or reuse the cached) corpus at `scale`; returns where it is and what it holds."""
    records = spec.records_at(scale)
    if not force:
        cached = load_cached(spec, records, data_dir)
        if cached is not None:
            return cached
    final = corpus_dir(spec, records, data_dir)
    tmp = final.with_name(final.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    start = time.perf_counter()
    n = spec.records_per_batch
    batches = records // n
    rnd = random.Random(spec.seed)
    next_values = value_source(spec, rnd)
    template = BatchTemplate(spec)
    writer = SegmentWriter(tmp, 0)
    plain_total = 0
    try:
        for b in range(batches):
            base = b * n
            keys = keys_for(spec, base, n)
            values = next_values(n)
            data, plain = template.batch(base, keys, values)
            if b == 0 or b == batches - 1:
                _check_against_encoder(spec, data, base, keys, values)
            plain_total += plain
            last = base + n - 1
            writer.append(data, last, T0 + last, last)
            if progress is not None and (b % 1024 == 0 or b == batches - 1):
                progress(b + 1, batches)
    finally:
        writer.close()
    log = final / segment_name(0, LOG_SUFFIX)
    size = (tmp / log.name).stat().st_size
    info = CorpusInfo(
        name=spec.name,
        path=str(log),
        records=records,
        batches=batches,
        bytes=size,
        uncompressed_record_bytes=plain_total,
        compression_ratio=round(plain_total / max(1, size - batches * V2_HEADER_SIZE), 2),
        scale=round(records / spec.records, 6),
        generation_seconds=round(time.perf_counter() - start, 2),
    )
    (tmp / "corpus.json").write_text(json.dumps(asdict(info), indent=2) + "\n")
    shutil.rmtree(final, ignore_errors=True)
    os.replace(tmp, final)
    return info


def verify(info: CorpusInfo) -> None:
    """Walk every batch: framing, CRC and record count (slow for C: it decompresses)."""
    data = info.log.read_bytes()
    pos = 0
    batches = records = 0
    while pos < len(data):
        b = read_batch_header(data, pos, len(data))
        if b is None or not b.is_valid():
            raise AssertionError(f"{info.log}: bad batch at {pos}")
        records += len(b.records())
        batches += 1
        pos = b.end
    if (batches, records) != (info.batches, info.records):
        raise AssertionError(
            f"{info.log}: {batches} batches / {records} records, expected {info.batches}/{info.records}"
        )


def parse_corpora(arg: str) -> list[CorpusSpec]:
    names = [n.strip().upper() for n in arg.split(",") if n.strip()]
    unknown = [n for n in names if n not in CORPORA]
    if unknown or not names:
        raise SystemExit(f"corpus: {','.join(unknown) or arg!r}: choose from {','.join(CORPORA)}")
    return [CORPORA[n] for n in names]


def _stderr_progress(name: str) -> Callable[[int, int], None]:
    def show(done: int, total: int) -> None:
        if sys.stderr.isatty():
            sys.stderr.write(f"\r  {name}: {done}/{total} batches")
            if done == total:
                sys.stderr.write("\n")

    return show


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", default="A,B,C", help="comma-separated corpora (A,B,C)")
    ap.add_argument("--scale", type=float, default=1.0, help="fraction of the full size (default 1.0)")
    ap.add_argument("--data-dir", type=Path, default=DATA_DIR)
    ap.add_argument("--force", action="store_true", help="regenerate even when cached")
    ap.add_argument("--verify", action="store_true", help="walk every batch afterwards (CRC, record counts)")
    args = ap.parse_args(argv)
    if not 0 < args.scale <= 4:
        raise SystemExit("scale: must be in (0, 4]")
    for spec in parse_corpora(args.corpus):
        info = generate(
            spec, args.scale, args.data_dir, force=args.force, progress=_stderr_progress(spec.name)
        )
        if args.verify:
            verify(info)
        print(
            f"{info.name}: {info.log}  {info.bytes / MIB:.1f} MiB  {info.records} records  {info.batches} batches  "
            f"ratio {info.compression_ratio}x  generated in {info.generation_seconds}s"
            + ("  verified" if args.verify else "")
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
