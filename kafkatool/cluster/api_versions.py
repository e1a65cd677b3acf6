"""Each broker's ApiVersions, as `kafka-broker-api-versions.sh` (4.4: `kafka-cluster.sh api-versions`) prints them.

Follows `BrokerApiVersionsCommand` (Scala to 3.9, Java since 4.0), 4.4's `ClusterTool.apiVersionsCommand`
and `NodeApiVersions.toString(true)`: per broker `host:port (id: N rack: R[ isFenced: false]) -> (` then one
line per API in id order: the broker's range and the version the release's client would use (`[usable: v]`,
`[unusable: node too old|new]`), `UNSUPPORTED` for APIs the client knows and the broker lacks, `UNKNOWN(id)`
for APIs the client does not know (client tables: `client_apis_data.py`).  The brokers come in the order of
the tool's map: Scala's immutable `Map` of `Node`s before 4.0, Java's `HashMap` (Collectors.toMap) 4.0-4.3,
a `TreeMap` by id in 4.4.  `Node.toString()` gained `isFenced` in 4.0 (and `Node.hashCode()` with it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kafkatool.cluster.client_apis_data import CLIENT_APIS
from kafkatool.cluster.kraft_channel import AdminChannel, Channel, DirectChannel
from kafkatool.jvm.hashing import string_hash_or_zero, to_int32
from kafkatool.jvm.java_collections import hash_order
from kafkatool.jvm.scala_collections import immutable_set_order
from kafkatool.release import Release, parse_release

JAVA_TOOL_SINCE = Release(4, 0)
CLUSTER_TOOL_SINCE = Release(4, 4)


def client_apis(release: Release) -> dict[int, tuple[str, int, int]]:
    """api key -> (name, oldest, latest) of the release's Java client (3.3's for older releases)."""
    out = {}
    for key, (name, history) in CLIENT_APIS.items():
        current = None
        for step in history.split():
            since, _, rng = step.partition("=")
            if parse_release(since) <= release or since == "3.3":
                current = rng
        if current and current != "-":
            lo, _, hi = current.partition("-")
            out[key] = (name, int(lo), int(hi))
    return out


@dataclass(frozen=True)
class Node:
    id: int
    host: str
    port: int
    rack: str | None = None
    fenced: bool = False

    def text(self, release: Release) -> str:
        fenced = f" isFenced: {'true' if self.fenced else 'false'}" if release >= JAVA_TOOL_SINCE else ""
        return f"{self.host}:{self.port} (id: {self.id} rack: {self.rack if self.rack is not None else 'null'}{fenced})"

    def java_hash(self, release: Release) -> int:
        h = 31 + string_hash_or_zero(self.host)
        h = to_int32(31 * h + self.id)
        h = to_int32(31 * h + self.port)
        h = to_int32(31 * h + string_hash_or_zero(self.rack))
        if release >= JAVA_TOOL_SINCE:
            h = to_int32(31 * h + (1231 if self.fenced else 1237))  # Objects.hashCode(Boolean)
        return h


def node_text(table: dict[int, tuple[int, int]], release: Release) -> str:
    """`NodeApiVersions.toString(true)` for a broker advertising `table`."""
    apis = client_apis(release)
    lines: dict[int, str] = {}
    for key, (lo, hi) in table.items():
        rng = str(lo) if lo == hi else f"{lo} to {hi}"
        if key in apis:
            name, oldest, latest = apis[key]
            if latest < lo:
                usable = " [unusable: node too new]"
            elif hi < oldest:
                usable = " [unusable: node too old]"
            else:
                usable = f" [usable: {min(latest, hi)}]"
            lines[key] = f"{name}({key}): {rng}{usable}"
        else:
            lines[key] = f"UNKNOWN({key}): {rng}"
    for key, (name, _, _) in apis.items():
        lines.setdefault(key, f"{name}({key}): UNSUPPORTED")
    return "(\n\t" + ",\n\t".join(lines[k] for k in sorted(lines)) + "\n)"


def node_order(nodes: list[Node], release: Release) -> list[Node]:
    if release >= CLUSTER_TOOL_SINCE:
        return sorted(nodes, key=lambda n: n.id)
    if release >= JAVA_TOOL_SINCE:
        return hash_order(nodes, lambda n: n.java_hash(release))
    return immutable_set_order(nodes, lambda n: n.java_hash(release))


@dataclass(frozen=True)
class NodeVersions:
    node: Node
    table: dict[int, tuple[int, int]] | None
    error: str | None = None


def brokers(channel: Channel) -> list[Node]:
    """The brokers a Metadata request lists (what the tool asks), in the answer's order."""
    from kafka.protocol.metadata import MetadataRequest

    resp = channel.send(MetadataRequest(topics=None, allow_auto_topic_creation=False))
    return [Node(int(b.node_id), b.host, int(b.port), b.rack) for b in resp.brokers]


def node_versions(channel: Channel, timeout: float) -> list[NodeVersions]:
    """Each broker's ApiVersions table, from a connection to it (bounded by `timeout`)."""
    out = []
    for node in brokers(channel):
        try:
            out.append(NodeVersions(node, _table_of(channel, node, timeout)))
        except Exception as exc:  # one broker's failure is its line ("-> ERROR: ..."), as in Kafka's tool
            out.append(NodeVersions(node, None, f"{type(exc).__name__}: {exc}"))
    return out


def _table_of(channel: Channel, node: Node, timeout: float) -> dict[int, tuple[int, int]]:
    if isinstance(channel, AdminChannel):
        client: Any = channel.client
        data = client.get_broker_version_data(node.id)
        return {int(k): (int(v[0]), int(v[1])) for k, v in data.api_versions.items()}
    direct = DirectChannel(f"{node.host}:{node.port}", timeout, kind="broker")
    try:
        return direct.api_table()
    finally:
        direct.close()


def api_versions_text(found: list[NodeVersions], release: Release) -> str:
    by_node = {v.node: v for v in found}
    out = []
    for node in node_order(list(by_node), release):
        v = by_node[node]
        if v.table is None:
            out.append(f"{node.text(release)} -> ERROR: {v.error}\n")
        else:
            out.append(f"{node.text(release)} -> {node_text(v.table, release)}\n")
    return "".join(out)
