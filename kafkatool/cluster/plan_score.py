"""A reassignment plan's score on each goal, beside the current state's, and plans cut into stages.

The goals of `kafkatool.cluster.minimal` (racks, moves and bytes, replicas and preferred leaders per
broker, every topic's replicas and leaders per broker) each get a number, so a plan can be judged
against the cluster as it is and against Kafka's own `--generate` on every axis at once:

* ``replica_moves`` / ``bytes_to_move``: replicas that land on a broker that did not hold them, and
  their partitions' bytes (the data that crosses the network);
* ``replicas_per_broker`` / ``leaders_per_broker``: [min, max] over the target brokers;
* ``topics_replicas_uneven`` / ``topics_leaders_uneven``: topics whose per-broker counts differ by
  more than 1 (a topic concentrated on some brokers is a hot spot), with the worst such spread;
* ``partitions_short_of_racks``: partitions on fewer racks than they could span.

`stage` keeps the first changes of a plan up to a number of moves or bytes, for rebalances done in
steps: each stage is a plan of its own, and planning again after it continues where it stopped.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from kafkatool.cluster.assignment import BrokerMetadata
from kafkatool.cluster.model import Assignment, TopicPartition


@dataclass(frozen=True)
class PlanScore:
    replica_moves: int
    bytes_to_move: int | None
    leadership_changes: int
    replicas_per_broker: tuple[int, int]
    leaders_per_broker: tuple[int, int]
    topics: int
    topics_replicas_uneven: int
    worst_topic_replica_spread: int
    topics_leaders_uneven: int
    worst_topic_leader_spread: int
    partitions_short_of_racks: int

    def to_json(self) -> dict:
        return {
            "replica_moves": self.replica_moves,
            "bytes_to_move": self.bytes_to_move,
            "leadership_changes": self.leadership_changes,
            "replicas_per_broker": list(self.replicas_per_broker),
            "leaders_per_broker": list(self.leaders_per_broker),
            "topics": self.topics,
            "topics_replicas_uneven": self.topics_replicas_uneven,
            "worst_topic_replica_spread": self.worst_topic_replica_spread,
            "topics_leaders_uneven": self.topics_leaders_uneven,
            "worst_topic_leader_spread": self.worst_topic_leader_spread,
            "partitions_short_of_racks": self.partitions_short_of_racks,
        }


def _spread(counts: Counter[int], ids: Sequence[int]) -> tuple[int, int]:
    vals = [counts.get(b, 0) for b in ids]
    return (min(vals), max(vals)) if vals else (0, 0)


def score(
    current: Assignment,
    plan: Assignment,
    brokers: Sequence[BrokerMetadata],
    sizes: dict[TopicPartition, int] | None = None,
) -> PlanScore:
    """The score of `plan` (partitions it leaves out stay as they are) against `current`."""
    ids = sorted(b.id for b in brokers)
    rack = {b.id: b.rack for b in brokers if b.rack is not None}
    num_racks = len(set(rack.values()))
    after = {tp: list(plan.get(tp, reps)) for tp, reps in current.items()}
    moves = leaders = 0
    nbytes: int | None = 0 if sizes is not None else None
    replicas: Counter[int] = Counter()
    lead: Counter[int] = Counter()
    t_replicas: dict[str, Counter[int]] = {}
    t_lead: dict[str, Counter[int]] = {}
    short = 0
    for tp, reps in after.items():
        before = current[tp]
        new = len(set(reps) - set(before))
        moves += new
        if nbytes is not None and sizes is not None:
            nbytes += new * sizes.get(tp, 0)
        if reps and before and reps[0] != before[0]:
            leaders += 1
        replicas.update(reps)
        t_replicas.setdefault(tp.topic, Counter()).update(reps)
        if reps:
            lead[reps[0]] += 1
            t_lead.setdefault(tp.topic, Counter())[reps[0]] += 1
        if rack and len({rack.get(b) for b in reps}) < min(len(reps), num_racks):
            short += 1
    r_spreads = [hi - lo for lo, hi in (_spread(c, ids) for c in t_replicas.values())]
    l_spreads = [hi - lo for lo, hi in (_spread(c, ids) for c in t_lead.values())]
    return PlanScore(
        replica_moves=moves,
        bytes_to_move=nbytes,
        leadership_changes=leaders,
        replicas_per_broker=_spread(replicas, ids),
        leaders_per_broker=_spread(lead, ids),
        topics=len(t_replicas),
        topics_replicas_uneven=sum(1 for s in r_spreads if s > 1),
        worst_topic_replica_spread=max(r_spreads, default=0),
        topics_leaders_uneven=sum(1 for s in l_spreads if s > 1),
        worst_topic_leader_spread=max(l_spreads, default=0),
        partitions_short_of_racks=short,
    )


def _human(n: int | None) -> str:
    if n is None:
        return "unknown"
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{n} B"


def format_scores(columns: list[tuple[str, PlanScore]], lower_bound: int | None = None) -> str:
    """One row a goal, one column a state ("current", then each plan)."""
    rows: list[list[str]] = []

    def add(name: str, cell: object) -> None:
        rows.append([name] + [cell(s) for _, s in columns])  # type: ignore[operator]

    lb = "" if lower_bound is None else f" (lower bound {lower_bound})"
    add("replicas moved" + lb, lambda s: str(s.replica_moves))
    add("bytes to move", lambda s: _human(s.bytes_to_move))
    add("preferred leaders changed", lambda s: str(s.leadership_changes))
    add("replicas per broker", lambda s: "{}..{}".format(*s.replicas_per_broker))
    add("preferred leaders per broker", lambda s: "{}..{}".format(*s.leaders_per_broker))
    add("topics with replicas uneven (>1)", lambda s: f"{s.topics_replicas_uneven} of {s.topics}")
    add("worst topic replica spread", lambda s: str(s.worst_topic_replica_spread))
    add("topics with leaders uneven (>1)", lambda s: f"{s.topics_leaders_uneven} of {s.topics}")
    add("worst topic leader spread", lambda s: str(s.worst_topic_leader_spread))
    add("partitions short of racks", lambda s: str(s.partitions_short_of_racks))
    header = ["goal"] + [name for name, _ in columns]
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]

    def line(cells: list[str]) -> str:
        return "  ".join(
            c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        )

    return "Plan score:\n" + "\n".join("  " + line(r).rstrip() for r in [header, *rows]) + "\n"


def stage(
    current: Assignment,
    proposed: Assignment,
    order: Sequence[TopicPartition] | None,
    sizes: dict[TopicPartition, int] | None,
    max_moves: int | None = None,
    max_bytes: int | None = None,
) -> Assignment:
    """The first changes of `proposed` (in `order`, else by partition) within `max_moves` replicas moved
    and `max_bytes` bytes; every partition left out keeps its current replicas.  Changes that move no
    data (a new preferred leader among the same replicas) are always kept."""
    changed = [
        tp
        for tp in (order if order is not None else sorted(proposed))
        if list(proposed[tp]) != list(current[tp])
    ]
    seen = set(changed)
    changed += [tp for tp in sorted(proposed) if tp not in seen and list(proposed[tp]) != list(current[tp])]
    out = {tp: list(reps) for tp, reps in current.items()}
    moves = nbytes = 0
    for tp in changed:
        new = len(set(proposed[tp]) - set(current[tp]))
        size = new * (sizes or {}).get(tp, 0)
        if new and max_moves is not None and moves + new > max_moves:
            continue
        if new and max_bytes is not None and nbytes + size > max_bytes:
            continue
        out[tp] = list(proposed[tp])
        moves += new
        nbytes += size
    return out
