"""Where a spark-scan's time goes, phase by phase, on one input (issue 14).

Times, in one fresh process: session start (JVM + SparkContext), each query's planning on the
driver (`load` and building the DataFrame: the data source's Python planning runs happen here and at
the first action), its first collect (Python workers forked, modules imported) and a second,
identical query (warm workers), and counts the Python planner processes Spark started (each is a
fresh `python -m pyspark.sql.worker.<step>`, seen through a sitecustomize hook).

    python benchmarks/profile_spark.py PATH [--master 'local[2]'] [--repeat 2] [--query summary]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

_HOOK = """
import os, sys, time
_log = os.environ.get("KAFKATOOL_PROFILE_PY")
if _log and len(sys.argv) > 0:
    with open(_log, "a") as f:
        f.write(f"{time.time():.3f} {os.getpid()} {sys.orig_argv[2] if len(sys.orig_argv) > 2 else sys.orig_argv}\\n")
"""


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("path")
    ap.add_argument("--master", default="local[2]")
    ap.add_argument("--query", default="summary", help="summary, keys, timeline or count (record level)")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--warm-jvm", action="store_true", help="first time a query without Python (JVM warm-up)")
    args = ap.parse_args(argv)

    hook_dir = tempfile.mkdtemp(prefix="kafkatool-profile-")
    Path(hook_dir, "sitecustomize.py").write_text(_HOOK)
    pylog = Path(hook_dir, "python-processes.log")
    os.environ["KAFKATOOL_PROFILE_PY"] = str(pylog)
    os.environ["PYTHONPATH"] = os.pathsep.join([hook_dir, os.environ.get("PYTHONPATH", "")])

    from pyspark.sql import functions as F

    from kafkatool.spark import queries as q
    from kafkatool.spark.session import spark_session

    out: dict[str, object] = {"path": args.path, "master": args.master, "query": args.query}
    t0 = time.perf_counter()
    with spark_session(args.master) as session:
        spark = session.spark
        out["startup"] = round(time.perf_counter() - t0, 2)
        if args.warm_jvm:  # a query with no Python in it: the JVM's own first-query cost
            t = time.perf_counter()
            spark.range(1000).groupBy((F.col("id") % 7).alias("k")).agg(F.count(F.lit(1))).collect()
            out["jvm_first_query"] = round(time.perf_counter() - t, 2)
        opts = q.SourceOptions(min_partitions=spark.sparkContext.defaultParallelism)
        runs = []
        for _ in range(args.repeat):
            pylog.write_text("")
            t = time.perf_counter()
            wall = time.time()
            if args.query == "summary":
                df = q.summary(spark, [args.path], opts)
            elif args.query == "keys":
                df = q.top_keys(spark, [args.path], opts)
            elif args.query == "timeline":
                df = q.timeline(spark, [args.path], opts)
            else:
                df = q.load(spark, [args.path], opts).groupBy("partition").agg(F.count(F.lit(1)))
            planned = time.perf_counter()
            planners = len(pylog.read_text().splitlines())
            n = len(q.rows(df))
            done = time.perf_counter()
            procs = pylog.read_text().splitlines()
            runs.append({"plan": round(planned - t, 2), "collect": round(done - planned, 2),
                         "total": round(done - t, 2), "rows": n,
                         "python_processes_at_plan": planners, "python_processes": len(procs),
                         "processes": [f"{float(p.split()[0]) - wall:.1f}s {p.split()[2]}" for p in procs]})
        out["runs"] = runs
    print(json.dumps(out, indent=None if not args.json else 2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
