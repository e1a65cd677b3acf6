"""The offline `__consumer_offsets` replay releases the mapped pages behind it (issue 14: flat RSS).

`offsets --log-dir` mapped each segment whole and never released it, so its resident memory grew with
the segment (bench_issue14.py's rss row: 28 -> 68 MB of mapped pages from a 13 to a 51 MiB segment,
a 1 GiB segment's worth at full size).  The Python walk now hands `MappedFile.release` to its batch
scan (the compiled run releases on its own, every 32 MiB).  With the release step shrunk to one page,
seeded generated logs in one segment of many pages must replay exactly as they do with no release at
all, with either core, and the pure-Python replay's release must reach the end of the segment.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from kafkatool.log.core import load_speedups
from kafkatool.log.files import MappedFile
from kafkatool.ops import offsets_log
from kafkatool.ops.offsets_log import replay_partition_dir
from tests import test_offsets_core_diff
from tests.test_offsets_core_diff import generated_log, snapshot
from tests.test_offsets_offline import OffsetsLogBuilder

SEED = 1415


def replay(pdir: Path, core: object, start: int = 0) -> dict:
    saved = offsets_log.speedups
    offsets_log.speedups = core
    try:
        return snapshot(replay_partition_dir(pdir, log_start_offset=start))
    finally:
        offsets_log.speedups = saved


@pytest.mark.parametrize("case", range(6))
def test_released_pages_change_nothing_and_reach_the_end(tmp_path: Path, case: int,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(SEED * 100 + case)

    class OneSegment(OffsetsLogBuilder):  # the generator's data in one segment of many pages
        def __init__(self, log_dir: Path, partition: int = 0, segment_records: int = 0) -> None:
            super().__init__(log_dir, partition, 10**9)

    monkeypatch.setattr(test_offsets_core_diff, "OffsetsLogBuilder", OneSegment)
    pdir = generated_log(tmp_path, rng, rng.randint(300, 600))
    [seg] = pdir.glob("*.log")
    assert seg.stat().st_size > 8 * 4096
    start = rng.choice([0, rng.randint(0, 100)])
    cores = [None] + ([load_speedups()] if load_speedups() is not None else [])

    monkeypatch.setattr(MappedFile, "release", lambda self, upto: None)
    unreleased = {id(c): replay(pdir, c, start) for c in cores}
    monkeypatch.undo()
    monkeypatch.setattr(test_offsets_core_diff, "OffsetsLogBuilder", OneSegment)

    released: list[int] = []
    real_release = MappedFile.release

    def spy(self: MappedFile, upto: int) -> None:
        real_release(self, upto)
        released.append(self._released)

    monkeypatch.setattr(MappedFile, "_RELEASE_EVERY", 4096)
    monkeypatch.setattr(MappedFile, "release", spy)
    for core in cores:
        released.clear()
        assert replay(pdir, core, start) == unreleased[id(core)] == unreleased[id(None)], (case, core)
        if core is None:  # the release trails the walk by a batch and a page at most
            assert max(released, default=0) >= seg.stat().st_size - 3 * 4096, (case, released[-3:])
