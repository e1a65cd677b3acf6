"""Kafka 4.0's dump-log decoders: KRaft metadata up to 4.0, tiered storage and share group state.

Oracles:
* `__cluster_metadata` of a real Kafka 4.0.0 broker and the text Kafka 4.0.0's `kafka-dump-log.sh`
  printed for it (`shared/fixtures/kafka-4.0.0`), record by record (records read by kafka-python,
  not by us; whole files are in test_dumplog_goldens.py); the same files with `--kafka-release 3.3`
  against what 3.3 prints.
* For records the fixtures lack: bytes laid out by hand from Kafka 4.0's message specs
  (`metadata/src/main/resources/common/metadata`, `storage/src/main/resources/message`,
  `share-coordinator/src/main/resources/common/message`: field order, compact strings and arrays,
  the tagged-field section) and expected text derived from Kafka 4.0's printers: the generated JSON
  converters (fields in spec order, a tagged field only when not at its default, uuids as URL-safe
  base64, bytes as padded base64) with DumpLogSegments' `{"type":…,"version":…,"data":…}` wrapper;
  for tiered storage the domain classes' `toString()` (RemoteLogSegmentMetadata & co.) and their
  constructor checks; for share state DumpLogSegments' ShareGroupStateMessageParser and
  CoordinatorRecordSerde's error sentences.  The expected strings are written out literally.
"""

from __future__ import annotations

import io
import os
import re
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from kafkatool import release
from kafkatool.log.decoders import (
    ErrorText,
    format_control_record,
    format_metadata_record,
    format_remote_log_metadata_record,
    format_share_group_state_record,
)
from kafkatool.log.records import Record
from kafkatool.log.writer import SegmentWriter, encode_v2_batch
from kafkatool.ops.dumplog import DumpOptions, dump_files
from tests.conftest import SHARED, kafka_text
from tests.support.wire import (
    NO_TAGS,
    carray,
    cbytes,
    cstr,
    frame,
    i8,
    i16,
    i32,
    i64,
    int32s,
    mutations,
    tags,
)

K4 = SHARED / "fixtures" / "kafka-4.0.0"
K4_LOGS = K4 / "kafka-logs"
K4_DUMP = K4 / "dump-log"
R33, R40 = release.Release(3, 3), release.Release(4, 0)
U1 = bytes(range(16))
U1_TEXT = "AAECAwQFBgcICQoLDA0ODw"
U2 = bytes(range(16, 32))
U2_TEXT = "EBESExQVFhcYGRobHB0eHw"


@pytest.fixture(autouse=True)
def _kafka_40_text():
    with kafka_text("4.0"):
        yield


def _require_k4() -> None:
    if not (K4_LOGS.is_dir() and K4_DUMP.is_dir()):
        pytest.skip(f"Kafka 4.0.0 fixtures not found at {K4}")


# --------------------------------------------------------------------------------------------------
# Kafka 4.0.0 fixtures


_RECORD_LINE = re.compile(rb"^\| offset: (\d+) .*? headerKeys: \[[^\]]*\]")
K4_METADATA = [
    "__cluster_metadata-0/00000000000000000000.log",
    "__cluster_metadata-0/00000000000000000020-0000000001.checkpoint",
]


def _records(path: Path):
    records_mod = pytest.importorskip("kafka.record")
    memory = records_mod.MemoryRecords(path.read_bytes())
    while (batch := memory.next_batch()) is not None:
        control = bool(getattr(batch, "is_control_batch", False))
        for rec in batch:
            yield (
                rec.offset,
                control,
                None if rec.key is None else bytes(rec.key),
                None if rec.value is None else bytes(rec.value),
            )


@pytest.mark.parametrize("rel", K4_METADATA)
def test_cluster_metadata_records_match_kafka_40(rel: str) -> None:
    """Each record (read by kafka-python) against the line Kafka 4.0.0's tool printed for it."""
    _require_k4()
    golden = {}
    for line in (K4_DUMP / rel / "cluster-metadata-decoder.out").read_bytes().split(b"\n"):
        if m := _RECORD_LINE.match(line):
            golden[int(m.group(1))] = line[m.end() :].decode()
    seen = 0
    for offset, control, key, value in _records(K4_LOGS / rel):
        if control:
            ours = format_control_record(-1, key, value)  # type: ignore[arg-type]
        else:
            ours = " payload: " + format_metadata_record(offset, value)
        assert ours == golden[offset], f"offset {offset}"
        seen += 1
    assert seen == len(golden) > 5


def test_kafka_40_metadata_log_as_kafka_33_prints_it() -> None:
    """3.3 knows none of ids 23, 24, 27 nor RegisterBrokerRecord v3: its tool prints what its reader makes
    of them (the version tests of 3.3's generated readers); kafkatool prints the same, then one line saying
    why, and exits 1."""
    _require_k4()
    release.select("3.3")
    out, err = io.BytesIO(), io.BytesIO()
    result = dump_files(
        [str(K4_LOGS / K4_METADATA[0])], DumpOptions(payload_decoder="cluster-metadata"), out, err
    )
    text = out.getvalue().decode()
    assert (
        "payload: Error at 1, skipping. org.apache.kafka.common.errors.UnsupportedVersionException: "
        "Unknown metadata id 23\n" in text
    )
    assert (
        '"type":"FEATURE_LEVEL_RECORD","version":0,"data":{"name":"metadata.version","featureLevel":25}}'
        in text
    )
    # v3 read with 3.3's 0-1 reader, which does not expect isMigratingZkBroker after brokerId, fails;
    # PartitionChangeRecord v2 reads, its tags 6-8 unknown to 3.3 and skipped
    assert "payload: Error at 7, skipping. Failed to deserialize record with type 0\n" in text
    assert (
        '{"type":"PARTITION_CHANGE_RECORD","version":2,"data":{"partitionId":3,"topicId":"DNgpMTO3T-iWgy5M-X1tmA",'
        in text
    )
    lines = err.getvalue().decode().splitlines()
    assert len(lines) == 1 and lines[0].startswith("kafkatool: ")
    assert (
        "offset 1: metadata record type 23 (version 0) is newer than Kafka 3.3 knows; --kafka-release 4.0"
        in lines[0]
    )
    assert result.exit_code == 1


# --------------------------------------------------------------------------------------------------
# Metadata records the fixtures lack (layouts from 4.0's specs, text by the converters' rules)


def _meta(api_key: int, version: int, body: bytes, rel: release.Release = R40) -> str:
    return format_metadata_record(7, frame(api_key, version, body), rel)


def test_records_added_after_33() -> None:
    assert (
        _meta(21, 0, i8(3) + NO_TAGS)
        == '{"type":"ZK_MIGRATION_STATE_RECORD","version":0,"data":{"zkMigrationState":3}}'
    )
    assert _meta(22, 0, cstr("alice") + i8(2) + NO_TAGS) == (
        '{"type":"REMOVE_USER_SCRAM_CREDENTIAL_RECORD","version":0,"data":{"name":"alice","mechanism":2}}'
    )
    # Name is a nullable tagged string defaulting to null: absent, null or set
    assert _meta(23, 0, NO_TAGS) == '{"type":"BEGIN_TRANSACTION_RECORD","version":0,"data":{}}'
    assert (
        _meta(23, 0, tags((0, cstr("x"))))
        == '{"type":"BEGIN_TRANSACTION_RECORD","version":0,"data":{"name":"x"}}'
    )
    assert _meta(24, 0, NO_TAGS) == '{"type":"END_TRANSACTION_RECORD","version":0,"data":{}}'
    assert _meta(25, 0, tags((0, cstr("controller failover")))) == (
        '{"type":"ABORT_TRANSACTION_RECORD","version":0,"data":{"reason":"controller failover"}}'
    )
    assert _meta(26, 0, cstr("tok-1") + NO_TAGS) == (
        '{"type":"REMOVE_DELEGATION_TOKEN_RECORD","version":0,"data":{"tokenId":"tok-1"}}'
    )
    assert (
        _meta(28, 0, cstr("orders") + NO_TAGS)
        == '{"type":"CLEAR_ELR_RECORD","version":0,"data":{"topicName":"orders"}}'
    )
    controller = (
        i32(3000)
        + U1
        + b"\x01"
        + carray([cstr("CONTROLLER") + cstr("c1") + struct.pack(">H", 65535) + i16(1) + NO_TAGS])
        + carray([cstr("kraft.version") + i16(0) + i16(1) + NO_TAGS])
        + NO_TAGS
    )
    assert _meta(27, 0, controller) == (
        '{"type":"REGISTER_CONTROLLER_RECORD","version":0,"data":{"controllerId":3000,"incarnationId":"'
        + U1_TEXT
        + '","zkMigrationReady":true,"endPoints":[{"name":"CONTROLLER","host":"c1","port":65535,'
        '"securityProtocol":1}],"features":[{"name":"kraft.version","minSupportedVersion":0,"maxSupportedVersion":1}]}}'
    )


def test_records_whose_layout_changed_after_33() -> None:
    token = (
        cstr("User:a")
        + cstr("User:b")
        + carray([cstr("User:c")])
        + i64(1)
        + i64(2)
        + i64(3)
        + cstr("t1")
        + NO_TAGS
    )
    assert _meta(10, 0, token) == (
        '{"type":"DELEGATION_TOKEN_RECORD","version":0,"data":{"owner":"User:a","requester":"User:b",'
        '"renewers":["User:c"],"issueTimestamp":1,"maxTimestamp":2,"expirationTimestamp":3,"tokenId":"t1"}}'
    )
    scram = (
        cstr("alice") + i8(1) + cbytes(b"salt") + cbytes(b"stored") + cbytes(b"server") + i32(4096) + NO_TAGS
    )
    assert _meta(11, 0, scram) == (
        '{"type":"USER_SCRAM_CREDENTIAL_RECORD","version":0,"data":{"name":"alice","mechanism":1,'
        '"salt":"c2FsdA==","storedKey":"c3RvcmVk","serverKey":"c2VydmVy","iterations":4096}}'
    )
    # 3.3 read the same bytes with its own (never written) layout and failed
    assert _meta(11, 0, scram, R33).startswith("Error at 7, skipping. ")
    # AccessControlRecord (6) is gone from 4.0: an unknown id, but not a newer one
    acl = _meta(6, 0, b"\x02" + cstr(None) + b"\x03" + cstr("User:x") + cstr("*") + b"\x04\x03" + NO_TAGS)
    assert (
        acl
        == "Error at 7, skipping. org.apache.kafka.common.errors.UnsupportedVersionException: Unknown metadata id 6"
    )
    assert isinstance(acl, ErrorText) and not acl.newer
    assert _meta(
        6, 0, b"\x02" + cstr(None) + b"\x03" + cstr("User:x") + cstr("*") + b"\x04\x03" + NO_TAGS, R33
    ).startswith('{"type":"ACCESS_CONTROL_RECORD"')


def test_new_versions_of_33_records() -> None:
    broker_v2 = (
        i32(1) + b"\x01" + U1 + i64(9) + carray([]) + carray([]) + cstr("r1") + b"\x00" + b"\x01" + NO_TAGS
    )
    assert _meta(0, 2, broker_v2) == (
        '{"type":"REGISTER_BROKER_RECORD","version":2,"data":{"brokerId":1,"isMigratingZkBroker":true,"incarnationId":"'
        + U1_TEXT
        + '","brokerEpoch":9,"endPoints":[],"features":[],"rack":"r1","fenced":false,"inControlledShutdown":true}}'
    )
    # v3: LogDirs is tagged (tag 0) and printed only when not empty
    broker_v3 = i32(1) + b"\x00" + U1 + i64(9) + carray([]) + carray([]) + cstr(None) + b"\x01" + b"\x00"
    assert _meta(0, 3, broker_v3 + NO_TAGS).endswith(
        '"rack":null,"fenced":true,"inControlledShutdown":false}}'
    )
    assert _meta(0, 3, broker_v3 + tags((0, carray([U1, U2])))).endswith(
        f'"inControlledShutdown":false,"logDirs":["{U1_TEXT}","{U2_TEXT}"]}}}}'
    )
    partition_head = i32(0) + U2 + int32s(1, 2) + int32s(1) + int32s() + int32s() + i32(1)
    p1 = partition_head + i32(5) + i32(6) + carray([U1, U1])
    assert _meta(3, 1, p1 + NO_TAGS) == (
        '{"type":"PARTITION_RECORD","version":1,"data":{"partitionId":0,"topicId":"'
        + U2_TEXT
        + '","replicas":[1,2],'
        '"isr":[1],"removingReplicas":[],"addingReplicas":[],"leader":1,"leaderEpoch":5,"partitionEpoch":6,'
        f'"directories":["{U1_TEXT}","{U1_TEXT}"]}}}}'
    )
    # v2: ELR (tag 1) and last known ELR (tag 2), nullable, default null; an empty list is not null
    assert _meta(3, 2, p1 + tags((1, int32s(2)), (2, int32s()))).endswith(
        '"partitionEpoch":6,"directories":["'
        + U1_TEXT
        + '","'
        + U1_TEXT
        + '"],"eligibleLeaderReplicas":[2],"lastKnownElr":[]}}'
    )
    # PartitionChangeRecord: v1 Directories (tag 8), v2 ELR (tags 6, 7), printed only when set
    change = i32(4) + U2
    assert _meta(5, 1, change + tags((8, carray([U1])))) == (
        '{"type":"PARTITION_CHANGE_RECORD","version":1,"data":{"partitionId":4,"topicId":"' + U2_TEXT + '",'
        '"directories":["' + U1_TEXT + '"]}}'
    )
    assert _meta(5, 2, change + tags((1, i32(3)), (6, int32s(3)), (7, int32s(1, 3)))) == (
        '{"type":"PARTITION_CHANGE_RECORD","version":2,"data":{"partitionId":4,"topicId":"' + U2_TEXT + '",'
        '"leader":3,"eligibleLeaderReplicas":[3],"lastKnownElr":[1,3]}}'
    )
    # tag 6 is not valid in version 1: the generated reader throws
    assert (
        _meta(5, 1, change + tags((6, int32s(3))))
        == "Error at 7, skipping. Failed to deserialize record with type 5"
    )
    reg_change = i32(1) + i64(7) + tags((0, i8(1)), (2, carray([U2])))
    assert _meta(17, 2, reg_change) == (
        '{"type":"BROKER_REGISTRATION_CHANGE_RECORD","version":2,"data":{"brokerId":1,"brokerEpoch":7,"fenced":1,'
        '"logDirs":["' + U2_TEXT + '"]}}'
    )


def test_records_newer_than_known() -> None:
    unknown = _meta(29, 0, NO_TAGS)
    assert (
        unknown
        == "Error at 7, skipping. org.apache.kafka.common.errors.UnsupportedVersionException: Unknown metadata id 29"
    )
    assert isinstance(unknown, ErrorText) and unknown.newer
    assert unknown.newer == (
        "metadata record type 29 (version 0) is newer than Kafka 4.0 knows; --kafka-release 4.4 decodes it"
    )
    # a newer version is read with 4.0's reader, as Kafka 4.0 does, and flagged
    newer = _meta(20, 1, NO_TAGS)
    assert newer == '{"type":"NO_OP_RECORD","version":1,"data":{}}'
    assert isinstance(newer, ErrorText) and newer.newer
    assert (
        newer.newer
        == "metadata record NO_OP_RECORD version 1 is newer than Kafka 4.0 knows (it reads versions 0 to 0)"
    )
    # for the 3.3 dialect what 4.0 added is newer, with a hint
    old = _meta(24, 0, NO_TAGS, R33)
    assert isinstance(old, ErrorText) and old.newer and old.newer.endswith("; --kafka-release 4.0 decodes it")
    assert not isinstance(_meta(20, 0, NO_TAGS), ErrorText)


# --------------------------------------------------------------------------------------------------
# KRaft control records


def test_kraft_version_and_voters_control_records() -> None:
    kraft = i16(0) + i16(1) + NO_TAGS
    assert format_control_record(5, i16(0) + i16(5), kraft) == ' KRaftVersion {"version":0,"kRaftVersion":1}'
    voter = (
        i32(1)
        + U1
        + carray([cstr("CONTROLLER") + cstr("localhost") + struct.pack(">H", 9093) + NO_TAGS])
        + i16(0)
        + i16(1)
        + NO_TAGS  # KRaftVersionFeature's own tagged fields
        + NO_TAGS
    )
    voters = i16(0) + carray([voter]) + NO_TAGS
    assert format_control_record(6, i16(0) + i16(6), voters) == (
        ' KRaftVoters {"version":0,"voters":[{"voterId":1,"voterDirectoryId":"' + U1_TEXT + '","endpoints":'
        '[{"name":"CONTROLLER","host":"localhost","port":9093}],'
        '"kRaftVersionFeature":{"minSupportedVersion":0,"maxSupportedVersion":1}}]}'
    )
    # Kafka 3.3 does not know types 5 and 6
    assert format_control_record(5, i16(0) + i16(5), kraft, R33) == " controlType: UNKNOWN(5)"
    assert format_control_record(7, i16(0) + i16(7), None) == " controlType: UNKNOWN(7)"
    assert format_control_record(2, i16(0) + i16(2), b"") == " controlType: LEADER_CHANGE(2)"


# --------------------------------------------------------------------------------------------------
# __remote_log_metadata


def _tip(name: str = "orders", topic_id: bytes = U1, partition: int = 3) -> bytes:
    return cstr(name) + topic_id + i32(partition) + NO_TAGS


def _segment_body(
    start: int = 0, end: int = 99, epochs=((0, 0), (2, 50)), state: int = 1, custom=None, txn=False
) -> bytes:
    return (
        i64(start)
        + i64(end)
        + i32(1)
        + i64(1700000000999)
        + i64(1700000001000)
        + carray([i32(e) + i64(o) + NO_TAGS for e, o in epochs])
        + i32(4096)
        + cbytes(custom)
        + i8(state)
        + (tags((0, b"\x01")) if txn else NO_TAGS)
    )


SEG_ID = _tip() + U2 + NO_TAGS
SEG_ID_TEXT = f"RemoteLogSegmentId{{topicIdPartition={U1_TEXT}:orders-3, id={U2_TEXT}}}"


def _remote(api_key: int, body: bytes, version: int = 0) -> str:
    return format_remote_log_metadata_record(11, frame(api_key, version, body))


def test_remote_log_segment_metadata() -> None:
    # the leader epochs go through a HashMap (the later of two equal epochs wins) and print as a TreeMap
    text = _remote(0, SEG_ID + _segment_body(epochs=((2, 50), (0, 0), (2, 60)), custom=b"abc", txn=True))
    assert text == (
        f"RemoteLogSegmentMetadata{{remoteLogSegmentId={SEG_ID_TEXT}, startOffset=0, endOffset=99, brokerId=1, "
        "maxTimestampMs=1700000000999, eventTimestampMs=1700000001000, segmentLeaderEpochs={0=0, 2=60}, "
        "segmentSizeInBytes=4096, customMetadata=Optional[CustomMetadata{3 bytes}], state=COPY_SEGMENT_FINISHED, "
        "txnIdxEmpty=true}"
    )
    update = SEG_ID + i32(2) + i64(5) + cbytes(None) + i8(3) + NO_TAGS
    assert _remote(1, update) == (
        f"RemoteLogSegmentMetadataUpdate{{remoteLogSegmentId={SEG_ID_TEXT}, customMetadata=Optional.empty, "
        "state=DELETE_SEGMENT_FINISHED, eventTimestampMs=5, brokerId=2}"
    )
    delete = _tip("a.b", U2, 0) + i32(0) + i64(6) + i8(0) + NO_TAGS
    assert _remote(2, delete) == (
        f"RemotePartitionDeleteMetadata{{topicPartition={U2_TEXT}:a.b-0, state=DELETE_PARTITION_MARKED, "
        "eventTimestampMs=6, brokerId=0}"
    )
    snapshot = U1 + _segment_body(start=-5, end=-9, state=2)  # the snapshot checks no offsets
    assert _remote(3, snapshot) == (
        f"RemoteLogSegmentMetadataSnapshot{{segmentId={U1_TEXT}, startOffset=-5, endOffset=-9, "
        "maxTimestampMs=1700000000999, segmentLeaderEpochs={0=0, 2=50}, segmentSizeInBytes=4096, "
        "customMetadata=Optional.empty, state=DELETE_SEGMENT_STARTED, txnIdxEmpty=false}"
    )


@pytest.mark.parametrize(
    ("api_key", "body", "message"),
    [
        (
            0,
            SEG_ID + _segment_body(start=-1),
            "Unexpected start offset = -1. StartOffset for a remote segment cannot be negative",
        ),
        (
            0,
            SEG_ID + _segment_body(start=10, end=9),
            "Unexpected end offset = 9. EndOffset for a remote segment cannot be less than startOffset = 10",
        ),
        (0, SEG_ID + _segment_body(epochs=()), "segmentLeaderEpochs can not be null or empty"),
        (0, SEG_ID + _segment_body(state=4), "state can not be null"),
        (1, SEG_ID + i32(2) + i64(5) + cbytes(None) + i8(-1) + NO_TAGS, "state can not be null"),
        (2, _tip() + i32(0) + i64(6) + i8(3) + NO_TAGS, "null"),  # Objects.requireNonNull without a message
        (3, U1 + _segment_body(epochs=(), state=9), "state can not be null"),  # the state is checked first
        (3, U1 + _segment_body(epochs=()), "segmentLeaderEpochs can not be null or empty"),
        (2, _tip()[:-3], "Failed to deserialize record with type 2"),
        (2, _tip() + i32(0) + i64(6) + i8(0) + NO_TAGS + b"zz", "Found 2 byte(s) of garbage after 2"),
    ],
)
def test_remote_log_metadata_errors(api_key: int, body: bytes, message: str) -> None:
    text = _remote(api_key, body)
    assert text == f"Error at offset 11, skipping. {message}"
    assert isinstance(text, ErrorText) and not text.fatal and not text.newer


def test_remote_log_metadata_null_and_newer() -> None:
    assert format_remote_log_metadata_record(4, None) == (
        'Error at offset 4, skipping. Cannot invoke "java.nio.ByteBuffer.remaining()" because the return value of '
        '"org.apache.kafka.common.record.Record.value()" is null'
    )
    newer = _remote(4, NO_TAGS)
    assert (
        newer
        == "Error at offset 11, skipping. org.apache.kafka.common.errors.UnsupportedVersionException: Unknown metadata id 4"
    )
    assert isinstance(newer, ErrorText) and newer.newer and "type 4 (version 0) is newer than Kafka 4.0" in newer.newer
    newer_version = _remote(2, _tip() + i32(0) + i64(6) + i8(0) + NO_TAGS, version=1)
    assert newer_version.startswith("RemotePartitionDeleteMetadata{")
    assert isinstance(newer_version, ErrorText) and newer_version.newer


# --------------------------------------------------------------------------------------------------
# __share_group_state


def _share_key(record_type: int, group: str = "g1", partition: int = 0) -> bytes:
    raw = group.encode()
    return i16(record_type) + i16(len(raw)) + raw + U1 + i32(partition)  # not flexible: int16 lengths


def _batch(first: int, last: int, state: int, count: int) -> bytes:
    return i64(first) + i64(last) + i8(state) + i16(count) + NO_TAGS


def test_share_group_state_records() -> None:
    snapshot = (
        i16(0)
        + struct.pack(">H", 65535)
        + i32(2)
        + i32(3)
        + i64(100)
        + carray([_batch(100, 109, 2, 1)])
        + NO_TAGS
    )
    key, payload = format_share_group_state_record(0, _share_key(0), snapshot)
    assert key == '{"type":"0","data":{"groupId":"g1","topicId":"' + U1_TEXT + '","partition":0}}'
    assert payload == (
        '{"type":"0","data":{"snapshotEpoch":65535,"stateEpoch":2,"leaderEpoch":3,"startOffset":100,'
        '"stateBatches":[{"firstOffset":100,"lastOffset":109,"deliveryState":2,"deliveryCount":1}]}}'
    )
    update = i16(0) + struct.pack(">H", 1) + i32(-1) + i64(-1) + carray([]) + NO_TAGS
    key, payload = format_share_group_state_record(1, _share_key(1, "g\u00e9", 7), update)
    assert key == '{"type":"1","data":{"groupId":"g\u00e9","topicId":"' + U1_TEXT + '","partition":7}}'
    assert (
        payload
        == '{"type":"0","data":{"snapshotEpoch":1,"leaderEpoch":-1,"startOffset":-1,"stateBatches":[]}}'
    )
    assert format_share_group_state_record(2, _share_key(1), None) == (
        '{"type":"1","data":{"groupId":"g1","topicId":"' + U1_TEXT + '","partition":0}}',
        "<DELETE>",
    )


def test_share_group_state_errors() -> None:
    key, payload = format_share_group_state_record(3, b"\x00", None)
    assert (key, payload) == ("Error at offset 3, skipping. Could not read version from key's buffer.", None)
    key, payload = format_share_group_state_record(3, _share_key(0)[:-2], None)
    assert (
        key
        == "Error at offset 3, skipping. Could not read record with version 0 from key's buffer due to: null."
    )
    key, payload = format_share_group_state_record(3, _share_key(0), b"\x00")
    assert key == "Error at offset 3, skipping. Could not read version from value's buffer."
    key, payload = format_share_group_state_record(3, _share_key(-1), None)
    assert (key, payload) == ("Unknown record type -1 at offset 3, skipping.", None)
    assert not key.newer
    # newer than 4.0: an unknown record type, or a value version above the highest
    key, payload = format_share_group_state_record(4, _share_key(2), b"")
    assert (key, payload) == ("Unknown record type 2 at offset 4, skipping.", None)
    assert isinstance(key, ErrorText) and key.newer == "share group state record type 2 is newer than Kafka 4.0 knows"
    key, payload = format_share_group_state_record(5, _share_key(0), i16(1) + b"\x00" * 30)
    assert (key, payload) == (
        "Error at offset 5, skipping. Found an unknown record version 1 for 0 type",
        None,
    )
    assert isinstance(key, ErrorText) and key.newer


# --------------------------------------------------------------------------------------------------
# Through the command line: segments written by our writer


def _segment(tmp_path: Path, topic: str, kvs: list[tuple[bytes | None, bytes | None]]) -> Path:
    records = [Record(i, 1700000000000 + i, k, v, ()) for i, (k, v) in enumerate(kvs)]
    w = SegmentWriter(tmp_path / topic, 0)
    w.append(encode_v2_batch(records), len(records) - 1, records[-1].timestamp, len(records) - 1)
    w.close()
    return w.path


def _cli(*args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "KAFKATOOL_KAFKA_RELEASE"}
    return subprocess.run(
        [sys.executable, "-m", "kafkatool", *args], capture_output=True, env=env, timeout=120
    )


def test_cli_remote_log_metadata_decoder(tmp_path: Path) -> None:
    delete = frame(2, 0, _tip() + i32(0) + i64(6) + i8(2) + NO_TAGS)
    log = _segment(tmp_path, "__remote_log_metadata-0", [(None, delete), (None, frame(9, 0, b""))])
    p = _cli("dump-log", "--files", str(log), "--remote-log-metadata-decoder")
    lines = p.stdout.decode().splitlines()
    assert lines[3].endswith(
        f"headerKeys: [] payload: RemotePartitionDeleteMetadata{{topicPartition={U1_TEXT}:orders-3, "
        "state=DELETE_PARTITION_FINISHED, eventTimestampMs=6, brokerId=0}"
    )
    assert lines[4].endswith(
        "payload: Error at offset 1, skipping. org.apache.kafka.common.errors.UnsupportedVersionException: "
        "Unknown metadata id 9"
    )
    assert p.stderr.decode() == (
        f"kafkatool: {log}: offset 1: remote log metadata record type 9 (version 0) is newer than Kafka 4.0 knows\n"
    )
    assert p.returncode == 1
    j = _cli(
        "dump-log", "--files", str(log), "--remote-log-metadata-decoder", "--format", "ndjson", "--records"
    )
    objs = [line for line in j.stdout.decode().splitlines() if '"type":"record"' in line]
    assert '"value_decoded":"RemotePartitionDeleteMetadata{topicPartition=' in objs[0]
    assert '"kind":"newer_record"' in j.stdout.decode() and j.returncode == 1


def test_cli_share_group_state_decoder(tmp_path: Path) -> None:
    snapshot = i16(0) + struct.pack(">H", 0) + i32(0) + i32(0) + i64(5) + carray([]) + NO_TAGS
    log = _segment(tmp_path, "__share_group_state-0", [(_share_key(0), snapshot), (_share_key(1), None)])
    p = _cli("--kafka-release", "4.0", "dump-log", "--files", str(log), "--share-group-state-decoder")
    lines = p.stdout.decode().splitlines()
    assert lines[3].endswith(
        'headerKeys: [] key: {"type":"0","data":{"groupId":"g1","topicId":"' + U1_TEXT + '","partition":0}} '
        'payload: {"type":"0","data":{"snapshotEpoch":0,"stateEpoch":0,"leaderEpoch":0,"startOffset":5,"stateBatches":[]}}'
    )
    assert lines[4].endswith('"partition":0}} payload: <DELETE>')
    assert (p.stderr, p.returncode) == (b"", 0)
    both = _cli("--kafka-release", "4.0", "dump-log", "--files", str(log), "--share-group-state-decoder",
                "--offsets-decoder")
    assert both.returncode == 2 and both.stderr.decode().count("\n") == 1
    keyless = _segment(tmp_path / "x", "__share_group_state-1", [(None, snapshot)])
    p = _cli("--kafka-release", "4.0", "dump-log", "--files", str(keyless), "--share-group-state-decoder")
    assert p.returncode == 1 and p.stderr.decode().startswith("kafkatool: ") and p.stderr.count(b"\n") == 1
    assert b"(message had a missing key)" in p.stderr


def test_cli_kafka_release_33_on_a_40_metadata_log() -> None:
    _require_k4()
    path = str(K4_LOGS / K4_METADATA[1])
    p = _cli("--kafka-release", "3.3", "dump-log", "--files", path, "--cluster-metadata-decoder")
    assert p.returncode == 1 and p.stderr.decode().count("\n") == 1
    assert "newer than Kafka 3.3 knows" in p.stderr.decode()
    p = _cli("--kafka-release", "4.0", "dump-log", "--files", path, "--cluster-metadata-decoder")
    exp = (K4_DUMP / K4_METADATA[1] / "cluster-metadata-decoder.out").read_bytes()
    assert (p.stdout, p.stderr, p.returncode) == (exp.replace(b"<KAFKA_LOGS>", str(K4_LOGS).encode()), b"", 0)


def test_new_decoders_never_raise_on_garbage() -> None:
    """Mutated and truncated records: always text (Kafka's error sentence), never an exception."""
    import random

    rng = random.Random(20251124)
    seeds = [
        frame(
            0,
            3,
            i32(1) + b"\x00" + U1 + i64(9) + carray([]) + carray([]) + cstr(None) + b"\x01\x00" + NO_TAGS,
        ),
        frame(5, 2, i32(4) + U2 + tags((1, i32(3)), (6, int32s(3)), (7, int32s(1, 3)))),
        frame(
            27,
            0,
            i32(1) + U1 + b"\x01" + carray([]) + carray([cstr("f") + i16(0) + i16(1) + NO_TAGS]) + NO_TAGS,
        ),
        frame(0, 0, SEG_ID + _segment_body(custom=b"x", txn=True)),
        frame(3, 0, U1 + _segment_body()),
        _share_key(0),
        i16(0) + struct.pack(">H", 1) + i32(2) + i32(3) + i64(100) + carray([_batch(1, 2, 0, 1)]) + NO_TAGS,
    ]
    for blob in mutations(rng, seeds, 3000):
        other = rng.choice(seeds)
        assert isinstance(format_metadata_record(1, blob), str)
        assert isinstance(format_metadata_record(1, blob, R33), str)
        assert isinstance(format_remote_log_metadata_record(1, blob), str)
        for key, value in ((blob, other), (other, blob), (blob, None)):
            k, v = format_share_group_state_record(1, key, value)
            assert isinstance(k, str) and (v is None or isinstance(v, str))
        assert isinstance(format_control_record(6, i16(0) + i16(rng.randrange(0, 8)), blob), str)
