"""`dump-log --jobs N` never starts more worker processes than the CPUs it may run on."""

from __future__ import annotations

import os

import pytest

from kafkatool.ops import dumplog


@pytest.mark.parametrize(("requested", "cpus", "expected"), [(200, 2, 2), (0, 2, 2), (1, 2, 1), (3, 64, 3), (0, 64, 8)])
def test_jobs_bounded_by_cpu_affinity(monkeypatch: pytest.MonkeyPatch, requested: int, cpus: int, expected: int) -> None:
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(cpus)), raising=False)
    monkeypatch.setattr(os, "cpu_count", lambda: 512)  # the machine's count is not what we may use
    assert dumplog._jobs(requested) == expected


def test_jobs_on_this_machine() -> None:
    assert 1 <= dumplog._jobs(200) <= len(os.sched_getaffinity(0))
