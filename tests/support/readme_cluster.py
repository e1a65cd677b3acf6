"""The small ZooKeeper-era cluster the README's cluster examples run against ($ZK)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.support.zk_cluster import ZkKafka
from tests.support.zkserver import start_zookeeper


@contextmanager
def populated(connect: str) -> Iterator[ZkKafka]:
    """Four brokers in two racks; `orders` (6 partitions, RF 2) with two leaders off their preferred
    replica.  Broker registrations are ephemeral: they live as long as this context."""
    zk = ZkKafka(connect)
    try:
        for b, rack in ((1, "r1"), (2, "r1"), (3, "r2"), (4, "r2")):
            zk.add_broker(b, rack=rack)
        zk.become_controller(1)
        zk.create_topic("orders", {0: [1, 2], 1: [2, 3], 2: [3, 1], 3: [1, 3], 4: [2, 1], 5: [3, 2]})
        zk.set_state("orders", 1, 3, [2, 3])
        zk.set_state("orders", 4, 1, [2, 1])
        yield zk
    finally:
        zk.close()


@contextmanager
def readme_cluster(data_dir: Path) -> Iterator[str]:
    """Start ZooKeeper, populate `/readme`, yield the connect string with that chroot."""
    server = start_zookeeper(data_dir)
    try:
        connect = f"{server.connect}/readme"
        with populated(connect):
            yield connect
    finally:
        server.stop()
