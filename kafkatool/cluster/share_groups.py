"""Groups of every type on a live cluster: ListGroups with types, and share groups (KIP-932).

What Kafka 4.x's `kafka-groups.sh` and `kafka-share-groups.sh` ask the brokers, through the
connection of a `KafkaGroups` (its --timeout deadline and coordinator retries):

* every group with its type (classic, consumer, share, streams), protocol type and state:
  ListGroups v5 to each broker (`Admin.listGroups`);
* share groups: ShareGroupDescribe (state, epochs, members and their assignments),
  DescribeShareGroupOffsets (each partition's start offset, leader epoch and, from version 1 /
  Kafka 4.2, lag), AlterShareGroupOffsets (reset; the group must be empty),
  DeleteShareGroupOffsets (per topic) and DeleteGroups — one request per coordinator.

kafka-python 3.0 has no classes for the share-group APIs: they are built by its JSON-schema
machinery from the field layout of Kafka's message specs (`schemas/*.json`), as
`kafkatool.cluster.kip848` does for ConsumerGroupDescribe.  A broker without ShareGroupDescribe
(before Kafka 4.1) gets one line naming what it lacks (`ShareGroupsUnsupported`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kafkatool.cluster import schemas
from kafkatool.cluster.connect import ClusterError, ClusterInputError
from kafkatool.cluster.groups import KafkaGroups
from kafkatool.cluster.model import Broker

__all__ = [
    "GroupListing", "ShareGroup", "ShareMember", "ShareOffset", "ShareGroupsUnsupported", "ShareGroups",
    "SHARE_GROUP_DESCRIBE",
]

TP = tuple[str, int]
SHARE_GROUP_DESCRIBE = 77
GROUP_ID_NOT_FOUND = 69


ShareGroupDescribeRequest, ShareGroupDescribeResponse = schemas.api_messages("ShareGroupDescribe")
DescribeShareGroupOffsetsRequest, DescribeShareGroupOffsetsResponse = schemas.api_messages("DescribeShareGroupOffsets")
AlterShareGroupOffsetsRequest, AlterShareGroupOffsetsResponse = schemas.api_messages("AlterShareGroupOffsets")
DeleteShareGroupOffsetsRequest, DeleteShareGroupOffsetsResponse = schemas.api_messages("DeleteShareGroupOffsets")


class ShareGroupsUnsupported(ClusterInputError):
    """The brokers have no share-group API (Kafka before 4.1): exit 2, before anything is asked."""


@dataclass(frozen=True, slots=True)
class GroupListing:
    """One row of ListGroups: `group_type` is "" when the broker does not say (ListGroups before v5)."""

    group: str
    group_type: str
    protocol_type: str
    state: str


@dataclass(slots=True)
class ShareMember:
    member_id: str
    client_id: str
    host: str
    member_epoch: int
    rack: str | None = None
    subscribed: list[str] = field(default_factory=list)
    assignment: list[TP] = field(default_factory=list)


@dataclass(slots=True)
class ShareGroup:
    """ShareGroupDescribe's answer for one group (`state` "Dead" when the broker does not know it)."""

    group: str
    state: str
    coordinator: Broker | None = None
    group_epoch: int = -1
    assignment_epoch: int = -1
    members: list[ShareMember] = field(default_factory=list)
    error: str | None = None  # e.g. "Group orders-app is not a share group."


@dataclass(frozen=True, slots=True)
class ShareOffset:
    """A share partition's state: None fields are unknown (no start offset yet, lag before 4.2)."""

    start_offset: int | None
    leader_epoch: int | None
    lag: int | None


#: error code -> (Java exception class, Kafka's default message): what the tools print for a group
#: the brokers refused to delete (`Throwable.toString`).
_JAVA_ERRORS = {
    3: ("UnknownTopicOrPartitionException", "This server does not host this topic-partition."),
    15: ("CoordinatorNotAvailableException", "The coordinator is not available."),
    16: ("NotCoordinatorException", "This is not the correct coordinator."),
    24: ("InvalidGroupIdException", "The group id is invalid."),
    29: ("TopicAuthorizationException", "Topic authorization failed."),
    30: ("GroupAuthorizationException", "Group authorization failed."),
    68: ("GroupNotEmptyException", "The group is not empty."),
    69: ("GroupIdNotFoundException", "The group id does not exist."),
    86: ("GroupSubscribedToTopicException",
         "Deleting offsets of a topic is forbidden while the consumer group is actively subscribed to it."),
}


def java_error_text(code: int) -> str:
    """`org.apache.kafka.common.errors.GroupNotEmptyException: The group is not empty.` for an error code."""
    if code in _JAVA_ERRORS:
        cls, message = _JAVA_ERRORS[code]
        return f"org.apache.kafka.common.errors.{cls}: {message}"
    return _error_text(code, None)


def _error_text(code: int, message: str | None) -> str:
    if message:
        return message
    from kafka.errors import for_code

    err = for_code(code)
    return str(getattr(err, "description", "") or err.__name__)


class ShareGroups:
    """The share-group and all-types requests, over a `KafkaGroups` connection."""

    def __init__(self, groups: KafkaGroups) -> None:
        self.groups = groups
        self.admin = groups.admin

    # -- support -------------------------------------------------------------------------------

    #: the describe request the group type needs, its API name, the first release with it and the refusal
    _DESCRIBE: Any = ShareGroupDescribeRequest
    _DESCRIBE_API = "ShareGroupDescribe"
    _SINCE = (4, 1)
    _KIND = "share"
    _UNSUPPORTED: type[ClusterInputError] = ShareGroupsUnsupported

    def supported(self) -> bool:
        try:
            return int(self.admin._manager.broker_version_data.api_version(self._DESCRIBE)) >= 0
        except Exception:  # noqa: BLE001 - IncompatibleBrokerVersion and the like: the broker lacks it
            return False

    def require(self, where: str = "") -> None:
        """Refuse (one line naming what the brokers lack, and what they are) unless the describe API is there."""
        if self.supported():
            return
        from kafkatool.cluster.versions import describe_broker
        from kafkatool.release import Release

        data = getattr(self.admin._manager, "broker_version_data", None)
        table = dict(getattr(data, "api_versions", None) or {})
        brokers = f"the brokers at {where}" if where else "the brokers"
        since = Release(*self._SINCE)
        raise self._UNSUPPORTED(f"{self._KIND} groups need {self._DESCRIBE_API} (Kafka >= {since}); {brokers} "
                                f"are {describe_broker(table, since)}")

    # -- every type ----------------------------------------------------------------------------

    def list_all(self, types: list[str] | None = None, states: list[str] | None = None) -> list[GroupListing]:
        """Every group on every broker (ListGroups, brokers in id order, each broker's groups as it lists them)."""
        kg = self.groups
        brokers = sorted(kg.brokers.metadata(refresh=True).brokers)
        listed = kg._call("ListGroups", lambda: self.admin._async_list_groups(
            broker_ids=brokers, states_filter=states or None, types_filter=types or None))
        return [GroupListing(g["group_id"], g.get("group_type") or "", g.get("protocol_type") or "",
                             g.get("group_state") or "") for g in listed]

    # -- share groups --------------------------------------------------------------------------

    async def _by_coordinator(self, groups: list[str]) -> dict[int, list[str]]:
        by: dict[int, list[str]] = {}
        for g, c in (await self.admin._find_coordinator_ids(groups)).items():
            by.setdefault(c, []).append(g)
        return by

    def _describe_raw(self, groups: list[str]) -> tuple[dict[str, Any], dict[str, Broker | None]]:
        """The describe request per coordinator: each group's answer by id (None for one not answered), and
        each group's coordinator."""
        mgr = self.admin._manager

        async def describe() -> dict[str, Any]:
            out: dict[str, Any] = {}
            for c, gs in (await self._by_coordinator(groups)).items():
                resp = await mgr.send(self._DESCRIBE(group_ids=gs, include_authorized_operations=False), node_id=c)
                for dg in resp.groups:
                    _raise_if_moved(dg.error_code)
                    out[dg.group_id] = dg
            return out

        return self.groups._call(self._DESCRIBE_API, describe, groups=groups), self.groups.coordinators(groups)

    def _dead_error(self, dg: Any) -> str | None:
        """Why a group not described reads as "Dead": None when the broker does not know it, else its words
        (e.g. "Group orders-app is not a share group.")."""
        code = dg.error_code if dg is not None else GROUP_ID_NOT_FOUND
        msg = _error_text(code, dg.error_message if dg is not None else None)
        return None if code == GROUP_ID_NOT_FOUND and f"not a {self._KIND} group" not in msg else msg

    async def _to_coordinator(self, group: str, request: Any) -> Any:
        """`request` to `group`'s coordinator, for the requests about one group."""
        (c,) = (await self.admin._find_coordinator_ids([group])).values()
        return await self.admin._manager.send(request, node_id=c)

    def describe(self, groups: list[str]) -> dict[str, ShareGroup]:
        """ShareGroupDescribe per coordinator; a group the broker does not know reads as "Dead"."""
        self.require()
        if not groups:
            return {}
        raw, coords = self._describe_raw(groups)
        out: dict[str, ShareGroup] = {}
        for g in groups:
            dg = raw.get(g)
            if dg is None or dg.error_code:
                out[g] = ShareGroup(g, "Dead", coords.get(g), error=self._dead_error(dg))
                continue
            members = [ShareMember(m.member_id, m.client_id, m.client_host, m.member_epoch, m.rack_id,
                                   list(m.subscribed_topic_names or []), _assignment(m.assignment))
                       for m in dg.members]
            out[g] = ShareGroup(g, dg.group_state, coords.get(g), dg.group_epoch, dg.assignment_epoch, members)
        return out

    def offsets(self, group: str) -> dict[TP, ShareOffset | None]:
        """DescribeShareGroupOffsets for every topic the group has state for (Topics null)."""
        self.require()
        R = DescribeShareGroupOffsetsRequest
        request = R(groups=[R.DescribeShareGroupOffsetsRequestGroup(group_id=group, topics=None)])
        resp = self.groups._call("DescribeShareGroupOffsets", lambda: self._to_coordinator(group, request),
                                 groups=[group])
        out: dict[TP, ShareOffset | None] = {}
        for rg in resp.groups:
            _raise_if_moved(rg.error_code)
            if rg.error_code:
                raise ClusterError(f"DescribeShareGroupOffsets {group}: {_error_text(rg.error_code, rg.error_message)}")
            for t in rg.topics:
                for p in t.partitions:
                    if p.error_code or p.start_offset < 0:
                        out[(t.topic_name, p.partition_index)] = None
                        continue
                    lag = getattr(p, "lag", -1)
                    out[(t.topic_name, p.partition_index)] = ShareOffset(
                        p.start_offset, None if p.leader_epoch < 0 else p.leader_epoch,
                        None if lag is None or lag < 0 else lag)
        return out

    def alter(self, group: str, offsets: dict[TP, int]) -> dict[TP, str | None]:
        """AlterShareGroupOffsets: the start offset of each partition (the group must be empty)."""
        self.require()
        R = AlterShareGroupOffsetsRequest
        by_topic: dict[str, list[tuple[int, int]]] = {}
        for (t, p), o in offsets.items():
            by_topic.setdefault(t, []).append((p, o))
        T = R.AlterShareGroupOffsetsRequestTopic
        request = R(group_id=group, topics=[T(topic_name=t, partitions=[
            T.AlterShareGroupOffsetsRequestPartition(partition_index=p, start_offset=o) for p, o in ps])
            for t, ps in by_topic.items()])
        resp = self.groups._call("AlterShareGroupOffsets", lambda: self._to_coordinator(group, request),
                                 groups=[group])
        _raise_if_moved(resp.error_code)
        if resp.error_code:
            raise ClusterError(_error_text(resp.error_code, resp.error_message))
        out: dict[TP, str | None] = {}
        for t in resp.responses:
            for p in t.partitions:
                out[(t.topic_name, p.partition_index)] = (_error_text(p.error_code, p.error_message)
                                                          if p.error_code else None)
        return out

    def delete_offsets(self, group: str, topics: list[str]) -> tuple[str | None, dict[str, str | None]]:
        """DeleteShareGroupOffsets: (top-level error, topic -> error) — a top-level error fails every topic."""
        self.require()
        R = DeleteShareGroupOffsetsRequest
        request = R(group_id=group, topics=[R.DeleteShareGroupOffsetsRequestTopic(topic_name=t) for t in topics])
        resp = self.groups._call("DeleteShareGroupOffsets", lambda: self._to_coordinator(group, request),
                                 groups=[group])
        _raise_if_moved(resp.error_code)
        if resp.error_code:
            top = _error_text(resp.error_code, resp.error_message)
            return top, dict.fromkeys(topics, top)
        got = {r.topic_name: (_error_text(r.error_code, r.error_message) if r.error_code else None)
               for r in resp.responses}
        return None, {t: got.get(t) for t in topics}

    def delete(self, groups: list[str]) -> dict[str, str | None]:
        """DeleteGroups (one request per coordinator): group -> the Java exception's text, or None when deleted."""
        from kafka.protocol.admin import DeleteGroupsRequest

        mgr = self.admin._manager

        async def send() -> dict[str, Any]:
            out: dict[str, Any] = {}
            for c, gs in (await self._by_coordinator(groups)).items():
                resp = await mgr.send(DeleteGroupsRequest(groups_names=gs), node_id=c)
                for r in resp.results:
                    _raise_if_moved(r.error_code)
                    out[r.group_id] = r.error_code
            return out

        codes = self.groups._call("DeleteGroups", send, groups=groups)
        return {g: (java_error_text(codes[g]) if codes.get(g) else None) for g in groups}


def _assignment(assignment: Any) -> list[TP]:
    out: list[TP] = []
    for t in getattr(assignment, "topic_partitions", None) or []:
        out.extend((t.topic_name, p) for p in t.partitions)
    return out


def _raise_if_moved(code: int) -> None:
    """NOT_COORDINATOR / COORDINATOR_LOAD_IN_PROGRESS / COORDINATOR_NOT_AVAILABLE: look it up again."""
    if code in (14, 15, 16):
        from kafkatool.cluster.groups import _CoordinatorMoved

        raise _CoordinatorMoved(str(code))
