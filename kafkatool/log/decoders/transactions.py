"""`__transaction_state` keys and values: structured decoders and Kafka's dump-log text.

`format_transaction_record` reproduces `kafka-dump-log.sh --transaction-log-decoder`
(`TransactionLog.formatRecordKeyAndValue`) of Kafka 3.3 or, with `kafka4=True`, of Kafka 4.0.  The
tool prints a loaded `TransactionMetadata`, whose partitions live in a Scala `mutable.HashSet`, so
they come out in that set's bucket order; and partitions of an `Empty` transaction are never loaded,
so they print as `[]`.  The two releases print a value the same way; 4.0 prints a key of an unknown
version as `unknown::version=<n>` where 3.3 fails, and checks the client's transaction version.

Wire formats (transaction-coordinator/src/main/resources/common/message at 4.0), an int16 version first:

* key v0: transactionalId string
* value v0 (non-flexible) and v1 (flexible, Kafka 4.0's transaction.version >= 1): producerId int64,
  [v1 tagged 0: previousProducerId int64, default -1], [v1 tagged 1: nextProducerId int64, default -1],
  producerEpoch int16, transactionTimeoutMs int32, transactionStatus int8,
  transactionPartitions [topic string, partitionIds [int32]]? (null allowed),
  transactionLastUpdateTimestampMs int64, transactionStartTimestampMs int64,
  [v1 tagged 2: clientTransactionVersion int16, default 0]

Kafka 3.3 knows value v0 only; its text is printed for v1 values too (the same fields), rather than
failing as 3.3's tool does.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kafkatool.jvm.hashing import string_hash
from kafkatool.jvm.scala_collections import ScalaHashTable
from kafkatool.log.decoders._schema import MAX, Message, RawJson, field, tagged
from kafkatool.log.decoders._spec_tables import coordinator_types
from kafkatool.log.decoders._wire import (
    DecodeError,
    ErrorText,
    NewerThanKnown,
    Reader,
    json_str,
    newer_reason,
)
from kafkatool.log.decoders.coordinator import format_coordinator_record
from kafkatool.release import Release

__all__ = [
    "TRANSACTION_STATES",
    "TransactionKey",
    "TransactionValue",
    "decode_transaction_key",
    "decode_transaction_value",
    "format_transaction_record",
]

_ISE = "java.lang.IllegalStateException"

#: The value versions kafkatool reads: 0, and 1 (flexible) since Kafka 4.0.
NEWEST_VALUE_VERSION = 1

TRANSACTION_LOG_VALUE = Message(
    "TransactionLogValue",
    (0, NEWEST_VALUE_VERSION),
    (1, MAX),
    (
        field("producerId", "int64"),
        tagged("previousProducerId", "int64", 0, (1, MAX), default=-1),
        tagged("nextProducerId", "int64", 1, (1, MAX), default=-1),
        field("producerEpoch", "int16"),
        field("transactionTimeoutMs", "int32"),
        field("transactionStatus", "int8"),
        field(
            "transactionPartitions",
            "[]struct",
            nullable=(0, MAX),
            fields=(field("topic", "string"), field("partitionIds", "[]int32")),
        ),
        field("transactionLastUpdateTimestampMs", "int64"),
        field("transactionStartTimestampMs", "int64"),
        tagged("clientTransactionVersion", "int16", 2, (1, MAX), default=0),
    ),
)

#: Feature levels of `transaction.version` Kafka 4.0 knows (TransactionVersion TV_0..TV_2).
TRANSACTION_VERSION_LEVELS = (0, 1, 2)

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
    previous_producer_id: int = -1  # v1+
    next_producer_id: int = -1  # v1+
    client_transaction_version: int = 0  # v1+

    @property
    def state(self) -> str:
        """Kafka's name for the state, or `Unknown(<id>)` for ids Kafka 3.3.1 rejects."""
        return TRANSACTION_STATES.get(self.state_id, f"Unknown({self.state_id})")


def decode_transaction_key(key: bytes) -> TransactionKey:
    """Decode a key.  Raises DecodeError (Kafka's message) on unknown versions or malformed bytes."""
    r = Reader(key)
    version = r.int16()
    if version > 0:
        raise NewerThanKnown(
            f"Unknown version {version} from the transaction log message",
            _ISE,
            what=f"transaction log key version {version}",
            known_by="4.0",
        )
    if version < 0:
        raise DecodeError(f"Unknown version {version} from the transaction log message", _ISE)
    return TransactionKey(version, r.legacy_string("transactionalId"))


def decode_transaction_value(value: bytes) -> TransactionValue:
    """Decode a value.  Raises DecodeError (Kafka's message) on unknown versions or malformed bytes.

    Unknown state ids are kept (see `TransactionValue.state`); only the dump-log text fails on them,
    as Kafka does.
    """
    r = Reader(value)
    version = r.int16()
    if not 0 <= version <= NEWEST_VALUE_VERSION:
        raise NewerThanKnown(
            f"Unknown version {version} from the transaction log message value",
            _ISE,
            what=f"transaction log value version {version}",
            known_by="4.0",
        )
    d = TRANSACTION_LOG_VALUE.read(r, version)
    stored = d["transactionPartitions"]
    partitions = None if stored is None else [(p["topic"], p["partitionIds"]) for p in stored]
    return TransactionValue(
        version,
        d["producerId"],
        d["producerEpoch"],
        d["transactionTimeoutMs"],
        d["transactionStatus"],
        partitions,
        d["transactionLastUpdateTimestampMs"],
        d["transactionStartTimestampMs"],
        d["previousProducerId"],
        d["nextProducerId"],
        d["clientTransactionVersion"],
    )


def format_transaction_record(
    offset: int, key: bytes | None, value: bytes | None, *, kafka4: bool = False, rel: Release | None = None
) -> tuple[str | None, str | None]:
    """(key_text, payload_text) exactly as the TransactionLogMessageParser of Kafka 3.3 (or 4.0) prints.

    Where Kafka's parser throws (the tool then dies), the result is `(None, ErrorText)` with
    `fatal=True`; `offset` is unused because this parser's messages do not mention it.  A key of a
    version Kafka 4.0 does not know is its `unknown::version=<n>` line, an `ErrorText` with
    `fatal=False` (with `newer` set when the version is above the known one).

    From Kafka 4.1 (`rel`) the tool prints the records as JSON, like the offsets decoder (see
    `coordinator`), and from 4.4 with the transaction's status by name.
    """
    types = coordinator_types("transaction", rel) if rel is not None else None
    if types is not None:
        if key is None:
            raise ValueError("a keyless record is refused before the parser")  # dump-log says so first
        names = rel is not None and rel >= TXN_STATUS_NAMES_SINCE
        return format_coordinator_record(types, offset, key, value, {0: _status_named} if names else None)
    try:
        return _format(key, value, kafka4)
    except DecodeError as err:
        return None, ErrorText.from_error(err)
    except (ValueError, IndexError, OverflowError, MemoryError) as err:  # defensive: never escape
        return None, ErrorText(
            f"java.lang.RuntimeException: undecodable record: {err}",
            java_class="java.lang.RuntimeException",
            message=f"undecodable record: {err}",
            fatal=True,
        )


def _format(key: bytes | None, value: bytes | None, kafka4: bool) -> tuple[str, str | None]:
    if key is None:
        raise DecodeError(
            "record has no key (Kafka reads the key version from a null buffer)",
            "java.lang.NullPointerException",
        )
    version = Reader(key).int16()
    if kafka4 and version != 0:
        # 4.0 prints a key it cannot read this way and no payload, and goes on
        newer = newer_reason(f"transaction log key version {version}", "4.0") if version > 0 else None
        return ErrorText(f"unknown::version={version}", java_class=_ISE, message=None, fatal=False, newer=newer), None
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
    if kafka4 and v.client_transaction_version not in TRANSACTION_VERSION_LEVELS:
        raise NewerThanKnown(
            f"No feature:transaction.version with feature level {v.client_transaction_version}",
            "java.lang.IllegalArgumentException",
            what=f"client transaction version {v.client_transaction_version}",
            known_by="4.0",
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
        topic_hash = string_hash(topic)
        unique = list(dict.fromkeys(ids))
        table.size_hint(len(unique))
        large = len(unique) > 4
        for p in unique:
            # TopicPartition.hashCode: 31 * (31 + partition) + topic.hashCode(), in 32-bit arithmetic.
            h = (31 * (31 + p) + topic_hash) & 0xFFFFFFFF
            table.put((topic, p), h - 0x100000000 if h & 0x80000000 else h, check_growth=not large)
    return table.keys()  # type: ignore[return-value]


#: Kafka 4.4's TransactionLogMessageParser prints `transactionStatus` by name.
TXN_STATUS_NAMES_SINCE = Release(4, 4)
#: Kafka 4.4's `TransactionState.stateName()` by status id (the admin client's names, and "Dead").
TRANSACTION_STATE_NAMES = {
    0: "Empty", 1: "Ongoing", 2: "PrepareCommit", 3: "PrepareAbort", 4: "CompleteCommit", 5: "CompleteAbort",
    6: "Dead", 7: "PrepareEpochFence",
}


def _status_named(spec: Message, data: dict[str, Any], version: int) -> str:
    """4.4's TransactionLogMessageParser: `transactionStatus` replaced by the state's name (by the
    number where the id is unknown), in place."""
    status = data["transactionStatus"]
    name = TRANSACTION_STATE_NAMES.get(status, str(status))
    return spec.to_json({**data, "transactionStatus": RawJson(json_str(name))}, version)
