"""Partition owners of ZooKeeper-era consumer groups, and Kafka's VerifyConsumerRebalance check.

A high-level consumer (Kafka 0.8–2.x, offsets in ZooKeeper) registers `/consumers/G/ids/<id>`
(`{"subscription":{"topic":threads},"pattern":"static"|"white_list"|"black_list",…}`) and, after a
rebalance, claims each partition with an ephemeral `/consumers/G/owners/T/P` holding its thread id
`<id>-<n>`.  `kafka.tools.VerifyConsumerRebalance` checked, for every topic some consumer subscribes
to, that each partition of `/brokers/topics/T` has an owner znode naming a live consumer thread of
the group.  ZooKeeper itself makes "exactly one" hold: a partition has one owner znode or none.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from kafkatool.cluster.topics import is_internal


@dataclass
class OwnerRow:
    topic: str
    partition: int
    owner: str | None
    status: str  # ok | no-owner | not-a-member | no-consumers | not-subscribed

    def row(self) -> dict[str, object]:
        return {"topic": self.topic, "partition": self.partition, "owner": self.owner, "status": self.status}


@dataclass
class OwnersReport:
    group: str
    consumers: dict[str, dict[str, int]]  # consumer id -> {topic or pattern: threads}
    rows: list[OwnerRow] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # VerifyConsumerRebalance's error lines

    @property
    def ok(self) -> bool:
        return not self.problems


def _json(data: bytes | None) -> dict[str, Any]:
    try:
        got = json.loads((data or b"").decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return {}
    return got if isinstance(got, dict) else {}


def consumer_threads(registrations: dict[str, dict[str, Any]], all_topics: list[str]) -> dict[str, set[str]]:
    """`ZkUtils.getConsumersPerTopic`: thread ids (`<consumer>-<n>`) per subscribed topic."""
    out: dict[str, set[str]] = {}
    for consumer, reg in registrations.items():
        pattern = reg.get("pattern", "static")
        for key, count in (reg.get("subscription") or {}).items():
            if pattern == "static":
                topics = [key]
            else:
                regex = re.compile(key.replace(",", "|"))
                topics = [t for t in all_topics if bool(regex.fullmatch(t)) == (pattern == "white_list")
                          and not is_internal(t)]
            for t in topics:
                out.setdefault(t, set()).update(f"{consumer}-{n}" for n in range(int(count)))
    return out


def read_owners(cluster: Any, group: str) -> OwnersReport:
    """Registrations, partitions and owner znodes of `group`, checked as VerifyConsumerRebalance did."""
    base = f"/consumers/{group}"
    ids = sorted(cluster.children(f"{base}/ids"))
    registrations = {c: _json(d) for c, d in zip(ids, cluster.read_many([f"{base}/ids/{c}" for c in ids]), strict=True)}
    all_topics = cluster.topics()
    threads = consumer_threads(registrations, all_topics)
    owned_topics = sorted(cluster.children(f"{base}/owners"))
    report = OwnersReport(group, {c: dict(r.get("subscription") or {}) for c, r in registrations.items()})
    topic_datas = cluster.read_many([f"/brokers/topics/{t}" for t in sorted(threads)])
    for topic, data in zip(sorted(threads), topic_datas, strict=True):
        partitions = sorted(int(p) for p in (_json(data).get("partitions") or {}))
        owners_dir = f"{base}/owners/{topic}"
        with_owner = set(cluster.children(owners_dir))
        if not with_owner:
            report.problems.append(f"No owners for any partitions for topic {topic}")
        owners = cluster.read_many([f"{owners_dir}/{p}" for p in partitions])
        for p, owner_data in zip(partitions, owners, strict=True):
            owner = None if owner_data is None else owner_data.decode("utf-8", "replace")
            if owner is None:
                report.problems.append(f"No owner for partition [{topic},{p}]")
                status = "no-owner"
            elif owner not in threads[topic]:
                report.problems.append(f"Owner {owner} for partition [{topic},{p}] is not a valid member of "
                                       f"consumer group {group}")
                status = "not-a-member"
            else:
                status = "ok"
            report.rows.append(OwnerRow(topic, p, owner, status))
    for topic in owned_topics:  # owners left for topics no live consumer subscribes to (not Kafka's check)
        if topic in threads:
            continue
        owners_dir = f"{base}/owners/{topic}"
        parts = sorted(int(p) for p in cluster.children(owners_dir) if p.isdigit())
        for p, d in zip(parts, cluster.read_many([f"{owners_dir}/{p}" for p in parts]), strict=True):
            report.rows.append(OwnerRow(topic, p, None if d is None else d.decode("utf-8", "replace"), "not-subscribed"))
    return report


def owners_text(report: OwnersReport, verify: bool) -> str:
    """A table of owners; with `verify`, Kafka's problems and its last line."""
    header = ("TOPIC", "PARTITION", "OWNER", "STATUS")
    cells = [header] + [(r.topic, str(r.partition), r.owner or "-", r.status) for r in report.rows]
    widths = [max(len(c[i]) for c in cells) for i in range(4)]
    lines = ["  ".join(c[i].ljust(widths[i]) for i in range(4)).rstrip() for c in cells]
    if not report.rows:
        lines = [f"Consumer group {report.group} has no registered consumers and no partition owners."]
    if verify:
        lines += report.problems
        lines.append("Rebalance operation successful !" if report.ok else "Rebalance operation failed !")
    return "\n".join(lines) + "\n"
