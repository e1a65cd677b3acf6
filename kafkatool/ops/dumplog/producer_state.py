"""dumpProducerIdSnapshot and dumpTxnIndex: the producer state's files.

A `.snapshot` holds each producer's id, epoch, last sequence and open transaction (Kafka 3.3 prints
Scala Options, 4.0 on Java OptionalLongs); a `.txnindex` holds the aborted transactions of a
segment (Kafka reads whole entries only and says nothing of a partial tail).
"""

from __future__ import annotations

from pathlib import Path

from kafkatool.log.errors import CorruptSnapshotError
from kafkatool.log.index import read_txn_index
from kafkatool.log.snapshot import read_producer_snapshot
from kafkatool.ops.dumplog.base import DumperBase


class ProducerStateDumps(DumperBase):
    """The `.snapshot` and `.txnindex` dumps."""

    # -- .snapshot / .txnindex -------------------------------------------------------------
    def dump_producer_snapshot(self, path: Path, shown: str) -> None:
        kafka4 = self.opts.kafka4
        try:
            entries = read_producer_snapshot(path.read_bytes())
        except CorruptSnapshotError as exc:
            message = str(exc)
            if kafka4 and message.startswith("Snapshot contained an unknown file version"):
                # 4.0 checks the version inside the block that wraps every failure in this prefix
                message = "Snapshot failed schema validation: " + message
            self.problem(shown, "corrupt_snapshot", message, fatal=False)
            return
        # Kafka 3.3 prints a Scala Option, 4.0 a java.util.OptionalLong
        some, none = ("OptionalLong[%d]", "OptionalLong.empty") if kafka4 else ("Some(%d)", "None")
        lines = []
        for e in entries:
            if self.json:
                self._emit(
                    {
                        "type": "producer_snapshot_entry",
                        "file": shown,
                        "producer_id": e.producer_id,
                        "producer_epoch": e.producer_epoch,
                        "coordinator_epoch": e.coordinator_epoch,
                        "current_txn_first_offset": (
                            e.current_txn_first_offset if e.current_txn_first_offset >= 0 else None
                        ),
                        "last_timestamp": e.timestamp,
                        "first_sequence": e.first_sequence if e.has_batch else None,
                        "last_sequence": e.last_sequence if e.has_batch else None,
                        "last_offset": e.last_offset if e.has_batch else None,
                        "offset_delta": e.offset_delta if e.has_batch else None,
                    }
                )
                continue
            txn = some % e.current_txn_first_offset if e.current_txn_first_offset >= 0 else none
            line = (
                f"producerId: {e.producer_id} producerEpoch: {e.producer_epoch} coordinatorEpoch: "
                f"{e.coordinator_epoch} currentTxnFirstOffset: {txn} lastTimestamp: {e.timestamp}"
            )
            if e.has_batch or self.text.snapshot_trailing_space:
                line += " "
            if e.has_batch:
                line += (
                    f"firstSequence: {e.first_sequence} lastSequence: {e.last_sequence} lastOffset: "
                    f"{e.last_offset} offsetDelta: {e.offset_delta} timestamp: {e.timestamp}"
                )
            lines.append(line + "\n")
        self._w("".join(lines).encode())

    def dump_txn_index(self, path: Path, shown: str) -> None:
        data = path.read_bytes()
        whole = len(data) - len(data) % 34
        entries = read_txn_index(data[:whole])
        if self.json:
            for e in entries:
                self._emit(
                    {
                        "type": "txn_index_entry",
                        "file": shown,
                        "version": e.version,
                        "producer_id": e.producer_id,
                        "first_offset": e.first_offset,
                        "last_offset": e.last_offset,
                        "last_stable_offset": e.last_stable_offset,
                    }
                )
            if whole != len(data):
                self.problem(
                    shown,
                    "truncated",
                    f"{shown}: {len(data) - whole} trailing bytes are not a whole entry",
                    fatal=False,
                )
            return
        # Kafka reads whole entries only and says nothing about a partial tail; neither do we here.
        self._w(
            "".join(
                f"version: {0 if self.text.txn_index_message_version else e.version} producerId: {e.producer_id} "
                f"firstOffset: {e.first_offset} "
                f"lastOffset: {e.last_offset} lastStableOffset: {e.last_stable_offset}\n"
                for e in entries
            ).encode()
        )
