"""A Kafka 0.10–2.x cluster's metadata in a real ZooKeeper, written as brokers and a controller write it.

No broker runs: tests write the znodes a broker writes when it registers (ephemeral
`/brokers/ids/<id>`), those an admin tool writes when it creates a topic (`/config/topics/<t>`, then
`/brokers/topics/<t>`), those the controller writes (`/controller`, `/controller_epoch`, partition
`state`), and play the controller's part for reassignments and preferred elections: read the admin
znode, rewrite topic and state znodes, delete the request.
"""

from __future__ import annotations

import json
import time
from typing import Any

from kazoo.client import KazooClient


def _j(obj: Any) -> bytes:
    return json.dumps(obj, separators=(",", ":")).encode()


class ZkKafka:
    def __init__(self, connect: str, topic_version: int = 1) -> None:
        hosts, _, chroot = connect.partition("/")
        if chroot:
            root = KazooClient(hosts=hosts, timeout=10)
            root.start(timeout=10)
            root.ensure_path("/" + chroot)
            root.stop()
            root.close()
        self.connect = connect
        self.topic_version = topic_version
        self.zk = KazooClient(hosts=connect, timeout=10)
        self.zk.start(timeout=10)
        self.controller_epoch = 1
        for path in ("/consumers", "/admin/delete_topics", "/brokers/ids", "/brokers/topics", "/brokers/seqid",
                     "/config/changes", "/config/topics", "/config/clients", "/config/users", "/config/brokers",
                     "/isr_change_notification", "/log_dir_event_notification"):
            self.zk.ensure_path(path)

    def close(self) -> None:
        self.zk.stop()
        self.zk.close()

    # -- brokers and controller -----------------------------------------------------------------

    def add_broker(self, broker_id: int, rack: str | None = None, host: str = "localhost", port: int | None = None,
                   version: int = 4) -> None:
        """Register as a broker does: an ephemeral znode, v1 (0.8) host/port, v4 endpoints (+rack, 0.10-2.6
        IBP, Kafka 2.1.1's) or v5 (IBP 2.7+, `"features":{}` as every ZooKeeper-mode broker up to 3.9 writes)."""
        port = port if port is not None else 9092 + broker_id
        data: dict[str, Any]
        if version == 1:
            data = {"jmx_port": -1, "timestamp": str(int(time.time() * 1000)), "host": host, "version": 1, "port": port}
        elif version >= 5:  # the key order a 2.7-3.9 broker's Jackson writes
            data = {"features": {}, "listener_security_protocol_map": {"PLAINTEXT": "PLAINTEXT"},
                    "endpoints": [f"PLAINTEXT://{host}:{port}"], "jmx_port": -1, "port": port, "host": host,
                    "version": version, "timestamp": str(int(time.time() * 1000))}
            if rack is not None:
                data["rack"] = rack
        else:
            data = {"listener_security_protocol_map": {"PLAINTEXT": "PLAINTEXT"},
                    "endpoints": [f"PLAINTEXT://{host}:{port}"], "jmx_port": -1, "host": host,
                    "timestamp": str(int(time.time() * 1000)), "port": port, "version": version}
            if rack is not None:
                data["rack"] = rack
        self.zk.create(f"/brokers/ids/{broker_id}", _j(data), ephemeral=True)

    def remove_broker(self, broker_id: int) -> None:
        self.zk.delete(f"/brokers/ids/{broker_id}")

    def become_controller(self, broker_id: int, version: int = 1) -> None:
        """`/controller` as a controller writes it: version 1 before 3.4, 2 with `kraftControllerEpoch` from 3.4."""
        data: dict[str, Any] = {"version": version, "brokerid": broker_id, "timestamp": str(int(time.time() * 1000))}
        if version >= 2:
            data["kraftControllerEpoch"] = -1
        self.zk.create("/controller", _j(data), ephemeral=True)
        if self.zk.exists("/controller_epoch"):
            self.zk.set("/controller_epoch", str(self.controller_epoch).encode())
        else:
            self.zk.create("/controller_epoch", str(self.controller_epoch).encode())

    def write_feature_znode(self, version: int) -> None:
        """`/feature` as a 2.7+ controller writes it (version 2 from IBP 3.3: no min_version_level)."""
        self.zk.create("/feature", _j({"features": {}, "version": version, "status": 1}))

    def live_brokers(self) -> set[int]:
        return {int(b) for b in self.zk.get_children("/brokers/ids")}

    # -- topics ----------------------------------------------------------------------------------

    def _topic_data(self, assignment: dict[int, list[int]], adding: dict[int, list[int]] | None = None,
                    removing: dict[int, list[int]] | None = None) -> bytes:
        data: dict[str, Any] = {"version": self.topic_version,
                                "partitions": {str(p): r for p, r in sorted(assignment.items())}}
        if self.topic_version >= 2:
            data["adding_replicas"] = {str(p): r for p, r in (adding or {}).items()}
            data["removing_replicas"] = {str(p): r for p, r in (removing or {}).items()}
        return _j(data)

    def create_topic(self, topic: str, assignment: dict[int, list[int]], leaders: bool = True,
                     config: dict[str, str] | None = None) -> None:
        """As AdminZkClient does (config first, then the assignment); the controller then elects."""
        self.zk.create(f"/config/topics/{topic}", _j({"version": 1, "config": config or {}}))
        self.zk.create(f"/brokers/topics/{topic}", self._topic_data(assignment))
        if leaders:
            live = self.live_brokers()
            for p, replicas in assignment.items():
                isr = [b for b in replicas if b in live]
                self.set_state(topic, p, isr[0] if isr else -1, isr)

    def set_state(self, topic: str, partition: int, leader: int, isr: list[int], leader_epoch: int = 0) -> None:
        path = f"/brokers/topics/{topic}/partitions/{partition}/state"
        data = _j({"controller_epoch": self.controller_epoch, "leader": leader, "version": 1,
                   "leader_epoch": leader_epoch, "isr": isr})
        if self.zk.exists(path):
            self.zk.set(path, data)
        else:
            self.zk.create(path, data, makepath=True)

    def state(self, topic: str, partition: int) -> dict[str, Any]:
        data, _ = self.zk.get(f"/brokers/topics/{topic}/partitions/{partition}/state")
        return json.loads(data)

    def assignment(self, topic: str) -> dict[int, list[int]]:
        data, _ = self.zk.get(f"/brokers/topics/{topic}")
        return {int(p): r for p, r in json.loads(data)["partitions"].items()}

    def set_assignment(self, topic: str, assignment: dict[int, list[int]], adding: dict[int, list[int]] | None = None,
                       removing: dict[int, list[int]] | None = None) -> None:
        self.zk.set(f"/brokers/topics/{topic}", self._topic_data(assignment, adding, removing))

    # -- admin requests, answered as the controller does ----------------------------------------

    def reassignment_request(self) -> dict[tuple[str, int], list[int]] | None:
        if not self.zk.exists("/admin/reassign_partitions"):
            return None
        data, _ = self.zk.get("/admin/reassign_partitions")
        return {(p["topic"], p["partition"]): p["replicas"] for p in json.loads(data)["partitions"]}

    def complete_reassignment(self, only: set[tuple[str, int]] | None = None, fail: set[tuple[str, int]] = frozenset()) -> None:
        """Move partitions to their targets (new replicas in sync, leader kept if still a replica).

        `only` finishes some partitions and rewrites the request with the rest, as the controller
        does; `fail` drops a partition from the request without moving it (a failed reassignment).
        """
        request = self.reassignment_request()
        if request is None:
            return
        remaining = {}
        for (topic, p), target in request.items():
            if only is not None and (topic, p) not in only:
                remaining[(topic, p)] = target
                continue
            if (topic, p) in fail:
                continue
            assignment = self.assignment(topic)
            assignment[p] = target
            self.set_assignment(topic, assignment)
            st = self.state(topic, p)
            leader = st["leader"] if st["leader"] in target else target[0]
            self.set_state(topic, p, leader, list(target), st["leader_epoch"] + 1)
        if remaining:
            self.zk.set("/admin/reassign_partitions", _j({"version": 1, "partitions": [
                {"topic": t, "partition": p, "replicas": r} for (t, p), r in remaining.items()]}))
        else:
            self.zk.delete("/admin/reassign_partitions")

    def complete_preferred_election(self) -> list[tuple[str, int]]:
        if not self.zk.exists("/admin/preferred_replica_election"):
            return []
        data, _ = self.zk.get("/admin/preferred_replica_election")
        done = []
        for p in json.loads(data)["partitions"]:
            topic, part = p["topic"], p["partition"]
            preferred = self.assignment(topic)[part][0]
            st = self.state(topic, part)
            if preferred in st["isr"] and st["leader"] != preferred:
                self.set_state(topic, part, preferred, st["isr"], st["leader_epoch"] + 1)
                done.append((topic, part))
        self.zk.delete("/admin/preferred_replica_election")
        return done

    # -- configs ---------------------------------------------------------------------------------

    def config(self, entity: str, name: str) -> dict[str, str]:
        if not self.zk.exists(f"/config/{entity}/{name}"):
            return {}
        data, _ = self.zk.get(f"/config/{entity}/{name}")
        return json.loads(data)["config"]

    def set_config(self, entity: str, name: str, config: dict[str, str]) -> None:
        path = f"/config/{entity}/{name}"
        data = _j({"version": 1, "config": config})
        if self.zk.exists(path):
            self.zk.set(path, data)
        else:
            self.zk.create(path, data)

    def notifications(self) -> list[dict[str, Any]]:
        names = sorted(self.zk.get_children("/config/changes"))
        return [json.loads(self.zk.get(f"/config/changes/{n}")[0]) for n in names]
