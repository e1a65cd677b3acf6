"""What a cleaning pass counted and what compacting one partition did (the cleaner's log lines, --estimate)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass
class CleanerStats:
    """Counts of one cleaning pass (what the broker's cleaner logs, plus what --estimate reports)."""

    bytes_read: int = 0
    bytes_written: int = 0
    records_read: int = 0
    records_written: int = 0
    batches_read: int = 0
    batches_written: int = 0
    map_bytes_read: int = 0
    map_records_read: int = 0
    map_keyless: int = 0  # keyless data records in the dirty range (a compacted topic has none)
    tombstones_read: int = 0
    tombstones_written: int = 0
    keyless_dropped: int = 0
    aborted_batches: int = 0
    aborted_bytes: int = 0
    empty_batches_written: int = 0
    horizons_stamped: int = 0


@dataclass
class GroupResult:
    """One group of segments cleaned into one segment."""

    base_offset: int
    sources: list[int]
    bytes_before: int
    bytes_after: int
    records_before: int
    records_after: int


@dataclass
class CompactionResult:
    """What compacting one partition did (or, dry, would do)."""

    partition: str
    dir: str
    dry_run: bool
    now_ms: int
    segments: int
    size_bytes: int
    log_start_offset: int
    log_end_offset: int
    first_dirty_offset: int
    first_uncleanable_offset: int
    end_offset: int  # cleaned up to (exclusive): the new cleaner-offset-checkpoint
    clean_bytes: int
    cleanable_bytes: int
    dirty_ratio: float
    max_compaction_delay_ms: int
    broker_would_clean: bool  # the broker's choice: ratio above min.cleanable.dirty.ratio, or overdue
    legacy_delete_horizon_ms: int
    map_slots: int
    map_entries: int
    map_full: bool
    cleaned: bool
    reason: str = ""
    keyless_records: int = 0  # keyless data records in the dirty range (a compacted topic has none)
    warnings: list[str] = field(default_factory=list)
    groups: list[GroupResult] = field(default_factory=list)
    stats: CleanerStats = field(default_factory=CleanerStats)
    checkpoint_written: bool = False
    locked: bool = False
    resolved_temp_files: list[str] = field(default_factory=list)
    elapsed_s: float = 0.0

    @property
    def map_utilization(self) -> float:
        return self.map_entries / self.map_slots if self.map_slots else 0.0

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["map_utilization"] = round(self.map_utilization, 6)
        d["dirty_ratio"] = round(self.dirty_ratio, 6)
        return d
