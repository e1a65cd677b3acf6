"""Writing KRaft metadata and control records: the inverse of `kafkatool.log.decoders` for the flexible
message versions KRaft uses, from the same message specs (so what is written reads back through the
decoders dump-log uses, field for field).

The project's own writer of metadata logs (`kafkatool metadata generate`, tests): a framed record is
`AbstractApiMessageSerde`'s frame (unsigned varints: frame version 1, api key, version) and the
message in Kafka's compact encoding, tagged fields after the fixed ones when not at their defaults.
"""

from __future__ import annotations

import struct
from typing import Any

from kafkatool.log.decoders._schema import Field, Message, cond, is_default, mandatory
from kafkatool.log.decoders.kraft_control import _CONTROL_DATA
from kafkatool.log.decoders.metadata import _TABLES

_PRIM = {
    "bool": struct.Struct(">?"),
    "int8": struct.Struct(">b"),
    "int16": struct.Struct(">h"),
    "uint16": struct.Struct(">H"),
    "int32": struct.Struct(">i"),
    "int64": struct.Struct(">q"),
    "float64": struct.Struct(">d"),
}


def uvarint(n: int) -> bytes:
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _value(f: Field, t: str, v: Any, version: int) -> bytes:
    if t in _PRIM:
        return _PRIM[t].pack(v)
    if t == "uuid":
        return bytes(v) if v is not None else bytes(16)
    if t == "string":
        if v is None:
            return uvarint(0)
        raw = v.encode("utf-8")
        return uvarint(len(raw) + 1) + raw
    if t == "bytes":
        if v is None:
            return uvarint(0)
        return uvarint(len(v) + 1) + bytes(v)
    if t == "struct":
        return write_struct(f.fields, v, version)
    if t.startswith("[]"):
        if v is None:
            return uvarint(0)
        elem = t[2:]
        return uvarint(len(v) + 1) + b"".join(_value(f, elem, x, version) for x in v)
    raise ValueError(f"cannot write a field of type {t}")


def write_struct(fields: tuple[Field, ...], values: dict[str, Any], version: int) -> bytes:
    """A struct at a flexible version: fixed fields in order, then the tagged-field section."""
    out = []
    tagged = []
    for f in fields:
        if cond(version, mandatory(f), (version, version))[0]:
            out.append(_value(f, f.type, values.get(f.name, f.default), version))
        elif f.tag is not None and cond(version, f.tagged, (version, version))[0]:
            v = values.get(f.name, f.default)
            if not is_default(f, v):
                body = _value(f, f.type, v, version)
                tagged.append((f.tag, body))
    out.append(uvarint(len(tagged)))
    for tag, body in sorted(tagged):
        out.append(uvarint(tag) + uvarint(len(body)) + body)
    return b"".join(out)


def _spec(type_name: str) -> Message:
    table = _TABLES[-1][1]
    for m in table.values():
        if m.type_name == type_name or m.name == type_name:
            return m
    raise KeyError(type_name)


def metadata_record(type_name: str, data: dict[str, Any], version: int | None = None) -> bytes:
    """A framed metadata record (`TOPIC_RECORD` or `TopicRecord`), at `version` (default: the newest known)."""
    m = _spec(type_name)
    v = m.valid[1] if version is None else version
    return uvarint(1) + uvarint(m.api_key) + uvarint(v) + write_struct(m.fields, data, v)


def control_record(type_id: int, data: dict[str, Any]) -> tuple[bytes, bytes]:
    """(key, value) of a KRaft control record (2 LEADER_CHANGE, 3/4 snapshot header/footer, 5 KRAFT_VERSION,
    6 KRAFT_VOTERS), written at the record's own `version` field."""
    spec = _CONTROL_DATA[type_id]
    version = data.get("version", 0)
    return struct.pack(">hh", 0, type_id), write_struct(spec.fields, {"version": version, **data}, version)
