"""Kafka's wire format for the fake brokers, driven by our own description of each message.

The fakes must not encode with kafka-python's schema classes: a fake built from the client's own
schemas agrees with the client by construction, which is how a client bug (reading a field a
version lacks) went unseen.  Here every request and response the fakes serve is described in
`data/wire_specs.json` (facts from Kafka's message specs, see scripts/gen_wire_specs.py) and a
message at version v carries exactly the fields whose versions include v: a field the version lacks
is never written, whatever the handler put in its dict, and decodes to its default.  Flexible
versions use compact strings/arrays/bytes and tagged fields as Kafka does.

Also the release tables: `release_api_versions("3.3.1")` is what that broker advertises, from the
real brokers' answers in shared/fixtures/brokers or, for releases without one, from
`data/broker_api_versions.json` (derived from the release's specs, scripts/gen_broker_versions.py).
"""

from __future__ import annotations

import json
import os
import struct
import uuid
from functools import cache
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from tests.support.wire import uvar

DATA = Path(__file__).resolve().parent / "data"
_REPO = Path(__file__).resolve().parents[2]
SHARED_BROKERS = Path(os.environ.get("KAFKATOOL_SHARED", _REPO.parent / "shared")).resolve() / "fixtures" / "brokers"

#: The release matrix the Admin-API suite runs over: real brokers' answers where we have them.
MATRIX = ("2.1.1", "2.8", "3.3.1", "3.6", "3.9", "4.0.0", "4.1", "4.2", "4.3", "4.4")
API_VERSIONS = 18
UNSUPPORTED_VERSION = 35


@cache
def release_api_versions(release: str) -> dict[int, tuple[int, int]]:
    """api key -> (lowest, highest) version a broker of `release` accepts: the real broker's answer in
    shared/fixtures/brokers when there is one (its copy in data/ when shared/ is absent), else derived."""
    real = SHARED_BROKERS / f"kafka-{release}.api_versions.json"
    if real.is_file():
        apis = json.loads(real.read_text())["apis"].values()
        return {a["key"]: (a["min"], a["max"]) for a in apis}
    table = json.loads((DATA / "broker_api_versions.json").read_text())["releases"][release]["apis"]
    return {int(k): (v[0], v[1]) for k, v in table.items()}


# -- version ranges -------------------------------------------------------------------------------

def in_range(spec: str, v: int) -> bool:
    """Whether version v is in a spec range: "none", "3", "0-4" or "2+"."""
    if spec == "none":
        return False
    if spec.endswith("+"):
        return v >= int(spec[:-1])
    lo, _, hi = spec.partition("-")
    return int(lo) <= v <= int(hi or lo)


@cache
def _messages() -> dict[str, Any]:
    return json.loads((DATA / "wire_specs.json").read_text())["messages"]


def message_spec(name: str, version: int) -> dict[str, Any]:
    """The description of `name` (e.g. "MetadataResponse") that covers `version`."""
    for spec in _messages()[name]["specs"]:
        if in_range(spec["versions"], version):
            return spec
    raise ValueError(f"{name} has no version {version}")


def api_name(key: int) -> str:
    for name, m in _messages().items():
        if m["key"] == key and name.endswith("Request"):
            return name[: -len("Request")]
    raise KeyError(key)


def flexible(name: str, version: int) -> bool:
    return in_range(message_spec(name, version)["flexible"], version)


# -- defaults ----------------------------------------------------------------------------------------

_INTS = {"int8": ">b", "int16": ">h", "uint16": ">H", "int32": ">i", "int64": ">q", "float64": ">d"}


def default(f: dict[str, Any], version: int) -> Any:
    t, d = f["t"], f.get("d")
    if d is not None and not isinstance(d, str):  # newer specs write some defaults as JSON numbers/booleans
        d = str(d).lower()
    if d == "null":
        return None
    if t in _INTS:
        return (float(d) if t == "float64" else int(d, 0)) if d is not None else 0
    if t == "bool":
        return d == "true"
    if t == "string":
        return d or ""
    if t == "uuid":
        return uuid.UUID(int=0)
    if t.startswith("[]"):
        return []
    if t == "struct":
        return {c["n"]: default(c, version) for c in f["f"] if in_range(c["v"], version)}
    return None if t == "records" else b""


# -- encoding ------------------------------------------------------------------------------------------

def _get(obj: Any, name: str, f: dict[str, Any], version: int) -> Any:
    if isinstance(obj, dict):
        return obj[name] if name in obj else default(f, version)
    return getattr(obj, name, default(f, version))


def _encode_value(f: dict[str, Any], value: Any, version: int, flex: bool, path: str) -> bytes:
    t = f["t"]
    nullable = in_range(f.get("nv", "none"), version)
    if value is None and t not in ("struct",) and not nullable:
        raise ValueError(f"{path}: null at version {version}, where it is not nullable")
    if t in _INTS:
        return struct.pack(_INTS[t], value)
    if t == "bool":
        return b"\x01" if value else b"\x00"
    if t == "uuid":
        return (value if isinstance(value, uuid.UUID) else uuid.UUID(str(value))).bytes
    if t in ("string", "bytes", "records"):
        if value is None:
            return b"\x00" if flex else (b"\xff\xff" if t == "string" else b"\xff\xff\xff\xff")
        raw = value.encode() if t == "string" else bytes(value)
        if flex:
            return uvar(len(raw) + 1) + raw
        return struct.pack(">h" if t == "string" else ">i", len(raw)) + raw
    if t == "struct":
        if nullable:  # a nullable struct: -1 null, 1 present
            return b"\xff" if value is None else b"\x01" + encode_fields(f["f"], value, version, flex, path)
        return encode_fields(f["f"], value, version, flex, path)
    if t.startswith("[]"):
        if value is None:
            return b"\x00" if flex else b"\xff\xff\xff\xff"
        items = list(value)
        head = uvar(len(items) + 1) if flex else struct.pack(">i", len(items))
        if t == "[]struct":
            return head + b"".join(encode_fields(f["f"], it, version, flex, f"{path}[]") for it in items)
        elem = {"t": t[2:], "v": "0+"}
        return head + b"".join(_encode_value(elem, it, version, flex, path) for it in items)
    raise ValueError(f"{path}: unknown type {t}")


def encode_fields(fields: list[dict[str, Any]], obj: Any, version: int, flex: bool, path: str = "") -> bytes:
    """The fields of `obj` (dict or attribute object) present at `version`, tagged ones last."""
    out = bytearray()
    tagged: list[tuple[int, bytes]] = []
    for f in fields:
        if not in_range(f["v"], version):
            continue
        value = _get(obj, f["n"], f, version)
        if "tag" in f:
            if flex and in_range(f.get("tv", f["v"]), version) and value != default(f, version):
                tagged.append((int(f["tag"]), _encode_value(f, value, version, True, f"{path}.{f['n']}")))
            continue
        out += _encode_value(f, value, version, flex, f"{path}.{f['n']}")
    if flex:
        out += uvar(len(tagged))
        for tag, data in sorted(tagged):
            out += uvar(tag) + uvar(len(data)) + data
    return bytes(out)


def encode_response(api_key: int, version: int, correlation_id: int, body: Any) -> bytes:
    """A framed response: size, header (v1 with tagged fields when flexible, except ApiVersions), body."""
    name = api_name(api_key) + "Response"
    spec = message_spec(name, version)
    flex = in_range(spec["flexible"], version)
    header = struct.pack(">i", correlation_id) + (b"\x00" if flex and api_key != API_VERSIONS else b"")
    payload = header + encode_fields(spec["fields"], body, version, flex, name)
    return struct.pack(">i", len(payload)) + payload


# -- decoding ------------------------------------------------------------------------------------------

class Reader:
    def __init__(self, data: bytes, pos: int = 0) -> None:
        self.data, self.pos = data, pos

    def take(self, n: int) -> bytes:
        if self.pos + n > len(self.data):
            raise ValueError("message ends early")
        chunk = self.data[self.pos:self.pos + n]
        self.pos += n
        return chunk

    def unpack(self, fmt: str) -> Any:
        return struct.unpack(fmt, self.take(struct.calcsize(fmt)))[0]

    def uvarint(self) -> int:
        shift = n = 0
        while True:
            b = self.take(1)[0]
            n |= (b & 0x7F) << shift
            if b < 0x80:
                return n
            shift += 7


def _decode_value(f: dict[str, Any], r: Reader, version: int, flex: bool) -> Any:
    t = f["t"]
    if t in _INTS:
        return r.unpack(_INTS[t])
    if t == "bool":
        return r.take(1) != b"\x00"
    if t == "uuid":
        return uuid.UUID(bytes=r.take(16))
    if t in ("string", "bytes", "records"):
        n = r.uvarint() - 1 if flex else r.unpack(">h" if t == "string" else ">i")
        if n < 0:
            return None
        raw = r.take(n)
        return raw.decode() if t == "string" else raw
    if t == "struct":
        if in_range(f.get("nv", "none"), version) and r.unpack(">b") < 0:  # a nullable struct: -1 null, 1 present
            return None
        return decode_fields(f["f"], r, version, flex)
    if t.startswith("[]"):
        n = r.uvarint() - 1 if flex else r.unpack(">i")
        if n < 0:
            return None
        if t == "[]struct":
            return [decode_fields(f["f"], r, version, flex) for _ in range(n)]
        elem = {"t": t[2:]}
        return [_decode_value(elem, r, version, flex) for _ in range(n)]
    raise ValueError(f"unknown type {t}")


def decode_fields(fields: list[dict[str, Any]], r: Reader, version: int, flex: bool) -> SimpleNamespace:
    """A message's fields as attributes; fields the version lacks hold their defaults, as in Kafka."""
    out = SimpleNamespace()
    by_tag = {}
    for f in fields:
        if "tag" in f or not in_range(f["v"], version):
            setattr(out, f["n"], default(f, version))
            if "tag" in f:
                by_tag[int(f["tag"])] = f
            continue
        setattr(out, f["n"], _decode_value(f, r, version, flex))
    if flex:
        for _ in range(r.uvarint()):
            tag, size = r.uvarint(), r.uvarint()
            end = r.pos + size
            if tag in by_tag:
                setattr(out, by_tag[tag]["n"], _decode_value(by_tag[tag], r, version, True))
            r.pos = end
    return out


def decode_request(frame: bytes) -> tuple[int, int, int, SimpleNamespace | None]:
    """(api key, version, correlation id, body) of a request without its size prefix.

    The body is None when the version is not one we describe (the fake then answers as a broker
    does for a version it does not accept)."""
    r = Reader(frame)
    key, version, correlation_id = r.unpack(">h"), r.unpack(">h"), r.unpack(">i")
    client_id_length = r.unpack(">h")  # a nullable string, never compact
    client_id = r.take(client_id_length).decode() if client_id_length >= 0 else None
    try:
        name = api_name(key) + "Request"
        spec = message_spec(name, version)
    except (KeyError, ValueError):
        return key, version, correlation_id, None
    flex = in_range(spec["flexible"], version)
    if flex:
        for _ in range(r.uvarint()):  # request header tagged fields
            r.uvarint()
            r.take(r.uvarint())
    body = decode_fields(spec["fields"], r, version, flex)
    body.header = SimpleNamespace(client_id=client_id, correlation_id=correlation_id)
    body.api_version = version
    return key, version, correlation_id, body


class _Body:
    """`BODY.AnyStruct(field=value, ...)` is the dict {field: value}: handlers name the structs they build."""

    def __getattr__(self, name: str) -> _Body:
        return self

    def __call__(self, **fields: Any) -> dict[str, Any]:
        return fields


BODY = _Body()


def api_versions_body(table: dict[int, tuple[int, int]], error_code: int = 0) -> dict[str, Any]:
    """An ApiVersions response body advertising `table`."""
    return {"error_code": error_code, "throttle_time_ms": 0,
            "api_keys": [{"api_key": k, "min_version": lo, "max_version": hi} for k, (lo, hi) in sorted(table.items())]}


def answer(api_key: int, version: int, correlation_id: int, table: dict[int, tuple[int, int]],
           body: Any) -> bytes | None:
    """The frame a broker advertising `table` sends back: None (close the connection) for a version it
    does not accept, ApiVersions v0 with UNSUPPORTED_VERSION for an ApiVersions it does not accept."""
    lo, hi = table.get(api_key, (0, -1))
    if lo <= version <= hi:
        return encode_response(api_key, version, correlation_id, body)
    if api_key == API_VERSIONS:
        # KIP-511 brokers (2.4+, ApiVersions v3) name their ApiVersions range in the error; older ones an empty list.
        own = {API_VERSIONS: table[API_VERSIONS]} if table[API_VERSIONS][1] >= 3 else {}
        return encode_response(API_VERSIONS, 0, correlation_id, api_versions_body(own, UNSUPPORTED_VERSION))
    return None
