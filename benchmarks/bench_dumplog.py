"""Time `kafkatool dump-log` on the benchmark corpora and compare with Kafka 3.3.1's tool.

Each mode runs the real command as a subprocess with stdout to /dev/null, on a warm page cache:

  shallow  dump-log --files X                      (batch lines only)
  deep     dump-log --files X --deep-iteration     (every record's metadata)
  print    dump-log --files X --print-data-log     (metadata, keys and values)
  crc      library level, in this process: `verify_crcs` (frames + CRC-32C of every batch, the recover/verify
           path), and for comparison a `BatchScan` walk calling `batch.is_valid()`

Reported per run: wall seconds, MB/s (10^6 bytes of log per second), records/s, peak RSS of the child
(`wait4` rusage; RSS counts the file pages the child's mmap touched, so the anon/file split sampled
from /proc is shown too), Kafka's seconds scaled to the corpus size, our/Kafka ratio and the target
(shallow <= 0.5x Kafka, deep and print <= 1.0x, peak RSS < 150 MB, CRC >= 2 GB/s).  A `startup` row
times dump-log on an empty segment: at small --scale it dominates, so `net` ratios subtract it.
The checkout's kafkatool is byte-compiled into __pycache__ before anything is timed, as pip does at install
(with PYTHONDONTWRITEBYTECODE=1 every run would otherwise recompile it); the header says so.

    python benchmarks/bench_dumplog.py --scale 0.05
    python benchmarks/bench_dumplog.py --corpus A --modes deep,print --repeat 3 --json
    KAFKA_HOME=/opt/kafka python benchmarks/bench_dumplog.py --scale 0.1 --repeat 3

kafkatool runs with both cores (`--cores C,pure`: the compiled one, and KAFKATOOL_PURE_PYTHON=1) in the
same run.  With a Kafka install (`--kafka-home`, default $KAFKA_HOME) its bin/kafka-dump-log.sh runs on the
same files in the same run, each mode side by side, and the ratios are against that measured time;
without one they use Kafka 3.3.1's times stored in corpus.py (measured once, on another machine), and
the table says so ("Kafka s" source: stored).
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

try:
    from benchmarks import corpus
except ImportError:  # run as a script: benchmarks/ itself is on sys.path
    import corpus  # type: ignore[no-redef]

from kafkatool.log.files import MappedFile
from kafkatool.log.records import BatchScan, verify_crcs

MODES = ("shallow", "deep", "print", "crc")
MODE_FLAGS = {"shallow": [], "deep": ["--deep-iteration"], "print": ["--print-data-log"]}
TARGET_RATIO = {"shallow": 0.5, "deep": 1.0, "print": 1.0}
TARGET_RSS_MB = 150.0
TARGET_CRC_GBPS = 2.0
KAFKA_RSS_MB = 250.0
MB = 1e6


@dataclass
class Run:
    """One measured run (the best of --repeat by wall time)."""

    corpus: str
    mode: str
    bytes: int
    records: int
    seconds: float
    mb_per_s: float
    records_per_s: float
    peak_rss_mb: float | None = None
    peak_anon_mb: float | None = None
    peak_file_mb: float | None = None
    kafka_seconds: float | None = None  # Kafka's full-size time scaled to this corpus' size
    ratio: float | None = None  # ours / Kafka's
    net_ratio: float | None = None  # (ours - our startup) / Kafka's
    target: str = ""
    ok: bool | None = None
    all_seconds: list[float] = field(default_factory=list)
    exit_code: int | None = None
    stderr: str = ""
    tool: str = "kafkatool"  # "kafkatool C", "kafkatool pure", "Kafka" (its kafka-dump-log.sh), or the --command
    kafka_source: str = ""  # "measured" (Kafka's tool in this run) or "stored" (Kafka 3.3.1's times, scaled)


# ---------------------------------------------------------------------------------------------
# running a child and measuring it
# ---------------------------------------------------------------------------------------------


class _RssSampler(threading.Thread):
    """Polls /proc/<pid>/status for the peak RssAnon and RssFile (a diagnostic split of VmHWM), and the
    peak sum of VmRSS over the process and its descendants (dump-log's workers, spark-scan's JVM: wait4's
    ru_maxrss is the largest single process, not their sum; shared pages count once per process)."""

    def __init__(self, pid: int, interval: float = 0.005) -> None:
        super().__init__(daemon=True)
        self.pid = pid
        self.path = f"/proc/{pid}/status"
        self.interval = interval
        self.anon_kb = 0
        self.file_kb = 0
        self.tree_kb = 0
        self.stop = threading.Event()

    def run(self) -> None:
        rounds = 0
        while not self.stop.is_set():
            try:
                with open(self.path) as f:
                    for line in f:
                        if line.startswith("RssAnon:"):
                            self.anon_kb = max(self.anon_kb, int(line.split()[1]))
                        elif line.startswith("RssFile:"):
                            self.file_kb = max(self.file_kb, int(line.split()[1]))
            except (OSError, ValueError):
                return
            if rounds % 4 == 0:  # the tree costs a few reads per process: every 20 ms is enough
                self.tree_kb = max(self.tree_kb, _tree_rss_kb(self.pid))
            rounds += 1
            self.stop.wait(self.interval)


def _descendants(pid: int) -> list[int]:
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        try:
            for task in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{task}/children") as f:
                    todo.extend(int(c) for c in f.read().split())
        except (OSError, ValueError):
            continue
    return out


def _tree_rss_kb(pid: int) -> int:
    """VmRSS of pid and every descendant, summed (0 for processes gone meanwhile)."""
    total = 0
    for p in _descendants(pid):
        try:
            with open(f"/proc/{p}/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1])
                        break
        except (OSError, ValueError):
            continue
    return total


@dataclass
class ChildResult:
    seconds: float
    exit_code: int
    max_rss_kb: int
    anon_kb: int
    file_kb: int
    stderr: str
    cpu_seconds: float = 0.0  # user + system of the command (wait4), the figure to trust on a shared machine
    tree_kb: int = 0  # peak VmRSS summed over the command and its descendants (sampled)


# Linux starts a child's peak RSS at its parent's peak (fork copies the mm's high-water mark and exec
# keeps the larger), so wait4/RUSAGE_CHILDREN of a child of this (large) process over-reports.  A
# small launcher process spawns the command instead and reports its pid, rusage (peak RSS, user and
# system CPU) and wall time on fd 3.
_LAUNCHER = """
import os, sys, time
out = 3
t0 = time.perf_counter()
pid = os.posix_spawnp(sys.argv[1], sys.argv[1:], os.environ)
os.write(out, b"%d\\n" % pid)
_, status, usage = os.wait4(pid, 0)
t1 = time.perf_counter()
os.write(out, b"%d %r %d %r\\n" % (usage.ru_maxrss, t1 - t0, os.waitstatus_to_exitcode(status),
                                   usage.ru_utime + usage.ru_stime))
"""


def run_child(argv: list[str], timeout: float, env: dict[str, str] | None = None) -> ChildResult:
    """Run argv with stdout to /dev/null; its wall time, own peak RSS and sampled anon/file RSS."""
    rfd, wfd = os.pipe()
    os.set_inheritable(wfd, True)
    try:
        with open(os.devnull, "wb") as devnull, open(os.devnull, "rb") as devin:
            launcher = subprocess.Popen(
                [sys.executable, "-S", "-c", _LAUNCHER.replace("out = 3", f"out = {wfd}"), *argv],
                stdin=devin,
                stdout=devnull,
                stderr=subprocess.PIPE,
                pass_fds=(wfd,),
                env=env,
            )
            os.close(wfd)
            wfd = -1
            err_chunks: list[bytes] = []
            reader = threading.Thread(target=lambda: err_chunks.append(launcher.stderr.read()), daemon=True)  # type: ignore[union-attr]
            reader.start()
            with os.fdopen(rfd, "rb") as report:
                rfd = -1
                first = report.readline()
                sampler = _RssSampler(int(first)) if first.strip().isdigit() else None
                if sampler is not None:
                    sampler.start()
                timed_out = threading.Event()
                killer = threading.Timer(
                    timeout, _kill, (launcher, int(first) if sampler else None, timed_out)
                )
                killer.start()
                last = report.readline().split()
                killer.cancel()
            launcher.wait()
            if sampler is not None:
                sampler.stop.set()
                sampler.join()
            reader.join(5)
    finally:
        for fd in (rfd, wfd):
            if fd >= 0:
                os.close(fd)
    stderr = b"".join(err_chunks).decode("utf-8", "replace")[-2000:]
    if len(last) != 4:
        if timed_out.is_set():
            stderr = f"timed out after {timeout:g} s"
        return ChildResult(0.0, launcher.returncode or 3, 0, 0, 0, stderr or "launcher failed")
    return ChildResult(
        seconds=float(last[1]),
        exit_code=int(last[2]),
        max_rss_kb=int(last[0]),
        anon_kb=sampler.anon_kb if sampler else 0,
        file_kb=sampler.file_kb if sampler else 0,
        stderr=stderr,
        cpu_seconds=float(last[3]),
        tree_kb=sampler.tree_kb if sampler else 0,
    )


def _kill(launcher: subprocess.Popen, pid: int | None, timed_out: threading.Event) -> None:
    """Timeout: end the measured command (by its pid) and the launcher waiting for it."""
    timed_out.set()
    if pid is not None:
        try:
            os.kill(pid, 9)
        except ProcessLookupError:
            pass
    launcher.kill()


def warm(path: Path) -> None:
    """Read the file once so every mode runs on a warm page cache, as Kafka's numbers did."""
    with open(path, "rb", buffering=0) as f:
        while f.read(8 * 1024 * 1024):
            pass


# ---------------------------------------------------------------------------------------------
# modes
# ---------------------------------------------------------------------------------------------


def bench_cli(command: list[str], info: corpus.CorpusInfo, mode: str, repeat: int, timeout: float,
              env: dict[str, str] | None = None, tool: str = "kafkatool") -> Run:
    argv = [*command, "--files", str(info.log), *MODE_FLAGS[mode]]
    results = [run_child(argv, timeout, env) for _ in range(repeat)]
    best = min(results, key=lambda r: r.seconds)
    failed = next((r for r in results if r.exit_code != 0), None)
    return Run(
        corpus=info.name,
        mode=mode,
        bytes=info.bytes,
        records=info.records,
        seconds=round(best.seconds, 3),
        mb_per_s=round(info.bytes / MB / best.seconds, 1),
        records_per_s=round(info.records / best.seconds),
        peak_rss_mb=round(max(r.max_rss_kb for r in results) * 1024 / MB, 1),
        peak_anon_mb=round(max(r.anon_kb for r in results) * 1024 / MB, 1),
        peak_file_mb=round(max(r.file_kb for r in results) * 1024 / MB, 1),
        all_seconds=[round(r.seconds, 3) for r in results],
        exit_code=failed.exit_code if failed else 0,
        stderr=failed.stderr if failed else "",
        tool=tool,
    )


def crc_walk(path: Path) -> tuple[float, float, int, bool]:
    """(seconds to walk the frames, seconds to walk and CRC every batch, batches, all valid)."""
    with MappedFile(path) as mf:
        buf = mf.buf
        t0 = time.perf_counter()
        n = 0
        for _b in BatchScan(buf):
            n += 1
        t1 = time.perf_counter()
        # the verification path recover/verify use: frames + CRC-32C, no Batch objects
        checked, _valid_bytes, first_bad = verify_crcs(buf)
        t2 = time.perf_counter()
        valid = first_bad is None and checked == n
        object_walk = sum(1 for b in BatchScan(buf) if b.is_valid())
        t3 = time.perf_counter()
    return t1 - t0, t2 - t1, n, valid and object_walk == n, t3 - t2


def bench_crc(info: corpus.CorpusInfo, repeat: int) -> tuple[Run, dict]:
    walks = [crc_walk(info.log) for _ in range(max(3, repeat))]
    walk_s = min(w[0] for w in walks)
    crc_s = min(w[1] for w in walks)
    gbps = info.bytes / 1e9 / crc_s
    run = Run(
        corpus=info.name,
        mode="crc",
        bytes=info.bytes,
        records=info.records,
        seconds=round(crc_s, 4),
        mb_per_s=round(info.bytes / MB / crc_s, 1),
        records_per_s=round(info.records / crc_s),
        target=f">= {TARGET_CRC_GBPS:g} GB/s",
        ok=gbps >= TARGET_CRC_GBPS and all(w[3] for w in walks),
        all_seconds=[round(w[1], 4) for w in walks],
        exit_code=0 if all(w[3] for w in walks) else 1,
        stderr="" if all(w[3] for w in walks) else "invalid CRC found",
    )
    extra = {
        "corpus": info.name,
        "frame_walk_gb_per_s": round(info.bytes / 1e9 / walk_s, 2),
        "batch_objects_crc_gb_per_s": round(info.bytes / 1e9 / min(w[4] for w in walks), 2),
        "batches": walks[0][2],
    }
    return run, extra


def compare(run: Run, spec: corpus.CorpusSpec, info: corpus.CorpusInfo, startup: float | None,
            kafka_run: Run | None = None) -> None:
    """Fill Kafka's time on this file and the verdicts: Kafka's tool measured in this run when there is
    one (`kafka_run`), else Kafka 3.3.1's stored full-size time times our scale."""
    if run.mode not in TARGET_RATIO:
        return
    if kafka_run is not None and kafka_run.exit_code == 0 and kafka_run.seconds > 0:
        kafka, run.kafka_source = kafka_run.seconds, "measured"
    else:
        kafka, run.kafka_source = spec.kafka_seconds[run.mode] * info.records / spec.records, "stored"
    run.kafka_seconds = round(kafka, 3)
    run.ratio = round(run.seconds / kafka, 2)
    if startup is not None:
        run.net_ratio = round(max(run.seconds - startup, 0.0) / kafka, 2)
    limit = TARGET_RATIO[run.mode]
    run.target = f"<= {limit:g}x, < {TARGET_RSS_MB:g} MB"
    rss_ok = run.peak_rss_mb is not None and run.peak_rss_mb < TARGET_RSS_MB
    run.ok = run.exit_code == 0 and run.ratio <= limit and rss_ok


def bench_startup(command: list[str], data_dir: Path, repeat: int, timeout: float,
                  env: dict[str, str] | None = None, tool: str = "kafkatool") -> Run:
    empty = data_dir / "empty" / "00000000000000000000.log"
    empty.parent.mkdir(parents=True, exist_ok=True)
    empty.touch()
    results = [run_child([*command, "--files", str(empty)], timeout, env) for _ in range(max(3, repeat))]
    best = min(results, key=lambda r: r.seconds)
    return Run(
        corpus="-",
        mode="startup",
        bytes=0,
        records=0,
        seconds=round(best.seconds, 3),
        mb_per_s=0.0,
        records_per_s=0,
        peak_rss_mb=round(best.max_rss_kb * 1024 / MB, 1),
        peak_anon_mb=round(best.anon_kb * 1024 / MB, 1),
        peak_file_mb=round(best.file_kb * 1024 / MB, 1),
        all_seconds=[round(r.seconds, 3) for r in results],
        exit_code=best.exit_code,
        stderr=best.stderr,
        tool=tool,
    )


# ---------------------------------------------------------------------------------------------
# report
# ---------------------------------------------------------------------------------------------


def _fmt(v: object, spec: str = "") -> str:
    if v is None:
        return "-"
    if isinstance(v, bool):
        return "ok" if v else "MISS"
    return format(v, spec)


def table(runs: list[Run]) -> str:
    head = (
        "corpus",
        "mode",
        "tool",
        "MB",
        "records",
        "wall s",
        "MB/s",
        "rec/s",
        "RSS MB",
        "anon",
        "file",
        "Kafka s",
        "ratio",
        "net",
        "target",
        "",
    )
    rows = []
    for r in runs:
        rows.append(
            (
                r.corpus,
                r.mode,
                r.tool,
                _fmt(r.bytes / MB, ".1f"),
                _fmt(r.records, ","),
                _fmt(r.seconds, ".3f"),
                _fmt(r.mb_per_s, ",.0f"),
                _fmt(r.records_per_s, ",.0f"),
                _fmt(r.peak_rss_mb, ".0f"),
                _fmt(r.peak_anon_mb, ".0f"),
                _fmt(r.peak_file_mb, ".0f"),
                _fmt(r.kafka_seconds, ".3f") + (" stored" if r.kafka_source == "stored" else ""),
                _fmt(r.ratio, ".2f"),
                _fmt(r.net_ratio, ".2f"),
                r.target,
                (_fmt(r.ok) if r.ok is not None else "")
                + ("" if not r.exit_code else f" exit {r.exit_code}"),
            )
        )
    widths = [max(len(str(x)) for x in col) for col in zip(head, *rows, strict=True)]
    lines = [
        "  ".join(
            str(x).rjust(w) if i > 2 else str(x).ljust(w)
            for i, (x, w) in enumerate(zip(row, widths, strict=True))
        )
        for row in [head, *rows]
    ]
    return "\n".join(line.rstrip() for line in lines)


def kafka_reference() -> str:
    lines = ["Kafka 3.3.1 kafka-dump-log.sh, full size, warm cache, one run (peak RSS ~250 MB):"]
    for spec in corpus.CORPORA.values():
        ks = spec.kafka_seconds
        mib = spec.nominal_bytes / MB
        lines.append(
            f"  {spec.name}: shallow {ks['shallow']:.2f} s ({mib / ks['shallow']:.0f} MB/s)  "
            f"deep {ks['deep']:.2f} s ({spec.records / ks['deep'] / 1e6:.2f} M rec/s)  "
            f"print {ks['print']:.2f} s ({spec.records / ks['print'] / 1e6:.2f} M rec/s)"
        )
    lines.append("  floor here: cat of A 0.08 s; Python frame walk 13 GB/s; CRC-32C of every batch 5.5 GB/s")
    return "\n".join(lines)


def tools_to_time(command: str | None, cores: str) -> list[tuple[str, list[str], dict[str, str] | None]]:
    """(label, argv, environment) of each dump-log to time: `command` alone, else kafkatool with each
    core asked for (the compiled one only when `kafkatool --version` says it is built)."""
    if command:
        return [(Path(shlex.split(command)[0]).name, shlex.split(command), None)]
    base = [sys.executable, "-m", "kafkatool"]
    out: list[tuple[str, list[str], dict[str, str] | None]] = []
    for core in (c.strip() for c in cores.split(",") if c.strip()):
        if core not in ("C", "pure"):
            raise SystemExit(f"--cores: {core!r}: choose from C, pure")
        env = {k: v for k, v in os.environ.items() if k != "KAFKATOOL_PURE_PYTHON"}
        if core == "pure":
            env["KAFKATOOL_PURE_PYTHON"] = "1"
        else:
            version = subprocess.run([*base, "--version"], capture_output=True, text=True, env=env, timeout=60).stdout
            if "core: C" not in version:
                print(f"kafkatool's compiled core is not built ({version.strip()}): timing pure Python only",
                      file=sys.stderr)
                continue
        out.append((f"kafkatool {core}", [*base, "dump-log"], env))
    return out


def compile_checkout() -> str:
    """Byte-compile this checkout's kafkatool into its __pycache__ once, before anything is timed, and
    say so (a line for the output's header).

    An installed kafkatool has its .pyc files (pip compiles at install); a checkout run with
    PYTHONDONTWRITEBYTECODE=1 never gets them, so every timed run would recompile every module it
    imports (~0.025 s of a 0.13 s start-up on the issue's machine).  Python still reads .pyc files
    with that variable set, and compileall writes them whatever it says.
    """
    import compileall

    pkg = Path(__file__).resolve().parent.parent / "kafkatool"
    modules = sum(1 for _ in pkg.rglob("*.py"))
    ok = compileall.compile_dir(pkg, quiet=2, workers=1)
    unset = "" if os.environ.get("PYTHONDONTWRITEBYTECODE") else " (PYTHONDONTWRITEBYTECODE is not set here)"
    return (
        f"bytecode: {modules} kafkatool modules byte-compiled into __pycache__ before timing, as pip does at "
        f"install{unset}" + ("" if ok else "; some failed to compile (those recompile in every run)")
    )


def git_state() -> str:
    """The commit measured, and whether the working tree had local changes (others edit it live)."""
    root = Path(__file__).resolve().parent.parent
    try:
        head = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            timeout=10,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(root), "status", "--porcelain", "--", "kafkatool"],
            capture_output=True,
            text=True,
            timeout=10,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "git unknown"
    return f"git {head or 'unknown'}{' +local changes in kafkatool/' if dirty else ''}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", default="A,B,C", help="comma-separated corpora: A,B,C (default all)")
    ap.add_argument(
        "--scale", type=float, default=1.0, help="fraction of full size (default 1.0; 0.05-0.1 to try)"
    )
    ap.add_argument("--modes", default=",".join(MODES), help=f"comma-separated of {','.join(MODES)}")
    ap.add_argument("--repeat", type=int, default=1, help="runs per mode; the fastest is reported")
    ap.add_argument("--json", action="store_true", help="print one JSON document instead of the table")
    ap.add_argument("--data-dir", type=Path, default=corpus.DATA_DIR, help="corpus cache (benchmarks/data)")
    ap.add_argument(
        "--command",
        default=None,
        help="one dump-log command to time instead of kafkatool with each of --cores",
    )
    ap.add_argument(
        "--cores", default="C,pure", help="kafkatool's cores to time side by side: C (compiled), pure (Python)"
    )
    ap.add_argument(
        "--kafka-home",
        default=os.environ.get("KAFKA_HOME") or None,
        help="a Kafka install whose bin/kafka-dump-log.sh runs on the same files in the same run (default "
        "$KAFKA_HOME); without one, ratios use Kafka 3.3.1's stored times",
    )
    ap.add_argument("--timeout", type=float, default=1800, help="seconds before a run is killed")
    ap.add_argument("--no-startup", action="store_true", help="skip the empty-segment startup run")
    args = ap.parse_args(argv)
    specs = corpus.parse_corpora(args.corpus)
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    bad = [m for m in modes if m not in MODES]
    if bad or not modes:
        raise SystemExit(f"modes: {','.join(bad) or args.modes!r}: choose from {','.join(MODES)}")
    if not 0 < args.scale <= 4 or args.repeat < 1:
        raise SystemExit("scale must be in (0, 4] and repeat >= 1")
    tools = tools_to_time(args.command, args.cores)
    kafka_cmd = None
    if args.kafka_home:
        script = Path(args.kafka_home) / "bin" / "kafka-dump-log.sh"
        if not script.is_file():
            raise SystemExit(f"--kafka-home {args.kafka_home}: no bin/kafka-dump-log.sh")
        kafka_cmd = [str(script)]

    bytecode = compile_checkout()
    load_before = os.getloadavg()[0]
    corpora = []
    for spec in specs:
        info = corpus.generate(spec, args.scale, args.data_dir)
        corpora.append(info)
        if not args.json:
            print(
                f"corpus {info.name}: {info.bytes / MB:.1f} MB, {info.records:,} records, {info.batches:,} batches, "
                f"lz4 ratio {info.compression_ratio}x, scale {info.scale:g} ({info.log})",
                file=sys.stderr,
            )
    runs: list[Run] = []
    startup: dict[str, float] = {}
    if not args.no_startup and any(m in MODE_FLAGS for m in modes):
        for tool, command, env in tools + ([("Kafka", kafka_cmd, None)] if kafka_cmd else []):
            srun = bench_startup(command, args.data_dir, args.repeat, args.timeout, env, tool)
            startup[tool] = srun.seconds
            runs.append(srun)
    extras = []
    for spec, info in zip(specs, corpora, strict=True):
        warm(info.log)
        for mode in modes:
            if mode == "crc":
                run, extra = bench_crc(info, args.repeat)
                extras.append(extra)
                runs.append(run)
                continue
            kafka_run = None
            if kafka_cmd:  # Kafka's own tool on the same file, in this run
                kafka_run = bench_cli(kafka_cmd, info, mode, args.repeat, args.timeout, None, "Kafka")
                runs.append(kafka_run)
            for tool, command, env in tools:
                run = bench_cli(command, info, mode, args.repeat, args.timeout, env, tool)
                compare(run, spec, info, startup.get(tool), kafka_run)
                runs.append(run)
                if not args.json:
                    print(f"  {info.name} {mode} {tool}: {run.seconds:.3f} s", file=sys.stderr)
    conditions: dict[str, Any] = {
        "git": git_state(),
        "loadavg_1min": {"before": round(load_before, 2), "after": round(os.getloadavg()[0], 2)},
        "cpus": os.cpu_count(),
        "python": sys.version.split()[0],
        "bytecode": bytecode,
    }
    if args.json:
        doc = {
            "scale": args.scale,
            "conditions": conditions,
            "tools": [{"tool": t, "command": c, "pure_python": bool(e and e.get("KAFKATOOL_PURE_PYTHON"))}
                      for t, c, e in tools],
            "kafka_command": kafka_cmd,
            "corpora": [asdict(c) for c in corpora],
            "runs": [asdict(r) for r in runs],
            "frame_walk": extras,
            "kafka": {s.name: s.kafka_seconds for s in corpus.CORPORA.values()},
            "targets": {"ratio": TARGET_RATIO, "rss_mb": TARGET_RSS_MB, "crc_gb_per_s": TARGET_CRC_GBPS},
        }
        print(json.dumps(doc, indent=2))
    else:
        print(
            f"scale {args.scale:g}; repeat {args.repeat} (fastest shown); {conditions['git']}; load "
            f"{conditions['loadavg_1min']['before']}->{conditions['loadavg_1min']['after']} on {conditions['cpus']} cpus"
        )
        print(bytecode)
        print(
            "MB = 10^6 bytes; Kafka s = Kafka's tool on the same file in this run, or (stored) Kafka 3.3.1's "
            "full-size time x this corpus' fraction; net = ratio less our startup"
        )
        print(table(runs))
        for e in extras:
            print(
                f"frame walk only ({e['corpus']}, {e['batches']:,} batches): {e['frame_walk_gb_per_s']} GB/s"
            )
        if kafka_cmd:
            print(f"Kafka: {kafka_cmd[0]}, measured in this run on the same files (ratio = ours / its time)")
        else:
            print(kafka_reference())
            print("(no KAFKA_HOME: ratios use the stored times above; set it to measure Kafka's tool here)")
        for r in runs:
            if r.exit_code:
                print(f"{r.corpus} {r.mode}: exit {r.exit_code}: {r.stderr.strip()}", file=sys.stderr)
    return 1 if any(r.exit_code for r in runs) else 0


if __name__ == "__main__":
    sys.exit(main())
