"""Kafka's generated message classes, interpreted from a declarative copy of their JSON specs.

Kafka describes every record of its internal topics (KRaft metadata, tiered-storage metadata, share
group state, ...) in `*.json` message specs and generates a reader and a JSON converter per message.
The decoders here declare those specs as data (`Field`, `Message`) and read and print them with one
reader and one JSON writer that follow the generator's rules, including how it tests versions (which
decides what an out-of-range version reads as) and that tagged fields appear in JSON only when they
differ from their default.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from kafkatool.log.decoders._wire import DecodeError, Reader, base64_std, java_double, json_str, uuid_str

__all__ = [
    "ALL",
    "MAX",
    "NULLABLE",
    "Field",
    "Message",
    "Versions",
    "field",
    "java_snake_upper",
    "json_struct",
    "message",
    "read_struct",
    "tagged",
    "version_test",
]

MAX = 0x7FFF
Versions = tuple[int, int] | None  # inclusive range; None is Kafka's "none"
ALL: Versions = (0, MAX)
_ZERO_UUID = bytes(16)


@dataclass(frozen=True, slots=True)
class Field:
    """One field of a message spec (names are the JSON camelCase names, also used in Kafka's errors)."""

    name: str
    type: str  # bool int8 int16 uint16 int32 int64 float64 uuid string bytes struct, or "[]" + one of them
    versions: Versions = ALL
    nullable: Versions = None
    tagged: Versions = None
    tag: int | None = None
    default: Any = 0
    zero_copy: bool = False
    fields: tuple[Field, ...] = ()


@dataclass(frozen=True, slots=True)
class Message:
    """A message spec: `api_key` (-1 for none), the generated enum constant's name, versions."""

    api_key: int
    type_name: str
    class_name: str
    valid: tuple[int, int]
    flexible: Versions
    fields: tuple[Field, ...]


def field(name: str, type_: str, versions: Versions = ALL, **kw: Any) -> Field:
    """A field with the generator's implicit default for its type unless `default` is given."""
    if "default" not in kw:
        if type_.startswith("[]"):
            kw["default"] = ()
        elif type_ == "string":
            kw["default"] = ""
        elif type_ == "bytes":
            kw["default"] = b""
        elif type_ == "uuid":
            kw["default"] = _ZERO_UUID
        elif type_ == "bool":
            kw["default"] = False
        elif type_ == "float64":
            kw["default"] = 0.0
    return Field(name, type_, versions, **kw)


def tagged(name: str, type_: str, tag: int, versions: Versions = ALL, **kw: Any) -> Field:
    """A field that is a tagged field in all of its versions."""
    return field(name, type_, versions, tagged=versions, tag=tag, **kw)


#: `**NULLABLE` marks a field nullable in all versions.
NULLABLE: dict[str, Any] = {"nullable": ALL}


def java_snake_upper(name: str) -> str:
    """The enum constant Kafka's generator derives from a spec name (`MessageGenerator.toSnakeCase`)."""
    out = []
    prev_upper = True
    for c in name:
        if c.isupper():
            if not prev_upper:
                out.append("_")
            prev_upper = True
        else:
            prev_upper = False
        out.append(c.upper())
    return "".join(out)


def message(
    api_key: int,
    class_name: str,
    fields: list[Field],
    valid: tuple[int, int] = (0, 0),
    flexible: Versions = ALL,
) -> Message:
    """A message spec; `type_name` is the generated `MetadataRecordType` constant for the name."""
    return Message(api_key, java_snake_upper(class_name), class_name, valid, flexible, tuple(fields))


# --------------------------------------------------------------------------------------------------
# The generator's version tests


def _intersect(a: Versions, b: Versions) -> Versions:
    if a is None or b is None:
        return None
    lo, hi = max(a[0], b[0]), min(a[1], b[1])
    return (lo, hi) if lo <= hi else None


def _subtract(a: tuple[int, int], b: Versions) -> Versions:
    if b is None:
        return a
    if b[0] <= a[0]:
        if b[1] >= a[1]:
            return None
        if b[1] < a[0]:
            return a
        return (b[1] + 1, a[1])
    if b[1] >= a[1]:
        new_hi = b[0] - 1
        return (a[0], new_hi) if new_hi < a[1] else a
    return a  # two ranges: the generator keeps the original


@lru_cache(maxsize=4096)
def version_test(version: int, containing: Versions, possible: Versions) -> tuple[bool, Versions]:
    """Whether generated code takes the "member" branch for `version`, and the narrowed possible set.

    The generator emits only the bound checks the possible range needs, so a version outside it
    (e.g. a record newer than this Kafka) is tested against those bounds alone.
    """
    if possible is None:
        return False, possible
    c = containing if containing is not None else (0, -1)
    inside = _intersect(possible, containing)
    lo_check = possible[0] < c[0]
    if lo_check and possible[1] < c[0]:
        return False, possible
    if not lo_check and not (possible[1] >= c[0] and possible[0] <= c[1]):
        return False, possible
    hi_check = possible[1] > c[1]
    member = (not lo_check or version >= c[0]) and (not hi_check or version <= c[1])
    if member:
        return True, inside
    rest = _subtract(possible, containing)
    return False, rest if rest is not None else possible


@lru_cache(maxsize=512)
def _mandatory(f: Field) -> Versions:
    """Versions in which the field is serialized in place rather than as a tagged field."""
    return _subtract(f.versions, f.tagged) if f.versions is not None else None


# --------------------------------------------------------------------------------------------------
# Reading


def read_struct(
    r: Reader, fields: tuple[Field, ...], version: int, possible: Versions, flexible: Versions
) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for f in fields:
        member, present = version_test(version, _mandatory(f), possible)
        out[f.name] = _read_value(r, f, version, present, flexible) if member else f.default
    is_flexible, flex_possible = version_test(version, flexible, possible)
    if is_flexible:
        for _ in range(r.uvarint()):
            tag = r.uvarint()
            size = r.uvarint()
            for f in fields:
                if f.tag == tag:
                    valid = _intersect(f.versions, f.tagged)
                    if valid is None:
                        continue
                    ok, present = version_test(version, valid, flex_possible)
                    if not ok:
                        raise DecodeError(f"Tag {tag} is not valid for version {version}")
                    out[f.name] = _read_value(r, f, version, present, flexible)
                    break
            else:
                r.array(size)
    return out


def _read_value(r: Reader, f: Field, version: int, possible: Versions, flexible: Versions) -> Any:
    t = f.type
    if t == "struct":
        return read_struct(r, f.fields, version, possible, flexible)
    reader = _PRIMITIVE.get(t)
    if reader is not None:
        return reader(r)
    compact, _ = version_test(version, flexible, possible)
    nullable, _ = version_test(version, f.nullable, possible)
    if t == "string":
        return r.string_field(f.name, compact, nullable)
    if t == "bytes":
        return r.bytes_field(f.name, compact, nullable, f.zero_copy)
    # arrays
    length = r.uvarint() - 1 if compact else r.int32()
    if r.array_length_or_null(length, f.name, nullable) is None:
        return None
    elem = t[2:]
    if elem == "struct":
        inner = _intersect(possible, f.versions)
        return [read_struct(r, f.fields, version, inner, flexible) for _ in range(length)]
    if elem == "string":
        name = f.name + " element"
        return [r.string_field(name, compact, False) for _ in range(length)]
    if elem == "bytes":
        name = f.name + " element"
        return [r.bytes_field(name, compact, False, False) for _ in range(length)]
    if elem == "int32":
        return r.int32_list(length)
    read_elem = _PRIMITIVE[elem]
    return [read_elem(r) for _ in range(length)]


_PRIMITIVE = {
    "bool": Reader.boolean,
    "int8": Reader.int8,
    "int16": Reader.int16,
    "uint16": Reader.uint16,
    "int32": Reader.int32,
    "uint32": Reader.uint32,
    "int64": Reader.int64,
    "float64": Reader.float64,
    "uuid": Reader.uuid,
}


# --------------------------------------------------------------------------------------------------
# JSON, as the generated converters build it and Jackson prints it


def json_struct(fields: tuple[Field, ...], values: dict[str, Any], version: int, possible: Versions) -> str:
    parts = []
    for f in fields:
        member, present = version_test(version, f.versions, possible)
        if not member:
            continue
        value = values[f.name]
        tagged, inner = version_test(version, f.tagged, present)
        if tagged:
            if _is_default(f, value):
                continue
            present = inner
        parts.append(f'"{f.name}":{_json_value(f, f.type, value, version, present)}')
    return "{" + ",".join(parts) + "}"


def _is_default(f: Field, value: Any) -> bool:
    """The generator's non-default test for tagged fields (null, empty, or equal to the default)."""
    if f.default is None:
        return value is None
    if isinstance(f.default, tuple):
        return value is not None and len(value) == 0
    if f.type == "float64":
        return value == f.default and str(value) == str(f.default)  # Double.compare: -0.0 and NaN differ
    return bool(value == f.default)


def _json_value(f: Field, t: str, value: Any, version: int, possible: Versions) -> str:
    if value is None:
        return "null"
    if t in ("int8", "int16", "uint16", "int32", "int64", "uint32"):
        return str(value)
    if t == "string":
        return json_str(value)
    if t == "bool":
        return "true" if value else "false"
    if t == "uuid":
        return '"' + uuid_str(value) + '"'
    if t == "bytes":
        return '"' + base64_std(value) + '"'
    if t == "float64":
        return java_double(value)
    if t == "struct":
        return json_struct(f.fields, value, version, possible)
    elem = t[2:]
    if elem == "struct":
        inner = _intersect(possible, f.versions)
        return "[" + ",".join(json_struct(f.fields, v, version, inner) for v in value) + "]"
    return "[" + ",".join(_json_value(f, elem, v, version, possible) for v in value) + "]"


# --------------------------------------------------------------------------------------------------
