"""The record versions Kafka 4.0 writes to `__consumer_offsets` and `__transaction_state`, in both
dialects, beyond what the 4.0.0 goldens hold (tests/test_dumplog_goldens.py has those).

The bytes are encoded by kafka-python's message-spec encoder (`StructField`, independent of our
reader) from the schemas below, which restate Kafka 4.0's message specs
(group-coordinator/.../common/message, transaction-coordinator/.../common/message); the expected
text is written out by hand following Kafka 4.0's DumpLogSegments and generated JSON converters.
"""

from __future__ import annotations

import base64
import io
import json
import re
import struct
import uuid
from pathlib import Path
from typing import Any

import pytest

from kafkatool.log.decoders import ErrorText, format_offsets_record, format_transaction_record
from kafkatool.log.records import Record
from kafkatool.log.writer import encode_v2_batch
from kafkatool.ops.dumplog import DumpOptions, dump_files
from tests.support.wire import mutations

schemas = pytest.importorskip("kafka.protocol.schemas")


def F(name: str, type_: str, versions: str = "0+", **kw: Any) -> dict[str, Any]:
    return {"name": name, "type": type_, "versions": versions, **kw}


def encode(fields: list[dict], version: int, item: dict, *, flexible: bool, header: bool = True) -> bytes:
    """A message of `fields` at `version`, int16 version first (kafka-python's encoder)."""
    struct_field = schemas.StructField({"name": "M", "type": "data", "versions": "0+", "fields": fields})
    body = struct_field.encode(item, version=version, compact=flexible, tagged=flexible)
    return (struct.pack(">h", version) if header else b"") + body


def uuid_bytes(n: int) -> uuid.UUID:
    return uuid.UUID(bytes=bytes(range(n, n + 16)))


def uuid_text(n: int) -> str:
    return base64.urlsafe_b64encode(bytes(range(n, n + 16))).decode().rstrip("=")


# --------------------------------------------------------------------------------------------------
# Schemas (Kafka 4.0)

OFFSET_COMMIT_KEY = [F("group", "string"), F("topic", "string"), F("partition", "int32")]
OFFSET_COMMIT_VALUE = [
    F("offset", "int64"),
    F("leaderEpoch", "int32", "3+", default=-1),
    F("metadata", "string"),
    F("commitTimestamp", "int64"),
    F("expireTimestamp", "int64", "1", default=-1),
]
GROUP_METADATA_VALUE = [
    F("protocolType", "string"),
    F("generation", "int32"),
    F("protocol", "string", nullableVersions="0+"),
    F("leader", "string", nullableVersions="0+"),
    F("currentStateTimestamp", "int64", "2+", default=-1),
    F(
        "members",
        "[]MemberMetadata",
        fields=[
            F("memberId", "string"),
            F("groupInstanceId", "string", "3+", nullableVersions="3+", default="null"),
            F("clientId", "string"),
            F("clientHost", "string"),
            F("rebalanceTimeout", "int32", "1+", default=-1),
            F("sessionTimeout", "int32"),
            F("subscription", "bytes"),
            F("assignment", "bytes"),
        ],
    ),
]
TOPIC_PARTITION = [F("Topic", "string"), F("Partitions", "[]int32")]
SUBSCRIPTION = [
    F("Topics", "[]string"),
    F("UserData", "bytes", nullableVersions="0+", default="null"),
    F("OwnedPartitions", "[]TopicPartition", "1+", fields=TOPIC_PARTITION),
    F("GenerationId", "int32", "2+", default=-1),
    F("RackId", "string", "3+", nullableVersions="3+", default="null"),
]
ASSIGNMENT = [
    F("AssignedPartitions", "[]TopicPartition", fields=TOPIC_PARTITION),
    F("UserData", "bytes", nullableVersions="0+", default="null"),
]
GROUP_KEY = [F("GroupId", "string")]
MEMBER_KEY = [F("GroupId", "string"), F("MemberId", "string")]
TOPIC_PARTITIONS = [F("TopicId", "uuid"), F("Partitions", "[]int32")]
MEMBER_METADATA_VALUE = [
    F("InstanceId", "string", nullableVersions="0+"),
    F("RackId", "string", nullableVersions="0+"),
    F("ClientId", "string"),
    F("ClientHost", "string"),
    F("SubscribedTopicNames", "[]string"),
    F("SubscribedTopicRegex", "string", nullableVersions="0+"),
    F("RebalanceTimeoutMs", "int32", default=-1),
    F("ServerAssignor", "string", nullableVersions="0+"),
    F(
        "ClassicMemberMetadata",
        "ClassicMemberMetadata",
        nullableVersions="0+",
        default="null",
        taggedVersions="0+",
        tag=0,
        fields=[
            F("SessionTimeoutMs", "int32"),
            F("SupportedProtocols", "[]ClassicProtocol", fields=[F("Name", "string"), F("Metadata", "bytes")]),
        ],
    ),
]
TXN_KEY = [F("TransactionalId", "string")]
TXN_VALUE = [
    F("ProducerId", "int64"),
    F("PreviousProducerId", "int64", "1+", taggedVersions="1+", tag=0, default=-1),
    F("NextProducerId", "int64", "1+", taggedVersions="1+", tag=1, default=-1),
    F("ProducerEpoch", "int16"),
    F("TransactionTimeoutMs", "int32"),
    F("TransactionStatus", "int8"),
    F(
        "TransactionPartitions",
        "[]PartitionsSchema",
        nullableVersions="0+",
        fields=[F("Topic", "string"), F("PartitionIds", "[]int32")],
    ),
    F("TransactionLastUpdateTimestampMs", "int64"),
    F("TransactionStartTimestampMs", "int64"),
    F("ClientTransactionVersion", "int16", "1+", taggedVersions="1+", tag=2, default=0),
]


def key(record_type: int, fields: list[dict], item: dict) -> bytes:
    return encode(fields, record_type, item, flexible=False)


def offset_commit(version: int, **kw: Any) -> bytes:
    item = {"offset": 42, "leader_epoch": 7, "metadata": "m", "commit_timestamp": 1000, "expire_timestamp": 2000}
    item.update(kw)
    return encode(OFFSET_COMMIT_VALUE, version, item, flexible=version >= 4)


def subscription(version: int) -> bytes:
    item = {
        "topics": ["a", "b"],
        "user_data": b"\x01\x02",
        "owned_partitions": [{"topic": "a", "partitions": [0, 1]}],
        "generation_id": 5,
        "rack_id": "r",
    }
    return encode(SUBSCRIPTION, version, item, flexible=False)


def assignment_bytes(version: int, user_data: bytes | None = None) -> bytes:
    item = {"assigned_partitions": [{"topic": "a", "partitions": [1, 0]}], "user_data": user_data}
    return encode(ASSIGNMENT, version, item, flexible=False)


def group_metadata(version: int, protocol_type: str = "consumer", subscription_bytes: bytes | None = None) -> bytes:
    member = {
        "member_id": "m1",
        "group_instance_id": None,
        "client_id": "c",
        "client_host": "/h",
        "rebalance_timeout": 300,
        "session_timeout": 45,
        "subscription": subscription(1) if subscription_bytes is None else subscription_bytes,
        "assignment": assignment_bytes(0, b"\xff"),
    }
    item = {
        "protocol_type": protocol_type,
        "generation": 3,
        "protocol": "range",
        "leader": "m1",
        "current_state_timestamp": 99,
        "members": [member],
    }
    return encode(GROUP_METADATA_VALUE, version, item, flexible=version >= 4)


def kafka4(k: bytes, v: bytes | None, offset: int = 5) -> tuple[str | None, str | None]:
    return format_offsets_record(offset, k, v, kafka4=True)


# --------------------------------------------------------------------------------------------------
# __consumer_offsets, Kafka 4.0's text


OC_KEY = key(1, OFFSET_COMMIT_KEY, {"group": "g", "topic": "t", "partition": 0})


@pytest.mark.parametrize(
    ("version", "data"),
    [
        (0, '{"offset":42,"metadata":"m","commitTimestamp":1000}'),
        (1, '{"offset":42,"metadata":"m","commitTimestamp":1000,"expireTimestamp":2000}'),
        (3, '{"offset":42,"leaderEpoch":7,"metadata":"m","commitTimestamp":1000}'),
        (4, '{"offset":42,"leaderEpoch":7,"metadata":"m","commitTimestamp":1000}'),
    ],
)
def test_offset_commit_json(version: int, data: str) -> None:
    assert kafka4(OC_KEY, offset_commit(version)) == (
        '{"type":"1","data":{"group":"g","topic":"t","partition":0}}',
        f'{{"version":"{version}","data":{data}}}',
    )


def test_offset_commit_tombstone_and_text_escaping() -> None:
    k = key(0, OFFSET_COMMIT_KEY, {"group": 'g"\n\u00e9', "topic": "t", "partition": -1})
    assert kafka4(k, None) == ('{"type":"0","data":{"group":"g\\"\\n\u00e9","topic":"t","partition":-1}}', "<DELETE>")


@pytest.mark.parametrize("version", [0, 3, 4])
def test_group_metadata_json_parses_consumer_protocol(version: int) -> None:
    key_text, payload = kafka4(key(2, [F("group", "string")], {"group": "g"}), group_metadata(version))
    assert key_text == '{"type":"2","data":{"group":"g"}}'
    member = (
        '{"memberId":"m1",'
        + ('"groupInstanceId":null,' if version >= 3 else "")
        + '"clientId":"c","clientHost":"/h",'
        + ('"rebalanceTimeout":300,' if version >= 1 else "")
        + '"sessionTimeout":45,'
        '"subscription":{"topics":["a","b"],"userData":"AQI=","ownedPartitions":[{"topic":"a","partitions":[0,1]}]},'
        '"assignment":{"assignedPartitions":[{"topic":"a","partitions":[1,0]}],"userData":"/w=="}}'
    )
    state = '"currentStateTimestamp":99,' if version >= 2 else ""
    assert payload == (
        f'{{"version":"{version}","data":{{"protocolType":"consumer","generation":3,"protocol":"range",'
        f'"leader":"m1",{state}"members":[{member}]}}}}'
    )


def test_group_metadata_json_subscription_versions_and_unparsable_bytes() -> None:
    _, payload = kafka4(key(2, [F("group", "string")], {"group": "g"}), group_metadata(3, subscription_bytes=subscription(3)))
    assert payload is not None
    assert (
        '"subscription":{"topics":["a","b"],"userData":"AQI=","ownedPartitions":[{"topic":"a","partitions":[0,1]}],'
        '"generationId":5,"rackId":"r"}' in payload
    )
    # bytes that do not parse stay bytes (base64), as Kafka swallows the exception
    _, payload = kafka4(key(2, [F("group", "string")], {"group": "g"}), group_metadata(3, subscription_bytes=b"\x00"))
    assert payload is not None and '"subscription":"AA=="' in payload
    # other protocol types are not parsed at all
    _, payload = kafka4(key(2, [F("group", "string")], {"group": "g"}), group_metadata(3, protocol_type="connect"))
    assert payload is not None and '"subscription":"' + base64.b64encode(subscription(1)).decode() + '"' in payload


MEMBER_ITEM = {
    "instance_id": None,
    "rack_id": "rack-1",
    "client_id": "c",
    "client_host": "/h",
    "subscribed_topic_names": ["a"],
    "subscribed_topic_regex": None,
    "rebalance_timeout_ms": 300,
    "server_assignor": "uniform",
    "classic_member_metadata": None,
}
MEMBER_JSON = (
    '"instanceId":null,"rackId":"rack-1","clientId":"c","clientHost":"/h","subscribedTopicNames":["a"],'
    '"subscribedTopicRegex":null,"rebalanceTimeoutMs":300,"serverAssignor":"uniform"'
)


@pytest.mark.parametrize(
    ("record_type", "key_fields", "key_item", "value_fields", "value_item", "value_json"),
    [
        (3, GROUP_KEY, {"group_id": "g"}, [F("Epoch", "int32")], {"epoch": 4}, '{"epoch":4}'),
        (5, MEMBER_KEY, {"group_id": "g", "member_id": "m"}, MEMBER_METADATA_VALUE, MEMBER_ITEM, "{" + MEMBER_JSON + "}"),
        (
            5,
            MEMBER_KEY,
            {"group_id": "g", "member_id": "m"},
            MEMBER_METADATA_VALUE,
            {
                **MEMBER_ITEM,
                "classic_member_metadata": {
                    "session_timeout_ms": 45000,
                    "supported_protocols": [{"name": "range", "metadata": b"\x00\x01"}],
                },
            },
            "{"
            + MEMBER_JSON
            + ',"classicMemberMetadata":{"sessionTimeoutMs":45000,"supportedProtocols":[{"name":"range","metadata":"AAE="}]}}',
        ),
        (6, GROUP_KEY, {"group_id": "g"}, [F("AssignmentEpoch", "int32")], {"assignment_epoch": 9}, '{"assignmentEpoch":9}'),
        (
            8,
            MEMBER_KEY,
            {"group_id": "g", "member_id": "m"},
            [
                F("MemberEpoch", "int32"),
                F("PreviousMemberEpoch", "int32"),
                F("State", "int8"),
                F("AssignedPartitions", "[]TopicPartitions", fields=TOPIC_PARTITIONS),
                F("PartitionsPendingRevocation", "[]TopicPartitions", fields=TOPIC_PARTITIONS),
            ],
            {
                "member_epoch": 3,
                "previous_member_epoch": 2,
                "state": 0,
                "assigned_partitions": [{"topic_id": uuid_bytes(1), "partitions": [0, 2]}],
                "partitions_pending_revocation": [],
            },
            '{"memberEpoch":3,"previousMemberEpoch":2,"state":0,"assignedPartitions":[{"topicId":"'
            + uuid_text(1)
            + '","partitions":[0,2]}],"partitionsPendingRevocation":[]}',
        ),
        (
            15,
            GROUP_KEY,
            {"group_id": "g"},
            [
                F(
                    "InitializedTopics",
                    "[]TopicPartitionsInfo",
                    fields=[F("TopicId", "uuid"), F("TopicName", "string"), F("Partitions", "[]int32")],
                ),
                F("DeletingTopics", "[]TopicInfo", fields=[F("TopicId", "uuid"), F("TopicName", "string")]),
            ],
            {
                "initialized_topics": [{"topic_id": uuid_bytes(2), "topic_name": "t", "partitions": [1]}],
                "deleting_topics": [{"topic_id": uuid_bytes(3), "topic_name": "u"}],
            },
            f'{{"initializedTopics":[{{"topicId":"{uuid_text(2)}","topicName":"t","partitions":[1]}}],'
            f'"deletingTopics":[{{"topicId":"{uuid_text(3)}","topicName":"u"}}]}}',
        ),
        (
            16,
            [F("GroupId", "string"), F("RegularExpression", "string")],
            {"group_id": "g", "regular_expression": "t.*"},
            [F("Topics", "[]string"), F("Version", "int64"), F("Timestamp", "int64")],
            {"topics": ["t1"], "version": 12, "timestamp": 13},
            '{"topics":["t1"],"version":12,"timestamp":13}',
        ),
    ],
)
def test_consumer_and_share_group_records_json(
    record_type: int, key_fields: list, key_item: dict, value_fields: list, value_item: dict, value_json: str
) -> None:
    k = key(record_type, key_fields, key_item)
    v = encode(value_fields, 0, value_item, flexible=True)
    key_json = json.dumps({"".join([n.split("_")[0]] + [p.title() for p in n.split("_")[1:]]): x for n, x in key_item.items()}, separators=(",", ":"))
    assert kafka4(k, v) == (f'{{"type":"{record_type}","data":{key_json}}}', f'{{"version":"0","data":{value_json}}}')
    assert kafka4(k, None) == (f'{{"type":"{record_type}","data":{key_json}}}', "<DELETE>")


@pytest.mark.parametrize(
    ("k", "v", "text", "newer"),
    [
        (struct.pack(">h", 17) + b"rest", b"", "Unknown record type 17 at offset 5, skipping.", True),
        (struct.pack(">h", -2), None, "Unknown record type -2 at offset 5, skipping.", False),
        (
            key(3, GROUP_KEY, {"group_id": "g"}),
            b"\x00\x01\x00",
            "Error at offset 5, skipping. Found an unknown record version 1 for 3 type",
            True,
        ),
        (
            OC_KEY,
            struct.pack(">h", 5),
            "Error at offset 5, skipping. Found an unknown record version 5 for 1 type",
            True,
        ),
        (
            OC_KEY,
            offset_commit(3)[:-3],
            "Error at offset 5, skipping. Could not read record with version 3 from value's buffer due to: null.",
            False,
        ),
        (b"\x00", None, "Error at offset 5, skipping. Could not read version from key's buffer.", False),
        (OC_KEY, b"\x00", "Error at offset 5, skipping. Could not read version from value's buffer.", False),
    ],
)
def test_records_kafka4_skips(k: bytes, v: bytes | None, text: str, newer: bool) -> None:
    key_text, payload = kafka4(k, v)
    assert (key_text, payload) == (text, None)
    assert isinstance(key_text, ErrorText) and not key_text.fatal
    assert (key_text.newer is not None) == newer


# --------------------------------------------------------------------------------------------------
# __consumer_offsets, Kafka 3.3's text for what 4.0 writes


def test_kafka33_text_reads_the_flexible_versions() -> None:
    assert format_offsets_record(5, OC_KEY, offset_commit(4)) == ("offset_commit::group=g,partition=t-0", "offset=42,metadata=m")
    key_text, payload = format_offsets_record(5, key(2, [F("group", "string")], {"group": "g"}), group_metadata(4))
    assert key_text == "group_metadata::group=g"
    assert payload == '{"protocolType":"consumer","protocol":"range","generationId":3,"assignment":"{m1=[a-1, a-0]:FF}"}'


def test_kafka33_text_has_none_for_new_record_types() -> None:
    _, payload = format_offsets_record(5, key(3, GROUP_KEY, {"group_id": "g"}), None)
    assert isinstance(payload, ErrorText) and payload.fatal
    assert payload == "java.lang.IllegalStateException: Unknown group metadata message version: 3"
    assert payload.newer == (
        "ConsumerGroupMetadataKey (offsets record type 3) is newer than Kafka 3.3 knows; --kafka-release 4.0 decodes it"
    )
    _, payload = format_offsets_record(5, struct.pack(">h", 17), None)
    assert isinstance(payload, ErrorText) and payload.newer == (
        "StreamsGroupMetadataKey (offsets record type 17) is newer than Kafka 3.3 knows; --kafka-release 4.1 decodes it"
    )
    _, payload = format_offsets_record(5, struct.pack(">h", 99), None)
    assert isinstance(payload, ErrorText) and payload.newer == "offsets record type 99 is newer than Kafka 3.3 knows"


# --------------------------------------------------------------------------------------------------
# __transaction_state


def txn_value(version: int, state: int = 1, **kw: Any) -> bytes:
    item = {
        "producer_id": 15,
        "previous_producer_id": 14,
        "next_producer_id": -1,
        "producer_epoch": 3,
        "transaction_timeout_ms": 60000,
        "transaction_status": state,
        "transaction_partitions": [{"topic": "txn", "partition_ids": [0, 1]}] if state else None,
        "transaction_last_update_timestamp_ms": 1234,
        "transaction_start_timestamp_ms": 1000,
        "client_transaction_version": 2,
    }
    item.update(kw)
    return encode(TXN_VALUE, version, item, flexible=version >= 1)


TXN_KEY_BYTES = key(0, TXN_KEY, {"transactional_id": "tx"})


@pytest.mark.parametrize("kafka4_text", [False, True])
@pytest.mark.parametrize("version", [0, 1])
def test_transaction_value_versions(version: int, kafka4_text: bool) -> None:
    assert format_transaction_record(0, TXN_KEY_BYTES, txn_value(version), kafka4=kafka4_text) == (
        "transaction_metadata::transactionalId=tx",
        "producerId:15,producerEpoch:3,state=Ongoing,partitions=[txn-0,txn-1],txnLastUpdateTimestamp=1234,"
        "txnTimeoutMs=60000",
    )
    _, payload = format_transaction_record(0, TXN_KEY_BYTES, txn_value(version, state=0), kafka4=kafka4_text)
    assert payload is not None and "state=Empty,partitions=[]," in payload


def test_transaction_unknown_versions() -> None:
    k1 = key(1, TXN_KEY, {"transactional_id": "tx"})
    key_text, payload = format_transaction_record(0, k1, txn_value(1), kafka4=True)
    assert (key_text, payload) == ("unknown::version=1", None)
    assert isinstance(key_text, ErrorText) and not key_text.fatal and key_text.newer
    _, payload = format_transaction_record(0, k1, txn_value(1))
    assert isinstance(payload, ErrorText) and payload.fatal  # 3.3's tool dies on it
    for kafka4_text in (False, True):
        _, payload = format_transaction_record(0, TXN_KEY_BYTES, struct.pack(">h", 2) + txn_value(1)[2:], kafka4=kafka4_text)
        assert payload == "java.lang.IllegalStateException: Unknown version 2 from the transaction log message value"
        assert isinstance(payload, ErrorText) and payload.fatal
        assert payload.newer == "transaction log value version 2 is newer than Kafka 4.0 knows"
    # a client transaction version Kafka 4.0 does not know fails its TransactionVersion lookup
    _, payload = format_transaction_record(0, TXN_KEY_BYTES, txn_value(1, client_transaction_version=3), kafka4=True)
    assert payload == "java.lang.IllegalArgumentException: No feature:transaction.version with feature level 3"
    assert format_transaction_record(0, TXN_KEY_BYTES, txn_value(1, client_transaction_version=3))[1] == (
        format_transaction_record(0, TXN_KEY_BYTES, txn_value(1))[1]
    )


# --------------------------------------------------------------------------------------------------
# dump-log: a record newer than the decoders know


def _segment(tmp_path: Path, records: list[tuple[bytes | None, bytes | None]]) -> str:
    path = tmp_path / "00000000000000000000.log"
    batch = encode_v2_batch([Record(i, 1000 + i, k, v, (), -1) for i, (k, v) in enumerate(records)], 0)
    path.write_bytes(batch)
    return str(path)


def _dump(path: str, **kw: Any) -> tuple[str, str, int]:
    out, err = io.BytesIO(), io.BytesIO()
    result = dump_files([path], DumpOptions(**kw), out, err)
    return out.getvalue().decode(), err.getvalue().decode(), result.exit_code


def test_dump_log_newer_offsets_record_one_line_exit_1(tmp_path: Path) -> None:
    path = _segment(tmp_path, [(OC_KEY, offset_commit(3)), (struct.pack(">h", 17), b"\x00\x00"), (struct.pack(">h", 18), None)])
    out, err, rc = _dump(path, payload_decoder="offsets", kafka_release="4.0")
    assert "key: Unknown record type 17 at offset 1, skipping.\n" in out
    assert "key: Unknown record type 18 at offset 2, skipping.\n" in out
    assert rc == 1 and len(err.splitlines()) == 1
    assert err.startswith(f"kafkatool: {path}: offset 1: offsets record type 17 is newer than Kafka 4.0 knows")
    assert err.endswith(" (and 1 more record)\n")


def test_dump_log_newer_transaction_value_one_line_exit_1(tmp_path: Path) -> None:
    newer = struct.pack(">h", 2) + txn_value(1)[2:]
    path = _segment(tmp_path, [(TXN_KEY_BYTES, txn_value(1)), (TXN_KEY_BYTES, newer)])
    for release in ("3.3", "4.0"):
        out, err, rc = _dump(path, payload_decoder="transaction", kafka_release=release)
        assert "state=Ongoing" in out and "Traceback" not in err
        assert rc == 1 and len(err.splitlines()) == 1
        assert "offset 1: transaction log value version 2 is newer than Kafka 4.0 knows" in err


def test_dump_log_newer_then_fatal_is_still_one_line(tmp_path: Path) -> None:
    path = _segment(tmp_path, [(key(1, TXN_KEY, {"transactional_id": "tx"}), None), (None, b"x")])
    out, err, rc = _dump(path, payload_decoder="transaction", kafka_release="4.0")
    assert "key: unknown::version=1\n" in out
    assert rc == 1 and len(err.splitlines()) == 1
    assert "record at offset 1 cannot be decoded" in err and "before that, offset 0: " in err


def test_dump_log_json_has_the_decoded_payloads(tmp_path: Path) -> None:
    path = _segment(tmp_path, [(OC_KEY, offset_commit(4)), (OC_KEY, None)])
    out, _, rc = _dump(path, payload_decoder="offsets", kafka_release="4.0", output="ndjson", per_record=True)
    first = json.loads(out.splitlines()[1])  # after the file object
    assert first["key_decoded"] == '{"type":"1","data":{"group":"g","topic":"t","partition":0}}'
    assert json.loads(first["value_decoded"]) == {
        "version": "4",
        "data": {"offset": 42, "leaderEpoch": 7, "metadata": "m", "commitTimestamp": 1000},
    }
    out, _, _ = _dump(path, payload_decoder="offsets", kafka_release="3.3", output="ndjson", per_record=True)
    assert json.loads(out.splitlines()[1])["value_decoded"] == "offset=42,metadata=m"


# --------------------------------------------------------------------------------------------------
# Kafka 4.0's JSON agrees with what Kafka 3.3.1's own tool printed for the same real records

_LINE = re.compile(r"^\| offset: (\d+) .*? key: (.*?)(?: payload: (.*))?$")
_ASSIGNED = re.compile(r"([^{},=]+)=\[([^\]]*)\](?::([0-9A-F]*))?")


def _records_of(text: str) -> dict[int, tuple[str, str | None]]:
    return {int(m[1]): (m[2], m[3]) for m in map(_LINE.match, text.splitlines()) if m}


def _from_kafka33(key_text: str, payload: str | None) -> tuple:
    """What Kafka 3.3.1's text says about a record, in comparable form."""
    if key_text.startswith("offset_commit::"):
        group, _, tp = key_text[len("offset_commit::group=") :].partition(",partition=")
        topic, _, partition = tp.rpartition("-")
        if payload == "<DELETE>":
            return ("commit", group, topic, int(partition), None)
        assert payload is not None
        offset, _, metadata = payload[len("offset=") :].partition(",metadata=")
        return ("commit", group, topic, int(partition), (int(offset), metadata))
    group = key_text[len("group_metadata::group=") :]
    if payload == "<DELETE>":
        return ("group", group, None)
    assert payload is not None
    g = json.loads(payload)
    members = {}
    for member, parts, user_data in _ASSIGNED.findall(g["assignment"]):
        members[member] = (sorted(p for p in parts.split(", ") if p), user_data or "")
    return ("group", group, (g["protocolType"], g["protocol"], g["generationId"], members))


def _from_kafka40(key_text: str, payload: str | None) -> tuple:
    """The same facts from our Kafka 4.0 JSON text."""
    k = json.loads(key_text)
    v = None if payload in (None, "<DELETE>") else json.loads(payload)["data"]  # type: ignore[arg-type]
    if k["type"] in ("0", "1"):
        d = k["data"]
        return ("commit", d["group"], d["topic"], d["partition"], None if v is None else (v["offset"], v["metadata"]))
    assert k["type"] == "2"
    if v is None:
        return ("group", k["data"]["group"], None)
    members = {}
    for m in v["members"]:
        a = m["assignment"]
        if isinstance(a, dict):  # a consumer group's assignment, parsed
            parts = sorted(f"{p['topic']}-{i}" for p in a["assignedPartitions"] for i in p["partitions"])
            user_data = base64.b64decode(a["userData"]).hex().upper().lstrip("0") if a["userData"] else ""
            members[m["memberId"]] = (parts, user_data)
    return ("group", k["data"]["group"], (v["protocolType"], v["protocol"], v["generation"], members))


def test_kafka4_json_agrees_with_kafka33_goldens_on_real_records() -> None:
    from tests.conftest import GOLDENS, KAFKA_LOGS, require_fixtures
    from tests.goldens import load_manifest, run_golden

    require_fixtures()
    compared = 0
    for g in load_manifest(GOLDENS, "4.0"):
        if g.mode != "offsets" or g.rc != 0:
            continue
        expected33 = _records_of(g.expected(KAFKA_LOGS)[0].decode())
        out, _, rc = run_golden(g, KAFKA_LOGS)
        ours40 = _records_of(out.decode())
        assert rc == 0 and ours40.keys() == expected33.keys(), g.id
        for offset, (key_text, payload) in expected33.items():
            assert _from_kafka40(*ours40[offset]) == _from_kafka33(key_text, payload), f"{g.id} offset {offset}"
            compared += 1
    assert compared > 10000


def test_kafka4_texts_never_raise_on_mutated_records() -> None:
    """Damaged and random bytes give text or an ErrorText, never an exception (a fixed seed)."""
    import random

    from kafkatool.log.decoders.offsets import _fast_offset_commit, _format_json

    rng = random.Random(4)
    checked = 0
    seeds = [
        OC_KEY,
        offset_commit(4),
        offset_commit(3),
        offset_commit(2),
        offset_commit(1),
        offset_commit(0, metadata="\u00e9\"x"),
        group_metadata(4),
        group_metadata(0),
        key(5, MEMBER_KEY, {"group_id": "g", "member_id": "m"}),
        encode(MEMBER_METADATA_VALUE, 0, {**MEMBER_ITEM, "classic_member_metadata": {"session_timeout_ms": 1, "supported_protocols": []}}, flexible=True),
        TXN_KEY_BYTES,
        txn_value(1),
    ]
    for blob in mutations(rng, seeds, 3000, min_edits=1):
        other = rng.choice(seeds)
        if len(blob) >= 2 and rng.random() < 0.5:
            blob = struct.pack(">h", rng.randrange(-1, 18)) + blob[2:]
        for result in (
            format_offsets_record(1, blob, other, kafka4=True),
            format_offsets_record(1, other, blob, kafka4=True),
            format_offsets_record(1, blob, blob),
            format_transaction_record(1, blob, other, kafka4=True),
            format_transaction_record(1, other, blob, kafka4=True),
        ):
            assert isinstance(result, tuple) and len(result) == 2
            assert all(part is None or isinstance(part, str) for part in result)
        # the shortcut for plain offset commits gives what the spec-driven reader gives
        for k, v in ((blob, other), (other, blob), (OC_KEY, blob)):
            fast = _fast_offset_commit(k, v, kafka4=True)
            if fast is not None:
                checked += 1
                assert fast == _format_json(1, k, v), (k, v)
    assert checked > 100
