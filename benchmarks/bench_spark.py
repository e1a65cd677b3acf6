"""spark-scan throughput: Spark local[1] vs local[2] vs the single-process scanner (issue 7).

One single-segment log (a corpus of `benchmarks/corpus.py`, sized with --size-mb) is scanned

  * by the single-process scanner (`kafkatool.ops.scan`): a batch walk (`read_slice`, no decoding)
    and the full scan (summary + keys + timeline accumulators, every record decoded);
  * by the `kafka-log` data source on Spark local[1] and local[2] (each in a fresh process, so each
    has its own JVM), at level=batch (one row per batch, nothing decompressed) and level=record,
    aggregated per partition (count, bytes) so Spark reads every row;
  * by the summary query on both engines (`--engine local` vs Spark), whose per-core throughput ratio
    is issue 14's target (>= 0.7x on 1 GiB).

Spark numbers exclude session start-up (reported apart); each query runs --repeat times and the
fastest is reported, with the first (cold: Python workers forked, modules imported) shown too.
Tasks: the segment is cut into --split-size slices (auto: 128 MiB, or 1/8 of a smaller log, so both
masters get the same 8 tasks at any size).  The target is local[2] >= 1.6x local[1] at batch level
on 1 GiB.

    python benchmarks/bench_spark.py --size-mb 64                 # shared machine: keep it small
    python benchmarks/bench_spark.py --size-mb 1024 --json        # the full-size numbers
    python benchmarks/bench_spark.py --size-mb 64 --masters 'local[1],local[2],spark://h:7077'
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

try:
    from benchmarks import corpus
except ImportError:  # run as a script from benchmarks/
    import corpus  # type: ignore[no-redef]

MIB = 1 << 20


def prepare(name: str, size_mb: float) -> Path:
    """The corpus directory (a `<name>-<records>` dir: a partition dir to the scanner)."""
    spec = corpus.CORPORA[name]
    scale = size_mb * MIB / spec.nominal_bytes
    if scale > 4:
        raise SystemExit(f"--size-mb: corpus {name} goes up to {4 * spec.nominal_bytes // MIB} MiB")
    info = corpus.generate(spec, scale)
    return info.log.parent


def split_for(size: int, arg: str) -> int:
    from kafkatool.sizes import parse_size
    from kafkatool.slices.planning import DEFAULT_SPLIT_SIZE

    if arg != "auto":
        return parse_size(arg)
    return min(DEFAULT_SPLIT_SIZE, max(MIB, -(-size // 8)))


def local_engine(path: Path, split: int, repeat: int) -> dict[str, Any]:
    """The single-process scanner, fastest of `repeat` runs: batch walk, record decode, full scan."""
    from kafkatool.ops.scan import ScanSettings, scan
    from kafkatool.slices.planning import discover, plan_slices
    from kafkatool.slices.reading import decode_records, read_slice

    def walk() -> int:
        return sum(1 for s in slices for _ in read_slice(s))

    def decode() -> int:  # what level=record does before building columns: every record decoded
        n = 0
        for s in slices:
            for pos, b in read_slice(s):
                recs = decode_records(b, pos, s.log)
                n += len(recs or ())
        return n

    def full() -> int:
        return sum(r["records"] for r in scan([str(path)], ScanSettings(split_size=split)).summary_rows())

    def summary() -> int:  # `spark-scan --engine local` (the summary query alone)
        settings = ScanSettings(split_size=split)
        return sum(r["records"] for r in scan([str(path)], settings, queries=("summary",)).summary_rows())

    slices = plan_slices(discover([str(path)]), split)
    out: dict[str, Any] = {}
    for level, fn in (("batch", walk), ("record", decode), ("summary", summary), ("scan", full)):
        times = []
        rows = 0
        for _ in range(repeat):
            t = time.perf_counter()
            rows = fn()
            times.append(time.perf_counter() - t)
        out[level] = {"seconds": min(times), "rows": rows}
    return out


def spark_child(master: str, path: str, split: int, levels: list[str], repeat: int) -> dict[str, Any]:
    """Runs inside a fresh process: one session on `master`, each level's query `repeat` times."""
    from pyspark.sql import functions as F

    from kafkatool.spark import queries as q
    from kafkatool.spark.session import spark_session

    t = time.perf_counter()
    result: dict[str, Any] = {"master": master}
    with spark_session(master, {"spark.sql.shuffle.partitions": "2"}) as session:
        spark = session.spark
        result["startup"] = time.perf_counter() - t
        opts = q.SourceOptions(split_size=split)
        for level in levels:
            size = F.col("size") if level == "batch" else F.length("value")
            times = []
            rows = tasks = 0
            for _ in range(repeat):
                # A new DataFrame each time: re-running one would reuse its shuffle and skip the scan.
                t = time.perf_counter()
                if level == "summary":  # the spark-scan query: records counted, like the local engine's
                    rows = sum(r["records"] for r in q.rows(q.summary(spark, [path], opts)))
                    times.append(time.perf_counter() - t)
                    continue
                df = q.load(spark, [path], opts, level)
                agg = df.groupBy("topic", "partition").agg(F.count(F.lit(1)).alias("rows"), F.sum(size).alias("b"))
                rows = sum(r["rows"] for r in agg.collect())
                times.append(time.perf_counter() - t)
                tasks = df.rdd.getNumPartitions()
            if level == "summary":
                tasks = q.load(spark, [path], opts, "batch").rdd.getNumPartitions()
            result[level] = {"seconds": min(times), "first": times[0], "rows": rows, "tasks": tasks}
    return result


def local_parallelism(master: str) -> int | None:
    from kafkatool.spark.session import local_parallelism as cores

    return cores(master)


def run_master(master: str, path: Path, split: int, levels: list[str], repeat: int) -> dict[str, Any]:
    cmd = [sys.executable, __file__, "--child", master, "--path", str(path), "--split-bytes", str(split),
           "--levels", ",".join(levels), "--repeat", str(repeat)]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(Path(__file__).resolve().parents[1]),
                                                       os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=3600)
    if proc.returncode != 0:
        raise SystemExit(f"{master}: benchmark child failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size-mb", type=float, default=1024, help="log size in MiB (default 1024)")
    ap.add_argument("--corpus", default="B", help="corpus of benchmarks/corpus.py: A, B or C (default B)")
    ap.add_argument("--masters", default="local[1],local[2]", help="comma-separated Spark masters")
    ap.add_argument("--levels", default="batch,record,summary",
                    help="comma-separated: batch, record (a count over that level), summary (the query)")
    ap.add_argument("--split-size", default="auto", help="bytes per task (default auto)")
    ap.add_argument("--repeat", type=int, default=2, help="runs per measurement (fastest reported)")
    ap.add_argument("--no-local-engine", action="store_true", help="skip the single-process scanner")
    ap.add_argument("--json", action="store_true", help="print the results as JSON")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--path", help=argparse.SUPPRESS)
    ap.add_argument("--split-bytes", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    levels = [lv for lv in args.levels.split(",") if lv]
    if args.child:
        print(json.dumps(spark_child(args.child, args.path, args.split_bytes, levels, args.repeat)))
        return 0
    path = prepare(args.corpus, args.size_mb)
    size = sum(f.stat().st_size for f in path.glob("*.log"))
    split = split_for(size, args.split_size)
    results: dict[str, Any] = {"corpus": args.corpus, "path": str(path), "bytes": size, "split": split}
    if not args.no_local_engine:
        results["single-process"] = local_engine(path, split, args.repeat)
    for master in [m for m in args.masters.split(",") if m]:
        results[master] = run_master(master, path, split, levels, args.repeat)
    if args.json:
        print(json.dumps(results, indent=2))
        return 0
    print(f"corpus {args.corpus}: {size / MIB:.1f} MiB in {path}, split {split / MIB:.1f} MiB")
    print(f"{'engine':<16}{'level':<8}{'seconds':>9}{'first':>9}{'MB/s':>9}{'rows':>11}{'tasks':>7}")
    for engine, res in results.items():
        if not isinstance(res, dict):
            continue
        for level in dict.fromkeys([*levels, "summary", "scan"]):
            r = res.get(level)
            if r is None:
                continue
            mbs = size / 1e6 / r["seconds"] if r["seconds"] else float("inf")
            first = f"{r['first']:.2f}" if "first" in r else "-"
            print(f"{engine:<16}{level:<8}{r['seconds']:>9.2f}{first:>9}{mbs:>9.1f}{r['rows']:>11}"
                  f"{r.get('tasks', '-'):>7}")
        if "startup" in res:
            print(f"{engine:<16}{'startup':<8}{res['startup']:>9.2f}")
    masters = [m for m in args.masters.split(",") if m]
    local = results.get("single-process", {}).get("summary")
    for master in masters:
        cores = local_parallelism(master)
        got = results[master].get("summary")
        if local and got and cores:
            per_core = local["seconds"] / got["seconds"] / cores
            print(f"{master} summary throughput per core vs --engine local: {per_core:.2f}x  (target >= 0.7x)")
    if "local[1]" in masters and "local[2]" in masters:
        for level in levels:
            one, two = results["local[1]"][level]["seconds"], results["local[2]"][level]["seconds"]
            print(f"local[2] speed-up over local[1] at level={level}: {one / two:.2f}x"
                  + ("  (target >= 1.6x at batch level on 1 GiB)" if level == "batch" else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
