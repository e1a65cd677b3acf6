"""`compact` killed at every step of Kafka's swap protocol leaves a directory a broker loads.

Uses the shared harness's pieces (`tests/support/faults.py`): each run is killed with
`KAFKATOOL_CRASH_AT`, and the directory it leaves goes through the broker's start-up resolution of
interrupted swaps.  Its own `crash_matrix` wants every batch of the finished result present after any
kill, which fits `recover` (it only truncates) but not compaction, where a kill before a group's swap
rightly leaves that group's original batches; so here every batch must be either the original or the
cleaned one, what readers see (the latest record of every key) must not change, and running compact
again must give the uninterrupted result byte for byte.

The log is built so that regrouping cannot happen after a partial run (every segment keeps more than
half of `segment.bytes`, so no two fit one group): otherwise a re-run would legitimately merge the
already cleaned segments differently from an uninterrupted run, exactly as the broker's cleaner would.
"""

from __future__ import annotations

import hashlib
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from kafkatool.log.codecs import Codec
from kafkatool.log.files import MappedFile, list_segments
from kafkatool.log.records import BatchScan
from kafkatool.ops.compact import CompactConfig, compact_partition
from kafkatool.ops.safety import CRASH_ENV, CRASH_EXIT, INTERRUPT_ENV
from tests.support.faults import batches_by_offset, check_loadable, copy_tree, run_kafkatool, trace_steps
from tests.support.faults import segment_bytes as segment_bytes_of
from tests.test_compact import NOW, BatchSpec, build_log, read_log


def _segments() -> list[list[BatchSpec]]:
    segs = []
    for i in range(3):
        keys = [b"seg%d-key%d" % (i, j) for j in range(12)]
        own = [(k, hashlib.sha256(k).digest() * 2) for k in keys]  # incompressible values
        segs.append([
            BatchSpec(own[:6] + [(b"shared", b"%d" % i), (b"gone%d" % i, None)]),
            BatchSpec(own[6:] + [(b"shared", b"%d" % i)], codec=Codec.GZIP),
        ])
    segs.append([BatchSpec([(b"shared", b"last")])])
    return segs


def _latest_view(d: Path) -> dict[bytes, tuple[int, bytes | None]]:
    view: dict[bytes, tuple[int, bytes | None]] = {}
    for off, key, value in read_log(d)[0]:
        if key is not None:
            view[key] = (off, value)
    return view


def _check_segments(d: Path) -> list[str]:
    """Segments in order, none reaching into the next one's offsets."""
    problems = []
    segs = list_segments(d)
    for i, seg in enumerate(segs):
        nxt = segs[i + 1].base_offset if i + 1 < len(segs) else 2**63
        with MappedFile(seg.log) as mf:
            for b in BatchScan(mf.buf):
                if not seg.base_offset <= b.base_offset <= b.last_offset < nxt:
                    problems.append(f"{seg.log.name}: batch {b.base_offset}..{b.last_offset} outside its segment")
    return problems


@pytest.mark.parametrize("env, expected", [(CRASH_ENV, CRASH_EXIT), (INTERRUPT_ENV, 130)], ids=["kill", "ctrl-c"])
def test_a_kill_at_any_step_leaves_a_loadable_directory(tmp_path, env, expected):
    src = tmp_path / "src" / "faulty-0"
    build_log(src, _segments())
    expected_view = _latest_view(src)
    sizes = [p.stat().st_size for p in sorted(src.iterdir()) if p.suffix == ".log"][:-1]
    segment_bytes = max(sizes) * 3 // 2  # every segment fits; no two fit, even after cleaning
    cleaned = sizes[0] - 2 * 100  # at most a shared record and a tombstone go from each segment
    assert 2 * cleaned > segment_bytes
    settings = f"segment.bytes={segment_bytes},delete.retention.ms=60000"
    cfg = CompactConfig(segment_bytes=segment_bytes, delete_retention_ms=60_000)

    def args(d: Path) -> list[str]:
        return ["compact", str(d / "faulty-0"), "--config", settings, "--now", str(NOW), "--quiet"]

    ref = copy_tree(src.parent, tmp_path / "reference")
    assert run_kafkatool(args(ref)).returncode == 0
    original, finished = batches_by_offset(src.parent), batches_by_offset(ref)
    assert original != finished
    steps = trace_steps(src.parent, args, tmp_path)
    # every step of the swap protocol in the first group (a kill at deleted-removed@1 is also the kill
    # between two groups: the first is swapped, the others and the checkpoint are not)
    chosen = sorted({s.split("@")[0] + "@1" for s in steps})
    assert chosen == ["cleaned-written@1", "deleted-removed@1", "old-renamed-deleted@1", "renaming-to-deleted@1",
                      "renaming-to-swap@1", "stripping-swap@1", "swap-renamed@1", "swap-stripped@1"]
    assert steps.count("cleaned-written@1") == 1 and "cleaned-written@3" in steps  # three groups
    works = [copy_tree(src.parent, tmp_path / f"crash-{i}") for i in range(len(chosen))]
    with ThreadPoolExecutor(max_workers=2) as pool:
        procs = list(pool.map(lambda ws: run_kafkatool(args(ws[0]), {env: ws[1]}), zip(works, chosen, strict=True)))
    failures = []
    for work, step, proc in zip(works, chosen, procs, strict=True):
        if proc.returncode != expected:
            failures.append(f"{step}: exit {proc.returncode}: {proc.stderr.strip()}")
            continue
        if env == INTERRUPT_ENV and proc.stderr.strip().splitlines() != ["kafkatool: interrupted"]:
            failures.append(f"{step}: an interrupt should say one line, not {proc.stderr!r}")
        failures += [f"{step}: {p}" for p in check_loadable(work) + _check_segments(work / "faulty-0")]
        for key, digest in batches_by_offset(work).items():  # each batch is the old one or the new one
            if digest not in (original.get(key), finished.get(key)):
                failures.append(f"{step}: batch ending at {key[1]} is neither the original nor the cleaned one")
        if _latest_view(work / "faulty-0") != expected_view:
            failures.append(f"{step}: the latest record of some key changed")
        compact_partition(work / "faulty-0", cfg, now_ms=NOW)  # the next run finishes the job
        if segment_bytes_of(work) != segment_bytes_of(ref):
            failures.append(f"{step}: a re-run does not give the uninterrupted result")
    assert not failures, "\n".join(failures)
