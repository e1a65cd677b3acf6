"""`compact` releases the mapped pages behind its passes (issue 14: peak RSS flat in the segment size).

The load scan, the offset-map pass and the cleaning pass each walk a whole segment through one memory
map, and none released what it had read, so the resident file pages grew with the segment (a 314 MB
partition of 100 MiB segments: 120 MB of mapped pages; 52 MB with the release).  With the release step
shrunk to one page and the map/judgement rounds to a few batches, compaction must write exactly the
files it writes without any release (byte for byte, every segment, index and checkpoint), and the
release must reach the end of each segment the passes read.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from kafkatool.log.files import MappedFile
from kafkatool.ops.compact import CompactConfig, cleaner, compact_partition
from kafkatool.ops.generate import GenerateSpec, generate_partition

NOW = 1_800_000_000_000


def files_of(log_dir: Path) -> dict[str, bytes]:
    return {str(p.relative_to(log_dir)): p.read_bytes() for p in sorted(log_dir.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("spec", [
    GenerateSpec(records=6000, batch_records=20, key_space=300, value_bytes=200, tombstone_ratio=0.05,
                 segment_bytes=300_000, seed=3),
    GenerateSpec(records=4000, batch_records=10, key_space=150, value_bytes=100, codec="lz4", transactional=True,
                 abort_ratio=0.2, segment_bytes=120_000, seed=4),
])
def test_released_pages_change_nothing(tmp_path: Path, spec: GenerateSpec, monkeypatch: pytest.MonkeyPatch) -> None:
    generate_partition(tmp_path / "src", spec)
    shutil.copytree(tmp_path / "src", tmp_path / "plain")
    shutil.copytree(tmp_path / "src", tmp_path / "released")
    cfg = CompactConfig(delete_retention_ms=60_000, policy_confirmed=True)

    monkeypatch.setattr(MappedFile, "release", lambda self, upto: None)
    compact_partition(tmp_path / "plain" / "demo-0", cfg, now_ms=NOW)
    monkeypatch.undo()

    released: dict[str, int] = {}
    real_release = MappedFile.release

    def spy(self: MappedFile, upto: int) -> None:
        real_release(self, upto)
        released[self.path.name] = max(released.get(self.path.name, 0), self._released)

    sizes = {p.name: p.stat().st_size for p in (tmp_path / "src" / "demo-0").glob("*.log")}
    monkeypatch.setattr(MappedFile, "_RELEASE_EVERY", 4096)
    monkeypatch.setattr(MappedFile, "release", spy)
    monkeypatch.setattr(cleaner, "MAP_BYTES_PER_PUT", 8192)
    monkeypatch.setattr(cleaner, "CLEAN_BYTES_PER_JUDGEMENT", 8192)
    res = compact_partition(tmp_path / "released" / "demo-0", cfg, now_ms=NOW)
    assert res.stats.records_read > res.stats.records_written > 0

    assert files_of(tmp_path / "released") == files_of(tmp_path / "plain")
    # every segment but the active one was read through to (about) its end, releasing behind
    active = max(sizes)
    for name, size in sizes.items():
        if name != active:
            assert released.get(name, 0) >= size - 3 * 8192, (name, size, released)
