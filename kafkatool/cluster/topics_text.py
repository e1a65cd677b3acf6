"""What `kafka-topics.sh --list/--describe` prints, per release, and the rows of `--format json|csv`.

Admin API text is Kafka 3.3's TopicCommand (`Topic: X\tTopicId: …\tPartitionCount: …`) or, with
release 4.0, 4.0's (the same plus `\tElr: …\tLastKnownElr: …` on partition lines, `N/A` when the
broker did not answer DescribeTopicPartitions).  ZooKeeper text is Kafka 2.1's ZooKeeper-mode
TopicCommand (`Topic:X\tPartitionCount:N\t…`, `MarkedForDeletion`, `- marked for deletion` in lists).
The order of topics is the tool's: sorted names for ZooKeeper; for the Admin API the iteration order
of the `HashMap` that `DescribeTopicsResult.allTopicNames()` returns.
"""

from __future__ import annotations

from collections.abc import Sequence

from kafkatool.cluster.topics import DescribeFilter, PartitionDescription, TopicDescription
from kafkatool.jvm import java_collections
from kafkatool.release import Release

ZERO_UUID = "AAAAAAAAAAAAAAAAAAAAAA"


def admin_topic_order(names: Sequence[str], release: Release) -> list[str]:
    """`allTopicNames()`' order: the client fills `new HashMap<>(n)` with the sorted names; 4.0 copies it
    (`new HashMap<>(map)`); `DescribeTopicsResult.all` copies that into another `new HashMap<>(n)`."""
    n = len(names)
    if n == 0:
        return []
    cap = java_collections.grown_capacity(n, java_collections.table_size_for(n))
    order = java_collections.string_set_order(sorted(names), cap)
    if release.at_least("4.0"):
        copy = java_collections.table_size_for(int(n / java_collections.LOAD_FACTOR + 1))  # HashMap(Map): no 16 floor
        order = java_collections.string_set_order(order, java_collections.grown_capacity(n, copy))
    return java_collections.string_set_order(order, cap)


def create_partitions_result_order(names: Sequence[str]) -> list[str]:
    """The order `CreatePartitionsResult.all()` waits on its topics, so the refusal Kafka's tool prints when
    several fail: the client fills `new HashMap<>(n)` (here in sorted order) and hands out a copy."""
    n = len(names)
    if n == 0:
        return []
    order = java_collections.string_set_order(sorted(names), java_collections.grown_capacity(
        n, java_collections.table_size_for(n)))
    copy = java_collections.table_size_for(int(n / java_collections.LOAD_FACTOR + 1))
    return java_collections.string_set_order(order, java_collections.grown_capacity(n, copy))


def config_entries_order(names: Sequence[str]) -> list[str]:
    """`Config.entries()`: a `HashMap` filled with every entry DescribeConfigs returned, in its order."""
    return java_collections.string_set_order(list(names))


def _ids(brokers: Sequence[int] | None) -> str:
    return ",".join(str(b) for b in brokers or [])


def _elr(value: list[int] | None) -> str:
    return "N/A" if value is None else _ids(value)


def list_text(topics: Sequence[str], marked: set[str] | None = None) -> str:
    """--list: Admin API (`mkString("\\n")` then println: one blank line when empty); ZooKeeper marks deletions."""
    if marked is None:
        return "\n".join(topics) + "\n"
    return "".join(f"{t} - marked for deletion\n" if t in marked else f"{t}\n" for t in topics)


def _admin_header(td: TopicDescription) -> str:
    configs = ",".join(f"{c.name}={c.value}" for c in td.overrides())
    line = f"Topic: {td.name}"
    if td.topic_id and td.topic_id != ZERO_UUID:
        line += f"\tTopicId: {td.topic_id}"
    line += f"\tPartitionCount: {len(td.partitions)}\tReplicationFactor: {td.replication_factor()}\tConfigs: {configs}"
    return line + ("\tMarkedForDeletion: true" if td.marked_for_deletion else "") + "\n"


def _admin_partition(td: TopicDescription, p: PartitionDescription, release: Release) -> str:
    line = (f"\tTopic: {td.name}\tPartition: {p.partition}\tLeader: {'none' if p.leader is None else p.leader}"
            f"\tReplicas: {_ids(p.replicas)}\tIsr: {_ids(p.isr)}")
    if p.reassigning:
        line += f"\tAdding Replicas: {_ids(p.adding)}\tRemoving Replicas: {_ids(p.removing)}"
    if release.at_least("4.0"):
        line += f"\tElr: {_elr(p.elr)}\tLastKnownElr: {_elr(p.last_known_elr)}"
    return line + ("\tMarkedForDeletion: true" if td.marked_for_deletion else "") + "\n"


def describe_admin_text(
    topics: Sequence[TopicDescription], flt: DescribeFilter, live: set[int], release: Release
) -> tuple[str, int]:
    """Kafka 3.3/4.0 `--describe` over the Admin API; returns the text and the partitions a filter matched."""
    out: list[str] = []
    matched = 0
    for td in topics:
        if flt.describe_configs and (not flt.with_overrides or td.overrides()):
            out.append(_admin_header(td))
        if flt.describe_partitions:
            for p in td.partitions:
                hit = bool(flt.reasons(td, p, live))
                matched += hit
                if flt.describe_configs or hit:
                    out.append(_admin_partition(td, p, release))
        if flt.with_overrides and td.overrides():
            matched += 1
    return "".join(out), matched


def describe_zk_text(topics: Sequence[TopicDescription], flt: DescribeFilter, live: set[int]) -> tuple[str, int]:
    """Kafka 2.1's ZooKeeper-mode `--describe` (no min-ISR filters there; ours use the topic's override)."""
    out: list[str] = []
    matched = 0
    for td in topics:
        if flt.describe_configs and (not flt.with_overrides or td.configs):
            configs = ",".join(f"{c.name}={c.value}" for c in td.configs)
            out.append(f"Topic:{td.name}\tPartitionCount:{len(td.partitions)}\tReplicationFactor:"
                       f"{len(td.partitions[0].replicas) if td.partitions else 0}\tConfigs:{configs}"
                       + ("\tMarkedForDeletion:true" if td.marked_for_deletion else "") + "\n")
        if flt.describe_partitions:
            for p in td.partitions:
                hit = bool(flt.reasons(td, p, live, legacy=True))
                matched += hit
                if flt.describe_configs or hit:
                    mark = "\tMarkedForDeletion: true" if td.marked_for_deletion and not flt.describe_configs else ""
                    out.append(f"\tTopic: {td.name}\tPartition: {p.partition}\tLeader: "
                               f"{'none' if p.leader is None else p.leader}\tReplicas: {_ids(p.replicas)}"
                               f"\tIsr: {_ids(p.isr)}{mark}\n")
        if flt.with_overrides and td.configs:
            matched += 1
    return "".join(out), matched


def topic_row(td: TopicDescription) -> dict[str, object]:
    return {
        "type": "topic", "topic": td.name, "topic_id": td.topic_id, "partitions": len(td.partitions),
        "replication_factor": td.replication_factor(), "internal": td.internal,
        "marked_for_deletion": td.marked_for_deletion,
        "configs": {c.name: c.value for c in td.overrides()},
    }


def partition_row(td: TopicDescription, p: PartitionDescription, reasons: list[str]) -> dict[str, object]:
    return {
        "type": "partition", "topic": td.name, "partition": p.partition, "leader": p.leader,
        "replicas": list(p.replicas), "isr": list(p.isr), "adding_replicas": p.adding, "removing_replicas": p.removing,
        "elr": p.elr, "last_known_elr": p.last_known_elr, "findings": reasons,
    }


def describe_rows(topics: Sequence[TopicDescription], flt: DescribeFilter, live: set[int],
                  legacy: bool = False) -> tuple[list[dict[str, object]], int]:
    """One `topic` row per topic shown and one `partition` row per partition shown (the same selection as text)."""
    rows: list[dict[str, object]] = []
    matched = 0
    for td in topics:
        if flt.with_overrides and not td.overrides():
            continue
        if flt.describe_configs:
            rows.append(topic_row(td))
        if flt.with_overrides:
            matched += 1
        if flt.describe_partitions:
            for p in td.partitions:
                reasons = flt.reasons(td, p, live, legacy)
                matched += bool(reasons)
                if flt.describe_configs or reasons:
                    rows.append(partition_row(td, p, reasons))
    return rows, matched
