"""Property tests of producer-state snapshots and checkpoint files: round trips and Kafka's errors."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafkatool.log.checkpoint import (
    Checkpoint,
    atomic_write,
    format_checkpoint,
    java_int,
    parse_checkpoint,
    read_leader_epoch_checkpoint,
    read_offset_checkpoint,
    write_leader_epoch_checkpoint,
    write_offset_checkpoint,
)
from kafkatool.log.errors import CheckpointError, CorruptSnapshotError
from kafkatool.log.record import INT32_MAX, increment_sequence
from kafkatool.log.snapshot import (
    ENTRY_SIZE,
    ProducerSnapshotEntry,
    encode_producer_snapshot,
    read_producer_snapshot,
)

SETTINGS = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
I16 = st.integers(-(2**15), 2**15 - 1)
I32 = st.integers(-(2**31), 2**31 - 1)
I64 = st.integers(-(2**63), 2**63 - 1)

snapshot_entries = st.builds(
    ProducerSnapshotEntry,
    producer_id=I64,
    producer_epoch=I16,
    last_sequence=I32,
    last_offset=I64,
    offset_delta=I32,
    timestamp=I64,
    coordinator_epoch=I32,
    current_txn_first_offset=I64,
)


# ------------------------------------------------------------------------------------------------
# producer snapshots


@SETTINGS
@given(entries=st.lists(snapshot_entries, max_size=20))
def test_snapshot_round_trip(entries: list[ProducerSnapshotEntry]) -> None:
    data = encode_producer_snapshot(entries)
    assert len(data) == 10 + ENTRY_SIZE * len(entries) and ENTRY_SIZE == 46
    assert struct.unpack_from(">hi", data, 0)[0] == 1 and struct.unpack_from(">i", data, 6)[0] == len(entries)
    assert read_producer_snapshot(data) == entries


@SETTINGS
@given(last=st.integers(0, INT32_MAX), delta=st.integers(0, INT32_MAX))
def test_first_sequence_undoes_wrap_around(last: int, delta: int) -> None:
    """Kafka's decrementSequence: incrementing the first sequence by the delta gives the last back."""
    e = ProducerSnapshotEntry(1, 0, last, 100, delta, 0, 0, -1)
    assert 0 <= e.first_sequence <= INT32_MAX
    assert increment_sequence(e.first_sequence, delta) == last


@SETTINGS
@given(entries=st.lists(snapshot_entries, min_size=1, max_size=5), at=st.integers(0), bit=st.integers(0, 7))
def test_snapshot_damage_is_reported(entries: list[ProducerSnapshotEntry], at: int, bit: int) -> None:
    data = bytearray(encode_producer_snapshot(entries))
    pos = at % len(data)
    data[pos] ^= 1 << bit
    with pytest.raises(CorruptSnapshotError) as e:
        read_producer_snapshot(bytes(data))
    if pos < 2:
        assert "unknown file version" in str(e.value)
    else:
        assert "CRC is no longer valid" in str(e.value)


@settings(max_examples=300, deadline=None)
@given(data=st.binary(max_size=120))
def test_garbage_snapshot_raises_only_corrupt_snapshot_error(data: bytes) -> None:
    try:
        read_producer_snapshot(data)
    except CorruptSnapshotError:
        pass


@SETTINGS
@given(entries=st.lists(snapshot_entries, max_size=4), count=I32, extra=st.binary(max_size=60))
def test_count_that_does_not_fill_the_file(entries: list[ProducerSnapshotEntry], count: int, extra: bytes) -> None:
    """A count or size that disagree with each other under a valid CRC: a schema error, never a crash."""
    import crc32c

    body = bytearray(encode_producer_snapshot(entries)[6:] + extra)
    struct.pack_into(">i", body, 0, count)
    data = struct.pack(">hI", 1, crc32c.crc32c(bytes(body))) + bytes(body)
    if count == len(entries) and not extra:
        assert read_producer_snapshot(data) == entries
    else:
        with pytest.raises(CorruptSnapshotError, match="Snapshot failed schema validation"):
            read_producer_snapshot(data)


def test_snapshot_messages() -> None:
    with pytest.raises(CorruptSnapshotError, match="Snapshot failed schema validation"):
        read_producer_snapshot(b"\x00\x01\x00")
    with pytest.raises(CorruptSnapshotError, match="Snapshot contained an unknown file version 2"):
        read_producer_snapshot(struct.pack(">hIi", 2, 0, 0))
    data = bytearray(encode_producer_snapshot([ProducerSnapshotEntry(1, 2, 3, 4, 1, 6, 7, -1)]))
    data[-1] ^= 0x10
    with pytest.raises(CorruptSnapshotError, match=r"Snapshot is corrupt \(CRC is no longer valid\). Stored crc: \d+. "
                       r"Computed crc: \d+"):
        read_producer_snapshot(bytes(data))


# ------------------------------------------------------------------------------------------------
# checkpoints

topics = st.text(st.sampled_from("abcdefghijklmnopqrstuvwxyzABCXYZ0123456789._-"), min_size=1, max_size=30)
offset_maps = st.dictionaries(st.tuples(topics, st.integers(0, 2**31 - 1)), st.integers(0, 2**63 - 1), max_size=30)


@SETTINGS
@given(offsets=offset_maps)
def test_offset_checkpoint_round_trip(tmp_path: Path, offsets: dict[tuple[str, int], int]) -> None:
    p = tmp_path / "recovery-point-offset-checkpoint"
    write_offset_checkpoint(p, offsets)
    assert read_offset_checkpoint(p) == offsets
    lines = p.read_text().split("\n")
    assert lines[:2] == ["0", str(len(offsets))] and lines[-1] == ""
    assert not (tmp_path / "recovery-point-offset-checkpoint.tmp").exists()


@SETTINGS
@given(entries=st.lists(st.tuples(st.integers(0, 2**31 - 1), st.integers(0, 2**63 - 1)), max_size=30))
def test_leader_epoch_checkpoint_round_trip(tmp_path: Path, entries: list[tuple[int, int]]) -> None:
    p = tmp_path / "leader-epoch-checkpoint"
    write_leader_epoch_checkpoint(p, entries)
    assert read_leader_epoch_checkpoint(p) == entries


@SETTINGS
@given(
    entries=st.lists(st.lists(st.text("abc012-", min_size=1, max_size=6), min_size=1, max_size=4).map(tuple), max_size=10),
    crlf=st.booleans(),
)
def test_format_parse_round_trip(entries: list[tuple[str, ...]], crlf: bool) -> None:
    text = format_checkpoint(entries)  # type: ignore[arg-type]
    if crlf:  # BufferedReader.readLine also ends lines at \r\n
        text = text.replace("\n", "\r\n")
    assert parse_checkpoint(text) == Checkpoint(0, entries)


@pytest.mark.parametrize("text", ["", "0", "0\n", "0\r\n"])
def test_empty_and_count_less_files_have_no_entries(text: str) -> None:
    """CheckpointFile.read returns no entries when the file ends before the count line."""
    assert parse_checkpoint(text, "/x") == Checkpoint(0, [])


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("1\n0\n", "Unrecognised version:1, expected version: 0 in checkpoint file at: /x"),
        ("-3\n0\n", "Unrecognised version:-3, expected version: 0 in checkpoint file at: /x"),
        ("x\n0\n", "Malformed line in checkpoint file [/x]: x"),
        (" 0\n0\n", "Malformed line in checkpoint file [/x]:  0"),
        ("0\n1_0\n", "Malformed line in checkpoint file [/x]: 1_0"),
        ("0\n2147483648\n", "Malformed line in checkpoint file [/x]: 2147483648"),
        ("0\nabc\n", "Malformed line in checkpoint file [/x]: abc"),
        ("0\n2\nt 0 5\n", "Expected [2] entries in checkpoint file [/x], but found only [1]"),
        ("0\n0\nt 0 5\n", "Expected [0] entries in checkpoint file [/x], but found only [1]"),
        ("0\n1\nt 0\n", "Malformed line in checkpoint file [/x]: t 0"),
        ("0\n1\nt 0 5 6\n", "Malformed line in checkpoint file [/x]: t 0 5 6"),
        ("0\n1\n t 0 5\n", "Malformed line in checkpoint file [/x]:  t 0 5"),  # Java's split keeps a leading ""
        ("0\n1\n\n", "Malformed line in checkpoint file [/x]: "),
    ],
)
def test_checkpoint_errors(text: str, message: str) -> None:
    with pytest.raises(CheckpointError) as e:
        parse_checkpoint(text, "/x", fields=3)
    assert str(e.value) == message


@pytest.mark.parametrize(
    ("content", "match"),
    [
        (b"0\n1\nt x 5\n", "Malformed line"),
        (b"0\n1\nt 0 9223372036854775808\n", "Malformed line"),
        (b"0\n1\nt 2147483648 5\n", "Malformed line"),
        (b"0\n1\nt 1_0 5\n", "Malformed line"),
        (b"0\n1\nt\xff 0 5\n", "not valid UTF-8"),
    ],
)
def test_offset_checkpoint_bad_fields(tmp_path: Path, content: bytes, match: str) -> None:
    p = tmp_path / "replication-offset-checkpoint"
    p.write_bytes(content)
    with pytest.raises(CheckpointError, match=match):
        read_offset_checkpoint(p)
    p2 = tmp_path / "leader-epoch-checkpoint"
    p2.write_bytes(content.replace(b"t ", b""))
    with pytest.raises(CheckpointError):
        read_leader_epoch_checkpoint(p2)


@settings(max_examples=300, deadline=None)
@given(text=st.text(st.sampled_from("0123456789 -+_\t\r\nab\x0b\x85\u00b2"), max_size=40), fields=st.sampled_from([None, 2, 3]))
def test_garbage_checkpoint_raises_only_checkpoint_error(text: str, fields: int | None) -> None:
    try:
        cp = parse_checkpoint(text, "/x", fields)
    except CheckpointError:
        return
    assert cp.version == 0
    assert fields is None or all(len(e) == fields for e in cp.entries)


@pytest.mark.parametrize(
    ("text", "value"),
    [("0", 0), ("+5", 5), ("-5", -5), ("007", 7), ("2147483647", INT32_MAX), ("-2147483648", -(2**31))],
)
def test_java_int_accepts(text: str, value: int) -> None:
    assert java_int(text) == value


@pytest.mark.parametrize("text", [" 1", "1 ", "1_0", "", "+", "-", "2147483648", "0x1", "1.0", "\u0661", "--1"])
def test_java_int_rejects(text: str) -> None:
    with pytest.raises(ValueError):
        java_int(text)
    assert java_int("9223372036854775807", 64) == 2**63 - 1


def test_atomic_write_replaces(tmp_path: Path) -> None:
    p = tmp_path / "cleaner-offset-checkpoint"
    atomic_write(p, b"old")
    atomic_write(p, b"new")
    assert p.read_bytes() == b"new"
    assert sorted(x.name for x in tmp_path.iterdir()) == ["cleaner-offset-checkpoint"]
