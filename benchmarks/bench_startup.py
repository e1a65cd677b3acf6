#!/usr/bin/env python3
"""Start-up cost of kafkatool commands next to the interpreter's own (issue 14: start-up <= 0.1 s).

Every case is a whole process, stdout to /dev/null, timed wall-clock from fork to exit; the cases run
round-robin (one run of each, then again) so a burst of load on a shared machine hits them alike, and
the table shows the best and the median of --repeat runs.  The floor rows are the interpreter alone:
`python -c pass` (with site-packages' .pth files, what every command pays) and `python -S -c pass`.

    python benchmarks/bench_startup.py                 # best of 15, both launchers
    python benchmarks/bench_startup.py --repeat 30 --launchers module
    python benchmarks/bench_startup.py --trees before=/tmp/base,after=.   # two source trees, one run
    python benchmarks/bench_startup.py --importtime dump-empty   # where one command's imports go

Bytecode: by default the runs use a bytecode cache (PYTHONPYCACHEPREFIX in a temporary directory,
filled by one warm-up run of each case), as an installed kafkatool has its .pyc files; `--bytecode none`
sets PYTHONDONTWRITEBYTECODE=1 instead, so every kafkatool module is compiled from source on each run
(this sandbox's environment sets that variable, which is why its commands start slower than an
install's).  `cpu s` is the child's user+system time, steadier than wall time on a loaded machine.

Launchers: `script` is the console script installed beside the interpreter (bin/kafkatool, not a pyenv
shim, whose own cost is a bash and a pyenv process), `module` is `python -m kafkatool`.  Both import
kafkatool the way the environment says (set PYTHONPATH to measure a work tree; the runs happen in a
temporary directory, so the current one does not count).
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT.parent / "shared" / "fixtures" / "kafka-logs" / "kafka-2.1.1"


def cases(data: Path) -> dict[str, list[str]]:
    """Command name -> kafkatool arguments (the fixtures give the small real inputs)."""
    empty = data / "empty-0" / "00000000000000000000.log"
    empty.parent.mkdir(parents=True, exist_ok=True)
    empty.touch()
    log = FIXTURES / "fmt-v2-0" / "00000000000000000000.log"
    return {
        "version": ["--version"],
        "help": ["--help"],
        "dump-empty": ["dump-log", "--files", str(empty)],
        "dump-print": ["dump-log", "--files", str(log), "--print-data-log"],
        "index-verify": ["index", "verify", str(FIXTURES / "fmt-v2-0")],
        "offsets-log-dir": ["offsets", "--log-dir", str(FIXTURES), "--all-groups"],
    }


def launchers(which: list[str]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    if "script" in which:
        script = Path(sys.executable).parent / "kafkatool"
        found = str(script) if script.is_file() else shutil.which("kafkatool")
        if found:
            out["script"] = [found]
        else:
            print("no kafkatool console script found: skipping `script`", file=sys.stderr)
    if "module" in which:
        out["module"] = [sys.executable, "-m", "kafkatool"]
    return out


def once(argv: list[str], env: dict[str, str], cwd: str) -> tuple[float, float, int]:
    """Wall seconds, CPU seconds (user+system) and exit code of one run (in `cwd`: `python -m` puts the
    working directory first on sys.path, which must not choose the kafkatool measured)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    p = subprocess.run(
        argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL, env=env, cwd=cwd
    )
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, p.returncode


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=15, help="runs of each case (best and median reported)")
    ap.add_argument("--launchers", default="script,module", help="script, module or both")
    ap.add_argument("--cases", default="", help="comma-separated subset of the case names")
    ap.add_argument(
        "--bytecode",
        choices=("cached", "none"),
        default="cached",
        help="cached: .pyc files as an install has them (default); none: compile every run",
    )
    ap.add_argument(
        "--trees",
        default="",
        metavar="NAME=DIR,...",
        help="kafkatool source trees to compare in one run, each put first on PYTHONPATH "
        "(e.g. before=/tmp/base,after=.); default: the environment's kafkatool",
    )
    ap.add_argument(
        "--importtime", metavar="CASE", help="print the -X importtime lines of CASE over 1 ms, and stop"
    )
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="kafkatool-startup-") as tmp:
        table = cases(Path(tmp))
        env = dict(os.environ)
        if args.bytecode == "cached":
            env.pop("PYTHONDONTWRITEBYTECODE", None)
            env["PYTHONPYCACHEPREFIX"] = str(Path(tmp) / "pycache")
        else:
            env["PYTHONDONTWRITEBYTECODE"] = "1"
        trees = {"": env}
        if args.trees:
            trees = {}
            for item in args.trees.split(","):
                name, _, path = item.partition("=")
                pythonpath = os.pathsep.join(
                    p for p in (str(Path(path).resolve()), env.get("PYTHONPATH")) if p
                )
                trees[f"{name} "] = {**env, "PYTHONPATH": pythonpath}
        if args.importtime:
            env = next(iter(trees.values()))
            argv = [sys.executable, "-X", "importtime", "-m", "kafkatool", *table[args.importtime]]
            subprocess.run(
                argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, cwd=tmp
            )  # warm-up
            p = subprocess.run(
                argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env, cwd=tmp
            )
            for line in p.stderr.splitlines():
                parts = line.split("|")
                if len(parts) == 3 and parts[1].strip().isdigit() and int(parts[1]) >= 1000:  # cumulative
                    print(line)
            return 0
        wanted = [c for c in args.cases.split(",") if c] or list(table)
        runs: dict[str, tuple[list[str], dict[str, str]]] = {
            "python -c pass": ([sys.executable, "-c", "pass"], env),
            "python -S -c pass": ([sys.executable, "-S", "-c", "pass"], env),
        }
        for lname, prefix in launchers(args.launchers.split(",")).items():
            for name in wanted:
                for tree, tree_env in trees.items():
                    runs[f"{tree}{lname}: {name}"] = ([*prefix, *table[name]], tree_env)
        times: dict[str, list[float]] = {k: [] for k in runs}
        cpus: dict[str, list[float]] = {k: [] for k in runs}
        codes: dict[str, set[int]] = {k: set() for k in runs}
        for cmd, run_env in runs.values():  # warm-up: page cache, and the bytecode cache when there is one
            once(cmd, run_env, tmp)
        load = os.getloadavg()[0]
        for _ in range(args.repeat):
            for key, (cmd, run_env) in runs.items():
                wall, cpu, rc = once(cmd, run_env, tmp)
                times[key].append(wall)
                cpus[key].append(cpu)
                codes[key].add(rc)
    end_load = os.getloadavg()[0]
    print(f"best of {args.repeat}, bytecode {args.bytecode}, load average {load:.2f} -> {end_load:.2f}")
    print(f"{'case':<40} {'best s':>7} {'median s':>9} {'cpu s':>7}  exit")
    for key, ts in times.items():
        print(
            f"{key:<40} {min(ts):7.3f} {statistics.median(ts):9.3f} {min(cpus[key]):7.3f}  "
            f"{','.join(map(str, sorted(codes[key])))}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
