"""Time `reassign --generate` (Kafka's algorithm) and `--strategy minimal` on a large cluster.

The cluster: --brokers brokers (default 100), --topics topics with --partitions partitions in all
(default 100 × 100 = 10,000) at replication factor --rf, currently assigned (Kafka's algorithm, fixed
start) over the first --existing brokers (default 90), i.e. "ten brokers were added, rebalance".

Modes (each the best of --repeat runs):

  library   in this process: Kafka's generate with a seed; the minimal planner; the move summary
  admin     `kafkatool reassign --generate` as a subprocess against fake brokers (tests/support/fake_admin)
            speaking the wire protocol: process start, Metadata/DescribeCluster/DescribeLogDirs, planning
  zk        the same against a real ZooKeeper (needs java and the ZooKeeper jars of pyspark/Debian)

Targets (issue 5): --generate under 2 s, --strategy minimal under 10 s for 100 brokers × 10,000 partitions.
For the subprocess modes `net` subtracts interpreter start-up (a `startup` row: `reassign --help`) and,
for admin, the time the fake brokers (pure Python) spent building and encoding their answers; the
target is checked against `net` there.

    python benchmarks/bench_reassign.py
    python benchmarks/bench_reassign.py --modes library --partitions 2000 --repeat 5 --json
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from kafkatool.cluster.assignment import BrokerMetadata, assign_replicas_to_brokers, generate_kafka  # noqa: E402
from kafkatool.cluster.minimal import plan_minimal  # noqa: E402
from kafkatool.cluster.model import Assignment, TopicPartition  # noqa: E402
from kafkatool.cluster.reassign import summarize  # noqa: E402
from kafkatool.jvm.random import JavaRandom  # noqa: E402

TARGETS = {"kafka": 2.0, "minimal": 10.0}


@dataclass
class Row:
    """Wall seconds; `net` subtracts interpreter start-up and time the fake brokers spent answering."""

    mode: str
    strategy: str
    brokers: int
    partitions: int
    seconds: float
    target: float
    replica_moves: int | None = None
    bytes_to_move: int | None = None
    net: float | None = None

    @property
    def ok(self) -> bool:
        return (self.net if self.net is not None else self.seconds) <= self.target


def build(topics: int, partitions: int, rf: int, existing: int) -> Assignment:
    per = max(1, partitions // topics)
    brokers = [BrokerMetadata(b) for b in range(1, existing + 1)]
    current: Assignment = {}
    for t in range(topics):
        for p, reps in assign_replicas_to_brokers(brokers, per, rf, fixed_start_index=t % existing).items():
            current[TopicPartition(f"topic-{t:04d}", p)] = reps
    return current


def best(fn, repeat: int) -> tuple[float, object]:  # type: ignore[no-untyped-def]
    times, result = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return min(times), result


def bench_library(current: Assignment, n_brokers: int, repeat: int) -> list[Row]:
    topics = sorted({tp.topic for tp in current})
    brokers = [BrokerMetadata(b) for b in range(1, n_brokers + 1)]
    sizes = {tp: 1_000_000 + 37 * i for i, tp in enumerate(sorted(current))}
    rows = []
    secs, proposed = best(lambda: generate_kafka(topics, current, brokers, JavaRandom(42)), repeat)
    s = summarize(current, proposed, brokers, sizes, "kafka")  # type: ignore[arg-type]
    rows.append(Row("library", "kafka", n_brokers, len(current), secs, TARGETS["kafka"], s.replica_moves, s.bytes_to_move))
    secs, proposed = best(lambda: plan_minimal(current, brokers, sizes), repeat)
    s = summarize(current, proposed, brokers, sizes, "minimal")  # type: ignore[arg-type]
    rows.append(Row("library", "minimal", n_brokers, len(current), secs, TARGETS["minimal"], s.replica_moves,
                    s.bytes_to_move))
    return rows


def startup_seconds(repeat: int) -> float:
    """Interpreter start and command import: `kafkatool reassign --help`."""
    secs, _ = best(lambda: subprocess.run([sys.executable, "-m", "kafkatool", "reassign", "--help"],
                                          capture_output=True, timeout=120), repeat)
    return secs


def run_cli(args: list[str], cwd: Path, repeat: int, busy=None) -> tuple[float, dict, float]:  # type: ignore[no-untyped-def,type-arg]
    """Best wall time of the command, its JSON output, and the fake brokers' busy time in that run."""
    fake_busy = [0.0]

    def once() -> dict:  # type: ignore[type-arg]
        before = busy() if busy else 0.0
        res = subprocess.run([sys.executable, "-m", "kafkatool", "reassign", *args, "--format", "json",
                              "--no-plan-file"], cwd=cwd, capture_output=True, text=True, timeout=600)
        if res.returncode != 0:
            raise SystemExit(f"kafkatool failed ({res.returncode}): {res.stderr.strip()}")
        fake_busy[0] = (busy() if busy else 0.0) - before
        return json.loads(res.stdout)

    times, doc, busies = [], None, []
    for _ in range(repeat):
        start = time.perf_counter()
        doc = once()
        times.append(time.perf_counter() - start)
        busies.append(fake_busy[0])
    i = min(range(repeat), key=lambda j: times[j])
    return times[i], doc, busies[i]  # type: ignore[return-value]


def cli_rows(mode: str, connect: list[str], current: Assignment, n_brokers: int, repeat: int,
             busy=None) -> list[Row]:  # type: ignore[no-untyped-def]
    topics = sorted({tp.topic for tp in current})
    work = Path(tempfile.mkdtemp(prefix="bench-reassign-"))
    (work / "topics.json").write_text(json.dumps({"version": 1, "topics": [{"topic": t} for t in topics]}))
    broker_list = ",".join(str(b) for b in range(1, n_brokers + 1))
    rows = []
    startup = startup_seconds(repeat)
    for strategy in ("kafka", "minimal"):
        args = [*connect, "--timeout", "60", "--generate", "--topics-to-move-json-file", "topics.json",
                "--broker-list", broker_list, "--strategy", strategy]
        if strategy == "kafka":
            args += ["--seed", "42"]
        secs, doc, fake = run_cli(args, work, repeat, busy)
        rows.append(Row(mode, strategy, n_brokers, len(current), secs, TARGETS[strategy],
                        doc["summary"]["replica_moves"], doc["summary"]["bytes_to_move"],
                        net=max(0.0, secs - startup - fake)))
    rows.append(Row(mode, "startup", n_brokers, len(current), startup, float("inf")))
    return rows


def bench_admin(current: Assignment, n_brokers: int, repeat: int) -> list[Row]:
    from tests.support.fake_admin import FakeKafka

    with FakeKafka({b: None for b in range(1, n_brokers + 1)}) as k:
        by_topic: dict[str, dict[int, list[int]]] = {}
        for tp, reps in current.items():
            by_topic.setdefault(tp.topic, {})[tp.partition] = reps
        for t, a in by_topic.items():
            k.add_topic(t, a, size=1_000_000)
        return cli_rows("admin", ["--bootstrap-server", k.bootstrap], current, n_brokers, repeat,
                        busy=lambda: k.busy_seconds)


def bench_zk(current: Assignment, n_brokers: int, repeat: int) -> list[Row]:
    from tests.support.zk_cluster import ZkKafka
    from tests.support.zkserver import start_zookeeper, zookeeper_classpath

    if zookeeper_classpath() is None:
        print("zk: skipped (no ZooKeeper jars)", file=sys.stderr)
        return []
    server = start_zookeeper(Path(tempfile.mkdtemp(prefix="bench-zk-")))
    try:
        k = ZkKafka(f"{server.connect}/bench")
        for b in range(1, n_brokers + 1):
            k.add_broker(b)
        k.become_controller(1)
        by_topic: dict[str, dict[int, list[int]]] = {}
        for tp, reps in current.items():
            by_topic.setdefault(tp.topic, {})[tp.partition] = reps
        for t, a in by_topic.items():
            k.create_topic(t, a, leaders=False)
        rows = cli_rows("zk", ["--zookeeper", k.connect], current, n_brokers, repeat)
        k.close()
        return rows
    finally:
        server.stop()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--brokers", type=int, default=100)
    ap.add_argument("--existing", type=int, default=90, help="brokers the partitions are on now")
    ap.add_argument("--topics", type=int, default=100)
    ap.add_argument("--partitions", type=int, default=10_000, help="partitions in all")
    ap.add_argument("--rf", type=int, default=3)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--modes", default="library,admin,zk")
    ap.add_argument("--json", action="store_true", help="one JSON object per row")
    args = ap.parse_args()
    current = build(args.topics, args.partitions, args.rf, args.existing)
    rows: list[Row] = []
    for mode in args.modes.split(","):
        rows += {"library": bench_library, "admin": bench_admin, "zk": bench_zk}[mode](current, args.brokers, args.repeat)
    for r in rows:
        if args.json:
            print(json.dumps({**asdict(r), "ok": r.ok}))
        else:
            net = f", net {r.net:6.3f} s" if r.net is not None else ""
            target = f"target {r.target:g} s {'ok' if r.ok else 'MISSED'}" if r.target != float("inf") else "no target"
            print(f"{r.mode:<8} {r.strategy:<8} {r.brokers} brokers x {r.partitions} partitions: {r.seconds:7.3f} s{net} "
                  f"({target}); replica moves {r.replica_moves}, bytes {r.bytes_to_move}")


if __name__ == "__main__":
    main()
