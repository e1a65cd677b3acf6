"""JvmGuard ends what a session launched even when the launch itself was interrupted.

The race CI once lost: Ctrl-C lands after `fork` but before `Popen.__init__` returns (it waits for
the child's exec), so PySpark never gets the Popen — yet the launcher runs on and starts the JVM,
which then waits for ever for a port file PySpark already deleted.  The interrupt is injected
deterministically here, right after the fork, into a real child process.
"""

from __future__ import annotations

import os
import subprocess
import time

import pytest

from kafkatool.spark.session import JvmGuard


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except OSError:
        return False


def test_interrupt_between_fork_and_popen_return_is_still_ended(monkeypatch: pytest.MonkeyPatch) -> None:
    forked: list[int] = []
    plain = subprocess.Popen._execute_child  # type: ignore[attr-defined]

    def interrupted(self: subprocess.Popen, *args: object, **kwargs: object) -> None:
        plain(self, *args, **kwargs)
        forked.append(self.pid)
        raise KeyboardInterrupt  # as if SIGINT arrived while Popen read the exec status pipe

    monkeypatch.setattr(subprocess.Popen, "_execute_child", interrupted)
    guard = JvmGuard()
    with pytest.raises(KeyboardInterrupt):
        guard.popen_class()(["sleep", "600"], stdin=subprocess.PIPE)
    monkeypatch.undo()
    assert forked and _alive(forked[0])
    guard.end(grace=0.1)
    deadline = time.monotonic() + 60  # the outcome, not a speed: ends as soon as the child is gone
    while _alive(forked[0]) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(forked[0])


def test_launch_after_end_is_ended_at_once() -> None:
    guard = JvmGuard()
    guard.end(grace=0.1)
    proc = guard.popen_class()(["sleep", "600"], stdin=subprocess.PIPE)
    assert proc.poll() is not None or proc.wait(60) is not None  # a `sleep 600` still running would time out
    assert os.getpgid(os.getpid()) != proc.pid  # it ran in a group of its own
