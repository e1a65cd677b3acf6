"""Payload decoders against Kafka 3.3.1's own dump-log output, plus malformed-input behaviour.

The golden tests decode every record of every `offsets`, `txn` and `cluster-metadata` fixture with
kafka-python's record reader (independent of ours) and compare our text with the tool's record line
for that offset.
"""

from __future__ import annotations

import csv
import random
import re
import struct
from collections import Counter
from pathlib import Path

import pytest

from kafkatool.jvm.hashing import string_hash
from kafkatool.jvm.text import java_double, java_utf8
from kafkatool.log.decoders import (
    DecodeError,
    ErrorText,
    GroupMetadataKey,
    OffsetCommitKey,
    UnknownKey,
    decode_group_metadata_value,
    decode_metadata_record,
    decode_offset_commit_value,
    decode_offsets_key,
    decode_transaction_key,
    decode_transaction_value,
    format_control_record,
    format_metadata_record,
    format_offsets_record,
    format_transaction_record,
)
from kafkatool.log.decoders._wire import json_str
from tests.conftest import GOLDENS, KAFKA_LOGS, kafka_text, require_fixtures
from tests.support.wire import cstr, frame, uvar

DUMP = GOLDENS
LOGS = KAFKA_LOGS
MODES = ("offsets", "txn", "cluster-metadata")


@pytest.fixture(autouse=True)
def _kafka_33_text():
    """Everything here is checked against Kafka 3.3.1's tool, so print its text."""
    with kafka_text("3.3"):
        yield


# --------------------------------------------------------------------------------------------------
# Goldens


def _golden_cases() -> list[tuple[str, str]]:
    manifest = DUMP / "MANIFEST.tsv"
    if not manifest.is_file():
        return []
    with manifest.open(newline="") as fh:
        rows = list(csv.reader(fh, delimiter="\t"))
    return [(row[0], row[1]) for row in rows[1:] if len(row) > 1 and row[1] in MODES]


GOLDEN_CASES = _golden_cases()

# The record line up to where the decoder's text starts: after the header keys (magic 2) or after
# the legacy "isValid: … crc: N}" (magic 0/1).
_RECORD_LINE = re.compile(rb"^\| offset: (\d+) (?:.*? headerKeys: \[[^\]]*\]|.*? crc: \d+\})")


def _golden_texts(rel: str, mode: str) -> dict[int, str]:
    texts: dict[int, str] = {}
    for line in (DUMP / rel / f"{mode}.out").read_bytes().split(b"\n"):
        m = _RECORD_LINE.match(line)
        if m:
            texts[int(m.group(1))] = line[m.end() :].decode("utf-8")
    return texts


def _records(path: Path):
    """(offset, is_control, key, value) of every record, read by kafka-python."""
    records_mod = pytest.importorskip("kafka.record")
    memory = records_mod.MemoryRecords(path.read_bytes())
    while True:
        batch = memory.next_batch()
        if batch is None:
            return
        control = bool(getattr(batch, "is_control_batch", False))
        for rec in batch:
            key = None if rec.key is None else bytes(rec.key)
            value = None if rec.value is None else bytes(rec.value)
            yield rec.offset, control, key, value


def _our_text(mode: str, offset: int, control: bool, key: bytes | None, value: bytes | None) -> str:
    if control:
        type_id = struct.unpack_from(">h", key, 2)[0] if key and len(key) >= 4 else -1
        return format_control_record(type_id, key, value)  # type: ignore[arg-type]
    if mode == "cluster-metadata":
        return " payload: " + format_metadata_record(offset, value)
    fmt = format_offsets_record if mode == "offsets" else format_transaction_record
    key_text, payload = fmt(offset, key, value)
    out = ""
    if key_text is not None:
        out += " key: " + key_text
    if payload is not None:
        out += " payload: " + payload
    return out


def _check_golden(rel: str, mode: str) -> tuple[int, int, list[str]]:
    golden = _golden_texts(rel, mode)
    checked = matched = 0
    problems: list[str] = []
    seen = set()
    for offset, control, key, value in _records(LOGS / rel):
        seen.add(offset)
        checked += 1
        ours = _our_text(mode, offset, control, key, value)
        expected = golden.get(offset)
        if ours == expected:
            matched += 1
        elif len(problems) < 5:
            problems.append(f"{rel} offset {offset}:\n  kafka: {expected!r}\n  ours:  {ours!r}")
    missing = sorted(set(golden) - seen)
    if missing:
        problems.append(f"{rel}: golden offsets never decoded: {missing[:10]}")
    return checked, matched, problems


def _require_fixtures() -> None:
    require_fixtures()


@pytest.mark.parametrize(("rel", "mode"), GOLDEN_CASES or [pytest.param("-", "-", id="no-fixtures")])
def test_golden(rel: str, mode: str) -> None:
    _require_fixtures()
    checked, matched, problems = _check_golden(rel, mode)
    assert not problems, "\n".join(problems)
    assert checked == matched


def test_golden_totals(capsys: pytest.CaptureFixture[str]) -> None:
    """All goldens at once, reporting records checked/matched per mode (visible with `pytest -s`)."""
    _require_fixtures()
    if not GOLDEN_CASES:
        pytest.skip(f"no offsets/txn/cluster-metadata goldens in {DUMP / 'MANIFEST.tsv'}")
    checked: Counter[str] = Counter()
    matched: Counter[str] = Counter()
    for rel, mode in GOLDEN_CASES:
        c, m, _ = _check_golden(rel, mode)
        checked[mode] += c
        matched[mode] += m
    with capsys.disabled():
        for mode in MODES:
            print(f"\n[decoders] {mode}: {matched[mode]}/{checked[mode]} records match Kafka 3.3.1", end="")
        print()
    assert checked == matched
    assert sum(checked.values()) > 0


# --------------------------------------------------------------------------------------------------
# Byte builders for hand-made records


def s16(text: str | None) -> bytes:
    if text is None:
        return struct.pack(">h", -1)
    raw = text.encode()
    return struct.pack(">h", len(raw)) + raw


def b32(raw: bytes | None) -> bytes:
    return struct.pack(">i", -1) if raw is None else struct.pack(">i", len(raw)) + raw


def offset_key(group: str, topic: str, partition: int, version: int = 1) -> bytes:
    return struct.pack(">h", version) + s16(group) + s16(topic) + struct.pack(">i", partition)


def group_key(group: str) -> bytes:
    return struct.pack(">h", 2) + s16(group)


def assignment(parts: list[tuple[str, list[int]]], user_data: bytes | None = None, version: int = 0) -> bytes:
    out = struct.pack(">hi", version, len(parts))
    for topic, ids in parts:
        out += s16(topic) + struct.pack(f">i{len(ids)}i", len(ids), *ids)
    return out + b32(user_data)


def subscription(topics: list[str], version: int = 0) -> bytes:
    return struct.pack(">hi", version, len(topics)) + b"".join(s16(t) for t in topics) + b32(None)


def member(
    member_id: str, assign: bytes, sub: bytes | None = None, instance: str | None = None, version: int = 3
) -> bytes:
    out = s16(member_id)
    if version >= 3:
        out += s16(instance)
    out += s16("client") + s16("/127.0.0.1")
    if version >= 1:
        out += struct.pack(">i", 300000)
    out += struct.pack(">i", 10000) + b32(sub if sub is not None else subscription(["t"])) + b32(assign)
    return out


def group_value(
    members: list[bytes],
    protocol_type: str = "consumer",
    protocol: str | None = "range",
    generation: int = 3,
    version: int = 3,
) -> bytes:
    out = struct.pack(">h", version) + s16(protocol_type) + struct.pack(">i", generation)
    out += s16(protocol) + s16(None)
    if version >= 2:
        out += struct.pack(">q", 1700000000000)
    return out + struct.pack(">i", len(members)) + b"".join(members)


# --------------------------------------------------------------------------------------------------
# Offsets


@pytest.mark.parametrize("version", [0, 1, 2, 3])
def test_offset_commit_value_versions(version: int) -> None:
    body = struct.pack(">q", 42)
    if version >= 3:
        body += struct.pack(">i", 7)
    body += s16("meta data") + struct.pack(">q", 1000)
    if version == 1:
        body += struct.pack(">q", 2000)
    value = struct.pack(">h", version) + body
    v = decode_offset_commit_value(value)
    assert (v.version, v.offset, v.metadata, v.commit_timestamp) == (version, 42, "meta data", 1000)
    assert v.leader_epoch == (7 if version >= 3 else -1)
    assert v.expire_timestamp == (2000 if version == 1 else -1)
    key_text, payload = format_offsets_record(0, offset_key("g", "t", 3), value)
    assert key_text == "offset_commit::group=g,partition=t-3"
    assert payload == "offset=42,metadata=meta data"


def test_offsets_keys() -> None:
    assert decode_offsets_key(offset_key("g", "t", 1, version=0)) == OffsetCommitKey(0, "g", "t", 1)
    assert decode_offsets_key(group_key("g")) == GroupMetadataKey(2, "g")
    unknown = decode_offsets_key(b"\x00\x05rest")
    assert isinstance(unknown, UnknownKey) and unknown.version == 5


def test_offsets_tombstones() -> None:
    assert format_offsets_record(0, offset_key("g", "t", 0), None) == (
        "offset_commit::group=g,partition=t-0",
        "<DELETE>",
    )
    assert format_offsets_record(0, group_key("g"), None) == ("group_metadata::group=g", "<DELETE>")


@pytest.mark.parametrize(
    ("key", "value", "expected"),
    [
        (
            None,
            b"",
            "org.apache.kafka.common.KafkaException: Failed to decode message using offset topic "
            "decoder (message had a missing key)",
        ),
        (b"\x00\x07", None, "java.lang.IllegalStateException: Unknown group metadata message version: 7"),
        (b"\xff\xff", None, "java.lang.IllegalStateException: Unknown group metadata message version: -1"),
        (b"\x00", None, "java.nio.BufferUnderflowException"),
        (
            b"\x00\x01\x00\x05ab",
            None,
            "java.lang.RuntimeException: Error reading byte array of 5 byte(s): only 2 byte(s) available",
        ),
        (
            b"\x00\x01\xff\xff",
            None,
            "java.lang.RuntimeException: non-nullable field group was serialized as null",
        ),
        (
            offset_key("g", "t", 0),
            b"\x00\x09",
            "java.lang.IllegalStateException: Unknown offset message version: 9",
        ),
        (offset_key("g", "t", 0), b"", "java.nio.BufferUnderflowException"),
        (
            group_key("g"),
            b"\x00\x05",
            "java.lang.IllegalStateException: Unknown group metadata message version: 5",
        ),
    ],
)
def test_offsets_errors(key: bytes | None, value: bytes | None, expected: str) -> None:
    key_text, payload = format_offsets_record(5, key, value)
    assert key_text is None
    assert isinstance(payload, ErrorText) and payload.fatal
    assert payload == expected


def test_structured_offsets_errors_are_value_errors() -> None:
    with pytest.raises(DecodeError, match="Unknown offset message version: 9") as info:
        decode_offset_commit_value(b"\x00\x09")
    assert isinstance(info.value, ValueError)
    with pytest.raises(ValueError):
        decode_group_metadata_value(b"\x00\x03\x00")
    with pytest.raises(ValueError):
        decode_offsets_key(b"")


def test_group_metadata_consumer_members() -> None:
    value = group_value(
        [
            member("m-1", assignment([("a", [0, 1]), ("b", [2])], user_data=b"\x00\x0a\xff")),
            member("m-2", assignment([], user_data=b"")),
        ]
    )
    key_text, payload = format_offsets_record(0, group_key("grp"), value)
    assert key_text == "group_metadata::group=grp"
    # Members come out in Scala HashMap order; both ids land in different buckets here.
    parts = {"m-1": "m-1=[a-0, a-1, b-2]:AFF", "m-2": "m-2=[]"}
    order = sorted(parts, key=lambda m: (_improved(string_hash(m)) & 15, _improved(string_hash(m))))
    assignment_text = "{" + ",".join(parts[m] for m in order) + "}"
    assert payload == (
        '{"protocolType":"consumer","protocol":"range","generationId":3,"assignment":'
        + json_str(assignment_text)
        + "}"
    )
    g = decode_group_metadata_value(value)
    assert [m.member_id for m in g.members] == ["m-1", "m-2"]
    assert g.members[0].assignment_decoded is not None
    assert g.members[0].assignment_decoded.partitions == [("a", 0), ("a", 1), ("b", 2)]
    assert g.members[0].assignment_decoded.user_data == b"\x00\x0a\xff"
    assert g.members[0].subscription_decoded is not None and g.members[0].subscription_decoded.topics == ["t"]
    assert g.members[0].rebalance_timeout == 300000 and g.members[0].session_timeout == 10000


def _improved(h: int) -> int:
    u = h & 0xFFFFFFFF
    u ^= u >> 16
    return u - (1 << 32) if u & 0x80000000 else u


def test_group_metadata_hash_order_matches_kafka_for_known_ids() -> None:
    # From a real broker's dump (generation 6 of a third-party fixture): Kafka printed 24a4… before 20da….
    ids = [
        "consumer-my-first-app-1-20da4446-33c3-4ee9-af0e-c58aa3a2fa17",
        "consumer-my-first-app-1-24a4176e-841b-49aa-b1c7-6c0944bca31d",
    ]
    value = group_value([member(i, assignment([("t", [0])]), version=1) for i in ids], version=1)
    _, payload = format_offsets_record(0, group_key("g"), value)
    assert payload is not None and payload.index(ids[1]) < payload.index(ids[0])


def test_group_metadata_other_protocol_and_escaping() -> None:
    # Version 0 members have no instance id / rebalance timeout fields.
    value = struct.pack(">h", 0) + s16("connect") + struct.pack(">i", 1) + s16(None) + s16(None)
    value += struct.pack(">i", 1) + s16('we"ird\n') + s16("c") + s16("h") + struct.pack(">i", 5000)
    value += b32(b"sub") + b32(b"\x00\x00\x01\x02")
    _, payload = format_offsets_record(0, group_key("g"), value)
    assert (
        payload
        == '{"protocolType":"connect","protocol":null,"generationId":1,"assignment":"{we\\"ird\\n=102}"}'
    )
    g = decode_group_metadata_value(value)
    assert g.members[0].rebalance_timeout == 5000  # v0: the session timeout stands in
    assert g.members[0].assignment_decoded is None


def test_group_metadata_empty_group() -> None:
    _, payload = format_offsets_record(0, group_key("g"), group_value([], protocol_type="", protocol=None))
    assert payload == '{"protocolType":"","protocol":null,"generationId":3,"assignment":"{}"}'


@pytest.mark.parametrize(
    ("members", "expected"),
    [
        (
            [member("a", assignment([])), member("a", assignment([])), member("b", assignment([]))],
            "java.lang.AssertionError: assertion failed",
        ),
        (
            [member("a", assignment([]), instance="i"), member("b", assignment([]), instance="i")],
            "java.lang.IllegalStateException: Static member with groupInstanceId=i cannot be added to group g "
            "since it is already a member",
        ),
        (
            [member("a", b"")],
            "org.apache.kafka.common.protocol.types.SchemaException: Buffer underflow while parsing consumer "
            "protocol's header",
        ),
        (
            [member("a", b"\xff\xff\x00\x00\x00\x00")],
            "org.apache.kafka.common.protocol.types.SchemaException: Unsupported assignment version: -1",
        ),
        (
            [member("a", b"\x00\x00\x00\x00\x00\x01\x00")],
            "org.apache.kafka.common.protocol.types.SchemaException: Buffer underflow while parsing consumer "
            "protocol's assignment",
        ),
        (
            [member("a", b"\x00\x00\xff\xff\xff\xff")],
            "java.lang.RuntimeException: non-nullable field assignedPartitions was serialized as null",
        ),
        (
            [member("a", assignment([]), sub=b"\x00\x00\xff\xff\xff\xff")],
            "java.lang.RuntimeException: non-nullable field topics was serialized as null",
        ),
    ],
)
def test_group_metadata_fatal_errors(members: list[bytes], expected: str) -> None:
    key_text, payload = format_offsets_record(0, group_key("g"), group_value(members))
    assert key_text is None and isinstance(payload, ErrorText) and payload.fatal
    assert payload == expected


def test_group_metadata_tolerates_what_the_broker_tolerates() -> None:
    # Two copies of one member id: the later one replaces the first, the broker's check still passes.
    dup = [member("a", assignment([("x", [0])])), member("a", assignment([("y", [1])]))]
    _, payload = format_offsets_record(0, group_key("g"), group_value(dup))
    assert payload is not None and '"assignment":"{a=[y-1]}"' in payload
    # A truncated subscription is a schema error the broker only logs.
    odd = [member("a", assignment([("x", [0])]), sub=b"\x00")]
    _, payload = format_offsets_record(0, group_key("g"), group_value(odd))
    assert payload is not None and '"assignment":"{a=[x-0]}"' in payload
    # Assignment versions above 1 are read as version 1.
    newer = [member("a", assignment([("x", [0])], version=3))]
    _, payload = format_offsets_record(0, group_key("g"), group_value(newer))
    assert payload is not None and '"assignment":"{a=[x-0]}"' in payload


# --------------------------------------------------------------------------------------------------
# Transactions


def txn_key(tid: str, version: int = 0) -> bytes:
    return struct.pack(">h", version) + s16(tid)


def txn_value(state: int, partitions: list[tuple[str, list[int]]] | None, version: int = 0) -> bytes:
    out = struct.pack(">hqhib", version, 7, 1, 60000, state)
    if partitions is None:
        out += struct.pack(">i", -1)
    else:
        out += struct.pack(">i", len(partitions))
        for topic, ids in partitions:
            out += s16(topic) + struct.pack(f">i{len(ids)}i", len(ids), *ids)
    return out + struct.pack(">qq", 1234, 1000)


def test_transaction_record() -> None:
    key_text, payload = format_transaction_record(0, txn_key("tx"), txn_value(1, [("t", [0])]))
    assert key_text == "transaction_metadata::transactionalId=tx"
    assert payload == (
        "producerId:7,producerEpoch:1,state=Ongoing,partitions=[t-0],"
        "txnLastUpdateTimestamp=1234,txnTimeoutMs=60000"
    )
    # Empty transactions never load their partitions.
    _, payload = format_transaction_record(0, txn_key("tx"), txn_value(0, [("t", [0])]))
    assert payload is not None and "state=Empty,partitions=[]," in payload
    _, payload = format_transaction_record(0, txn_key("tx"), txn_value(0, None))
    assert payload is not None and "partitions=[]" in payload
    assert format_transaction_record(0, txn_key("tx"), None) == (
        "transaction_metadata::transactionalId=tx",
        "<DELETE>",
    )
    v = decode_transaction_value(txn_value(7, [("a", [1, 2])]))
    assert v.state == "PrepareEpochFence" and v.partitions == [("a", [1, 2])] and v.start_timestamp == 1000
    assert decode_transaction_key(txn_key("x")).transactional_id == "x"


def test_transaction_partitions_are_a_hash_set() -> None:
    parts = [("topic-a", list(range(12))), ("topic-b", [3, 3, 1]), ("topic-a", [0])]
    _, payload = format_transaction_record(0, txn_key("tx"), txn_value(2, parts))
    assert payload is not None
    listed = re.search(r"partitions=\[(.*?)\]", payload).group(1).split(",")  # type: ignore[union-attr]
    assert sorted(listed) == sorted({f"topic-a-{i}" for i in range(12)} | {"topic-b-3", "topic-b-1"})
    assert len(listed) == 14


@pytest.mark.parametrize(
    ("key", "value", "expected_class", "expected_text"),
    [
        (None, None, "java.lang.NullPointerException", None),
        (
            txn_key("tx", version=1),
            None,
            "java.lang.IllegalStateException",
            "java.lang.IllegalStateException: Unknown version 1 from the transaction log message",
        ),
        (
            txn_key("tx"),
            txn_value(1, [], version=2),
            "java.lang.IllegalStateException",
            "java.lang.IllegalStateException: Unknown version 2 from the transaction log message value",
        ),
        (
            txn_key("tx"),
            txn_value(9, []),
            "java.lang.IllegalStateException",
            "java.lang.IllegalStateException: Unknown transaction state id 9 from the transaction status message",
        ),
        (txn_key("tx"), txn_value(1, None), "java.lang.NullPointerException", None),
        (
            txn_key("tx"),
            txn_value(1, [])[:-3],
            "java.nio.BufferUnderflowException",
            "java.nio.BufferUnderflowException",
        ),
    ],
)
def test_transaction_errors(
    key: bytes | None, value: bytes | None, expected_class: str, expected_text: str | None
) -> None:
    key_text, payload = format_transaction_record(0, key, value)
    assert key_text is None and isinstance(payload, ErrorText) and payload.fatal
    assert payload.java_class == expected_class
    if expected_text is not None:
        assert payload == expected_text


# --------------------------------------------------------------------------------------------------
# Cluster metadata


def uuid16() -> bytes:
    return bytes(range(16))


def test_metadata_records() -> None:
    quota = frame(
        14,
        0,
        uvar(2)
        + cstr("user")
        + cstr(None)
        + b"\x00"
        + cstr("producer_byte_rate")
        + struct.pack(">d", 1e7)
        + b"\x01"
        + b"\x00",
    )
    assert format_metadata_record(0, quota) == (
        '{"type":"CLIENT_QUOTA_RECORD","version":0,"data":{"entity":[{"entityType":"user","entityName":null}],'
        '"key":"producer_byte_rate","value":1.0E7,"remove":true}}'
    )
    scram = frame(
        11,
        0,
        cstr("alice")
        + uvar(2)
        + b"\x01"
        + uvar(4)
        + b"abc"
        + uvar(1)
        + struct.pack(">i", 4096)
        + b"\x00"
        + b"\x00",
    )
    assert format_metadata_record(0, scram) == (
        '{"type":"USER_SCRAM_CREDENTIAL_RECORD","version":0,"data":{"name":"alice","credentialInfos":'
        '[{"mechanism":1,"salt":"YWJj","saltedPassword":"","iterations":4096}]}}'
    )
    # Tagged fields: printed only when not at their default; unknown tags skipped.
    isr = uvar(3) + struct.pack(">2i", 1, 2)
    change = frame(
        5,
        0,
        struct.pack(">i", 2)
        + uuid16()
        + uvar(3)
        + uvar(0)
        + uvar(len(isr))
        + isr
        + uvar(1)
        + uvar(4)
        + struct.pack(">i", -2)
        + uvar(9)
        + uvar(2)
        + b"zz",
    )
    rec = decode_metadata_record(change)
    assert rec.data["isr"] == [1, 2] and rec.data["leader"] == -2
    assert format_metadata_record(0, change) == (
        '{"type":"PARTITION_CHANGE_RECORD","version":0,"data":{"partitionId":2,"topicId":"AAECAwQFBgcICQoLDA0ODw",'
        '"isr":[1,2]}}'
    )
    reg = frame(
        17, 1, struct.pack(">iq", 1, 5) + uvar(2) + uvar(0) + uvar(1) + b"\x01" + uvar(1) + uvar(1) + b"\x01"
    )
    assert format_metadata_record(0, reg) == (
        '{"type":"BROKER_REGISTRATION_CHANGE_RECORD","version":1,"data":{"brokerId":1,"brokerEpoch":5,'
        '"fenced":1,"inControlledShutdown":1}}'
    )
    acl = frame(
        6, 0, b"\x02" + cstr(None) + b"\x03" + cstr("User:é\u0001") + cstr("*") + b"\x04\x03" + b"\x00"
    )
    assert format_metadata_record(0, acl) == (
        '{"type":"ACCESS_CONTROL_RECORD","version":0,"data":{"resourceType":2,"resourceName":null,"patternType":3,'
        '"principal":"User:é\\u0001","host":"*","operation":4,"permissionType":3}}'
    )


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (None, "Error while reading frame version"),
        (b"", "Error while reading frame version"),
        (
            b"\x00\x0c\x00",
            "Could not deserialize metadata record with frame version 0. Note that upgrades from the "
            "preview release of KRaft in 2.8 to newer versions are not supported.",
        ),
        (
            b"\x02\x0c\x00",
            "Could not deserialize metadata record due to unknown frame version 2(only frame version 1 "
            "is supported)",
        ),
        (b"\x80\x80\x02", "Value for frame version was too large."),
        (b"\x81\x81\x81\x81\x81", "Error while reading frame version"),
        (b"\x01", "Error while reading type"),
        (b"\x01\x0c", "Error while reading version"),
        (
            b"\x01\x0d\x00\x00",
            "org.apache.kafka.common.errors.UnsupportedVersionException: Unknown metadata id 13",
        ),
        (b"\x01\x0c\x00\x05ab", "Failed to deserialize record with type 12"),
        (frame(12, 0, cstr("f") + b"\x00\x01" + b"\x00") + b"xyz", "Found 3 byte(s) of garbage after 12"),
        # Tag 1 (inControlledShutdown) is not valid in version 0.
        (
            frame(17, 0, struct.pack(">iq", 1, 5) + uvar(1) + uvar(1) + uvar(1) + b"\x01"),
            "Failed to deserialize record with type 17",
        ),
        (
            frame(3, 0, struct.pack(">i", 0) + uuid16() + struct.pack(">i", 50)),
            "Failed to deserialize record with type 3",
        ),
    ],
)
def test_metadata_errors(value: bytes | None, message: str) -> None:
    text = format_metadata_record(77, value)
    assert text == f"Error at 77, skipping. {message}"
    assert isinstance(text, ErrorText) and not text.fatal


def test_metadata_versions_beyond_known_read_like_kafka() -> None:
    # Kafka 3.3.1 reads version 5 of a 0-1 record with the checks generated for 0-1 and prints it.
    body = (
        struct.pack(">i", 1)
        + uuid16()
        + struct.pack(">q", 3)
        + uvar(1)
        + uvar(1)
        + cstr(None)
        + b"\x00\x01\x00"
    )
    text = format_metadata_record(0, frame(0, 5, body))
    assert text.startswith('{"type":"REGISTER_BROKER_RECORD","version":5,')
    assert text.endswith('"rack":null,"fenced":false,"inControlledShutdown":true}}')


def test_control_records() -> None:
    assert (
        format_control_record(1, b"\x00\x00\x00\x01", b"\x00\x00\x00\x00\x00\x05")
        == " endTxnMarker: COMMIT coordinatorEpoch: 5"
    )
    assert (
        format_control_record(0, b"\x00\x00\x00\x00", b"\x00\x00\x00\x00\x00\x00extra")
        == " endTxnMarker: ABORT coordinatorEpoch: 0"
    )
    assert format_control_record(2, b"\x00\x00\x00\x02", b"\x00\x00") == " controlType: LEADER_CHANGE(2)"
    assert format_control_record(9, b"\x00\x01\x00\x09", None) == " controlType: UNKNOWN(9)"
    header = struct.pack(">hq", 0, 1700000000000) + b"\x00"
    assert (
        format_control_record(3, b"\x00\x00\x00\x03", header)
        == ' SnapshotHeader {"version":0,"lastContainedLogTimestamp":1700000000000}'
    )
    assert format_control_record(4, b"\x00\x00\x00\x04", b"\x00\x00\x00") == ' SnapshotFooter {"version":0}'


@pytest.mark.parametrize(
    ("key", "value", "expected"),
    [
        (
            b"\x00\x00",
            None,
            "org.apache.kafka.common.InvalidRecordException: Invalid value size found for end "
            "control record key. Must have at least 4 bytes, but found only 2",
        ),
        (
            b"\xff\xff\x00\x01",
            None,
            "org.apache.kafka.common.InvalidRecordException: Invalid version found for "
            "control record: -1. May indicate data corruption",
        ),
        (
            b"\x00\x00\x00\x01",
            b"\x00\x00\x00",
            "org.apache.kafka.common.InvalidRecordException: Invalid value size "
            "found for end transaction marker. Must have at least 6 bytes, but "
            "found only 3",
        ),
        (
            b"\x00\x00\x00\x01",
            b"\x80\x00\x00\x00\x00\x00",
            "org.apache.kafka.common.InvalidRecordException: Invalid "
            "version found for end transaction marker: -32768. May indicate data corruption",
        ),
        (b"\x00\x00\x00\x03", b"\x00", "java.nio.BufferUnderflowException"),
    ],
)
def test_control_record_errors(key: bytes, value: bytes | None, expected: str) -> None:
    text = format_control_record(1, key, value)
    assert isinstance(text, ErrorText) and text.fatal
    assert text == expected


# --------------------------------------------------------------------------------------------------
# JVM details and robustness


def test_java_compatible_text_helpers() -> None:
    # Java's decoder replaces an encoded surrogate as one unit and a truncated tail as one.
    assert java_utf8(b"a\xed\xa0\x80b") == "a\ufffdb"
    assert java_utf8(b"a\xe2\x82") == "a\ufffd"
    assert java_utf8(b"\xf0\x90\x80") == "\ufffd"
    assert java_utf8(b"\xc0\xaf") == "\ufffd\ufffd"
    assert string_hash("hello") == 99162322
    assert string_hash("\U0001f600") == 1772899
    assert [java_double(x) for x in (1.0, 1e7, 1.5e-5, 0.001, 123.456, -0.0, 12345678.9)] == [
        "1.0",
        "1.0E7",
        "1.5E-5",
        "0.001",
        "123.456",
        "-0.0",
        "1.23456789E7",
    ]
    assert json_str('a"\\\b\t\n\f\r\x1f\x7f/é') == '"a\\"\\\\\\b\\t\\n\\f\\r\\u001F\x7f/é"'


def test_offset_commit_fast_path_agrees_with_full_decoder() -> None:
    from kafkatool.log.decoders.offsets import _fast_offset_commit

    rng = random.Random(7)
    keys = [offset_key("g", "t", 3), offset_key("gr\u00e9", "", -1, version=0), offset_key("", "x" * 40, 9)]
    values = [
        struct.pack(">hq", v, 5)
        + (b"\x00\x00\x00\x01" if v >= 3 else b"")
        + s16("m" if v else "")
        + struct.pack(">q", 1)
        + (struct.pack(">q", 2) if v == 1 else b"")
        for v in range(4)
    ]
    hits = 0
    for _ in range(3000):
        key = bytearray(rng.choice(keys))
        value = bytearray(rng.choice(values))
        for blob in (key, value):
            if blob and rng.random() < 0.5:
                blob[rng.randrange(len(blob))] = rng.randrange(256)
            if blob and rng.random() < 0.3:
                del blob[rng.randrange(len(blob)) :]
        fast = _fast_offset_commit(bytes(key), bytes(value))
        if fast is None:
            continue
        hits += 1
        k = decode_offsets_key(bytes(key))
        v = decode_offset_commit_value(bytes(value))
        assert isinstance(k, OffsetCommitKey)
        expected_payload = f"offset={v.offset},metadata={v.metadata}" if v.metadata else f"offset={v.offset}"
        assert fast == (f"offset_commit::group={k.group},partition={k.topic}-{k.partition}", expected_payload)
    assert hits > 100


def test_never_raises_on_garbage() -> None:
    rng = random.Random(20240501)
    seeds = [
        offset_key("g", "t", 0),
        group_key("g"),
        group_value([member("m", assignment([("t", [0, 1])]))]),
        txn_key("tx"),
        txn_value(1, [("t", [0, 1, 2, 3, 4, 5])]),
        frame(3, 0, b"\x00" * 40),
    ]
    for _ in range(4000):
        base = bytearray(rng.choice(seeds))
        for _ in range(rng.randint(0, 4)):
            if base and rng.random() < 0.5:
                base[rng.randrange(len(base))] = rng.randrange(256)
            elif base:
                del base[rng.randrange(len(base)) :]
        blob = (
            bytes(base)
            if rng.random() < 0.9
            else bytes(rng.randrange(256) for _ in range(rng.randint(0, 30)))
        )
        other = rng.choice(seeds)
        for result in (
            format_offsets_record(1, blob, other),
            format_offsets_record(1, other, blob),
            format_offsets_record(1, blob, blob),
            format_transaction_record(1, blob, other),
            format_transaction_record(1, other, blob),
        ):
            assert isinstance(result, tuple) and len(result) == 2
            assert all(part is None or isinstance(part, str) for part in result)
        assert isinstance(format_metadata_record(1, blob), str)
        assert isinstance(format_control_record(rng.randrange(-1, 6), blob, other), str)
        for fn in (
            decode_offsets_key,
            decode_offset_commit_value,
            decode_group_metadata_value,
            decode_transaction_key,
            decode_transaction_value,
            decode_metadata_record,
        ):
            try:
                fn(blob)
            except ValueError:
                pass
