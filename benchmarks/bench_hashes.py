"""The compiled core's hand-written CRC-32C and MD5 against maintained libraries, in the call patterns
kafkatool uses them.

CRC-32C (the checksum of every v2 batch):
  run       one call on a whole 256 KiB buffer (a read of the segment walk)
  batch-N   one call per N-byte batch (1, 4, 16 KiB) over a 64 MiB buffer of valid v2 batches:
            the `crc32c` package from Python (slice + call: what any use of it costs, since the package
            has no C API), the core's `crc32c` from Python (the same call overhead, the routine alone),
            and the core's `verify_crcs` walk (its CRC called from C, no Python object a batch)

MD5 (the log cleaner's offset map keys on every key's MD5 digest):
  keys-N    100,000 keys of N bytes (8, 16, 36, 100) in one buffer: the core's `md5_slices` (one call),
            `hashlib.md5(slice).digest()` a key (OpenSSL, from Python: the pure-Python path), and
            OpenSSL's libcrypto from C, a key at a time three ways (`EVP_Digest`, one reused
            `EVP_MD_CTX`, the low-level `MD5()`): a small C program compiled here when the OpenSSL
            headers are installed, what linking the core to libcrypto would give

MB/s is 10^6 bytes hashed per second, best of --repeat; keys/s for MD5 too.

    python benchmarks/bench_hashes.py --repeat 5
    python benchmarks/bench_hashes.py --json
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

MIB = 1 << 20
KEYS = 100_000
LIBCRYPTO_WAYS = (
    "libcrypto EVP_Digest a key (from C)",
    "libcrypto EVP_MD_CTX reused (from C)",
    "libcrypto MD5() a key (from C)",
)

_LIBCRYPTO_BENCH = r"""
#define OPENSSL_SUPPRESS_DEPRECATED /* MD5(): OpenSSL's low-level one-shot, deprecated in 3.0 but there */
#include <openssl/evp.h>
#include <openssl/md5.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

/* argv: keys, key length, repeat; prints the best time of each way: EVP_Digest a key, one EVP_MD_CTX
 * reused (init/update/final a key), MD5() a key */
int main(int argc, char **argv)
{
    size_t n = (size_t)atol(argv[1]), len = (size_t)atol(argv[2]);
    int repeat = atoi(argv[3]);
    unsigned char *buf = malloc(n * len), *out = malloc(n * 16);
    for (size_t i = 0; i < n * len; i++)
        buf[i] = (unsigned char)(i * 2654435761u >> 24);
    EVP_MD *md5 = EVP_MD_fetch(NULL, "MD5", NULL); /* fetched once, as a linked core would */
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    unsigned x = 0;
    for (int way = 0; way < 3; way++) {
        double best = 1e9;
        for (int r = 0; r < repeat; r++) {
            double t = now();
            for (size_t i = 0; i < n; i++) {
                const unsigned char *p = buf + i * len;
                if (way == 0) {
                    EVP_Digest(p, len, out + 16 * i, NULL, md5, NULL);
                } else if (way == 1) {
                    EVP_DigestInit_ex2(ctx, md5, NULL);
                    EVP_DigestUpdate(ctx, p, len);
                    EVP_DigestFinal_ex(ctx, out + 16 * i, NULL);
                } else {
                    MD5(p, len, out + 16 * i);
                }
            }
            t = now() - t;
            if (t < best)
                best = t;
        }
        for (size_t i = 0; i < n * 16; i++)
            x ^= out[i];
        printf("%.9f ", best);
    }
    printf("%u\n", x);
    EVP_MD_CTX_free(ctx);
    EVP_MD_free(md5);
    return 0;
}
"""


def best(fn: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def batches(size: int, total: int) -> bytes:
    """`total` bytes of valid ~`size`-byte uncompressed v2 batches (one batch, repeated)."""
    from kafkatool.log.record import Record
    from kafkatool.log.writer import encode_v2_batch

    value = bytes(range(256)) * (size // 256 + 1)
    vlen = max(1, size - 61 - 20)
    one = encode_v2_batch([Record(0, 1700000000000, b"k", value[:vlen], (), -1, None, True)])
    return one * (total // len(one))


def per_call(fn: Callable[[memoryview], int], view: memoryview, spans: list[tuple[int, int]]) -> None:
    for a, b in spans:
        fn(view[a:b])


def runs_of(fn: Callable[[bytes], int], buf: bytes, runs: int) -> None:
    for _ in range(runs):
        fn(buf)


def per_key(view: memoryview, pairs: list[tuple[int, int]]) -> None:
    md5 = hashlib.md5
    for a, b in pairs:
        md5(view[a:b]).digest()


def crc_rows(repeat: int, sp: object) -> list[dict]:
    from kafkatool.log import crc as crc_module

    pkg = crc_module.crc32c  # the crc32c package's C function, loaded without its package import
    rows = []
    buf = os.urandom(256 * 1024)
    runs = 256
    for name, fn in (("crc32c package", pkg), ("core crc32c", getattr(sp, "crc32c", None))):
        if fn is None:
            continue
        t = best(partial(runs_of, fn, buf, runs), repeat)
        rows.append(
            {"hash": "CRC-32C", "pattern": "run 256 KiB", "impl": name, "MB/s": runs * len(buf) / t / 1e6}
        )
    for kib in (1, 4, 16):
        log = batches(kib * 1024, 64 * MIB)
        size = int.from_bytes(log[8:12], "big") + 12
        spans = [(p + 21, p + size) for p in range(0, len(log) - size + 1, size)]
        view = memoryview(log)

        impls: list[tuple[str, Callable[[], object]]] = [
            ("crc32c package, a call a batch", partial(per_call, pkg, view, spans))
        ]
        if sp is not None:
            impls.append(("core crc32c, a call a batch", partial(per_call, sp.crc32c, view, spans)))  # type: ignore[attr-defined]
            impls.append(("core verify_crcs (C walk)", partial(sp.verify_crcs, log, 0, len(log))))  # type: ignore[attr-defined]
        for name, fn in impls:
            t = best(fn, repeat)
            rows.append(
                {"hash": "CRC-32C", "pattern": f"batch {kib} KiB", "impl": name, "MB/s": len(log) / t / 1e6}
            )
    return rows


def libcrypto_bench(tmp: Path) -> Path | None:
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        return None
    src = tmp / "md5_libcrypto.c"
    src.write_text(_LIBCRYPTO_BENCH)
    exe = tmp / "md5_libcrypto"
    r = subprocess.run([cc, "-O2", str(src), "-o", str(exe), "-lcrypto"], capture_output=True, text=True)
    return exe if r.returncode == 0 else None


def md5_rows(repeat: int, sp: object, exe: Path | None) -> list[dict]:
    import numpy as np

    rows = []
    for klen in (8, 16, 36, 100):
        buf = bytes((i * 2654435761 >> 24) & 0xFF for i in range(KEYS * klen))
        starts = np.arange(0, KEYS * klen, klen, dtype=np.int64)
        ends = starts + klen
        s, e = starts.tobytes(), ends.tobytes()
        pairs = list(zip(starts.tolist(), ends.tolist(), strict=True))
        view = memoryview(buf)
        impls: list[tuple[str, Callable[[], object]]] = []
        if sp is not None:
            impls.append(("core md5_slices (one call)", partial(sp.md5_slices, buf, s, e)))  # type: ignore[attr-defined]
        impls.append(("hashlib.md5 a key (OpenSSL, from Python)", partial(per_key, view, pairs)))
        if sp is not None:
            want = b"".join(hashlib.md5(buf[a:b]).digest() for a, b in pairs)
            assert sp.md5_slices(buf, s, e) == want  # type: ignore[attr-defined]
        for name, fn in impls:
            t = best(fn, repeat)
            rows.append(
                {
                    "hash": "MD5",
                    "pattern": f"keys {klen} B",
                    "impl": name,
                    "MB/s": KEYS * klen / t / 1e6,
                    "Mkeys/s": KEYS / t / 1e6,
                }
            )
        if exe is not None:
            out = subprocess.run(
                [str(exe), str(KEYS), str(klen), str(repeat)], capture_output=True, text=True, check=True
            ).stdout.split()
            for way, t in zip(LIBCRYPTO_WAYS, map(float, out), strict=False):
                rows.append(
                    {
                        "hash": "MD5",
                        "pattern": f"keys {klen} B",
                        "impl": way,
                        "MB/s": KEYS * klen / t / 1e6,
                        "Mkeys/s": KEYS / t / 1e6,
                    }
                )
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=5, help="best of N (default 5)")
    ap.add_argument("--json", action="store_true", help="rows as JSON instead of a table")
    args = ap.parse_args()
    from kafkatool.log.core import load_speedups

    sp = load_speedups()
    with tempfile.TemporaryDirectory() as tmp:
        exe = libcrypto_bench(Path(tmp))
        rows = crc_rows(args.repeat, sp) + md5_rows(args.repeat, sp, exe)
    if args.json:
        print(
            json.dumps(
                {"python": platform.python_version(), "machine": platform.machine(), "rows": rows}, indent=1
            )
        )
        return 0
    print(
        f"Python {platform.python_version()}, compiled core: {'yes' if sp is not None else 'no'}, "
        f"libcrypto from C: {'yes' if exe is not None else 'no (no compiler or OpenSSL headers)'}, "
        f"load {os.getloadavg()[0]:.1f}"
    )
    print("| hash | pattern | implementation | MB/s | M keys/s |")
    print("|---|---|---|---|---|")
    for r in rows:
        keys = f"{r['Mkeys/s']:.2f}" if "Mkeys/s" in r else ""
        print(f"| {r['hash']} | {r['pattern']} | {r['impl']} | {r['MB/s']:,.0f} | {keys} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
