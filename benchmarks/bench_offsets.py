"""Benchmark `kafkatool offsets`: requests per broker for a wide group, and offline replay speed.

Modes (each the best of --repeat runs):

  online    in this process, against the wire-protocol fake brokers (tests/support/fake_groups):
            one group with --partitions partitions (default 10,000) over --brokers brokers (3).
            Counts the requests each broker received for a describe (DescribeGroups, OffsetFetch,
            ListOffsets) and for the time lag (Fetch), and times both.  Target: one ListOffsets and
            one Fetch per broker, whatever the partition count.
  cli       `kafkatool offsets --bootstrap-server … --group wide` as a subprocess (text, and
            --time-lag), stdout to /dev/null: process start + connect + describe.
  offline   replay of a generated `__consumer_offsets` partition of --size-mb MiB (default 1024;
            validate with 32-128 on a shared machine): MB/s (wall and CPU) and records/s of
            `replay_log_dirs`, and next to it the whole command `kafkatool offsets --log-dir …
            --all-groups --quiet` as a subprocess (start-up, replay, report, rendering to /dev/null):
            MB/s of wall and of CPU (user+sys) and its peak RSS, with both cores in one run (the
            compiled one when built, and pure Python); --formats adds json/csv runs, --progress runs
            without --quiet, --topic-logs puts a `topic-T-P` log next to `__consumer_offsets-0` for
            every partition the groups commit (the report then reads each one's end offset).  The
            distinct keys (--groups x --group-partitions) set the working set: the replay is bound by
            memory accesses to its key tables, so fewer keys run faster.

The offline log is cached in benchmarks/data/offsets-<size>mb/ (gitignored): --groups groups commit
--group-partitions partitions each, 10 partitions per batch (one OffsetCommit request = one batch, as
a coordinator appends it), with a group metadata record per group every round; rounds repeat the
first round's batches with new base offsets (the CRC does not cover the base offset) until the size
is reached.

    python benchmarks/bench_offsets.py --modes online --partitions 10000
    python benchmarks/bench_offsets.py --modes offline --size-mb 32
    python benchmarks/bench_offsets.py --modes offline --size-mb 128 --repeat 3 --formats text,json --topic-logs
    python benchmarks/bench_offsets.py --json > offsets.json
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import struct
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from kafkatool.cluster.groups import BrokerOffsets, KafkaGroups  # noqa: E402
from kafkatool.log.core import load_speedups  # noqa: E402
from kafkatool.log.writer import Record, SegmentWriter, encode_v2_batch  # noqa: E402
from kafkatool.ops import offsets_log  # noqa: E402
from kafkatool.ops import offsets_report as rep  # noqa: E402
from kafkatool.ops.offsets_log import replay_log_dirs  # noqa: E402
from tests.support.fake_groups import FakeKafkaCluster, FakeMember, encode_consumer_assignment  # noqa: E402

DATA = REPO / "benchmarks" / "data"
MiB = 1024 * 1024


@dataclass
class Row:
    mode: str
    what: str
    seconds: float
    size: int
    unit: str
    requests: dict[str, dict[int, int]] = field(default_factory=dict)
    rate: str = ""

    @property
    def ok(self) -> bool | None:
        if self.what in ("describe", "time-lag"):
            return all(all(n == 1 for n in per.values()) for api, per in self.requests.items()
                       if api in ("ListOffsets", "Fetch"))
        return None


def best(repeat: int, fn: Any) -> tuple[float, Any]:
    times, result = [], None
    for _ in range(repeat):
        t = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t)
    return min(times), result


# -- online -------------------------------------------------------------------------------------------


def wide_cluster(partitions: int, brokers: int) -> FakeKafkaCluster:
    c = FakeKafkaCluster(brokers=brokers).start()
    c.add_topic("wide-topic", partitions, log_end=1000)
    members = [FakeMember(f"consumer-{i}", f"client-{i}", "/10.0.0.1", [("wide-topic", p) for p in range(i, partitions, 8)])
               for i in range(8)]
    c.add_group("wide", state="Stable", protocol="range", members=members,
                offsets={("wide-topic", p): (p % 997, "") for p in range(partitions)})
    return c


def bench_online(partitions: int, brokers: int, repeat: int) -> list[Row]:
    rows = []
    c = wide_cluster(partitions, brokers)
    try:
        bo = BrokerOffsets.connect(c.bootstrap, timeout=120)
        kg = KafkaGroups(bo)
        try:
            rep.gather_kafka(kg, bo, ["wide"])  # warm: connections, metadata
            c.requests.clear()
            c.busy_seconds = 0.0
            secs, reports = best(repeat, lambda: rep.gather_kafka(kg, bo, ["wide"]))
            fake = c.busy_seconds / repeat
            per = {api: {n: k // repeat for n, k in c.count(api).items()} for api in ("DescribeGroups", "OffsetFetch", "ListOffsets")}
            assert len(reports[0].rows) == partitions
            rows.append(Row("online", "describe", secs, partitions, "partitions", per,
                            f"{partitions / secs:,.0f} partitions/s (fake brokers busy {fake:.2f} s of it)"))
            rep.add_time_lag(reports, bo, int(time.time() * 1000))  # warm the fake's batch cache
            c.requests.clear()
            c.busy_seconds = 0.0
            secs, _ = best(repeat, lambda: rep.add_time_lag(reports, bo, int(time.time() * 1000)))
            fake = c.busy_seconds / repeat
            per = {"Fetch": {n: k // repeat for n, k in c.count("Fetch").items()}}
            rows.append(Row("online", "time-lag", secs, partitions, "partitions", per,
                            f"{partitions / secs:,.0f} partitions/s (fake brokers busy {fake:.2f} s of it)"))
        finally:
            bo.close()
    finally:
        c.stop()
    return rows


def bench_cli(partitions: int, brokers: int, repeat: int) -> list[Row]:
    rows = []
    c = wide_cluster(partitions, brokers)
    try:
        for what, extra in (("cli-describe", []), ("cli-time-lag", ["--time-lag"])):
            cmd = [sys.executable, "-m", "kafkatool", "offsets", "--bootstrap-server", c.bootstrap, "--group", "wide",
                   "--timeout", "120", *extra]

            def run(cmd: list[str] = cmd) -> None:
                subprocess.run(cmd, stdout=subprocess.DEVNULL, check=True, timeout=600)

            secs, _ = best(repeat, run)
            rows.append(Row("cli", what, secs, partitions, "partitions"))
    finally:
        c.stop()
    return rows


# -- offline ------------------------------------------------------------------------------------------


def _s(v: str) -> bytes:
    b = v.encode()
    return struct.pack(">h", len(b)) + b


def offline_log(size_mb: int, groups: int, group_partitions: int) -> Path:
    """A cached `__consumer_offsets-0` of about size_mb MiB (see the module docstring)."""
    root = DATA / f"offsets-{size_mb}mb-{groups}g-{group_partitions}p"
    pdir = root / "__consumer_offsets-0"
    done = root / ".complete"
    if done.exists():
        return root
    pdir.mkdir(parents=True, exist_ok=True)
    for f in pdir.iterdir():
        f.unlink()
    ts = 1_700_000_000_000
    template: list[tuple[bytes, int]] = []  # (batch bytes, record count)
    offset = 0
    for g in range(groups):
        group = f"group-{g:05d}"
        assignment = encode_consumer_assignment([(f"topic-{g % 50}", p) for p in range(group_partitions)])
        value = (struct.pack(">h", 3) + _s("consumer") + struct.pack(">i", 1) + _s("range") + _s("m-0")
                 + struct.pack(">qi", ts, 1) + _s("m-0") + struct.pack(">h", -1) + _s("client") + _s("/10.0.0.1")
                 + struct.pack(">ii", 300000, 10000) + struct.pack(">i", 10) + b"\x00" * 10
                 + struct.pack(">i", len(assignment)) + assignment)
        key = struct.pack(">h", 2) + _s(group)
        template.append((encode_v2_batch([Record(offset, ts, key, value, (), -1, None, True)], offset), 1))
        offset += 1
        for start in range(0, group_partitions, 10):
            recs: list[Record] = []
            for p in range(start, min(start + 10, group_partitions)):
                k = struct.pack(">h", 1) + _s(group) + _s(f"topic-{g % 50}") + struct.pack(">i", p)
                v = struct.pack(">hqi", 3, 1000 + p, -1) + _s("") + struct.pack(">q", ts)
                recs.append(Record(offset + len(recs), ts, k, v, (), -1, None, True))
            template.append((encode_v2_batch(recs, offset), len(recs)))
            offset += len(recs)
    writer = SegmentWriter(pdir, 0, 4096)
    segment_bytes = 1024 * MiB
    written = 0
    base = 0
    while written < size_mb * MiB:
        for data, n in template:
            if writer.size + len(data) > segment_bytes:
                writer.close()
                writer = SegmentWriter(pdir, base, 4096)
            patched = struct.pack(">q", base) + data[8:]
            writer.append(patched, base + n - 1, ts, base + n - 1)
            base += n
            written += len(data)
    writer.close()
    done.write_text(json.dumps({"bytes": written, "records": base}))
    return root


def add_topic_logs(root: Path, groups: int, group_partitions: int) -> int:
    """`topic-T-P` partition dirs next to `__consumer_offsets-0`, one small batch each ending at offset
    2000 + P, so the report reads a log-end offset (and prints a lag) for every row.  Returns the count."""
    ts = 1_700_000_000_000
    made = 0
    for t in range(min(groups, 50)):
        for p in range(group_partitions):
            pdir = root / f"topic-{t}-{p}"
            made += 1
            if pdir.is_dir():
                continue
            base = 1999 + p
            writer = SegmentWriter(pdir, base, 4096)
            writer.append(encode_v2_batch([Record(base, ts, b"k", b"v", (), -1, None, True)], base), base, ts, base)
            writer.close()
    return made


def _replay_with(core: Any, root: Path) -> Any:
    """replay_log_dirs with the given core (the module's choice, or None for the pure-Python path)."""
    saved = offsets_log.speedups
    offsets_log.speedups = core
    try:
        return replay_log_dirs([root])
    finally:
        offsets_log.speedups = saved


def bench_offline(size_mb: int, groups: int, group_partitions: int, repeat: int, formats: list[str] | None = None,
                  progress: bool = False, topic_logs: bool = False, pure: bool = True) -> list[Row]:
    """Both cores in one run: the replay in-process (wall and CPU time: the machine is shared) and the
    whole command as a subprocess (KAFKATOOL_PURE_PYTHON=1 for the pure-Python one), run from
    benchmarks/data so the working directory cannot shadow the package on PYTHONPATH."""
    formats = formats or ["text"]
    t = time.perf_counter()
    root = offline_log(size_mb, groups, group_partitions)
    gen = time.perf_counter() - t
    info = json.loads((root / ".complete").read_text())
    size = info["bytes"]
    rows = []
    cores = [("C", load_speedups())] if load_speedups() is not None else []
    # the whole command first: a child's peak RSS counts the pages of this process at the fork, which
    # is smallest before the in-process replays below
    whole_root = with_topic_logs(root, groups, group_partitions) if topic_logs else root
    floor = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    variants = [(fmt, True) for fmt in formats] + ([(formats[0], False)] if progress else [])
    whole = []
    for name, env in ([("C", {})] if cores else []) + ([("pure", {"KAFKATOOL_PURE_PYTHON": "1"})] if pure else []):
        for fmt, quiet in variants:
            cmd = [sys.executable, "-m", "kafkatool", "offsets", "--log-dir", str(whole_root), "--all-groups",
                   "--format", fmt] + (["--quiet"] if quiet else [])
            path = os.pathsep.join([str(REPO)] + ([os.environ["PYTHONPATH"]] if os.environ.get("PYTHONPATH") else []))
            full_env = {**os.environ, "PYTHONPATH": path, **env}  # this tree's package, not an installed one
            best_run = min((run_measured(cmd, full_env) for _ in range(repeat)), key=lambda r: r[0])
            secs, cpu, rss = best_run
            what = f"whole-{name}-{fmt}" + ("" if quiet else "-progress")
            whole.append(Row("offline", what, secs, size, "bytes",
                             rate=f"{size / secs / 1e6:,.1f} MB/s ({size / cpu / 1e6:,.1f} MB/s of CPU, "
                                  f"{cpu:.2f} CPU-s), peak RSS {rss / 1e6:,.0f} MB (floor {floor / 1e6:,.0f})"))
    for name, core in cores + ([("pure", None)] if pure else []):
        runs = []
        for _ in range(repeat):
            t, c = time.perf_counter(), time.process_time()
            st = _replay_with(core, root)
            runs.append((time.perf_counter() - t, time.process_time() - c))
        secs, cpu = min(runs)
        assert len(st.group_ids()) == groups and not st.problems
        rows.append(Row("offline", f"replay-{name}", secs, size, "bytes",
                        rate=f"{size / secs / 1e6:,.1f} MB/s ({size / cpu / 1e6:,.1f} MB/s of CPU), "
                             f"{st.records_read / secs:,.0f} records/s, {len(st.offsets):,} keys "
                             f"(log generated in {gen:.1f} s)"))
    return rows + whole


def run_measured(cmd: list[str], env: dict[str, str]) -> tuple[float, float, int]:
    """(wall seconds, CPU seconds user+sys, peak RSS bytes) of one run of cmd, its output to /dev/null."""
    t = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=DATA, env=env)
    _, status, usage = os.wait4(p.pid, 0)
    secs = time.perf_counter() - t
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode not in (0, 1):
        raise RuntimeError(f"{' '.join(cmd)}: exit {p.returncode}")
    return secs, usage.ru_utime + usage.ru_stime, usage.ru_maxrss * 1024


def with_topic_logs(root: Path, groups: int, group_partitions: int) -> Path:
    """A log dir holding the cached `__consumer_offsets-0` (linked) and the groups' topic logs."""
    dst = root.with_name(root.name + "-topics")
    dst.mkdir(exist_ok=True)
    link = dst / "__consumer_offsets-0"
    if not link.exists():
        link.symlink_to(root / "__consumer_offsets-0")
    add_topic_logs(dst, groups, group_partitions)
    return dst


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--modes", default="online,cli,offline")
    ap.add_argument("--partitions", type=int, default=10_000)
    ap.add_argument("--brokers", type=int, default=3)
    ap.add_argument("--size-mb", type=int, default=1024, help="offline: size of the __consumer_offsets log")
    ap.add_argument("--groups", type=int, default=500)
    ap.add_argument("--group-partitions", type=int, default=100)
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--formats", default="text", help="offline: --format of the whole-command runs (text,json,csv)")
    ap.add_argument("--progress", action="store_true", help="offline: also a whole-command run without --quiet")
    ap.add_argument("--topic-logs", action="store_true", help="offline: a topic log per committed partition")
    ap.add_argument("--no-pure", action="store_true", help="offline: the compiled core only (large logs)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    rows: list[Row] = []
    if "online" in modes:
        rows += bench_online(args.partitions, args.brokers, args.repeat)
    if "cli" in modes:
        rows += bench_cli(args.partitions, args.brokers, args.repeat)
    if "offline" in modes:
        rows += bench_offline(args.size_mb, args.groups, args.group_partitions, args.repeat,
                              [f.strip() for f in args.formats.split(",") if f.strip()], args.progress, args.topic_logs,
                              not args.no_pure)
    if args.json:
        print(json.dumps([asdict(r) | {"ok": r.ok} for r in rows], indent=2))
        return 0
    for r in rows:
        reqs = "; ".join(f"{api} " + ",".join(f"b{n}:{k}" for n, k in sorted(per.items())) for api, per in r.requests.items())
        ok = "" if r.ok is None else ("  [one per broker: ok]" if r.ok else "  [NOT batched]")
        print(f"{r.mode:8} {r.what:22} {r.seconds:8.2f} s  {r.size:>13,} {r.unit:10} {r.rate}{('  ' + reqs) if reqs else ''}{ok}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
