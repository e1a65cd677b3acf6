"""The key/value decoders of `--key-decoder-class` / `--value-decoder-class` (Kafka's `Decoder`s).

Kafka's DumpLogSegments instantiates a `Decoder` class per side (StringDecoder by default) for its
DecoderMessageParser; we take a short name or one of Kafka's decoder class names and map it to a
function from the record's bytes to the text printed.  DumpOptions resolves the names here.
"""

from __future__ import annotations

import base64
import json
import struct
from collections.abc import Callable

from kafkatool.jvm.text import java_utf8_bytes
from kafkatool.log.errors import LogFormatError

_utf8 = java_utf8_bytes


def _decode_int(b: bytes) -> bytes:
    if len(b) != 4:
        raise LogFormatError(f"Size of data received by IntegerDeserializer is not 4 (got {len(b)})")
    return str(struct.unpack(">i", b)[0]).encode()


def _decode_long(b: bytes) -> bytes:
    if len(b) != 8:
        raise LogFormatError(f"Size of data received by LongDeserializer is not 8 (got {len(b)})")
    return str(struct.unpack(">q", b)[0]).encode()


def _decode_json(b: bytes) -> bytes:
    try:
        return json.dumps(json.loads(b), separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    except (ValueError, UnicodeDecodeError):
        return _utf8(b)


VALUE_DECODERS: dict[str, Callable[[bytes], bytes]] = {
    "string": _utf8,
    "hex": lambda b: b.hex().encode(),
    "base64": lambda b: base64.b64encode(b),
    "json": _decode_json,
    "integer": _decode_int,
    "long": _decode_long,
    # Kafka's DefaultDecoder returns the byte[] itself, which Scala prints as `[B@hash`; we print hex.
    "bytes": lambda b: b.hex().encode(),
}
_DECODER_CLASS_ALIASES = {
    "kafka.serializer.stringdecoder": "string",
    "org.apache.kafka.tools.api.stringdecoder": "string",
    "kafka.serializer.defaultdecoder": "bytes",
    "org.apache.kafka.tools.api.defaultdecoder": "bytes",
    "kafka.serializer.integerdecoder": "integer",
    "org.apache.kafka.tools.api.integerdecoder": "integer",
    "kafka.serializer.longdecoder": "long",
    "org.apache.kafka.tools.api.longdecoder": "long",
}


def resolve_decoder(name: str) -> str:
    """Map a short decoder name or one of Kafka's decoder class names to our decoder key."""
    key = name.strip().lower()
    key = _DECODER_CLASS_ALIASES.get(key, key)
    if key not in VALUE_DECODERS:
        raise ValueError(
            f"unknown decoder {name!r}: use one of {', '.join(sorted(VALUE_DECODERS))} or a Kafka decoder class name"
        )
    return key
