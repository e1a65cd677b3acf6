"""Producer-state snapshots (`<offset>.snapshot`): what idempotent/transactional producers had written."""

from __future__ import annotations

import struct
from dataclasses import dataclass

from kafkatool.log import crc as _crc32c
from kafkatool.log.errors import CorruptSnapshotError

SNAPSHOT_VERSION = 1
_HEAD = struct.Struct(">hIi")
_ENTRY = struct.Struct(">qhiqiqiq")
ENTRY_SIZE = _ENTRY.size  # 46
INT32_MAX = 2**31 - 1


@dataclass(frozen=True)
class ProducerSnapshotEntry:
    producer_id: int
    producer_epoch: int
    last_sequence: int
    last_offset: int
    offset_delta: int
    timestamp: int
    coordinator_epoch: int
    current_txn_first_offset: int  # -1: no open transaction

    @property
    def first_sequence(self) -> int:
        """Sequence of the first record of the last batch, with Kafka's wrap-around."""
        if self.last_sequence < self.offset_delta:
            return INT32_MAX - (self.offset_delta - self.last_sequence) + 1
        return self.last_sequence - self.offset_delta

    @property
    def has_batch(self) -> bool:
        return self.last_offset >= 0


def read_producer_snapshot(data: bytes) -> list[ProducerSnapshotEntry]:
    """Decode a snapshot, checking version and CRC-32C the way ProducerStateManager.readSnapshot does."""
    if len(data) < _HEAD.size:
        raise CorruptSnapshotError(f"Snapshot failed schema validation: file is {len(data)} bytes, too short")
    version, crc, count = _HEAD.unpack_from(data, 0)
    if version != SNAPSHOT_VERSION:
        raise CorruptSnapshotError(f"Snapshot contained an unknown file version {version}")
    computed = _crc32c.crc32c(memoryview(data)[6:])
    if crc != computed:
        raise CorruptSnapshotError(
            f"Snapshot is corrupt (CRC is no longer valid). Stored crc: {crc}. Computed crc: {computed}"
        )
    if count < 0 or _HEAD.size + count * ENTRY_SIZE != len(data):
        raise CorruptSnapshotError(
            f"Snapshot failed schema validation: {count} entries do not fill {len(data)} bytes"
        )
    return [ProducerSnapshotEntry(*_ENTRY.unpack_from(data, _HEAD.size + i * ENTRY_SIZE)) for i in range(count)]


def encode_producer_snapshot(entries: list[ProducerSnapshotEntry]) -> bytes:
    """Bytes of a version-1 snapshot with its CRC-32C."""
    body = struct.pack(">i", len(entries)) + b"".join(
        _ENTRY.pack(
            e.producer_id,
            e.producer_epoch,
            e.last_sequence,
            e.last_offset,
            e.offset_delta,
            e.timestamp,
            e.coordinator_epoch,
            e.current_txn_first_offset,
        )
        for e in entries
    )
    return struct.pack(">hI", SNAPSHOT_VERSION, _crc32c.crc32c(body)) + body
