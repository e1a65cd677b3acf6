"""Kafka's own exception names and messages for the error codes the KRaft-era tools print.

Kafka's tools print `Throwable.toString()` / `getMessage()` of the Java client's exceptions, whose
text comes from `org.apache.kafka.common.protocol.Errors` (4.0), not from kafka-python's descriptions.
"""

from __future__ import annotations

#: error code -> (exception class in org.apache.kafka.common.errors, Errors' default message)
JAVA_ERRORS: dict[int, tuple[str, str]] = {
    -1: ("UnknownServerException", "The server experienced an unexpected error when processing the request."),
    1: (
        "OffsetOutOfRangeException",
        "The requested offset is not within the range of offsets maintained by the server.",
    ),
    3: ("UnknownTopicOrPartitionException", "This server does not host this topic-partition."),
    5: (
        "LeaderNotAvailableException",
        "There is no leader for this topic-partition as we are in the middle of a leadership election.",
    ),
    6: (
        "NotLeaderOrFollowerException",
        "For requests intended only for the leader, this error indicates that the broker is not the current leader. "
        "For requests intended for any replica, this error indicates that the broker is not a replica of the topic "
        "partition.",
    ),
    7: ("TimeoutException", "The request timed out."),
    15: ("CoordinatorNotAvailableException", "The coordinator is not available."),
    16: ("NotCoordinatorException", "This is not the correct coordinator."),
    29: ("TopicAuthorizationException", "Topic authorization failed."),
    31: ("ClusterAuthorizationException", "Cluster authorization failed."),
    35: ("UnsupportedVersionException", "The version of API is not supported."),
    41: ("NotControllerException", "This is not the correct controller for this cluster."),
    44: ("PolicyViolationException", "Request parameters do not satisfy the configured policy."),
    47: ("InvalidProducerEpochException", "Producer attempted to produce with an old epoch."),
    48: ("InvalidTxnStateException", "The producer attempted a transactional operation in an invalid state."),
    52: (
        "TransactionCoordinatorFencedException",
        "Indicates that the transaction coordinator sending a WriteTxnMarker is no longer the current coordinator "
        "for a given producer.",
    ),
    56: ("KafkaStorageException", "Disk error when trying to access log file on the disk."),
    105: ("TransactionalIdNotFoundException", "The transactionalId could not be found."),
}

#: Errors' enum names of the codes above (the admin client logs them)
ERROR_NAMES: dict[int, str] = {
    -1: "UNKNOWN_SERVER_ERROR",
    1: "OFFSET_OUT_OF_RANGE",
    3: "UNKNOWN_TOPIC_OR_PARTITION",
    5: "LEADER_NOT_AVAILABLE",
    6: "NOT_LEADER_OR_FOLLOWER",
    7: "REQUEST_TIMED_OUT",
    15: "COORDINATOR_NOT_AVAILABLE",
    16: "NOT_COORDINATOR",
    29: "TOPIC_AUTHORIZATION_FAILED",
    31: "CLUSTER_AUTHORIZATION_FAILED",
    35: "UNSUPPORTED_VERSION",
    41: "NOT_CONTROLLER",
    44: "POLICY_VIOLATION",
    47: "INVALID_PRODUCER_EPOCH",
    48: "INVALID_TXN_STATE",
    52: "TRANSACTION_COORDINATOR_FENCED",
    56: "KAFKA_STORAGE_ERROR",
    105: "TRANSACTIONAL_ID_NOT_FOUND",
}


def java_message(code: int, message: str | None = None) -> str:
    """`getMessage()` of the exception for `code` (the broker's message when it sent one)."""
    if message:
        return message
    if code in JAVA_ERRORS:
        return JAVA_ERRORS[code][1]
    from kafka.errors import for_code

    return str(getattr(for_code(code), "description", "") or f"error code {code}")


def java_to_string(code: int, message: str | None = None) -> str:
    """`Throwable.toString()`: the class's full name, ": ", the message."""
    if code in JAVA_ERRORS:
        name = JAVA_ERRORS[code][0]
    else:
        from kafka.errors import for_code

        name = for_code(code).__name__.removesuffix("Error") + "Exception"
    return f"org.apache.kafka.common.errors.{name}: {java_message(code, message)}"


def error_name(code: int) -> str:
    if code in ERROR_NAMES:
        return ERROR_NAMES[code]
    import re

    from kafka.errors import for_code

    return re.sub(r"(?<!^)(?=[A-Z])", "_", for_code(code).__name__.removesuffix("Error")).upper()
