"""Record payload parsers: Kafka's MessageParser family, wired for the chosen options (`make_parser`).

DumpLogSegments turns each record into (key text, payload text) through a MessageParser: the
DecoderMessageParser over the key/value `Decoder`s, or one of the internal topics' parsers
(OffsetsMessageParser, TransactionLogMessageParser, ClusterMetadataLogMessageParser,
RemoteMetadataLogMessageParser, ShareGroupStateMessageParser; from 4.1 the coordinators' three share
CoordinatorRecordMessageParser).  The topic formatters themselves live in `log/decoders` and are
imported only when chosen.  `control_text` is printControlRecord.
"""

from __future__ import annotations

import functools
import struct
from collections.abc import Callable
from typing import cast

from kafkatool.log.errors import LogFormatError
from kafkatool.log.record import Record
from kafkatool.ops.dumplog.decoders import VALUE_DECODERS
from kafkatool.ops.dumplog.options import DumpOptions
from kafkatool.release import Release

_CONTROL_KEY = struct.Struct(">hh")


Parser = Callable[[Record], tuple[bytes | None, bytes | None]]
#: Called with (offset, reason) for each record newer than the decoders' release knows that Kafka's
#: tool prints and goes on from (`ErrorText.newer`).
NewerSink = Callable[[int, str], None]


#: A payload formatter over (offset, key, value), as chosen for the options.
KeyedFormatter = Callable[[int, bytes | None, bytes | None], tuple[str | None, str | None]]
#: A payload formatter over (offset, value), for topics whose records have no key.
ValueFormatter = Callable[[int, bytes | None], str]


def _keyed_parser(
    load: Callable[[DumpOptions], KeyedFormatter], missing_key: str | None
) -> Callable[[DumpOptions, NewerSink], Parser]:
    """A parser over a keyed internal topic's formatter (`load` imports it when used).  `missing_key`
    names the decoder in Kafka's error for a record without a key; None where the formatter says it."""

    def make(opts: DumpOptions, newer: NewerSink) -> Parser:
        fmt = load(opts)
        # 4.1 on: one CoordinatorRecordMessageParser for the three coordinators' topics
        missing = "the specified" if opts.text.coordinator_parser else missing_key

        def parse(r: Record) -> tuple[bytes | None, bytes | None]:
            if r.key is None and missing is not None:
                raise LogFormatError(
                    f"Failed to decode message at offset {r.offset} using {missing} decoder "
                    "(message had a missing key)"
                )
            k, v = fmt(r.offset, r.key, r.value)
            _check(r.offset, newer, k, v)
            return _enc(k), _enc(v)

        return parse

    return make


def _value_parser(
    load: Callable[[DumpOptions], ValueFormatter],
) -> Callable[[DumpOptions, NewerSink], Parser]:
    """A parser over the formatter of a topic whose records carry no key (Kafka prints none)."""

    def make(opts: DumpOptions, newer: NewerSink) -> Parser:
        fmt = load(opts)

        def parse(r: Record) -> tuple[bytes | None, bytes | None]:
            v = fmt(r.offset, r.value)
            _check(r.offset, newer, v)
            return None, _enc(v)

        return parse

    return make


def _offsets(opts: DumpOptions) -> KeyedFormatter:
    from kafkatool.log.decoders.offsets import format_offsets_record

    return functools.partial(format_offsets_record, kafka4=opts.kafka4, rel=opts.release)


def _transactions(opts: DumpOptions) -> KeyedFormatter:
    from kafkatool.log.decoders.transactions import format_transaction_record

    return functools.partial(format_transaction_record, kafka4=opts.kafka4, rel=opts.release)


def _cluster_metadata(opts: DumpOptions) -> ValueFormatter:
    from kafkatool.log.decoders.metadata import format_metadata_record

    return functools.partial(format_metadata_record, rel=opts.release)


def _remote_log_metadata(opts: DumpOptions) -> ValueFormatter:  # Kafka 4.0's text on every release
    from kafkatool.log.decoders.remote_log_metadata import format_remote_log_metadata_record

    return format_remote_log_metadata_record


def _share_group_state(opts: DumpOptions) -> KeyedFormatter:  # Kafka 4.0's text on 3.3 (which has no decoder)
    from kafkatool.log.decoders.share_group_state import format_share_group_state_record

    rel = opts.release if opts.kafka4 else None
    return cast(KeyedFormatter, functools.partial(format_share_group_state_record, rel=rel))


#: `--*-decoder` name -> parser factory (DumpOptions.payload_decoder takes these names).
PAYLOAD_PARSERS: dict[str, Callable[[DumpOptions, NewerSink], Parser]] = {
    "offsets": _keyed_parser(_offsets, "offset topic"),
    "transaction": _keyed_parser(_transactions, None),
    "cluster-metadata": _value_parser(_cluster_metadata),
    "remote-log-metadata": _value_parser(_remote_log_metadata),
    "share-group-state": _keyed_parser(_share_group_state, "share group state topic"),
}


def make_parser(opts: DumpOptions, newer: NewerSink | None = None) -> Parser:
    """The record → (key text, payload text) function for the chosen decoders, as UTF-8 bytes.

    Records newer than the decoders' Kafka release knows, which Kafka's tool prints a line for and goes
    on, are told to `newer` with the reason.
    """
    if opts.payload_decoder is not None:
        return PAYLOAD_PARSERS[opts.payload_decoder](opts, newer or (lambda _offset, _reason: None))
    kdec = VALUE_DECODERS[opts.key_decoder]
    vdec = VALUE_DECODERS[opts.value_decoder]

    def parse_plain(r: Record) -> tuple[bytes | None, bytes | None]:
        k = r.key
        v = r.value
        return (None if k is None else kdec(k)), (None if v is None else vdec(v))

    return parse_plain


def _enc(s: str | None) -> bytes | None:
    return None if s is None else s.encode("utf-8", "replace")


def _check(offset: int, newer: NewerSink, *texts: str | None) -> None:
    """Kafka's parser threw here (its tool dies): stop the file with one line saying why.  A record
    Kafka prints and goes on from that is newer than the decoders' release knows goes to `newer`."""
    from kafkatool.log.decoders import ErrorText

    for t in texts:
        if isinstance(t, ErrorText):
            if t.fatal:
                if t.newer:
                    raise LogFormatError(f"record at offset {offset}: {t.newer}: {t}")
                raise LogFormatError(f"record at offset {offset} cannot be decoded: {t}")
            if t.newer:
                newer(offset, t.newer)


def control_text(r: Record, rel: Release | None = None) -> bytes:
    """The text Kafka (release `rel`, default the chosen one) prints after a control record's metadata."""
    from kafkatool.log.decoders.metadata import format_control_record

    key = r.key or b""
    if len(key) < 4:
        return b" controlType: UNKNOWN(-1)"
    _version, ctype = _CONTROL_KEY.unpack_from(key, 0)
    text = format_control_record(ctype, key, r.value, rel)
    _check(r.offset, lambda _o, _w: None, text)
    return text.encode("utf-8", "replace")
