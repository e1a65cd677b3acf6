"""Fuzz the log library through dump-log's library paths with mutated real-broker fixtures.

Every case takes one fixture file of a format, applies a short list of mutations (bit flips, byte
sets, truncations, extensions, and structure-aware ones: batch size/magic/attributes/count fields,
record varints inside decompressed payloads re-compressed with a fixed CRC, keys/values of internal
topic records re-encoded into a valid batch, index entries, snapshot fields, checkpoint lines) and
runs `kafkatool.ops.dumplog.dump_files` in this process with one of the format's option sets, into
BytesIO.  A case fails when anything escapes `dump_files` (it must report corruption as a problem,
never raise), when it runs longer than the per-case time limit, when JSON/NDJSON output does not
parse, when a problem message spans several lines, or when the exit code is not 0, 1 or 2.

Each case is reproducible from (format, seed, case number) alone; failures are minimized by
dropping mutations while the same exception at the same place persists, then printed with the
command that replays them:

    python benchmarks/fuzz.py --cases 100000 --seed 1                 # every format, 100k cases each
    python benchmarks/fuzz.py --format log,offsets --cases 20000 --seed 7
    python benchmarks/fuzz.py --format log --seed 7 --replay 1234      # one case, with its traceback
    python benchmarks/fuzz.py --cases 2000 --json                      # machine-readable report

Formats: log (v0/v1/v2 segments, every codec), index, timeindex, txnindex, snapshot, checkpoint
(text checkpoints, leader-epoch-checkpoint, quorum-state), offsets (`__consumer_offsets` with the
offsets decoder), transactions (`__transaction_state` with the transaction decoder), metadata
(`__cluster_metadata` and KRaft `.checkpoint` snapshots with the cluster-metadata decoder).
"""

from __future__ import annotations

import argparse
import io
import json
import os
import random
import shutil
import signal
import struct
import sys
import tempfile
import time
import traceback
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import crc32c

from kafkatool.log.codecs import compress
from kafkatool.log.records import Batch, BatchScan
from kafkatool.log.varint import encode_varint, read_varint
from kafkatool.log.writer import encode_legacy_batch, encode_v2_batch
from kafkatool.ops.dumplog import DumpOptions, dump_files

REPO = Path(__file__).resolve().parents[1]
DEFAULT_FIXTURES = Path(os.environ.get("KAFKATOOL_SHARED", REPO.parent / "shared")) / "fixtures" / "kafka-logs"
MAX_FILE = 512 * 1024  # larger fixtures slow every case down without reaching new code

Op = list[Any]  # JSON-able mutation: [name, *params]

INTERESTING_32 = [-(2**31), -2, -1, 0, 1, 2, 13, 14, 21, 22, 48, 49, 60, 61, 127, 128, 255, 4096, 2**16, 2**31 - 1]
INTERESTING_64 = [-(2**63), -1, 0, 1, 2**31 - 1, 2**31, 2**32, 2**62, 2**63 - 1]
INTERESTING_16 = [-(2**15), -1, 0, 1, 2, 3, 4, 5, 7, 8, 0x7F, 0xFF, 2**15 - 1]
INTERESTING_VARINT = [-(2**63), -(2**31) - 1, -1000, -2, -1, 0, 1, 2, 3, 63, 64, 127, 128, 1000, 2**31 - 1, 2**31, 2**62]
INTERESTING_TEXT = ["", " ", "-1", "0", "1", "2147483647", "2147483648", "-2147483649", "9223372036854775808",
                    "--5", "+5", "1_0", "\u00b2", "\u0661", "x", "-", "0x10", "\t", "1 2", "\r"]


# ---------------------------------------------------------------------------------------------
# corpus
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class OptionSet:
    name: str
    kwargs: dict[str, Any]
    target: str = ""  # "" = the mutated file; ".index"/".timeindex" = its sibling, dumped with the mutated log


LOG_OPTIONS = [
    OptionSet("shallow", {}),
    OptionSet("deep", {"deep_iteration": True}),
    OptionSet("print", {"print_data_log": True}),
    OptionSet("print-skip-meta", {"print_data_log": True, "skip_record_metadata": True}),
    OptionSet("print-hex-json", {"key_decoder": "hex", "value_decoder": "json"}),
    OptionSet("print-int-long", {"key_decoder": "integer", "value_decoder": "long"}),
    OptionSet("max-bytes", {"print_data_log": True, "max_bytes": 700}),
    OptionSet("json-shallow", {"output": "json"}),
    OptionSet("json-deep", {"output": "json", "deep_iteration": True}),
    OptionSet("ndjson-records", {"output": "ndjson", "deep_iteration": True, "per_record": True}),
    OptionSet("offsets-on-any-log", {"payload_decoder": "offsets"}),
    OptionSet("verify-index-vs-mutated-log", {"verify_index_only": True}, ".index"),
    OptionSet("dump-index-vs-mutated-log", {}, ".index"),
    OptionSet("verify-timeindex-vs-mutated-log", {"verify_index_only": True}, ".timeindex"),
    OptionSet("json-timeindex-vs-mutated-log", {"output": "json"}, ".timeindex"),
]
INDEX_OPTIONS = [
    OptionSet("dump", {}),
    OptionSet("verify", {"verify_index_only": True}),
    OptionSet("sanity", {"index_sanity_check": True}),
    OptionSet("json", {"output": "json"}),
    OptionSet("small-max-message", {"max_message_size": 64}),
]
PLAIN_OPTIONS = [OptionSet("dump", {}), OptionSet("json", {"output": "json"}), OptionSet("ndjson", {"output": "ndjson"})]


def _decoder_options(decoder: str) -> list[OptionSet]:
    return [
        OptionSet(decoder, {"payload_decoder": decoder}),
        OptionSet(decoder + "-skip-meta", {"payload_decoder": decoder, "skip_record_metadata": True}),
        OptionSet(decoder + "-json", {"payload_decoder": decoder, "output": "json", "deep_iteration": True}),
        OptionSet(decoder + "-ndjson", {"payload_decoder": decoder, "output": "ndjson", "per_record": True,
                                        "deep_iteration": True}),
    ]


INTERNAL = ("__consumer_offsets-", "__transaction_state-", "__cluster_metadata-")
TEXT_FILES = ("recovery-point-offset-checkpoint", "replication-offset-checkpoint", "log-start-offset-checkpoint",
              "cleaner-offset-checkpoint", "leader-epoch-checkpoint", "quorum-state")


@dataclass
class Format:
    name: str
    select: Callable[[Path], bool]
    options: list[OptionSet]
    mutate: Callable[[random.Random, bytes], list[Op]]
    chunk: int = 0  # >0: each source is a window of this many consecutive batches of a fixture log


def _dir(p: Path) -> str:
    return p.parent.name


# ---------------------------------------------------------------------------------------------
# structure of the originals (for targeted mutations)
# ---------------------------------------------------------------------------------------------


def batches_of(data: bytes) -> list[Batch]:
    return list(BatchScan(data))


def v2_record_fields(d: bytes, count: int) -> list[int]:
    """Positions of every varint (and attribute byte) of the records in decompressed v2 record data."""
    out: list[int] = []
    pos = 0
    try:
        for _ in range(count):
            out.append(pos)
            length, pos = read_varint(d, pos)
            end = pos + length
            out.append(pos)  # attributes
            pos += 1
            for _f in range(2):  # timestamp delta, offset delta
                out.append(pos)
                _v, pos = read_varint(d, pos)
            for _f in range(2):  # key, value
                out.append(pos)
                n, pos = read_varint(d, pos)
                pos += max(n, 0)
            out.append(pos)
            hc, pos = read_varint(d, pos)
            for _h in range(max(hc, 0)):
                out.append(pos)
                n, pos = read_varint(d, pos)
                pos += max(n, 0)
                out.append(pos)
                n, pos = read_varint(d, pos)
                pos += max(n, 0)
            pos = end
    except Exception:  # noqa: BLE001 - a best-effort map of an original
        pass
    return out


def legacy_set_fields(d: bytes) -> list[tuple[int, int, int]]:
    """(message position, field position, width) of the framing fields of a v0/v1 message set."""
    out: list[tuple[int, int, int]] = []
    pos = 0
    while pos + 26 <= len(d):
        _off, size = struct.unpack_from(">qi", d, pos)
        magic = d[pos + 16]
        kpos = pos + 12 + (14 if magic == 1 else 6)
        fields = [(pos, 8), (pos + 8, 4), (pos + 12, 4), (pos + 16, 1), (pos + 17, 1), (kpos, 4)]
        if magic == 1:
            fields.append((pos + 18, 8))
        if kpos + 4 <= len(d):
            (klen,) = struct.unpack_from(">i", d, kpos)
            fields.append((kpos + 4 + max(klen, 0), 4))
        out += [(pos, f, w) for f, w in fields]
        if size < 14:
            break
        pos += 12 + size
    return out


# ---------------------------------------------------------------------------------------------
# mutations
# ---------------------------------------------------------------------------------------------


def _put_int(b: bytearray, pos: int, width: int, value: int) -> None:
    if pos < 0 or pos + width > len(b):
        return
    fmt = {1: ">B", 2: ">H", 4: ">I", 8: ">Q"}[width]
    struct.pack_into(fmt, b, pos, value % (1 << (8 * width)))


def _fix_crc(b: bytearray, pos: int) -> None:
    """Recompute the stored CRC of the batch/message at pos so decoders look past the CRC check."""
    if pos + 17 > len(b):
        return
    (size,) = struct.unpack_from(">i", b, pos + 8)
    end = min(len(b), pos + 12 + max(size, 0))
    if b[pos + 16] >= 2:
        if end > pos + 21:
            struct.pack_into(">I", b, pos + 17, crc32c.crc32c(bytes(b[pos + 21 : end])))
    elif end > pos + 16:
        struct.pack_into(">I", b, pos + 12, zlib.crc32(bytes(b[pos + 16 : end])))


def apply_ops(data: bytes, ops: list[Op]) -> bytes:
    """Apply mutations in order; each op is self-contained, so any subset of ops still applies."""
    b = bytearray(data)
    for op in ops:
        b = bytearray(_apply(op, bytes(b)))
    return bytes(b)


def _apply(op: Op, data: bytes) -> bytes:  # noqa: C901 - one branch per op, kept together on purpose
    name = op[0]
    b = bytearray(data)
    n = len(b)
    if name == "flip":
        if n:
            b[op[1] % n] ^= 1 << op[2]
    elif name == "set":
        if n:
            b[op[1] % n] = op[2]
    elif name == "int":
        _put_int(b, op[1], op[2], op[3])
    elif name == "truncate":
        del b[op[1] :]
    elif name == "extend":
        b += bytes.fromhex(op[1])
    elif name == "extend_zeros":
        b += bytes(op[1])
    elif name == "extend_copy":
        b += data[op[1] : op[1] + op[2]]
    elif name == "delete":
        del b[op[1] : op[1] + op[2]]
    elif name == "insert":
        b[op[1] : op[1]] = bytes.fromhex(op[2])
    elif name == "varint":  # replace the varint at pos by another value's encoding (or raw bytes)
        pos = op[1]
        try:
            _v, end = read_varint(data, pos)
        except Exception:  # noqa: BLE001
            return data
        new = bytes.fromhex(op[2]) if isinstance(op[2], str) else encode_varint(op[2])
        b[pos:end] = new
    elif name == "fixcrc":
        _fix_crc(b, op[1])
    elif name == "inner":
        return _apply_inner(data, op[1], op[2])
    elif name == "payload":
        return _apply_payload(data, op[1], op[2], op[3], op[4])
    elif name == "lines":
        return _apply_lines(data, op[1:])
    elif name == "snapshot_crc":  # a producer snapshot's CRC-32C over bytes 6..end
        if n >= 6:
            struct.pack_into(">I", b, 2, crc32c.crc32c(data[6:]))
    else:
        raise ValueError(f"unknown mutation {name}")
    return bytes(b)


def _batch_at(data: bytes, pos: int) -> Batch | None:
    for b in BatchScan(data):
        if b.position == pos:
            return b
        if b.position > pos:
            return None
    return None


def _apply_inner(data: bytes, pos: int, sub_ops: list[Op]) -> bytes:
    """Mutate the (decompressed) records of the batch at pos, re-compress, fix its size and CRC."""
    batch = _batch_at(data, pos)
    if batch is None:
        return data
    try:
        inner = batch.records_data()
    except Exception:  # noqa: BLE001
        return data
    mutated = apply_ops(inner, sub_ops)
    if batch.magic >= 2:
        body = compress(batch.codec, mutated, 2) if batch.codec else mutated
        head = bytearray(data[pos : pos + 61])
        struct.pack_into(">i", head, 8, 49 + len(body))
        struct.pack_into(">I", head, 17, crc32c.crc32c(bytes(head[21:]) + body))
        new = bytes(head) + body
    else:
        value = compress(batch.codec, mutated, batch.magic) if batch.codec else mutated
        key = None
        if not batch.codec:
            try:
                key = batch.records()[0].key
            except Exception:  # noqa: BLE001
                return data
        msg = bytearray(struct.pack(">bb", batch.magic, batch.attributes))
        if batch.magic == 1:
            msg += struct.pack(">q", batch.max_timestamp)
        for f in (key, value):
            msg += b"\xff\xff\xff\xff" if f is None else struct.pack(">i", len(f)) + f
        signed = struct.pack(">I", zlib.crc32(bytes(msg))) + bytes(msg)
        new = struct.pack(">qi", batch.last_offset, len(signed)) + signed
    return data[:pos] + new + data[batch.end :]


def _apply_payload(data: bytes, pos: int, index: int, which: str, sub_ops: list[Op]) -> bytes:
    """Mutate one record's key or value and re-encode the whole batch validly (same header fields)."""
    batch = _batch_at(data, pos)
    if batch is None:
        return data
    try:
        recs = batch.records()
    except Exception:  # noqa: BLE001
        return data
    if not recs:
        return data
    i = index % len(recs)
    r = recs[i]
    field_value = r.key if which == "key" else r.value
    if sub_ops and sub_ops[0][0] == "null":
        new_value: bytes | None = None
    else:
        new_value = apply_ops(field_value or b"", sub_ops)
    recs[i] = r._replace(key=new_value) if which == "key" else r._replace(value=new_value)
    try:
        if batch.magic >= 2:
            new = encode_v2_batch(
                recs, batch.base_offset, codec=batch.codec, timestamp_type=batch.timestamp_type,
                producer_id=batch.producer_id, producer_epoch=batch.producer_epoch,
                base_sequence=batch.base_sequence, partition_leader_epoch=batch.partition_leader_epoch,
                is_transactional=batch.is_transactional, is_control=batch.is_control,
                delete_horizon_ms=batch.delete_horizon_ms, last_offset=batch.last_offset,
                max_timestamp=batch.max_timestamp,
            )
        else:
            new = encode_legacy_batch(
                recs, magic=batch.magic, codec=batch.codec,
                log_append_time=batch.max_timestamp if batch.timestamp_type == 1 else None,
            )
    except Exception:  # noqa: BLE001 - e.g. a codec the writer refuses for this magic
        return data
    return data[:pos] + new + data[batch.end :]


def _apply_lines(data: bytes, ops: list[Any]) -> bytes:
    lines = data.split(b"\n")
    kind = ops[0]
    i = ops[1] % max(1, len(lines))
    if kind == "set_line":
        lines[i] = ops[2].encode("utf-8")
    elif kind == "set_field":
        fields = lines[i].split(b" ")
        fields[ops[2] % len(fields)] = ops[3].encode("utf-8")
        lines[i] = b" ".join(fields)
    elif kind == "delete_line" and lines:
        del lines[i]
    elif kind == "dup_line" and lines:
        lines.insert(i, lines[i])
    elif kind == "crlf":
        return data.replace(b"\n", b"\r\n")
    elif kind == "raw":
        lines[i] = lines[i] + bytes.fromhex(ops[2])
    return b"\n".join(lines)


def generic_ops(rng: random.Random, data: bytes) -> Op:
    """One format-blind mutation."""
    n = max(1, len(data))
    k = rng.random()
    if k < 0.30:
        return ["flip", rng.randrange(n), rng.randrange(8)]
    if k < 0.50:
        return ["set", rng.randrange(n), rng.choice([0, 0xFF, 0x7F, 0x80, 0x01, rng.randrange(256)])]
    if k < 0.62:
        return ["truncate", rng.randrange(len(data) + 1)]
    if k < 0.70:
        return ["extend", bytes(rng.randrange(256) for _ in range(rng.randrange(1, 80))).hex()]
    if k < 0.75:
        return ["extend_zeros", rng.choice([1, 7, 12, 17, 61, 4096])]
    if k < 0.82:
        start = rng.randrange(n)
        return ["extend_copy", start, rng.randrange(1, 200)]
    if k < 0.90:
        width = rng.choice([1, 2, 4, 8])
        pool = {1: [0, 1, 0x7F, 0x80, 0xFF], 2: INTERESTING_16, 4: INTERESTING_32, 8: INTERESTING_64}[width]
        return ["int", rng.randrange(n), width, rng.choice(pool)]
    if k < 0.95:
        return ["delete", rng.randrange(n), rng.randrange(1, 40)]
    return ["insert", rng.randrange(n), bytes(rng.randrange(256) for _ in range(rng.randrange(1, 20))).hex()]


def _pick_batch(rng: random.Random, data: bytes) -> Batch | None:
    bs = batches_of(data)
    return rng.choice(bs) if bs else None


def log_ops(rng: random.Random, data: bytes) -> list[Op]:
    """1-3 stacked mutations: format-blind, header fields, or record-level inside the payload."""
    ops: list[Op] = []
    for _ in range(rng.choice([1, 1, 1, 2, 3])):
        k = rng.random()
        b = _pick_batch(rng, data)
        if b is None or k < 0.35:
            ops.append(generic_ops(rng, data))
            continue
        p = b.position
        if k < 0.55:  # framing/header fields of one batch
            if b.magic >= 2:
                field_pos, width, pool = rng.choice([
                    (8, 4, INTERESTING_32 + [b.size - 12 + d for d in (-1, 1, 61, -61)]),
                    (16, 1, [0, 1, 2, 3, 0xFF]),
                    (21, 2, [c | f for c in range(8) for f in (0, 0x08, 0x10, 0x20, 0x40, 0x30)]),
                    (23, 4, INTERESTING_32),
                    (27, 8, INTERESTING_64),
                    (35, 8, INTERESTING_64),
                    (43, 8, INTERESTING_64),
                    (51, 2, INTERESTING_16),
                    (53, 4, INTERESTING_32),
                    (57, 4, INTERESTING_32 + [(b.count or 0) + d for d in (-1, 1, 100)]),
                ])
            else:
                field_pos, width, pool = rng.choice([
                    (8, 4, INTERESTING_32 + [b.size - 12 + d for d in (-1, 1)]),
                    (16, 1, [0, 1, 2, 3, 0xFF]),
                    (17, 1, [c | f for c in range(8) for f in (0, 0x08)]),
                    *([(18, 8, INTERESTING_64), (26, 4, INTERESTING_32)] if b.magic == 1
                      else [(18, 4, INTERESTING_32)]),
                    (0, 8, INTERESTING_64),
                ])
            ops.append(["int", p + field_pos, width, rng.choice(pool)])
            if rng.random() < 0.6:
                ops.append(["fixcrc", p])
        elif k < 0.85:  # record-level: inside the (decompressed) payload, then re-compressed + CRC fixed
            try:
                inner = b.records_data()
            except Exception:  # noqa: BLE001
                ops.append(generic_ops(rng, data))
                continue
            sub: list[Op]
            if b.magic >= 2:
                fields = v2_record_fields(inner, b.count or 0)
                if fields and rng.random() < 0.7:
                    v = rng.choice(INTERESTING_VARINT + ["80" * 10 + "00", "ff" * 11, "80"])
                    sub = [["varint", rng.choice(fields), v]]
                else:
                    sub = [generic_ops(rng, inner)]
            else:
                fields2 = legacy_set_fields(inner) if b.codec else []
                if fields2 and rng.random() < 0.7:
                    mpos, fpos, width = rng.choice(fields2)
                    pool = {1: [0, 1, 2, 3, 0x08, 0x01, 0xFF], 4: INTERESTING_32, 8: INTERESTING_64}[width]
                    sub = [["int", fpos, width, rng.choice(pool)]]
                    if rng.random() < 0.5:
                        sub.append(["fixcrc", mpos])
                else:
                    sub = [generic_ops(rng, inner)]
            ops.append(["inner", p, sub])
        else:
            ops.append(["payload", p, rng.randrange(1000), rng.choice(["key", "value"]), payload_sub_ops(rng)])
    return ops


def payload_sub_ops(rng: random.Random) -> list[Op]:
    """Mutations of a record key/value as the internal-topic decoders read it."""
    k = rng.random()
    if k < 0.05:
        return [["null"]]
    if k < 0.25:  # the leading version field
        return [["int", 0, 2, rng.choice(INTERESTING_16)]]
    if k < 0.50:  # a length/count field somewhere (int16/int32 lengths, arrays)
        width = rng.choice([2, 4])
        return [["int", rng.randrange(2, 120), width, rng.choice(INTERESTING_16 if width == 2 else INTERESTING_32)]]
    if k < 0.60:  # a compact (uvarint) length in flexible versions
        return [["set", rng.randrange(2, 120), rng.choice([0, 1, 0x7F, 0x80, 0xFF])]]
    if k < 0.75:
        return [["truncate", rng.randrange(0, 120)]]
    if k < 0.85:
        return [["extend", bytes(rng.randrange(256) for _ in range(rng.randrange(1, 30))).hex()]]
    return [["flip", rng.randrange(4096), rng.randrange(8)]]


def internal_log_ops(rng: random.Random, data: bytes) -> list[Op]:
    """Mostly payload-level mutations (re-encoded into valid batches), some framing ones."""
    if rng.random() < 0.7:
        b = _pick_batch(rng, data)
        if b is not None:
            ops: list[Op] = [["payload", b.position, rng.randrange(1000), rng.choice(["key", "value", "value"]),
                              payload_sub_ops(rng)]]
            if rng.random() < 0.2:
                ops.append(["payload", b.position, rng.randrange(1000), "value", payload_sub_ops(rng)])
            return ops
    return log_ops(rng, data)


def index_ops(entry: int) -> Callable[[random.Random, bytes], list[Op]]:
    def ops(rng: random.Random, data: bytes) -> list[Op]:
        out: list[Op] = []
        entries = len(data) // entry
        for _ in range(rng.choice([1, 1, 2, 3])):
            k = rng.random()
            if entries and k < 0.5:
                i = rng.randrange(entries)
                if entry == 8:
                    fpos, width, pool = rng.choice([(0, 4, INTERESTING_32), (4, 4, INTERESTING_32 + [10**6])])
                elif entry == 12:
                    fpos, width, pool = rng.choice([(0, 8, INTERESTING_64), (8, 4, INTERESTING_32)])
                else:  # txnindex
                    fpos, width, pool = rng.choice([(0, 2, INTERESTING_16), (2, 8, INTERESTING_64),
                                                    (10, 8, INTERESTING_64), (18, 8, INTERESTING_64),
                                                    (26, 8, INTERESTING_64)])
                out.append(["int", i * entry + fpos, width, rng.choice(pool)])
            elif entries and k < 0.6:
                i = rng.randrange(entries)
                out.append(["extend_copy", i * entry, entry])
            else:
                out.append(generic_ops(rng, data))
        return out

    return ops


def snapshot_ops(rng: random.Random, data: bytes) -> list[Op]:
    out: list[Op] = []
    for _ in range(rng.choice([1, 1, 2])):
        k = rng.random()
        if k < 0.3:
            out.append(["int", 6, 4, rng.choice(INTERESTING_32 + [(len(data) - 10) // 46 + d for d in (-1, 1)])])
        elif k < 0.4:
            out.append(["int", 0, 2, rng.choice(INTERESTING_16)])
        elif k < 0.6 and len(data) > 10:
            e = rng.randrange(max(1, (len(data) - 10) // 46))
            fpos, width = rng.choice([(0, 8), (8, 2), (10, 4), (14, 8), (22, 4), (26, 8), (34, 4), (38, 8)])
            pool = {2: INTERESTING_16, 4: INTERESTING_32, 8: INTERESTING_64}[width]
            out.append(["int", 10 + e * 46 + fpos, width, rng.choice(pool)])
        else:
            out.append(generic_ops(rng, data))
    if rng.random() < 0.7:  # with a valid CRC the entries themselves are reached
        out.append(["snapshot_crc"])
    return out


def checkpoint_ops(rng: random.Random, data: bytes) -> list[Op]:
    nlines = data.count(b"\n") + 1
    out: list[Op] = []
    for _ in range(rng.choice([1, 1, 2])):
        k = rng.random()
        i = rng.randrange(nlines)
        if k < 0.35:
            out.append(["lines", "set_field", i, rng.randrange(4), rng.choice(INTERESTING_TEXT)])
        elif k < 0.5:
            out.append(["lines", "set_line", i, rng.choice(INTERESTING_TEXT)])
        elif k < 0.6:
            out.append(["lines", "delete_line", i])
        elif k < 0.7:
            out.append(["lines", "dup_line", i])
        elif k < 0.75:
            out.append(["lines", "crlf", 0])
        elif k < 0.82:
            out.append(["lines", "raw", i, rng.choice(["ff", "c3", "eda080", "00", "f0908080", "e282"])])
        else:
            out.append(generic_ops(rng, data))
    return out


FORMATS: dict[str, Format] = {
    f.name: f
    for f in [
        Format("log", lambda p: p.suffix == ".log" and not _dir(p).startswith(INTERNAL), LOG_OPTIONS, log_ops),
        Format("index", lambda p: p.suffix == ".index", INDEX_OPTIONS, index_ops(8)),
        Format("timeindex", lambda p: p.suffix == ".timeindex", INDEX_OPTIONS, index_ops(12)),
        Format("txnindex", lambda p: p.suffix == ".txnindex", PLAIN_OPTIONS, index_ops(34)),
        Format("snapshot", lambda p: p.suffix == ".snapshot" and p.stat().st_size > 0, PLAIN_OPTIONS, snapshot_ops),
        Format("checkpoint", lambda p: p.name in TEXT_FILES, PLAIN_OPTIONS, checkpoint_ops),
        Format("offsets", lambda p: p.suffix == ".log" and _dir(p).startswith("__consumer_offsets-"),
               _decoder_options("offsets"), internal_log_ops, chunk=3),
        Format("transactions", lambda p: p.suffix == ".log" and _dir(p).startswith("__transaction_state-"),
               _decoder_options("transaction"), internal_log_ops, chunk=3),
        Format("metadata", lambda p: (p.suffix == ".log" and _dir(p).startswith("__cluster_metadata-"))
               or p.suffix == ".checkpoint", _decoder_options("cluster-metadata"), internal_log_ops, chunk=3),
    ]
}


# ---------------------------------------------------------------------------------------------
# running cases
# ---------------------------------------------------------------------------------------------


class CaseTimeout(BaseException):
    """Raised by the alarm in a case that ran past its limit (BaseException: nothing may swallow it)."""


@contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    def on_alarm(_sig: int, _frame: Any) -> None:
        raise CaseTimeout(f"case ran longer than {seconds:g} s")

    old = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


@dataclass
class Source:
    """One fixture file, staged in the work dir with the siblings its option sets read."""

    rel: str
    data: bytes
    path: Path  # staged copy that each case overwrites


@dataclass
class Failure:
    format: str
    seed: int
    case: int
    source: str
    options: str
    ops: list[Op]
    kind: str  # exception | timeout | bad-json | multiline-problem | exit-code
    error: str
    where: str
    trace: str = ""
    minimized: list[Op] | None = None
    count: int = 1

    @property
    def signature(self) -> tuple[str, str, str]:
        return (self.kind, self.error.split(":")[0], self.where)

    def replay_command(self) -> str:
        return f"python benchmarks/fuzz.py --format {self.format} --seed {self.seed} --replay {self.case}"


@dataclass
class FormatReport:
    format: str
    cases: int = 0
    seconds: float = 0.0
    sources: int = 0
    failures: list[Failure] = field(default_factory=list)
    slowest: tuple[float, int] = (0.0, -1)

    @property
    def cases_per_second(self) -> float:
        return self.cases / self.seconds if self.seconds else 0.0

    @property
    def failing_cases(self) -> int:
        return sum(f.count for f in self.failures)


def collect_sources(fmt: Format, fixtures: Path, work: Path | None) -> list[Source]:
    """The format's fixture files; staged under work with their segment siblings (None: not staged,
    `path` is then the read-only original and must not be handed to run_one).

    Formats with `chunk` cut each log into windows of a few batches: the payload decoders are what
    those formats exercise, and dumping a whole 2 MiB `__consumer_offsets` log per case would spend
    nearly all the time on the records nobody mutated.
    """
    out = []
    for i, p in enumerate(sorted(x for x in fixtures.rglob("*") if x.is_file() and fmt.select(x))):
        if p.stat().st_size > (8 * MAX_FILE if fmt.chunk else MAX_FILE):
            continue
        rel = str(p.relative_to(fixtures))
        data = p.read_bytes()
        pieces = [(rel, data, f"{i:04d}")]
        if fmt.chunk:
            bs = batches_of(data)
            pieces = [
                (f"{rel}@{bs[j].position}", data[bs[j].position : bs[min(j + fmt.chunk, len(bs)) - 1].end], f"{i:04d}-{j:05d}")
                for j in range(0, len(bs), fmt.chunk)
            ]
        for prel, pdata, tag in pieces:
            if work is None:
                out.append(Source(prel, pdata, p))
                continue
            d = work / fmt.name / tag / p.parent.name
            d.mkdir(parents=True, exist_ok=True)
            if not fmt.chunk:
                for sib in segment_siblings(p):  # index checks read the log, and log cases dump the indexes
                    shutil.copyfile(sib, d / sib.name)
            out.append(Source(prel, pdata, d / p.name))
    return out


def segment_siblings(p: Path) -> list[Path]:
    """The other .log/.index/.timeindex files of the same segment as p."""
    stem = p.name.split(".")[0]
    return [
        sib for sib in p.parent.iterdir()
        if sib.is_file() and sib.name != p.name and sib.name.split(".")[0] == stem
        and sib.suffix in (".log", ".index", ".timeindex") and sib.stat().st_size <= MAX_FILE
    ]


def _innermost_library_frame(tb: Any) -> str:
    where = "?"
    for fs in traceback.extract_tb(tb):
        if "/kafkatool/" in fs.filename:
            where = f"{fs.filename.split('/kafkatool/')[-1]}:{fs.name}"
    return where


def run_one(src: Source, data: bytes, optset: OptionSet, timeout: float) -> tuple[str, str, str, str] | None:
    """Run one case; None when it passed, else (kind, error, where, traceback)."""
    src.path.write_bytes(data)
    target = src.path if not optset.target else src.path.with_name(src.path.name.split(".")[0] + optset.target)
    if optset.target and not target.exists():
        target = src.path
    out = io.BytesIO()
    err = io.BytesIO()
    try:
        opts = DumpOptions(**optset.kwargs)
        with time_limit(timeout):
            result = dump_files([str(target)], opts, out, err)
    except CaseTimeout as exc:
        return ("timeout", str(exc), _innermost_library_frame(exc.__traceback__), traceback.format_exc())
    except Exception as exc:  # noqa: BLE001 - that is what we are looking for
        return (
            "exception", f"{type(exc).__name__}: {exc}"[:300], _innermost_library_frame(exc.__traceback__),
            traceback.format_exc(),
        )
    text = out.getvalue()
    output = optset.kwargs.get("output", "text")
    try:
        if output == "json":
            json.loads(text)
        elif output == "ndjson":
            for line in text.splitlines():
                json.loads(line)
    except ValueError as exc:
        return ("bad-json", str(exc)[:300], output, "")
    for p in result.problems:
        if "\n" in p.message:
            return ("multiline-problem", p.message[:300], p.kind, "")
    if result.exit_code not in (0, 1, 2):
        return ("exit-code", str(result.exit_code), "", "")
    return None


def case_plan(fmt: Format, sources: list[Source], seed: int, case: int) -> tuple[Source, OptionSet, list[Op]]:
    rng = random.Random(f"{seed}:{fmt.name}:{case}")
    src = sources[rng.randrange(len(sources))]
    optset = fmt.options[rng.randrange(len(fmt.options))]
    return src, optset, fmt.mutate(rng, src.data)


def minimize(src: Source, optset: OptionSet, ops: list[Op], sig: tuple[str, str, str], timeout: float) -> list[Op]:
    """Drop mutations (and sub-mutations) one at a time while the same failure persists."""

    def still_fails(candidate: list[Op]) -> bool:
        try:
            data = apply_ops(src.data, candidate)
        except Exception:  # noqa: BLE001
            return False
        r = run_one(src, data, optset, timeout)
        return r is not None and (r[0], r[1].split(":")[0], r[2]) == sig

    cur = list(ops)
    changed = True
    while changed:
        changed = False
        for i in range(len(cur)):
            cand = cur[:i] + cur[i + 1 :]
            if still_fails(cand):
                cur = cand
                changed = True
                break
    return cur


def fuzz_format(
    fmt: Format, sources: list[Source], seed: int, cases: int, timeout: float, start: int = 0,
    log: Callable[[str], None] | None = None, do_minimize: bool = True,
) -> FormatReport:
    rep = FormatReport(fmt.name, sources=len(sources))
    seen: dict[tuple[str, str, str], Failure] = {}
    t0 = time.perf_counter()
    for case in range(start, start + cases):
        src, optset, ops = case_plan(fmt, sources, seed, case)
        try:
            data = apply_ops(src.data, ops)
        except Exception as exc:  # noqa: BLE001 - a bug of this harness, not of the library: say so, go on
            if log:
                log(f"  harness error in {fmt.name} case {case}: {type(exc).__name__}: {exc}")
            continue
        c0 = time.perf_counter()
        r = run_one(src, data, optset, timeout)
        dt = time.perf_counter() - c0
        if dt > rep.slowest[0]:
            rep.slowest = (dt, case)
        rep.cases += 1
        if r is not None:
            f = Failure(fmt.name, seed, case, src.rel, optset.name, ops, r[0], r[1], r[2], r[3])
            if f.signature in seen:
                seen[f.signature].count += 1
            else:
                seen[f.signature] = f
                if do_minimize:
                    f.minimized = minimize(src, optset, ops, f.signature, timeout)
                if log:
                    log(f"  new failure in {fmt.name} case {case}: {f.kind} {f.error[:120]} at {f.where}")
        if log and rep.cases % 10000 == 0:
            log(f"  {fmt.name}: {rep.cases} cases, {rep.cases / (time.perf_counter() - t0):.0f}/s, "
                f"{len(seen)} distinct failures")
    rep.seconds = time.perf_counter() - t0
    rep.failures = list(seen.values())
    return rep


@contextmanager
def work_dir() -> Iterator[Path]:
    base = "/dev/shm" if os.access("/dev/shm", os.W_OK) else None
    d = Path(tempfile.mkdtemp(prefix="kafkatool-fuzz-", dir=base))
    try:
        yield d
    finally:
        shutil.rmtree(d, ignore_errors=True)


def run(
    formats: list[str], cases: int, seed: int, timeout: float = 5.0, fixtures: Path = DEFAULT_FIXTURES,
    log: Callable[[str], None] | None = None, do_minimize: bool = True,
) -> list[FormatReport]:
    """Fuzz each format with `cases` cases; the API tests/test_fuzz.py uses."""
    reports = []
    with work_dir() as work:
        for name in formats:
            fmt = FORMATS[name]
            sources = collect_sources(fmt, fixtures, work)
            if not sources:
                reports.append(FormatReport(name))
                continue
            reports.append(fuzz_format(fmt, sources, seed, cases, timeout, log=log, do_minimize=do_minimize))
    return reports


def replay(name: str, seed: int, case: int, fixtures: Path, timeout: float) -> int:
    fmt = FORMATS[name]
    with work_dir() as work:
        sources = collect_sources(fmt, fixtures, work)
        src, optset, ops = case_plan(fmt, sources, seed, case)
        print(f"source: {src.rel}\noptions: {optset.name} {optset.kwargs} {optset.target}\nops: {json.dumps(ops)}")
        r = run_one(src, apply_ops(src.data, ops), optset, timeout)
        if r is None:
            print("passes")
            return 0
        print(f"{r[0]}: {r[1]} at {r[2]}\n{r[3]}")
        sig = (r[0], r[1].split(":")[0], r[2])
        print(f"minimized ops: {json.dumps(minimize(src, optset, ops, sig, timeout))}")
        return 1


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--cases", type=int, default=100_000, help="cases per format (default 100000)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--format", default=",".join(FORMATS), help=f"comma-separated: {','.join(FORMATS)}")
    ap.add_argument("--timeout", type=float, default=5.0, help="per-case time limit in seconds")
    ap.add_argument("--fixtures", type=Path, default=DEFAULT_FIXTURES, help="the kafka-logs/ fixture tree")
    ap.add_argument("--replay", type=int, metavar="CASE", help="rerun one case of one --format with its traceback")
    ap.add_argument("--no-minimize", action="store_true")
    ap.add_argument("--json", action="store_true", help="print the report as JSON")
    args = ap.parse_args(argv)
    formats = [f for f in args.format.split(",") if f]
    unknown = [f for f in formats if f not in FORMATS]
    if unknown:
        ap.error(f"unknown format(s) {', '.join(unknown)}")
    if not args.fixtures.is_dir():
        print(f"fuzz: fixtures not found at {args.fixtures} (set KAFKATOOL_SHARED or --fixtures)", file=sys.stderr)
        return 2
    if args.replay is not None:
        if len(formats) != 1:
            ap.error("--replay needs exactly one --format")
        return replay(formats[0], args.seed, args.replay, args.fixtures, args.timeout)

    def log(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    reports = run(formats, args.cases, args.seed, args.timeout, args.fixtures, log=log,
                  do_minimize=not args.no_minimize)
    if args.json:
        print(json.dumps([
            {"format": r.format, "cases": r.cases, "seconds": round(r.seconds, 2),
             "cases_per_second": round(r.cases_per_second, 1), "sources": r.sources,
             "slowest_case": {"seconds": round(r.slowest[0], 3), "case": r.slowest[1]},
             "failing_cases": r.failing_cases,
             "failures": [{**{k: getattr(f, k) for k in ("kind", "error", "where", "source", "options", "case",
                                                          "count", "ops", "minimized")},
                           "replay": f.replay_command()} for f in r.failures]}
            for r in reports
        ], indent=1))
    else:
        print(f"{'format':<13} {'sources':>7} {'cases':>8} {'cases/s':>8} {'slowest':>8} {'failing':>8} {'distinct':>8}")
        for r in reports:
            print(f"{r.format:<13} {r.sources:>7} {r.cases:>8} {r.cases_per_second:>8.0f} {r.slowest[0]:>7.2f}s "
                  f"{r.failing_cases:>8} {len(r.failures):>8}")
        for r in reports:
            for f in r.failures:
                print(f"\n[{f.format}] {f.kind}: {f.error}\n  at {f.where}; {f.count} case(s); first: case {f.case}, "
                      f"source {f.source}, options {f.options}\n  minimized mutation: {json.dumps(f.minimized)}\n"
                      f"  replay: {f.replay_command()}")
    return 1 if any(r.failures for r in reports) else 0


if __name__ == "__main__":
    sys.exit(main())
