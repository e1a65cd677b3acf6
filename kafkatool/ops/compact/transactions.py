"""Transaction state during a cleaning pass (Kafka's `CleanedTransactionMetadata`) and control batch types."""

from __future__ import annotations

import heapq
from collections.abc import Iterable
from typing import Any

from kafkatool.log.index import (
    AbortedTxn,
)
from kafkatool.log.record import CONTROL_ABORT, CONTROL_COMMIT, control_type_of
from kafkatool.log.records import Batch


def control_type(batch: Batch) -> int | None:
    """Type of a control batch's record (0 ABORT, 1 COMMIT, ...), None for an emptied control batch."""
    recs = batch.records()
    return control_type_of(recs[0].key) if recs else None


class TransactionTracker:
    """CleanedTransactionMetadata: which batches belong to aborted transactions, which markers may go."""

    def __init__(self) -> None:
        self._pending: list[tuple[int, int, AbortedTxn]] = []  # min-heap by first offset
        self._seq = 0
        self.ongoing_committed: set[int] = set()
        self.ongoing_aborted: dict[int, list[Any]] = {}  # pid -> [txn, last observed batch offset]
        self.cleaned_index: list[AbortedTxn] | None = None

    def add_aborted(self, txns: Iterable[AbortedTxn]) -> None:
        for t in txns:
            heapq.heappush(self._pending, (t.first_offset, self._seq, t))
            self._seq += 1

    def _consume_up_to(self, offset: int) -> None:
        while self._pending and self._pending[0][0] <= offset:
            txn = heapq.heappop(self._pending)[2]
            self.ongoing_aborted.setdefault(txn.producer_id, [txn, None])

    def on_control_batch(self, b: Batch, ctype: int | None) -> bool:
        """True when the marker may be discarded (its transaction left no data behind)."""
        self._consume_up_to(b.last_offset)
        if ctype is None:
            return True  # an emptied control batch
        if ctype == CONTROL_ABORT:
            meta = self.ongoing_aborted.pop(b.producer_id, None)
            if meta is not None and meta[1] is not None:
                if self.cleaned_index is not None:
                    self.cleaned_index.append(meta[0])
                return False
            return True
        if ctype == CONTROL_COMMIT:
            if b.producer_id in self.ongoing_committed:
                self.ongoing_committed.discard(b.producer_id)
                return False
            return True
        return False

    def on_batch(self, b: Batch) -> bool:
        """True when the batch belongs to an aborted transaction."""
        self._consume_up_to(b.last_offset)
        if not b.is_transactional:
            return False
        meta = self.ongoing_aborted.get(b.producer_id)
        if meta is not None:
            meta[1] = b.last_offset
            return True
        self.ongoing_committed.add(b.producer_id)
        return False
