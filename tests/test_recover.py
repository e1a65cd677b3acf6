"""`kafkatool recover`: the broker's start-up recovery offline, checked against a real broker's.

recovered/kafka-2.1.1 is what a real Kafka 2.1.1 broker left after recovering copies of every
kafka-logs/corrupt/* dir (topic names with underscores, no recovery-point checkpoint, default
index.interval.bytes).  Our recover of the same copies must leave the same .log, .index,
.timeindex and .txnindex bytes.  Differences that are by design (documented in docs/recover.md):
the broker regenerates producer snapshots (we only delete stale and corrupt ones), deletes later
segments asynchronously (its *.deleted files were still there).  leader-epoch-checkpoint is
compared too: the broker created an empty one for the partitions that had none.
"""

from __future__ import annotations

import hashlib
import json
import os
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from kafkatool.log.checkpoint import (
    read_leader_epoch_checkpoint,
    read_offset_checkpoint,
    write_offset_checkpoint,
)
from kafkatool.log.files import MappedFile, list_segments
from kafkatool.log.records import BatchScan
from kafkatool.log.snapshot import encode_producer_snapshot
from kafkatool.ops.indexcheck import resolve_targets, verify_targets
from kafkatool.ops.recover import RecoverOptions, recover
from tests.conftest import require_fixtures
from tests.support.faults import copy_tree, run_kafkatool, write_partition

SEGMENT_FILES = (".log", ".index", ".timeindex", ".txnindex")
BY_DESIGN = (".snapshot", ".deleted")


def corrupt_names() -> list[str]:
    fx = require_fixtures()
    return sorted(os.listdir(fx / "kafka-logs" / "corrupt"))


def broker_name(name: str) -> str:
    return name[:-2].replace("-", "_") + "-0"


@pytest.fixture
def corrupt_log_dir(kafka_logs: Path, tmp_path: Path) -> Path:
    """Copies of every damaged partition in one log dir, named as the broker's copies were."""
    logs = tmp_path / "logs"
    logs.mkdir()
    for n in os.listdir(kafka_logs / "corrupt"):
        copy_tree(kafka_logs / "corrupt" / n, logs / broker_name(n))
    return logs


def tree_digest(path: Path, skip: tuple[str, ...] = (".lock",)) -> dict[str, str]:
    out = {}
    for root, _dirs, files in os.walk(path):
        for n in files:
            if n in skip:
                continue
            p = Path(root) / n
            out[str(p.relative_to(path))] = hashlib.sha1(p.read_bytes()).hexdigest()
    return out


# ---------------------------------------------------------------------------------------------
# the real broker's recovery, byte for byte
# ---------------------------------------------------------------------------------------------


def test_recover_matches_the_real_broker(corrupt_log_dir: Path, fixtures: Path) -> None:
    """Every damaged dir: same segment files and bytes as Kafka 2.1.1 left; every difference listed."""
    plan = recover(corrupt_log_dir, RecoverOptions(kafka_version="2.1"))
    assert not plan.errors
    recovered = fixtures / "recovered" / "kafka-2.1.1"
    differences = []
    compared = 0
    for name in corrupt_names():
        ours, theirs = corrupt_log_dir / broker_name(name), recovered / broker_name(name)
        for n in sorted(set(os.listdir(ours)) | set(os.listdir(theirs))):
            if not n.endswith(SEGMENT_FILES) and n != "leader-epoch-checkpoint":
                continue
            a, b = ours / n, theirs / n
            if not a.exists() or not b.exists():
                differences.append(f"{ours.name}/{n}: only in {'ours' if a.exists() else 'the broker'}")
            elif a.read_bytes() != b.read_bytes():
                differences.append(
                    f"{ours.name}/{n}: {a.stat().st_size} bytes, the broker's {b.stat().st_size}"
                )
            else:
                compared += 1
    assert not differences, "\n".join(differences)
    assert compared >= 60 + len(corrupt_names())  # every leader-epoch-checkpoint too
    # the by-design differences, and nothing else
    for name in corrupt_names():
        ours, theirs = corrupt_log_dir / broker_name(name), recovered / broker_name(name)
        other = {n for n in set(os.listdir(ours)) ^ set(os.listdir(theirs)) if not n.endswith(BY_DESIGN)}
        assert not other, (name, other)


def test_recover_report_names_every_loss(corrupt_log_dir: Path) -> None:
    plan = recover(corrupt_log_dir, RecoverOptions(dry_run=True))
    by = {p.name: p for p in plan.partitions}
    crc = by["v2_crc_flip-0"]
    assert (crc.log_end_before, crc.log_end_after) == (160, 11)
    kinds = [(a.kind, a.file) for a in crc.actions if a.data_loss]
    assert kinds == [
        ("truncate_log", "00000000000000000000.log"),
        ("delete_segment", "00000000000000000081.log"),
    ]
    trunc = crc.actions[0].fields
    assert (trunc["from_position"], trunc["to_position"], trunc["first_offset_lost"]) == (641, 3939, 11)
    assert crc.lost_offsets == [(11, 159)]
    assert by["v2_truncated_tail-0"].lost_offsets == [(155, 159)]  # read from the cut batch's header
    assert by["v2_trailing_zeros-0"].lost_offsets == []  # zero bytes held no records
    assert not by["v2_index_bad_position-0"].data_loss
    snap = [a for a in by["snapshot_bad_crc-0"].actions if a.kind == "delete_snapshot"]
    assert [a.file for a in snap] == ["00000000000000000372.snapshot"]
    assert plan.data_loss


def test_dry_run_changes_nothing_and_previews_the_real_run(corrupt_log_dir: Path, tmp_path: Path) -> None:
    before = tree_digest(corrupt_log_dir)
    proc = run_kafkatool(["recover", str(corrupt_log_dir), "--dry-run", "--format", "json"])
    assert proc.returncode == 1, proc.stderr
    assert tree_digest(corrupt_log_dir) == before
    assert not (corrupt_log_dir / ".lock").exists()
    preview = json.loads(proc.stdout)
    proc = run_kafkatool(["recover", str(corrupt_log_dir), "--format", "json"])
    assert proc.returncode == 1, proc.stderr
    done = json.loads(proc.stdout)
    assert [p["actions"] for p in preview["partitions"]] == [p["actions"] for p in done["partitions"]]
    assert preview["log_dir_actions"] == done["log_dir_actions"]
    # a second run has nothing left to do
    again = run_kafkatool(["recover", str(corrupt_log_dir)])
    assert again.returncode == 0, again.stdout
    assert "no records lost" in again.stdout
    assert all(
        not p["actions"]
        for p in json.loads(run_kafkatool(["recover", str(corrupt_log_dir), "--format", "json"]).stdout)[
            "partitions"
        ]
    )


@pytest.mark.parametrize("tree", ["kafka-0.10.2.1", "kafka-2.1.1", "kafka-3.3.1-kraft"])
def test_recovering_an_undamaged_broker_dir_changes_only_what_a_load_does(
    kafka_logs: Path, tmp_path: Path, tree: str
) -> None:
    """Nothing changes but what a broker's load does to the leader-epoch cache of these dirs: an
    empty leader-epoch-checkpoint where there is none (partitions a 0.10 broker or an old message
    format left without one), and an entry starting at the log end offset dropped (an empty partition
    whose leader had assigned epoch 0 at offset 0)."""
    work = copy_tree(kafka_logs / tree, tmp_path / tree)
    before = tree_digest(work)
    plan = recover(work, RecoverOptions())
    assert not plan.data_loss and not plan.errors
    changed = {f"{p.name}/{a.file}": a.text for p in plan.partitions for a in p.actions}
    after = tree_digest(work)
    assert {n for n in after if after[n] != before.get(n)} == set(changed)
    for name, text in changed.items():
        assert name.endswith("/leader-epoch-checkpoint"), text
        if name in before:  # (0, 0) in a partition whose log end offset is 0
            assert (work / name).read_text() == "0\n0\n", text
        else:
            assert (work / name).stat().st_size == 0, text
    assert len(changed) == {"kafka-0.10.2.1": 10, "kafka-2.1.1": 6, "kafka-3.3.1-kraft": 1}[tree]


def test_full_recovery_of_an_undamaged_dir_loses_nothing(kafka_logs: Path, tmp_path: Path) -> None:
    """--full rebuilds every index with the given interval; the logs stay byte for byte."""
    work = copy_tree(kafka_logs / "kafka-2.1.1", tmp_path / "k")
    logs_before = {k: v for k, v in tree_digest(work).items() if k.endswith(".log")}
    plan = recover(work, RecoverOptions(full=True))
    assert not plan.data_loss
    assert {k: v for k, v in tree_digest(work).items() if k.endswith(".log")} == logs_before
    assert all(c.ok for c in verify_targets(resolve_targets([work])))


# ---------------------------------------------------------------------------------------------
# salvage
# ---------------------------------------------------------------------------------------------


def _batches(d: Path) -> dict[int, bytes]:
    out = {}
    for seg in list_segments(d):
        with MappedFile(seg.log) as mf:
            for b in BatchScan(mf.buf):
                out[b.last_offset] = b.raw()
    return out


def test_salvage_keeps_everything_past_the_damage(
    corrupt_log_dir: Path, kafka_logs: Path, tmp_path: Path
) -> None:
    salv = tmp_path / "salvage"
    proc = run_kafkatool(["recover", str(corrupt_log_dir / "v2_crc_flip-0"), "--salvage", str(salv)])
    assert proc.returncode == 1, proc.stderr
    original = _batches(kafka_logs / "kafka-2.1.1" / "fmt-v2-0")  # the undamaged copy
    kept = _batches(corrupt_log_dir / "v2_crc_flip-0")
    saved = _batches(salv / "v2_crc_flip-0")
    assert set(kept) | set(saved) == set(original) - {16}  # only the damaged batch (offsets 11..16) is gone
    assert all(original[o] == b for o, b in {**kept, **saved}.items())
    report = json.loads((salv / "salvage-report.json").read_text())[0]
    assert report["lost_offset_ranges"] == [[11, 16]]
    assert report["files"][0]["lost_byte_ranges"] == [[641, 1089]]
    assert all(c.ok for c in verify_targets(resolve_targets([salv / "v2_crc_flip-0"])))
    assert "offsets lost: 11..16" in proc.stdout


def test_salvage_repairs_a_flipped_length_field(
    corrupt_log_dir: Path, kafka_logs: Path, tmp_path: Path
) -> None:
    salv = tmp_path / "salvage"
    plan = recover(corrupt_log_dir / "v2_length_flip-0", RecoverOptions(salvage_dir=salv))
    [p] = plan.partitions
    assert p.lost_offsets == []
    original = _batches(kafka_logs / "kafka-2.1.1" / "fmt-v2-0")
    got = {**_batches(corrupt_log_dir / "v2_length_flip-0"), **_batches(salv / "v2_length_flip-0")}
    assert got == original  # every record is back, the damaged length field rewritten
    repaired = [b for _, fs in p.salvage for b in fs.batches if b.repaired]
    assert [(b.position, b.base_offset) for b in repaired] == [(1089, 17)]


def test_salvage_refuses_a_dir_inside_the_log_dir_or_with_data(corrupt_log_dir: Path, tmp_path: Path) -> None:
    inside = run_kafkatool(["recover", str(corrupt_log_dir), "--salvage", str(corrupt_log_dir / "x")])
    assert inside.returncode == 2 and "outside the log dir" in inside.stderr
    used = tmp_path / "used" / "v2_crc_flip-0"
    used.mkdir(parents=True)
    (used / "something").write_text("x")
    proc = run_kafkatool(
        ["recover", str(corrupt_log_dir / "v2_crc_flip-0"), "--salvage", str(tmp_path / "used")]
    )
    assert proc.returncode == 2 and "already holds files" in proc.stderr


# ---------------------------------------------------------------------------------------------
# damage of our own making on generated logs
# ---------------------------------------------------------------------------------------------


def _log_dir(tmp_path: Path, segments: tuple[int, ...] = (40, 40, 40, 40), **kw: object) -> tuple[Path, Path]:
    logs = tmp_path / "logs"
    d = logs / "orders-0"
    write_partition(d, list(segments), **kw)  # type: ignore[arg-type]
    return logs, d


def _flip(path: Path, pos: int) -> None:
    data = bytearray(path.read_bytes())
    data[pos] ^= 0x01
    path.write_bytes(bytes(data))


def test_recovery_point_limits_the_segments_recovered(tmp_path: Path) -> None:
    logs, d = _log_dir(tmp_path)
    _flip(d / "00000000000000000200.log", 500)  # damage in the second segment
    write_offset_checkpoint(logs / "recovery-point-offset-checkpoint", {("orders", 0): 650})
    plan = recover(logs, RecoverOptions(dry_run=True))
    [p] = plan.partitions
    assert p.recovered == [600] and not p.data_loss  # like the broker: only from the recovery point on
    plan = recover(logs, RecoverOptions(dry_run=True, full=True))
    [p] = plan.partitions
    assert p.recovered == [0, 200] and p.data_loss
    assert [a.kind for a in p.actions if a.data_loss] == ["truncate_log", "delete_segment", "delete_segment"]


def test_recover_truncates_deletes_and_updates_every_checkpoint(tmp_path: Path) -> None:
    logs, d = _log_dir(tmp_path, leader_epoch=lambda off: off // 150)  # epochs 0..5, one each 150 offsets
    from kafkatool.log.checkpoint import write_leader_epoch_checkpoint

    write_leader_epoch_checkpoint(d / "leader-epoch-checkpoint", [(e, e * 150) for e in range(6)])
    write_offset_checkpoint(logs / "recovery-point-offset-checkpoint", {("orders", 0): 100, ("other", 0): 7})
    write_offset_checkpoint(logs / "replication-offset-checkpoint", {("orders", 0): 800})
    write_offset_checkpoint(logs / "cleaner-offset-checkpoint", {("orders", 0): 600})
    (d / "00000000000000000350.snapshot").write_bytes(encode_producer_snapshot([]))
    (d / "00000000000000000100.snapshot").write_bytes(encode_producer_snapshot([]))
    (logs / ".kafka_cleanshutdown").write_text("")
    _flip(d / "00000000000000000200.log", 2000)
    plan = recover(logs, RecoverOptions(full=True))
    [p] = plan.partitions
    first_bad = p.log_end_after
    assert p.data_loss and 200 < first_bad < 400
    assert [s.base_offset for s in list_segments(d)] == [0, 200]
    assert read_offset_checkpoint(logs / "recovery-point-offset-checkpoint") == {
        ("orders", 0): first_bad,
        ("other", 0): 7,
    }
    assert read_offset_checkpoint(logs / "replication-offset-checkpoint") == {("orders", 0): first_bad}
    assert read_offset_checkpoint(logs / "cleaner-offset-checkpoint") == {("orders", 0): first_bad}
    epochs = read_leader_epoch_checkpoint(d / "leader-epoch-checkpoint")
    assert epochs == [(e, e * 150) for e in range(6) if e * 150 < first_bad]
    assert sorted(os.listdir(d)) == sorted(
        [
            "00000000000000000000.log",
            "00000000000000000000.index",
            "00000000000000000000.timeindex",
            "00000000000000000200.log",
            "00000000000000000200.index",
            "00000000000000000200.timeindex",
            "00000000000000000100.snapshot",
            "leader-epoch-checkpoint",
        ]
    )
    assert not (logs / ".kafka_cleanshutdown").exists()  # a broker must redo producer state itself
    assert all(c.ok for c in verify_targets(resolve_targets([d])))


def test_recover_resolves_interrupted_swaps_and_orphans(tmp_path: Path) -> None:
    logs, d = _log_dir(
        tmp_path,
        segments=(
            20,
            20,
            20,
        ),
    )
    # an interrupted cleaning: segments 0 and 100 replaced by 0.swap holding both (same data here)
    data = (d / "00000000000000000000.log").read_bytes() + (d / "00000000000000000100.log").read_bytes()
    (d / "00000000000000000000.log.swap").write_bytes(data)
    (d / "00000000000000000200.log.deleted").write_bytes(b"old")
    (d / "00000000000000000300.index").write_bytes(b"")  # orphan
    (d / "00000000000000000300.cleaned").write_bytes(b"")
    (d / "00000000000000000000.index.tmp").write_bytes(b"\0" * 8)
    preview = recover(logs, RecoverOptions(dry_run=True))
    plan = recover(logs, RecoverOptions())
    assert [a.text for a in preview.partitions[0].actions] == [a.text for a in plan.partitions[0].actions]
    kinds = {a.kind for a in plan.partitions[0].actions}
    assert {"complete_swap", "delete_deleted_file", "delete_orphan_index", "delete_temp_file"} <= kinds
    assert [s.base_offset for s in list_segments(d)] == [0, 200]
    assert (d / "00000000000000000000.log").read_bytes() == data
    assert not [n for n in os.listdir(d) if n.endswith((".swap", ".cleaned", ".deleted", ".tmp"))]
    assert all(c.ok for c in verify_targets(resolve_targets([d])))


def test_recover_offset_overflow_leaves_the_partition_alone(tmp_path: Path) -> None:
    logs, d = _log_dir(tmp_path, segments=(3,))
    from kafkatool.log.record import Record
    from kafkatool.log.writer import encode_v2_batch

    with open(d / "00000000000000000000.log", "ab") as f:
        f.write(encode_v2_batch([Record(2**31 + 10, 1, b"k", b"v", ())]))
    before = tree_digest(logs)
    proc = run_kafkatool(["recover", str(logs)])
    assert proc.returncode == 1
    assert "not recovered" in proc.stdout and "splits" in proc.stdout
    assert tree_digest(logs) == before


def test_recover_cli_input_errors(tmp_path: Path) -> None:
    proc = run_kafkatool(["recover", str(tmp_path / "missing")])
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1
    (tmp_path / "empty").mkdir()
    proc = run_kafkatool(["recover", str(tmp_path / "empty")])
    assert proc.returncode == 2 and "not a log dir" in proc.stderr
    proc = run_kafkatool(["recover", str(tmp_path / "empty"), "--format", "xml"])
    assert proc.returncode == 2


def test_recover_refuses_while_a_broker_holds_the_lock_but_previews(tmp_path: Path) -> None:
    logs, d = _log_dir(tmp_path, segments=(5,))
    _flip(d / "00000000000000000000.log", 300)
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import fcntl,os,sys,time; fd=os.open(sys.argv[1], os.O_RDWR|os.O_CREAT); fcntl.lockf(fd, fcntl.LOCK_EX);"
            " print('locked', flush=True); time.sleep(60)",
            str(logs / ".lock"),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        before = tree_digest(logs, skip=())
        proc = run_kafkatool(["recover", str(d)])
        assert proc.returncode == 3, proc.stderr
        assert proc.stderr.startswith("kafkatool: ") and "locked by another process" in proc.stderr
        # a preview takes no lock: it reads the live dir and says so (tests/test_readonly_modes.py)
        proc = run_kafkatool(["recover", str(logs), "--dry-run"])
        assert proc.returncode == 1 and "would truncate" in proc.stdout, proc.stderr
        assert proc.stderr.startswith("kafkatool: note: ") and "held by another process" in proc.stderr
        assert tree_digest(logs, skip=()) == before
    finally:
        holder.kill()
        holder.wait()


def test_recover_empties_a_segment_whose_offsets_go_back(tmp_path: Path) -> None:
    """The broker's index refuses an entry whose offset goes back (InvalidOffsetException) and
    recovery truncates the segment to its base offset, then deletes the later ones."""
    logs, d = _log_dir(
        tmp_path,
        segments=(
            40,
            40,
        ),
    )
    log = d / "00000000000000000000.log"
    data = log.read_bytes()
    b0 = data[: struct.unpack_from(">i", data, 8)[0] + 12]
    log.write_bytes(data + b0)  # offsets 0..4 again after 195, where an index entry lands
    plan = recover(logs, RecoverOptions(index_interval=100))
    [p] = plan.partitions
    assert p.log_end_after == 0 and p.data_loss
    assert log.stat().st_size == 0 and [s.base_offset for s in list_segments(d)] == [0]


def test_damage_below_the_recovery_point_does_not_stop_recovery_after_it(tmp_path: Path) -> None:
    """A segment below the recovery point is recovered only for its missing index (as the broker does),
    and truncated there without deleting later segments; the unflushed segments are still recovered."""
    logs, d = _log_dir(tmp_path)
    write_offset_checkpoint(logs / "recovery-point-offset-checkpoint", {("orders", 0): 650})
    (d / "00000000000000000200.index").unlink()
    _flip(d / "00000000000000000200.log", 3000)
    _flip(d / "00000000000000000600.log", 5000)
    plan = recover(logs, RecoverOptions())
    [p] = plan.partitions
    assert p.recovered == [200, 600]
    assert [a.file for a in p.actions if a.kind == "truncate_log"] == [
        "00000000000000000200.log",
        "00000000000000000600.log",
    ]
    assert not [a for a in p.actions if a.kind == "delete_segment"]
    assert [s.base_offset for s in list_segments(d)] == [0, 200, 400, 600]
    assert any("below the recovery point" in w for w in p.warnings)
    assert p.lost_offsets[0][1] == 399  # up to the kept segment 400
    assert read_offset_checkpoint(logs / "recovery-point-offset-checkpoint") == {
        ("orders", 0): p.log_end_after
    }
    assert all(c.ok for c in verify_targets(resolve_targets([d])))


# ---------------------------------------------------------------------------------------------
# the leader-epoch cache as a broker's load leaves it (LeaderEpochFileCache, Log / LogLoader at
# Kafka 2.1.1 and 3.3.1): expected files derived from the source, built with our writers
# ---------------------------------------------------------------------------------------------


def _epochs_after(logs: Path, d: Path, version: str, dry_run: bool = False) -> bytes | None:
    plan = recover(logs, RecoverOptions(kafka_version=version, dry_run=dry_run))
    assert not plan.errors and not plan.data_loss
    f = d / "leader-epoch-checkpoint"
    return f.read_bytes() if f.exists() else None


@pytest.mark.parametrize("version", ["2.1", "3"])
def test_epoch_entries_past_the_log_end_go_at_every_load(tmp_path: Path, version: str) -> None:
    """truncateFromEnd(log end offset) runs at every load, even when nothing is recovered: entries
    starting at or past the log end (800) are removed and the file rewritten."""
    from kafkatool.log.checkpoint import write_leader_epoch_checkpoint

    logs, d = _log_dir(tmp_path)
    (logs / ".kafka_cleanshutdown").write_text("")
    write_leader_epoch_checkpoint(d / "leader-epoch-checkpoint", [(0, 0), (1, 800), (2, 900)])
    before = tree_digest(logs)
    assert _epochs_after(logs, d, version, dry_run=True) == b"0\n3\n0 0\n1 800\n2 900\n"
    assert tree_digest(logs) == before  # the preview changes nothing
    assert _epochs_after(logs, d, version) == b"0\n1\n0 0\n"
    assert _epochs_after(logs, d, version) == b"0\n1\n0 0\n"  # a second load changes nothing more


@pytest.mark.parametrize("version", ["2.1", "3"])
def test_a_missing_epoch_checkpoint_is_created_as_the_broker_does(tmp_path: Path, version: str) -> None:
    """The CheckpointFile constructor creates the file empty; it is written only when the cache
    changes (here: recovery assigns epoch 0 at offset 0 when there is no clean shutdown)."""
    logs, d = _log_dir(tmp_path)
    (logs / ".kafka_cleanshutdown").write_text("")
    assert _epochs_after(logs, d, version) == b""
    os.unlink(d / "leader-epoch-checkpoint")
    (logs / ".kafka_cleanshutdown").unlink()
    assert _epochs_after(logs, d, version) == b"0\n1\n0 0\n"


@pytest.mark.parametrize(
    ("version", "log_start_checkpoint", "expected"),
    [
        ("2.1", None, b"0\n1\n0 400\n"),  # truncateFromStart(max(checkpoint, first base)) = 400
        ("3", None, b"0\n1\n0 0\n"),  # truncateFromStart(log-start checkpoint, 0 when absent)
        ("2.1", 300, b"0\n1\n0 400\n"),
        ("3", 300, b"0\n1\n0 300\n"),
    ],
)
def test_leftover_deleted_segments_move_the_epoch_start_by_release(
    tmp_path: Path, version: str, log_start_checkpoint: int | None, expected: bytes
) -> None:
    """Leftover *.deleted segments 0 and 200 are removed, so the log starts at 400; Kafka 2.1.1's
    Log truncates the cache from that start, 3.3.1's LogLoader from the log-start-offset checkpoint."""
    from kafkatool.log.checkpoint import write_leader_epoch_checkpoint

    logs, d = _log_dir(tmp_path)
    (logs / ".kafka_cleanshutdown").write_text("")
    write_leader_epoch_checkpoint(d / "leader-epoch-checkpoint", [(0, 0)])
    if log_start_checkpoint is not None:
        write_offset_checkpoint(logs / "log-start-offset-checkpoint", {("orders", 0): log_start_checkpoint})
    for n in os.listdir(d):
        if n[:20] in ("00000000000000000000", "00000000000000000200"):
            os.replace(d / n, d / (n + ".deleted"))
    assert _epochs_after(logs, d, version) == expected
    assert [s.base_offset for s in list_segments(d)] == [400, 600]


def test_recover_text_names_a_missing_checkpoint_entry(tmp_path: Path) -> None:
    """A partition without a recovery-point entry: the text says it is added, never Python's None."""
    logs, d = _log_dir(tmp_path)
    _flip(d / "00000000000000000600.log", 500)
    for args in (["--dry-run"], ["--dry-run", "--format", "json"], []):
        proc = run_kafkatool(["recover", str(logs), "--quiet", *args])
        assert proc.returncode == 1, proc.stderr
        assert "None" not in proc.stdout and "null ->" not in proc.stdout
        if "json" in args:
            [a] = [a for a in json.loads(proc.stdout)["log_dir_actions"] if a["action"] == "update_checkpoint"]
            assert a["old"] is None and a["added"] is True
            assert "(no entry: added) -> " in a["description"]
        else:
            line = next(ln for ln in proc.stdout.splitlines() if "recovery-point-offset-checkpoint" in ln)
            assert "orders 0 in recovery-point-offset-checkpoint: (no entry: added) -> " in line, line


def test_recover_kafka_version_is_checked(tmp_path: Path) -> None:
    logs, _d = _log_dir(tmp_path)
    proc = run_kafkatool(["recover", str(logs), "--kafka-version", "2.8"])
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == ["kafkatool: --kafka-version: '2.8' is not one of 3, 2.1"]


def test_epoch_checkpoint_is_rewritten_in_the_broker_format_when_the_cache_flushes(tmp_path: Path) -> None:
    """truncateFromStart finds the entry at the log start and flushes, though nothing moved: the
    broker's CheckpointFile writes its own format (single spaces, the count it counted)."""
    logs, d = _log_dir(tmp_path)
    (logs / ".kafka_cleanshutdown").write_text("")
    (d / "leader-epoch-checkpoint").write_bytes(b"0\n1\n0   0\n")
    plan = recover(logs, RecoverOptions())
    [action] = plan.partitions[0].actions
    assert action.text == "rewrite leader-epoch-checkpoint in the broker's format: [0 0]"
    assert (d / "leader-epoch-checkpoint").read_bytes() == b"0\n1\n0 0\n"


@pytest.mark.parametrize(
    ("version", "expected"),
    [
        ("2.1", b"0\n3\n0 0\n2 100\n1 50\n"),  # a ListBuffer of the lines; truncateFromStart(0) rewrites it
        ("3", b"0\n2\n0 0\n1 50\n"),  # loaded through assign: (1, 50) removes the non-monotonic (2, 100)
    ],
)
def test_a_non_monotonic_epoch_checkpoint_loads_by_release(tmp_path: Path, version: str, expected: bytes) -> None:
    logs, d = _log_dir(tmp_path)
    (logs / ".kafka_cleanshutdown").write_text("")
    (d / "leader-epoch-checkpoint").write_bytes(b"0\n3\n0 0\n2 100\n1 50\n")
    assert _epochs_after(logs, d, version) == expected
