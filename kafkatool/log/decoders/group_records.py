"""The record specs of the group coordinator (`__consumer_offsets`), every type and version to Kafka 4.0.

Facts from Kafka 4.0's message specs (group-coordinator/src/main/resources/common/message), in the
compact form `_schema` reads: the keys and values of offset commits and classic group metadata, the
consumer-protocol subscription and assignment payloads, and the records of KIP-848 consumer groups
and KIP-932 share groups.  `offsets` decodes and prints with them.
"""

from __future__ import annotations

from kafkatool.log.decoders._schema import (
    ALL,
    EMPTY_STRUCT,
    MAX,
    NULLABLE,
    Field,
    Message,
    Versions,
    field,
    tagged,
)
from kafkatool.log.decoders.coordinator import RecordTypes


def _key(record_type: int, name: str, *fields: Field) -> Message:
    """A key spec: non-flexible, valid at its record type (OffsetCommitKey at types 0 and 1)."""
    return Message(name, (0, 1) if record_type <= 1 else (record_type, record_type), None, fields)


_GROUP_ID = field("groupId", "string")
_MEMBER_ID = field("memberId", "string")
_TOPIC_PARTITIONS = (field("topicId", "uuid"), field("partitions", "[]int32"))
_TOPIC_METADATA = (
    field("topicId", "uuid"),
    field("topicName", "string"),
    field("numPartitions", "int32"),
    field("partitionMetadata", "[]struct", fields=(field("partition", "int32"), field("racks", "[]string"))),
)


def _value(name: str, *fields: Field, valid: tuple[int, int] = (0, 0), flexible: Versions = ALL) -> Message:
    """A value spec (the records of KIP-848 and KIP-932 are flexible from version 0)."""
    return Message(name, valid, flexible, fields)


OFFSET_COMMIT_VALUE = _value(
    "OffsetCommitValue",
    field("offset", "int64"),
    field("leaderEpoch", "int32", (3, MAX), default=-1),
    field("metadata", "string"),
    field("commitTimestamp", "int64"),
    field("expireTimestamp", "int64", (1, 1), default=-1),
    valid=(0, 4),
    flexible=(4, MAX),
)
GROUP_METADATA_VALUE = _value(
    "GroupMetadataValue",
    field("protocolType", "string"),
    field("generation", "int32"),
    field("protocol", "string", **NULLABLE, default=None),
    field("leader", "string", **NULLABLE, default=None),
    field("currentStateTimestamp", "int64", (2, MAX), default=-1),
    field(
        "members",
        "[]struct",
        fields=(
            field("memberId", "string"),
            field("groupInstanceId", "string", (3, MAX), nullable=(3, MAX), default=None),
            field("clientId", "string"),
            field("clientHost", "string"),
            field("rebalanceTimeout", "int32", (1, MAX), default=-1),
            field("sessionTimeout", "int32"),
            field("subscription", "bytes"),
            field("assignment", "bytes"),
        ),
    ),
    valid=(0, 4),
    flexible=(4, MAX),
)
_TOPIC_PARTITION_LIST = (field("topic", "string"), field("partitions", "[]int32"))
#: The consumer protocol's payloads inside a classic group's members (clients/.../common/message).
CONSUMER_PROTOCOL_SUBSCRIPTION = _value(
    "ConsumerProtocolSubscription",
    field("topics", "[]string"),
    field("userData", "bytes", nullable=ALL, default=None, zero_copy=True),
    field("ownedPartitions", "[]struct", (1, MAX), fields=_TOPIC_PARTITION_LIST),
    field("generationId", "int32", (2, MAX), default=-1),
    field("rackId", "string", (3, MAX), nullable=(3, MAX), default=None),
    valid=(0, 3),
    flexible=None,
)
CONSUMER_PROTOCOL_ASSIGNMENT = _value(
    "ConsumerProtocolAssignment",
    field("assignedPartitions", "[]struct", fields=_TOPIC_PARTITION_LIST),
    field("userData", "bytes", nullable=ALL, default=None, zero_copy=True),
    valid=(0, 3),
    flexible=None,
)

#: record type -> (key spec, value spec), as GroupCoordinatorRecordSerde maps them in Kafka 4.0.
_GROUP_RECORDS: dict[int, tuple[Message, Message]] = {
    0: (
        _key(0, "OffsetCommitKey", field("group", "string"), field("topic", "string"), field("partition", "int32")),
        OFFSET_COMMIT_VALUE,
    ),
    2: (_key(2, "GroupMetadataKey", field("group", "string")), GROUP_METADATA_VALUE),
    3: (_key(3, "ConsumerGroupMetadataKey", _GROUP_ID), _value("ConsumerGroupMetadataValue", field("epoch", "int32"))),
    4: (
        _key(4, "ConsumerGroupPartitionMetadataKey", _GROUP_ID),
        _value("ConsumerGroupPartitionMetadataValue", field("topics", "[]struct", fields=_TOPIC_METADATA)),
    ),
    5: (
        _key(5, "ConsumerGroupMemberMetadataKey", _GROUP_ID, _MEMBER_ID),
        _value(
            "ConsumerGroupMemberMetadataValue",
            field("instanceId", "string", **NULLABLE, default=""),
            field("rackId", "string", **NULLABLE, default=""),
            field("clientId", "string"),
            field("clientHost", "string"),
            field("subscribedTopicNames", "[]string"),
            field("subscribedTopicRegex", "string", **NULLABLE, default=""),
            field("rebalanceTimeoutMs", "int32", default=-1),
            field("serverAssignor", "string", **NULLABLE, default=""),
            tagged(
                "classicMemberMetadata",
                "struct",
                0,
                nullable=ALL,
                default=EMPTY_STRUCT,  # the spec's `"default": null` is JSON null: no default
                fields=(
                    field("sessionTimeoutMs", "int32"),
                    field(
                        "supportedProtocols",
                        "[]struct",
                        fields=(field("name", "string"), field("metadata", "bytes")),
                    ),
                ),
            ),
        ),
    ),
    6: (
        _key(6, "ConsumerGroupTargetAssignmentMetadataKey", _GROUP_ID),
        _value("ConsumerGroupTargetAssignmentMetadataValue", field("assignmentEpoch", "int32")),
    ),
    7: (
        _key(7, "ConsumerGroupTargetAssignmentMemberKey", _GROUP_ID, _MEMBER_ID),
        _value(
            "ConsumerGroupTargetAssignmentMemberValue",
            field("topicPartitions", "[]struct", fields=_TOPIC_PARTITIONS),
        ),
    ),
    8: (
        _key(8, "ConsumerGroupCurrentMemberAssignmentKey", _GROUP_ID, _MEMBER_ID),
        _value(
            "ConsumerGroupCurrentMemberAssignmentValue",
            field("memberEpoch", "int32"),
            field("previousMemberEpoch", "int32"),
            field("state", "int8"),
            field("assignedPartitions", "[]struct", fields=_TOPIC_PARTITIONS),
            field("partitionsPendingRevocation", "[]struct", fields=_TOPIC_PARTITIONS),
        ),
    ),
    9: (
        _key(9, "ShareGroupPartitionMetadataKey", _GROUP_ID),
        _value("ShareGroupPartitionMetadataValue", field("topics", "[]struct", fields=_TOPIC_METADATA)),
    ),
    10: (
        _key(10, "ShareGroupMemberMetadataKey", _GROUP_ID, _MEMBER_ID),
        _value(
            "ShareGroupMemberMetadataValue",
            field("rackId", "string", **NULLABLE, default=""),
            field("clientId", "string"),
            field("clientHost", "string"),
            field("subscribedTopicNames", "[]string"),
        ),
    ),
    11: (_key(11, "ShareGroupMetadataKey", _GROUP_ID), _value("ShareGroupMetadataValue", field("epoch", "int32"))),
    12: (
        _key(12, "ShareGroupTargetAssignmentMetadataKey", _GROUP_ID),
        _value("ShareGroupTargetAssignmentMetadataValue", field("assignmentEpoch", "int32")),
    ),
    13: (
        _key(13, "ShareGroupTargetAssignmentMemberKey", _GROUP_ID, _MEMBER_ID),
        _value("ShareGroupTargetAssignmentMemberValue", field("topicPartitions", "[]struct", fields=_TOPIC_PARTITIONS)),
    ),
    14: (
        _key(14, "ShareGroupCurrentMemberAssignmentKey", _GROUP_ID, _MEMBER_ID),
        _value(
            "ShareGroupCurrentMemberAssignmentValue",
            field("memberEpoch", "int32"),
            field("previousMemberEpoch", "int32"),
            field("state", "int8"),
            field("assignedPartitions", "[]struct", fields=_TOPIC_PARTITIONS),
        ),
    ),
    15: (
        _key(15, "ShareGroupStatePartitionMetadataKey", _GROUP_ID),
        _value(
            "ShareGroupStatePartitionMetadataValue",
            field(
                "initializedTopics",
                "[]struct",
                fields=(field("topicId", "uuid"), field("topicName", "string"), field("partitions", "[]int32")),
            ),
            field("deletingTopics", "[]struct", fields=(field("topicId", "uuid"), field("topicName", "string"))),
        ),
    ),
    16: (
        _key(16, "ConsumerGroupRegularExpressionKey", _GROUP_ID, field("regularExpression", "string")),
        _value(
            "ConsumerGroupRegularExpressionValue",
            field("topics", "[]string"),
            field("version", "int64"),
            field("timestamp", "int64"),
        ),
    ),
}
_GROUP_RECORDS[1] = _GROUP_RECORDS[0]

#: The record types of `__consumer_offsets` in Kafka 4.0, keys valid at their own type.
GROUP_RECORD_TYPES = RecordTypes(
    "offsets",
    keys={t: k for t, (k, _) in sorted(_GROUP_RECORDS.items())},
    values={t: v for t, (_, v) in sorted(_GROUP_RECORDS.items())},
    known_by="4.0",
)
