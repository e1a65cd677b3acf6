"""Payload decoders for Kafka's internal topics, printing what Kafka's dump-log tool prints (3.3.1's,
and 4.0's where it differs: see each module).

* `offsets`: `__consumer_offsets` keys/values (`--offsets-decoder`)
* `transactions`: `__transaction_state` keys/values (`--transaction-log-decoder`)
* `metadata`: KRaft `__cluster_metadata` records (`--cluster-metadata-decoder`) and control records
* `coordinator`: the record frame of Kafka 4.0's coordinators and 4.0's JSON text of their records;
  `_schema` the message specs' reader and JSON writer all of them share

Every `format_*` function is total: where Kafka's parser fails it returns an `ErrorText` (a `str`
with `fatal`, `java_class` and `message`) instead of raising.  The structured `decode_*` functions
raise `DecodeError`, a `ValueError`, on bytes Kafka would reject.
"""

from kafkatool.log.decoders._wire import BufferUnderflow, DecodeError, ErrorText
from kafkatool.log.decoders.metadata import (
    MetadataRecord,
    decode_metadata_record,
    format_control_record,
    format_metadata_record,
)
from kafkatool.log.decoders.offsets import (
    ConsumerAssignment,
    ConsumerSubscription,
    GroupMember,
    GroupMetadataKey,
    GroupMetadataValue,
    OffsetCommitKey,
    OffsetCommitValue,
    UnknownKey,
    decode_group_metadata_value,
    decode_offset_commit_value,
    decode_offsets_key,
    format_offsets_record,
)
from kafkatool.log.decoders.transactions import (
    TransactionKey,
    TransactionValue,
    decode_transaction_key,
    decode_transaction_value,
    format_transaction_record,
)

__all__ = [
    "BufferUnderflow",
    "ConsumerAssignment",
    "ConsumerSubscription",
    "DecodeError",
    "ErrorText",
    "GroupMember",
    "GroupMetadataKey",
    "GroupMetadataValue",
    "MetadataRecord",
    "OffsetCommitKey",
    "OffsetCommitValue",
    "TransactionKey",
    "TransactionValue",
    "UnknownKey",
    "decode_group_metadata_value",
    "decode_metadata_record",
    "decode_offset_commit_value",
    "decode_offsets_key",
    "decode_transaction_key",
    "decode_transaction_value",
    "format_control_record",
    "format_metadata_record",
    "format_offsets_record",
    "format_transaction_record",
]
