"""The compiled offsets replay against the pure-Python one (issue 14).

`offsets_replay_run` replays runs of plain offset-commit and group batches and `offset_commit_key`/
`_value` decode the common versions; whatever they leave (other versions, non-ASCII text, offset
tombstones, transactions, codecs, damage) the Python path reads.  The oracle is that Python path (which
tests/test_offsets_offline.py checks against the real brokers' data and Kafka's own decoder): over the
fixtures' `__consumer_offsets`, seeded generated logs of every key/value version and seeded mutations
of them, both cores must give equal states — offsets, groups, pending, problems, record counts.
"""

from __future__ import annotations

import dataclasses
import random
import shutil
import struct
from pathlib import Path
from typing import Any

import pytest

from kafkatool.log.codecs import Codec
from kafkatool.log.core import load_speedups
from kafkatool.log.decoders.offsets import (
    GroupMetadataKey,
    OffsetCommitKey,
    decode_offset_commit_value,
    decode_offsets_key,
)
from kafkatool.ops import offsets_log
from kafkatool.ops.offsets_log import OffsetsState, replay_log_dirs, replay_partition_dir
from tests.conftest import FIXTURES
from tests.test_offsets_offline import OffsetsLogBuilder, group_key, group_value

speedups = load_speedups()
pytestmark = pytest.mark.skipif(speedups is None, reason="the compiled core is not built (no C compiler?)")

SEED = 1414


def snapshot(st: OffsetsState) -> dict[str, Any]:
    """The whole state, dicts as lists: their order (first write wins a place) must agree too."""
    return {
        "offsets": list(st.offsets.items()), "groups": [(g, dataclasses.asdict(v)) for g, v in st.groups.items()],
        "group_partition": st.group_partition, "deleted": st.deleted_groups, "pending": list(st.pending.items()),
        "problems": st.problems, "partitions": st.partitions_read, "records": st.records_read,
    }


def both(fn: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """fn() with the compiled core, then with the Python path."""
    saved = offsets_log.speedups
    try:
        offsets_log.speedups = speedups
        c = snapshot(fn())
        offsets_log.speedups = None
        py = snapshot(fn())
    finally:
        offsets_log.speedups = saved
    return c, py


def _s(v: str | None) -> bytes:
    if v is None:
        return struct.pack(">h", -1)
    b = v.encode()
    return struct.pack(">H", len(b) & 0xFFFF) + b  # past 32767 the length wraps negative, as bad data can


def _uvarint(n: int) -> bytes:
    out = b""
    while n >= 0x80:
        out += bytes([n & 0x7F | 0x80])
        n >>= 7
    return out + bytes([n])


def key_v(version: int, group: str, topic: str, partition: int) -> bytes:
    return struct.pack(">h", version) + _s(group) + _s(topic) + struct.pack(">i", partition)


def value_v(version: int, offset: int, metadata: str | None, commit_ts: int, rng: random.Random) -> bytes:
    """An offset commit value of any version 0-4 (v4: compact string, sometimes a tagged field)."""
    if version == 4:
        meta = b"\x00" if metadata is None else _uvarint(len(metadata.encode()) + 1) + metadata.encode()
        tags = b"\x00" if rng.random() < 0.8 else b"\x01\x05\x02ab"
        return struct.pack(">hqi", 4, offset, rng.randint(-1, 9)) + meta + struct.pack(">q", commit_ts) + tags
    out = struct.pack(">hq", version, offset)
    if version == 3:
        out += struct.pack(">i", rng.randint(-1, 9))
    out += _s(metadata) + struct.pack(">q", commit_ts)
    if version == 1:
        out += struct.pack(">q", commit_ts + 86_400_000)
    return out


GROUPS = ["g", "group-1", "grüppe", "g" * 300, ""]
TOPICS = ["t", "topic.x", "tópico"]


def generated_log(root: Path, rng: random.Random, batches: int) -> Path:
    b = OffsetsLogBuilder(root, partition=rng.randint(0, 49), segment_records=rng.randint(5, 60))
    pids = [7, 8]
    for _ in range(batches):
        roll = rng.random()
        if roll < 0.06:
            b.batch([(group_key(rng.choice(GROUPS[:3])),
                      group_value([("m", [("t", 0)])]) if rng.random() < 0.8 else None)])
            continue
        if roll < 0.09:
            b.marker(rng.choice(pids), rng.random() < 0.5)
            continue
        kvs = []
        for _ in range(rng.randint(1, 12)):
            key = key_v(rng.choice([0, 1, 1, 1, 2, 9] if rng.random() < 0.05 else [0, 1]), rng.choice(GROUPS),
                        rng.choice(TOPICS), rng.randint(0, 5))
            if rng.random() < 0.02:
                key = key[: rng.randint(0, len(key))]
            meta = rng.choice(["", "", "m", "ñ", None, "x" * 200])
            value = None if rng.random() < 0.05 else value_v(rng.choice([0, 1, 2, 3, 3, 4, 5]), rng.randint(0, 10**12),
                                                             meta, 1_700_000_000_000 + rng.randint(0, 10**6), rng)
            kvs.append((key, value))
        txn = rng.random() < 0.08
        codec = Codec.GZIP if rng.random() < 0.05 else Codec.NONE
        b.batch(kvs, pid=rng.choice(pids) if txn else rng.choice([-1, 3]), txn=txn, codec=codec)
    return b.close()


def fixture_partitions() -> list[Path]:
    roots = [FIXTURES / "kafka-logs", FIXTURES / "kafka-4.0.0" / "kafka-logs"]
    return sorted(p for r in roots if r.is_dir() for p in r.glob("__consumer_offsets-*") if p.is_dir())


def test_fixture_partitions_replay_alike() -> None:
    parts = fixture_partitions()
    if not parts:
        pytest.skip("no fixtures")
    for pdir in parts:
        c, py = both(lambda pdir=pdir: replay_partition_dir(pdir))
        assert c == py, pdir
    for root in {p.parent for p in parts}:
        c, py = both(lambda root=root: replay_log_dirs([root]))
        assert c == py and py["records"] > 0


@pytest.mark.parametrize("case", range(12))
def test_generated_logs_replay_alike(tmp_path: Path, case: int) -> None:
    rng = random.Random(SEED * 100 + case)
    pdir = generated_log(tmp_path, rng, rng.randint(20, 160))
    for start in (0, rng.randint(0, 200)):
        for groups in (None, ["g", "grüppe", "nobody"]):
            c, py = both(lambda start=start, groups=groups: replay_partition_dir(pdir, groups, log_start_offset=start))
            assert c == py, (case, start, groups)
    assert py["records"] > 0


@pytest.mark.parametrize("case", range(30))
def test_mutated_logs_replay_alike(tmp_path: Path, case: int) -> None:
    """Bit flips, overwritten bytes and cuts in a generated log: the same problems, the same state."""
    rng = random.Random(SEED * 1000 + case)
    src = generated_log(tmp_path / "src", rng, 40)
    pdir = tmp_path / "mut" / src.name
    shutil.copytree(src, pdir)
    logs = sorted(pdir.glob("*.log"))
    for _ in range(rng.randint(1, 4)):
        path = rng.choice(logs)
        data = bytearray(path.read_bytes())
        if not data:
            continue
        what = rng.random()
        at = rng.randrange(len(data))
        if what < 0.5:
            data[at] ^= 1 << rng.randrange(8)
        elif what < 0.8:
            data[at : at + 4] = rng.randbytes(4)
        else:
            del data[at:]
        path.write_bytes(bytes(data))
    start = rng.choice([0, 0, 30])
    c, py = both(lambda: replay_partition_dir(pdir, log_start_offset=start))
    assert c == py


def test_key_and_value_decoders_agree_with_python() -> None:
    """Whenever the compiled decoders answer, they answer what the Python decoders do; the seeded inputs
    include every version, text in and out of ASCII, nulls, tagged fields, cuts and random bytes."""
    assert speedups is not None
    rng = random.Random(SEED)
    answered = [0, 0]
    for i in range(6000):
        key = key_v(rng.choice([0, 1, 2, -1]), rng.choice(GROUPS), rng.choice(TOPICS), rng.randint(-3, 2**31 - 1))
        value = value_v(rng.choice([0, 1, 2, 3, 4, 5, -1]), rng.randint(-(2**63), 2**63 - 1),
                        rng.choice(["", "m", "ñ", None, "y" * 130, "z" * 40000]), rng.randint(-(2**63), 2**63 - 1), rng)
        if i % 3 == 1:
            key, value = key[: rng.randint(0, len(key))], value[: rng.randint(0, len(value))]
        elif i % 3 == 2:
            key, value = rng.randbytes(rng.randint(0, 30)), rng.randbytes(rng.randint(0, 40))
        got = speedups.offset_commit_key(key)
        if got is not None:
            answered[0] += 1
            k = decode_offsets_key(key)
            if isinstance(k, GroupMetadataKey):
                assert got == k.group
            else:
                assert isinstance(k, OffsetCommitKey) and got == (k.group, k.topic, k.partition)
        got = speedups.offset_commit_value(value)
        if got is not None:
            answered[1] += 1
            v = decode_offset_commit_value(value)
            assert got == (v.offset, v.metadata, v.commit_timestamp, v.expire_timestamp, v.leader_epoch)
    assert min(answered) > 300  # the compiled decoders do take the common versions
