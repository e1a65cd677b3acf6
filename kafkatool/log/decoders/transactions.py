"""`__transaction_state` keys and values: structured decoders and Kafka 3.3.1's dump-log text.

`format_transaction_record` reproduces `kafka-dump-log.sh --transaction-log-decoder` of Kafka 3.3.1
(`TransactionLog.formatRecordKeyAndValue`).  The tool prints a loaded `TransactionMetadata`, whose
partitions live in a Scala `mutable.HashSet`, so they come out in that set's bucket order; and
partitions of an `Empty` transaction are never loaded, so they print as `[]`.

Wire formats (big-endian, non-flexible, an int16 version first):

* key v0: transactionalId string
* value v0: producerId int64, producerEpoch int16, transactionTimeoutMs int32, transactionStatus int8,
  transactionPartitions [topic string, partitionIds [int32]]? (null allowed),
  transactionLastUpdateTimestampMs int64, transactionStartTimestampMs int64
"""

from __future__ import annotations

from dataclasses import dataclass

from kafkatool.log.decoders._wire import (
    DecodeError,
    ErrorText,
    Reader,
    ScalaHashTable,
    java_string_hash,
)

__all__ = [
    "TRANSACTION_STATES",
    "TransactionKey",
    "TransactionValue",
    "decode_transaction_key",
    "decode_transaction_value",
    "format_transaction_record",
]

_ISE = "java.lang.IllegalStateException"

#: Transaction state ids and the names Kafka prints for them.
TRANSACTION_STATES: dict[int, str] = {
    0: "Empty",
    1: "Ongoing",
    2: "PrepareCommit",
    3: "PrepareAbort",
    4: "CompleteCommit",
    5: "CompleteAbort",
    6: "Dead",
    7: "PrepareEpochFence",
}


@dataclass(frozen=True, slots=True)
class TransactionKey:
    """A `__transaction_state` key."""

    version: int
    transactional_id: str


@dataclass(frozen=True, slots=True)
class TransactionValue:
    """A transaction's metadata as stored, partitions in wire order (None when stored as null)."""

    version: int
    producer_id: int
    producer_epoch: int
    transaction_timeout_ms: int
    state_id: int
    partitions: list[tuple[str, list[int]]] | None
    last_update_timestamp: int
    start_timestamp: int

    @property
    def state(self) -> str:
        """Kafka's name for the state, or `Unknown(<id>)` for ids Kafka 3.3.1 rejects."""
        return TRANSACTION_STATES.get(self.state_id, f"Unknown({self.state_id})")


def decode_transaction_key(key: bytes) -> TransactionKey:
    """Decode a key.  Raises DecodeError (Kafka's message) on unknown versions or malformed bytes."""
    r = Reader(key)
    version = r.int16()
    if version != 0:
        raise DecodeError(f"Unknown version {version} from the transaction log message", _ISE)
    return TransactionKey(version, r.legacy_string("transactionalId"))


def decode_transaction_value(value: bytes) -> TransactionValue:
    """Decode a value.  Raises DecodeError (Kafka's message) on unknown versions or malformed bytes.

    Unknown state ids are kept (see `TransactionValue.state`); only the dump-log text fails on them,
    as Kafka does.
    """
    r = Reader(value)
    version = r.int16()
    if version != 0:
        raise DecodeError(f"Unknown version {version} from the transaction log message value", _ISE)
    producer_id = r.int64()
    producer_epoch = r.int16()
    timeout = r.int32()
    status = r.int8()
    count = r.array_length_or_null(r.int32(), "transactionPartitions")
    partitions: list[tuple[str, list[int]]] | None = None
    if count is not None:
        partitions = []
        for _ in range(count):
            topic = r.legacy_string("topic")
            n = r.array_length(r.int32(), "partitionIds")
            partitions.append((topic, r.int32_list(n)))
    last_update = r.int64()
    start = r.int64()
    return TransactionValue(
        version, producer_id, producer_epoch, timeout, status, partitions, last_update, start
    )


def format_transaction_record(
    offset: int, key: bytes | None, value: bytes | None
) -> tuple[str | None, str | None]:
    """(key_text, payload_text) exactly as Kafka 3.3.1's TransactionLogMessageParser prints them.

    Where Kafka's parser throws (the tool then dies), the result is `(None, ErrorText)` with
    `fatal=True`; `offset` is unused because this parser's messages do not mention it.
    """
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


def _format(key: bytes | None, value: bytes | None) -> tuple[str, str]:
    if key is None:
        raise DecodeError(
            "record has no key (Kafka reads the key version from a null buffer)",
            "java.lang.NullPointerException",
        )
    k = decode_transaction_key(key)
    key_text = f"transaction_metadata::transactionalId={k.transactional_id}"
    if value is None:
        return key_text, "<DELETE>"
    v = decode_transaction_value(value)
    state = TRANSACTION_STATES.get(v.state_id)
    if state is None:
        raise DecodeError(
            f"Unknown transaction state id {v.state_id} from the transaction status message", _ISE
        )
    partitions = ""
    if v.state_id != 0:
        if v.partitions is None:
            raise DecodeError(
                f"transactionPartitions is null in a value of state {state}", "java.lang.NullPointerException"
            )
        partitions = ",".join(f"{t}-{p}" for t, p in _partition_set_order(v.partitions))
    return key_text, (
        f"producerId:{v.producer_id},producerEpoch:{v.producer_epoch},state={state},"
        f"partitions=[{partitions}],txnLastUpdateTimestamp={v.last_update_timestamp},"
        f"txnTimeoutMs={v.transaction_timeout_ms}"
    )


def _partition_set_order(partitions: list[tuple[str, list[int]]]) -> list[tuple[str, int]]:
    """Iteration order of the broker's partition set after one `++=` per stored topic entry.

    Each entry is first turned into an immutable Set (deduplicated); sets of more than four elements
    are immutable HashSets, which `mutable.HashSet.addAll` inserts after a size hint but without the
    per-element growth check that smaller sets go through.
    """
    table = ScalaHashTable()
    for topic, ids in partitions:
        topic_hash = java_string_hash(topic)
        unique = list(dict.fromkeys(ids))
        table.size_hint(len(unique))
        large = len(unique) > 4
        for p in unique:
            # TopicPartition.hashCode: 31 * (31 + partition) + topic.hashCode(), in 32-bit arithmetic.
            h = (31 * (31 + p) + topic_hash) & 0xFFFFFFFF
            table.put((topic, p), h - 0x100000000 if h & 0x80000000 else h, check_growth=not large)
    return table.keys()  # type: ignore[return-value]
