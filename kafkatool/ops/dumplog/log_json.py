"""dumpLog's JSON form (`--format json|ndjson`): one object per batch, or per record.

Kafka's tool prints no JSON; the schema is ours (README, "JSON output") and carries what the text
lines do: a batch's header fields, each record's metadata, key, value and headers (UTF-8 text when
valid, else base64, the encoding named beside it), control records' type, and the decoded key and
payload when a payload decoder is chosen.
"""

from __future__ import annotations

import base64
import struct

from kafkatool.log.record import TIMESTAMP_TYPE_NAMES, Record
from kafkatool.log.records import Batch, BatchScan
from kafkatool.ops.dumplog.base import DumperBase
from kafkatool.ops.dumplog.log_text import codec_name
from kafkatool.ops.dumplog.parsers import _CONTROL_KEY


def _put_bytes(obj: dict, name: str, b: bytes | None) -> None:
    """JSON bytes: UTF-8 text when valid, else base64, with the encoding named beside it."""
    if b is None:
        obj[name] = None
        obj[name + "_encoding"] = None
        return
    try:
        obj[name] = b.decode("utf-8")
        obj[name + "_encoding"] = "utf8"
    except UnicodeDecodeError:
        obj[name] = base64.b64encode(b).decode()
        obj[name + "_encoding"] = "base64"


def batch_json(b: Batch) -> dict:
    """The stable JSON schema of a batch (see README, "JSON output")."""
    return {
        "type": "batch",
        "position": b.position,
        "size": b.size,
        "magic": b.magic,
        "base_offset": b.base_offset,
        "last_offset": b.last_offset,
        "count": b.count,
        "codec": codec_name(b.codec),
        "crc": b.crc,
        "valid": b.is_valid(),
        "timestamp_type": TIMESTAMP_TYPE_NAMES[b.timestamp_type],
        "max_timestamp": b.max_timestamp,
        "base_timestamp": b.base_timestamp if b.magic >= 2 else None,
        "producer_id": b.producer_id,
        "producer_epoch": b.producer_epoch,
        "base_sequence": b.base_sequence,
        "last_sequence": b.last_sequence,
        "partition_leader_epoch": b.partition_leader_epoch,
        "is_transactional": b.is_transactional,
        "is_control": b.is_control,
        "delete_horizon_ms": b.delete_horizon_ms,
    }


def control_json(r: Record) -> dict:
    from kafkatool.log.decoders.control_records import CONTROL_TYPES  # only where a control record is shown

    key = r.key or b""
    if len(key) < 4:
        return {"type": "UNKNOWN", "type_id": -1}
    _v, ctype = _CONTROL_KEY.unpack_from(key, 0)
    obj: dict = {"type": CONTROL_TYPES.get(ctype, "UNKNOWN"), "type_id": ctype}
    if ctype in (0, 1) and r.value is not None and len(r.value) >= 6:
        obj["coordinator_epoch"] = struct.unpack_from(">i", r.value, 2)[0]
    return obj


class LogJson(DumperBase):
    """The JSON objects of a log's batches and records."""

    def _dump_batches_json(self, scan: BatchScan, shown: str) -> None:
        opts = self.opts
        for batch in scan:
            self.result.batches += 1
            obj = batch_json(batch)
            obj["file"] = shown
            if opts.deep_iteration:
                recs = batch.records()
                self.result.records += len(recs)
                rec_objs = [self._record_json(batch, r) for r in recs]
                if opts.per_record:
                    for ro in rec_objs:
                        ro["file"] = shown
                        ro["batch_base_offset"] = batch.base_offset
                        ro["batch_position"] = batch.position
                        ro["timestamp_type"] = obj["timestamp_type"]
                        ro["type"] = "record"
                        self._emit(ro)
                    continue
                obj["records"] = rec_objs
            if not opts.per_record or not opts.deep_iteration:
                self._emit(obj)

    def _record_json(self, batch: Batch, r: Record) -> dict:
        obj: dict = {
            "offset": r.offset,
            "timestamp": r.timestamp,
            "key_size": r.key_size,
            "value_size": r.value_size,
        }
        if batch.magic >= 2:
            obj["sequence"] = r.sequence
        else:
            obj["crc"] = r.crc
            obj["valid"] = r.valid
        _put_bytes(obj, "key", r.key)
        _put_bytes(obj, "value", r.value)
        if batch.magic >= 2:
            hs = []
            for hk, hv in r.headers:
                h: dict = {"key": hk}
                _put_bytes(h, "value", hv)
                hs.append(h)
            obj["headers"] = hs
        if batch.is_control:
            obj["control"] = control_json(r)
        elif self.opts.payload_decoder:
            kt, vt = self.parser(r)
            obj["key_decoded"] = None if kt is None else kt.decode("utf-8", "replace")
            obj["value_decoded"] = None if vt is None else vt.decode("utf-8", "replace")
        return obj
