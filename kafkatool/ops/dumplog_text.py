"""Where kafka-dump-log's text changed between Kafka releases, and in which release each change arrived.

Facts read from `DumpLogSegments` of each release line (core/.../kafka/tools/DumpLogSegments.scala up
to 4.2, tools/.../org/apache/kafka/tools/DumpLogSegments.java from 4.3, when the tool was rewritten in
Java).  `DumpText.of(release)` answers, for the release whose text is printed, each question the
dumper asks; the dumper never compares release numbers itself.
"""

from __future__ import annotations

from dataclasses import dataclass

from kafkatool.release import Release

__all__ = ["DumpText", "COORDINATOR_PARSER_SINCE", "JAVA_TOOL_SINCE", "TXN_INDEX_MESSAGE_SINCE"]

#: 4.1: one `CoordinatorRecordMessageParser` serves the offsets, share-group-state and transaction
#: decoders: the transaction log is printed as `{"type":..,"data":..}` / `{"version":..,"data":..}`
#: JSON like the offsets topic, a keyless record is refused "using the specified decoder", and
#: LeaderChange control records are printed as JSON (`LeaderChange: {...}`).
COORDINATOR_PARSER_SINCE = Release(4, 1)
#: 4.3: DumpLogSegments in Java: a file name without a dot is ignored (the Scala tool died on it),
#: every file's continuity check starts from offset -1 and reports in offset order, a skipped
#: record's payload starts with `| ` when no key was printed, the producer snapshot line loses its
#: trailing space, and the legacy record line its stray `}`.
JAVA_TOOL_SINCE = Release(4, 3)
#: 4.4: the transaction index line's version is the AbortedTxn message's highest version (always 0),
#: not the entry's first byte.  (4.4 also prints the transaction log's status by name: see
#: `log.decoders.transactions.TXN_STATUS_NAMES_SINCE`.)
TXN_INDEX_MESSAGE_SINCE = Release(4, 4)


@dataclass(frozen=True)
class DumpText:
    """The text choices of one release's kafka-dump-log."""

    release: Release
    kafka4: bool  # 4.x (Java producer-snapshot OptionalLong text, the 4.0 decoders)
    coordinator_parser: bool
    java_tool: bool
    txn_index_message_version: bool

    @classmethod
    def of(cls, release: Release) -> DumpText:
        return cls(
            release,
            kafka4=release.at_least("4.0"),
            coordinator_parser=release >= COORDINATOR_PARSER_SINCE,
            java_tool=release >= JAVA_TOOL_SINCE,
            txn_index_message_version=release >= TXN_INDEX_MESSAGE_SINCE,
        )

    @property
    def ignores_dotless_files(self) -> bool:
        """`Ignoring unknown file F` and go on for a name without a dot (the Scala tool's
        `substring(lastIndexOf("."))` threw StringIndexOutOfBoundsException)."""
        return self.java_tool

    @property
    def continuity_from_minus_one(self) -> bool:
        """The previous offset starts at -1 for each file (4.3's AtomicLong(-1)), so a segment whose
        first record is not offset 0 reports `-1 is followed by BASE`; the pairs print in offset order
        (a TreeMap).  Before: the first record only sets it, pairs print newest first (a List)."""
        return self.java_tool

    @property
    def keyless_payload_indent(self) -> bytes:
        """What starts a `--skip-record-metadata` line of a record printed without a key."""
        return b"| payload: " if self.java_tool else b" payload: "

    @property
    def snapshot_trailing_space(self) -> bool:
        """The Scala tool printed `lastTimestamp: T ` (a space before the optional batch fields)."""
        return not self.java_tool

    @property
    def legacy_crc_brace(self) -> bytes:
        """The Scala tool's legacy record line ends `crc: C}` (a stray brace in its format string)."""
        return b"" if self.java_tool else b"}"
