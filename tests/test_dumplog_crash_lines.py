"""dump-log where Kafka's tool dies inside a batch line: an unknown compression codec id.

DumpLogSegments.printBatchLevel (Kafka 3.3.1) first `print`s the start of the line - for magic 2
`baseOffset: ... deleteHorizonMs: ...`, for magic 0/1 `offset: <last offset>` - and only then builds
the rest, where `batch.compressionType` throws `IllegalArgumentException: Unknown compression type
id: 5`: stdout ends with that start, without a newline.  kafkatool prints the same bytes, then one
`kafkatool:` line on stderr; a further file starts on a new line.  Expected text is written out
from Kafka's format strings, not taken from our renderer.
"""

from __future__ import annotations

import io
import struct
import zlib
from pathlib import Path

import pytest

import kafkatool.ops.dumplog as dl
from kafkatool.log.crc import crc32c
from kafkatool.log.records import Record
from kafkatool.log.writer import encode_legacy_message, encode_v2_batch
from kafkatool.ops.dumplog import parallel


def _records(first: int, n: int) -> list[Record]:
    return [Record(o, 1000 + o, b"k%d" % o, b"v%d" % o, ()) for o in range(first, first + n)]


def _v2_codec(batch: bytes, codec: int) -> bytes:
    """A v2 batch whose attributes name `codec`, with a CRC that matches (Kafka's tool does not care)."""
    b = bytearray(batch)
    b[22] = (b[22] & ~7) | codec
    struct.pack_into(">I", b, 17, crc32c(bytes(b[21:])))
    return bytes(b)


def _v1_codec(message: bytes, codec: int) -> bytes:
    b = bytearray(message)
    b[17] = (b[17] & ~7) | codec
    struct.pack_into(">I", b, 12, zlib.crc32(bytes(b[16:])))
    return bytes(b)


V2_LINE_0 = (
    b"baseOffset: 0 lastOffset: 2 count: 3 baseSequence: -1 lastSequence: -1 producerId: -1 producerEpoch: -1 "
    b"partitionLeaderEpoch: 0 isTransactional: false isControl: false deleteHorizonMs: OptionalLong.empty "
    b"position: 0 CreateTime: 1002 size: 94 magic: 2 compresscodec: none crc: %d isvalid: true\n"
)
V2_START_3 = (
    b"baseOffset: 3 lastOffset: 5 count: 3 baseSequence: -1 lastSequence: -1 producerId: -1 producerEpoch: -1 "
    b"partitionLeaderEpoch: 0 isTransactional: false isControl: false deleteHorizonMs: OptionalLong.empty"
)


def _crc(batch: bytes) -> int:
    return struct.unpack_from(">I", batch, 17)[0]


def _cases(tmp_path: Path) -> dict[str, tuple[Path, bytes]]:
    """name -> (log file, the stdout Kafka's tool leaves, without deep iteration)."""
    good = encode_v2_batch(_records(0, 3), 0)
    out = {}
    f = tmp_path / "v2" / "00000000000000000000.log"
    f.parent.mkdir()
    f.write_bytes(good + _v2_codec(encode_v2_batch(_records(3, 3), 3), 5) + encode_v2_batch(_records(6, 2), 6))
    out["v2"] = (f, b"Log starting offset: 0\n" + V2_LINE_0 % _crc(good) + V2_START_3)
    m0 = encode_legacy_message(0, b"k", b"v", magic=1, timestamp=5)
    f = tmp_path / "v1" / "00000000000000000000.log"
    f.parent.mkdir()
    f.write_bytes(m0 + _v1_codec(encode_legacy_message(1, b"k", b"v", magic=1, timestamp=6), 5))
    crc0 = struct.unpack_from(">I", m0, 12)[0]
    out["v1"] = (
        f,
        b"Log starting offset: 0\noffset: 0 position: 0 CreateTime: 5 size: 36 magic: 1 compresscodec: none "
        b"crc: %d isvalid: true\noffset: 1" % crc0,
    )
    f = tmp_path / "mixed" / "00000000000000000000.log"  # a magic-1 message inside a v2 log
    f.parent.mkdir()
    f.write_bytes(good + _v1_codec(encode_legacy_message(3, b"k", b"v", magic=1, timestamp=6), 6))
    out["v1-in-v2"] = (f, b"Log starting offset: 0\n" + V2_LINE_0 % _crc(good) + b"offset: 3")
    return out


def _dump(paths: list[Path], **kw: object) -> tuple[bytes, bytes, int]:
    out, err = io.BytesIO(), io.BytesIO()
    res = dl.dump_files([str(p) for p in paths], dl.DumpOptions(**kw), out, err)  # type: ignore[arg-type]
    return out.getvalue(), err.getvalue(), res.exit_code


@pytest.mark.parametrize("case", ["v2", "v1", "v1-in-v2"])
@pytest.mark.parametrize("deep", [False, True])
def test_stdout_ends_with_the_line_start_kafka_printed(tmp_path: Path, case: str, deep: bool) -> None:
    path, kafka = _cases(tmp_path)[case]
    out, err, rc = _dump([path], deep_iteration=deep)
    head = f"Dumping {path}\n".encode()
    if deep:  # the records of the batches before it come between; the end is the same
        assert out.startswith(head + kafka.split(b"\n")[0]) and out.endswith(kafka.rsplit(b"\n", 1)[1])
        assert out.count(b"\n| offset: ") == (1 if case == "v1" else 3)
    else:
        assert out == head + kafka
    assert rc != 0
    codec = 6 if case == "v1-in-v2" else 5
    assert err.decode().splitlines() == [f"kafkatool: {path}: Unknown compression type id: {codec}"]


def test_a_further_file_starts_on_a_new_line(tmp_path: Path) -> None:
    cases = _cases(tmp_path)
    (a, kafka_a), (b, kafka_b) = cases["v2"], cases["v1"]
    out, err, _ = _dump([a, b])
    assert out == b"Dumping %s\n%s\nDumping %s\n%s" % (str(a).encode(), kafka_a, str(b).encode(), kafka_b)
    assert len(err.splitlines()) == 2


def test_parallel_workers_print_the_same_bytes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Deep iteration split over worker processes (any file size here) gives the one-process bytes."""
    path, _ = _cases(tmp_path)["v2"]
    one = _dump([path, path], deep_iteration=True, jobs=1)
    monkeypatch.setattr(parallel, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(parallel, "PARALLEL_CHUNK_BYTES", 90)
    assert _dump([path, path], deep_iteration=True, jobs=2) == one
