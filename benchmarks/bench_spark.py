"""spark-scan throughput and start-up: Spark (local[2]) vs the single-process scanner (issues 7 and 14).

One single-segment log (a corpus of `benchmarks/corpus.py`, sized with --size-mb) is scanned

  * by the single-process scanner (`kafkatool.ops.scan`, what `spark-scan --engine local` runs): each
    query (summary, keys, timeline), plus a batch walk and a record decode (`--levels batch,record`);
  * by Spark on each master (a fresh process each, so each has its own JVM): the same queries as
    `spark-scan` runs them, and at `--levels batch,record` a count over the `kafka-log` data source.

Every Spark process reports its start-up (session start, then a first one-task job whose Python
worker imports kafkatool: the time to a first task), and per query the fastest of --repeat runs with
the first shown apart.  Throughput is in MB/s (10^6 B) and records/s; "per core" divides a local
master's by its threads.  Because the machine may be shared, every query also reports the CPU seconds
of the whole process tree (driver, JVM, Python daemons and workers: /proc utime+stime, children
included) next to the single-process engine's own, and the run prints the load average; the CPU ratio
(local CPU / Spark CPU) is what the per-core ratio would be on idle cores.  Peak RSS: the driver's
Python (ru_maxrss) and the JVM's (VmHWM).  Issue 14's target: local[2] summary >= 0.7x the local
engine's throughput per core after start-up, start-up <= 10 s.

    python benchmarks/bench_spark.py --size-mb 256                # shared machine: keep it small
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
from collections.abc import Callable
from pathlib import Path
from typing import Any

try:
    from benchmarks import corpus
except ImportError:  # run as a script from benchmarks/
    import corpus  # type: ignore[no-redef]

MIB = 1 << 20
QUERIES = ("summary", "keys", "timeline")
_TICK = os.sysconf("SC_CLK_TCK")


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

    if arg == "cli":
        return 0  # what spark-scan plans: 128 MiB, shrunk so every core has a task
    if arg != "auto":
        return parse_size(arg)
    return min(DEFAULT_SPLIT_SIZE, max(MIB, -(-size // 8)))


def tree_cpu(root: int) -> dict[str, float]:
    """CPU seconds of `root` and its live descendants (/proc), by kind: this Python (the driver), the
    JVM(s) (with the launcher the driver reaped) and the Python workers (daemons and the forked
    workers they reaped)."""
    parent: dict[int, int] = {}
    own: dict[int, tuple[int, int, bool]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                name, rest = f.read().split(" (", 1)[1].rsplit(")", 1)
        except (OSError, IndexError):
            continue
        fields = rest.split()
        pid = int(entry)
        parent[pid] = int(fields[1])
        own[pid] = (int(fields[11]) + int(fields[12]), int(fields[13]) + int(fields[14]), name == "java")
    out = {"driver": 0.0, "jvm": 0.0, "workers": 0.0}
    for pid, (mine, reaped, java) in own.items():
        p = pid
        while p > 1 and p != root:
            p = parent.get(p, 0)
        if p != root:
            continue
        if pid == root:
            out["driver"] += mine / _TICK
            out["jvm"] += reaped / _TICK
        else:
            out["jvm" if java else "workers"] += mine / _TICK
            out["workers"] += reaped / _TICK
    return out


def measured(fn: Callable[[], int], repeat: int, cpu: Callable[[], dict[str, float]]) -> dict[str, Any]:
    """Fastest of `repeat` runs of fn (returns records counted): seconds, CPU seconds (by kind), first run."""
    runs = []
    rows = 0
    for _ in range(repeat):
        c, t = cpu(), time.perf_counter()
        rows = fn()
        wall, after = time.perf_counter() - t, cpu()
        runs.append((wall, {k: after[k] - c[k] for k in after}))
    best = min(runs, key=lambda r: r[0])
    return {"seconds": best[0], "cpu": sum(best[1].values()), "cpu_by": best[1], "first": runs[0][0],
            "rows": rows}


def local_engine(path: Path, split: int, levels: list[str], repeat: int) -> dict[str, Any]:
    """The single-process scanner: the queries as `--engine local` runs them, walk and decode levels."""
    from kafkatool.ops.scan import ScanSettings, scan
    from kafkatool.slices.planning import discover, plan_slices
    from kafkatool.slices.reading import decode_records, read_slice

    settings = ScanSettings(split_size=split or ScanSettings.split_size)
    slices = plan_slices(discover([str(path)]), settings.split_size)

    def batch() -> int:
        return sum(1 for s in slices for _ in read_slice(s))

    def record() -> int:  # what level=record does before building columns: every record decoded
        return sum(len(decode_records(b, pos, s.log) or ()) for s in slices for pos, b in read_slice(s))

    def query(name: str) -> Callable[[], int]:
        rows = {"summary": lambda a: a.summary_rows(), "keys": lambda a: a.key_rows(20),
                "timeline": lambda a: a.timeline_rows()}[name]

        def run() -> int:  # as `spark-scan --engine local --query NAME` computes it
            acc = scan([str(path)], settings, queries=(name,))
            rows(acc)
            return sum(p.records for p in acc.partitions.values())

        return run

    fns = {"batch": batch, "record": record, **{q: query(q) for q in QUERIES}}
    return {lv: measured(fns[lv], repeat, lambda: {"driver": time.process_time()}) for lv in levels}


def spark_child(master: str, path: str, split: int, levels: list[str], repeat: int,
                conf: dict[str, str]) -> dict[str, Any]:
    """Runs inside a fresh process: one session on `master`, start-up, then each level `repeat` times."""
    from pyspark.sql import functions as F

    from kafkatool.slices import planning
    from kafkatool.spark import queries as q
    from kafkatool.spark.session import spark_session

    me = os.getpid()
    cpu = lambda: tree_cpu(me)  # noqa: E731
    t0 = time.perf_counter()
    result: dict[str, Any] = {"master": master}
    rdd = hasattr(q, "summary_rows")  # else a checkout from before the RDD queries (a "before" number)
    sql = not rdd or any(level not in QUERIES for level in levels)  # as spark-scan: no SparkSession
    with spark_session(master, conf, **({"sql": sql} if rdd else {})) as session:
        spark = session.spark
        sc = spark if not sql else spark.sparkContext
        result["session"] = time.perf_counter() - t0
        # a first task: the Python daemon forks a worker that imports what every scan task imports
        sc.parallelize([0], 1).map(_import_scan).collect()
        result["startup"] = time.perf_counter() - t0
        result["startup_cpu"] = sum(cpu().values())
        cores = sc.defaultParallelism
        opts = q.SourceOptions(split_size=split) if split else q.SourceOptions(min_partitions=cores)
        if rdd:
            result["tasks"] = len(planning.plan_tasks([path], opts.split_size, min_partitions=opts.min_partitions))
        else:
            result["tasks"] = q.load(spark, [path], opts, "batch").rdd.getNumPartitions()
        for level in levels:
            if level in QUERIES:
                fn = {
                    "summary": lambda: q.summary_rows(spark, [path], opts),
                    "keys": lambda: q.top_keys_rows(spark, [path], opts, 20),
                    "timeline": lambda: q.timeline_rows(spark, [path], opts),
                }[level] if rdd else {
                    "summary": lambda: q.rows(q.summary(spark, [path], opts)),
                    "keys": lambda: q.rows(q.top_keys(spark, [path], opts, 20)),
                    "timeline": lambda: q.rows(q.timeline(spark, [path], opts)),
                }[level]
                res = measured(lambda fn=fn: (fn(), 0)[1], repeat, cpu)
            else:
                size = F.col("size") if level == "batch" else F.length("value")

                def run(level: str = level, size: Any = size) -> int:
                    # A new DataFrame each time: re-running one would reuse its shuffle and skip the scan.
                    df = q.load(spark, [path], opts, level)
                    agg = df.groupBy("topic", "partition").agg(F.count(F.lit(1)).alias("n"), F.sum(size))
                    return sum(r["n"] for r in agg.collect())

                res = measured(run, repeat, cpu)
            result[level] = res
        result["driver_rss_mb"] = _peak_rss("self")  # not ru_maxrss: exec keeps the parent's peak
        result["jvm_rss_mb"] = _jvm_peak_rss(me)
    return result


def _import_scan(x: int) -> int:
    import kafkatool.spark.partials  # noqa: F401 - what a scan task imports

    return x


def _peak_rss(pid: str) -> float | None:
    """A process's peak resident set (VmHWM), MB."""
    try:
        with open(f"/proc/{pid}/status") as f:
            hwm = [ln for ln in f.read().splitlines() if ln.startswith("VmHWM:")]
    except OSError:
        return None
    return int(hwm[0].split()[1]) / 1024 if hwm else None


def _jvm_peak_rss(root: int) -> float | None:
    for entry in os.listdir("/proc"):
        try:
            with open(f"/proc/{entry}/status") as f:
                status = f.read()
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                cmd = f.read()
        except OSError:
            continue
        if b"java" in cmd.split(b"\0")[0] and f"PPid:\t{root}\n" in status:
            return _peak_rss(entry)
    return None


def local_parallelism(master: str) -> int | None:
    from kafkatool.spark.session import local_parallelism as cores

    return cores(master)


def run_master(master: str, path: Path, split: int, levels: list[str], repeat: int,
               conf: list[str]) -> dict[str, Any]:
    cmd = [sys.executable, __file__, "--child", master, "--path", str(path), "--split-bytes", str(split),
           "--levels", ",".join(levels), "--repeat", str(repeat), *(f"--spark-conf={c}" for c in conf)]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(Path(__file__).resolve().parents[1]),
                                                       os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=3600)
    if proc.returncode != 0:
        raise SystemExit(f"{master}: benchmark child failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def report(results: dict[str, Any], levels: list[str], masters: list[str]) -> None:
    size, records = results["bytes"], results["records"]
    split = f"split {results['split'] / MIB:.1f} MiB" if results["split"] else "split as spark-scan plans it"
    print(f"corpus {results['corpus']}: {size / MIB:.1f} MiB, {records:,} records in {results['path']}, "
          f"{split}; load average {results['load_before']} before, "
          f"{results['load_after']} after")
    print(f"{'engine':<16}{'level':<10}{'seconds':>9}{'first':>8}{'cpu s':>8}{'MB/s':>8}{'rec/s':>11}")
    for engine in ["single-process", *masters]:
        res = results.get(engine)
        if not res:
            continue
        for level in levels:
            r = res.get(level)
            if r is None:
                continue
            mbs = size / 1e6 / r["seconds"]
            by = r.get("cpu_by", {})
            split = "  (" + ", ".join(f"{k} {v:.2f}" for k, v in by.items()) + ")" if len(by) > 1 else ""
            print(f"{engine:<16}{level:<10}{r['seconds']:>9.2f}{r['first']:>8.2f}{r['cpu']:>8.2f}{mbs:>8.1f}"
                  f"{records / r['seconds']:>11,.0f}{split}")
        if "startup" in res:
            print(f"{engine:<16}start-up: {res['startup']:.2f} s to a first task ({res['session']:.2f} s session, "
                  f"{res['startup_cpu']:.1f} CPU s); {res['tasks']} tasks; peak RSS driver "
                  f"{res['driver_rss_mb'] or 0:.0f} MB, JVM {res['jvm_rss_mb'] or 0:.0f} MB")
        elif "rss_mb" in res:
            print(f"{engine:<16}peak RSS {res['rss_mb'] or 0:.0f} MB")
    local = results.get("single-process", {})
    for master in masters:
        cores = local_parallelism(master)
        for level in levels:
            mine, got = local.get(level), results[master].get(level)
            if not (mine and got and cores):
                continue
            wall = mine["seconds"] / got["seconds"] / cores
            cpu = mine["cpu"] / got["cpu"] if got["cpu"] else float("inf")
            target = "  (target >= 0.7x)" if level == "summary" else ""
            print(f"{master} {level}: throughput per core vs --engine local {wall:.2f}x wall, "
                  f"{cpu:.2f}x CPU{target}")
    if "local[1]" in masters and "local[2]" in masters:
        for level in levels:
            one, two = results["local[1]"][level]["seconds"], results["local[2]"][level]["seconds"]
            print(f"local[2] speed-up over local[1] at level={level}: {one / two:.2f}x")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size-mb", type=float, default=1024, help="log size in MiB (default 1024)")
    ap.add_argument("--corpus", default="B", help="corpus of benchmarks/corpus.py: A, B or C (default B)")
    ap.add_argument("--masters", default="local[2]", help="comma-separated Spark masters (default local[2])")
    ap.add_argument("--levels", default="summary,keys,timeline",
                    help="comma-separated: summary, keys, timeline (the queries), batch, record (a count "
                         "over that level of the data source)")
    ap.add_argument("--split-size", default="cli",
                    help="bytes per task: cli (default: as spark-scan plans, 128 MiB shrunk to give every core "
                         "a task), auto (128 MiB or 1/8 of the log: 8 tasks at any size) or a size")
    ap.add_argument("--repeat", type=int, default=2, help="runs per measurement (fastest reported)")
    ap.add_argument("--no-local-engine", action="store_true", help="skip the single-process scanner")
    ap.add_argument("--json", action="store_true", help="print the results as JSON")
    ap.add_argument("--spark-conf", action="append", default=[], help="KEY=VALUE for the Spark sessions")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--path", help=argparse.SUPPRESS)
    ap.add_argument("--split-bytes", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    levels = [lv for lv in args.levels.split(",") if lv]
    if args.child:
        conf = dict(c.split("=", 1) for c in args.spark_conf)
        print(json.dumps(spark_child(args.child, args.path, args.split_bytes, levels, args.repeat, conf)))
        return 0
    path = prepare(args.corpus, args.size_mb)
    size = sum(f.stat().st_size for f in path.glob("*.log"))
    spec = json.loads((path / "corpus.json").read_text()) if (path / "corpus.json").exists() else {}
    masters = [m for m in args.masters.split(",") if m]
    results: dict[str, Any] = {"corpus": args.corpus, "path": str(path), "bytes": size,
                               "records": spec.get("records", 0), "split": split_for(size, args.split_size),
                               "load_before": " ".join(f"{x:.1f}" for x in os.getloadavg())}
    if not args.no_local_engine:
        results["single-process"] = local_engine(path, results["split"], levels, args.repeat)
        results["single-process"]["rss_mb"] = _peak_rss("self")
    for master in masters:
        results[master] = run_master(master, path, results["split"], levels, args.repeat, args.spark_conf)
    results["load_after"] = " ".join(f"{x:.1f}" for x in os.getloadavg())
    if args.json:
        print(json.dumps(results, indent=2))
    else:
        report(results, levels, masters)
    return 0


if __name__ == "__main__":
    sys.exit(main())
