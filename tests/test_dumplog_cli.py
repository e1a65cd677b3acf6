"""dump-log beyond the goldens: JSON schema, decoders, exit codes, every format/codec we can write."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from kafkatool.ops.dumplog import DumpOptions, dump_files
from kafkatool.ops.generate import GenerateSpec, generate_partition


def run_cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kafkatool", *args], capture_output=True, cwd=cwd, timeout=120)


def dump(paths: list[str], **kw) -> tuple[bytes, bytes, int]:  # type: ignore[no-untyped-def]
    out, err = io.BytesIO(), io.BytesIO()
    res = dump_files(paths, DumpOptions(**kw), out, err)
    return out.getvalue(), err.getvalue(), res.exit_code


@pytest.mark.parametrize(
    "magic,codec",
    [(0, "none"), (0, "gzip"), (0, "snappy"), (0, "lz4"), (1, "none"), (1, "gzip"), (1, "snappy"), (1, "lz4"),
     (2, "none"), (2, "gzip"), (2, "snappy"), (2, "lz4"), (2, "zstd")],
)
def test_generated_logs_round_trip_through_json(tmp_path: Path, magic: int, codec: str) -> None:
    spec = GenerateSpec(records=300, batch_records=7, magic=magic, codec=codec, tombstone_ratio=0.1, seed=magic)
    res = generate_partition(tmp_path, spec)
    seg = str(res.partition_dir / "00000000000000000000.log")
    out, err, rc = dump([seg], output="ndjson", per_record=True, deep_iteration=True)
    assert rc == 0 and err == b""
    objs = [json.loads(line) for line in out.splitlines()]
    recs = [o for o in objs if o["type"] == "record"]
    assert [r["offset"] for r in recs] == list(range(300))
    assert all(r["key"].startswith("key-") for r in recs)
    tombs = [r for r in recs if r["value"] is None]
    assert tombs and all(r["value_size"] == -1 for r in tombs)
    if magic == 2:
        assert recs[0]["headers"] == [{"key": "source", "value": "kafkatool-generate", "value_encoding": "utf8"}]
    else:
        assert all(r["valid"] for r in recs)
    text, _, _ = dump([seg], print_data_log=True)
    assert text.count(b"\n| offset: ") == 300


def test_json_array_is_one_document_with_batches_and_records(tmp_path: Path) -> None:
    res = generate_partition(tmp_path, GenerateSpec(records=50, batch_records=10, transactional=True, abort_ratio=1.0))
    out, _, rc = dump([str(res.partition_dir / "00000000000000000000.log")], output="json", deep_iteration=True)
    doc = json.loads(out)
    assert rc == 0 and doc[0]["type"] == "file"
    batches = [o for o in doc if o["type"] == "batch"]
    assert len(batches) == 10
    data, marker = batches[0], batches[1]
    assert data["is_transactional"] and not data["is_control"] and data["codec"] == "none"
    assert set(data) >= {"position", "size", "magic", "base_offset", "last_offset", "count", "crc", "valid",
                         "timestamp_type", "max_timestamp", "producer_id", "producer_epoch", "base_sequence",
                         "last_sequence", "partition_leader_epoch", "delete_horizon_ms", "records"}
    assert marker["records"][0]["control"] == {"type": "ABORT", "type_id": 0, "coordinator_epoch": 0}


def test_binary_values_are_base64_in_json(tmp_path: Path) -> None:
    from kafkatool.log.record import Record
    from kafkatool.log.writer import encode_v2_batch

    seg = tmp_path / "00000000000000000000.log"
    seg.write_bytes(encode_v2_batch([Record(0, 1, b"\xff\xfe", b"ok", (("h", b"\x80"),))], 0))
    out, _, _ = dump([str(seg)], output="ndjson", deep_iteration=True)
    rec = json.loads(out.splitlines()[1])["records"][0]
    assert rec["key"] == "//4=" and rec["key_encoding"] == "base64"
    assert rec["value"] == "ok" and rec["value_encoding"] == "utf8"
    assert rec["headers"][0]["value_encoding"] == "base64"


@pytest.mark.parametrize("decoder,expect", [("hex", b"key: 6b2d31"), ("base64", b"key: ay0x"), ("string", b"key: k-1")])
def test_key_decoders(tmp_path: Path, decoder: str, expect: bytes) -> None:
    from kafkatool.log.record import Record
    from kafkatool.log.writer import encode_v2_batch

    seg = tmp_path / "00000000000000000000.log"
    seg.write_bytes(encode_v2_batch([Record(0, 1, b"k-1", b'{"a": 1}', ())], 0))
    out, _, _ = dump([str(seg)], key_decoder=decoder, value_decoder="json")
    assert expect in out and b'payload: {"a":1}' in out


def test_exit_codes_and_one_line_errors(tmp_path: Path) -> None:
    missing = run_cli("dump-log", "--files", str(tmp_path / "nope.log"))
    assert missing.returncode == 2 and missing.stderr.count(b"\n") == 1 and b"nope.log" in missing.stderr
    bad_opt = run_cli("dump-log", "--frobnicate")
    assert bad_opt.returncode == 2 and b"No such option" in bad_opt.stderr and b"Traceback" not in bad_opt.stderr
    bad_name = tmp_path / "segment.log"
    bad_name.write_bytes(b"")
    r = run_cli("dump-log", "--files", str(bad_name))
    assert r.returncode == 2 and b"base offset" in r.stderr
    corrupt = tmp_path / "00000000000000000000.log"
    res = generate_partition(tmp_path / "g", GenerateSpec(records=20))
    data = (res.partition_dir / "00000000000000000000.log").read_bytes()
    corrupt.write_bytes(data + b"\x00" * 100)
    r = run_cli("dump-log", "--files", str(corrupt))
    assert r.returncode == 1 and len(r.stderr.splitlines()) == 1 and b"smaller than minimum" in r.stderr
    ok = run_cli("dump-log", "--files", str(res.partition_dir / "00000000000000000000.log"))
    assert ok.returncode == 0 and ok.stderr == b""
    bad_fmt = run_cli("dump-log", "--files", str(corrupt), "--format", "xml")
    assert bad_fmt.returncode == 2


def test_max_bytes_limits_the_read_and_hides_the_trailing_bytes_line(tmp_path: Path) -> None:
    res = generate_partition(tmp_path, GenerateSpec(records=100, batch_records=10))
    seg = str(res.partition_dir / "00000000000000000000.log")
    full, _, _ = dump([seg])
    part, _, _ = dump([seg], max_bytes=2000)
    assert part.count(b"baseOffset") < full.count(b"baseOffset") and b"invalid bytes" not in part


def test_broken_pipe_is_quiet(tmp_path: Path) -> None:
    res = generate_partition(tmp_path, GenerateSpec(records=20000, batch_records=10))
    seg = str(res.partition_dir / "00000000000000000000.log")
    p = subprocess.run(
        f"{sys.executable} -m kafkatool dump-log --files {seg} --print-data-log | head -1",
        shell=True, capture_output=True, timeout=120,
    )
    assert b"Traceback" not in p.stderr and b"Broken pipe" not in p.stderr


def test_non_ascii_digits_and_fifos_are_one_line_input_errors(tmp_path: Path) -> None:
    import os

    odd = tmp_path / "\u00b2.log"
    odd.write_bytes(b"")
    r = run_cli("dump-log", "--files", str(odd))
    assert r.returncode == 2 and len(r.stderr.splitlines()) == 1
    fifo = tmp_path / "00000000000000000000.log"
    os.mkfifo(fifo)
    r = run_cli("dump-log", "--files", str(fifo))
    assert r.returncode == 2 and b"not a regular file" in r.stderr
