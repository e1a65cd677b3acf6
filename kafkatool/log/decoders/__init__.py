"""Payload decoders for Kafka's internal topics, printing what Kafka's dump-log tool prints (3.3.1's,
and 4.0's where it differs: see each module).

* `offsets`: `__consumer_offsets` keys/values (`--offsets-decoder`)
* `transactions`: `__transaction_state` keys/values (`--transaction-log-decoder`)
* `metadata`: KRaft `__cluster_metadata` records (`--cluster-metadata-decoder`) and control records
* `kraft_control`: KRaft's control records (leader change, snapshot header, voters) as data
* `remote_log_metadata`: tiered storage's `__remote_log_metadata` (`--remote-log-metadata-decoder`, 4.0)
* `share_group_state`: `__share_group_state` keys/values (`--share-group-state-decoder`, 4.0)
* `coordinator`: the record frame of Kafka 4.0's coordinators and 4.0's JSON text of their records;
  `_schema` the message specs' reader and JSON writer all of them share

Every `format_*` function is total: where Kafka's parser fails it returns an `ErrorText` (a `str`
with `fatal`, `java_class` and `message`) instead of raising.  The structured `decode_*` functions
raise `DecodeError`, a `ValueError`, on bytes Kafka would reject.  A record newer than the reproduced
Kafka release knows is the one case with `newer` set: kafkatool's one-line reason, on the
`NewerThanKnown` a decoder raises and on the `ErrorText` holding Kafka's text for the record.

Importing the package costs nothing: each name is imported from its module on first use, so
`--offsets-decoder` or an offsets replay never builds the KRaft metadata tables (and the reverse).
"""

from __future__ import annotations

from kafkatool.lazy import lazy_exports

# name -> the module that defines it
_HOMES = {
    **dict.fromkeys(("BufferUnderflow", "DecodeError", "ErrorText", "NewerThanKnown"), "_wire"),
    **dict.fromkeys(
        ("MetadataRecord", "decode_metadata_record", "format_control_record", "format_metadata_record"),
        "metadata",
    ),
    **dict.fromkeys(
        (
            "ConsumerAssignment",
            "ConsumerSubscription",
            "GroupMember",
            "GroupMetadataKey",
            "GroupMetadataValue",
            "OffsetCommitKey",
            "OffsetCommitValue",
            "UnknownKey",
            "decode_group_metadata_value",
            "decode_offset_commit_value",
            "decode_offsets_key",
            "format_offsets_record",
        ),
        "offsets",
    ),
    "decode_control_record": "kraft_control",
    **dict.fromkeys(
        ("RemoteLogMetadata", "decode_remote_log_metadata", "format_remote_log_metadata_record"),
        "remote_log_metadata",
    ),
    **dict.fromkeys(("decode_share_group_state", "format_share_group_state_record"), "share_group_state"),
    **dict.fromkeys(
        (
            "TransactionKey",
            "TransactionValue",
            "decode_transaction_key",
            "decode_transaction_value",
            "format_transaction_record",
        ),
        "transactions",
    ),
}

__all__ = sorted(_HOMES)
__getattr__, __dir__ = lazy_exports(__name__, _HOMES)
