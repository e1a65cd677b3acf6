"""The leader-epoch cache as a broker leaves it after loading: LeaderEpochFileCache.

Recovery assigns the epochs of the batches it walks (`assign`), then the broker drops entries at or
past the new log end offset (`truncateFromEnd`) and moves the first up to the log start
(`truncateFromStart`: Kafka 2.1 takes the log start offset, 3.x the log-start-offset checkpoint as it
is, so leftover `.deleted` segments that moved the start change the cache under 2.1 only).  3.x also
loads the file through `assign`, dropping non-monotonic entries.  A missing `leader-epoch-checkpoint`
is created empty, as the broker's CheckpointFile does.
"""

from __future__ import annotations

from dataclasses import dataclass

from kafkatool.log.checkpoint import format_checkpoint, read_leader_epoch_checkpoint
from kafkatool.log.errors import CheckpointError
from kafkatool.log.files import LEADER_EPOCH_CHECKPOINT
from kafkatool.ops.recovery.plan import Action, PartitionPlan
from kafkatool.ops.recovery.segments import DirView


def _epoch_assign(entries: list[tuple[int, int]], epoch: int, start: int) -> list[tuple[int, int]]:
    """LeaderEpochFileCache.assign: drop entries not below the new one, append it."""
    if entries and entries[-1][0] == epoch and start >= entries[-1][1]:
        return entries
    return [e for e in entries if e[0] < epoch and e[1] < start] + [(epoch, start)]


def _epoch_load(entries: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Kafka 3.x's cache as loaded from a file: every entry assigned in turn (no flush)."""
    out: list[tuple[int, int]] = []
    for epoch, start in entries:
        out = _epoch_assign(out, epoch, start)
    return out


def _epoch_file_after_load(
    current: bytes | None,
    loaded: list[tuple[int, int]],
    assigned: list[tuple[int, int]],
    log_end: int | None,
    start: int,
) -> tuple[list[tuple[int, int]], bytes]:
    """The leader-epoch cache and its file's bytes as a broker leaves them after loading a partition.

    `loaded` is the cache as loaded from `current`, `assigned` after recovery's assigns.
    LeaderEpochFileCache writes the whole file (`flush`) whenever `assign` changes the entries, when
    `truncateFromEnd(log end)` removes entries starting at or past the log end, and whenever
    `truncateFromStart(start)` finds an entry at or below `start` (it then moves that entry up to
    `start`, rewriting the file even when nothing moved).  A missing file is created empty by the
    CheckpointFile constructor and stays empty until the first flush.  `start` is the release's:
    Kafka 2.1 uses the log start offset (the checkpoint's, raised to the first segment's base);
    3.x's LogLoader passes the log-start-offset checkpoint as it is.
    """
    entries = list(assigned)
    flushed = entries != loaded  # recovery's assign flushes when it changes the cache
    if log_end is not None and log_end >= 0 and entries and entries[-1][1] >= log_end:
        entries = [e for e in entries if e[1] < log_end]
        flushed = True
    before = [e for e in entries if e[1] <= start]
    if before:
        entries = [(before[-1][0], start)] + [e for e in entries if e[1] > start]
        flushed = True
    if flushed:
        return entries, format_checkpoint(list(entries)).encode()  # type: ignore[arg-type]
    return entries, b"" if current is None else current


def _fmt_epochs(entries: list[tuple[int, int]]) -> str:
    return "[" + ", ".join(f"{e} {o}" for e, o in entries) + "]"


@dataclass
class EpochCache:
    """One partition's leader-epoch cache through a load: as in the file, as loaded, as recovery
    assigns the epochs of the batches it walks (`entries`)."""

    file_exists: bool
    readable: bool
    before: list[tuple[int, int]]
    loaded: list[tuple[int, int]]
    entries: list[tuple[int, int]]

    @property
    def latest_epoch(self) -> int | None:
        return self.entries[-1][0] if self.entries else None

    def assign(self, epoch: int, start: int) -> None:
        self.entries = _epoch_assign(self.entries, epoch, start)


def read_epoch_cache(plan: PartitionPlan, view: DirView) -> EpochCache:
    """The cache as the broker loads it (an unreadable file is warned about and left alone)."""
    epochs_file = view.exists(LEADER_EPOCH_CHECKPOINT)
    epochs: list[tuple[int, int]] = []
    epochs_ok = True
    if epochs_file:
        try:
            text_path = view.real(LEADER_EPOCH_CHECKPOINT)
            epochs = read_leader_epoch_checkpoint(text_path) if text_path.stat().st_size else []
        except (CheckpointError, UnicodeDecodeError) as exc:
            epochs_ok = False
            plan.warnings.append(f"{LEADER_EPOCH_CHECKPOINT}: cannot read it ({exc}); left as it is")
    epochs_before = list(epochs)
    if plan.options.kafka_version != "2.1":
        # 3.x's LeaderEpochFileCache loads the file through assign, dropping non-monotonic entries
        # (in memory: the file changes at its next flush); 2.1's keeps the list as read
        epochs = _epoch_load(epochs)
    return EpochCache(epochs_file, epochs_ok, epochs_before, list(epochs), epochs)


def plan_epoch_checkpoint(
    plan: PartitionPlan, view: DirView, cache: EpochCache, log_start_checkpoint: int | None
) -> None:
    """The file's new bytes when the load changes them, as an action (not only after a truncation)."""
    if not cache.readable:
        return
    options = plan.options
    start = plan.log_start if options.kafka_version == "2.1" else (log_start_checkpoint or 0)
    old_bytes = view.read(LEADER_EPOCH_CHECKPOINT) if cache.file_exists else None
    new_epochs, new_bytes = _epoch_file_after_load(
        old_bytes, cache.loaded, cache.entries, plan.log_end_after, start
    )
    if new_bytes == old_bytes:
        return
    epochs_before = cache.before
    plan.epoch_bytes = new_bytes
    if old_bytes is None:
        text = f"create {LEADER_EPOCH_CHECKPOINT} (empty, as a broker creates it)"
    elif new_epochs == epochs_before:
        text = f"rewrite {LEADER_EPOCH_CHECKPOINT} in the broker's format: {_fmt_epochs(new_epochs)}"
    else:
        text = f"rewrite {LEADER_EPOCH_CHECKPOINT}: {_fmt_epochs(epochs_before)} -> {_fmt_epochs(new_epochs)}"
    plan.actions.append(
        Action(
            "write_leader_epoch_checkpoint",
            LEADER_EPOCH_CHECKPOINT,
            text,
            {
                "old": None if old_bytes is None else [list(e) for e in epochs_before],
                "new": [list(e) for e in new_epochs],
            },
        )
    )
