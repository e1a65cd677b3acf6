"""`__consumer_offsets` keys and values: structured decoders and Kafka's dump-log text (3.3.1's, 4.0's).

`format_offsets_record` reproduces `kafka-dump-log.sh --offsets-decoder` of Kafka 3.3.1
(`GroupMetadataManager.formatRecordKeyAndValue`).  Beyond the wire formats that means replaying what
the broker does when it loads a group, because the tool prints a loaded `GroupMetadata`: members in
the iteration order of the Scala `mutable.HashMap` that holds them, the broker's own sanity checks
(whose failures abort the tool), and the consumer-protocol parsing of each assignment.

With `kafka4=True` it reproduces Kafka 4.0's instead (`DumpLogSegments.OffsetsMessageParser`): every
record as the JSON of its generated converter, framed by `coordinator`, from the specs of all the
group coordinator's record types declared at the end of this module (a classic consumer group's
member subscriptions and assignments parsed into their consumer-protocol JSON).

Wire formats (all big-endian; every key starts with an int16 record type, every value with an int16
version; values are flexible from v4 on, the records of types 3+ from v0):

* key type 0/1 -> offset commit: group string, topic string, partition int32
* key type 2   -> group metadata: group string
* key types 3-8, 16 -> the consumer groups of KIP-848; 9-15 -> the share groups of KIP-932 (Kafka 4.0)
* offset commit value v0-v4: offset int64, [v3+ leaderEpoch int32], metadata string,
  commitTimestamp int64, [v1 only expireTimestamp int64]
* group metadata value v0-v4: protocolType string, generation int32, protocol string?, leader string?,
  [v2+ currentStateTimestamp int64], members: [memberId, [v3+ groupInstanceId?], clientId, clientHost,
  [v1+ rebalanceTimeout int32], sessionTimeout int32, subscription bytes, assignment bytes]

Kafka 3.3's text is also given for the v4 values (the same fields); records of types 3+ have none.
"""

from __future__ import annotations

import dataclasses
import struct
from dataclasses import dataclass
from typing import Any

from kafkatool.jvm.hashing import string_hash
from kafkatool.jvm.scala_collections import ScalaHashTable
from kafkatool.log.decoders._schema import (
    Message,
    RawJson,
)
from kafkatool.log.decoders._spec_tables import coordinator_types, first_release_knowing
from kafkatool.log.decoders._wire import (
    BufferUnderflow,
    DecodeError,
    ErrorText,
    NewerThanKnown,
    Reader,
    json_str,
)
from kafkatool.log.decoders.coordinator import RecordTypes, format_coordinator_record
from kafkatool.log.decoders.group_records import (
    CONSUMER_PROTOCOL_ASSIGNMENT,
    CONSUMER_PROTOCOL_SUBSCRIPTION,
    GROUP_METADATA_VALUE,
    GROUP_RECORD_TYPES,
    OFFSET_COMMIT_VALUE,
)
from kafkatool.release import Release

__all__ = [
    "ConsumerAssignment",
    "ConsumerSubscription",
    "GroupMember",
    "GroupMetadataKey",
    "GroupMetadataValue",
    "OffsetCommitKey",
    "OffsetCommitValue",
    "UnknownKey",
    "decode_consumer_assignment",
    "decode_consumer_subscription",
    "decode_group_metadata_value",
    "decode_offset_commit_value",
    "decode_offsets_key",
    "format_offsets_record",
]

CONSUMER_PROTOCOL_TYPE = "consumer"
_ISE = "java.lang.IllegalStateException"
_SCHEMA = "org.apache.kafka.common.protocol.types.SchemaException"


@dataclass(frozen=True, slots=True)
class OffsetCommitKey:
    """Key of a committed offset (key versions 0 and 1)."""

    version: int
    group: str
    topic: str
    partition: int


@dataclass(frozen=True, slots=True)
class GroupMetadataKey:
    """Key of a group's metadata (key version 2)."""

    version: int
    group: str


@dataclass(frozen=True, slots=True)
class UnknownKey:
    """A key whose version Kafka 3.3.1 does not know; `raw` is the whole key."""

    version: int
    raw: bytes


@dataclass(frozen=True, slots=True)
class OffsetCommitValue:
    """A committed offset.  `leader_epoch`/`expire_timestamp` are -1 where the version lacks them."""

    version: int
    offset: int
    leader_epoch: int
    metadata: str
    commit_timestamp: int
    expire_timestamp: int


@dataclass(frozen=True, slots=True)
class ConsumerSubscription:
    """A consumer-protocol subscription (`ConsumerProtocolSubscription`)."""

    version: int
    topics: list[str]
    user_data: bytes | None
    owned_partitions: list[tuple[str, int]]


@dataclass(frozen=True, slots=True)
class ConsumerAssignment:
    """A consumer-protocol assignment (`ConsumerProtocolAssignment`), partitions flattened in wire order."""

    version: int
    partitions: list[tuple[str, int]]
    user_data: bytes | None


@dataclass(slots=True)
class GroupMember:
    """One member as stored in a group metadata value.

    `rebalance_timeout` is the value the broker uses: the session timeout for value version 0, which
    has no field of its own.  `subscription_decoded`/`assignment_decoded` are filled for groups of
    protocol type "consumer" when the bytes parse; otherwise they stay None.
    """

    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    rebalance_timeout: int
    session_timeout: int
    subscription: bytes
    assignment: bytes
    subscription_decoded: ConsumerSubscription | None = None
    assignment_decoded: ConsumerAssignment | None = None


@dataclass(slots=True)
class GroupMetadataValue:
    """A group's metadata; `members` in wire order.  `current_state_timestamp` is -1 before v2."""

    version: int
    protocol_type: str
    generation: int
    protocol: str | None
    leader: str | None
    current_state_timestamp: int
    members: list[GroupMember] = dataclasses.field(default_factory=list)


# --------------------------------------------------------------------------------------------------
# Structured decoders


def decode_offsets_key(key: bytes) -> OffsetCommitKey | GroupMetadataKey | UnknownKey:
    """Decode a `__consumer_offsets` key.  Raises DecodeError on truncated or malformed bytes."""
    r = Reader(key)
    version = r.int16()
    if 0 <= version <= 1:
        group = r.legacy_string("group")
        topic = r.legacy_string("topic")
        return OffsetCommitKey(version, group, topic, r.int32())
    if version == 2:
        return GroupMetadataKey(version, r.legacy_string("group"))
    return UnknownKey(version, bytes(key))


def decode_offset_commit_value(value: bytes) -> OffsetCommitValue:
    """Decode an offset commit value.  Raises DecodeError with Kafka's message for unknown versions."""
    r = Reader(value)
    version = r.int16()
    _check_version(OFFSET_COMMIT_VALUE, version, f"Unknown offset message version: {version}")
    if version > 3:  # flexible
        d = OFFSET_COMMIT_VALUE.read(r, version)
        return OffsetCommitValue(
            version, d["offset"], d["leaderEpoch"], d["metadata"], d["commitTimestamp"], d["expireTimestamp"]
        )
    offset = r.int64()
    leader_epoch = r.int32() if version >= 3 else -1
    metadata = r.legacy_string("metadata")
    commit_timestamp = r.int64()
    expire_timestamp = r.int64() if version == 1 else -1
    return OffsetCommitValue(version, offset, leader_epoch, metadata, commit_timestamp, expire_timestamp)


def decode_group_metadata_value(value: bytes) -> GroupMetadataValue:
    """Decode a group metadata value, plus the consumer-protocol payloads of "consumer" groups.

    Raises DecodeError with Kafka's message for unknown versions and malformed framing; member
    subscriptions/assignments that do not parse are left undecoded rather than failing the value.
    """
    group = _read_group_value(value)
    if group.protocol_type == CONSUMER_PROTOCOL_TYPE:
        for m in group.members:
            try:
                buf = Reader(m.subscription)
                m.subscription_decoded = decode_consumer_subscription(buf, _protocol_version(buf))
            except DecodeError:
                pass
            try:
                buf = Reader(m.assignment)
                m.assignment_decoded = decode_consumer_assignment(buf, _protocol_version(buf))
            except DecodeError:
                pass
    return group


def _check_version(spec: Message, version: int, message: str) -> None:
    """Kafka 3.3's check of a value version (with its message), over the versions Kafka 4.0 writes."""
    if version > spec.valid[1]:
        raise NewerThanKnown(message, _ISE, what=f"{spec.name} version {version}")
    if version < 0:
        raise DecodeError(message, _ISE)


def _read_group_value(value: bytes) -> GroupMetadataValue:
    r = Reader(value)
    version = r.int16()
    _check_version(GROUP_METADATA_VALUE, version, f"Unknown group metadata message version: {version}")
    if version > 3:  # flexible
        d = GROUP_METADATA_VALUE.read(r, version)
        members = [
            GroupMember(
                m["memberId"],
                m["groupInstanceId"],
                m["clientId"],
                m["clientHost"],
                m["rebalanceTimeout"],
                m["sessionTimeout"],
                m["subscription"],
                m["assignment"],
            )
            for m in d["members"]
        ]
        return GroupMetadataValue(
            version, d["protocolType"], d["generation"], d["protocol"], d["leader"], d["currentStateTimestamp"],
            members,
        )
    protocol_type = r.legacy_string("protocolType")
    generation = r.int32()
    protocol = r.legacy_string_or_null("protocol")
    leader = r.legacy_string_or_null("leader")
    current_state_timestamp = r.int64() if version >= 2 else -1
    count = r.array_length(r.int32(), "members")
    members = []
    for _ in range(count):
        member_id = r.legacy_string("memberId")
        instance_id = r.legacy_string_or_null("groupInstanceId") if version >= 3 else None
        client_id = r.legacy_string("clientId")
        client_host = r.legacy_string("clientHost")
        rebalance_timeout = r.int32() if version >= 1 else 0
        session_timeout = r.int32()
        subscription = r.legacy_bytes("subscription")
        assignment = r.legacy_bytes("assignment")
        if version == 0:
            rebalance_timeout = session_timeout
        members.append(
            GroupMember(
                member_id,
                instance_id,
                client_id,
                client_host,
                rebalance_timeout,
                session_timeout,
                subscription,
                assignment,
            )
        )
    return GroupMetadataValue(
        version, protocol_type, generation, protocol, leader, current_state_timestamp, members
    )


def _protocol_version(r: Reader) -> int:
    """`ConsumerProtocol.deserializeVersion`."""
    try:
        return r.int16()
    except BufferUnderflow:
        raise DecodeError("Buffer underflow while parsing consumer protocol's header", _SCHEMA) from None


def decode_consumer_subscription(r: Reader, version: int) -> ConsumerSubscription:
    """`ConsumerProtocol.deserializeSubscription`: newer versions parse as the newest known (1)."""
    if version < 0:
        raise DecodeError(f"Unsupported subscription version: {version}", _SCHEMA)
    version = min(version, 1)
    try:
        count = r.array_length(r.int32(), "topics")
        topics = [r.legacy_string("topics element") for _ in range(count)]
        user_data = r.legacy_bytes_or_null("userData", zero_copy=True)
        owned: list[tuple[str, int]] = []
        if version >= 1:
            for topic, partitions in _topic_partitions(r, "ownedPartitions"):
                owned.extend((topic, p) for p in partitions)
    except BufferUnderflow:
        raise DecodeError(
            "Buffer underflow while parsing consumer protocol's subscription", _SCHEMA
        ) from None
    return ConsumerSubscription(version, topics, user_data, owned)


def decode_consumer_assignment(r: Reader, version: int) -> ConsumerAssignment:
    """`ConsumerProtocol.deserializeAssignment`: newer versions parse as the newest known (1)."""
    if version < 0:
        raise DecodeError(f"Unsupported assignment version: {version}", _SCHEMA)
    version = min(version, 1)
    try:
        partitions: list[tuple[str, int]] = []
        for topic, ids in _topic_partitions(r, "assignedPartitions"):
            partitions.extend((topic, p) for p in ids)
        user_data = r.legacy_bytes_or_null("userData", zero_copy=True)
    except BufferUnderflow:
        raise DecodeError("Buffer underflow while parsing consumer protocol's assignment", _SCHEMA) from None
    return ConsumerAssignment(version, partitions, user_data)


def _topic_partitions(r: Reader, name: str) -> list[tuple[str, list[int]]]:
    count = r.array_length(r.int32(), name)
    out = []
    for _ in range(count):
        topic = r.legacy_string("topic")
        n = r.array_length(r.int32(), "partitions")
        out.append((topic, r.int32_list(n)))
    return out


# --------------------------------------------------------------------------------------------------
# Kafka 3.3.1 dump-log text


def format_offsets_record(
    offset: int, key: bytes | None, value: bytes | None, *, kafka4: bool = False, rel: Release | None = None
) -> tuple[str | None, str | None]:
    """(key_text, payload_text) exactly as the OffsetsMessageParser of Kafka 3.3.1 (or 4.0) prints them;
    None = not printed.

    Kafka 4.0 prints JSON (see `coordinator`) and skips what it cannot read with a line in place of
    the key (an `ErrorText` with `fatal=False`).  Where Kafka 3.3's parser throws (the tool then
    dies with a stack trace), the result is `(None, ErrorText)` with `fatal=True` and the text of the
    Java exception; 3.3's text is given for the versions 4.0 added to its two record types, and a
    record of a type 3.3 does not have is such an error too.
    """
    if kafka4 and key is not None:
        types = coordinator_types("group", rel) if rel is not None else None
        fast = _fast_offset_commit(key, value, kafka4=True)
        if fast is not None and types is not None and key[:2] == b"\x00\x00" and value and value[:2] != b"\x00\x00":
            fast = None  # 4.1 on, type 0 is LegacyOffsetCommitValue: version 0 only
        return fast or _format_json(offset, key, value, types)
    try:
        return _format(key, value)
    except DecodeError as err:
        return None, ErrorText.from_error(err)
    except (ValueError, IndexError, OverflowError, MemoryError) as err:  # defensive: never escape
        return None, ErrorText(
            f"java.lang.RuntimeException: undecodable record: {err}",
            java_class="java.lang.RuntimeException",
            message=f"undecodable record: {err}",
            fatal=True,
        )


_H = struct.Struct(">h").unpack_from
_HQ = struct.Struct(">hq").unpack_from
_I = struct.Struct(">i").unpack_from
_Q = struct.Struct(">q").unpack_from

_NO_VALUE = (-1, 0, -1, "", -1, -1)


def _fast_commit_fields(
    key: bytes, value: bytes | None
) -> tuple[int, str, str, int, tuple[int, int, int, str, int, int]] | None:
    """The common case, a well-formed offset commit (key v0/v1, value v0-v3 or none), without the
    general reader: (key version, group, topic, partition, (value version, offset, leader epoch,
    metadata, commit timestamp, expire timestamp)); None for anything else."""
    try:
        version = _H(key, 0)[0]
        glen = _H(key, 2)[0]
        if not 0 <= version <= 1 or glen < 0:
            return None
        p = 4 + glen
        tlen = _H(key, p)[0]
        if tlen < 0 or p + 2 + tlen + 4 > len(key):
            return None
        group = key[4:p].decode("utf-8")
        topic = key[p + 2 : p + 2 + tlen].decode("utf-8")
        partition = _I(key, p + 2 + tlen)[0]
        if value is None:
            return version, group, topic, partition, _NO_VALUE
        vversion, offset = _HQ(value, 0)
        if not 0 <= vversion <= 3:
            return None
        p = 14 if vversion >= 3 else 10
        mlen = _H(value, p)[0]
        if mlen < 0 or p + 2 + mlen + (16 if vversion == 1 else 8) > len(value):
            return None
        metadata = value[p + 2 : p + 2 + mlen].decode("utf-8") if mlen else ""
        epoch = _I(value, 10)[0] if vversion >= 3 else -1
        p += 2 + mlen
        commit = _Q(value, p)[0]
        expire = _Q(value, p + 8)[0] if vversion == 1 else -1
    except (struct.error, UnicodeDecodeError):
        return None
    return version, group, topic, partition, (vversion, offset, epoch, metadata, commit, expire)


def _fast_offset_commit(key: bytes, value: bytes | None, kafka4: bool = False) -> tuple[str, str] | None:
    """The text of the common case (see `_fast_commit_fields`): Kafka 3.3's, or with `kafka4` Kafka
    4.0's JSON, what the generated converters give, without them."""
    fields = _fast_commit_fields(key, value)
    if fields is None:
        return None
    version, group, topic, partition, (vversion, offset, epoch, metadata, commit, expire) = fields
    if kafka4:
        key_text = f'{{"type":"{version}","data":{{"group":{json_str(group)},"topic":{json_str(topic)},"partition":{partition}}}}}'
    else:
        key_text = f"offset_commit::group={group},partition={topic}-{partition}"
    if vversion < 0:
        return key_text, "<DELETE>"
    if not kafka4:
        return key_text, (f"offset={offset},metadata={metadata}" if metadata else f"offset={offset}")
    epoch_text = f'"leaderEpoch":{epoch},' if vversion >= 3 else ""
    expire_text = f',"expireTimestamp":{expire}' if vversion == 1 else ""
    return key_text, (
        f'{{"version":"{vversion}","data":{{"offset":{offset},{epoch_text}"metadata":{json_str(metadata)},'
        f'"commitTimestamp":{commit}{expire_text}}}}}'
    )


def _format(key: bytes | None, value: bytes | None) -> tuple[str, str]:
    if key is not None:
        fast = _fast_offset_commit(key, value)
        if fast is not None:
            return fast
    if key is None:
        raise DecodeError(
            "Failed to decode message using offset topic decoder (message had a missing key)",
            "org.apache.kafka.common.KafkaException",
        )
    k = decode_offsets_key(key)
    if isinstance(k, OffsetCommitKey):
        key_text = f"offset_commit::group={k.group},partition={k.topic}-{k.partition}"
        if value is None:
            return key_text, "<DELETE>"
        v = decode_offset_commit_value(value)
        if v.metadata:
            return key_text, f"offset={v.offset},metadata={v.metadata}"
        return key_text, f"offset={v.offset}"
    if isinstance(k, GroupMetadataKey):
        key_text = f"group_metadata::group={k.group}"
        if value is None:
            return key_text, "<DELETE>"
        return key_text, _format_group(k.group, _read_group_value(value))
    message = f"Unknown group metadata message version: {k.version}"
    spec = GROUP_RECORD_TYPES.keys.get(k.version)
    if spec is not None and k.version > 2:
        what = f"{spec.name} (offsets record type {k.version})"
        raise NewerThanKnown(message, _ISE, what=what, known_by="3.3", hint="; --kafka-release 4.0 decodes it")
    if k.version > 2:
        later = first_release_knowing("group", k.version)
        what = f"offsets record type {k.version}"
        if later is not None:
            spec = coordinator_types("group", later).keys[k.version]  # type: ignore[union-attr]
            what = f"{spec.name} ({what})"
        hint = f"; --kafka-release {later} decodes it" if later is not None else ""
        raise NewerThanKnown(message, _ISE, what=what, known_by="3.3", hint=hint)
    raise DecodeError(message, _ISE)


def _format_group(group_id: str, g: GroupMetadataValue) -> str:
    """Replay `GroupMetadata.loadGroup` + `parseGroupMetadata` for one value."""
    members = ScalaHashTable()
    if g.members:
        static_members: set[str] = set()
        adds = 0
        for added in g.members:
            instance_id = added.group_instance_id
            if instance_id is not None:
                if instance_id in static_members:
                    raise DecodeError(
                        f"Static member with groupInstanceId={instance_id} cannot be added to "
                        f"group {group_id} since it is already a member",
                        _ISE,
                    )
                static_members.add(instance_id)
            # The broker asserts every member supports the protocol all earlier members support:
            # its per-protocol count equals the member count only while no member id repeated.
            if adds != members.size:
                raise DecodeError("assertion failed", "java.lang.AssertionError")
            members.put(added.member_id, string_hash(added.member_id), added)
            adds += 1
    loaded: list[GroupMember] = members.values()
    if loaded and g.protocol_type == CONSUMER_PROTOCOL_TYPE and g.protocol is not None:
        _check_subscriptions(loaded)

    parts = []
    for m in loaded:
        if g.protocol_type == CONSUMER_PROTOCOL_TYPE:
            buf = Reader(m.assignment)
            a = decode_consumer_assignment(buf, _protocol_version(buf))
            tps = "[" + ", ".join(f"{t}-{p}" for t, p in a.partitions) + "]"
            user_data = _java_hex(a.user_data) if a.user_data is not None else ""
            parts.append(f"{m.member_id}={tps}:{user_data}" if user_data else f"{m.member_id}={tps}")
        else:
            parts.append(f"{m.member_id}={_java_hex(m.assignment)}")
    assignment = "{" + ",".join(parts) + "}"
    return (
        f'{{"protocolType":{json_str(g.protocol_type)},"protocol":{json_str(g.protocol)},'
        f'"generationId":{g.generation},"assignment":{json_str(assignment)}}}'
    )


def _check_subscriptions(members: list[GroupMember]) -> None:
    """`computeSubscribedTopics`: schema errors are logged and ignored, anything else escapes."""
    for m in members:
        try:
            buf = Reader(m.subscription)
            _protocol_version(buf)
            decode_consumer_subscription(buf, 0)
        except DecodeError as err:
            if err.java_class == _SCHEMA:
                return
            raise


def _java_hex(raw: bytes) -> str:
    """Scala's `"%X".format(BigInt(1, bytes))`: upper-case hex without leading zeros, "" when empty."""
    return format(int.from_bytes(raw, "big"), "X") if raw else ""


def _group_metadata_json(spec: Message, data: dict[str, Any], version: int) -> str:
    """`prepareGroupMetadataValue`: a consumer group's member subscriptions and assignments as the JSON
    of their consumer-protocol messages (read at the version their bytes start with), where they parse."""
    if data["protocolType"] == CONSUMER_PROTOCOL_TYPE:
        members = []
        for m in data["members"]:
            m = dict(m)
            for name, payload_spec in (
                ("subscription", CONSUMER_PROTOCOL_SUBSCRIPTION),
                ("assignment", CONSUMER_PROTOCOL_ASSIGNMENT),
            ):
                try:
                    r = Reader(m[name])
                    payload_version = r.int16()
                    m[name] = RawJson(payload_spec.to_json(payload_spec.read(r, payload_version), payload_version))
                except DecodeError:
                    pass  # Kafka swallows the RuntimeException and keeps the bytes
            members.append(m)
        data = {**data, "members": members}
    return spec.to_json(data, version)


def _format_json(
    offset: int, key: bytes, value: bytes | None, types: RecordTypes | None = None
) -> tuple[str, str | None]:
    """Kafka 4.x's JSON of a record (4.0's hand tables, or a later release's spec tables)."""
    return format_coordinator_record(types or GROUP_RECORD_TYPES, offset, key, value, {2: _group_metadata_json})
