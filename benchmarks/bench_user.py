"""dump-log (and the other text producers) timed exactly as a user runs them, side by side with Kafka.

What is run is the `kafkatool` console script installed in this environment (the one `pip install`
put beside this interpreter, else the first on PATH), as a subprocess, with this process's own
environment passed through untouched: no PYTHONPATH, no allocator variables, nothing a user would not
have.  Only the pure-Python column sets `KAFKATOOL_PURE_PYTHON=1`, the documented switch.  Each command
runs twice per mode: stdout to /dev/null, and stdout into a pipe read by `wc -c` (what `| grep`, `| less`
and `| wc` cost).  Per run, from wait4 of the command alone: wall, user and system CPU, minor page
faults; the kernel's share of the time and faults per GiB of text printed are derived.  With
`--kafka-home` (or $KAFKA_HOME) Kafka's own kafka-dump-log.sh runs in the same run on the same files;
without it Kafka 3.3.1's stored times (benchmarks/corpus.py) stand in, marked "stored".

Rows: start-up (dump-log of an empty segment); dump-log shallow / --deep-iteration /
--deep-iteration --print-data-log on corpora A, B, C (benchmarks/corpus.py) to /dev/null and through
a pipe; `--flat`: deep+print on C at a quarter of `--scale` and at `--scale`, whose faults per GiB
must stay flat (within 1.5x + 2,000 faults).

    python benchmarks/bench_user.py --scale 0.05              # a quick look
    python benchmarks/bench_user.py --repeat 3 --json run.json  # the table in benchmarks/README.md
    KAFKA_HOME=/opt/kafka python benchmarks/bench_user.py --repeat 3
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # the benchmarks package (the measured kafkatool is the installed one)

from benchmarks import corpus  # noqa: E402
from benchmarks.bench_dumplog import compile_checkout, git_state, warm  # noqa: E402

MODES = {
    "shallow": [],
    "deep": ["--deep-iteration"],
    "print": ["--deep-iteration", "--print-data-log"],
}
KAFKA_MODE = {"shallow": "shallow", "deep": "deep", "print": "print"}  # corpus.py's stored times
TARGET_RATIO = 0.15
TARGET_STARTUP_S = 0.1
TARGET_KERNEL_SHARE = 0.10
GIB = 1 << 30

# Spawns the command (stdout to /dev/null or into `wc -c`), waits for it alone with wait4 and
# reports its rusage and wall time, then what wc counted, as one JSON line on fd 3.
_LAUNCHER = r"""
import json, os, sys, time
out, pipe, argv = 3, sys.argv[1] == "pipe", sys.argv[2:]
actions, wc = [], None
if pipe:
    r, w = os.pipe()
    rr, ww = os.pipe()
    wc = os.posix_spawnp("wc", ["wc", "-c"], os.environ,
                         file_actions=[(os.POSIX_SPAWN_DUP2, r, 0), (os.POSIX_SPAWN_DUP2, ww, 1),
                                       (os.POSIX_SPAWN_CLOSE, w)])
    os.close(r); os.close(ww)
    actions = [(os.POSIX_SPAWN_DUP2, w, 1)]
t0 = time.perf_counter()
pid = os.posix_spawnp(argv[0], argv, os.environ, file_actions=actions)
if pipe:
    os.close(w)
_, status, ru = os.wait4(pid, 0)
t1 = time.perf_counter()
counted = -1
if pipe:
    counted = int(os.read(rr, 64).split()[0] or -1)
    os.waitpid(wc, 0)
os.write(out, (json.dumps({"wall": t1 - t0, "user": ru.ru_utime, "sys": ru.ru_stime, "minflt": ru.ru_minflt,
                          "majflt": ru.ru_majflt, "rss_kb": ru.ru_maxrss,
                          "code": os.waitstatus_to_exitcode(status), "bytes": counted}) + "\n").encode())
"""


@dataclass
class Run:
    what: str
    core: str  # "C", "pure", "Kafka"
    sink: str  # "null" or "pipe"
    wall: float
    user: float
    sys: float
    minflt: int
    rss_mb: float
    code: int
    out_bytes: int  # bytes of text printed (counted through the pipe), -1 unknown

    @property
    def kernel_share(self) -> float:
        cpu = self.user + self.sys
        return self.sys / cpu if cpu else 0.0

    def faults_per_gib(self, out_bytes: int) -> float | None:
        return self.minflt / (out_bytes / GIB) if out_bytes > 0 else None


def console_script() -> str:
    """The installed kafkatool entry point: beside this interpreter (a venv), else on PATH."""
    beside = Path(sys.executable).parent / "kafkatool"
    found = str(beside) if beside.is_file() else shutil.which("kafkatool")
    if not found:
        sys.exit("bench_user: no installed kafkatool (run README's first command, or pip install .)")
    return found


def launch(argv: list[str], sink: str, env: dict[str, str], timeout: float) -> dict:
    rfd, wfd = os.pipe()
    try:
        with open(os.devnull, "rb") as devin, open(os.devnull, "wb") as devnull:
            code = _LAUNCHER.replace("out, pipe, argv = 3", f"out, pipe, argv = {wfd}")
            p = subprocess.Popen(
                [sys.executable, "-S", "-c", code, sink, *argv],
                stdin=devin,
                stdout=devnull,
                stderr=subprocess.PIPE,
                pass_fds=(wfd,),
                env=env,
            )
            os.close(wfd)
            wfd = -1
            with os.fdopen(rfd, "rb") as report:
                rfd = -1
                _, err = p.communicate(timeout=timeout)
                line = report.readline()
    finally:
        for fd in (rfd, wfd):
            if fd >= 0:
                os.close(fd)
    if not line:
        raise RuntimeError(f"launcher failed: {err.decode(errors='replace')[-500:]}")
    return json.loads(line)


class Bench:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.script = console_script()
        self.user_env = dict(os.environ)  # exactly what the user's shell would pass
        self.user_env.pop("KAFKATOOL_PURE_PYTHON", None)
        self.envs = {"C": self.user_env, "pure": {**self.user_env, "KAFKATOOL_PURE_PYTHON": "1"}}
        version = subprocess.run(
            [self.script, "--version"], capture_output=True, text=True, env=self.user_env
        )
        self.version = version.stdout.strip()
        self.cores = [c for c in ("C", "pure") if c != "C" or "core: C" in self.version]
        if args.cores:
            self.cores = [c for c in self.cores if c in args.cores.split(",")]
        self.kafka = Path(args.kafka_home) / "bin" / "kafka-dump-log.sh" if args.kafka_home else None
        self.runs: list[Run] = []

    def run(self, what: str, core: str, argv: list[str], sink: str) -> Run:
        env = self.envs.get(core, self.user_env)
        best: Run | None = None
        for _ in range(self.args.repeat):
            r = launch(argv, sink, env, self.args.timeout)
            run = Run(
                what,
                core,
                sink,
                r["wall"],
                r["user"],
                r["sys"],
                r["minflt"],
                r["rss_kb"] / 1024,
                r["code"],
                r["bytes"],
            )
            if best is None or (run.code == 0 and run.wall < best.wall):
                best = run
        assert best is not None
        self.runs.append(best)
        print(
            f"  {what:30} {core:5} {sink:4} {best.wall:8.3f} s  user {best.user:7.3f}  sys {best.sys:6.3f}  "
            f"minflt {best.minflt:>9,}  exit {best.code}",
            file=sys.stderr,
        )
        return best


def dump_argv(b: Bench, core: str, log: Path, mode: str) -> list[str]:
    if core == "Kafka":
        assert b.kafka is not None
        return [str(b.kafka), "--files", str(log), *MODES[mode]]
    return [b.script, "dump-log", "--files", str(log), *MODES[mode]]


def fmt(x: float | None, unit: str = "", digits: int = 2) -> str:
    return "-" if x is None else f"{x:,.{digits}f}{unit}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument(
        "--scale", type=float, default=1.0, help="fraction of the corpora's full size (default 1)"
    )
    ap.add_argument("--corpora", default="ABC", help="which corpora (default ABC)")
    ap.add_argument("--modes", default="shallow,deep,print")
    ap.add_argument("--sinks", default="null,pipe")
    ap.add_argument("--cores", default=None, help="C,pure (default: every core that is built)")
    ap.add_argument("--repeat", type=int, default=1, help="runs per command; the fastest is kept")
    ap.add_argument(
        "--flat", action="store_true", help="also: deep+print on C at scale/4 and scale, faults/GiB"
    )
    ap.add_argument("--kafka-home", default=os.environ.get("KAFKA_HOME") or None)
    ap.add_argument("--data-dir", type=Path, default=corpus.DATA_DIR)
    ap.add_argument("--timeout", type=float, default=3600)
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args(argv)
    modes = [m for m in args.modes.split(",") if m]
    sinks = [s for s in args.sinks.split(",") if s]
    bytecode = compile_checkout()
    b = Bench(args)
    t0 = time.perf_counter()
    load0 = os.getloadavg()

    empty = args.data_dir / "user-empty" / "00000000000000000000.log"
    empty.parent.mkdir(parents=True, exist_ok=True)
    empty.touch()
    startup = {
        c: b.run("start-up", c, [b.script, "dump-log", "--files", str(empty)], "null") for c in b.cores
    }

    lines = []
    text_bytes: dict[tuple[str, str], int] = {}
    for name in args.corpora:
        spec = corpus.CORPORA[name]
        info = corpus.generate(spec, args.scale, args.data_dir)
        warm(info.log)
        scale_k = info.records / spec.records  # Kafka's stored seconds scale with the corpus
        for mode in modes:
            kafka: dict[str, Run | None] = {}
            if b.kafka:
                for sink in sinks:
                    kafka[sink] = b.run(
                        f"{name} {mode}", "Kafka", dump_argv(b, "Kafka", info.log, mode), sink
                    )
            for core in b.cores:
                for sink in sinks:
                    r = b.run(f"{name} {mode}", core, dump_argv(b, core, info.log, mode), sink)
                    if r.out_bytes >= 0:
                        text_bytes[(name, mode)] = r.out_bytes
                    k = kafka.get(sink)
                    kafka_s = k.wall if k else spec.kafka_seconds[KAFKA_MODE[mode]] * scale_k
                    kafka_src = "measured" if k else "stored"
                    lines.append((name, mode, core, sink, r, kafka_s, kafka_src))
    flat = []
    if args.flat and "C" in b.cores:
        spec = corpus.CORPORA["C"]
        for scale in (args.scale / 4, args.scale):
            info = corpus.generate(spec, scale, args.data_dir)
            warm(info.log)
            r = b.run(f"C print scale {scale:g}", "C", dump_argv(b, "C", info.log, "print"), "pipe")
            flat.append((scale, info.bytes, r))

    total = time.perf_counter() - t0
    print(
        f"kafkatool as a user runs it: {b.script} ({b.version}); scale {args.scale:g}, repeat {args.repeat} "
        f"(fastest); commit {git_state()}; {os.cpu_count()} cores; load {load0[0]:.2f} -> "
        f"{os.getloadavg()[0]:.2f}; {total:.0f} s; Kafka: "
        f"{'measured (' + str(b.kafka) + ')' if b.kafka else 'stored 3.3.1 times'}"
    )
    print(bytecode)
    print()
    print("| start-up | core | wall | target |")
    print("|---|---|---|---|")
    for c, r in startup.items():
        print(
            f"| dump-log, empty segment | {c} | {r.wall:.3f} s | <= {TARGET_STARTUP_S} s "
            f"{'yes' if r.wall <= TARGET_STARTUP_S else 'NO'} |"
        )
    print()
    print(
        "| corpus | mode | core | output | wall | user | sys | kernel share | minor faults | faults/GiB out "
        "| Kafka | ratio | <= 0.15? |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for name, mode, core, sink, r, kafka_s, src in lines:
        out = text_bytes.get((name, mode), -1)
        fpg = r.faults_per_gib(out)
        ratio = r.wall / kafka_s if kafka_s else None
        ok = ratio is not None and ratio <= TARGET_RATIO and r.code == 0
        print(
            f"| {name} | {mode} | {core} | {'/dev/null' if sink == 'null' else 'pipe to wc -c'} | "
            f"{r.wall:.2f} s | {r.user:.2f} | {r.sys:.2f} | {r.kernel_share:.0%} | {r.minflt:,} | "
            f"{fmt(fpg, digits=0)} | {kafka_s:.2f} s ({src}) | {fmt(ratio)} | {'yes' if ok else 'NO'} |"
        )
    if flat:
        print()
        print("| deep+print on C, pipe | log | minor faults | text | faults/GiB out |")
        print("|---|---|---|---|---|")
        for scale, nbytes, r in flat:
            fpg = r.faults_per_gib(r.out_bytes)
            print(
                f"| scale {scale:g} | {nbytes / (1 << 20):,.0f} MiB | {r.minflt:,} | "
                f"{r.out_bytes / GIB:.2f} GiB | {fmt(fpg, digits=0)} |"
            )
        small, big = flat[0][2], flat[1][2]
        bound = 1.5 * small.minflt + 2000
        print(
            f"\nfaults flat in the input size: {'yes' if big.minflt <= bound else 'NO'} "
            f"({small.minflt:,} -> {big.minflt:,} for 4x the input; bound {bound:,.0f})"
        )
    if args.json:
        args.json.write_text(
            json.dumps(
                {
                    "script": b.script,
                    "version": b.version,
                    "scale": args.scale,
                    "repeat": args.repeat,
                    "commit": git_state(),
                    "load": [load0, os.getloadavg()],
                    "runs": [{**asdict(r), "kernel_share": r.kernel_share} for r in b.runs],
                },
                indent=2,
            )
            + "\n"
        )
    return 1 if any(r.code for r in b.runs) else 0


if __name__ == "__main__":
    sys.exit(main())
