"""A KRaft node's view of its metadata quorum, from its metadata log dir alone (no cluster).

What a controller or broker keeps on disk about the quorum (Kafka's `QuorumState`, `KafkaRaftLog`,
`VoterSetHistory`): `quorum-state` (JSON: the leader and epoch it last knew, whom it voted for),
`leader-epoch-checkpoint` (where each epoch starts), the log's first and next offsets, the snapshot
ids (`<end offset>-<epoch>`), and the voter set: since KIP-853 (dynamic quorums, no
`controller.quorum.voters`) the voters live in `KRaftVoters` control records of the latest snapshot
and the log after it (the last one wins); a static quorum writes none, and the voter ids come from the
last `LeaderChange` record instead.  `meta.properties` beside the log dir gives the cluster, node and
directory ids.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kafkatool.log.checkpoint import read_leader_epoch_checkpoint
from kafkatool.log.errors import CheckpointError
from kafkatool.ops.metadata import text as T
from kafkatool.ops.metadata.source import (
    Damage,
    Snapshot,
    list_snapshots,
    log_batches,
    log_range,
    partition_dir,
    read_batches,
)


class QuorumStateError(ValueError):
    """A quorum-state file that is not what a KRaft node writes."""


@dataclass
class Voter:
    id: int
    directory_id: str | None  # None when only the id is known (a static quorum's LeaderChange)
    endpoints: list[str] = field(default_factory=list)  # LISTENER://host:port
    kraft_version: str | None = None  # supported kraft.version range

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id}
        if self.directory_id is not None:
            out["directoryId"] = self.directory_id
        if self.endpoints:
            out["endpoints"] = list(self.endpoints)
        return out


@dataclass
class QuorumOffline:
    """Everything one node's metadata log dir says about the quorum."""

    log_dir: str
    cluster_id: str | None
    node_id: int | None
    directory_id: str | None
    leader_id: int
    leader_epoch: int
    voted_id: int
    voted_directory_id: str | None
    quorum_state_version: int
    log_start_offset: int | None
    log_end_offset: int | None
    epoch_start_offsets: list[tuple[int, int]]
    snapshots: list[str]
    latest_snapshot: str | None
    kraft_version: int | None
    voters: list[Voter]
    voters_source: str  # where the voter set came from (a snapshot, a log offset, a LeaderChange, nothing)
    damage: list[Damage] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        return {
            "logDir": self.log_dir,
            "clusterId": self.cluster_id,
            "nodeId": self.node_id,
            "directoryId": self.directory_id,
            "leaderId": self.leader_id,
            "leaderEpoch": self.leader_epoch,
            "votedId": self.voted_id,
            "votedDirectoryId": self.voted_directory_id,
            "quorumStateVersion": self.quorum_state_version,
            "logStartOffset": self.log_start_offset,
            "logEndOffset": self.log_end_offset,
            "epochStartOffsets": [{"epoch": e, "startOffset": o} for e, o in self.epoch_start_offsets],
            "snapshots": list(self.snapshots),
            "latestSnapshot": self.latest_snapshot,
            "kraftVersion": self.kraft_version,
            "voters": [v.as_json() for v in self.voters],
            "votersSource": self.voters_source,
            "damage": [d.describe() for d in self.damage],
        }

    def status_text(self) -> str:
        """Lines in the layout of `kafka-metadata-quorum.sh describe --status` (label, colon, padded to 24),
        with what the files hold instead of what only a live leader knows (high watermark, lag)."""
        voters = ", ".join(_voter_text(v) for v in self.voters)
        lines = [
            ("ClusterId", self.cluster_id if self.cluster_id is not None else "unknown"),
            ("NodeId", _opt(self.node_id)),
            ("DirectoryId", self.directory_id or "unknown"),
            ("LeaderId", str(self.leader_id)),
            ("LeaderEpoch", str(self.leader_epoch)),
            ("VotedId", str(self.voted_id)),
            ("LogStartOffset", _opt(self.log_start_offset)),
            ("LogEndOffset", _opt(self.log_end_offset)),
            ("LatestSnapshot", self.latest_snapshot or "none"),
            ("Snapshots", "[" + ", ".join(self.snapshots) + "]"),
            ("KRaftVersion", _opt(self.kraft_version)),
            ("CurrentVoters", f"[{voters}]"),
            ("VotersFrom", self.voters_source),
        ]
        return "".join(f"{(k + ':').ljust(24)}{v}\n" for k, v in lines)


def _opt(v: int | None) -> str:
    return "unknown" if v is None else str(v)


def _voter_text(v: Voter) -> str:
    parts = [f'"id": {v.id}']
    if v.directory_id is not None:
        parts.append(f'"directoryId": "{v.directory_id}"')
    if v.endpoints:
        parts.append('"endpoints": [' + ", ".join(f'"{e}"' for e in v.endpoints) + "]")
    return "{" + ", ".join(parts) + "}"


def read_quorum_state(path: Path) -> dict[str, Any]:
    """`quorum-state`: {"leaderId", "leaderEpoch", "votedId", "votedDirectoryId"?, "data_version"}."""
    try:
        data = json.loads(path.read_text())
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise QuorumStateError(f"{path}: not JSON ({exc})") from None
    if not isinstance(data, dict) or not all(
        isinstance(data.get(k), int) for k in ("leaderEpoch", "votedId")
    ):
        raise QuorumStateError(f"{path}: not a quorum-state file (no integer leaderEpoch and votedId)")
    return data


def _meta_properties(pdir: Path) -> dict[str, str]:
    for candidate in (pdir.parent / "meta.properties", pdir / "meta.properties"):
        if candidate.is_file():
            out = {}
            for line in candidate.read_text(errors="replace").splitlines():
                if line and not line.startswith("#") and "=" in line:
                    k, _, v = line.partition("=")
                    out[k.strip()] = v.strip()
            return out
    return {}


def _voters_from(rec: dict[str, Any]) -> list[Voter]:
    out = []
    for v in rec["voters"]:
        eps = [f"{e['name']}://{e['host']}:{e['port']}" for e in v["endpoints"]]
        feat = v.get("kRaftVersionFeature") or {}
        rng = T.version_range(feat["minSupportedVersion"], feat["maxSupportedVersion"]) if feat else None
        out.append(Voter(v["voterId"], T.uuid_text(v["voterDirectoryId"]), eps, rng))
    return out


def _scan_voters(
    pdir: Path, snap: Snapshot | None, damage: list[Damage]
) -> tuple[list[Voter], str, int | None]:
    """The newest voter set (and kraft.version) from the latest snapshot and the log after it."""
    voters: list[Voter] = []
    source = "none (no KRaftVoters or LeaderChange record)"
    kraft: int | None = None
    leader_change: tuple[int, list[Voter]] | None = None
    start = 0
    if snap is not None:
        start = snap.end_offset
        for b in read_batches(snap.path, damage):
            for _, rec in b.records if b.control else ():
                if rec[0] == "KRAFT_VOTERS":
                    voters, source = _voters_from(rec[1]), f"snapshot {snap.path.name}"
                elif rec[0] == "KRAFT_VERSION":
                    kraft = rec[1]["kRaftVersion"]
    for b in log_batches(pdir, start, damage):
        if not b.control:
            continue
        for off, rec in b.records:
            if off < start:
                continue
            if rec[0] == "KRAFT_VOTERS":
                voters, source = _voters_from(rec[1]), f"log offset {off}"
            elif rec[0] == "KRAFT_VERSION":
                kraft = rec[1]["kRaftVersion"]
            elif rec[0] == "LEADER_CHANGE":
                leader_change = (off, [Voter(v["voterId"], None) for v in rec[1]["voters"]])
    if not voters and leader_change is not None:
        voters = leader_change[1]
        source = f"LeaderChange at log offset {leader_change[0]} (a static quorum: ids only)"
    return voters, source, kraft


def describe_offline(path: Path) -> QuorumOffline:
    """Read a node's metadata log dir (`__cluster_metadata-0`, or the metadata dir holding it)."""
    pdir = partition_dir(path)
    qs_path = pdir / "quorum-state"
    if not qs_path.is_file():
        raise QuorumStateError(f"{pdir}: no quorum-state file (not a KRaft metadata log dir?)")
    qs = read_quorum_state(qs_path)
    props = _meta_properties(pdir)
    epochs: list[tuple[int, int]] = []
    lec = pdir / "leader-epoch-checkpoint"
    if lec.is_file():
        try:
            epochs = read_leader_epoch_checkpoint(lec)
        except (CheckpointError, ValueError):
            epochs = []
    snaps = list_snapshots(pdir)
    damage: list[Damage] = []
    latest = snaps[-1] if snaps else None
    voters, source, kraft = _scan_voters(pdir, latest, damage)
    start, end = log_range(pdir)
    if snaps and (end is None or snaps[-1].end_offset > end):
        end = snaps[-1].end_offset  # a snapshot past the log's end (a node that fetched a snapshot)
    node = props.get("node.id")
    return QuorumOffline(
        log_dir=str(pdir),
        cluster_id=props.get("cluster.id"),
        node_id=int(node) if node and node.lstrip("-").isdigit() else None,
        directory_id=props.get("directory.id"),
        leader_id=int(qs.get("leaderId", -1)),
        leader_epoch=int(qs["leaderEpoch"]),
        voted_id=int(qs["votedId"]),
        voted_directory_id=qs.get("votedDirectoryId"),
        quorum_state_version=int(qs.get("data_version", 0)),
        log_start_offset=start,
        log_end_offset=end,
        epoch_start_offsets=epochs,
        snapshots=[f"{s.end_offset}-{s.epoch}" for s in snaps],
        latest_snapshot=f"{latest.end_offset}-{latest.epoch}" if latest else None,
        kraft_version=kraft,
        voters=voters,
        voters_source=source,
        damage=damage,
    )
