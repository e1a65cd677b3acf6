"""Compare `reassign --strategy minimal` with Kafka's own `--generate` on generated clusters.

Each cluster: brokers in racks of equal size (three, or four for 100 brokers: with racks of unequal
size and every partition in every rack, a broker's share depends on its rack's size and no plan can
put every broker within 1 of another), topics of uneven partition counts (--partitions in
all) at replication factor 3 with uneven partition sizes, placed as Kafka places each topic over the
first ~85% of the brokers; the rest joined empty ("brokers were added, rebalance").  Both strategies
plan the same topics onto all brokers: Kafka's (`cluster/assignment.py`'s model of its `--generate`,
seeded), ours, and ours with `--no-topic-balance` (moves first).  Each plan is scored on every goal (`cluster/plan_score.py`): replicas moved
(against the lower bound), bytes moved, replicas and preferred leaders per broker (max - min),
topics whose replicas or leaders per broker differ by more than 1, partitions short of racks, and
the time to plan (the best of --repeat).

    python benchmarks/bench_plans.py                      # the grid of the README table
    python benchmarks/bench_plans.py --grid 6x100,30x10000 --repeat 3 --json
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from kafkatool.cluster.assignment import BrokerMetadata, assign_replicas_to_brokers, generate_kafka  # noqa: E402
from kafkatool.cluster.minimal import Goals, lower_bound_moves, plan_minimal  # noqa: E402
from kafkatool.cluster.model import TopicPartition  # noqa: E402
from kafkatool.cluster.plan_score import score  # noqa: E402
from kafkatool.jvm.random import JavaRandom  # noqa: E402

GRID = ((6, 100), (12, 1000), (30, 10_000), (100, 10_000), (99, 100_000))


def cluster(
    brokers: int, partitions: int, seed: int = 1
) -> tuple[dict, dict, list[BrokerMetadata], list[str]]:
    rng = random.Random(seed)
    racks = 3 if brokers % 3 == 0 else 4
    metas = [BrokerMetadata(b, f"rack{b % racks}") for b in range(1, brokers + 1)]
    old = metas[: max(3, round(brokers * 0.85))]
    current: dict[TopicPartition, list[int]] = {}
    topics: list[str] = []
    left = partitions
    jrng = JavaRandom(seed)
    while left > 0:
        n = min(left, rng.choice((1, 3, 6, 12, 24, 50, 100)))
        t = f"topic{len(topics):05d}"
        topics.append(t)
        for p, reps in assign_replicas_to_brokers(old, n, 3, rng=jrng).items():
            current[TopicPartition(t, p)] = reps
        left -= n
    sizes = {tp: int(rng.lognormvariate(17, 1.5)) for tp in current}  # median ~24 MB, long tail
    return current, sizes, metas, topics


def run(brokers: int, partitions: int, repeat: int) -> list[dict]:
    current, sizes, metas, topics = cluster(brokers, partitions)
    lb = lower_bound_moves(current, [b.id for b in metas])
    rows = []
    for name in ("kafka", "minimal", "minimal --no-topic-balance"):
        best = float("inf")
        plan: dict = {}
        for _ in range(repeat):
            t0 = time.perf_counter()
            if name == "kafka":
                plan = generate_kafka(topics, current, metas, JavaRandom(42))
            elif name == "minimal":
                plan = plan_minimal(current, metas, sizes)
            else:
                plan = plan_minimal(current, metas, sizes, Goals(topic_balance=False))
            best = min(best, time.perf_counter() - t0)
        s = score(current, plan, metas, sizes)
        rows.append(
            {
                "brokers": brokers,
                "partitions": len(current),
                "topics": len(topics),
                "strategy": name,
                "moves": s.replica_moves,
                "lower_bound": lb,
                "gib_moved": round((s.bytes_to_move or 0) / 2**30, 1),
                "replica_spread": s.replicas_per_broker[1] - s.replicas_per_broker[0],
                "leader_spread": s.leaders_per_broker[1] - s.leaders_per_broker[0],
                "topics_replicas_uneven": s.topics_replicas_uneven,
                "topics_leaders_uneven": s.topics_leaders_uneven,
                "short_of_racks": s.partitions_short_of_racks,
                "seconds": round(best, 3),
            }
        )
    return rows


def table(rows: list[dict]) -> str:
    head = [
        "brokers",
        "partitions",
        "topics",
        "strategy",
        "moves",
        "lower bound",
        "GiB moved",
        "replicas/broker spread",
        "leaders/broker spread",
        "topics uneven (replicas)",
        "topics uneven (leaders)",
        "short of racks",
        "seconds",
    ]
    keys = [
        "brokers",
        "partitions",
        "topics",
        "strategy",
        "moves",
        "lower_bound",
        "gib_moved",
        "replica_spread",
        "leader_spread",
        "topics_replicas_uneven",
        "topics_leaders_uneven",
        "short_of_racks",
        "seconds",
    ]
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        out.append(
            "| " + " | ".join(f"{r[k]:,}" if isinstance(r[k], int) else str(r[k]) for k in keys) + " |"
        )
    return "\n".join(out)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--grid", default=",".join(f"{b}x{p}" for b, p in GRID), help="BROKERSxPARTITIONS,...")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    rows = []
    for cell in a.grid.split(","):
        b, p = (int(x) for x in cell.split("x"))
        rows += run(b, p, a.repeat)
        if not a.json:
            print("\n".join(table(rows[-3:]).splitlines()[2:]), file=sys.stderr, flush=True)
    print(json.dumps(rows, indent=1) if a.json else table(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
