"""Kafka 4.1-4.4's coordinator records (`__consumer_offsets`, `__share_group_state`, `__transaction_state`)
and control records, as each release's dump-log prints them.

Records are encoded by an independent encoder (tests/support/kwire.py's spec-driven writer) from the
specs of each release (`record_specs.json`, facts copied from Kafka's message specs by
scripts/gen_record_specs.py), and the expected JSON is written here by the generated converters' rules
(fields present at the version, tagged fields only when not their default, uuids in URL-safe base64,
bytes in base64), not by the decoders' `_schema`.  Hand-built bytes cover what the generic writer
cannot (a tagged null struct).  The real 4.3 broker's records are in test_dumplog_goldens.py.
"""

from __future__ import annotations

import base64
import io
import json
import struct
import uuid
from pathlib import Path
from typing import Any

import pytest

from kafkatool.log.decoders import (
    format_control_record,
    format_offsets_record,
    format_share_group_state_record,
)
from kafkatool.log.decoders.transactions import format_transaction_record
from kafkatool.log.records import Record
from kafkatool.log.writer import SegmentWriter, encode_v2_batch
from kafkatool.ops.dumplog import DumpOptions, dump_files
from kafkatool.release import Release
from tests.support.kwire import encode_fields, in_range

SPECS = json.loads(
    (Path(__file__).resolve().parents[1] / "kafkatool/log/decoders/record_specs.json").read_text()
)
RELEASES = ("4.1", "4.2", "4.3", "4.4")
_U = uuid.UUID("00010203-0405-0607-0809-0a0b0c0d0e0f")
_INT_VALUES = {
    "int8": 3,
    "int16": 300,
    "uint16": 40000,
    "int32": 70000,
    "int64": 1 << 40,
    "uint32": 3_000_000_000,
}


def _versions(spec: str) -> range:
    if spec.endswith("+"):
        return range(int(spec[:-1]), int(spec[:-1]) + 1)
    lo, _, hi = spec.partition("-")
    return range(int(lo), int(hi or lo) + 1)


def _sample(f: dict[str, Any], version: int) -> Any:
    """A value unlike the field's default, so every field (tagged ones too) is printed."""
    t = f["t"]
    if t in _INT_VALUES:
        return _INT_VALUES[t]
    if t == "bool":
        return f.get("d") != "true"
    if t == "string":
        return "s-" + f["n"]
    if t == "uuid":
        return _U
    if t == "bytes":
        return b"\x01\x02"
    if t == "float64":
        return 1.5
    if t == "struct":
        return {c["n"]: _sample(c, version) for c in f["f"] if in_range(c["v"], version)}
    if t == "[]struct":
        return [{c["n"]: _sample(c, version) for c in f["f"] if in_range(c["v"], version)}]
    return [_sample({"t": t[2:], "n": f["n"]}, version)]


def _json(f: dict[str, Any], value: Any, version: int) -> str:
    """The generated converter's JSON of one value, as Jackson prints it."""
    t = f["t"]
    if value is None:
        return "null"
    if t in _INT_VALUES:
        return str(value)
    if t == "bool":
        return "true" if value else "false"
    if t == "string":
        return json.dumps(value)
    if t == "uuid":
        return '"' + base64.urlsafe_b64encode(value.bytes).rstrip(b"=").decode() + '"'
    if t == "bytes":
        return '"' + base64.b64encode(value).decode() + '"'
    if t == "float64":
        return repr(value)
    if t == "struct":
        return _json_struct(f["f"], value, version)
    if t == "[]struct":
        return "[" + ",".join(_json_struct(f["f"], v, version) for v in value) + "]"
    return "[" + ",".join(_json({"t": t[2:]}, v, version) for v in value) + "]"


def _json_struct(fields: list[dict[str, Any]], data: dict[str, Any], version: int) -> str:
    return (
        "{"
        + ",".join(
            f'"{f["n"]}":{_json(f, data[f["n"]], version)}' for f in fields if in_range(f["v"], version)
        )
        + "}"
    )


def _flexible(msg: dict[str, Any], version: int) -> bool:
    return msg["flexible"] != "none" and in_range(msg["flexible"], version)


def _cases(coordinator: str) -> list[tuple[str, int, int]]:
    out = []
    for rel in RELEASES:
        table = SPECS["releases"][rel][coordinator]
        for t, ident in table["value"].items():
            for v in _versions(SPECS["messages"][ident]["valid"]):
                out.append((rel, int(t), v))
    return out


def _record(rel: str, coordinator: str, record_type: int, version: int) -> tuple[bytes, bytes, str, str]:
    table = SPECS["releases"][rel][coordinator]
    kmsg = SPECS["messages"][table["key"][str(record_type)]]
    vmsg = SPECS["messages"][table["value"][str(record_type)]]
    kdata = {f["n"]: _sample(f, 0) for f in kmsg["fields"]}
    vdata = {f["n"]: _sample(f, version) for f in vmsg["fields"] if in_range(f["v"], version)}
    if vmsg["name"] == "GroupMetadataValue":
        vdata["protocolType"] = "other"  # a consumer group's payloads are parsed: see test_decoders_kafka4.py
    key = struct.pack(">h", record_type) + encode_fields(kmsg["fields"], kdata, 0, False)
    value = struct.pack(">h", version) + encode_fields(
        vmsg["fields"], vdata, version, _flexible(vmsg, version)
    )
    key_text = f'{{"type":"{record_type}","data":{_json_struct(kmsg["fields"], kdata, 0)}}}'
    value_text = f'{{"version":"{version}","data":{_json_struct(vmsg["fields"], vdata, version)}}}'
    return key, value, key_text, value_text


@pytest.mark.parametrize("rel, record_type, version", _cases("group"))
def test_every_offsets_record_type_and_version(rel: str, record_type: int, version: int) -> None:
    key, value, key_text, value_text = _record(rel, "group", record_type, version)
    got = format_offsets_record(9, key, value, kafka4=True, rel=Release(*map(int, rel.split("."))))
    assert got == (key_text, value_text)
    assert format_offsets_record(9, key, None, kafka4=True, rel=Release(*map(int, rel.split(".")))) == (
        key_text,
        "<DELETE>",
    )


@pytest.mark.parametrize("rel, record_type, version", _cases("share"))
def test_every_share_group_state_record(rel: str, record_type: int, version: int) -> None:
    key, value, key_text, value_text = _record(rel, "share", record_type, version)
    assert format_share_group_state_record(4, key, value, rel=Release(*map(int, rel.split(".")))) == (
        key_text,
        value_text,
    )


@pytest.mark.parametrize("rel, record_type, version", _cases("transaction"))
def test_every_transaction_log_record(rel: str, record_type: int, version: int) -> None:
    key, value, key_text, value_text = _record(rel, "transaction", record_type, version)
    r = Release(*map(int, rel.split(".")))
    k, v = format_transaction_record(4, key, value, kafka4=True, rel=r)
    assert k == key_text
    if r >= Release(4, 4):  # 4.4 names the status; the sample's 3 is PrepareAbort
        value_text = value_text.replace('"transactionStatus":3,', '"transactionStatus":"PrepareAbort",')
    assert v == value_text


def test_transaction_status_by_name_only_from_4_4() -> None:
    msg = SPECS["messages"][SPECS["releases"]["4.4"]["transaction"]["value"]["0"]]
    key = struct.pack(">h", 0) + encode_fields(
        [{"n": "transactionalId", "t": "string", "v": "0"}], {"transactionalId": "t"}, 0, False
    )
    for status, name in ((1, '"Ongoing"'), (7, '"PrepareEpochFence"'), (42, '"42"')):
        data = {
            "producerId": 5,
            "producerEpoch": 1,
            "transactionTimeoutMs": 100,
            "transactionStatus": status,
            "transactionPartitions": None,
            "transactionLastUpdateTimestampMs": 1,
            "transactionStartTimestampMs": 2,
        }
        value = struct.pack(">h", 1) + encode_fields(msg["fields"], data, 1, True)
        _, v44 = format_transaction_record(0, key, value, kafka4=True, rel=Release(4, 4))
        _, v43 = format_transaction_record(0, key, value, kafka4=True, rel=Release(4, 3))
        assert f'"transactionStatus":{name},' in v44
        assert f'"transactionStatus":{status},' in v43


# A KIP-848 member's metadata value v0: the fields, then its tagged fields (hand-built per the spec).
def _member_value(tags: bytes) -> bytes:
    def cstr(s: str | None) -> bytes:
        return b"\x00" if s is None else bytes([len(s) + 1]) + s.encode()

    return (
        struct.pack(">h", 0)
        + cstr("static-1")
        + cstr(None)
        + cstr("c")
        + cstr("/h")
        + b"\x02"
        + cstr("t")
        + cstr(None)
        + struct.pack(">i", 300000)
        + cstr(None)
        + tags
    )


_MEMBER_KEY = struct.pack(">h", 5) + struct.pack(">h", 1) + b"g" + struct.pack(">h", 1) + b"m"


@pytest.mark.parametrize("rel", ["4.0", *RELEASES])
def test_classic_member_metadata_null_is_printed_absent_is_not(rel: str) -> None:
    """The spec's `"default": null` is JSON null, which the generator reads as no default: the field
    defaults to an empty struct, so a null one (tag 0, size 1, varint 0) is printed and an absent one
    is not (Kafka 4.0's tool prints `"classicMemberMetadata":null` for such a static member)."""
    r = Release(*map(int, rel.split(".")))
    _, null = format_offsets_record(0, _MEMBER_KEY, _member_value(b"\x01\x00\x01\x00"), kafka4=True, rel=r)
    _, absent = format_offsets_record(0, _MEMBER_KEY, _member_value(b"\x00"), kafka4=True, rel=r)
    assert null.endswith('"serverAssignor":null,"classicMemberMetadata":null}}')
    assert absent.endswith('"serverAssignor":null}}')
    classic = b"\x01\x00\x0b\x01" + struct.pack(">i", 45000) + b"\x01\x00"  # a struct: 45000 ms, no protocols
    _, present = format_offsets_record(0, _MEMBER_KEY, _member_value(classic), kafka4=True, rel=r)
    assert present.endswith('"classicMemberMetadata":{"sessionTimeoutMs":45000,"supportedProtocols":[]}}}')


def _segment(
    tmp_path: Path, kvs: list[tuple[bytes | None, bytes | None]], topic: str = "__consumer_offsets-0"
) -> str:
    records = [Record(i, 1700000000000 + i, k, v, ()) for i, (k, v) in enumerate(kvs)]
    w = SegmentWriter(tmp_path / topic, 0)
    w.append(encode_v2_batch(records), len(records) - 1, records[-1].timestamp, len(records) - 1)
    w.close()
    return str(w.path)


def _dump(path: str, **kw: Any) -> tuple[str, str, int]:
    out, err = io.BytesIO(), io.BytesIO()
    result = dump_files([path], DumpOptions(**kw), out, err)
    return out.getvalue().decode(), err.getvalue().decode(), result.exit_code


def test_a_streams_group_record_is_newer_than_4_0_and_known_from_4_1(tmp_path: Path) -> None:
    key, value, key_text, value_text = _record("4.1", "group", 17, 0)
    path = _segment(tmp_path, [(key, value)])
    out, err, rc = _dump(path, payload_decoder="offsets", kafka_release="4.0")
    assert "key: Unknown record type 17 at offset 0, skipping.\n" in out
    assert rc == 1 and len(err.splitlines()) == 1
    assert "offset 0: offsets record type 17 is newer than Kafka 4.0 knows" in err
    for rel in RELEASES:
        out, err, rc = _dump(path, payload_decoder="offsets", kafka_release=rel)
        assert (err, rc) == ("", 0)
        assert f"key: {key_text} payload: {value_text}\n" in out


def test_a_share_partition_metadata_record_is_gone_from_4_1(tmp_path: Path) -> None:
    """4.0's ShareGroupPartitionMetadata (type 9) is no longer a record type from 4.1 on."""
    path = _segment(tmp_path, [(struct.pack(">h", 9) + struct.pack(">h", 1) + b"g", None)])
    out, _, _ = _dump(path, payload_decoder="offsets", kafka_release="4.0")
    assert 'key: {"type":"9","data":{"groupId":"g"}} payload: <DELETE>' in out
    out, _, _ = _dump(path, payload_decoder="offsets", kafka_release="4.1")
    assert "key: Unknown record type 9 at offset 0, skipping." in out


def test_keyless_coordinator_record_message_per_release(tmp_path: Path) -> None:
    path = _segment(tmp_path, [(None, b"\x00\x00")])
    _, err, rc = _dump(path, payload_decoder="offsets", kafka_release="4.0")
    assert rc == 1 and "using offset topic decoder (message had a missing key)" in err
    for decoder in ("offsets", "transaction", "share-group-state"):
        _, err, rc = _dump(path, payload_decoder=decoder, kafka_release="4.2")
        assert rc == 1 and "at offset 0 using the specified decoder (message had a missing key)" in err


def test_leader_change_printed_from_4_1() -> None:
    key = struct.pack(">hh", 0, 2)
    voters = b"\x02" + struct.pack(">i", 1) + b"\x00"  # one voter (id 1), no tags
    value = struct.pack(">hi", 0, 1) + voters + voters + b"\x00"
    assert format_control_record(2, key, value, Release(4, 0)) == " controlType: LEADER_CHANGE(2)"
    for rel in RELEASES:
        assert format_control_record(2, key, value, Release(*map(int, rel.split(".")))) == (
            ' LeaderChange: {"version":0,"leaderId":1,"voters":[{"voterId":1}],"grantingVoters":[{"voterId":1}]}'
        )


def test_garbage_never_raises() -> None:
    """Mutated and truncated records of every release's types: always text, never an exception."""
    import random

    rng = random.Random(20)
    for coordinator, fmt in (
        ("group", lambda k, v, r: format_offsets_record(1, k, v, kafka4=True, rel=r)),
        ("share", lambda k, v, r: format_share_group_state_record(1, k, v, rel=r)),
        ("transaction", lambda k, v, r: format_transaction_record(1, k, v, kafka4=True, rel=r)),
    ):
        for rel, record_type, version in _cases(coordinator):
            key, value, _, _ = _record(rel, coordinator, record_type, version)
            r = Release(*map(int, rel.split(".")))
            for _ in range(6):
                v = bytearray(value)
                for _ in range(rng.randint(1, 4)):
                    v[rng.randrange(len(v))] = rng.randrange(256)
                cut = bytes(v[: rng.randrange(len(v) + 1)])
                for val in (bytes(v), cut):
                    k_text, v_text = fmt(key, val, r)
                    assert isinstance(k_text, str) and (v_text is None or isinstance(v_text, str))


# --------------------------------------------------------------------------------------------------
# __cluster_metadata: what 4.3 and 4.4 added (hand-built per metadata/src/main/resources/common/metadata)


def test_cordoned_log_dirs_from_4_3_and_unregister_controller_from_4_4() -> None:
    from kafkatool.log.decoders import format_metadata_record
    from tests.support.wire import NO_TAGS, carray, frame, i32, i64, tags

    change_v3 = frame(17, 3, i32(1) + i64(13) + tags((3, carray([]))))
    for rel, ok in (("4.2", False), ("4.3", True), ("4.4", True)):
        text = format_metadata_record(5, change_v3, Release(*map(int, rel.split("."))))
        if ok:
            assert text == (
                '{"type":"BROKER_REGISTRATION_CHANGE_RECORD","version":3,"data":{"brokerId":1,"brokerEpoch":13,'
                '"cordonedLogDirs":[]}}'
            )
        else:
            assert getattr(text, "newer", None) and "version 3" in text.newer
    unregister = frame(29, 0, i32(7) + NO_TAGS)
    assert format_metadata_record(6, unregister, Release(4, 4)) == (
        '{"type":"UNREGISTER_CONTROLLER_RECORD","version":0,"data":{"controllerId":7}}'
    )
    old = format_metadata_record(6, unregister, Release(4, 3))
    assert getattr(old, "newer", None) == (
        "metadata record type 29 (version 0) is newer than Kafka 4.3 knows; --kafka-release 4.4 decodes it"
    )


def test_legacy_offset_commit_type_0_takes_value_version_0_only_from_4_1() -> None:
    key = struct.pack(">hh", 0, 1) + b"g" + struct.pack(">h", 1) + b"t" + struct.pack(">i", 0)
    v1 = struct.pack(">hq", 1, 42) + struct.pack(">h", 0) + struct.pack(">qq", 5, 6)
    _, v40 = format_offsets_record(3, key, v1, kafka4=True, rel=Release(4, 0))
    assert v40 == '{"version":"1","data":{"offset":42,"metadata":"","commitTimestamp":5,"expireTimestamp":6}}'
    k41, v41 = format_offsets_record(3, key, v1, kafka4=True, rel=Release(4, 1))
    assert (k41, v41) == ("Error at offset 3, skipping. Found an unknown record version 1 for 0 type", None)
    assert getattr(k41, "newer", None) is None  # not newer: 4.1 reads type 0 at version 0 only
