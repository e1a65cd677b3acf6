"""Shared primitives for the payload decoders: Kafka's message wire types and Jackson's JSON text.

The decoders must print exactly what Kafka 3.3.1's `kafka-dump-log.sh` prints, errors included, so
this reader fails the way Kafka's `ByteBufferAccessor` does (a `BufferUnderflow` where Java's
`ByteBuffer` would underflow, a `DecodeError` with Kafka's message where the generated readers throw)
instead of the way Python would.  The JVM behaviour that leaks into Kafka's output (Java's UTF-8
decoding, `Double.toString`, `String.hashCode`, Scala's hash-table order) lives in `kafkatool.jvm`.
"""

from __future__ import annotations

import base64
import binascii
import struct

from kafkatool.jvm.hashing import to_int32
from kafkatool.jvm.text import java_utf8
from kafkatool.release import NEWEST

__all__ = [
    "BufferUnderflow",
    "DecodeError",
    "ErrorText",
    "NewerThanKnown",
    "newer_reason",
    "Reader",
    "base64_std",
    "json_str",
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
                return to_int32(value | (b << shift))

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
        return java_utf8(self.array(size))

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
