"""Streams groups (KIP-1071) on a live cluster: what Kafka 4.x's `kafka-streams-groups.sh` asks.

StreamsGroupDescribe (one request per coordinator) gives the group's state, epochs, topology
(each subtopology's source and repartition-source topics) and members with their tasks; the
offsets view adds the group's committed offsets (OffsetFetch) and the log-start and log-end
offsets of the partitions of the members' active tasks (ListOffsets), as the tool computes them.
kafka-python has no classes for the API: they are built from the spec's field layout
(`schemas/StreamsGroupDescribe*.json`).  Brokers without the API (before Kafka 4.2: 4.1 hides its unstable version) are named.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kafkatool.cluster import schemas
from kafkatool.cluster.connect import ClusterInputError
from kafkatool.cluster.model import Broker
from kafkatool.cluster.share_groups import ShareGroups, _raise_if_moved

__all__ = ["StreamsGroup", "StreamsMember", "StreamsGroups", "StreamsGroupsUnsupported"]

Tasks = list[tuple[str, list[int]]]  # (subtopology id, partitions) in the broker's order


StreamsGroupDescribeRequest, StreamsGroupDescribeResponse = schemas.api_messages("StreamsGroupDescribe")


class StreamsGroupsUnsupported(ClusterInputError):
    """The brokers have no StreamsGroupDescribe (Kafka before 4.2): exit 2."""


@dataclass(slots=True)
class StreamsMember:
    member_id: str
    member_epoch: int
    process_id: str
    client_id: str
    host: str
    is_classic: bool
    active: Tasks = field(default_factory=list)
    standby: Tasks = field(default_factory=list)
    warmup: Tasks = field(default_factory=list)
    target_active: Tasks = field(default_factory=list)
    target_standby: Tasks = field(default_factory=list)
    target_warmup: Tasks = field(default_factory=list)


@dataclass(slots=True)
class StreamsGroup:
    group: str
    state: str
    coordinator: Broker | None = None
    group_epoch: int = -1
    assignment_epoch: int = -1
    topology_epoch: int = -1
    assignor: str | None = None
    members: list[StreamsMember] = field(default_factory=list)
    #: subtopology id -> its source topics then its repartition-source topics (the tool's lookup)
    source_topics: dict[str, list[str]] = field(default_factory=dict)
    error: str | None = None
    #: the subtopologies' source topics alone: the "input topics" a reset may move
    input_topics: set[str] = field(default_factory=set)


def _tasks(items: Any) -> Tasks:
    return [(t.subtopology_id, list(t.partitions)) for t in items or []]


class StreamsGroups(ShareGroups):
    """StreamsGroupDescribe over a `KafkaGroups` connection (ListGroups comes from `ShareGroups`)."""

    _DESCRIBE = StreamsGroupDescribeRequest
    _DESCRIBE_API = "StreamsGroupDescribe"
    _SINCE = (4, 2)
    _KIND = "streams"
    _UNSUPPORTED = StreamsGroupsUnsupported

    def describe(self, groups: list[str]) -> dict[str, StreamsGroup]:  # type: ignore[override]
        """StreamsGroupDescribe per coordinator; a group the broker does not know reads as "Dead"."""
        self.require()
        if not groups:
            return {}
        raw, coords = self._describe_raw(groups)
        out: dict[str, StreamsGroup] = {}
        for g in groups:
            dg = raw.get(g)
            if dg is None or dg.error_code:
                out[g] = StreamsGroup(g, "Dead", coords.get(g), error=self._dead_error(dg))
                continue
            topo = dg.topology
            sources = {s.subtopology_id: list(s.source_topics or []) + [t.name for t in s.repartition_source_topics or []]
                       for s in (topo.subtopologies or [] if topo is not None else [])}
            members = [StreamsMember(m.member_id, m.member_epoch, m.process_id, m.client_id, m.client_host, m.is_classic,
                                     _tasks(m.assignment.active_tasks), _tasks(m.assignment.standby_tasks),
                                     _tasks(m.assignment.warmup_tasks), _tasks(m.target_assignment.active_tasks),
                                     _tasks(m.target_assignment.standby_tasks), _tasks(m.target_assignment.warmup_tasks))
                       for m in dg.members]
            inputs = {t for s in (topo.subtopologies or [] if topo is not None else []) for t in s.source_topics or []}
            out[g] = StreamsGroup(g, dg.group_state, coords.get(g), dg.group_epoch, dg.assignment_epoch,
                                  topo.epoch if topo is not None else -1, getattr(dg, "assignor_name", None),
                                  members, sources, None, inputs)
        return out


def delete_offsets(groups: StreamsGroups, group: str, partitions: list[tuple[str, int]]) -> tuple[int, dict[tuple[str, int], int]]:
    """OffsetDelete (what `Admin.deleteStreamsGroupOffsets` sends): (top-level error code, partition -> code)."""
    from kafka.protocol.consumer.group import OffsetDeleteRequest

    by_topic: dict[str, list[int]] = {}
    for t, p in partitions:
        by_topic.setdefault(t, []).append(p)
    T = OffsetDeleteRequest.OffsetDeleteRequestTopic
    request = OffsetDeleteRequest(group_id=group, topics=[
        T(name=t, partitions=[T.OffsetDeleteRequestPartition(partition_index=p) for p in ps]) for t, ps in by_topic.items()])
    resp = groups.groups._call("OffsetDelete", lambda: groups._to_coordinator(group, request), groups=[group])
    _raise_if_moved(resp.error_code)
    out = {(t.name, p.partition_index): p.error_code for t in resp.topics for p in t.partitions}
    return resp.error_code, out
