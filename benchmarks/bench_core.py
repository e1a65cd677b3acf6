"""The compiled core against the pure-Python one, function by function, in one process per core.

Each core runs in its own interpreter (`KAFKATOOL_PURE_PYTHON=1` for the fallback), best of
--repeat, on a warm page cache, no subprocess start-up in the numbers:

  walk    log.segment.walk_segment_file: the recovery walk of `index verify`/`recover` (CRC of every
          batch, index entries), on a generated segment of --size-mb MiB of ~1 KiB v2 batches
  crc     log.records.verify_crcs on the same segment
  decode  Batch.records() of every batch of corpus B and C (v2 record decoding, lz4 for C)
  deep    dump-log --deep-iteration of corpus B/C in this process (jobs=1), output discarded
  print   dump-log --print-data-log, likewise

MB/s is 10^6 bytes of log per second; rec/s records per second.

    python benchmarks/bench_core.py --size-mb 64 --scale 0.25
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

try:
    from benchmarks import corpus
except ImportError:  # run as a script: benchmarks/ itself is on sys.path
    import corpus  # type: ignore[no-redef]

MIB = 1 << 20


class _Null:
    def write(self, b: bytes) -> int:
        return len(b)

    def flush(self) -> None:
        pass


def best(fn: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def run_core(args: argparse.Namespace) -> list[dict]:
    """The measurements with whichever core this interpreter loaded."""
    from kafkatool.log.core import CORE
    from kafkatool.log.files import MappedFile
    from kafkatool.log.records import BatchScan, verify_crcs
    from kafkatool.log.segment import walk_segment_file
    from kafkatool.ops.dumplog import DumpOptions, dump_files

    rows = []
    seg = Path(args.segment)
    size = seg.stat().st_size
    n = walk_segment_file(seg, 0).batches
    data = seg.read_bytes()
    for mode, fn in (
        ("walk", lambda: walk_segment_file(seg, 0)),
        ("crc", lambda: verify_crcs(data)),
    ):
        s = best(fn, args.repeat)
        rows.append({"core": CORE, "mode": mode, "input": f"{size // MIB} MiB, {size // n} B batches",
                     "seconds": s, "MB/s": size / s / 1e6, "rec/s": None})
    for name in args.corpus.split(","):
        info = corpus.generate(corpus.CORPORA[name], args.scale, Path(args.data_dir))
        log = Path(info.path)

        def decode(log: Path = log) -> None:
            with MappedFile(log) as mf:
                for b in BatchScan(mf.buf):
                    b.records()

        def dump(log: Path = log, **kw: bool) -> Callable[[], None]:
            return lambda: dump_files([str(log)], DumpOptions(jobs=1, **kw), _Null(), _Null())  # type: ignore[arg-type]

        for mode, fn in (
            ("decode", decode),
            ("deep", dump(deep_iteration=True)),
            ("print", dump(print_data_log=True)),
        ):
            s = best(fn, args.repeat)
            rows.append({"core": CORE, "mode": mode, "input": f"corpus {name} {info.bytes // MIB} MiB",
                         "seconds": s, "MB/s": info.bytes / s / 1e6, "rec/s": info.records / s})
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size-mb", type=int, default=64, help="walk/crc segment size in MiB (default 64)")
    ap.add_argument("--scale", type=float, default=0.25, help="corpus scale (0.25: B and C are 64 MiB)")
    ap.add_argument("--corpus", default="B,C", help="comma-separated corpora (default B,C)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--data-dir", default=str(corpus.DATA_DIR))
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--segment", help=argparse.SUPPRESS)
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        json.dump(run_core(args), sys.stdout)
        return 0
    try:
        from benchmarks.bench_verify import generate as gen_segment
    except ImportError:
        from bench_verify import generate as gen_segment  # type: ignore[no-redef]
    seg = Path(args.data_dir) / f"core-{args.size_mb}m-1k" / "bench-0" / "00000000000000000000.log"
    if not seg.exists():
        gen_segment(seg, args.size_mb * MIB, 1)
    rows: list[dict] = []
    for pure in ("1", "0"):
        env = {**os.environ, "KAFKATOOL_PURE_PYTHON": pure}
        cmd = [sys.executable, __file__, "--child", "--segment", str(seg), "--scale", str(args.scale),
               "--corpus", args.corpus, "--repeat", str(args.repeat), "--data-dir", args.data_dir]
        rows += json.loads(subprocess.run(cmd, env=env, check=True, capture_output=True, text=True).stdout)
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    print(f"{'core':12} {'mode':7} {'input':28} {'seconds':>8} {'MB/s':>8} {'M rec/s':>8}  speed-up")
    base = {(r["mode"], r["input"]): r["seconds"] for r in rows if r["core"] == "pure Python"}
    for r in rows:
        recs = "" if r["rec/s"] is None else f"{r['rec/s'] / 1e6:.2f}"
        up = base[(r["mode"], r["input"])] / r["seconds"]
        print(f"{r['core']:12} {r['mode']:7} {r['input']:28} {r['seconds']:8.3f} {r['MB/s']:8.0f} {recs:>8}  {up:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
