"""Kill `kafkatool recover` (and `index rebuild`) after every step — or interrupt it there with a real
SIGINT, as Ctrl-C would — and check that what it leaves loads, loses nothing the finished run keeps,
and converges when the command runs again (tests/support/faults.py)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from kafkatool.log.index import OffsetIndex
from kafkatool.ops.indexcheck import resolve_targets, verify_targets
from kafkatool.ops.recover import RecoverOptions, recover
from tests.support.faults import copy_tree, crash_matrix, write_partition

# Every step recover can stop at, for the scenario below (at least once each).
RECOVER_STEPS = {
    "recover-swaps-resolved",
    "recover-salvage-written",
    "recover-marker-removed",
    "recover-index-written",
    "recover-segment-renamed-deleted",
    "recover-segments-deleted",
    "recover-snapshots-deleted",
    "recover-cleaned-written",
    "cleaned-written",
    "renaming-to-swap",
    "swap-renamed",
    "renaming-to-deleted",
    "old-renamed-deleted",
    "stripping-swap",
    "swap-stripped",
    "deleted-removed",
    "recover-epoch-checkpoint-written",
    "recover-checkpoint-written",
}


def _scenario(kafka_logs: Path, root: Path) -> Path:
    """A log dir with a clean-shutdown marker and two partitions: the CRC-damaged fixture (truncation, a
    later segment and snapshots to delete, a leader epoch that started past the damage), and a
    generated one whose offset index is cut (index rewrite) beside a stray .deleted file."""
    from kafkatool.log.checkpoint import write_leader_epoch_checkpoint

    logs = root / "logs"
    logs.mkdir()
    crc = copy_tree(kafka_logs / "corrupt" / "v2-crc-flip-0", logs / "crc-0")
    write_leader_epoch_checkpoint(crc / "leader-epoch-checkpoint", [(0, 0), (1, 50)])  # 50: past the damage
    d = logs / "gen-0"
    write_partition(d, [20], index_interval=256)
    idx = d / "00000000000000000000.index"
    idx.write_bytes(idx.read_bytes()[:-3])  # not a multiple of 8: the broker rebuilds it
    (d / "00000000000000000100.log.deleted").write_bytes(b"left over")
    (logs / ".kafka_cleanshutdown").write_text("")
    return logs


@pytest.mark.parametrize("interrupt", [False, True], ids=["kill", "ctrl-c"])
def test_kill_recover_at_every_step(kafka_logs: Path, tmp_path: Path, interrupt: bool) -> None:
    src = _scenario(kafka_logs, tmp_path)

    def args(work: Path) -> list[str]:
        return ["recover", str(work), "--full", "--index-interval", "256", "--salvage", f"{work}-salvage"]

    def rerun(work: Path) -> None:
        recover(work, RecoverOptions(full=True, index_interval=256))

    def salvage_complete(work: Path) -> list[str]:
        out = Path(f"{work}-salvage")
        if not out.exists():
            return []
        if not (out / "salvage-report.json").exists():
            return ["salvage dir without its report"]
        bad = [
            c.file
            for c in verify_targets(resolve_targets([out / n for n in os.listdir(out) if n.endswith("-0")]))
            if not c.ok
        ]
        return [f"salvaged segment does not verify: {f}" for f in bad]

    result = crash_matrix(src, args, rerun, extra_check=salvage_complete, interrupt=interrupt)
    assert not result.failures, result.report()
    seen = {s.split("@")[0] for s in result.steps}
    assert RECOVER_STEPS <= seen, RECOVER_STEPS - seen
    assert len(result.steps) >= 20


def test_scenario_is_what_the_matrix_needs(kafka_logs: Path, tmp_path: Path) -> None:
    """The scenario really truncates, deletes, rewrites an index and moves the leader epochs."""
    logs = _scenario(kafka_logs, tmp_path)
    plan = recover(logs, RecoverOptions(full=True, index_interval=256, dry_run=True))
    kinds = {a.kind for p in plan.partitions for a in p.actions} | {a.kind for a in plan.actions}
    assert {
        "truncate_log",
        "delete_segment",
        "rewrite_index",
        "delete_snapshot",
        "write_leader_epoch_checkpoint",
        "delete_deleted_file",
        "remove_clean_shutdown_marker",
        "update_checkpoint",
    } <= kinds
    assert [a.kind for a in plan.partitions[1].actions] == [
        "delete_deleted_file",
        "rewrite_index",
        "write_leader_epoch_checkpoint",  # epoch 0 assigned at 0
    ]
    OffsetIndex((logs / "crc-0" / "00000000000000000000.index").read_bytes(), 0).sanity_check()


@pytest.mark.parametrize("interrupt", [False, True], ids=["kill", "ctrl-c"])
def test_kill_index_rebuild_at_every_step(tmp_path: Path, interrupt: bool) -> None:
    """index rebuild replaces each index file beside the old: a kill leaves the old or the new one."""
    from kafkatool.ops.indexcheck import rebuild_target

    src = tmp_path / "logs"
    write_partition(src / "t-0", [30, 30], index_interval=128)

    def args(work: Path) -> list[str]:
        return ["index", "rebuild", str(work), "--index-interval", "512"]

    def rerun(work: Path) -> None:
        for t in resolve_targets([work]):
            rebuild_target(t, 512)

    result = crash_matrix(src, args, rerun, interrupt=interrupt)
    assert not result.failures, result.report()
    assert [s.split("@")[0] for s in result.steps] == ["rebuild-index-written"] * 4
