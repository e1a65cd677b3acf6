"""Fault injection for offline writers: kill a kafkatool command at every step and check the directory.

A command's steps are the `crash_point(...)` names it passes (kafkatool.ops.safety).  The harness runs
the command once on a copy with `KAFKATOOL_CRASH_TRACE` to list them, then, for every occurrence of
every step (`step@n`), runs it on a fresh copy with `KAFKATOOL_CRASH_AT=step@n` (the process exits
with status 99 right there, no cleanup) and checks the directory it left:

* it loads: after the broker's start-up resolution of interrupted swaps (`finish_interrupted_swaps`)
  no temporary file is left, every segment's log walks without a framing error up to where it did
  before, and every index file passes the broker's sanity check;
* nothing the finished command keeps is lost: every batch of the reference result (the command run
  to completion on another copy) is still there, byte for byte, at its offset;
* a re-run converges: running the command again (in-process, via `rerun`) gives the reference result
  exactly (`.log`/`.index`/`.timeindex`/`.txnindex` bytes).

Reusable by any offline writer (recover, compact, index rebuild): pass the command's argument list as a
function of the working copy.  The killed runs are forked children of the test process (cheap: no
interpreter start-up); `run_kafkatool` runs a real subprocess for CLI tests.

    result = crash_matrix(src_log_dir, lambda d: ["recover", str(d)], rerun=lambda d: recover(d, opts))
    assert not result.failures, result.report()
"""

from __future__ import annotations

import hashlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from kafkatool.log.errors import CorruptIndexError
from kafkatool.log.files import (
    CLEANED_SUFFIX,
    DELETED_SUFFIX,
    SWAP_SUFFIX,
    MappedFile,
    list_partition_dirs,
    list_segments,
    parse_partition_dir,
)
from kafkatool.log.index import OffsetIndex, TimeIndex
from kafkatool.log.records import BatchScan
from kafkatool.ops.safety import (
    CRASH_ENV,
    CRASH_EXIT,
    CRASH_TRACE_ENV,
    INTERRUPT_ENV,
    finish_interrupted_swaps,
)
from tests.support.ctrl_c import KAFKATOOL_CTRL_C

SEGMENT_FILES = (".log", ".index", ".timeindex", ".txnindex")
INTERRUPTED_EXIT = 130  # what every command exits with on SIGINT


def copy_tree(src: Path, dst: Path) -> Path:
    """Copy a log dir or partition dir (writable, even from read-only fixtures)."""
    shutil.copytree(src, dst, copy_function=shutil.copyfile)
    for root, dirs, files in os.walk(dst):
        for n in dirs + files:
            os.chmod(os.path.join(root, n), 0o755 if n in dirs else 0o644)
    return dst


def run_kafkatool(
    args: list[str], env: dict[str, str] | None = None, timeout: float = 120
) -> subprocess.CompletedProcess:
    """`python -m kafkatool ARGS` in a subprocess (text output)."""
    full_env = dict(os.environ)
    full_env.pop(CRASH_ENV, None)
    full_env.pop(CRASH_TRACE_ENV, None)
    full_env.update(env or {})
    return subprocess.run(
        [*KAFKATOOL_CTRL_C, *args],  # interrupted at steps: Ctrl-C must reach it (tests.support.cli)
        capture_output=True,
        text=True,
        env=full_env,
        timeout=timeout,
    )


def run_forked(args: list[str], env: dict[str, str] | None = None) -> int:
    """Run `kafkatool ARGS` in a forked child of this process and return its exit status.

    Much cheaper than a new interpreter (no start-up, no imports), which matters when a command is
    killed at dozens of steps.  The child's output goes to /dev/null.
    """
    from kafkatool.cli import main as cli_main

    cli_main.load_commands()  # imported once here, not in every child
    pid = os.fork()
    if pid == 0:  # the child: never returns
        code = 70
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, 1)
            os.dup2(devnull, 2)
            # Ctrl-C as in a terminal, whatever this test process inherited (a background job ignores it)
            signal.signal(signal.SIGINT, signal.default_int_handler)
            for k in (CRASH_ENV, CRASH_TRACE_ENV, INTERRUPT_ENV):
                os.environ.pop(k, None)
            os.environ.update(env or {})
            sys.argv = ["kafkatool", *args]
            try:
                cli_main.run()
                code = 0
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else 1
        finally:
            os._exit(code)
    _pid, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)


def partition_dirs(path: Path) -> list[Path]:
    """The partition dirs of a log dir, or [path] for a partition dir."""
    if parse_partition_dir(path.name) and any(n.endswith(".log") for n in os.listdir(path)):
        return [path]
    return list_partition_dirs(path)


def batches_by_offset(path: Path) -> dict[tuple[str, int], str]:
    """(partition, last offset) -> sha1 of the batch bytes, for every batch that walks cleanly."""
    out: dict[tuple[str, int], str] = {}
    for d in partition_dirs(path):
        for seg in list_segments(d):
            with MappedFile(seg.log) as mf:
                for b in BatchScan(mf.buf):
                    out[(d.name, b.last_offset)] = hashlib.sha1(mf.buf[b.position : b.end]).hexdigest()
    return out


def segment_bytes(path: Path) -> dict[str, str]:
    """relative path -> sha1 of every segment file (.log/.index/.timeindex/.txnindex) under path."""
    out = {}
    for d in partition_dirs(path):
        for n in sorted(os.listdir(d)):
            if n.endswith(SEGMENT_FILES):
                out[f"{d.name}/{n}"] = hashlib.sha1((d / n).read_bytes()).hexdigest()
    return out


def check_loadable(path: Path, baseline: dict[str, str] | None = None) -> list[str]:
    """Problems loading path after the broker's start-up resolution of swaps ([] = none).

    Index files are held to the broker's sanity check unless they are unchanged from `baseline`
    (segment_bytes of the input: damage the command was given is not the command's doing).
    """
    problems = []
    for d in partition_dirs(path):
        finish_interrupted_swaps(d)
        for n in os.listdir(d):
            if n.endswith((CLEANED_SUFFIX, SWAP_SUFFIX, DELETED_SUFFIX)):
                problems.append(f"{d.name}/{n}: temporary file left after swap resolution")
        for seg in list_segments(d):
            with MappedFile(seg.log) as mf:
                for _b in BatchScan(mf.buf):  # our reader walks every segment without raising
                    pass
            for cls, p in ((OffsetIndex, seg.index), (TimeIndex, seg.timeindex)):
                rel = f"{d.name}/{p.name}"
                if (
                    baseline is not None
                    and p.exists()
                    and baseline.get(rel) == hashlib.sha1(p.read_bytes()).hexdigest()
                ):
                    continue
                if p.exists():
                    try:
                        cls(p.read_bytes(), seg.base_offset, p).sanity_check()
                    except CorruptIndexError as exc:
                        problems.append(f"{d.name}/{p.name}: {exc}")
    return problems


@dataclass
class CrashResult:
    steps: list[str] = field(default_factory=list)  # every step@n that was crashed at
    failures: list[str] = field(default_factory=list)

    def report(self) -> str:
        return "\n".join(self.failures)


def trace_steps(src: Path, args_for: Callable[[Path], list[str]], workdir: Path) -> list[str]:
    """Run the command once on a copy and return the crash points it passes, as step@n."""
    work = copy_tree(src, workdir / "trace")
    trace = workdir / "trace.steps"
    code = run_forked(args_for(work), {CRASH_TRACE_ENV: str(trace)})
    if code not in (0, 1):
        raise AssertionError(f"traced run failed with exit code {code}")
    seen: dict[str, int] = {}
    out = []
    for step in trace.read_text().split() if trace.exists() else []:
        seen[step] = seen.get(step, 0) + 1
        out.append(f"{step}@{seen[step]}")
    return out


def crash_matrix(
    src: Path,
    args_for: Callable[[Path], list[str]],
    rerun: Callable[[Path], object],
    steps: list[str] | None = None,
    extra_check: Callable[[Path], list[str]] | None = None,
    interrupt: bool = False,
) -> CrashResult:
    """Kill the command at every step on fresh copies of src and check what each kill left.

    With `interrupt`, each run gets a SIGINT at the step instead (`KAFKATOOL_INTERRUPT_AT`) and must
    exit 130 after its own clean-up; the checks are the same.

    `args_for(copy)` gives the kafkatool arguments for a working copy; `rerun(copy)` finishes the job
    after a crash (in-process, e.g. the library call the command makes).  `extra_check(copy)` may add
    command-specific problems.  The runs are forked children of this process (`run_forked`).
    """

    res = CrashResult()
    with tempfile.TemporaryDirectory(prefix="kt-faults-") as tmp:
        tmpd = Path(tmp)
        ref = copy_tree(src, tmpd / "reference")
        code = run_forked(args_for(ref))
        if code not in (0, 1):
            res.failures.append(f"reference run failed with exit code {code}")
            return res
        ref_batches = batches_by_offset(ref)
        ref_bytes = segment_bytes(ref)
        src_bytes = segment_bytes(src)
        if steps is None:
            steps = trace_steps(src, args_for, tmpd)
        for i, step in enumerate(steps):
            work = copy_tree(src, tmpd / f"crash-{i}")
            env, expected = (INTERRUPT_ENV, INTERRUPTED_EXIT) if interrupt else (CRASH_ENV, CRASH_EXIT)
            code = run_forked(args_for(work), {env: step})
            res.steps.append(step)
            if code != expected:
                res.failures.append(f"{step}: expected exit {expected}, got {code}")
                continue
            res.failures.extend(f"{step}: {p}" for p in check_loadable(work, src_bytes))
            have = batches_by_offset(work)
            missing = [k for k, h in ref_batches.items() if have.get(k) != h]
            if missing:
                res.failures.append(
                    f"{step}: {len(missing)} batches of the final result are missing or differ"
                )
            if extra_check is not None:
                res.failures.extend(f"{step}: {p}" for p in extra_check(work))
            rerun(work)
            got = segment_bytes(work)
            if got != ref_bytes:
                diff = sorted(k for k in set(got) | set(ref_bytes) if got.get(k) != ref_bytes.get(k))
                res.failures.append(f"{step}: re-run does not converge to the reference: {', '.join(diff)}")
            shutil.rmtree(work, ignore_errors=True)
    return res


def write_partition(
    partition_dir: Path,
    segments: list[int],
    records_per_batch: int = 5,
    value_size: int = 60,
    first_offset: int = 0,
    leader_epoch: Callable[[int], int] | None = None,
    t0: int = 1_700_000_000_000,
    index_interval: int = 4096,
) -> list[tuple[int, int]]:
    """Write a partition of v2 data with the project's writer: `segments[i]` batches in segment i.

    Record o has key `k<o>`, a value of `value_size` bytes derived from o and timestamp t0 + o; the
    batch at base offset b gets leader epoch `leader_epoch(b)` (0 by default).  Returns (base offset,
    last offset) per segment.
    """
    from kafkatool.log.record import Record
    from kafkatool.log.writer import SegmentWriter, encode_v2_batch

    off = first_offset
    out = []
    for n_batches in segments:
        base = off
        w = SegmentWriter(partition_dir, base, index_interval)
        for _ in range(n_batches):
            recs = [
                Record(o, t0 + o, b"k%d" % o, (b"v%d-" % o * value_size)[:value_size], ())
                for o in range(off, off + records_per_batch)
            ]
            last = off + records_per_batch - 1
            ple = leader_epoch(off) if leader_epoch else 0
            w.append(encode_v2_batch(recs, partition_leader_epoch=ple), last, t0 + last, last)
            off += records_per_batch
        w.close()
        out.append((base, off - 1))
    return out
