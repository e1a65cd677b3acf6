"""Groups the brokers coordinate: the admin calls of `ConsumerGroupCommand`'s `ConsumerGroupService`.

ListGroups (`--list`, with each group's state and type), DescribeGroups and, for KIP-848 groups,
ConsumerGroupDescribe (`--describe`), OffsetFetch (committed offsets) and OffsetCommit
(`--reset-offsets --execute`).  As Kafka's admin client does, a call meeting a lost connection,
NOT_COORDINATOR or COORDINATOR_LOAD_IN_PROGRESS forgets the coordinators, looks them up again and
retries within the command's `--timeout`.
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Iterable
from typing import Any

from kafkatool.cluster.connect import ClusterError
from kafkatool.cluster.groups.broker_offsets import BrokerOffsets
from kafkatool.cluster.groups.model import (
    _ERR_UNSUPPORTED_VERSION,
    _GROUP_ID_NOT_FOUND,
    TP,
    Committed,
    GroupInfo,
    Member,
    _error_name,
)
from kafkatool.cluster.model import Broker


class KafkaGroups:
    """Groups stored and coordinated by the brokers, through kafka-python's Admin client.

    Coordinators move (a broker dies, `__consumer_offsets` leadership changes): as Kafka's admin
    client does, a call that meets a lost connection, NOT_COORDINATOR or
    COORDINATOR_LOAD_IN_PROGRESS forgets the groups' coordinators, looks them up again and retries,
    until the command's --timeout runs out.
    """

    def __init__(self, brokers: BrokerOffsets) -> None:
        self.brokers = brokers
        self.admin = brokers.admin

    def _call(self, what: str, make: Any, groups: Iterable[str] = ()) -> Any:
        """Run the coroutine `make()` returns, retried over coordinator moves within --timeout
        (`make` runs in the caller's thread before each attempt)."""
        delay = 0.05
        last: Exception | None = None
        until = self.brokers.until()
        while True:
            if until - time.monotonic() <= 0:
                raise self.brokers.out_of_time(what, last)
            try:
                return self.brokers.bounded(what, make(), until)
            except ClusterError:
                raise
            except Exception as exc:  # noqa: BLE001 - kafka-python raises many types
                if not _retriable(exc):
                    raise ClusterError(f"{what}: {exc}") from None
                last = exc
            self._forget_coordinators(groups)
            time.sleep(max(0.0, min(delay, until - time.monotonic())))
            delay = min(delay * 2, 1.0)

    def _forget_coordinators(self, groups: Iterable[str]) -> None:
        cache = getattr(self.admin._manager.cluster, "_coordinators", None)
        if isinstance(cache, dict):
            wanted = set(groups)
            for key in [k for k in cache if isinstance(k, tuple) and len(k) == 2 and k[1] in wanted]:
                cache.pop(key, None)

    def list_groups(self) -> list[str]:
        """Consumer groups (protocol type "consumer" or empty), as kafka-consumer-groups --list."""
        return sorted({g for g, _, _ in self.listings()})

    def listings(self) -> list[tuple[str, str, str]]:
        """(group, state, type) of each consumer group as ListGroups answers: the state from v4 (Kafka
        2.6), the type from v5 (3.8); '' where the negotiated version has none."""
        listed = self._call("ListGroups", lambda: self.admin._async_list_groups(
            broker_ids=sorted(self.brokers.metadata(refresh=True).brokers)))
        return [(g["group_id"], g.get("group_state") or "", g.get("group_type") or "")
                for g in listed if g.get("protocol_type", "") in ("consumer", "")]

    def coordinators(self, groups: list[str]) -> dict[str, Broker | None]:
        ids = self._call("FindCoordinator", lambda: self.admin._find_coordinator_ids(groups), groups=groups)
        brokers = self.brokers.metadata().brokers
        return {g: brokers.get(ids.get(g, -1)) for g in groups}

    def _consumer_describe_supported(self) -> bool:
        from kafkatool.cluster.kip848 import ConsumerGroupDescribeRequest

        try:
            return int(self.admin._manager.broker_version_data.api_version(ConsumerGroupDescribeRequest)) >= 0
        except Exception:  # noqa: BLE001 - IncompatibleBrokerVersion and the like: the broker lacks it
            return False

    async def _consumer_describe(self, groups: list[str]) -> dict[str, Any]:
        """ConsumerGroupDescribe per coordinator: the groups on the new protocol (others are left out:
        the broker answers GROUP_ID_NOT_FOUND for classic groups, as Kafka 4.0's admin client expects)."""
        from kafkatool.cluster.kip848 import GROUP_ID_NOT_FOUND, ConsumerGroupDescribeRequest

        mgr = self.admin._manager
        by_coordinator: dict[Any, list[str]] = defaultdict(list)
        for g, c in (await self.admin._find_coordinator_ids(groups)).items():
            by_coordinator[c].append(g)
        out: dict[str, Any] = {}
        for c, gs in by_coordinator.items():
            resp = await mgr.send(ConsumerGroupDescribeRequest(group_ids=gs, include_authorized_operations=False),
                                  node_id=c)
            for dg in resp.groups:
                if dg.error_code == 0:
                    out[dg.group_id] = dg
                elif dg.error_code in (GROUP_ID_NOT_FOUND, _ERR_UNSUPPORTED_VERSION):
                    continue  # a classic group (or none): DescribeGroups says which
                elif _error_name(dg.error_code).startswith(("NotCoordinator", "CoordinatorLoad", "CoordinatorNotAvail")):
                    raise _CoordinatorMoved(_error_name(dg.error_code))
                else:
                    raise ClusterError(f"ConsumerGroupDescribe {dg.group_id}: {_error_name(dg.error_code)}"
                                       + (f": {dg.error_message}" if dg.error_message else ""))
        return out

    def describe(self, groups: list[str]) -> dict[str, GroupInfo]:
        """The groups' state and members, one request per coordinator.

        As Kafka 4.0's admin client: ConsumerGroupDescribe first when the broker has it (groups on
        the KIP-848 consumer protocol), DescribeGroups for the rest (classic groups).
        """
        if not groups:
            return {}
        new_api = self._consumer_describe_supported()

        async def describe() -> Any:
            new = await self._consumer_describe(groups) if new_api else {}
            classic = [g for g in groups if g not in new]
            raw = await self.admin._async_describe_groups(classic) if classic else {}
            for d in raw.values():
                if d.get("error") and _retriable_text(str(d["error"])):
                    raise _CoordinatorMoved(str(d["error"]))
            return new, raw

        new, raw = self._call("DescribeGroups", describe, groups=groups)  # (describe() makes the coroutine)
        coords = self.coordinators(groups)
        from kafkatool.cluster.kip848 import assignment_partitions

        out = {}
        for g in groups:
            dg = new.get(g)
            if dg is not None:
                members = [Member(m.member_id, m.client_id, m.client_host, m.instance_id,
                                  assignment_partitions(m.assignment), m.member_epoch,
                                  assignment_partitions(m.target_assignment),
                                  None if getattr(m, "member_type", -1) == -1 else m.member_type == 1)
                           for m in dg.members]
                out[g] = GroupInfo(g, dg.group_state, "consumer", dg.assignor_name, coords.get(g), members, "consumer",
                                   dg.group_epoch, dg.assignment_epoch)
                continue
            d = raw.get(g)
            # DescribeGroups v6+ (Kafka 4.0, KIP-1043) answers an unknown group GROUP_ID_NOT_FOUND where
            # older versions answered Dead: both are the same "does not exist" (one exit code).
            if d is None or _GROUP_ID_NOT_FOUND in str(d.get("error") or ""):
                out[g] = GroupInfo(g, "Dead", "", "", coords.get(g), [])
                continue
            if d.get("error"):
                raise ClusterError(f"DescribeGroups {g}: {d['error']}")
            members = [self._member(m, d.get("protocol_type", "")) for m in d.get("members", [])]
            out[g] = GroupInfo(g, d.get("group_state", ""), d.get("protocol_type", ""), d.get("protocol_data", ""),
                               coords.get(g), members)
        return out

    @staticmethod
    def _member(m: dict[str, Any], protocol_type: str) -> Member:
        assignment: list[TP] = []
        a = m.get("member_assignment")
        if isinstance(a, dict):
            for tp in a.get("assigned_partitions") or []:
                assignment.extend((tp["topic"], p) for p in tp["partitions"])
        elif isinstance(a, (bytes, bytearray)) and a and protocol_type == "consumer":
            from kafkatool.log.decoders._wire import Reader
            from kafkatool.log.decoders.offsets import decode_consumer_assignment

            try:
                r = Reader(bytes(a))
                assignment = list(decode_consumer_assignment(r, r.int16()).partitions)
            except ValueError:
                assignment = []
        return Member(m.get("member_id", ""), m.get("client_id", ""), m.get("client_host", ""),
                      m.get("group_instance_id"), assignment)

    def committed(self, groups: list[str]) -> dict[str, dict[TP, Committed | None]]:
        """Every committed offset of each group (OffsetFetch per coordinator; per group before 3.0).

        A negative offset means "none" and maps to None, as Kafka's admin client does.
        """
        if not groups:
            return {}
        raw = self._call("OffsetFetch", lambda: self.admin._async_list_group_offsets({g: None for g in groups}),
                         groups=groups)
        out: dict[str, dict[TP, Committed | None]] = {}
        for g in groups:
            per = {}
            for tp, oam in (raw.get(g) or {}).items():
                off = oam.offset
                epoch = oam.leader_epoch if oam.leader_epoch is not None else -1
                per[(tp.topic, tp.partition)] = Committed(off, oam.metadata or "", epoch) if off is not None and off >= 0 else None
            out[g] = per
        return out

    def commit(self, group: str, offsets: dict[TP, int]) -> dict[TP, str | None]:
        """OffsetCommit as an admin (generation -1): the broker refuses it while the group has members."""
        from kafka.structs import OffsetAndMetadata, TopicPartition

        if not offsets:
            return {}
        req = {TopicPartition(t, p): OffsetAndMetadata(o, "", None) for (t, p), o in offsets.items()}

        async def commit() -> Any:
            res = await self.admin._async_alter_group_offsets(group, req)
            moved = [e for e in res.values() if _retriable_text(getattr(e, "__name__", str(e)))]
            if moved:
                raise _CoordinatorMoved(getattr(moved[0], "__name__", str(moved[0])))
            return res

        res = self._call("OffsetCommit", commit, groups=[group])  # (commit() makes the coroutine)
        out: dict[TP, str | None] = {}
        for tp, err in res.items():
            name = getattr(err, "__name__", str(err))
            out[(tp.topic, tp.partition)] = None if name == "NoError" else name
        return out


class _CoordinatorMoved(Exception):
    """A group-level NOT_COORDINATOR / COORDINATOR_LOAD_IN_PROGRESS inside a response."""


# What Kafka's admin client retries after looking the coordinator up again.
_RETRIABLE = ("NotCoordinator", "CoordinatorLoadInProgress", "CoordinatorNotAvailable", "KafkaConnectionError",
              "NodeNotReady", "RequestTimedOut", "KafkaTimeoutError", "ConnectionError", "Event loop stopped")


def _retriable_text(text: str) -> bool:
    return any(name in text for name in _RETRIABLE)


def _retriable(exc: Exception) -> bool:
    return isinstance(exc, (_CoordinatorMoved, ConnectionError)) or _retriable_text(f"{type(exc).__name__} {exc}")
