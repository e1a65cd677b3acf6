"""Damaged KRaft metadata files are read up to the damage, which is named (file, offset, byte); bytes of
any shape never give a traceback (hypothesis)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafkatool.log.decoders._wire import DecodeError
from kafkatool.log.decoders.kraft_control import decode_control_record
from kafkatool.ops.metadata.load import load_dir, load_file
from kafkatool.ops.metadata.source import partition_dir
from kafkatool.ops.metadata.tree import glob_regex, root_node, run_shell_words
from tests.conftest import FIXTURES, require_fixtures

META = FIXTURES / "kraft-4.0.0" / "data" / "c1" / "meta"


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "kafkatool", *args], capture_output=True, text=True, timeout=120
    )


@pytest.fixture()
def copied(tmp_path: Path) -> Path:
    require_fixtures()
    if not META.is_dir():
        pytest.skip("kraft-4.0.0 fixture not found")
    dst = tmp_path / "meta"
    shutil.copytree(META, dst)
    for p in [dst, *dst.rglob("*")]:
        p.chmod(0o755 if p.is_dir() else 0o644)
    return dst


def test_corrupt_batch_in_the_log_after_the_snapshot(copied: Path) -> None:
    """Only the log from offset 0 (no snapshots): a flipped byte in segment 93 stops the replay there."""
    pdir = partition_dir(copied)
    for snap in pdir.glob("*.checkpoint"):
        snap.unlink()
    seg = pdir / "00000000000000000093.log"
    data = bytearray(seg.read_bytes())
    data[200] ^= 0xFF
    seg.write_bytes(bytes(data))
    loaded = load_dir(pdir)
    assert len(loaded.damage) == 1
    d = loaded.damage[0]
    assert d.path.endswith("00000000000000000093.log") and d.offset is not None and d.offset >= 93
    assert loaded.image.provenance.offset < d.offset  # everything before the damage, nothing after
    assert loaded.image.topic_by_name("fx-orders") is not None
    p = run_cli("metadata", "ls", "/image/topics/byName", "-s", str(copied))
    assert p.returncode == 1
    assert "fx-orders" in p.stdout
    assert (
        p.stderr.count("\n") == 1
        and "00000000000000000093.log" in p.stderr
        and "damaged at offset" in p.stderr
    )


def test_torn_snapshot_file(copied: Path) -> None:
    snap = partition_dir(copied) / "00000000000000000090-0000000001.checkpoint"
    data = snap.read_bytes()
    snap.write_bytes(data[: len(data) // 2])
    loaded = load_file(snap)
    assert loaded.damage and "trailing" in loaded.damage[0].reason
    p = run_cli("metadata", "tree", "/image/features", "-s", str(snap))
    assert p.returncode == 1 and "Traceback" not in p.stderr


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.binary(max_size=600))
def test_any_bytes_as_a_metadata_file(tmp_path: Path, data: bytes) -> None:
    f = tmp_path / "x.checkpoint"
    f.write_bytes(data)
    loaded = load_file(f)
    run_shell_words(root_node(loaded.image), ["find", "/image/topics"])


@given(st.binary(max_size=40), st.one_of(st.none(), st.binary(max_size=80)))
def test_control_record_decoder_is_total(key: bytes, value: bytes | None) -> None:
    try:
        decode_control_record(key, value)
    except DecodeError:
        pass


@given(st.text(max_size=30))
def test_glob_never_raises(glob: str) -> None:
    glob_regex(glob)


def test_segment_read_alone_skips_what_cannot_apply() -> None:
    """A later segment alone lacks the brokers registered before it: Kafka's loader skips such records
    (and goes on); so does kafkatool, with a note, exit 0."""
    require_fixtures()
    seg = META / "__cluster_metadata-0" / "00000000000000000093.log"
    if not seg.is_file():
        pytest.skip("segment missing")
    loaded = load_file(seg)
    assert not loaded.damage and loaded.skipped and loaded.skipped[0].offset == 98
    assert 4 in loaded.image.brokers  # re-registered inside the segment, at offset 112
    p = run_cli("metadata", "ls", "/image/cluster/brokers", "-s", str(seg))
    assert p.returncode == 0 and p.stdout == "4\n" and p.stderr.startswith("kafkatool: note: ")
