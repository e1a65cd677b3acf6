"""Shared primitives for the payload decoders: Kafka's message wire types and a few JVM behaviours.

The decoders must print exactly what Kafka 3.3.1's `kafka-dump-log.sh` prints, errors included, so
this reader fails the way Kafka's `ByteBufferAccessor` does (a `BufferUnderflow` where Java's
`ByteBuffer` would underflow, a `DecodeError` with Kafka's message where the generated readers throw)
instead of the way Python would.  The module also holds the bits of JVM behaviour that leak into
Kafka's output: Jackson's JSON string escaping, `Double.toString`, `String.hashCode` and the bucket
order of Scala 2.13's mutable hash tables (Kafka prints group members and transaction partitions in
that order).
"""

from __future__ import annotations

import base64
import binascii
import math
import struct
from collections.abc import Hashable, Iterable
from decimal import Decimal
from typing import Any

from kafkatool.release import NEWEST

__all__ = [
    "BufferUnderflow",
    "DecodeError",
    "ErrorText",
    "NewerThanKnown",
    "newer_reason",
    "Reader",
    "ScalaHashTable",
    "base64_std",
    "decode_utf8",
    "java_double",
    "java_string_hash",
    "json_str",
    "scala_hash_order",
    "uuid_str",
]

INT16_MAX = 0x7FFF


class DecodeError(ValueError):
    """Bytes that Kafka 3.3.1's own parser rejects.

    `java_class` is the exception Kafka throws there and `message` its `getMessage()` (None where Java
    has none); `str()` gives Java's `Throwable.toString()`, the text Kafka's stack trace starts with.
    """

    #: why the record is newer than the reproduced Kafka release knows (see NewerThanKnown), else None
    newer: str | None = None

    def __init__(self, message: str | None, java_class: str = "java.lang.RuntimeException") -> None:
        super().__init__(message)
        self.message = message
        self.java_class = java_class

    def __str__(self) -> str:
        return self.java_class if self.message is None else f"{self.java_class}: {self.message}"


def newer_reason(what: str, known_by: object, hint: str = "") -> str:
    """kafkatool's one-line reason for a record newer than Kafka release `known_by` knows.

    `what` names the record ("metadata record type 29 (version 0)"); `hint` may follow ("; --kafka-release
    4.0 decodes it").  dump-log prints it once per file on stderr and exits 1.
    """
    return f"{what} is newer than Kafka {known_by} knows{hint}"


class NewerThanKnown(DecodeError):
    """Kafka's exception for a record type or version newer than the reproduced release knows.

    The one way a decoder says a record is newer: this exception where it reads one, or the same
    `newer` reason on its `ErrorText` (via `ErrorText.from_error`, or given where the text is no
    exception, e.g. a newer version Kafka's reader still reads).  `what` names the record; "" where
    Kafka fails the same way on an invalid (e.g. negative) type or version, which is not newer.
    """

    def __init__(
        self, message: str | None, java_class: str, *, what: str, known_by: object = NEWEST, hint: str = ""
    ) -> None:
        super().__init__(message, java_class)
        self.newer = newer_reason(what, known_by, hint) if what else None


class BufferUnderflow(DecodeError):
    """A fixed-size read past the end, i.e. `java.nio.BufferUnderflowException` (no message)."""

    def __init__(self) -> None:
        super().__init__(None, "java.nio.BufferUnderflowException")


class ErrorText(str):
    """Text returned in place of a decoded payload when Kafka's parser fails on the record, or with
    `newer` set, Kafka's text for a record newer than the reproduced release knows (which may be what
    its reader made of it: a newer version that still reads).

    It is a plain `str` for printing.  `fatal` tells whether Kafka 3.3.1's dump-log aborts there
    (the exception escapes: stack trace on stderr, exit status 1, the record line left unfinished)
    rather than printing this text as the payload; `java_class`/`message` describe that exception.
    """

    java_class: str
    message: str | None
    fatal: bool
    newer: str | None  # why the record is newer than the reproduced release knows (`newer_reason`), else None

    def __new__(
        cls, text: str, *, java_class: str, message: str | None, fatal: bool, newer: str | None = None
    ) -> ErrorText:
        self = super().__new__(cls, text)
        self.java_class = java_class
        self.message = message
        self.fatal = fatal
        self.newer = newer
        return self

    @classmethod
    def from_error(cls, err: DecodeError, text: str | None = None, *, fatal: bool = True) -> ErrorText:
        """The error text for an exception of Kafka's parser: by default fatal, Java's `toString()`."""
        return cls(
            str(err) if text is None else text,
            java_class=err.java_class,
            message=err.message,
            fatal=fatal,
            newer=err.newer,
        )


_I8 = struct.Struct(">b").unpack_from
_I16 = struct.Struct(">h").unpack_from
_U16 = struct.Struct(">H").unpack_from
_I32 = struct.Struct(">i").unpack_from
_U32 = struct.Struct(">I").unpack_from
_I64 = struct.Struct(">q").unpack_from
_F64 = struct.Struct(">d").unpack_from


def _int32(value: int) -> int:
    value &= 0xFFFFFFFF
    return value - 0x100000000 if value & 0x80000000 else value


class Reader:
    """A cursor over one key or value, failing like Kafka's `ByteBufferAccessor` over a `ByteBuffer`."""

    __slots__ = ("data", "pos", "end")

    def __init__(self, data: bytes, pos: int = 0, end: int | None = None) -> None:
        self.data = data
        self.pos = pos
        self.end = len(data) if end is None else end

    def remaining(self) -> int:
        return self.end - self.pos

    def _take(self, n: int) -> int:
        p = self.pos
        if self.end - p < n:
            raise BufferUnderflow()
        self.pos = p + n
        return p

    def int8(self) -> int:
        return _I8(self.data, self._take(1))[0]

    def boolean(self) -> bool:
        return self.int8() != 0

    def int16(self) -> int:
        return _I16(self.data, self._take(2))[0]

    def uint16(self) -> int:
        return _U16(self.data, self._take(2))[0]

    def int32(self) -> int:
        return _I32(self.data, self._take(4))[0]

    def uint32(self) -> int:
        return _U32(self.data, self._take(4))[0]

    def int64(self) -> int:
        return _I64(self.data, self._take(8))[0]

    def float64(self) -> float:
        return _F64(self.data, self._take(8))[0]

    def uuid(self) -> bytes:
        """Two int64s (most significant first), kept as the 16 raw bytes."""
        p = self._take(16)
        return bytes(self.data[p : p + 16])

    def uvarint(self) -> int:
        """Kafka's unsigned varint as a Java int (wraps past 2**31; at most five bytes)."""
        value = 0
        shift = 0
        data = self.data
        while True:
            if self.pos >= self.end:
                raise BufferUnderflow()
            b = data[self.pos]
            self.pos += 1
            if b & 0x80:
                value |= (b & 0x7F) << shift
                shift += 7
                if shift > 28:
                    raise DecodeError(
                        "Varint is too long, the most significant bit in the 5th byte is set, "
                        f"converted value: {value & 0xFFFFFFFF:x}",
                        "java.lang.IllegalArgumentException",
                    )
            else:
                return _int32(value | (b << shift))

    def array(self, size: int) -> bytes:
        """`readArray`: a byte[] of `size`, checked against what is left."""
        remaining = self.end - self.pos
        if size > remaining:
            raise DecodeError(
                f"Error reading byte array of {size} byte(s): only {remaining} byte(s) available"
            )
        if size < 0:
            raise DecodeError(str(size), "java.lang.NegativeArraySizeException")
        p = self.pos
        self.pos = p + size
        return bytes(self.data[p : p + size])

    def byte_buffer(self, size: int) -> bytes:
        """`readByteBuffer` (zero-copy bytes fields): a slice whose limit is set to `size`."""
        remaining = self.end - self.pos
        if size > remaining:
            raise DecodeError(
                f"newLimit > capacity: ({size} > {remaining})", "java.lang.IllegalArgumentException"
            )
        if size < 0:
            raise DecodeError(f"newLimit < 0: ({size} < 0)", "java.lang.IllegalArgumentException")
        p = self.pos
        self.pos = p + size
        return bytes(self.data[p : p + size])

    def string(self, size: int) -> str:
        return decode_utf8(self.array(size))

    # Length-prefixed fields as the generated readers handle them (`name` is Kafka's field name,
    # used in its error messages).  Non-flexible versions use int16/int32 lengths with -1 for null;
    # flexible ("compact") versions an unsigned varint of length + 1 with 0 for null.

    def legacy_string(self, name: str) -> str:
        return self._string_body(self.int16(), name, False)  # type: ignore[return-value]

    def legacy_string_or_null(self, name: str) -> str | None:
        return self._string_body(self.int16(), name, True)

    def string_field(self, name: str, compact: bool, nullable: bool) -> str | None:
        return self._string_body(self.uvarint() - 1 if compact else self.int16(), name, nullable)

    def _string_body(self, length: int, name: str, nullable: bool) -> str | None:
        if length < 0:
            if nullable:
                return None
            raise DecodeError(f"non-nullable field {name} was serialized as null")
        if length > INT16_MAX:
            raise DecodeError(f"string field {name} had invalid length {length}")
        return self.string(length)

    def legacy_bytes(self, name: str) -> bytes:
        return self._bytes_body(self.int32(), name, False, False)  # type: ignore[return-value]

    def legacy_bytes_or_null(self, name: str, zero_copy: bool = False) -> bytes | None:
        return self._bytes_body(self.int32(), name, True, zero_copy)

    def bytes_field(self, name: str, compact: bool, nullable: bool, zero_copy: bool) -> bytes | None:
        return self._bytes_body(self.uvarint() - 1 if compact else self.int32(), name, nullable, zero_copy)

    def _bytes_body(self, length: int, name: str, nullable: bool, zero_copy: bool) -> bytes | None:
        if length < 0:
            if nullable:
                return None
            raise DecodeError(f"non-nullable field {name} was serialized as null")
        return self.byte_buffer(length) if zero_copy else self.array(length)

    def array_length(self, length: int, name: str) -> int:
        """Validate a non-nullable array's length the way generated readers do."""
        if length < 0:
            raise DecodeError(f"non-nullable field {name} was serialized as null")
        return self.array_length_or_null(length, name)  # type: ignore[return-value]

    def array_length_or_null(self, length: int, name: str, nullable: bool = True) -> int | None:
        """Validate an array length; None means a null array (an error unless `nullable`)."""
        if length < 0:
            if nullable:
                return None
            raise DecodeError(f"non-nullable field {name} was serialized as null")
        remaining = self.end - self.pos
        if length > remaining:
            raise DecodeError(
                f"Tried to allocate a collection of size {length}, but there are only {remaining} bytes remaining."
            )
        return length

    def int32_list(self, count: int) -> list[int]:
        """`count` int32s (Java reads them one by one; an underflow part-way is the same exception)."""
        return list(struct.unpack_from(f">{count}i", self.data, self._take(4 * count)))


def decode_utf8(raw: bytes) -> str:
    """Java's `new String(bytes, UTF_8)`: each malformed sequence becomes U+FFFD the way the JDK counts them."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return _java_utf8_lenient(raw)


_REPL = "\ufffd"


def _java_utf8_lenient(raw: bytes) -> str:
    """The JDK's replacing UTF-8 decoder (String's decodeUTF8_UTF16), which groups bad bytes unlike Python.

    For instance an encoded surrogate (ED A0 80) is one replacement in Java but three in Python, and
    a truncated sequence at the very end swallows what is left.
    """
    out: list[str] = []
    sp = 0
    sl = len(raw)
    while sp < sl:
        b1 = raw[sp]
        sp += 1
        if b1 < 0x80:
            out.append(chr(b1))
        elif 0xC2 <= b1 <= 0xDF:
            if sp < sl:
                b2 = raw[sp]
                if b2 & 0xC0 != 0x80:
                    out.append(_REPL)
                else:
                    out.append(chr(((b1 & 0x1F) << 6) | (b2 & 0x3F)))
                    sp += 1
                continue
            out.append(_REPL)
            break
        elif 0xE0 <= b1 <= 0xEF:
            if sp + 1 < sl:
                b2 = raw[sp]
                b3 = raw[sp + 1]
                bad2 = (b1 == 0xE0 and b2 & 0xE0 == 0x80) or b2 & 0xC0 != 0x80
                if bad2 or b3 & 0xC0 != 0x80:
                    out.append(_REPL)
                    sp += 0 if bad2 else 1
                else:
                    c = ((b1 & 0x0F) << 12) | ((b2 & 0x3F) << 6) | (b3 & 0x3F)
                    out.append(_REPL if 0xD800 <= c <= 0xDFFF else chr(c))
                    sp += 2
                continue
            if sp < sl and ((b1 == 0xE0 and raw[sp] & 0xE0 == 0x80) or raw[sp] & 0xC0 != 0x80):
                out.append(_REPL)
                continue
            out.append(_REPL)
            break
        elif 0xF0 <= b1 <= 0xF7:
            if sp + 2 < sl:
                b2, b3, b4 = raw[sp], raw[sp + 1], raw[sp + 2]
                uc = ((b1 & 0x07) << 18) | ((b2 & 0x3F) << 12) | ((b3 & 0x3F) << 6) | (b4 & 0x3F)
                if (
                    b2 & 0xC0 != 0x80
                    or b3 & 0xC0 != 0x80
                    or b4 & 0xC0 != 0x80
                    or not 0x10000 <= uc <= 0x10FFFF
                ):
                    out.append(_REPL)
                    if (
                        b1 > 0xF4
                        or (b1 == 0xF0 and not 0x90 <= b2 <= 0xBF)
                        or (b1 == 0xF4 and b2 & 0xF0 != 0x80)
                        or b2 & 0xC0 != 0x80
                    ):
                        pass
                    elif b3 & 0xC0 != 0x80:
                        sp += 1
                    else:
                        sp += 2
                else:
                    out.append(chr(uc))
                    sp += 3
                continue
            if b1 > 0xF4 or (
                sp < sl
                and (
                    (b1 == 0xF0 and not 0x90 <= raw[sp] <= 0xBF)
                    or (b1 == 0xF4 and raw[sp] & 0xF0 != 0x80)
                    or raw[sp] & 0xC0 != 0x80
                )
            ):
                out.append(_REPL)
                continue
            sp += 1
            out.append(_REPL)
            if sp < sl and raw[sp] & 0xC0 != 0x80:
                continue
            break
        else:
            out.append(_REPL)
    return "".join(out)


def uuid_str(raw: bytes) -> str:
    """Kafka's `Uuid.toString()`: URL-safe base64 of the 16 bytes, unpadded."""
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def base64_std(raw: bytes) -> str:
    """Jackson's default Base64 variant for binary nodes: standard alphabet, padded, one line."""
    return binascii.b2a_base64(raw, newline=False).decode("ascii")


# Jackson's escaping: the two mandatory characters, short forms for five control characters and
# \u00XX (upper-case hex) for the other C0 controls.  Nothing else, not even '/', U+007F or non-ASCII.
_JSON_ESCAPES = {i: f"\\u{i:04X}" for i in range(0x20)}
_JSON_ESCAPES.update(
    {0x08: "\\b", 0x09: "\\t", 0x0A: "\\n", 0x0C: "\\f", 0x0D: "\\r", 0x22: '\\"', 0x5C: "\\\\"}
)


def json_str(value: str | None) -> str:
    """A JSON string literal exactly as Jackson writes it (`null` for None)."""
    if value is None:
        return "null"
    return '"' + value.translate(_JSON_ESCAPES) + '"'


def java_double(value: float) -> str:
    """Java's `Double.toString` (as Jackson prints a DoubleNode); non-finite values quoted as Jackson does."""
    if math.isnan(value):
        return '"NaN"'
    if math.isinf(value):
        return '"Infinity"' if value > 0 else '"-Infinity"'
    if value == 0.0:
        return "-0.0" if math.copysign(1.0, value) < 0 else "0.0"
    sign = "-" if value < 0 else ""
    digits, exp = _shortest_digits(abs(value))
    # value = 0.<digits> * 10**exp
    if 1e-3 <= abs(value) < 1e7:
        if exp <= 0:
            return f"{sign}0.{'0' * -exp}{digits}"
        if exp >= len(digits):
            return f"{sign}{digits}{'0' * (exp - len(digits))}.0"
        return f"{sign}{digits[:exp]}.{digits[exp:]}"
    frac = digits[1:] or "0"
    return f"{sign}{digits[0]}.{frac}E{exp - 1}"


def _shortest_digits(value: float) -> tuple[str, int]:
    """Shortest round-trip digits of a positive finite double and the decimal point position."""
    _, digit_tuple, exponent = Decimal(repr(value)).as_tuple()
    digits = "".join(map(str, digit_tuple)).lstrip("0")
    stripped = digits.rstrip("0")
    exponent += len(digits) - len(stripped)  # type: ignore[operator]
    return stripped, len(stripped) + exponent  # type: ignore[operator]


def java_string_hash(text: str) -> int:
    """Java's `String.hashCode()` (over UTF-16 code units, 32-bit wrap)."""
    h = 0
    if text.isascii():
        for ch in text.encode("ascii"):
            h = (31 * h + ch) & 0xFFFFFFFF
    else:
        raw = text.encode("utf-16-be", "surrogatepass")
        for i in range(0, len(raw), 2):
            h = (31 * h + ((raw[i] << 8) | raw[i + 1])) & 0xFFFFFFFF
    return _int32(h)


def java_string_hash_or_zero(text: str | None) -> int:
    """`Objects.hashCode` of a possibly-null string."""
    return 0 if text is None else java_string_hash(text)


def _improve(h: int) -> int:
    u = h & 0xFFFFFFFF
    return _int32(u ^ (u >> 16))


class ScalaHashTable:
    """Bucket layout of Scala 2.13's `mutable.HashMap`/`mutable.HashSet` (default capacity 16, load 0.75).

    Only iteration order matters to us: buckets in index order, each sorted by improved hash, ties in
    insertion order.  `put` replaces an equal key in place; `add_all_unchecked` mirrors `addAll` of an
    immutable HashSet, which sizes the table from the collection's size but skips the per-element
    growth check.
    """

    __slots__ = ("table", "threshold", "size")

    def __init__(self) -> None:
        self.table: list[list[tuple[int, Hashable, object]] | None] = [None] * 16
        self.threshold = 12
        self.size = 0

    def _grow(self, new_len: int) -> None:
        old = self.table
        self.table = [None] * new_len
        self.threshold = int(new_len * 0.75)
        mask = new_len - 1
        for bucket in old:
            if bucket:
                for node in bucket:
                    idx = node[0] & mask
                    slot = self.table[idx]
                    if slot is None:
                        self.table[idx] = [node]
                    else:
                        slot.append(node)

    def size_hint(self, n: int) -> None:
        cap = int((n + 1) / 0.75)
        target = min(_highest_one_bit(max(cap - 1, 4)) * 2, 1 << 30)
        if target > len(self.table):
            self._grow(target)

    def put(self, key: Hashable, hash_code: int, value: object = None, *, check_growth: bool = True) -> bool:
        """Insert or replace; returns True when the key was new."""
        if check_growth and self.size + 1 >= self.threshold:
            self._grow(len(self.table) * 2)
        h = _improve(hash_code)
        idx = h & (len(self.table) - 1)
        bucket = self.table[idx]
        if bucket is None:
            self.table[idx] = [(h, key, value)]
            self.size += 1
            return True
        i = 0
        n = len(bucket)
        while i < n and bucket[i][0] <= h:
            if bucket[i][0] == h and bucket[i][1] == key:
                bucket[i] = (h, key, value)
                return False
            i += 1
        bucket.insert(i, (h, key, value))
        self.size += 1
        return True

    def items(self) -> list[tuple[Hashable, object]]:
        return [(node[1], node[2]) for bucket in self.table if bucket for node in bucket]

    def keys(self) -> list[Hashable]:
        return [node[1] for bucket in self.table if bucket for node in bucket]

    def values(self) -> list[Any]:
        return [node[2] for bucket in self.table if bucket for node in bucket]


def _highest_one_bit(n: int) -> int:
    return 1 << (n.bit_length() - 1) if n > 0 else 0


def scala_hash_order(items: Iterable[tuple[Hashable, int]]) -> list[Hashable]:
    """Keys in the order a Scala 2.13 mutable hash table built by successive adds iterates them."""
    table = ScalaHashTable()
    for key, hash_code in items:
        table.put(key, hash_code)
    return table.keys()
