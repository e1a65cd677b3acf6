"""What recover found and will change: the plan objects every loading step fills in.

A broker's LogLoader changes the log dir as it loads; recover first writes every change down (one
`Action` a change, in the broker's order) so that a dry run previews exactly what a real run does,
then `execute` applies the plan.  `PartitionPlan` is one partition dir's, `LogDirPlan` the log dir's.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from kafkatool.log.files import (
    CLEAN_SHUTDOWN_FILE,
    INDEX_SUFFIX,
    LOG_SUFFIX,
    TIME_INDEX_SUFFIX,
    TXN_INDEX_SUFFIX,
)
from kafkatool.log.index import DEFAULT_INDEX_INTERVAL
from kafkatool.ops import salvage as salv
from kafkatool.ops.safety import SwapResolution

INDEX_SUFFIXES = (INDEX_SUFFIX, TIME_INDEX_SUFFIX, TXN_INDEX_SUFFIX)
SEGMENT_SUFFIXES = (LOG_SUFFIX, *INDEX_SUFFIXES)
TMP_SUFFIX = ".tmp"


class RecoverInputError(ValueError):
    """A path recover cannot work on (not a log dir or partition dir, salvage dir inside the log dir)."""


@dataclass
class RecoverOptions:
    full: bool = False  # recover every segment, ignoring the recovery point and a clean-shutdown marker
    dry_run: bool = False
    index_interval: int = DEFAULT_INDEX_INTERVAL
    salvage_dir: Path | None = None
    kafka_version: str = "3"  # whose load rules for the leader-epoch cache: "3" (3.x LogLoader) or "2.1"


KAFKA_VERSIONS = ("3", "2.1")


@dataclass
class Action:
    """One change recover makes (or would make).  `kind` and the fields are stable for JSON."""

    kind: str
    file: str | None
    text: str  # one line for people
    fields: dict[str, object] = field(default_factory=dict)
    data_loss: bool = False  # removes records (truncation, segment deletion)

    def to_json(self) -> dict[str, object]:
        return {
            "action": self.kind,
            "file": self.file,
            **self.fields,
            "data_loss": self.data_loss,
            "description": self.text,
        }


@dataclass
class PartitionPlan:
    """Everything recover found and will change in one partition dir."""

    dir: Path
    options: RecoverOptions
    topic_partition: tuple[str, int] | None = None
    recovery_point: int | None = None
    clean_shutdown: bool = False
    segments: list[int] = field(default_factory=list)
    recovered: list[int] = field(default_factory=list)
    reasons: dict[int, str] = field(default_factory=dict)
    log_end_before: int | None = None
    log_end_after: int | None = None
    log_start: int = 0
    actions: list[Action] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    error: str | None = None  # the partition is left alone (e.g. offset overflow)
    # what execute_partition needs
    swap: SwapResolution | None = None
    temp_deletes: list[str] = field(default_factory=list)
    orphan_deletes: list[str] = field(default_factory=list)
    index_writes: dict[Path, bytes | None] = field(default_factory=dict)
    truncations: list[tuple[int, int, dict[Path, bytes | None]]] = field(
        default_factory=list
    )  # base, valid, indexes
    segment_deletes: list[int] = field(default_factory=list)
    snapshot_deletes: list[str] = field(default_factory=list)
    epoch_bytes: bytes | None = None  # new leader-epoch-checkpoint, when it changes
    salvage: list[tuple[Path, salv.FileSalvage]] = field(default_factory=list)
    salvage_next_bases: list[int | None] = field(default_factory=list)
    lost_offsets: list[tuple[int, int | None]] = field(default_factory=list)
    fsync_logs: list[int] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.dir.name

    @property
    def data_loss(self) -> bool:
        return any(a.data_loss for a in self.actions)

    @property
    def changes_data(self) -> bool:
        """Changes that need the broker to re-check producer state and recovery (not index-only)."""
        return bool(
            self.truncations
            or self.segment_deletes
            or self.snapshot_deletes
            or self.temp_deletes
            or (self.swap and (self.swap.deleted or self.swap.renamed))
        )

    def to_json(self) -> dict[str, object]:
        return {
            "partition": self.name,
            "dir": str(self.dir),
            "recovery_point": self.recovery_point,
            "segments": self.segments,
            "recovered_segments": self.recovered,
            "recovery_reasons": {str(k): v for k, v in self.reasons.items()},
            "log_start_offset": self.log_start,
            "log_end_offset_before": self.log_end_before,
            "log_end_offset": self.log_end_after,
            "data_loss": self.data_loss,
            "lost_offset_ranges": [list(r) for r in self.lost_offsets],
            "salvageable_batches": sum(len(fs.batches) for _, fs in self.salvage),
            "actions": [a.to_json() for a in self.actions],
            "warnings": self.warnings,
            "error": self.error,
        }


@dataclass
class LogDirPlan:
    """recover's plan for one log dir: its partitions plus the log-dir files it changes."""

    log_dir: Path
    options: RecoverOptions
    partitions: list[PartitionPlan] = field(default_factory=list)
    actions: list[Action] = field(default_factory=list)
    remove_marker: bool = False
    checkpoint_writes: dict[str, dict[tuple[str, int], int]] = field(default_factory=dict)
    salvage_reports: list[salv.SalvageReport] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def data_loss(self) -> bool:
        return any(p.data_loss for p in self.partitions)

    @property
    def errors(self) -> list[str]:
        return [f"{p.name}: {p.error}" for p in self.partitions if p.error]

    def to_json(self) -> dict[str, object]:
        return {
            "log_dir": str(self.log_dir),
            "dry_run": self.options.dry_run,
            "full": self.options.full,
            "index_interval": self.options.index_interval,
            "salvage_dir": None if self.options.salvage_dir is None else str(self.options.salvage_dir),
            "clean_shutdown_marker": (self.log_dir / CLEAN_SHUTDOWN_FILE).exists() or self.remove_marker,
            "data_loss": self.data_loss,
            "partitions": [p.to_json() for p in self.partitions],
            "log_dir_actions": [a.to_json() for a in self.actions],
            "salvage": [r.to_json() for r in self.salvage_reports],
            "warnings": self.warnings,
        }


# ---------------------------------------------------------------------------------------------
# reading what is there (through swaps not yet completed, for dry runs)
