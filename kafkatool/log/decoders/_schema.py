"""Kafka's message schemas as data: one reader and one JSON writer for every generated message class.

Kafka declares its records (`*.json` message specs: KRaft metadata records, tiered storage's remote
log metadata, coordinator keys and values, consumer-protocol payloads) and generates a Java reader
and a JSON converter for each.  The decoders declare the same specs here as `Field` tuples (a
release's layout of a record is its own `Message`) and interpret them with `read_struct` / `json_struct`,
which follow the generator's rules, including how it tests versions (the generated code checks only
the bounds the possible range needs, which decides what an out-of-range version reads as), that
tagged fields appear in JSON only when they differ from their default, and that nullable structs
carry a presence marker.  JSON comes out as Jackson prints the converter's tree.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from kafkatool.jvm.text import java_double
from kafkatool.log.decoders._wire import DecodeError, Reader, base64_std, json_str, uuid_str

__all__ = [
    "ALL",
    "EMPTY_STRUCT",
    "MAX",
    "NULLABLE",
    "Field",
    "Message",
    "RawJson",
    "Versions",
    "ZERO_UUID",
    "cond",
    "field",
    "intersect",
    "java_snake_upper",
    "json_struct",
    "message",
    "read_struct",
    "tagged",
]

MAX = 0x7FFF
Versions = tuple[int, int] | None  # inclusive range; None is Kafka's "none"
ALL: Versions = (0, MAX)
ZERO_UUID = bytes(16)


class _EmptyStruct:
    """The default of a struct field without `"default": "null"` (the generator's `new X()`)."""

    def __repr__(self) -> str:
        return "EMPTY_STRUCT"


#: `default=EMPTY_STRUCT`: an absent field reads as the struct of its fields' defaults (so a tagged
#: one is printed only when it differs from that, a null one included).
EMPTY_STRUCT: Any = _EmptyStruct()


def default_value(f: Field) -> Any:
    """The field's value when it is not read (its default, an EMPTY_STRUCT built out)."""
    if f.default is EMPTY_STRUCT:
        return {sub.name: default_value(sub) for sub in f.fields}
    return f.default


@dataclass(frozen=True, slots=True)
class Field:
    """One field of a message spec (`fields` for struct and struct-array types)."""

    name: str  # JSON (camelCase) name, also used in Kafka's error messages
    type: str  # bool int8 int16 uint16 int32 int64 float64 uuid string bytes struct, or "[]" + one of them
    versions: Versions = ALL
    nullable: Versions = None
    tagged: Versions = None
    tag: int | None = None
    default: Any = 0
    zero_copy: bool = False
    fields: tuple[Field, ...] = ()


def field(name: str, type_: str, versions: Versions = ALL, **kw: Any) -> Field:
    """A field; the default is the generator's for the type unless given (`default=None` for null)."""
    if "default" not in kw:
        if type_.startswith("[]"):
            kw["default"] = ()
        elif type_ == "string":
            kw["default"] = ""
        elif type_ == "bytes":
            kw["default"] = b""
        elif type_ == "uuid":
            kw["default"] = ZERO_UUID
        elif type_ == "bool":
            kw["default"] = False
        elif type_ == "float64":
            kw["default"] = 0.0
    return Field(name, type_, versions, **kw)


def tagged(name: str, type_: str, tag: int, versions: Versions = ALL, **kw: Any) -> Field:
    """A field present only as tagged field `tag` (its versions are its tagged versions)."""
    return field(name, type_, versions, tagged=versions, tag=tag, **kw)


#: `**NULLABLE` marks a field nullable in all versions.
NULLABLE: dict[str, Any] = {"nullable": ALL}


@lru_cache(maxsize=256)
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


@dataclass(frozen=True, slots=True)
class Message:
    """A top-level message spec: its class name, valid and flexible versions, fields, and its api key
    (-1 for messages without one, e.g. coordinator keys and values)."""

    name: str
    valid: tuple[int, int]
    flexible: Versions
    fields: tuple[Field, ...]
    api_key: int = -1

    @property
    def type_name(self) -> str:
        """The generated record-type enum's constant for this message (`MetadataRecordType` & co.)."""
        return java_snake_upper(self.name)

    def read(self, r: Reader, version: int) -> dict[str, Any]:
        """The generated reader (`new X(readable, version)`): fields by JSON name."""
        return read_struct(r, self.fields, version, self.valid, self.flexible)

    def to_json(self, data: dict[str, Any], version: int) -> str:
        """The generated JSON converter's tree for `data`, as Jackson prints it."""
        return json_struct(self.fields, data, version, self.valid)


def message(
    api_key: int,
    name: str,
    fields: list[Field],
    valid: tuple[int, int] = (0, 0),
    flexible: Versions = ALL,
) -> Message:
    """A message spec with an api key (a framed record's type, e.g. a KRaft metadata record)."""
    return Message(name, valid, flexible, tuple(fields), api_key)


# --------------------------------------------------------------------------------------------------
# The generator's version tests


def intersect(a: Versions, b: Versions) -> Versions:
    if a is None or b is None:
        return None
    lo, hi = max(a[0], b[0]), min(a[1], b[1])
    return (lo, hi) if lo <= hi else None


def subtract(a: tuple[int, int], b: Versions) -> Versions:
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
def cond(version: int, containing: Versions, possible: Versions) -> tuple[bool, Versions]:
    """Whether generated code takes the "member" branch for `version`, and the narrowed possible set.

    The generator emits only the bound checks the possible range needs, so a version outside it
    (e.g. a record newer than this Kafka) is tested against those bounds alone.
    """
    if possible is None:
        return False, possible
    c = containing if containing is not None else (0, -1)
    inside = intersect(possible, containing)
    lo_check = possible[0] < c[0]
    if lo_check and possible[1] < c[0]:
        return False, possible
    if not lo_check and not (possible[1] >= c[0] and possible[0] <= c[1]):
        return False, possible
    hi_check = possible[1] > c[1]
    member = (not lo_check or version >= c[0]) and (not hi_check or version <= c[1])
    if member:
        return True, inside
    rest = subtract(possible, containing)
    return False, rest if rest is not None else possible


@lru_cache(maxsize=512)
def mandatory(f: Field) -> Versions:
    """Versions in which the field is serialized in place rather than as a tagged field."""
    return subtract(f.versions, f.tagged) if f.versions is not None else None


# --------------------------------------------------------------------------------------------------
# Reading


def read_struct(
    r: Reader, fields: tuple[Field, ...], version: int, possible: Versions, flexible: Versions
) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for f in fields:
        member, present = cond(version, mandatory(f), possible)
        out[f.name] = (
            read_value(r, f, version, present, flexible)
            if member
            else (f.default if f.default is not EMPTY_STRUCT else default_value(f))
        )
    is_flexible, flex_possible = cond(version, flexible, possible)
    if is_flexible:
        for _ in range(r.uvarint()):
            tag = r.uvarint()
            size = r.uvarint()
            for f in fields:
                if f.tag == tag:
                    valid = intersect(f.versions, f.tagged)
                    if valid is None:
                        continue
                    ok, present = cond(version, valid, flex_possible)
                    if not ok:
                        raise DecodeError(f"Tag {tag} is not valid for version {version}")
                    out[f.name] = read_value(r, f, version, present, flexible, True)
                    break
            else:
                r.array(size)
    return out


def read_value(
    r: Reader, f: Field, version: int, possible: Versions, flexible: Versions, in_tag: bool = False
) -> Any:
    t = f.type
    if t == "struct":
        if cond(version, f.nullable, possible)[0] and (r.uvarint() <= 0 if in_tag else r.int8() < 0):
            return None
        return read_struct(r, f.fields, version, possible, flexible)
    reader = PRIMITIVE.get(t)
    if reader is not None:
        return reader(r)
    compact, _ = cond(version, flexible, possible)
    nullable, _ = cond(version, f.nullable, possible)
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
        inner = intersect(possible, f.versions)
        return [read_struct(r, f.fields, version, inner, flexible) for _ in range(length)]
    if elem == "string":
        name = f.name + " element"
        return [r.string_field(name, compact, False) for _ in range(length)]
    if elem == "bytes":
        name = f.name + " element"
        return [r.bytes_field(name, compact, False, False) for _ in range(length)]
    if elem == "int32":
        return r.int32_list(length)
    read_elem = PRIMITIVE[elem]
    return [read_elem(r) for _ in range(length)]


PRIMITIVE = {
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
        member, present = cond(version, f.versions, possible)
        if not member:
            continue
        value = values[f.name]
        tagged, inner = cond(version, f.tagged, present)
        if tagged:
            if is_default(f, value):
                continue
            present = inner
        parts.append(f'"{f.name}":{json_value(f, f.type, value, version, present)}')
    return "{" + ",".join(parts) + "}"


def is_default(f: Field, value: Any) -> bool:
    """The generator's non-default test for tagged fields (null, empty, or equal to the default)."""
    if f.default is None:
        return value is None
    if f.default is EMPTY_STRUCT:
        return value is not None and value == default_value(f)
    if isinstance(f.default, tuple):
        return value is not None and len(value) == 0
    if f.type == "float64":
        return value == f.default and str(value) == str(f.default)  # Double.compare: -0.0 and NaN differ
    return bool(value == f.default)


class RawJson(str):
    """A value whose JSON text is already written (a converter's node put in place of a field's)."""


def json_value(f: Field, t: str, value: Any, version: int, possible: Versions) -> str:
    if value is None:
        return "null"
    if isinstance(value, RawJson):
        return value
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
        inner = intersect(possible, f.versions)
        return "[" + ",".join(json_struct(f.fields, v, version, inner) for v in value) + "]"
    return "[" + ",".join(json_value(f, elem, v, version, possible) for v in value) + "]"
