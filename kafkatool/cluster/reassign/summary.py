"""What a reassignment plan moves: replicas, preferred leaders and bytes per broker, before and after.

Kafka's `--generate` prints no such report; this is kafkatool's addition, printed after a plan and
in `--compare`'s table of both strategies.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from kafkatool.cluster.assignment import (
    BrokerMetadata,
)
from kafkatool.cluster.minimal import lower_bound_moves
from kafkatool.cluster.model import (
    Assignment,
    TopicPartition,
)


@dataclass
class BrokerMoves:
    broker: int
    rack: str | None
    replicas_before: int = 0
    replicas_after: int = 0
    leaders_before: int = 0
    leaders_after: int = 0
    moves_in: int = 0
    moves_out: int = 0
    bytes_in: int | None = 0
    bytes_out: int | None = 0


@dataclass
class MoveSummary:
    strategy: str
    partitions: int
    partitions_changed: int
    replica_moves: int
    lower_bound: int
    bytes_to_move: int | None
    leadership_changes: int
    brokers: list[BrokerMoves]

    def spread(self, attr: str, target: set[int] | None = None) -> tuple[int, int]:
        vals = [getattr(b, attr) for b in self.brokers if target is None or b.broker in target]
        return (min(vals), max(vals)) if vals else (0, 0)

    def to_json(self) -> dict[str, Any]:
        return {
            "strategy": self.strategy,
            "partitions": self.partitions,
            "partitions_changed": self.partitions_changed,
            "replica_moves": self.replica_moves,
            "lower_bound_moves": self.lower_bound,
            "bytes_to_move": self.bytes_to_move,
            "leadership_changes": self.leadership_changes,
            "brokers": [vars(b) for b in self.brokers],
        }


def summarize(
    current: Assignment,
    proposed: Assignment,
    brokers: Sequence[BrokerMetadata],
    sizes: dict[TopicPartition, int] | None,
    strategy: str,
) -> MoveSummary:
    """Replica and leader counts per broker before/after, replicas and bytes moving in and out."""
    rack = {b.id: b.rack for b in brokers}
    ids = set(rack)
    for reps in list(current.values()) + list(proposed.values()):
        ids.update(reps)
    rows = {b: BrokerMoves(b, rack.get(b)) for b in sorted(ids)}
    if sizes is None:
        for r in rows.values():
            r.bytes_in = r.bytes_out = None
    moves = changed = leaders = 0
    total_bytes: int | None = 0 if sizes is not None else None
    for tp, before in current.items():
        after = proposed.get(tp, before)
        for b in before:
            rows[b].replicas_before += 1
        for b in after:
            rows[b].replicas_after += 1
        if before:
            rows[before[0]].leaders_before += 1
        if after:
            rows[after[0]].leaders_after += 1
        if list(after) != list(before):
            changed += 1
        if after and before and after[0] != before[0]:
            leaders += 1
        size = sizes.get(tp, 0) if sizes is not None else 0
        for b in set(after) - set(before):
            moves += 1
            rows[b].moves_in += 1
            if sizes is not None:
                rows[b].bytes_in = (rows[b].bytes_in or 0) + size
                total_bytes = (total_bytes or 0) + size
        for b in set(before) - set(after):
            rows[b].moves_out += 1
            if sizes is not None:
                rows[b].bytes_out = (rows[b].bytes_out or 0) + size
    return MoveSummary(
        strategy=strategy,
        partitions=len(current),
        partitions_changed=changed,
        replica_moves=moves,
        lower_bound=lower_bound_moves(current, [b.id for b in brokers]),
        bytes_to_move=total_bytes,
        leadership_changes=leaders,
        brokers=list(rows.values()),
    )


def human_bytes(n: int | None) -> str:
    if n is None:
        return "unknown"
    v = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if v < 1024 or unit == "TiB":
            return f"{n} B" if unit == "B" else f"{v:.1f} {unit} ({n} bytes)"
        v /= 1024
    return f"{n} B"


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(header)]

    def line(cells: list[str]) -> str:
        return "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths, strict=True))).rstrip()

    return [line(header)] + [line(r) for r in rows]


def format_summary(s: MoveSummary, target: set[int] | None = None) -> str:
    """The per-broker move report printed after a plan (our addition; Kafka prints none)."""
    lo_r, hi_r = s.spread("replicas_after", target)
    lo_l, hi_l = s.spread("leaders_after", target)
    out = [
        f"Reassignment summary (strategy {s.strategy}):",
        f"  partitions changed: {s.partitions_changed} of {s.partitions}; replicas moved: {s.replica_moves} "
        f"(lower bound {s.lower_bound}); bytes to move: {human_bytes(s.bytes_to_move)}; "
        f"preferred leaders changed: {s.leadership_changes}",
        f"  replicas per broker after: {lo_r}..{hi_r}; preferred leaders per broker after: {lo_l}..{hi_l}",
    ]
    header = ["broker", "rack", "replicas", "leaders", "moves in", "moves out", "bytes in", "bytes out"]
    rows = [
        [
            str(b.broker), b.rack or "-",
            f"{b.replicas_before}->{b.replicas_after}", f"{b.leaders_before}->{b.leaders_after}",
            str(b.moves_in), str(b.moves_out),
            "-" if b.bytes_in is None else str(b.bytes_in), "-" if b.bytes_out is None else str(b.bytes_out),
        ]
        for b in s.brokers
    ]
    out += ["  " + line for line in _table(header, rows)]
    return "\n".join(out) + "\n"


def format_comparison(summaries: list[MoveSummary], target: set[int] | None = None) -> str:
    header = ["strategy", "replicas moved", "lower bound", "bytes to move", "partitions changed",
              "replicas/broker", "leaders/broker", "leader changes"]
    rows = []
    for s in summaries:
        lo_r, hi_r = s.spread("replicas_after", target)
        lo_l, hi_l = s.spread("leaders_after", target)
        rows.append([s.strategy, str(s.replica_moves), str(s.lower_bound),
                     "unknown" if s.bytes_to_move is None else str(s.bytes_to_move),
                     str(s.partitions_changed), f"{lo_r}..{hi_r}", f"{lo_l}..{hi_l}", str(s.leadership_changes)])
    return "Strategy comparison:\n" + "\n".join("  " + line for line in _table(header, rows)) + "\n"
