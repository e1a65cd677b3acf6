"""Where a spark-scan's time goes, phase by phase, on one input (issue 14).

One fresh process, as `spark-scan` runs a query (a SparkContext only: the three queries are RDD jobs):

  start-up   imports on the driver; the JVM launch (spark-submit's launcher, then the driver JVM);
             the SparkContext; a first one-task job (Spark starts its Python daemon, which forks a
             worker); a two-task job whose workers import what a scan task imports (kafkatool,
             pyarrow); with --sql also the SparkSession and a first SQL query (what `--query sql`,
             `--approx` and `--output` pay on top)
  per query  planning on the driver (listing, index checks, packing), then each task's own CPU split
             into scanning (the single-process accumulator) and reducing that to its part, the
             part's pickled size, the job's wall time (tasks + scheduling + transfer) and the
             driver's merge; CPU seconds of the whole process tree (driver, JVM, Python workers)

    python benchmarks/profile_spark.py PATH [--master 'local[2]'] [--repeat 2] [--queries summary,keys]
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import pickle
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_spark import tree_cpu  # noqa: E402 - a sibling script


def _timed_task(job: Any, groups: Any) -> Any:
    """`partials.map_task`, timed: (part, scan CPU s, reduce CPU s, pickled bytes, pickle CPU s)."""
    import time

    from kafkatool.spark import partials

    t0 = time.process_time()
    acc = partials.scan_task(job, groups)
    t1 = time.process_time()
    part = partials.part_of(job, acc)
    t2 = time.process_time()
    size = len(pickle.dumps(part, protocol=pickle.HIGHEST_PROTOCOL))
    yield part, t1 - t0, t2 - t1, size, time.process_time() - t2


def _import_scan(x: int) -> int:
    import kafkatool.spark.partials  # noqa: F401 - what a scan task imports

    return x


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("path")
    ap.add_argument("--master", default="local[2]")
    ap.add_argument("--queries", default="summary,keys,timeline")
    ap.add_argument("--split-size", default="128MiB")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--sql", action="store_true", help="also time the SparkSession and a first SQL query")
    ap.add_argument("--spark-conf", action="append", default=[], help="KEY=VALUE")
    args = ap.parse_args(argv)

    me = os.getpid()
    t0 = time.perf_counter()
    from pyspark import SparkConf, SparkContext

    from kafkatool.sizes import parse_size
    from kafkatool.slices.planning import plan_tasks
    from kafkatool.spark import partials
    from kafkatool.spark import session as s
    from kafkatool.spark.queries import SourceOptions, scan_settings

    out: dict[str, Any] = {"path": args.path, "master": args.master, "load": os.getloadavg()}
    phases: dict[str, float] = {"imports": time.perf_counter() - t0}
    conf = SparkConf(loadDefaults=True)
    extra = dict(c.split("=", 1) for c in args.spark_conf)
    for k, v in s.session_conf(args.master, extra, sql=args.sql).items():
        conf.set(k, v)
    guard = s.JvmGuard()
    with open(os.devnull, "wb") as log:
        t = time.perf_counter()
        gateway = s._launch_gateway(conf, log, guard)  # noqa: SLF001 - the launch alone, timed
        phases["jvm_launch"] = time.perf_counter() - t
        t = time.perf_counter()
        sc = SparkContext(conf=conf, gateway=gateway)
        phases["spark_context"] = time.perf_counter() - t
        t = time.perf_counter()
        sc.parallelize([0], 1).map(lambda x: x).collect()
        phases["first_task"] = time.perf_counter() - t
        t = time.perf_counter()
        sc.parallelize([0, 1], 2).map(_import_scan).collect()
        phases["worker_imports"] = time.perf_counter() - t
        phases["to_first_scan_task"] = time.perf_counter() - t0
        if args.sql:
            from pyspark.sql import SparkSession

            t = time.perf_counter()
            spark = SparkSession.builder.config(conf=conf).getOrCreate()
            phases["spark_session"] = time.perf_counter() - t
            t = time.perf_counter()
            spark.range(1000).selectExpr("id % 7 AS k").groupBy("k").count().collect()
            phases["first_sql_query"] = time.perf_counter() - t
        out["startup"] = {k: round(v, 2) for k, v in phases.items()}
        out["startup_cpu"] = {k: round(v, 2) for k, v in tree_cpu(me).items()}
        opts = SourceOptions(split_size=parse_size(args.split_size), min_partitions=sc.defaultParallelism)
        settings = scan_settings(opts)
        for query in [q for q in args.queries.split(",") if q]:
            runs = []
            for _ in range(args.repeat):
                c0 = tree_cpu(me)
                t = time.perf_counter()
                groups = plan_tasks([args.path], settings.split_size, settings.flt, settings.use_index,
                                    opts.min_partitions)
                job = partials.Job(query, settings, partials.split_units(groups, query))
                planned = time.perf_counter()
                got = sc.parallelize(groups, len(groups)).mapPartitions(functools.partial(_timed_task, job)).collect()
                collected = time.perf_counter()
                merged = job.empty()
                for part, *_ in got:
                    merged = merged.merge(part)
                rows = merged.finish().rows()
                done = time.perf_counter()
                c1 = tree_cpu(me)
                runs.append({
                    "plan": round(planned - t, 2), "job": round(collected - planned, 2),
                    "merge": round(done - collected, 2), "total": round(done - t, 2), "rows": len(rows),
                    "tasks": len(groups), "split_units": len(job.split),
                    "task_scan_cpu": round(sum(g[1] for g in got), 2),
                    "task_reduce_cpu": round(sum(g[2] for g in got), 2),
                    "task_pickle_cpu": round(sum(g[4] for g in got), 2),
                    "parts_mb": round(sum(g[3] for g in got) / 1e6, 1),
                    "cpu": {k: round(c1[k] - c0[k], 2) for k in c1},
                })
            out[query] = runs
        sc.stop()
    guard.mark_clean()
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
