"""Groups of the old ZooKeeper-based consumers (Kafka 0.8 - 2.x): `/consumers/<group>/...`.

What `ConsumerGroupCommand`'s `ZkConsumerGroupService` (Kafka before 2.0) read and wrote: the
`ids`, `owners` and `offsets` znodes, next to the brokers, topics and leaders that
`kafkatool.cluster.zk.ZkCluster` reads.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable
from typing import Any

from kafkatool.cluster.connect import DEFAULT_TIMEOUT, ClusterError, ZkDataError
from kafkatool.cluster.groups.model import TP
from kafkatool.cluster.model import Broker


def _offset(path: str, text: str) -> int:
    """An offset znode's value, as the old consumer writes it (a decimal number)."""
    value = text.strip()
    if not re.fullmatch(r"-?\d{1,19}", value):
        raise ZkDataError(f"ZooKeeper znode {path}: {text!r} is not an offset")
    return int(value)


class ZkGroups:
    """`/consumers/<group>/{ids,owners,offsets}`, next to the cluster metadata `ZkCluster` reads.

    Brokers, topics and leaders come from `kafkatool.cluster.zk.ZkCluster` (shared with the
    reassign tools); this class adds the consumer znodes, read in one round trip each batch.
    """

    def __init__(self, cluster: Any) -> None:
        self.cluster = cluster

    @classmethod
    def connect(cls, connect: str, timeout: float = DEFAULT_TIMEOUT) -> ZkGroups:
        from kafkatool.cluster.zk import ZkCluster

        return cls(ZkCluster.connect(connect, timeout))

    def close(self) -> None:
        self.cluster.close()

    def _text(self, paths: list[str]) -> list[str | None]:
        return [None if d is None else d.decode("utf-8", "replace") for d in self.cluster._get_many(paths)]

    def _exists(self, path: str) -> bool:
        return self.cluster._get(path) is not None

    def list_groups(self) -> list[str]:
        return sorted(self.cluster._children("/consumers"))

    def exists(self, group: str) -> bool:
        return self._exists(f"/consumers/{group}")

    def topics(self, group: str) -> list[str]:
        """The group's topics as ConsumerOffsetChecker finds them: children of `owners/` (else `offsets/`)."""
        owners = self.cluster._children(f"/consumers/{group}/owners")
        return sorted(owners or self.cluster._children(f"/consumers/{group}/offsets"))

    def offset_topics(self, group: str) -> list[str]:
        return sorted(self.cluster._children(f"/consumers/{group}/offsets"))

    def brokers(self) -> dict[int, Broker]:
        return {b.id: b for b in self.cluster.brokers()}

    def partitions(self, topics: Iterable[str]) -> tuple[dict[str, list[int]], dict[TP, int | None]]:
        """(partition ids per topic, leader per partition or None) for the topics that exist."""
        existing = set(self.cluster.topics())
        wanted = [t for t in dict.fromkeys(topics) if t in existing]
        states = self.cluster.partition_states(wanted) if wanted else {}
        parts: dict[str, list[int]] = defaultdict(list)
        leaders: dict[TP, int | None] = {}
        for tp, st in states.items():
            parts[tp.topic].append(tp.partition)
            leaders[(tp.topic, tp.partition)] = st.leader if st.leader >= 0 else None
        return {t: sorted(ps) for t, ps in parts.items()}, leaders

    def committed(self, group: str, partitions: dict[str, list[int]]) -> dict[TP, int | None]:
        """Offsets from `/consumers/g/offsets/t/p`: -1 when the topic dir exists but the partition
        has none (ConsumerOffsetChecker prints it as -1 with lag `unknown`), None when nothing exists."""
        out: dict[TP, int | None] = {}
        tps = [(t, p) for t in partitions for p in partitions[t]]
        dirs = {t: self._exists(f"/consumers/{group}/offsets/{t}") for t in partitions}
        datas = self._text([f"/consumers/{group}/offsets/{t}/{p}" for t, p in tps])
        for (t, p), raw in zip(tps, datas, strict=True):
            if raw is None:
                out[(t, p)] = -1 if dirs[t] else None
                continue
            out[(t, p)] = _offset(f"/consumers/{group}/offsets/{t}/{p}", raw)
        return out

    def owners(self, group: str, tps: list[TP]) -> dict[TP, str | None]:
        datas = self._text([f"/consumers/{group}/owners/{t}/{p}" for t, p in tps])
        return dict(zip(tps, datas, strict=True))

    def all_committed(self, group: str) -> dict[TP, int]:
        """Every offset znode of a group (what ExportZkOffsets exports); a znode that is not a
        partition number or does not hold an offset stops the read (ZkDataError naming it)."""
        tps: list[TP] = []
        for t in self.offset_topics(group):
            for p in self.cluster._children(f"/consumers/{group}/offsets/{t}"):
                if not p.isdigit():
                    raise ZkDataError(f"ZooKeeper znode /consumers/{group}/offsets/{t}/{p}: {p!r} is not a partition number")
                tps.append((t, int(p)))
        datas = self._text([f"/consumers/{group}/offsets/{t}/{p}" for t, p in tps])
        return {(t, p): _offset(f"/consumers/{group}/offsets/{t}/{p}", d)
                for (t, p), d in zip(tps, datas, strict=True) if d is not None}

    def members(self, group: str) -> list[str]:
        """Registered consumer ids (`/consumers/g/ids`): non-empty means the group is active."""
        return sorted(self.cluster._children(f"/consumers/{group}/ids"))

    def commit(self, group: str, offsets: dict[TP, int]) -> None:
        """Write offset znodes (created with parents when missing), as ImportZkOffsets does."""
        zk = self.cluster.client
        try:
            for (t, p), off in sorted(offsets.items()):
                path = f"/consumers/{group}/offsets/{t}/{p}"
                data = str(off).encode()
                if zk.exists(path) is None:
                    zk.create(path, data, makepath=True)
                else:
                    zk.set(path, data)
        except Exception as exc:  # noqa: BLE001 - kazoo raises many types; all mean "not written"
            raise ClusterError(f"ZooKeeper: cannot write offsets of {group}: {exc}") from None
