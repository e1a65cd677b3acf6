"""The coordinators' record specs of Kafka 4.1 and later, from their message specs (`record_specs.json`).

From 4.1 on the group, share and transaction coordinators declare each record as a pair of
`coordinator-key` / `coordinator-value` messages whose api key is the record type, and dump-log
prints them through the generated `CoordinatorRecordJsonConverters`.  `scripts/gen_record_specs.py`
copies the facts of every such message of each release (fields, versions, tags, defaults) into
`record_specs.json`; this module turns them into the `Message`s `_schema` reads and prints, as the
generator (MessageGenerator's FieldSpec) interprets a spec.
"""

from __future__ import annotations

import base64
import json
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

from kafkatool.log.decoders._schema import EMPTY_STRUCT, MAX, ZERO_UUID, Field, Message, Versions
from kafkatool.log.decoders.coordinator import RecordTypes
from kafkatool.release import Release, parse_release

__all__ = ["coordinator_types", "first_release_knowing"]

_DATA = Path(__file__).with_name("record_specs.json")
_PRIMITIVES = {
    "bool",
    "int8",
    "int16",
    "uint16",
    "int32",
    "uint32",
    "int64",
    "float64",
    "string",
    "bytes",
    "uuid",
}
#: coordinator -> (kafkatool's name for its records, JSON label of the value's version)
_NAMES = {"group": "offsets", "share": "share group state", "transaction": "transaction log"}


@lru_cache(maxsize=1)
def _doc() -> dict[str, Any]:
    return json.loads(_DATA.read_text("utf-8"))


def _releases() -> tuple[Release, ...]:
    return tuple(sorted(parse_release(r) for r in _doc()["releases"]))


def versions(text: str | None) -> Versions:
    """`Versions.parse`: "3", "1-4", "2+", "none"."""
    if text is None or text == "none":
        return None
    if text.endswith("+"):
        return (int(text[:-1]), MAX)
    if "-" in text:
        lo, hi = text.split("-")
        return (int(lo), int(hi))
    return (int(text), int(text))


def _default(t: str, raw: str | None) -> Any:
    """`FieldSpec.fieldDefault`: the field's value when absent ("null" only where it is nullable)."""
    if raw == "null":
        return None
    if t.startswith("[]"):
        return ()
    if t == "struct":
        return EMPTY_STRUCT
    if t == "string":
        return raw or ""
    if t == "bytes":
        return b""
    if t == "uuid":
        return base64.urlsafe_b64decode(raw + "==") if raw else ZERO_UUID
    if t == "bool":
        return raw is not None and raw.lower() == "true"
    if t == "float64":
        return float(raw) if raw else 0.0
    return int(raw, 0) if raw else 0


def _field(c: dict[str, Any]) -> Field:
    t = c["t"]
    elem = t[2:] if t.startswith("[]") else t
    if elem not in _PRIMITIVES and elem != "struct":
        raise ValueError(f"record_specs.json: field {c['n']} has unknown type {t}")
    return Field(
        c["n"],
        t,
        versions(c["v"]),
        nullable=versions(c.get("nv")),
        tagged=versions(c.get("tv")),
        tag=c.get("tag"),
        default=_default(t, c.get("d")),
        zero_copy=bool(c.get("zc", False)),
        fields=tuple(_field(f) for f in c.get("f", ())),
    )


@cache
def _message(ident: str) -> Message:
    m = _doc()["messages"][ident]
    valid = versions(m["valid"])
    assert valid is not None
    return Message(m["name"], valid, versions(m["flexible"]), tuple(_field(f) for f in m["fields"]))


@cache
def coordinator_types(coordinator: str, release: Release) -> RecordTypes | None:
    """The record types of `coordinator` ("group", "share", "transaction") as `release` knows them
    (the newest spec release not newer); None before 4.1 (the hand tables serve those)."""
    known = [r for r in _releases() if r <= release]
    if not known:
        return None
    table = _doc()["releases"][str(known[-1])][coordinator]
    return RecordTypes(
        _NAMES[coordinator],
        keys={int(t): _message(i) for t, i in table["key"].items()},
        values={int(t): _message(i) for t, i in table["value"].items()},
        key_json_version=0,
        known_by=known[-1],
    )


def first_release_knowing(coordinator: str, record_type: int) -> Release | None:
    """The oldest spec release (4.1 on) with this record type, for "--kafka-release X decodes it"."""
    for rel in _releases():
        if str(record_type) in _doc()["releases"][str(rel)][coordinator]["key"]:
            return rel
    return None
