"""Offset commits as they are written: `__consumer_offsets` read from a live cluster.

Burrow judges consumers on the commits themselves — each with its commit time, seen as it happens —
by consuming `__consumer_offsets`.  `CommitTail` does the same over the Admin connection's sockets:
one Fetch per partition leader for all the topic's partitions (no group, nothing committed), from
the log start, each record decoded with the same decoders the offline replay uses
(`kafkatool.log.decoders.offsets`).  Commits in transactions are held until their producer's COMMIT
marker and dropped on ABORT (`GroupMetadataManager`'s rule); group metadata and tombstones carry
no commit and are passed over.

Where the topic cannot be read (not authorized, not there, no leader) `open` raises
`CommitLogUnavailable` with the reason, and the caller falls back to sampling committed offsets.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from kafkatool.cluster.groups import EARLIEST, BrokerOffsets, ClusterMetadata, _error_name
from kafkatool.log.decoders.offsets import OffsetCommitKey, decode_offset_commit_value, decode_offsets_key
from kafkatool.log.errors import LogFormatError
from kafkatool.log.record import CONTROL_COMMIT, control_type_of
from kafkatool.log.records import read_batch_header

OFFSETS_TOPIC = "__consumer_offsets"
PARTITION_BYTES = 1024 * 1024
RESPONSE_BYTES = 16 * 1024 * 1024


class CommitLogUnavailable(Exception):
    """`__consumer_offsets` cannot be read here (the reason is the message)."""


@dataclass(frozen=True, slots=True)
class SeenCommit:
    """One offset commit read from the log: whose, which offset, when committed, where it is stored."""

    group: str
    topic: str
    partition: int
    offset: int
    commit_timestamp: int
    log_partition: int
    log_offset: int


class CommitTail:
    """Follows every `__consumer_offsets` partition from its log start; `poll` returns new commits."""

    def __init__(self, brokers: BrokerOffsets, groups: set[str] | None = None) -> None:
        self.brokers = brokers
        self.groups = groups
        self.positions: dict[int, int] = {}
        self.high_watermarks: dict[int, int] = {}
        self._pending: dict[tuple[int, int], list[SeenCommit]] = defaultdict(list)
        self._held: list[SeenCommit] = []

    def open(self) -> None:
        try:
            meta = self.brokers.metadata([OFFSETS_TOPIC], refresh=True)
        except Exception as exc:  # noqa: BLE001 - any failure here means: sample instead
            raise CommitLogUnavailable(f"cannot read its metadata ({exc})") from None
        if OFFSETS_TOPIC not in meta.topics:
            raise CommitLogUnavailable("the topic does not exist or is not visible to this client")
        tps = [(OFFSETS_TOPIC, p) for p in meta.topics[OFFSETS_TOPIC]]
        starts = self.brokers.list_offsets(dict.fromkeys(tps, EARLIEST))
        for (_, p), lo in starts.items():
            if lo.offset is None:
                raise CommitLogUnavailable(f"partition {p}: {lo.error or 'no log start offset'}")
            self.positions[p] = lo.offset
        self._held = self._fetch(first=True)

    def caught_up(self) -> bool:
        return all(self.positions[p] >= self.high_watermarks.get(p, 0) for p in self.positions)

    def poll(self) -> list[SeenCommit]:
        """One Fetch round (a request per leader); the commits that became visible, in log order."""
        if self._held:
            held, self._held = self._held, []
            return held
        return self._fetch()

    def _fetch(self, first: bool = False) -> list[SeenCommit]:
        meta = self.brokers.metadata([OFFSETS_TOPIC])
        by_leader: dict[int, list[int]] = defaultdict(list)
        for p in self.positions:
            leader = meta.leaders.get((OFFSETS_TOPIC, p), -1)
            if leader is None or leader < 0:
                if first:
                    raise CommitLogUnavailable(f"partition {p} has no leader")
                continue
            by_leader[leader].append(p)
        nodes = sorted(by_leader)
        resps = self.brokers.send_all([(n, self._request(by_leader[n], meta)) for n in nodes])
        out: list[SeenCommit] = []
        for n, resp in zip(nodes, resps, strict=True):
            if isinstance(resp, Exception):
                if first:
                    raise CommitLogUnavailable(f"broker {n}: {resp}")
                self.brokers.metadata([OFFSETS_TOPIC], refresh=True)
                continue
            for t in resp.responses:
                for part in t.partitions:
                    p = part.partition_index
                    if p not in self.positions:
                        continue
                    if part.error_code:
                        if first:
                            raise CommitLogUnavailable(f"partition {p}: {_error_name(part.error_code)}")
                        continue
                    if part.high_watermark is not None and part.high_watermark >= 0:
                        self.high_watermarks[p] = part.high_watermark
                    out.extend(self._read(p, bytes(part.records or b"")))
        return out

    def _request(self, partitions: list[int], meta: ClusterMetadata) -> Any:
        from kafka.protocol.consumer import FetchRequest

        T = FetchRequest.FetchTopic
        P = T.FetchPartition
        parts = [
            P(
                partition=p,
                current_leader_epoch=-1,
                fetch_offset=self.positions[p],
                last_fetched_epoch=-1,
                log_start_offset=-1,
                partition_max_bytes=PARTITION_BYTES,
            )
            for p in sorted(partitions)
        ]
        return FetchRequest(
            replica_id=-1,
            max_wait_ms=0,
            min_bytes=0,
            max_bytes=RESPONSE_BYTES,
            isolation_level=0,
            session_id=0,
            session_epoch=-1,
            rack_id="",
            topics=[T(topic=OFFSETS_TOPIC, topic_id=meta.topic_ids.get(OFFSETS_TOPIC), partitions=parts)],
            forgotten_topics_data=[],
        )

    def _read(self, p: int, data: bytes) -> list[SeenCommit]:
        out: list[SeenCommit] = []
        pos = 0
        position = self.positions[p]
        while pos < len(data):
            try:
                b = read_batch_header(data, pos, len(data))
            except (LogFormatError, ValueError):
                break
            if b is None:  # a batch cut at the size limit: read again from it next poll
                break
            pos += b.size
            if b.last_offset < position:
                continue
            try:
                records = b.records()
            except Exception:  # noqa: BLE001 - any codec's error: an undecodable batch carries no commit we can read
                position = b.last_offset + 1
                continue
            if b.is_control:
                for r in records:
                    pending = self._pending.pop((p, b.producer_id), [])
                    if control_type_of(r.key) == CONTROL_COMMIT:
                        out.extend(pending)
                position = b.last_offset + 1
                continue
            for r in records:
                if r.offset < position:
                    continue
                c = self._commit(p, r)
                if c is not None:
                    if b.is_transactional:
                        self._pending[(p, b.producer_id)].append(c)
                    else:
                        out.append(c)
            position = b.last_offset + 1
        self.positions[p] = position
        return out

    def _commit(self, p: int, r: Any) -> SeenCommit | None:
        if r.key is None or r.value is None:
            return None
        try:
            key = decode_offsets_key(r.key)
            if not isinstance(key, OffsetCommitKey):
                return None
            if self.groups is not None and key.group not in self.groups:
                return None
            value = decode_offset_commit_value(r.value)
        except (LogFormatError, ValueError):
            return None
        ts = value.commit_timestamp if value.commit_timestamp >= 0 else r.timestamp
        return SeenCommit(key.group, key.topic, key.partition, value.offset, ts, p, r.offset)
