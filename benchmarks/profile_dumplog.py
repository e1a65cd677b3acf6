"""Where `kafkatool dump-log` spends its time: top functions and lines by own time, with percentages.

With py-spy installed (`pip install py-spy`) the real command is sampled as a subprocess, startup
included, at low overhead; the report groups samples by function and by source line and splits
startup (imports, option parsing) from the dump itself.  Without py-spy, or with
`--profiler cprofile`, the library call `dump_files` is profiled in-process with cProfile, which
inflates the cost of small functions.

    python benchmarks/profile_dumplog.py --corpus A,C --scale 0.05 --modes deep,print
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import re
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

try:
    from benchmarks import corpus
except ImportError:  # run as a script: benchmarks/ itself is on sys.path
    import corpus  # type: ignore[no-redef]

MODE_FLAGS = {"shallow": [], "deep": ["--deep-iteration"], "print": ["--print-data-log"]}
_FRAME = re.compile(r"^(?P<func>.*) \((?P<file>.*?)(?::(?P<line>\d+))?\)$")
_STARTUP_MARKERS = ("_find_and_load", "load_commands")


def _short(file: str) -> str:
    for marker in ("site-packages/", "/kafkatool/"):
        if marker in file:
            return ("kafkatool/" if marker == "/kafkatool/" else "") + file.split(marker, 1)[1]
    return file


@dataclass
class Samples:
    """py-spy samples of one run: dump-phase own time by function and by line, startup by import."""

    total: int = 0
    startup: int = 0
    by_func: Counter = field(default_factory=Counter)
    by_line: Counter = field(default_factory=Counter)
    startup_by_import: Counter = field(default_factory=Counter)


def _top_import(frames: list[str]) -> str:
    """The outermost non-kafkatool module being imported in a startup stack ("typer", "pydantic"...)."""
    for f in frames:
        m = _FRAME.match(f)
        if m and m["func"] == "<module>" and not m["file"].startswith(("kafkatool/", "<")):
            path = _short(m["file"])
            if not path.startswith("kafkatool/"):
                return path.split("/", 1)[0].removesuffix(".py")
    for f in frames:
        m = _FRAME.match(f)
        if m and m["func"] == "<module>" and "kafkatool/" in m["file"] and "__main__" not in m["file"]:
            return _short(m["file"])
    return "interpreter, option parsing"


def pyspy_profile(log: Path, mode: str, rate: int) -> Samples:
    """Sample `kafkatool dump-log` in `mode` on `log` with py-spy."""
    with tempfile.TemporaryDirectory() as tmp:
        raw = Path(tmp) / "profile.txt"
        argv = [
            "py-spy",
            "record",
            "--nonblocking",
            "--rate",
            str(rate),
            "--format",
            "raw",
            "--output",
            str(raw),
            "--",
            sys.executable,
            "-m",
            "kafkatool",
            "dump-log",
            "--files",
            str(log),
            *MODE_FLAGS[mode],
        ]
        with open(os.devnull, "wb") as devnull:
            subprocess.run(argv, stdout=devnull, stderr=subprocess.PIPE, check=True, timeout=3600)
        lines = raw.read_text().splitlines()
    out = Samples()
    for line in lines:
        stack, _, count_s = line.rpartition(" ")
        if not stack or not count_s.isdigit():
            continue
        count = int(count_s)
        frames = stack.split(";")
        out.total += count
        if any(m in f for f in frames for m in _STARTUP_MARKERS) or not any(
            "dump_files" in f for f in frames
        ):
            out.startup += count
            out.startup_by_import[_top_import(frames)] += count
            continue
        m = _FRAME.match(frames[-1])
        if m is None:
            out.by_func[frames[-1]] += count
            out.by_line[frames[-1]] += count
            continue
        file = _short(m["file"])
        out.by_func[f"{m['func']} ({file})"] += count
        out.by_line[f"{file}:{m['line']} {m['func']}"] += count
    return out


def cprofile_profile(log: Path, mode: str, top: int) -> str:
    from kafkatool.ops.dumplog import DumpOptions, dump_files

    opts = DumpOptions(deep_iteration=mode != "shallow", print_data_log=mode == "print")
    prof = cProfile.Profile()
    with open(os.devnull, "wb") as out, open(os.devnull, "wb") as err:
        prof.runcall(dump_files, [str(log)], opts, out, err)
    stream = io.StringIO()
    stats = pstats.Stats(prof, stream=stream)
    total = stats.total_tt  # type: ignore[attr-defined]
    rows = sorted(stats.stats.items(), key=lambda kv: kv[1][2], reverse=True)[:top]  # type: ignore[attr-defined]
    out_lines = [f"  total {total:.3f} s (cProfile, in-process, no startup)"]
    for (file, line, func), (_cc, ncalls, tottime, cumtime, _callers) in rows:
        out_lines.append(
            f"  {100 * tottime / total:5.1f}%  own {tottime:6.3f} s  cum {cumtime:6.3f} s  {ncalls:>9}  "
            f"{func} ({_short(file)}:{line})"
        )
    return "\n".join(out_lines)


def report_pyspy(s: Samples, top: int) -> str:
    dump = max(s.total - s.startup, 1)
    out = [
        f"  {s.total} samples; startup (imports, option parsing) {100 * s.startup / max(s.total, 1):.1f}%, "
        f"dump {100 * (s.total - s.startup) / max(s.total, 1):.1f}%"
    ]
    out.append("  dump phase by function (own time, % of dump phase):")
    for name, n in s.by_func.most_common(top):
        out.append(f"    {100 * n / dump:5.1f}%  {name}")
    out.append("  dump phase by line (own time, % of dump phase):")
    for name, n in s.by_line.most_common(top):
        out.append(f"    {100 * n / dump:5.1f}%  {name}")
    out.append("  startup by package imported first (cumulative, % of startup):")
    for name, n in s.startup_by_import.most_common(8):
        out.append(f"    {100 * n / max(s.startup, 1):5.1f}%  {name}")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", default="A,B,C", help="comma-separated corpora (A,B,C)")
    ap.add_argument("--scale", type=float, default=0.05, help="fraction of full size (default 0.05)")
    ap.add_argument("--modes", default="deep,print", help="comma-separated of shallow,deep,print")
    ap.add_argument("--profiler", choices=("auto", "py-spy", "cprofile"), default="auto")
    ap.add_argument("--rate", type=int, default=500, help="py-spy samples per second")
    ap.add_argument("--top", type=int, default=15)
    ap.add_argument("--data-dir", type=Path, default=corpus.DATA_DIR)
    args = ap.parse_args(argv)
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    if not modes or any(m not in MODE_FLAGS for m in modes):
        raise SystemExit(f"modes: {args.modes!r}: choose from {','.join(MODE_FLAGS)}")
    profiler = args.profiler
    if profiler == "auto":
        profiler = "py-spy" if shutil.which("py-spy") else "cprofile"
    elif profiler == "py-spy" and not shutil.which("py-spy"):
        raise SystemExit("py-spy: not installed (pip install py-spy), or use --profiler cprofile")
    for spec in corpus.parse_corpora(args.corpus):
        info = corpus.generate(spec, args.scale, args.data_dir)
        for mode in modes:
            print(f"== {info.name} {mode} ({info.bytes / 1e6:.1f} MB, {info.records:,} records, {profiler})")
            if profiler == "py-spy":
                print(report_pyspy(pyspy_profile(info.log, mode, args.rate), args.top))
            else:
                print(cprofile_profile(info.log, mode, args.top))
            sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
