"""Throughput of the recovery walk: `kafkatool index verify` and `kafkatool recover` on a warm segment.

Target (issue 3): both walk batches with CRC checks at >= 1 GB/s (10^9 bytes of log per second) on a
warm 1 GiB segment.  For each batch size asked for, one segment of --size-mb MiB of v2 batches
(uncompressed records of ~100 bytes, timestamps increasing) is generated once from a template batch
(only its offsets, timestamps and CRC change per batch), indexed as the broker would, and read once
to warm the page cache.  Then, best of --repeat:

  walk     library: walk_segment_file (CRC of every batch + index rebuild), in this process
  crc      library: records.verify_crcs (CRC of every batch, nothing else), for reference
  verify   `kafkatool index verify DIR` (walk + every index entry checked), a subprocess
  recover  `kafkatool recover LOGDIR --full` (walk + rebuilt indexes compared), a subprocess

Subprocess rows include the interpreter's start-up (a `startup` row times `kafkatool --version`) and
report the child's peak RSS (`wait4`, the largest of the runs; issue 14 wants it flat in segment size).

    python benchmarks/bench_verify.py --size-mb 64
    python benchmarks/bench_verify.py --size-mb 1024 --batch-kb 1,16,64 --repeat 3 --json
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import struct
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from kafkatool.log import crc as _crc
from kafkatool.log.files import INDEX_SUFFIX, LOG_SUFFIX, TIME_INDEX_SUFFIX, MappedFile, segment_name
from kafkatool.log.record import Record
from kafkatool.log.records import verify_crcs
from kafkatool.log.segment import walk_segment_file
from kafkatool.log.writer import encode_v2_batch

DATA_DIR = Path(__file__).resolve().parent / "data" / "verify"
TARGET_GBPS = 1.0
T0 = 1_700_000_000_000
MIB = 1 << 20


@dataclass
class Row:
    mode: str
    batch_bytes: int
    bytes: int
    batches: int
    seconds: float
    gb_per_s: float
    ok: bool | None
    all_seconds: list[float]
    peak_rss_mb: float | None = None  # subprocess modes: the child's peak RSS (wait4), largest run


def generate(path: Path, size: int, batch_kb: float) -> tuple[int, int]:
    """A segment of about `size` bytes of v2 batches of about batch_kb KiB; returns (bytes, batches)."""
    per = max(1, int(batch_kb * 1024) // 110)
    recs = [Record(i, T0 + i, b"key-%08d" % i, (b"value-%d-" % i * 12)[:80], ()) for i in range(per)]
    tmpl = bytearray(encode_v2_batch(recs, 0))
    n = max(1, size // len(tmpl))
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as f:
        chunk = []
        for i in range(n):
            base = i * per
            struct.pack_into(">q", tmpl, 0, base)
            struct.pack_into(">qq", tmpl, 27, T0 + base, T0 + base + per - 1)
            struct.pack_into(">I", tmpl, 17, _crc.crc32c(memoryview(tmpl)[21:]))
            chunk.append(bytes(tmpl))
            if len(chunk) == 4096:
                f.write(b"".join(chunk))
                chunk.clear()
        f.write(b"".join(chunk))
    scan = walk_segment_file(path, 0)
    path.with_name(segment_name(0, INDEX_SUFFIX)).write_bytes(scan.offset_index_bytes())
    path.with_name(segment_name(0, TIME_INDEX_SUFFIX)).write_bytes(scan.time_index_bytes())
    return path.stat().st_size, n


def warm(path: Path) -> None:
    with open(path, "rb") as f:
        while f.read(8 * MIB):
            pass


def best(fn, repeat: int) -> list[float]:  # type: ignore[no-untyped-def]
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return times


PEAK_RSS_KB: list[int] = []  # ru_maxrss of every run_cli child, in order


def run_cli(args: list[str]) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "kafkatool", *args], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    assert proc.stderr is not None
    err = proc.stderr.read().decode(errors="replace")
    proc.stderr.close()
    _pid, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    PEAK_RSS_KB.append(usage.ru_maxrss)
    if proc.returncode != 0:
        raise SystemExit(f"kafkatool {' '.join(args)} failed ({proc.returncode}): {err}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size-mb", type=int, default=1024, help="segment size in MiB (default 1024)")
    ap.add_argument("--batch-kb", default="1,16,64", help="batch sizes in KiB, comma-separated")
    ap.add_argument("--repeat", type=int, default=3, help="runs per mode; the best counts")
    ap.add_argument("--modes", default="walk,crc,verify,recover")
    ap.add_argument("--dir", type=Path, default=DATA_DIR, help=f"where segments are generated ({DATA_DIR})")
    ap.add_argument("--keep", action="store_true", help="keep the generated segments")
    ap.add_argument("--json", action="store_true", help="print the rows as JSON")
    args = ap.parse_args(argv)
    modes = args.modes.split(",")
    rows: list[Row] = []
    startup = min(best(lambda: run_cli(["--version"]), args.repeat))
    for kb in (float(x) for x in args.batch_kb.split(",")):
        logs = args.dir / f"{args.size_mb}m-{kb:g}k"
        pdir = logs / "bench-0"
        log = pdir / segment_name(0, LOG_SUFFIX)
        if not log.exists():
            shutil.rmtree(logs, ignore_errors=True)
            size, n = generate(log, args.size_mb * MIB, kb)
        else:
            size, n = log.stat().st_size, walk_segment_file(log, 0).batches
        warm(log)
        batch_bytes = size // n

        def walk(log: Path = log) -> None:
            s = walk_segment_file(log, 0)
            assert s.clean

        def crc_only(log: Path = log) -> None:
            with MappedFile(log) as mf:
                _n, _v, bad = verify_crcs(mf.buf)
                assert bad is None

        fns = {
            "walk": walk,
            "crc": crc_only,
            "verify": lambda pdir=pdir: run_cli(["index", "verify", "-q", str(pdir)]),
            "recover": lambda logs=logs: run_cli(["recover", "-q", "--full", str(logs)]),
        }
        for mode in modes:
            PEAK_RSS_KB.clear()
            times = best(fns[mode], args.repeat)
            rss = round(max(PEAK_RSS_KB) / 1024, 1) if PEAK_RSS_KB else None
            secs = min(times)
            gbps = size / secs / 1e9
            ok = gbps >= TARGET_GBPS if mode in ("walk", "verify", "recover") else None
            rows.append(
                Row(
                    mode,
                    batch_bytes,
                    size,
                    n,
                    round(secs, 4),
                    round(gbps, 3),
                    ok,
                    [round(t, 4) for t in times],
                    rss,
                )
            )
        if not args.keep:
            shutil.rmtree(logs, ignore_errors=True)
    if args.json:
        print(json.dumps({"startup_seconds": round(startup, 4), "rows": [asdict(r) for r in rows]}, indent=2))
    else:
        print(
            f"startup (kafkatool --version): {startup:.3f} s; target {TARGET_GBPS} GB/s; load {os.getloadavg()}"
        )
        print(
            f"{'mode':8} {'batch B':>8} {'MiB':>6} {'batches':>9} {'seconds':>8} {'GB/s':>6} {'RSS MB':>7}  target"
        )
        for r in rows:
            mark = "" if r.ok is None else ("ok" if r.ok else "BELOW")
            rss = "-" if r.peak_rss_mb is None else f"{r.peak_rss_mb:.1f}"
            print(
                f"{r.mode:8} {r.batch_bytes:8d} {r.bytes / MIB:6.0f} {r.batches:9d} {r.seconds:8.3f} "
                f"{r.gb_per_s:6.2f} {rss:>7}  {mark}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
