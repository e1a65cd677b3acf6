"""Benchmark `kafkatool compact` on generated partitions, 100-byte and 1000-byte values, both cores.

For each `--value-sizes` entry a partition is written with the project's writer (`kafkatool.log.writer`):
`--size-mb` of v2 batches of `--batch-records` records (values half random, so about 2x compressible
with `--codec`); every key is written once, in a scrambled order, then `--overwrite-pct` of the records
overwrite them in another order (so that share is reclaimable), split into segments of `--segment-mb`,
plus an active segment.  Then the real command runs as a subprocess, once per core in `--cores` (the
compiled core, and pure Python with KAFKATOOL_PURE_PYTHON=1), on fresh copies:

    kafkatool compact DIR --config segment.bytes=... --buffer-size ... --format json --quiet

Reported per run: partition MB (10^6 bytes); MB/s over the cleaning's wall time (the JSON's elapsed_s,
without interpreter start-up) and over the whole command's; MB per CPU-second (user + system: the
figure to trust on a busy machine, where wall time also counts waiting for a core) of the whole
command and of the cleaning alone (that minus what the command takes with nothing to clean: start-up
and imports, measured on a missing directory); records/s; bytes and records reclaimed; and memory:
peak RSS of the child (wait4 rusage) and the peaks of its anonymous and file-backed resident memory
sampled from /proc (mapped segment pages count as file-backed RSS and are reclaimable; the offset map
and buffers are anonymous).  Targets (issue 14): >= 400 MB/s; memory bounded by `--buffer-size` plus
a constant, whatever the log size (compare two `--size-mb` with one `--buffer-size-mb`).

The code measured is this checkout's (its root goes first on the child's PYTHONPATH), whatever
`kafkatool` the environment has installed; the core each run really used is reported.

    python benchmarks/bench_compact.py --size-mb 64
    python benchmarks/bench_compact.py --size-mb 512 --value-sizes 100 --cores c --buffer-size-mb 128
    python benchmarks/bench_compact.py --size-mb 64 --value-sizes 100 --codec lz4 --repeat 3 --json

Do not run 1 GiB sizes on a shared machine; validate at 32-64 MiB.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # this checkout's kafkatool, not whichever one is installed

from kafkatool.log.codecs import CODEC_NAMES  # noqa: E402
from kafkatool.log.record import Record  # noqa: E402
from kafkatool.log.writer import SegmentWriter, encode_v2_batch  # noqa: E402

MB = 1_000_000
MIB = 1024 * 1024


CORES = {"c": "C", "python": "pure Python"}  # --cores names -> what kafkatool.log.core.CORE says


@dataclass
class Run:
    core: str
    value_size: int
    size_mb: float
    records: int
    wall_s: float
    clean_s: float
    mb_per_s: float
    mb_per_s_wall: float
    cpu_s: float
    mb_per_cpu_s: float
    clean_cpu_s: float
    mb_per_clean_cpu_s: float
    records_per_s: float
    bytes_reclaimed: int
    records_reclaimed: int
    map_entries: int
    peak_rss_mb: float
    peak_anon_mb: float
    peak_file_mb: float
    buffer_mb: float


def generate(partition_dir: Path, size: int, segment_bytes: int, value_size: int, batch_records: int,
             overwrite_pct: float, codec: int, seed: int) -> int:
    """Write about `size` bytes of keyed v2 batches; return the record count (active segment included)."""
    rng = random.Random(seed)
    record_size = value_size + 30  # key, varints, attributes: about
    approx = max(batch_records, size // record_size)
    distinct = max(1, int(approx * (1 - overwrite_pct / 100)))
    # every key once in one scrambled order, then the overwrites in another: exactly the share asked
    a0, a1 = _coprime(distinct, rng), _coprime(distinct, rng)
    c0, c1 = rng.randrange(distinct), rng.randrange(distinct)

    def key_of(i: int) -> int:
        if i < distinct:
            return (a0 * i + c0) % distinct
        return (a1 * (i - distinct) + c1) % distinct
    filler = b"x" * (value_size - value_size // 2)
    offset = 0
    written = 0
    t0 = 1_700_000_000_000
    while written < size:
        w = SegmentWriter(partition_dir, offset)
        while w.size < segment_bytes and written < size:
            recs = []
            for _ in range(batch_records):
                k = key_of(offset)
                value = rng.randbytes(value_size // 2) + filler  # half random: about 2x compressible
                recs.append(Record(offset, t0 + offset, b"key-%012d" % k, value, ()))
                offset += 1
            data = encode_v2_batch(recs, recs[0].offset, codec=codec)
            w.append(data, offset - 1, t0 + offset - 1, offset - 1)
            written += len(data)
        w.close()
    # the active segment, never cleaned
    w = SegmentWriter(partition_dir, offset)
    w.append(encode_v2_batch([Record(offset, t0 + offset, b"active", b"x", ())], offset), offset, t0, offset)
    w.close()
    return offset + 1


def _coprime(n: int, rng: random.Random) -> int:
    """A multiplier that makes i -> a*i mod n a bijection."""
    while True:
        a = rng.randrange(1, max(2, n)) | 1
        if math.gcd(a, n) == 1:
            return a


def _sample_memory(pid: int, peaks: dict[str, int], stop: threading.Event) -> None:
    while not stop.is_set():
        try:
            with open(f"/proc/{pid}/status") as f:
                for line in f:
                    if line.startswith(("RssAnon:", "RssFile:", "VmRSS:")):
                        key, value = line.split(":", 1)
                        peaks[key] = max(peaks.get(key, 0), int(value.split()[0]) * 1024)
        except (FileNotFoundError, ProcessLookupError):
            return
        stop.wait(0.02)


def child_env(core: str = "c") -> dict[str, str]:
    """The environment of the measured commands: this checkout first on PYTHONPATH, the core chosen."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH")) if p))
    env.pop("KAFKATOOL_PURE_PYTHON", None)
    if core == "python":
        env["KAFKATOOL_PURE_PYTHON"] = "1"
    return env


def core_used(core: str) -> str:
    """What kafkatool.log.core.CORE is in a child with that core asked for (C only when it was built)."""
    out = subprocess.run([sys.executable, "-c", "from kafkatool.log.core import CORE; print(CORE)"],
                         capture_output=True, text=True, env=child_env(core), check=True)
    return out.stdout.strip()


def startup_cpu_s(missing: Path, core: str) -> float:
    """CPU seconds the command takes when it has nothing to clean: start-up and the imports a run does
    before cleaning (`compact` of a missing directory, which fails with exit code 2), least of three."""
    best = float("inf")
    for _ in range(3):
        proc = subprocess.Popen([sys.executable, "-m", "kafkatool", "compact", str(missing), "--quiet"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=child_env(core))
        _, status, rusage = os.wait4(proc.pid, 0)
        if os.waitstatus_to_exitcode(status) != 2:
            raise SystemExit(f"compact of a missing directory should exit 2, not {os.waitstatus_to_exitcode(status)}")
        best = min(best, rusage.ru_utime + rusage.ru_stime)
    return best


def run_once(partition_dir: Path, args: argparse.Namespace, segment_bytes: int, startup_s: float, core: str,
             value_size: int) -> Run:
    size = sum(p.stat().st_size for p in partition_dir.iterdir() if p.suffix == ".log")
    cmd = [
        sys.executable, "-m", "kafkatool", "compact", str(partition_dir), "--quiet", "--format", "json",
        "--config", f"segment.bytes={segment_bytes}", "--buffer-size", str(args.buffer_size_mb * MIB),
        "--now", "1800000000000",
    ]
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=child_env(core))
    peaks: dict[str, int] = {}
    stop = threading.Event()
    sampler = threading.Thread(target=_sample_memory, args=(proc.pid, peaks, stop), daemon=True)
    sampler.start()
    _, status, rusage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    stop.set()
    sampler.join()
    out = proc.stdout.read() if proc.stdout else ""
    err = proc.stderr.read() if proc.stderr else ""
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"compact failed ({proc.returncode}): {err}")
    [result] = json.loads(out)
    st = result["stats"]
    clean_s = result["elapsed_s"]
    cpu = rusage.ru_utime + rusage.ru_stime
    clean_cpu = max(cpu - startup_s, 1e-3)
    return Run(
        core=core_used(core),
        value_size=value_size,
        size_mb=size / MB,
        records=st["records_read"],
        wall_s=round(wall, 3),
        clean_s=round(clean_s, 3),
        mb_per_s=round(size / MB / clean_s, 1),
        mb_per_s_wall=round(size / MB / wall, 1),
        cpu_s=round(cpu, 3),
        mb_per_cpu_s=round(size / MB / cpu, 1),
        clean_cpu_s=round(clean_cpu, 3),
        mb_per_clean_cpu_s=round(size / MB / clean_cpu, 1),
        records_per_s=round(st["records_read"] / clean_s),
        bytes_reclaimed=st["bytes_read"] - st["bytes_written"],
        records_reclaimed=st["records_read"] - st["records_written"],
        map_entries=result["map_entries"],
        peak_rss_mb=round(rusage.ru_maxrss * 1024 / MB, 1),
        peak_anon_mb=round(peaks.get("RssAnon", 0) / MB, 1),
        peak_file_mb=round(peaks.get("RssFile", 0) / MB, 1),
        buffer_mb=args.buffer_size_mb * MIB / MB,
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size-mb", type=int, default=32, help="partition size in MiB")
    ap.add_argument("--segment-mb", type=int, default=0, help="segment size in MiB (default: size/8, >= 1)")
    ap.add_argument("--value-sizes", default="100,1000", help="bytes per value, one partition each (comma list)")
    ap.add_argument("--cores", default="c,python", help="cores to run, comma list of c, python")
    ap.add_argument("--batch-records", type=int, default=100, help="records per batch")
    ap.add_argument("--overwrite-pct", type=float, default=50.0, help="share of records overwritten later")
    ap.add_argument("--codec", default="none", choices=sorted(CODEC_NAMES), help="batch compression")
    ap.add_argument("--buffer-size-mb", type=int, default=128, help="log.cleaner.dedupe.buffer.size in MiB")
    ap.add_argument("--repeat", type=int, default=1, help="runs on fresh copies; the best is reported")
    ap.add_argument("--workdir", type=Path, default=None, help="where to generate (default: a temp dir)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json", action="store_true", help="print the runs as JSON")
    args = ap.parse_args()
    cores = [c.strip() for c in args.cores.split(",") if c.strip()]
    if not cores or any(c not in CORES for c in cores):
        ap.error(f"--cores: a comma list of {', '.join(CORES)}")
    value_sizes = [int(v) for v in args.value_sizes.split(",") if v.strip()]

    size = args.size_mb * MIB
    segment_bytes = (args.segment_mb * MIB) if args.segment_mb else max(MIB, size // 8)
    base = Path(tempfile.mkdtemp(prefix="bench-compact-", dir=args.workdir))
    report: list[dict] = []
    try:
        for value_size in value_sizes:
            src = base / f"source-{value_size}" / "bench-0"
            src.mkdir(parents=True)
            t = time.perf_counter()
            n = generate(src, size, segment_bytes, value_size, args.batch_records, args.overwrite_pct,
                         CODEC_NAMES[args.codec], args.seed)
            gen_s = time.perf_counter() - t
            for core in cores:
                startup_s = startup_cpu_s(base / "missing-0", core)
                runs = []
                for i in range(args.repeat):
                    work = base / f"run-{i}" / "bench-0"
                    shutil.copytree(src, work)
                    runs.append(run_once(work, args, segment_bytes, startup_s, core, value_size))
                    shutil.rmtree(work.parent)
                best = min(runs, key=lambda r: r.clean_s)
                report.append({"value_size": value_size, "core": best.core, "records": n,
                               "generate_s": round(gen_s, 1), "startup_cpu_s": round(startup_s, 3),
                               "runs": [asdict(r) for r in runs], "best": asdict(best)})
                if not args.json:
                    _print_runs(best.core, value_size, n, segment_bytes, gen_s, startup_s, runs, args)
            shutil.rmtree(src.parent)
        if args.json:
            print(json.dumps({"settings": vars(args) | {"workdir": str(args.workdir)}, "results": report}, indent=2))
    finally:
        shutil.rmtree(base, ignore_errors=True)


def _print_runs(core: str, value_size: int, n: int, segment_bytes: int, gen_s: float, startup_s: float,
                runs: list[Run], args: argparse.Namespace) -> None:
    best = min(runs, key=lambda r: r.clean_s)
    print(f"{core} core: {best.size_mb:.1f} MB, {n:,} records, {value_size}-byte values, "
          f"{args.overwrite_pct:.0f}% overwrites, codec {args.codec}, segments of {segment_bytes / MB:.1f} MB "
          f"(generated in {gen_s:.1f} s)")
    for r in runs:
        print(f"  clean {r.clean_s:.2f} s ({r.mb_per_s:.0f} MB/s, {r.records_per_s:,.0f} records/s); "
              f"whole command {r.wall_s:.2f} s ({r.mb_per_s_wall:.0f} MB/s); CPU {r.cpu_s:.2f} s "
              f"({r.mb_per_cpu_s:.0f} MB per CPU-second)")
        print(f"  CPU of the cleaning {r.clean_cpu_s:.2f} s ({r.mb_per_clean_cpu_s:.0f} MB per CPU-second; "
              f"start-up and imports took {startup_s:.2f} s)")
        print(f"  reclaimed {r.bytes_reclaimed / MB:.1f} MB, {r.records_reclaimed:,} records; "
              f"{r.map_entries:,} keys mapped")
        print(f"  peak RSS {r.peak_rss_mb:.0f} MB (anonymous {r.peak_anon_mb:.0f} MB, file-backed "
              f"{r.peak_file_mb:.0f} MB) with a {r.buffer_mb:.0f} MB dedupe buffer")
    print(f"  target >= 400 MB/s: {'met' if best.mb_per_s >= 400 else 'NOT met'} ({best.mb_per_s:.0f} MB/s of "
          f"cleaning wall time, {best.mb_per_clean_cpu_s:.0f} MB per CPU-second of cleaning)")


if __name__ == "__main__":
    main()
