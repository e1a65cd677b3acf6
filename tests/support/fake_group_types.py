"""Share groups (KIP-932), streams groups (KIP-1071) and DeleteGroups for the fake cluster of
tests/support/fake_groups.py (`FakeKafkaCluster` mixes this in).

A group with group_type "share" keeps its share-partition start offsets in `offsets` ((start, "")),
leader epoch 0; its lag is the log-end offset less the start offset.  Answers follow a 4.x group
coordinator: GROUP_ID_NOT_FOUND with "Group g not found." / "Group g is not a share group.", and
NON_EMPTY_GROUP for altering or deleting the state of a group with members.  `add_streams_group`
keeps a streams group's topology (subtopology -> source topics) and each member's active tasks.
Responses are encoded by tests/support/kwire.py at the negotiated version.
"""

from __future__ import annotations

import uuid
from typing import Any

NONE = 0
UNKNOWN_TOPIC_OR_PARTITION = 3
NON_EMPTY_GROUP = 68
GROUP_ID_NOT_FOUND = 69
GROUP_SUBSCRIBED_TO_TOPIC = 86

TP = tuple[str, int]


class GroupTypesMixin:
    """Handlers `_on_<ApiName>` for the group types beyond classic and consumer (see fake_groups)."""

    groups: dict[str, Any]
    topics: dict[str, Any]
    topic_ids: dict[str, uuid.UUID]

    def _group_error(self, node: int, group: str) -> int:  # (FakeKafkaCluster's)
        raise NotImplementedError

    def add_group(self, group_id: str, **kw: Any) -> Any:  # (FakeKafkaCluster's)
        raise NotImplementedError

    def _share_group(self, gid: str) -> tuple[int, str | None]:
        g = self.groups.get(gid)
        if g is None:
            return GROUP_ID_NOT_FOUND, f"Group {gid} not found."
        if g.group_type != "share":
            return GROUP_ID_NOT_FOUND, f"Group {gid} is not a share group."
        return NONE, None

    def _on_ShareGroupDescribe(self, node: int, req: Any, v: int, R: Any) -> dict[str, Any]:
        G = R.DescribedGroup
        out = []
        for gid in req.group_ids:
            code = self._group_error(node, gid)
            msg = None
            if not code:
                code, msg = self._share_group(gid)
            if code:
                out.append(G(error_code=code, error_message=msg, group_id=gid, group_state="", group_epoch=-1,
                             assignment_epoch=-1, assignor_name="", members=[]))
                continue
            g = self.groups[gid]

            def assignment(tps: list[TP]) -> dict[str, Any]:
                by_topic: dict[str, list[int]] = {}
                for t, p in tps:
                    by_topic.setdefault(t, []).append(p)
                return {"topic_partitions": [{"topic_id": self.topic_ids.get(t, uuid.UUID(int=0)), "topic_name": t,
                                              "partitions": ps} for t, ps in by_topic.items()]}

            members = [{"member_id": m.member_id, "rack_id": None, "member_epoch": 3, "client_id": m.client_id,
                        "client_host": m.client_host, "subscribed_topic_names": sorted({t for t, _ in m.assignment}),
                        "assignment": assignment(m.assignment)} for m in g.members]
            out.append(G(error_code=0, error_message=None, group_id=gid, group_state=g.state, group_epoch=4,
                         assignment_epoch=4, assignor_name="simple", members=members))
        return {"throttle_time_ms": 0, "groups": out}

    def _on_DescribeShareGroupOffsets(self, node: int, req: Any, v: int, R: Any) -> dict[str, Any]:
        groups = []
        for rg in req.groups:
            code = self._group_error(node, rg.group_id)
            msg = None
            if not code:
                code, msg = self._share_group(rg.group_id)
            if code:
                groups.append({"group_id": rg.group_id, "topics": [], "error_code": code, "error_message": msg})
                continue
            g = self.groups[rg.group_id]
            wanted: dict[str, list[int]] = {}
            if rg.topics is None:
                for t, p in sorted(g.offsets):
                    wanted.setdefault(t, []).append(p)
            else:
                for t in rg.topics:
                    wanted[t.topic_name] = list(t.partitions)
            topics = []
            for t, ps in wanted.items():
                parts = []
                for p in ps:
                    start = g.offsets.get((t, p), (-1, ""))[0]
                    fp = self.topics.get(t, {}).get(p)
                    lag = fp.log_end - start if fp is not None and start >= 0 else -1
                    parts.append({"partition_index": p, "start_offset": start, "leader_epoch": 0 if start >= 0 else -1,
                                  "lag": lag, "error_code": 0, "error_message": None})
                topics.append({"topic_name": t, "topic_id": self.topic_ids.get(t, uuid.UUID(int=0)), "partitions": parts})
            groups.append({"group_id": rg.group_id, "topics": topics, "error_code": 0, "error_message": None})
        return {"throttle_time_ms": 0, "groups": groups}

    def _on_AlterShareGroupOffsets(self, node: int, req: Any, v: int, R: Any) -> dict[str, Any]:
        gid = req.group_id
        code = self._group_error(node, gid)
        msg = None
        g = self.groups.get(gid)
        if not code and g is not None and g.group_type != "share":
            code, msg = GROUP_ID_NOT_FOUND, f"Group {gid} is not a share group."
        if not code and g is not None and g.members:
            code, msg = NON_EMPTY_GROUP, None
        if code:
            return {"throttle_time_ms": 0, "error_code": code, "error_message": msg, "responses": []}
        if g is None:
            g = self.add_group(gid, group_type="share", protocol_type="share")
        responses = []
        for t in req.topics:
            parts = []
            for p in t.partitions:
                pcode = NONE if p.partition_index in self.topics.get(t.topic_name, {}) else UNKNOWN_TOPIC_OR_PARTITION
                if pcode == NONE:
                    g.offsets[(t.topic_name, p.partition_index)] = (p.start_offset, "")
                parts.append({"partition_index": p.partition_index, "error_code": pcode, "error_message": None})
            responses.append({"topic_name": t.topic_name, "topic_id": self.topic_ids.get(t.topic_name, uuid.UUID(int=0)),
                              "partitions": parts})
        return {"throttle_time_ms": 0, "error_code": 0, "error_message": None, "responses": responses}

    def _on_DeleteShareGroupOffsets(self, node: int, req: Any, v: int, R: Any) -> dict[str, Any]:
        gid = req.group_id
        code = self._group_error(node, gid)
        msg = None
        if not code:
            code, msg = self._share_group(gid)
        g = self.groups.get(gid)
        if not code and g is not None and g.members:
            code, msg = NON_EMPTY_GROUP, None
        if code:
            return {"throttle_time_ms": 0, "error_code": code, "error_message": msg, "responses": []}
        assert g is not None
        responses = []
        for t in req.topics:
            name = t.topic_name
            known = name in self.topics
            for tp in [tp for tp in g.offsets if tp[0] == name]:
                del g.offsets[tp]
            responses.append({"topic_name": name, "topic_id": self.topic_ids.get(name, uuid.UUID(int=0)),
                              "error_code": NONE if known else UNKNOWN_TOPIC_OR_PARTITION,
                              "error_message": None if known else "This server does not host this topic-partition."})
        return {"throttle_time_ms": 0, "error_code": 0, "error_message": None, "responses": responses}

    def _on_DeleteGroups(self, node: int, req: Any, v: int, R: Any) -> dict[str, Any]:
        results = []
        for gid in req.groups_names:
            code = self._group_error(node, gid)
            g = self.groups.get(gid)
            if not code:
                code = GROUP_ID_NOT_FOUND if g is None else NON_EMPTY_GROUP if g.members else NONE
            if code == NONE:
                del self.groups[gid]
            results.append({"group_id": gid, "error_code": code})
        return {"throttle_time_ms": 0, "results": results}

    # -- streams groups ------------------------------------------------------------------------

    def add_streams_group(self, group_id: str, topology: dict[str, list[str]],
                          members: list[tuple[str, str, str, list[tuple[str, list[int]]]]], state: str = "Stable",
                          offsets: dict[TP, tuple[int, str]] | None = None) -> Any:
        """members: (member id, process id, client id, active tasks [(subtopology, partitions)])."""
        from tests.support.fake_groups import FakeMember

        g = self.add_group(group_id, state=state, group_type="streams", protocol_type="streams", offsets=offsets or {},
                           members=[FakeMember(m, c, "/10.0.0.5") for m, _p, c, _t in members])
        if not hasattr(self, "streams"):
            self.streams: dict[str, tuple[dict[str, list[str]], dict[str, tuple[str, list[tuple[str, list[int]]]]]]] = {}
        self.streams[group_id] = (topology, {m: (p, t) for m, p, _c, t in members})
        return g

    def _on_StreamsGroupDescribe(self, node: int, req: Any, v: int, R: Any) -> dict[str, Any]:
        out = []
        for gid in req.group_ids:
            code = self._group_error(node, gid)
            g = self.groups.get(gid)
            msg = None
            if not code and g is None:
                code, msg = GROUP_ID_NOT_FOUND, f"Group {gid} not found."
            elif not code and g is not None and g.group_type != "streams":
                code, msg = GROUP_ID_NOT_FOUND, f"Group {gid} is not a streams group."
            if code:
                out.append({"error_code": code, "error_message": msg, "group_id": gid, "group_state": "",
                            "group_epoch": -1, "assignment_epoch": -1, "topology": None, "members": []})
                continue
            assert g is not None
            topology, tasks = getattr(self, "streams", {}).get(gid, ({}, {}))
            # topics named *-repartition are the subtopology's repartition source topics (TopicInfo), the rest
            # its source topics, as Kafka Streams names them
            subs = [{"subtopology_id": s, "source_topics": [t for t in ts if not t.endswith("-repartition")],
                     "repartition_sink_topics": [], "state_changelog_topics": [],
                     "repartition_source_topics": [{"name": t, "partitions": len(self.topics.get(t, {})),
                                                    "replication_factor": 1, "topic_configs": []}
                                                   for t in ts if t.endswith("-repartition")]}
                    for s, ts in topology.items()]

            def assignment(active: list[tuple[str, list[int]]]) -> dict[str, Any]:
                return {"active_tasks": [{"subtopology_id": s, "partitions": ps} for s, ps in active],
                        "standby_tasks": [], "warmup_tasks": []}

            members = []
            for m in g.members:
                process, active = tasks.get(m.member_id, ("p", []))
                members.append({"member_id": m.member_id, "member_epoch": 7, "instance_id": None, "rack_id": None,
                                "client_id": m.client_id, "client_host": m.client_host, "topology_epoch": 1,
                                "process_id": process, "user_endpoint": None, "client_tags": [], "task_offsets": [],
                                "task_end_offsets": [], "assignment": assignment(active),
                                "target_assignment": assignment(active), "is_classic": False})
            out.append({"error_code": 0, "error_message": None, "group_id": gid, "group_state": g.state,
                        "group_epoch": 7, "assignment_epoch": 7, "topology": {"epoch": 1, "subtopologies": subs},
                        "members": members, "assignor_name": "sticky"})
        return {"throttle_time_ms": 0, "groups": out}

    # -- OffsetDelete (any group type) ----------------------------------------------------------

    def _on_OffsetDelete(self, node: int, req: Any, v: int, R: Any) -> dict[str, Any]:
        """GROUP_ID_NOT_FOUND for an unknown group; GROUP_SUBSCRIBED_TO_TOPIC for a partition of a topic a
        member of a non-empty group is assigned; UNKNOWN_TOPIC_OR_PARTITION for a partition that does not exist."""
        gid = req.group_id
        code = self._group_error(node, gid)
        g = self.groups.get(gid)
        if not code and g is None:
            code = GROUP_ID_NOT_FOUND
        if code:
            return {"error_code": code, "throttle_time_ms": 0, "topics": []}
        subscribed = {t for m in g.members for t, _ in m.assignment}
        tasks = getattr(self, "streams", {}).get(gid)
        if tasks is not None and g.members:  # a streams group subscribes to its topology's topics
            subscribed |= {t for ts in tasks[0].values() for t in ts}
        topics = []
        for t in req.topics:
            parts = []
            for p in t.partitions:
                i = p.partition_index
                if i not in self.topics.get(t.name, {}):
                    pcode = UNKNOWN_TOPIC_OR_PARTITION
                elif t.name in subscribed:
                    pcode = GROUP_SUBSCRIBED_TO_TOPIC
                else:
                    pcode = NONE
                    g.offsets.pop((t.name, i), None)
                parts.append({"partition_index": i, "error_code": pcode})
            topics.append({"name": t.name, "partitions": parts})
        return {"error_code": 0, "throttle_time_ms": 0, "topics": topics}
