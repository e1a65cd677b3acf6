"""Issue 14's table from one benchmark run: every row, both cores, the real commands, peak RSS of each.

Every measured command is the `kafkatool` console script run as a subprocess (this checkout's code:
its root goes first on PYTHONPATH), stdout to /dev/null, on a warm page cache, once per core: the
compiled one ("C") and `KAFKATOOL_PURE_PYTHON=1` ("pure").  Per run: wall seconds, CPU seconds
(user + system of the child from wait4, the figure to trust on a shared machine), MB/s (10^6 bytes of
input per wall second), records/s and the child's own peak RSS (wait4 ru_maxrss through a small
launcher, as bench_dumplog.py does; the anonymous/file-backed split is sampled from /proc).  The checkout's
kafkatool is byte-compiled into __pycache__ first, as pip does at install (said in the output's header).
`--repeat N` keeps the fastest run (and the largest RSS).  Rows (`--rows`, default all), sizes at `--scale 1`:

  startup   dump-log of an empty segment (target <= 0.1 s); every row's "net" subtracts it
  dumplog   dump-log shallow / --deep-iteration / --print-data-log on corpora A, B, C (512/256/256 MiB)
            against Kafka's kafka-dump-log.sh: measured in this run with --kafka-home ($KAFKA_HOME),
            else Kafka 3.3.1's stored times (benchmarks/corpus.py) scaled to the corpus, marked "stored"
  offsets   offsets --log-dir on a 1 GiB __consumer_offsets-0 (bench_offsets.offline_log, 50,000 keys)
  verify    index verify, recover --full --dry-run and recover --full (on a copy): 1 GiB of ~1 KiB batches
  compact   compact of a 1 GiB partition (kafkatool generate, half the records overwritten) with
            --buffer-size 32 MiB and 128 MiB: speed, and anonymous memory against the buffer
  spark     spark-scan --query summary on corpus B at 1 GiB, --master local[2] against --engine local,
            each less its own start-up (spark-scan of a tiny partition): throughput per core ratio
  rss       every offline command at two sizes, s = 256 MiB and 4s (4 segments each, so the segment
            files grow 4x; fixed distinct keys), and index verify / recover on one segment of ~1 KiB
            batches of each size: peak RSS at both (and summed over the process tree), growth flagged

`--quick` is `--scale 0.02` and, unless --rows names it, no spark row (its eight JVM start-ups are most of
a quick run): a smoke test, under 2 minutes on a quiet machine.  Inputs are cached in
benchmarks/data/ (gitignored).  The table is markdown; `--json FILE` writes every raw number and the
machine (CPU model, cores, load average before/after each row, Python, gcc, commit, which core).

    python benchmarks/bench_issue14.py --quick
    python benchmarks/bench_issue14.py --scale 0.05 --json issue14.json
    KAFKA_HOME=/opt/kafka python benchmarks/bench_issue14.py --repeat 3 --json issue14.json   # the full run
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # this checkout's kafkatool and benchmarks package

from benchmarks import corpus  # noqa: E402
from benchmarks.bench_dumplog import ChildResult, compile_checkout, git_state, run_child, warm  # noqa: E402

ROWS = ("startup", "dumplog", "offsets", "verify", "compact", "spark", "rss")
CORES = ("pure", "C")
MB = 1e6
MIB = 1 << 20
NOW_MS = "1800000000000"  # compact's --now: every run judges tombstones at the same time

TARGET_STARTUP_S = 0.1
TARGET_DUMPLOG = {"shallow": 0.15, "deep": 0.25, "print": 0.25}  # ratio to Kafka's time
TARGET_OFFSETS_MBPS = 200.0
TARGET_VERIFY_GBPS = 1.0
TARGET_COMPACT_MBPS = 400.0
TARGET_SPARK_PER_CORE = 0.7
TARGET_SPARK_STARTUP_S = 10.0
TARGET_RSS_MB = 100.0
# rss row: growth from s to 4s beyond this (MB) is flagged as "grows with size"
RSS_GROWTH_FLAG_MB = 8.0
# mapped log pages are dropped every 8 MiB of a scan (log.files.MappedFile.release): file-backed RSS
# may grow with small files up to that window (and a command's own read-ahead window) over the
# libraries' ~16 MB, and no further
FILE_RSS_BOUND_MB = 16 + 8 * MIB / MB + 16
DUMP_FLAGS = {"shallow": [], "deep": ["--deep-iteration"], "print": ["--print-data-log"]}
GEN_RECORD_BYTES = 1046  # bytes per record of `kafkatool generate --value-bytes 1000 --batch-records 100`


@dataclass
class Measure:
    """One command, one core: the fastest of --repeat runs (RSS: the largest)."""

    row: str
    what: str
    core: str  # "C", "pure", or "Kafka"
    argv: list[str]
    bytes: int
    records: int
    wall_s: float
    cpu_s: float
    mb_per_s: float
    records_per_s: float | None  # None: the input's record count is not known (or not the point)
    net_mb_per_s: float | None  # bytes over (wall - this core's start-up)
    net_cpu_mb_per_s: float | None  # bytes over (CPU - this core's start-up CPU): steadier when the machine is busy
    peak_rss_mb: float
    peak_anon_mb: float
    peak_file_mb: float
    peak_tree_mb: float  # VmRSS of the command and its descendants (workers, a JVM) summed, sampled
    exit_code: int
    stderr: str = ""
    all_wall_s: list[float] = field(default_factory=list)


@dataclass
class Line:
    """One line of the issue's table."""

    work: str
    input: str
    target: str
    pure: str
    c: str
    kafka: str
    met: str


@dataclass
class RowLog:
    """What one row measured, and the machine's load around it."""

    row: str
    load_before: tuple[float, float, float]
    load_after: tuple[float, float, float] = (0.0, 0.0, 0.0)
    seconds: float = 0.0
    inputs: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def _net(seconds: float, startup: float | None) -> float | None:
    """seconds less the start-up, when what is left is big enough to mean something (a rate over a
    remainder within the start-up's noise would be any number)."""
    if startup is None:
        return None
    left = seconds - startup
    return left if left >= max(0.05, 0.25 * startup) else None


def rss_text(m: Measure) -> str:
    """The command's peak RSS, and the sum over its process tree when that is more (workers, a JVM)."""
    tree = f" (tree {m.peak_tree_mb:.0f} MB)" if m.peak_tree_mb > m.peak_rss_mb + 5 else ""
    return f"{m.peak_rss_mb:.0f} MB{tree}"


def _mb(n: float) -> str:
    return f"{n / MIB:,.0f} MiB" if n >= 10 * MIB else f"{n / MIB:,.1f} MiB"


class Bench:
    """Runs commands with each core and keeps every measurement."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.script = self._console_script()
        self.measures: list[Measure] = []
        self.lines: dict[str, list[Line]] = {}
        self.logs: list[RowLog] = []
        self.startup: dict[str, float] = {}  # core -> wall seconds of the start-up row
        self.startup_cpu: dict[str, float] = {}  # core -> its CPU seconds
        self.kafka_home = Path(args.kafka_home) if args.kafka_home else None
        self.corpora = Path(args.data_dir)  # corpus.py's cache (shared with bench_dumplog.py)
        self.data = self.corpora / "issue14"  # this script's inputs and scratch copies
        base = {k: v for k, v in os.environ.items() if k != "KAFKATOOL_PURE_PYTHON"}
        base["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH")) if p)
        self.env = {"C": base, "pure": {**base, "KAFKATOOL_PURE_PYTHON": "1"}}
        version = subprocess.run([*self.script, "--version"], capture_output=True, text=True, env=base,
                                 timeout=120)
        self.version = version.stdout.strip()
        self.cores = [c for c in CORES if c != "C" or "core: C" in self.version]
        if "C" not in self.cores:
            print(f"kafkatool's compiled core is not built ({self.version}): pure Python only", file=sys.stderr)

    @staticmethod
    def _console_script() -> list[str]:
        """The installed `kafkatool` entry point beside this interpreter (not a shell shim), else -m."""
        script = Path(sys.executable).parent / "kafkatool"
        return [str(script)] if script.is_file() else [sys.executable, "-m", "kafkatool"]

    def kt(self, *args: str) -> list[str]:
        return [*self.script, *args]

    def run(self, row: str, what: str, core: str, argv: list[str], nbytes: int, records: int = 0,
            prepare: Callable[[], None] | None = None, ok_codes: tuple[int, ...] = (0,)) -> Measure:
        """argv --repeat times with this core's environment (`prepare` runs untimed before each)."""
        results: list[ChildResult] = []
        for _ in range(self.args.repeat):
            if prepare is not None:
                prepare()
            env = self.env[core] if core in self.env else None
            results.append(run_child(argv, self.args.timeout, env))
        best = min(results, key=lambda r: r.seconds if r.exit_code in ok_codes else float("inf"))
        bad = next((r for r in results if r.exit_code not in ok_codes), None)
        wall = max(best.seconds, 1e-6)
        net = _net(wall, self.startup.get(core))
        net_cpu = _net(best.cpu_seconds, self.startup_cpu.get(core))
        m = Measure(
            row=row, what=what, core=core, argv=argv, bytes=nbytes, records=records,
            wall_s=round(wall, 3), cpu_s=round(best.cpu_seconds, 3),
            mb_per_s=round(nbytes / MB / wall, 1), records_per_s=round(records / wall) if records else None,
            net_mb_per_s=round(nbytes / MB / net, 1) if net else None,
            net_cpu_mb_per_s=round(nbytes / MB / net_cpu, 1) if net_cpu else None,
            peak_rss_mb=round(max(r.max_rss_kb for r in results) * 1024 / MB, 1),
            peak_anon_mb=round(max(r.anon_kb for r in results) * 1024 / MB, 1),
            peak_file_mb=round(max(r.file_kb for r in results) * 1024 / MB, 1),
            peak_tree_mb=round(max(r.tree_kb for r in results) * 1024 / MB, 1),
            exit_code=bad.exit_code if bad else best.exit_code, stderr=(bad or best).stderr.strip()[-500:],
            all_wall_s=[round(r.seconds, 3) for r in results],
        )
        self.measures.append(m)
        tag = "" if m.exit_code in ok_codes else f"  EXIT {m.exit_code}: {m.stderr.splitlines()[-1:] }"
        print(f"  {row:8} {what:34} {core:5} {m.wall_s:8.3f} s  cpu {m.cpu_s:7.3f} s  "
              f"rss {m.peak_rss_mb:6.1f} MB{tag}", file=sys.stderr)
        return m

    def each_core(self, row: str, what: str, argv: list[str], nbytes: int, records: int = 0,
                  prepare: Callable[[], None] | None = None) -> dict[str, Measure]:
        return {core: self.run(row, what, core, argv, nbytes, records, prepare) for core in self.cores}

    def add(self, row: str, line: Line) -> None:
        self.lines.setdefault(row, []).append(line)


# ---------------------------------------------------------------------------------------------
# inputs (cached in benchmarks/data/issue14 unless another script owns the cache)
# ---------------------------------------------------------------------------------------------


def generated_partition(b: Bench, name: str, size: int, key_space: int | None, segments: int) -> Path:
    """A log dir holding `demo-0` of about `size` bytes written by `kafkatool generate` (1000-byte
    values, 100 records a batch, `segments` segments; key_space None: half the records are overwrites)."""
    records = max(200, size // GEN_RECORD_BYTES)
    keys = key_space if key_space is not None else max(1, records // 2)
    root = b.data / f"{name}-{records}r-{keys}k-{segments}s"
    done = root / ".complete"
    if not done.exists():
        shutil.rmtree(root, ignore_errors=True)
        seg = max(64 * 1024, -(-records * GEN_RECORD_BYTES // segments))
        subprocess.run(b.kt("generate", str(root / "logs"), "--records", str(records), "--value-bytes", "1000",
                            "--batch-records", "100", "--key-space", str(keys), "--segment-bytes", str(seg),
                            "--seed", "14"),
                       check=True, env=b.env["C"], stdout=subprocess.DEVNULL, timeout=b.args.timeout)
        done.write_text(json.dumps({"records": records, "keys": keys}))
    return root / "logs"


def log_files(pdir: Path) -> list[Path]:
    return sorted(pdir.glob("*.log"))


def log_bytes(pdir: Path) -> int:
    return sum(p.stat().st_size for p in log_files(pdir))


def warm_dir(pdir: Path) -> None:
    for p in log_files(pdir):
        warm(p)


def fresh_copy(src: Path, dst: Path) -> Callable[[], None]:
    """A `prepare` that replaces dst with a real copy of the log dir src (for commands that write)."""
    def prepare() -> None:
        shutil.rmtree(dst, ignore_errors=True)
        shutil.copytree(src, dst)
        for p in dst.rglob("*.log"):
            warm(p)
    return prepare


def offsets_log(size: int) -> Path:
    """bench_offsets.py's cached `__consumer_offsets-0` (500 groups x 100 partitions: 50,000 keys)."""
    from benchmarks.bench_offsets import offline_log

    return offline_log(max(1, round(size / MIB)), 500, 100)


# ---------------------------------------------------------------------------------------------
# rows
# ---------------------------------------------------------------------------------------------


def fmt_run(m: Measure | None, extra: str = "") -> str:
    if m is None:
        return "-"
    if m.exit_code != 0:
        return f"exit {m.exit_code}"
    return f"{m.wall_s:.3f} s{extra}"


def verdict(ok: dict[str, bool]) -> str:
    """The C core decides (it is what ships); pure Python's verdict is shown beside it."""
    if not ok:
        return "-"
    main = ok.get("C", ok.get("pure"))
    parts = ["yes" if main else "NO"]
    if "C" in ok and "pure" in ok:
        parts.append(f"(pure: {'yes' if ok['pure'] else 'no'})")
    return " ".join(parts)


def row_startup(b: Bench) -> None:
    empty = b.data / "empty" / "00000000000000000000.log"
    empty.parent.mkdir(parents=True, exist_ok=True)
    empty.touch()
    repeat = b.args.repeat
    b.args.repeat = max(3, repeat)
    try:
        ms = {c: b.run("startup", "dump-log empty segment", c, b.kt("dump-log", "--files", str(empty)), 0)
              for c in b.cores}
        kafka = None
        if b.kafka_home:
            kafka = b.run("startup", "dump-log empty segment", "Kafka",
                          [str(b.kafka_home / "bin" / "kafka-dump-log.sh"), "--files", str(empty)], 0)
    finally:
        b.args.repeat = repeat
    for c, m in ms.items():
        b.startup[c] = m.wall_s
        b.startup_cpu[c] = m.cpu_s
    b.add("startup", Line("start-up (dump-log, empty segment)", "0 B", f"<= {TARGET_STARTUP_S:g} s",
                          fmt_run(ms.get("pure")), fmt_run(ms.get("C")),
                          fmt_run(kafka) if kafka else "-",
                          verdict({c: m.exit_code == 0 and m.wall_s <= TARGET_STARTUP_S for c, m in ms.items()})))


def row_dumplog(b: Bench, log: RowLog) -> None:
    kafka_script = b.kafka_home / "bin" / "kafka-dump-log.sh" if b.kafka_home else None
    for name in "ABC":
        spec = corpus.CORPORA[name]
        info = corpus.generate(spec, b.args.scale, b.corpora)
        log.inputs[name] = {"path": str(info.log), "bytes": info.bytes, "records": info.records,
                            "batches": info.batches, "compression_ratio": info.compression_ratio}
        warm(info.log)
        for mode in ("shallow", "deep", "print"):
            argv = b.kt("dump-log", "--files", str(info.log), *DUMP_FLAGS[mode])
            kafka_m = None
            if kafka_script:
                kafka_m = b.run("dumplog", f"{mode} {name}", "Kafka",
                                [str(kafka_script), "--files", str(info.log), *DUMP_FLAGS[mode]],
                                info.bytes, info.records)
            if kafka_m is not None and kafka_m.exit_code == 0:
                kafka_s, source = kafka_m.wall_s, "measured"
            else:
                kafka_s, source = spec.kafka_seconds[mode] * info.records / spec.records, "stored 3.3.1"
            ms = b.each_core("dumplog", f"{mode} {name}", argv, info.bytes, info.records)
            limit = TARGET_DUMPLOG[mode]

            def cell(m: Measure | None, kafka_s: float = kafka_s) -> str:
                if m is None or m.exit_code:
                    return fmt_run(m)
                net = _net(m.wall_s, b.startup.get(m.core))
                net_s = f" (net {net / kafka_s:.2f}x)" if net else " (net -: within the start-up)"
                return (f"{m.wall_s:.2f} s = {m.wall_s / kafka_s:.2f}x{net_s}, "
                        f"{m.records_per_s / 1e6:.2f} M rec/s, {rss_text(m)}")

            b.add("dumplog", Line(
                f"dump-log {mode} {name}", f"{_mb(info.bytes)}, {info.records:,} rec",
                f"<= {limit:g}x Kafka", cell(ms.get("pure")), cell(ms.get("C")),
                f"{kafka_s:.2f} s ({source})",
                verdict({c: m.exit_code == 0 and m.wall_s / kafka_s <= limit for c, m in ms.items()})))
            for m in ms.values():
                m_ratio = {"kafka_s": round(kafka_s, 3), "kafka_source": source, "ratio": round(m.wall_s / kafka_s, 3)}
                log.inputs.setdefault("ratios", {})[f"{mode} {name} {m.core}"] = m_ratio


def rate_cell(m: Measure | None, unit: float = MB, label: str = "MB/s") -> str:
    if m is None or m.exit_code:
        return fmt_run(m)
    net = f" (net {m.net_mb_per_s * MB / unit:,.2f})" if m.net_mb_per_s else ""
    per_cpu = f" ({m.net_cpu_mb_per_s * MB / unit:,.2f} net of CPU)" if m.net_cpu_mb_per_s else ""
    return (f"{m.mb_per_s * MB / unit:,.2f} {label}{net}, {m.wall_s:.2f} s; cpu {m.cpu_s:.2f} s{per_cpu}; "
            f"{rss_text(m)}")


def net_rate(m: Measure) -> float:
    """Bytes per second of the work itself: the net rate when there is one, else the wall rate."""
    return (m.net_mb_per_s or m.mb_per_s) * MB


def row_offsets(b: Bench, log: RowLog) -> None:
    size = int(1024 * MIB * b.args.scale)
    root = offsets_log(size)
    pdir = root / "__consumer_offsets-0"
    nbytes = log_bytes(pdir)
    meta = json.loads((root / ".complete").read_text())
    log.inputs["offsets"] = {"path": str(root), "bytes": nbytes, **meta, "keys": 500 * 100}
    warm_dir(pdir)
    ms = b.each_core("offsets", "offsets --log-dir --all-groups",
                     b.kt("offsets", "--log-dir", str(root), "--all-groups", "--quiet"), nbytes,
                     meta.get("records", 0))
    b.add("offsets", Line("offsets offline replay", f"{_mb(nbytes)} __consumer_offsets, 50,000 keys",
                          f">= {TARGET_OFFSETS_MBPS:g} MB/s", rate_cell(ms.get("pure")), rate_cell(ms.get("C")),
                          "-", verdict({c: m.exit_code == 0 and net_rate(m) / MB >= TARGET_OFFSETS_MBPS
                                        for c, m in ms.items()})))


def small_batch_segment(b: Bench, size: int) -> tuple[Path, dict[str, int]]:
    """A log dir holding `bench-0`: one segment of `size` bytes of ~1 KiB batches (bench_verify.py's)."""
    from benchmarks.bench_verify import generate as gen_segment

    root = b.data / f"verify-{size}b-1k"
    if not (root / ".complete").exists():
        shutil.rmtree(root, ignore_errors=True)
        nbytes, batches = gen_segment(root / "logs" / "bench-0" / "00000000000000000000.log", size, 1)
        (root / ".complete").write_text(json.dumps({"bytes": nbytes, "batches": batches}))
    return root / "logs", json.loads((root / ".complete").read_text())


def row_verify(b: Bench, log: RowLog) -> None:
    logs, meta = small_batch_segment(b, int(1024 * MIB * b.args.scale))
    pdir = logs / "bench-0"
    seg = pdir / "00000000000000000000.log"
    nbytes = seg.stat().st_size
    log.inputs["verify"] = {"path": str(logs), **meta}
    warm(seg)
    copy = b.data / "work" / "verify-copy"
    fresh_copy(logs, copy)()  # recover on a clean copy changes nothing, so one copy serves every run
    runs = {
        "index verify": b.kt("index", "verify", "-q", str(pdir)),
        "recover --full --dry-run": b.kt("recover", "-q", "--full", "--dry-run", str(logs)),
        "recover --full (a copy)": b.kt("recover", "-q", "--full", str(copy)),
    }
    batch = nbytes // max(1, meta["batches"])
    for what, argv in runs.items():
        ms = b.each_core("verify", what, argv, nbytes)
        b.add("verify", Line(what, f"{_mb(nbytes)}, {meta['batches']:,} batches of {batch} B",
                             f">= {TARGET_VERIFY_GBPS:g} GB/s", rate_cell(ms.get("pure"), 1e9, "GB/s"),
                             rate_cell(ms.get("C"), 1e9, "GB/s"), "-",
                             verdict({c: m.exit_code == 0 and net_rate(m) / 1e9 >= TARGET_VERIFY_GBPS
                                      for c, m in ms.items()})))
    shutil.rmtree(copy, ignore_errors=True)


def row_compact(b: Bench, log: RowLog) -> None:
    size = int(1024 * MIB * b.args.scale)
    src = generated_partition(b, "compact", size, None, 8)
    nbytes = log_bytes(src / "demo-0")
    log.inputs["compact"] = {"path": str(src), "bytes": nbytes,
                             **json.loads((src.parent / ".complete").read_text())}
    work = b.data / "work" / "compact"
    for buf_mib in (32, 128):
        argv = b.kt("compact", str(work / "demo-0"), "--quiet", "--now", NOW_MS, "--buffer-size", f"{buf_mib}MiB")
        ms = b.each_core("compact", f"compact --buffer-size {buf_mib}MiB", argv, nbytes,
                         log.inputs["compact"]["records"], prepare=fresh_copy(src, work))

        def cell(m: Measure | None) -> str:
            return rate_cell(m) + (f", anon {m.peak_anon_mb:.0f} MB" if m and not m.exit_code else "")

        b.add("compact", Line(f"compact, --buffer-size {buf_mib} MiB",
                              f"{_mb(nbytes)}, ~8 segments, half the records overwrites",
                              f">= {TARGET_COMPACT_MBPS:g} MB/s, memory by --buffer-size",
                              cell(ms.get("pure")), cell(ms.get("C")), "-",
                              verdict({c: m.exit_code == 0 and net_rate(m) / MB >= TARGET_COMPACT_MBPS
                                       for c, m in ms.items()})))
    shutil.rmtree(work, ignore_errors=True)
    log.notes.append("compact: anon = peak anonymous RSS sampled from /proc; the offset map is sized by "
                     "--buffer-size, so anon should track the buffer, not the partition")


def row_spark(b: Bench, log: RowLog) -> None:
    spec = corpus.CORPORA["B"]
    info = corpus.generate(spec, 4 * b.args.scale, b.corpora)  # B's full size is 256 MiB: 1 GiB at scale 1
    pdir = info.log.parent
    tiny = generated_partition(b, "spark-tiny", 200 * GEN_RECORD_BYTES, 100, 1) / "demo-0"
    split = max(MIB, -(-info.bytes // 8))  # 8 tasks at any size, as bench_spark.py's auto split
    log.inputs["spark"] = {"path": str(pdir), "bytes": info.bytes, "records": info.records, "split": split}
    warm(info.log)
    common = ["--query", "summary", "--format", "json", "--quiet", "--split-size", str(split)]
    engines = {"local": ["--engine", "local"], "local[2]": ["--master", "local[2]"]}
    got: dict[str, dict[str, tuple[Measure, Measure]]] = {}
    for engine, opts in engines.items():
        for core in b.cores:
            start = b.run("spark", f"spark-scan {engine} start-up (tiny)", core,
                          b.kt("spark-scan", str(tiny), *opts, *common), 0)
            full = b.run("spark", f"spark-scan {engine} summary", core,
                         b.kt("spark-scan", str(pdir), *opts, *common), info.bytes, info.records)
            got.setdefault(core, {})[engine] = (start, full)

    def after_start(pair: tuple[Measure, Measure]) -> float:
        return pair[1].wall_s - pair[0].wall_s

    ok: dict[str, bool] = {}
    cells: dict[str, str] = {}
    for core, res in got.items():
        local, spark = res["local"], res["local[2]"]
        failed = [m for pair in (local, spark) for m in pair if m.exit_code]
        if failed:
            cells[core] = f"exit {failed[0].exit_code}"
            ok[core] = False
            continue
        if after_start(local) <= 0 or after_start(spark) <= 0:  # noise larger than the work: no ratio
            cells[core] = (f"no ratio: a start-up took longer than the whole run (local[2] {spark[1].wall_s:.1f} s, "
                           f"start-up {spark[0].wall_s:.1f} s; --engine local {local[1].wall_s:.1f} s, start-up "
                           f"{local[0].wall_s:.1f} s)")
            ok[core] = False
            continue
        per_core = after_start(local) / after_start(spark) / 2
        log.inputs.setdefault("per_core_ratio", {})[core] = round(per_core, 3)
        cells[core] = (f"{per_core:.2f}x per core; local[2] {spark[1].wall_s:.1f} s (start-up "
                       f"{spark[0].wall_s:.1f} s), --engine local {local[1].wall_s:.1f} s (start-up "
                       f"{local[0].wall_s:.1f} s); {info.bytes / MB / after_start(spark):.0f} vs "
                       f"{info.bytes / MB / after_start(local):.0f} MB/s; RSS local[2] {rss_text(spark[1])}, "
                       f"local {rss_text(local[1])}")
        ok[core] = per_core >= TARGET_SPARK_PER_CORE and spark[0].wall_s <= TARGET_SPARK_STARTUP_S
    b.add("spark", Line("spark-scan local[2] summary", f"corpus B {_mb(info.bytes)}, {info.records:,} rec",
                        f">= {TARGET_SPARK_PER_CORE:g}x --engine local per core after start-up; "
                        f"start-up <= {TARGET_SPARK_STARTUP_S:g} s",
                        cells.get("pure", "-"), cells.get("C", "-"), "-", verdict(ok)))
    log.notes.append("spark: start-up = the same spark-scan on a 200-record partition; CPU and peak RSS are "
                     "the Python driver's alone (wait4 does not count the JVM, which the driver does not reap), "
                     "the tree RSS sums the JVM and the Python workers in; "
                     "--engine local keeps exact distinct keys per partition (corpus B: every key distinct), "
                     "so its memory follows the keys")


def rss_commands(b: Bench, logs: Path, offsets_root: Path, work: Path) -> list[tuple[str, list[str], Path]]:
    """(name, argv, log dir a `prepare` must copy to `work` or None-equivalent) of each offline command."""
    pdir = logs / "demo-0"
    files = ",".join(str(p) for p in log_files(pdir))
    mirror = logs.parent / "mirror"
    return [
        ("dump-log shallow", b.kt("dump-log", "--files", files), Path()),
        ("dump-log --deep-iteration", b.kt("dump-log", "--files", files, "--deep-iteration"), Path()),
        ("dump-log --print-data-log", b.kt("dump-log", "--files", files, "--print-data-log"), Path()),
        ("index verify", b.kt("index", "verify", "-q", str(pdir)), Path()),
        ("recover --full --dry-run", b.kt("recover", "-q", "--full", "--dry-run", str(logs)), Path()),
        ("recover --full (a copy)", b.kt("recover", "-q", "--full", str(work)), work),
        ("compact (a copy)", b.kt("compact", str(work / "demo-0"), "--quiet", "--now", NOW_MS), work),
        ("offsets --log-dir", b.kt("offsets", "--log-dir", str(offsets_root), "--all-groups", "--quiet"), Path()),
        ("log-dirs", b.kt("log-dirs", str(logs)), Path()),
        ("replicas (2 copies)", b.kt("replicas", "--partition", "demo-0", str(logs), str(mirror)), Path()),
        ("spark-scan --engine local", b.kt("spark-scan", str(pdir), "--engine", "local", "--query", "summary",
                                           "--format", "json", "--quiet"), Path()),
    ]


def hardlink_mirror(logs: Path) -> None:
    """A second replica of the log dir for `replicas`, as hard links (the command only reads)."""
    mirror = logs.parent / "mirror"
    if mirror.exists():
        return
    tmp = logs.parent / "mirror.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    shutil.copytree(logs, tmp, copy_function=os.link)
    tmp.rename(mirror)


def row_rss(b: Bench, log: RowLog) -> None:
    small = int(256 * MIB * b.args.scale)
    sizes = {"s": small, "4s": 4 * small}
    work = b.data / "work" / "rss"
    table: dict[str, dict[str, dict[str, Measure]]] = {}  # command -> size -> core -> measure
    for label, size in sizes.items():
        logs = generated_partition(b, "rss", size, 10_000, 4)
        hardlink_mirror(logs)
        offsets_root = offsets_log(size)
        nbytes = log_bytes(logs / "demo-0")
        log.inputs[f"rss {label}"] = {"path": str(logs), "bytes": nbytes,
                                      "offsets_bytes": log_bytes(offsets_root / "__consumer_offsets-0")}
        warm_dir(logs / "demo-0")
        warm_dir(offsets_root / "__consumer_offsets-0")
        # the recovery walk keeps per-batch and per-index-entry state: ~1 KiB batches show it most
        small_logs, _ = small_batch_segment(b, size)
        warm_dir(small_logs / "bench-0")
        small = [
            ("index verify, ~1 KiB batches", b.kt("index", "verify", "-q", str(small_logs / "bench-0")), Path()),
            ("recover --full --dry-run, ~1 KiB batches",
             b.kt("recover", "-q", "--full", "--dry-run", str(small_logs)), Path()),
        ]
        for name, argv, copy_to in rss_commands(b, logs, offsets_root, work) + small:
            prepare = fresh_copy(logs, copy_to) if copy_to != Path() else None
            nb = log_bytes(offsets_root / "__consumer_offsets-0") if name.startswith("offsets") else nbytes
            if "1 KiB" in name:
                nb = log_bytes(small_logs / "bench-0")
            for core in b.cores:
                m = b.run("rss", f"{name} [{label}]", core, argv, nb, prepare=prepare)
                table.setdefault(name, {}).setdefault(label, {})[core] = m
        shutil.rmtree(work, ignore_errors=True)
    flagged = []
    for name, by_size in table.items():
        cells = {}
        ok = {}
        for core in b.cores:
            s, big = by_size["s"][core], by_size["4s"][core]
            grow_anon = big.peak_anon_mb - s.peak_anon_mb
            grow_file = big.peak_file_mb - s.peak_file_mb
            # anonymous memory must not follow the input; mapped log pages may, up to the release window
            grows = grow_anon > RSS_GROWTH_FLAG_MB or (grow_file > RSS_GROWTH_FLAG_MB
                                                       and big.peak_file_mb > FILE_RSS_BOUND_MB)
            if grows:
                flagged.append(f"{name} ({core}): {s.peak_rss_mb:.0f} -> {big.peak_rss_mb:.0f} MB "
                               f"(anon {s.peak_anon_mb:.0f} -> {big.peak_anon_mb:.0f}, file "
                               f"{s.peak_file_mb:.0f} -> {big.peak_file_mb:.0f})")
            tree = (f", tree {s.peak_tree_mb:.0f} -> {big.peak_tree_mb:.0f}"
                    if max(s.peak_tree_mb - s.peak_rss_mb, big.peak_tree_mb - big.peak_rss_mb) > 5 else "")
            cells[core] = (f"{s.peak_rss_mb:.0f} -> {big.peak_rss_mb:.0f} MB (anon {s.peak_anon_mb:.0f} -> "
                           f"{big.peak_anon_mb:.0f}, file {s.peak_file_mb:.0f} -> {big.peak_file_mb:.0f}{tree})"
                           + (" GROWS" if grows else "")
                           + ("" if not (s.exit_code or big.exit_code) else f" exit {s.exit_code or big.exit_code}"))
            ok[core] = (not grows and big.peak_rss_mb <= TARGET_RSS_MB and s.peak_rss_mb <= TARGET_RSS_MB
                        and not (s.exit_code or big.exit_code))
        some = next(iter(by_size["s"].values()))
        big_any = next(iter(by_size["4s"].values()))
        b.add("rss", Line(f"peak RSS: {name}", f"{_mb(some.bytes)} -> {_mb(big_any.bytes)}",
                          f"<= {TARGET_RSS_MB:g} MB, flat in size", cells.get("pure", "-"), cells.get("C", "-"),
                          "-", verdict(ok)))
    log.inputs["rss_flagged"] = flagged
    log.notes.append(f"rss: s -> 4s peak RSS (wait4) and sampled anonymous/file-backed RSS (tree: summed over "
                     f"the command's processes, where dump-log's workers for files over 32 MiB add theirs); GROWS = anonymous "
                     f"RSS {RSS_GROWTH_FLAG_MB:g} MB more at 4s, or file-backed too and above "
                     f"{FILE_RSS_BOUND_MB:.0f} MB (mapped pages are released every 8 MiB). Inputs: `kafkatool generate` partitions "
                     f"(4 segments each, 10,000 keys) and __consumer_offsets with 50,000 keys at both sizes")


# ---------------------------------------------------------------------------------------------
# the machine, the report
# ---------------------------------------------------------------------------------------------


def machine(b: Bench) -> dict[str, Any]:
    cpu = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        gcc = subprocess.run(["gcc", "--version"], capture_output=True, text=True, timeout=10).stdout.splitlines()[0]
    except (OSError, subprocess.SubprocessError, IndexError):
        gcc = "none"
    core_so = subprocess.run([sys.executable, "-c", "import kafkatool._speedups as s; print(s.__file__)"],
                             capture_output=True, text=True, env=b.env["C"], timeout=60).stdout.strip()
    return {
        "cpu_model": cpu, "cores": os.cpu_count(), "python": sys.version.split()[0],
        "platform": platform.platform(), "gcc": gcc, "commit": git_state(), "kafkatool": b.version,
        "compiled_core": core_so or "not built", "console_script": b.script,
        "kafka": str(b.kafka_home) if b.kafka_home else "stored Kafka 3.3.1 times (benchmarks/corpus.py)",
    }


def markdown(b: Bench, rows: list[str]) -> str:
    head = ["work", "input", "target", "pure Python", "C core", "Kafka", "met?"]
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for row in rows:
        for ln in b.lines.get(row, []):
            cells = [ln.work, ln.input, ln.target, ln.pure, ln.c, ln.kafka, ln.met]
            out.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", default=None,
                    help=f"comma-separated of {','.join(ROWS)} (default all; with --quick all but spark)")
    ap.add_argument("--scale", type=float, default=None,
                    help="fraction of the issue's sizes (default 1.0: 1 GiB, A/B/C full size)")
    ap.add_argument("--quick", action="store_true", help="a smoke test: --scale 0.02 unless given, no spark row")
    ap.add_argument("--data-dir", type=Path, default=corpus.DATA_DIR,
                    help="input cache (default benchmarks/data; offsets inputs stay in bench_offsets.py's)")
    ap.add_argument("--repeat", type=int, default=1, help="runs per command; the fastest is reported")
    ap.add_argument("--json", type=Path, default=None, metavar="FILE", help="write every raw number here")
    ap.add_argument("--kafka-home", default=os.environ.get("KAFKA_HOME") or None,
                    help="a Kafka install whose kafka-dump-log.sh runs in the same run (default $KAFKA_HOME)")
    ap.add_argument("--timeout", type=float, default=3600, help="seconds before one command is killed")
    args = ap.parse_args(argv)
    if args.scale is None:
        args.scale = 0.02 if args.quick else 1.0
    if args.rows is None:  # Spark's JVMs alone take minutes on a busy machine: a smoke test asks for it
        args.rows = ",".join(r for r in ROWS if r != "spark" or not args.quick)
    rows = [r.strip() for r in args.rows.split(",") if r.strip()]
    bad = [r for r in rows if r not in ROWS]
    if bad or not rows:
        ap.error(f"--rows: {','.join(bad) or args.rows!r}: choose from {','.join(ROWS)}")
    if not 0 < args.scale <= 1 or args.repeat < 1:
        ap.error("--scale must be in (0, 1] and --repeat >= 1")
    if args.kafka_home and not (Path(args.kafka_home) / "bin" / "kafka-dump-log.sh").is_file():
        ap.error(f"--kafka-home {args.kafka_home}: no bin/kafka-dump-log.sh")
    bytecode = compile_checkout()  # before anything runs kafkatool: every timed run reads .pyc, as installed
    t0 = time.perf_counter()
    b = Bench(args)
    info = machine(b)
    info["bytecode"] = bytecode
    funcs: dict[str, Callable[[Bench, RowLog], None]] = {
        "dumplog": row_dumplog, "offsets": row_offsets, "verify": row_verify,
        "compact": row_compact, "spark": row_spark, "rss": row_rss,
    }
    # the start-up row always runs first: every other row's "net" figures subtract it
    order = ["startup", *[r for r in ROWS if r in rows and r != "startup"]]
    for row in order:
        log = RowLog(row, os.getloadavg())
        t = time.perf_counter()
        print(f"{row}: load {log.load_before[0]:.2f}", file=sys.stderr)
        if row == "startup":
            row_startup(b)
        else:
            funcs[row](b, log)
        log.seconds = round(time.perf_counter() - t, 1)
        log.load_after = os.getloadavg()
        b.logs.append(log)
    total = time.perf_counter() - t0
    shown = [r for r in order if r in rows]
    print(f"kafkatool issue 14, one run: scale {args.scale:g}, repeat {args.repeat} (fastest shown); "
          f"{info['commit']}; {info['cpu_model']}, {info['cores']} cores; Python {info['python']}; {info['gcc']}; "
          f"{args.kafka_home and 'Kafka measured: ' + args.kafka_home or 'Kafka: stored 3.3.1 times'}; "
          f"{total:.0f} s")
    print(bytecode)
    print("load (1 min) before->after: " + ", ".join(
        f"{lg.row} {lg.load_before[0]:.2f}->{lg.load_after[0]:.2f}" for lg in b.logs))
    print()
    print(markdown(b, shown))
    print()
    print("MB = 10^6 B, GB = 10^9 B; net = wall less that core's start-up row (net of CPU: CPU seconds less "
          "the start-up's), shown when the rest is at least a quarter of the start-up; met? is the C core's (pure's in brackets), on net wall time.")
    for lg in b.logs:
        for note in lg.notes:
            print(f"- {note}")
        for f in lg.inputs.get("rss_flagged", []):
            print(f"- RSS grows with size: {f}")
    failed = [m for m in b.measures if m.exit_code != 0]
    for m in failed:
        print(f"kafkatool: {m.row} {m.what} {m.core}: exit {m.exit_code}: {m.stderr}", file=sys.stderr)
    if args.json:
        doc = {
            "scale": args.scale, "repeat": args.repeat, "rows": shown, "seconds": round(total, 1),
            "machine": info, "startup_s": b.startup, "startup_cpu_s": b.startup_cpu,
            "targets": {"startup_s": TARGET_STARTUP_S, "dumplog_ratio": TARGET_DUMPLOG,
                        "offsets_mb_s": TARGET_OFFSETS_MBPS, "verify_gb_s": TARGET_VERIFY_GBPS,
                        "compact_mb_s": TARGET_COMPACT_MBPS, "spark_per_core": TARGET_SPARK_PER_CORE,
                        "spark_startup_s": TARGET_SPARK_STARTUP_S, "rss_mb": TARGET_RSS_MB},
            "row_log": [asdict(lg) for lg in b.logs],
            "table": {r: [asdict(ln) for ln in b.lines.get(r, [])] for r in shown},
            "measures": [asdict(m) for m in b.measures],
        }
        args.json.write_text(json.dumps(doc, indent=2) + "\n")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
