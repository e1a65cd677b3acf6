"""Read-only modes take no lock and survive a concurrent writer (issue 12).

`recover --dry-run`, `index rebuild --dry-run`, `index verify`, `index dump`, `compact --dry-run`,
`compact --estimate` and `dump-log` preview a live log dir: a broker holding `.lock` gets a one-line
note, not a refusal.  A writer that swaps, merges or truncates segments while they are read makes the
pass list and read again (`safety.read_consistently`); a file that keeps changing is named in one
line, exit 3; dump-log, which streams, names a file that changed while it was dumped (exit 3).

The concurrent writer is deterministic: the mutation runs inside the reader's own call sequence (a
monkeypatched step), never from a thread or a sleep.  The mutation is a real cleaner's: a merged
copy of two segments written as `.cleaned` and swapped in with Kafka's protocol
(`safety.replace_segments`), which renames the old files to `.deleted` and removes them.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

import kafkatool.ops.compact as compact_mod
import kafkatool.ops.dumplog as dumplog
import kafkatool.ops.indexcheck as indexcheck
import kafkatool.ops.recover as recover_mod
from kafkatool.cli.main import full_app
from kafkatool.ops import safety
from kafkatool.ops.recover import RecoverOptions, recover
from tests.support.faults import write_partition

runner = CliRunner()
app = full_app()


def _log_dir(tmp_path: Path) -> tuple[Path, Path]:
    logs = tmp_path / "logs"
    d = logs / "orders-0"
    write_partition(d, [40, 40, 40, 40])  # segments 0, 200, 400, 600; log end offset 800
    return logs, d


def merge_segments(d: Path, base: int, absorbed: int) -> None:
    """A cleaner's swap: segment `base` rewritten to hold `absorbed` too, then swapped in."""
    a, b = d / f"{base:020d}.log", d / f"{absorbed:020d}.log"
    (d / f"{base:020d}.log.cleaned").write_bytes(a.read_bytes() + b.read_bytes())
    safety.replace_segments(d, [base], [base, absorbed])


def once(action: Callable[[], None], wrapped: Callable) -> Callable:  # type: ignore[type-arg]
    """`wrapped`, with `action` run before its first call only."""
    done: list[bool] = []

    def step(*args, **kwargs):  # type: ignore[no-untyped-def]
        if not done:
            done.append(True)
            action()
        return wrapped(*args, **kwargs)

    return step


def _untimed(text: str) -> list[dict]:  # type: ignore[type-arg]
    return [{k: v for k, v in r.items() if k not in ("elapsed_s", "now_ms")} for r in json.loads(text)]


def _cli(*args: str):  # type: ignore[no-untyped-def]
    return runner.invoke(app, list(args))


# ---------------------------------------------------------------------------------------------
# a broker holds the lock: previews run, with a note
# ---------------------------------------------------------------------------------------------


@pytest.fixture
def held_lock(tmp_path: Path) -> Iterator[Path]:
    """A log dir whose .lock another process holds, as a running broker does (fcntl and flock)."""
    logs, _d = _log_dir(tmp_path)
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import fcntl,os,sys,time; fd=os.open(sys.argv[1], os.O_RDWR|os.O_CREAT); fcntl.lockf(fd, fcntl.LOCK_EX);"
            " fcntl.flock(fd, fcntl.LOCK_EX); print('locked', flush=True); time.sleep(60)",
            str(logs / ".lock"),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        yield logs
    finally:
        holder.kill()
        holder.wait()


def _run(args: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kafkatool", *args], capture_output=True, text=True, timeout=120)


def test_previews_run_beside_a_broker_holding_the_lock(held_lock: Path) -> None:
    logs = held_lock
    d = logs / "orders-0"
    data = bytearray((d / "00000000000000000200.log").read_bytes())
    data[500] ^= 1
    (d / "00000000000000000200.log").write_bytes(bytes(data))
    before = {n: (d / n).read_bytes() for n in os.listdir(d)}
    note = "is held by another process (a running broker?): this reads a live log dir without locking it"
    for args, rc in (
        (["recover", str(logs), "--dry-run", "--quiet"], 1),  # records would be lost
        (["index", "rebuild", str(d), "--dry-run", "--quiet"], 1),  # the damaged segment
        (["index", "verify", str(d), "--quiet"], 1),
        (["index", "dump", str(d / "00000000000000000000.index")], 0),
    ):
        proc = _run(args)
        assert proc.returncode == rc, (args, proc.stderr)
        assert proc.stdout, args
        notes = [ln for ln in proc.stderr.splitlines() if note in ln]
        assert len(notes) == 1 and notes[0].startswith("kafkatool: note: "), (args, proc.stderr)
    for args in (["recover", str(logs), "--quiet"], ["index", "rebuild", str(d), "--quiet"]):
        proc = _run(args)
        assert proc.returncode == 3 and "locked by another process" in proc.stderr, args
    assert {n: (d / n).read_bytes() for n in os.listdir(d)} == before


# ---------------------------------------------------------------------------------------------
# a writer swaps segments while a preview reads them
# ---------------------------------------------------------------------------------------------


def test_recover_dry_run_plans_again_when_a_segment_is_swapped_meanwhile(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    logs, d = _log_dir(tmp_path)
    monkeypatch.setattr(
        recover_mod,
        "walk_segment_file",
        once(lambda: merge_segments(d, 200, 400), recover_mod.walk_segment_file),
    )
    result = _cli("recover", str(logs), "--dry-run", "--format", "json", "--quiet")
    assert result.exit_code == 0, result.output
    monkeypatch.undo()
    fresh = recover(logs, RecoverOptions(dry_run=True))
    assert fresh.partitions[0].segments == [0, 200, 600]  # the merge happened
    assert json.loads(result.stdout) == json.loads(json.dumps(fresh.to_json()))


def test_a_file_that_keeps_changing_is_named_exit_3(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every pass sees segment 600 truncated under it: after three tries, one line naming it."""
    logs, d = _log_dir(tmp_path)
    last = d / "00000000000000000600.log"
    real = recover_mod.walk_segment_file

    def shrinking(path, *args, **kwargs):  # type: ignore[no-untyped-def]
        if Path(path).name == "00000000000000000000.log":
            os.truncate(last, last.stat().st_size - 100)
        return real(path, *args, **kwargs)

    monkeypatch.setattr(recover_mod, "walk_segment_file", shrinking)
    result = _cli("recover", str(logs), "--dry-run", "--quiet")
    assert result.exit_code == 3
    assert result.stderr.splitlines() == [
        f"kafkatool: {last}: changed while being read (renamed, replaced or truncated by another process); "
        "run again"
    ]
    assert not [n for n in os.listdir(d) if n.endswith((".cleaned", ".swap", ".deleted", ".tmp"))]


def test_compact_dry_run_beside_a_running_compact(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The issue's case: a segment swapped under `compact --dry-run` gave `no such file` (exit 2)."""
    _logs, d = _log_dir(tmp_path)
    monkeypatch.setattr(
        compact_mod, "cleanable_range", once(lambda: merge_segments(d, 200, 400), compact_mod.cleanable_range)
    )
    result = _cli("compact", str(d), "--dry-run", "--format", "json", "--quiet")
    assert result.exit_code == 0, result.output
    monkeypatch.undo()
    again = _cli("compact", str(d), "--dry-run", "--format", "json", "--quiet")
    assert _untimed(result.stdout) == _untimed(again.stdout)
    assert json.loads(result.stdout)[0]["segments"] == 3


def test_compact_estimate_beside_a_running_compact(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _logs, d = _log_dir(tmp_path)
    monkeypatch.setattr(
        compact_mod, "cleanable_range", once(lambda: merge_segments(d, 200, 400), compact_mod.cleanable_range)
    )
    result = _cli("compact", str(d), "--estimate", "--format", "ndjson", "--quiet")
    assert result.exit_code == 0, result.output
    monkeypatch.undo()
    [row] = [json.loads(ln) for ln in result.stdout.splitlines()]
    assert row["error"] is None and row["partition"] == "orders-0"


def test_index_verify_lists_again_when_a_segment_is_swapped_meanwhile(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The verified files are those of the directory after the swap: the merged segment 200 (whose
    indexes the cleaner has not written yet, reported) and no trace of segment 400."""
    _logs, d = _log_dir(tmp_path)
    monkeypatch.setattr(
        indexcheck, "verify_segment", once(lambda: merge_segments(d, 200, 400), indexcheck.verify_segment)
    )
    result = _cli("index", "verify", str(d), "--format", "json", "--quiet")
    files = [r["file"] for r in json.loads(result.stdout)]
    assert not any("00000000000000000400" in f for f in files), files
    # the merged segment has no indexes of its own yet: that is the state now, and it is reported
    assert result.exit_code == 1 and any("00000000000000000200.index" in f for f in files)


def test_index_rebuild_dry_run_lists_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _logs, d = _log_dir(tmp_path)
    monkeypatch.setattr(
        indexcheck, "rebuild_target", once(lambda: merge_segments(d, 200, 400), indexcheck.rebuild_target)
    )
    result = _cli("index", "rebuild", str(d), "--dry-run", "--format", "ndjson", "--quiet")
    assert result.exit_code == 0, result.output
    assert "00000000000000000400" not in result.stdout and "00000000000000000200.index" in result.stdout


def test_dump_log_names_a_file_truncated_while_it_was_dumped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _logs, d = _log_dir(tmp_path)
    seg = d / "00000000000000000200.log"
    real = dumplog.LogDumper.dump_log

    def truncating(self, path, shown):  # type: ignore[no-untyped-def]
        real(self, path, shown)
        os.truncate(path, 1000)  # a follower's truncation, just after the read

    monkeypatch.setattr(dumplog.LogDumper, "dump_log", truncating)
    out, err = io.BytesIO(), io.BytesIO()
    res = dumplog.dump_files([str(seg)], dumplog.DumpOptions(), out, err)
    assert res.exit_code == 3
    assert err.getvalue().decode().splitlines() == [
        f"kafkatool: {seg}: changed while being read (renamed, replaced or truncated by another process); "
        "run again"
    ]
    assert out.getvalue().count(b"baseOffset: ") == 40  # what was read is printed in full


def test_dump_log_of_a_growing_segment_is_not_a_change(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A live broker appends to its active segment: that is no reason to fail."""
    _logs, d = _log_dir(tmp_path)
    seg = d / "00000000000000000600.log"
    real = dumplog.LogDumper.dump_log

    def appending(self, path, shown):  # type: ignore[no-untyped-def]
        real(self, path, shown)
        with open(path, "ab") as f:
            f.write((d / "00000000000000000000.log").read_bytes()[:100])

    monkeypatch.setattr(dumplog.LogDumper, "dump_log", appending)
    out, err = io.BytesIO(), io.BytesIO()
    assert dumplog.dump_files([str(seg)], dumplog.DumpOptions(), out, err).exit_code == 0
    assert err.getvalue() == b""


def test_a_path_that_never_existed_is_still_an_input_error(tmp_path: Path) -> None:
    logs, _d = _log_dir(tmp_path)
    with pytest.raises(FileNotFoundError):
        safety.read_consistently(lambda: (logs / "nope").read_bytes(), [logs / "orders-0"])
