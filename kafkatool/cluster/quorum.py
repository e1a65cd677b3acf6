"""The KRaft metadata quorum as `kafka-metadata-quorum.sh describe` shows it (DescribeQuorum, API 55).

Follows Kafka's `MetadataQuorumCommand` (3.3: Scala; 3.4+: Java) and the admin client's
`describeMetadataQuorum` (`KafkaAdminClient`: a directory id absent before v2 reads as the zero
Uuid, a timestamp of -1 as "unknown").  The text changes with the release:

- 3.3-3.5: `--replication` has no DirectoryId column, `--status` lists voter and observer ids
  (`[1,2,3]`); 3.3's Scala tool ends `--status` with an empty line;
- 3.6: `--human-readable` ("N ms ago" for the two timestamps);
- 3.9 (KIP-853): a DirectoryId column, and `--status` prints each replica as
  `{"id": 1, "directoryId": "…", "endpoints": ["CONTROLLER://host:port"]}` (`null` for no directory id);
- 4.1: a replica without a directory id omits the `directoryId` key.
"""

from __future__ import annotations

import base64
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

from kafkatool.cluster.connect import ClusterError
from kafkatool.cluster.kraft_channel import Channel, need
from kafkatool.release import Release

METADATA_TOPIC = "__cluster_metadata"
DESCRIBE_QUORUM = 55
DESCRIBE_CLUSTER = 60
METADATA = 3
ZERO_UUID = "AAAAAAAAAAAAAAAAAAAAAA"

HUMAN_READABLE_SINCE = Release(3, 6)
DIRECTORY_IDS_SINCE = Release(3, 9)


def java_uuid(value: Any) -> str:
    """Kafka's `Uuid.toString()`: URL-safe base64 of the 16 bytes, no padding; the zero Uuid when absent."""
    if value is None:
        return ZERO_UUID
    raw = (
        value.bytes
        if isinstance(value, uuid.UUID)
        else bytes(value)
        if isinstance(value, (bytes, bytearray))
        else uuid.UUID(str(value)).bytes
    )
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


@dataclass
class ReplicaState:
    replica_id: int
    directory_id: str
    log_end_offset: int
    last_fetch_timestamp: int | None
    last_caught_up_timestamp: int | None


@dataclass
class QuorumInfo:
    leader_id: int
    leader_epoch: int
    high_watermark: int
    voters: list[ReplicaState]
    observers: list[ReplicaState]
    nodes: dict[int, list[str]] = field(default_factory=dict)  # node id -> endpoints "NAME://host:port"

    def leader(self) -> ReplicaState:
        for v in self.voters:
            if v.replica_id == self.leader_id:
                return v
        raise ClusterError(
            f"the quorum's leader {self.leader_id} is not among its voters "
            f"{[v.replica_id for v in self.voters]} (no leader elected?)"
        )


def _replica(r: Any) -> ReplicaState:
    def ts(v: Any) -> int | None:
        return None if v is None or int(v) == -1 else int(v)

    return ReplicaState(
        int(r.replica_id),
        java_uuid(getattr(r, "replica_directory_id", None)),
        int(r.log_end_offset),
        ts(getattr(r, "last_fetch_timestamp", -1)),
        ts(getattr(r, "last_caught_up_timestamp", -1)),
    )


def _endpoint(name: str, host: str, port: int) -> str:
    return f"{name}://{'[' + host + ']' if ':' in host else host}:{port}"


def describe_quorum(channel: Channel) -> QuorumInfo:
    """DescribeQuorum for `__cluster_metadata-0`, checked as the admin client checks it."""
    from kafka.errors import for_code
    from kafka.protocol.admin.cluster import DescribeQuorumRequest

    need(channel, "describe the metadata quorum", DESCRIBE_QUORUM)
    T = DescribeQuorumRequest.TopicData
    request = DescribeQuorumRequest(
        topics=[T(topic_name=METADATA_TOPIC, partitions=[T.PartitionData(partition_index=0)])]
    )
    resp = channel.send(request)
    if resp.error_code:
        raise ClusterError(
            f"describe the metadata quorum: {_java_error(for_code(resp.error_code), getattr(resp, 'error_message', None))}"
        )
    if (
        len(resp.topics) != 1
        or resp.topics[0].topic_name != METADATA_TOPIC
        or len(resp.topics[0].partitions) != 1
    ):
        raise ClusterError(
            "describe the metadata quorum: the answer does not describe __cluster_metadata-0 alone"
        )
    p = resp.topics[0].partitions[0]
    if p.error_code:
        raise ClusterError(
            f"describe the metadata quorum: {_java_error(for_code(p.error_code), getattr(p, 'error_message', None))}"
        )
    nodes = {
        int(n.node_id): [_endpoint(ln.name, ln.host, int(ln.port)) for ln in n.listeners]
        for n in (getattr(resp, "nodes", None) or [])
    }
    return QuorumInfo(
        int(p.leader_id),
        int(p.leader_epoch),
        int(p.high_watermark),
        [_replica(r) for r in p.current_voters],
        [_replica(r) for r in p.observers],
        nodes,
    )


def _java_error(err: Any, message: str | None) -> str:
    from kafkatool.cluster.admin import java_exception

    return java_exception(err, message)


def cluster_id(channel: Channel) -> str | None:
    """The cluster id: DescribeCluster where the peer has it (every controller, brokers 2.8+), else Metadata."""
    if DESCRIBE_CLUSTER in channel.api_table():
        from kafka.protocol.admin.cluster import DescribeClusterRequest

        resp = channel.send(DescribeClusterRequest(include_cluster_authorized_operations=False))
        if resp.error_code:
            from kafka.errors import for_code

            raise ClusterError(
                f"describe cluster: {_java_error(for_code(resp.error_code), resp.error_message)}"
            )
        return None if resp.cluster_id is None else str(resp.cluster_id)
    need(channel, "describe cluster", METADATA)
    from kafka.protocol.metadata import MetadataRequest

    resp = channel.send(MetadataRequest(topics=[], allow_auto_topic_creation=False))
    cid = getattr(resp, "cluster_id", None)
    return None if cid is None else str(cid)


# -- Kafka's text --------------------------------------------------------------------------------------


def pretty_table(headers: list[str], rows: list[list[str]]) -> str:
    """`ToolsUtils.prettyPrintTable`: each cell left-aligned to its column's width, then a tab."""
    widths = [max([len(h)] + [len(r[i]) for r in rows]) for i, h in enumerate(headers)]
    return "".join(
        "".join(c.ljust(w) + "\t" for c, w in zip(row, widths, strict=True)) + "\n"
        for row in [headers, *rows]
    )


def _ago(ts: int, now_ms: int, desc: str) -> str:
    if not (0 < ts <= now_ms):
        raise ClusterError(
            "Error while computing relative time, possible drift in system clock. "
            f"Current timestamp is {now_ms}, {desc} timestamp is {ts}"
        )
    return f"{now_ms - ts} ms ago"


def replication_rows(q: QuorumInfo) -> list[tuple[ReplicaState, str, int]]:
    """(replica, status, lag) in the tool's order: the leader, the other voters, the observers."""
    leader = q.leader()
    rows = (
        [(leader, "Leader")]
        + [(v, "Follower") for v in q.voters if v.replica_id != q.leader_id]
        + [(o, "Observer") for o in q.observers]
    )
    return [(r, status, leader.log_end_offset - r.log_end_offset) for r, status in rows]


def replication_text(
    q: QuorumInfo, release: Release, human_readable: bool = False, now_ms: int | None = None
) -> str:
    now = int(time.time() * 1000) if now_ms is None else now_ms
    with_dir = release >= DIRECTORY_IDS_SINCE
    rows = []
    for r, status, lag in replication_rows(q):

        def ts(v: int | None, desc: str) -> str:
            return "-1" if v is None else _ago(v, now, desc) if human_readable else str(v)

        row = (
            [str(r.replica_id)]
            + ([r.directory_id] if with_dir else [])
            + [
                str(r.log_end_offset),
                str(lag),
                ts(r.last_fetch_timestamp, "last fetch"),
                ts(r.last_caught_up_timestamp, "last caught up"),
                status,
            ]
        )
        rows.append(row)
    headers = (
        ["NodeId"]
        + (["DirectoryId"] if with_dir else [])
        + ["LogEndOffset", "Lag", "LastFetchTimestamp", "LastCaughtUpTimestamp", "Status"]
    )
    return pretty_table(headers, rows)


def max_follower_lag(q: QuorumInfo) -> tuple[int, int]:
    """(MaxFollowerLag, MaxFollowerLagTimeMs) as the tool computes them (the first voter with the lowest end)."""
    leader = q.leader()
    laggard = min(q.voters, key=lambda v: v.log_end_offset)
    lag = leader.log_end_offset - laggard.log_end_offset
    if laggard is leader:
        return lag, 0
    if leader.last_caught_up_timestamp is not None and laggard.last_caught_up_timestamp is not None:
        return lag, leader.last_caught_up_timestamp - laggard.last_caught_up_timestamp
    return lag, -1


def _replicas_text(q: QuorumInfo, replicas: list[ReplicaState], release: Release) -> str:
    if release < DIRECTORY_IDS_SINCE:
        return "[" + ",".join(str(r.replica_id) for r in replicas) + "]"
    out = []
    for r in replicas:
        zero = r.directory_id == ZERO_UUID
        text = f'{{"id": {r.replica_id}'
        if release >= Release(4, 1):
            text += "" if zero else f', "directoryId": "{r.directory_id}"'
        else:
            text += ', "directoryId": ' + ("null" if zero else f'"{r.directory_id}"')
        endpoints = q.nodes.get(r.replica_id) or []
        if endpoints:
            text += ', "endpoints": [' + ", ".join(f'"{e}"' for e in endpoints) + "]"
        out.append(text + "}")
    return "[" + ", ".join(out) + "]"


def status_text(q: QuorumInfo, cluster: str | None, release: Release) -> str:
    lag, lag_ms = max_follower_lag(q)
    text = (
        f"ClusterId:              {'null' if cluster is None else cluster}\n"
        f"LeaderId:               {q.leader_id}\n"
        f"LeaderEpoch:            {q.leader_epoch}\n"
        f"HighWatermark:          {q.high_watermark}\n"
        f"MaxFollowerLag:         {lag}\n"
        f"MaxFollowerLagTimeMs:   {lag_ms}\n"
        f"CurrentVoters:          {_replicas_text(q, q.voters, release)}\n"
        f"CurrentObservers:       {_replicas_text(q, q.observers, release)}\n"
    )
    return text + ("\n" if release < Release(3, 4) else "")


def quorum_rows(q: QuorumInfo) -> list[dict[str, Any]]:
    """One row per replica (for --format json/ndjson/csv/table)."""
    return [
        {
            "node_id": r.replica_id,
            "directory_id": None if r.directory_id == ZERO_UUID else r.directory_id,
            "log_end_offset": r.log_end_offset,
            "lag": lag,
            "last_fetch_timestamp": r.last_fetch_timestamp,
            "last_caught_up_timestamp": r.last_caught_up_timestamp,
            "status": status,
            "endpoints": q.nodes.get(r.replica_id, []),
        }
        for r, status, lag in replication_rows(q)
    ]


def status_row(q: QuorumInfo, cluster: str | None) -> dict[str, Any]:
    lag, lag_ms = max_follower_lag(q)
    return {
        "cluster_id": cluster,
        "leader_id": q.leader_id,
        "leader_epoch": q.leader_epoch,
        "high_watermark": q.high_watermark,
        "max_follower_lag": lag,
        "max_follower_lag_time_ms": lag_ms,
        "voters": [r.replica_id for r in q.voters],
        "observers": [r.replica_id for r in q.observers],
    }
