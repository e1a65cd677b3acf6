"""Planning `offsets reset` on a live cluster: which partitions, where they are now, where they go.

Kafka's `--reset-offsets` first decides the partitions (`--topic T` / `T:0,1`, `--all-topics`, or
the plan file's own), refuses groups that are active, reads log-start, log-end and by-time offsets
for those partitions, and only then computes the new offsets (`offsets_report.reset.plan_reset`, pure).
This module does the reading for Kafka-stored groups (`KafkaGroups`) and ZooKeeper-stored ones
(`ZkGroups`), so every front end plans the same way; the CLI only parses options and renders.
"""

from __future__ import annotations

import re
import time
from typing import Any

from kafkatool.cluster.connect import ClusterError
from kafkatool.ops.offsets_report.orders import java_hashmap_order
from kafkatool.ops.offsets_report.reset import ResetError, ResetPlan, ResetSpec, plan_reset

TP = tuple[str, int]
Scope = dict[str, list[int] | None]


def parse_scope(items: list[str]) -> Scope:
    """`t` (all partitions) or `t:0,1,2` as Kafka's --topic of --reset-offsets (items comma-split)."""
    scope: Scope = {}
    current: str | None = None
    for it in items:
        if ":" in it:
            t, _, p = it.partition(":")
            current = t
            parts = scope.setdefault(t, [])
            if p and parts is not None:
                parts.append(_partition(p, it))
        elif re.fullmatch(r"\d+", it) and current is not None and scope.get(current) is not None:
            scope[current].append(int(it))  # type: ignore[union-attr]
        else:
            current = None
            scope[it] = None
    return scope


def _partition(text: str, arg: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise ResetError(f"Invalid partition '{text}' specified in topic arg '{arg}'") from None


def scope_partitions(scope: Scope, topic_partitions: dict[str, list[int]]) -> list[TP]:
    """The partitions a scope names, in the order Kafka's `parseTopicPartitionsToReset` lists them:
    those named `T:0,1` first, then every partition of the topics named whole, topic by topic in the
    `HashMap` order of `describeTopics(...).allTopicNames()` (`topic_partition_hash` ties nothing here).
    `topic_partitions` lists the partitions of the topics named whole."""
    from kafkatool.jvm.hashing import string_hash
    from kafkatool.jvm.java_collections import grown_capacity, hash_order

    named = [(t, p) for t, ps in scope.items() if ps is not None for p in ps]
    whole = [t for t, ps in scope.items() if ps is None]
    for t in whole:
        if t not in topic_partitions:
            raise ResetError(f"topic {t!r}: does not exist")
    topics = hash_order(whole, string_hash, grown_capacity(len(whole)))
    return named + [(t, p) for t in topics for p in topic_partitions[t]]


def plan_group(group: str, spec: ResetSpec, partitions: list[TP], committed: dict[TP, int | None],
               brokers: Any) -> ResetPlan:
    """Read the offsets the scenario needs from the partition leaders, then plan.

    `brokers` None (ZooKeeper-stored groups, no broker answering): only a plan file can be applied,
    as Kafka's ImportZkOffsets did, without checking it against the logs.
    """
    if spec.from_file is not None:
        partitions = list((spec.from_file.get(group) or {}).keys())
    if brokers is None:
        if spec.from_file is None:
            raise ClusterError(f"--{spec.describe()} needs the partitions' log offsets and no broker answered "
                               "(with ZooKeeper alone only --from-file can be applied)")
        plan = plan_reset(group, spec, partitions, committed, {}, {})
        if plan.offsets:
            plan.notes.append("no broker answered: the file's offsets are written as they are, "
                              "not checked against the logs")
        return plan
    earliest = {tp: lo.offset for tp, lo in brokers.log_start_offsets(partitions).items()} if partitions else {}
    latest = {tp: lo.offset for tp, lo in brokers.log_end_offsets(partitions).items()} if partitions else {}
    by_time = None
    ts = spec.to_datetime_ms if spec.to_datetime_ms is not None else (
        int(time.time() * 1000) - spec.by_duration_ms if spec.by_duration_ms is not None else None)
    if ts is not None and partitions:
        by_time = {tp: lo.offset for tp, lo in brokers.list_offsets({tp: ts for tp in partitions}).items()}
    return plan_reset(group, spec, partitions, committed, earliest, latest, by_time)


def plan_kafka(groups: Any, brokers: Any, names: list[str], spec: ResetSpec, scope: Scope,
               all_topics: bool) -> tuple[list[ResetPlan], list[str]]:
    """(plans, refusals) for Kafka-stored groups; a group that is not Empty/Dead is refused."""
    infos = groups.describe(names)
    committed_all = groups.committed(names)
    plans, refused = [], []
    whole = [t for t, ps in scope.items() if ps is None]
    topic_partitions = brokers.metadata(whole).topics if whole else {}
    for g in names:
        info = infos[g]
        if info.state not in ("Empty", "Dead"):
            refused.append(f"Assignments can only be reset if the group '{g}' is inactive, "
                           f"but the current state is {info.state}.")
            continue
        committed = {tp: (c.offset if c is not None else None) for tp, c in committed_all.get(g, {}).items()}
        # --all-topics: the committed offsets' keys, as the admin client's HashMap holds them
        parts = java_hashmap_order(list(committed)) if all_topics else scope_partitions(scope, topic_partitions) if scope else []
        plans.append(plan_group(g, spec, parts, committed, brokers))
    return plans, refused


def plan_zookeeper(zk: Any, brokers: Any, names: list[str], spec: ResetSpec, scope: Scope,
                   all_topics: bool) -> tuple[list[ResetPlan], list[str]]:
    """(plans, refusals) for ZooKeeper-stored groups; a group with registered consumers is refused."""
    plans, refused = [], []
    for g in names:
        ids = zk.members(g)
        if ids:
            refused.append(f"Assignments can only be reset if the group '{g}' is inactive, "
                           f"but it has {len(ids)} registered consumer(s).")
            continue
        committed: dict[TP, int | None] = dict(zk.all_committed(g))
        if all_topics:
            parts = sorted(committed)
        elif scope:
            topic_partitions, _ = zk.partitions([t for t, ps in scope.items() if ps is None])
            parts = scope_partitions(scope, topic_partitions)
        else:
            parts = []
        plans.append(plan_group(g, spec, parts, committed, brokers))
    return plans, refused
