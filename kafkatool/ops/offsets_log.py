"""Offline replay of `__consumer_offsets`: committed offsets and group metadata from log segments.

A group coordinator rebuilds its cache by reading its `__consumer_offsets` partitions from the log
start to the end (`GroupMetadataManager.doLoadGroupsAndOffsets`).  Replaying the same rules over the
segment files gives the offsets a coordinator would serve, without a broker:

* an offset commit record sets (group, topic, partition); a null value (tombstone) removes it;
* a group metadata record sets the group; a null value deletes the group (its offsets stay unless
  they have their own tombstones, exactly as on the broker, which writes both when a group is
  deleted);
* offset commits in transactional batches are pending per producer id until that producer's
  control batch: COMMIT makes them visible (a pending offset replaces the loaded one only if the
  loaded one was appended earlier), ABORT drops them.  Transactions still open at the end of the
  log stay pending and are reported apart, never as committed;
* the other record types of Kafka 4.0's group coordinator (3-16: the consumer- and share-group
  records of KIP-848 and KIP-932, `group_records.GROUP_RECORD_TYPES`) carry no classic offsets nor classic
  group metadata and are passed over (a consumer-protocol group's offsets are plain offset
  commits); any other key version is reported, as the broker refuses to load it.

Each `__consumer_offsets` partition is replayed on its own, as each is loaded on its own.

With the compiled core (`kafkatool.log.core`), runs of plain batches of offset commits and group
metadata are replayed by one C call a run (`offsets_replay_run`), which stops before any batch it does
not read exactly as the loop below would; that batch, and everything when the core is absent or a
history is asked for, goes through the Python loop.  tests/test_offsets_core_diff.py holds them equal.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kafkatool.jvm.hashing import string_hash
from kafkatool.log.checkpoint import read_offset_checkpoint
from kafkatool.log.core import speedups
from kafkatool.log.decoders.offsets import (
    GROUP_RECORD_TYPES,
    GroupMetadataKey,
    GroupMetadataValue,
    OffsetCommitKey,
    UnknownKey,
    decode_group_metadata_value,
    decode_offset_commit_value,
    decode_offsets_key,
)
from kafkatool.log.errors import CorruptRecordError, LogFormatError
from kafkatool.log.files import MappedFile, list_segments, parse_partition_dir
from kafkatool.log.index import OffsetIndex
from kafkatool.log.record import CONTROL_COMMIT, control_type_of
from kafkatool.log.records import BatchScan

OFFSETS_TOPIC = "__consumer_offsets"

GroupTopicPartition = tuple[str, str, int]


def offsets_partition_for(group: str, partitions: int = 50) -> int:
    """The `__consumer_offsets` partition that holds a group: `Utils.abs(hashCode) % count`.

    `Utils.abs` is `Math.abs` except that Int.MinValue maps to 0 (real brokers' data agrees: a
    group with a negative hash code lands at |hash| mod the count, not at hash & 0x7fffffff).
    """
    h = string_hash(group)
    return (0 if h == -(2**31) else abs(h)) % partitions


@dataclass(frozen=True, slots=True)
class OffsetCommit:
    """One committed offset as stored in `__consumer_offsets` (with where it is stored)."""

    group: str
    topic: str
    partition: int
    offset: int
    metadata: str
    commit_timestamp: int
    expire_timestamp: int
    leader_epoch: int
    log_partition: int
    log_offset: int
    batch_base_offset: int
    producer_id: int = -1

    @property
    def key(self) -> GroupTopicPartition:
        return (self.group, self.topic, self.partition)


@dataclass(frozen=True, slots=True)
class OffsetsEvent:
    """One entry of the history: what a record (or a transaction marker) did to a group's state.

    `kind`: commit, tombstone (offset deleted), txn-pending (transactional commit, not yet visible),
    txn-commit / txn-abort (a marker made a pending commit visible or dropped it), group (metadata
    written), group-delete (metadata tombstone).
    """

    kind: str
    group: str
    topic: str | None
    partition: int | None
    offset: int | None
    metadata: str | None
    commit_timestamp: int | None
    log_partition: int
    log_offset: int
    record_timestamp: int
    producer_id: int = -1


@dataclass
class OffsetsState:
    """The result of a replay: what the coordinators would have loaded."""

    offsets: dict[GroupTopicPartition, OffsetCommit] = field(default_factory=dict)
    groups: dict[str, GroupMetadataValue] = field(default_factory=dict)
    group_partition: dict[str, int] = field(default_factory=dict)
    deleted_groups: set[str] = field(default_factory=set)
    pending: dict[GroupTopicPartition, OffsetCommit] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    partitions_read: list[int] = field(default_factory=list)
    records_read: int = 0
    _by_group: dict[str, dict[tuple[str, int], OffsetCommit]] | None = field(default=None, repr=False, compare=False)
    _by_group_size: int = field(default=-1, repr=False, compare=False)

    def group_ids(self) -> list[str]:
        """Every group that has committed offsets, metadata, or pending transactional offsets."""
        ids = {k[0] for k in self.offsets} | set(self.groups) | {k[0] for k in self.pending}
        return sorted(ids)

    def offsets_of(self, group: str) -> dict[tuple[str, int], OffsetCommit]:
        if self._by_group is None or self._by_group_size != len(self.offsets):
            self._by_group = {}
            for (g, t, p), c in self.offsets.items():
                self._by_group.setdefault(g, {})[(t, p)] = c
            self._by_group_size = len(self.offsets)
        return dict(self._by_group.get(group, {}))

    def group_state(self, group: str) -> str:
        """Kafka's state name for a loaded group: Stable with members, Empty without, Dead if deleted."""
        meta = self.groups.get(group)
        if meta is None:
            return "Dead" if group in self.deleted_groups and not self.offsets_of(group) else "Empty"
        return "Stable" if meta.members else "Empty"


# A stored value not decoded yet: (value bytes, record offset, batch base offset, producer id).
_Raw = tuple[bytes, int, int, int]
_SKIP = object()  # records the replay passes over: groups not asked for, 4.0's non-classic record types


class _BadKey(str):
    """Why a key cannot be loaded (kept apart from group names, which are plain str)."""


class _PartitionReplay:
    """`doLoadGroupsAndOffsets` for one `__consumer_offsets` partition.

    Keys repeat (every commit of a group rewrites the same few keys), so each distinct key is
    decoded once; values are kept as bytes and only the survivors are decoded at the end.  With an
    `on_event` callback (the history) every value is decoded as it is read.
    """

    def __init__(self, log_partition: int, wanted: Callable[[str], bool], on_event: Callable[[OffsetsEvent], None] | None):
        self.log_partition = log_partition
        self.wanted = wanted
        self.on_event = on_event
        self.keys: dict[bytes, object] = {}
        self.loaded: dict[GroupTopicPartition, _Raw] = {}
        self.pending: dict[int, dict[GroupTopicPartition, _Raw]] = {}
        self.groups: dict[str, bytes] = {}
        self.removed: set[str] = set()
        self.problems: list[str] = []
        self.records = 0

    # -- decoding ---------------------------------------------------------------------------------
    def _key(self, key: bytes, offset: int) -> object:
        k = self.keys.get(key)
        if k is None:
            try:
                k = decode_offsets_key(key)
            except ValueError as exc:
                k = _BadKey(f"undecodable key: {exc}")
            if isinstance(k, (OffsetCommitKey, GroupMetadataKey)) and not self.wanted(k.group):
                k = _SKIP
            elif isinstance(k, OffsetCommitKey):
                k = (k.group, k.topic, k.partition)
            elif isinstance(k, GroupMetadataKey):
                k = k.group
            elif isinstance(k, UnknownKey) and k.version in GROUP_RECORD_TYPES.keys:
                k = _SKIP
            elif not isinstance(k, _BadKey):
                k = _BadKey(f"unexpected key version {k.version} (the broker refuses to load it)")
            self.keys[bytes(key)] = k
        return k

    def _commit(self, gtp: GroupTopicPartition, raw: _Raw) -> OffsetCommit | None:
        value, offset, base, pid = raw
        fields = speedups.offset_commit_value(value) if speedups is not None else None
        if fields is not None:  # the compiled decoder of the common versions; None: the Python one
            o, metadata, commit_ts, expire_ts, epoch = fields
            return OffsetCommit(gtp[0], gtp[1], gtp[2], o, metadata, commit_ts, expire_ts, epoch,
                                self.log_partition, offset, base, pid)
        try:
            v = decode_offset_commit_value(value)
        except ValueError as exc:
            self.problems.append(
                f"{OFFSETS_TOPIC}-{self.log_partition} offset {offset}: undecodable offset commit for "
                f"{gtp[0]} {gtp[1]}-{gtp[2]}: {exc}"
            )
            return None
        return OffsetCommit(gtp[0], gtp[1], gtp[2], v.offset, v.metadata, v.commit_timestamp, v.expire_timestamp,
                            v.leader_epoch, self.log_partition, offset, base, pid)

    def _event(self, kind: str, gtp: GroupTopicPartition | None, group: str, log_offset: int, ts: int,
               raw: _Raw | None = None, pid: int = -1) -> None:
        assert self.on_event is not None
        c = self._commit(gtp, raw) if gtp is not None and raw is not None else None
        self.on_event(OffsetsEvent(
            kind, group, gtp[1] if gtp else None, gtp[2] if gtp else None, c.offset if c else None,
            c.metadata if c else None, c.commit_timestamp if c else None, self.log_partition, log_offset, ts, pid,
        ))

    # -- the load loop ----------------------------------------------------------------------------
    def control(self, producer_id: int, key: bytes | None, log_offset: int, ts: int) -> None:
        ctype = control_type_of(key)
        if ctype is None:
            self.problems.append(f"{OFFSETS_TOPIC}-{self.log_partition} offset {log_offset}: control record without a valid key")
            return
        commit = ctype == CONTROL_COMMIT
        for gtp, raw in self.pending.pop(producer_id, {}).items():
            if commit:
                old = self.loaded.get(gtp)
                if old is None or old[2] < raw[2]:  # the broker's olderThan: by batch offset
                    self.loaded[gtp] = raw
            if self.on_event is not None:
                self._event("txn-commit" if commit else "txn-abort", gtp, gtp[0], log_offset, ts, raw, producer_id)

    def batch(self, records: list[Any], base: int, transactional: bool, producer_id: int, start: int) -> None:
        keys = self.keys
        keyof = self._key
        loaded = self.loaded
        events = self.on_event is not None
        pending = self.pending.setdefault(producer_id, {}) if transactional else None
        for r in records:
            offset = r.offset
            if offset < start:
                continue
            self.records += 1
            key = r.key
            if key is None:
                self.problems.append(f"{OFFSETS_TOPIC}-{self.log_partition} offset {offset}: record without a key "
                                     "(the broker refuses to load it)")
                continue
            k = keys.get(key)
            if k is None:
                k = keyof(key, offset)
            if k is _SKIP:
                continue
            value = r.value
            if type(k) is tuple:
                table = pending if pending is not None else loaded
                if value is None:
                    table.pop(k, None)
                    if events:
                        self._event("tombstone", k, k[0], offset, r.timestamp, None, producer_id)
                else:
                    raw = (value, offset, base, producer_id)
                    table[k] = raw
                    if events:
                        self._event("txn-pending" if pending is not None else "commit", k, k[0], offset, r.timestamp,
                                    raw, producer_id)
            elif type(k) is _BadKey:
                self.problems.append(f"{OFFSETS_TOPIC}-{self.log_partition} offset {offset}: {k}")
            else:
                group: str = k  # type: ignore[assignment]
                if value is None:
                    self.groups.pop(group, None)
                    self.removed.add(group)
                    if events:
                        self._event("group-delete", None, group, offset, r.timestamp)
                else:
                    self.removed.discard(group)
                    self.groups[group] = value
                    if events:
                        self._event("group", None, group, offset, r.timestamp)
        if pending is not None and not pending:
            self.pending.pop(producer_id, None)

    def result(self) -> OffsetsState:
        state = OffsetsState(records_read=self.records, partitions_read=[self.log_partition])
        for gtp, raw in self.loaded.items():
            c = self._commit(gtp, raw)
            if c is not None:
                state.offsets[gtp] = c
        for group, value in self.groups.items():
            try:
                state.groups[group] = decode_group_metadata_value(value)
            except ValueError as exc:
                self.problems.append(f"{OFFSETS_TOPIC}-{self.log_partition}: undecodable group metadata for {group}: {exc}")
        state.deleted_groups = set(self.removed)
        for per_producer in self.pending.values():
            for gtp, raw in per_producer.items():
                c = self._commit(gtp, raw)
                if c is not None:
                    state.pending[gtp] = c
        for g in set(state.groups) | {k[0] for k in state.offsets} | state.deleted_groups | {k[0] for k in state.pending}:
            state.group_partition[g] = self.log_partition
        state.problems = self.problems
        return state


def replay_partition_dir(
    partition_dir: Path,
    groups: Iterable[str] | None = None,
    on_event: Callable[[OffsetsEvent], None] | None = None,
    log_start_offset: int = 0,
    progress: Callable[[int], None] | None = None,
) -> OffsetsState:
    """Replay one `__consumer_offsets-N` directory; `groups` limits the result (None: every group)."""
    parsed = parse_partition_dir(partition_dir.name)
    if parsed is None or parsed[0] != OFFSETS_TOPIC:
        raise ValueError(f"{partition_dir}: not a {OFFSETS_TOPIC}-N partition directory")
    wanted_set = None if groups is None else set(groups)
    wanted: Callable[[str], bool] = (lambda g: True) if wanted_set is None else wanted_set.__contains__
    rp = _PartitionReplay(parsed[1], wanted, on_event)
    # the compiled run replays plain offset-commit/group batches and stops before any other, which the
    # Python loop below replays; the history (on_event) decodes every record, so it is Python's
    fast = speedups.offsets_replay_run if speedups is not None and on_event is None else None
    for seg in list_segments(partition_dir):
        with MappedFile(seg.log) as mf:
            buf = mf.buf
            end = len(buf)
            pos = 0
            scan = BatchScan(buf, pos, end)
            batches = iter(scan)
            while True:
                if fast is not None:
                    run_end, n = fast(buf, pos, end, log_start_offset, rp.keys, rp.loaded, rp.groups, rp.removed,
                                      wanted_set, _SKIP)
                    rp.records += n
                    if run_end != pos:  # the Python walk resumes where the compiled run stopped
                        pos = run_end
                        scan = BatchScan(buf, pos, end)
                        batches = iter(scan)
                batch = next(batches, None)
                if batch is None:
                    break
                pos = batch.end
                if batch.next_offset <= log_start_offset:
                    continue
                try:
                    records = batch.records()
                except (LogFormatError, ValueError) as exc:
                    rp.problems.append(f"{seg.log}: batch at position {batch.position}: {exc}")
                    break  # the scan ends after this batch, as the walk did
                if batch.is_control:
                    if records:
                        r = records[0]
                        rp.control(batch.producer_id, r.key, r.offset, r.timestamp)
                    continue
                rp.batch(records, batch.base_offset, batch.is_transactional, batch.producer_id, log_start_offset)
            if scan.error is not None:
                rp.problems.append(f"{seg.log}: {scan.error} (the rest of the segment is unreadable)")
            elif scan.trailing_bytes:
                rp.problems.append(f"{seg.log}: {scan.trailing_bytes} bytes of partial batch at the end ignored")
            if progress is not None:
                progress(mf.size)
    return rp.result()


def offsets_partition_dirs(log_dir: Path) -> list[Path]:
    """The `__consumer_offsets-N` directories of a log dir, by partition number."""
    found = []
    for entry in os.scandir(log_dir):
        if entry.is_dir() and not entry.name.endswith("-delete"):
            parsed = parse_partition_dir(entry.name)
            if parsed and parsed[0] == OFFSETS_TOPIC:
                found.append((parsed[1], Path(entry.path)))
    return [p for _, p in sorted(found)]


def _log_start_offsets(log_dir: Path) -> dict[tuple[str, int], int]:
    cp = log_dir / "log-start-offset-checkpoint"
    if not cp.is_file():
        return {}
    try:
        return read_offset_checkpoint(cp)
    except (LogFormatError, OSError, ValueError):
        return {}


def replay_log_dirs(
    log_dirs: Iterable[Path],
    groups: Iterable[str] | None = None,
    on_event: Callable[[OffsetsEvent], None] | None = None,
    offsets_partitions: int | None = None,
    progress: Callable[[int], None] | None = None,
) -> OffsetsState:
    """Replay every `__consumer_offsets` partition found in the log dirs and merge the results.

    With `groups` and `offsets_partitions` (the topic's partition count) only the partitions that
    hold those groups are read.  A group found in two partitions (the topic's partition count
    changed) keeps, per topic-partition, the commit with the latest commit timestamp.
    """
    group_list = None if groups is None else list(groups)
    only: set[int] | None = None
    if group_list is not None and offsets_partitions:
        only = {offsets_partition_for(g, offsets_partitions) for g in group_list}
    merged = OffsetsState()
    for log_dir in log_dirs:
        starts = _log_start_offsets(log_dir)
        for pdir in offsets_partition_dirs(log_dir):
            n = parse_partition_dir(pdir.name)[1]  # type: ignore[index]
            if only is not None and n not in only:
                continue
            st = replay_partition_dir(pdir, group_list, on_event, starts.get((OFFSETS_TOPIC, n), 0), progress)
            _merge(merged, st)
    merged.partitions_read.sort()
    return merged


def _merge(into: OffsetsState, st: OffsetsState) -> None:
    for k, c in st.offsets.items():
        old = into.offsets.get(k)
        if old is None or c.commit_timestamp > old.commit_timestamp:
            into.offsets[k] = c
    for g, meta in st.groups.items():
        into.groups.setdefault(g, meta)
    into.deleted_groups |= st.deleted_groups - set(into.groups)
    for k, c in st.pending.items():
        into.pending.setdefault(k, c)
    for g, n in st.group_partition.items():
        into.group_partition.setdefault(g, n)
    into.problems.extend(st.problems)
    into.partitions_read.extend(st.partitions_read)
    into.records_read += st.records_read


def log_end_offset(partition_dir: Path) -> int | None:
    """The next offset of a partition dir (its last batch's next offset), or None without segments.

    Starts at the last offset-index entry of the last segment (when the batch found there really
    holds that entry's offset) so only the tail of a large segment is scanned.
    """
    segments = list_segments(partition_dir)
    for i, seg in enumerate(reversed(segments)):
        hint = _last_index_entry(seg.index, seg.base_offset)
        with MappedFile(seg.log) as mf:
            nxt = None
            if hint is not None and hint[1] < mf.size:
                nxt = _scan_next_offset(mf.buf, hint[1], hint[0])
            if nxt is None:
                nxt = _scan_next_offset(mf.buf, 0, None)
            if nxt is not None:
                return nxt
            if mf.size == 0 and i == 0:
                return seg.base_offset
    return None


def _last_index_entry(path: Path, base_offset: int) -> tuple[int, int] | None:
    if not path.is_file():
        return None
    try:
        idx = OffsetIndex(path.read_bytes(), base_offset)
        used = idx.used_entries()
        if not used:
            return None
        e = idx.entry(used - 1)
        return e.offset, e.position
    except (LogFormatError, OSError, ValueError, IndexError):
        return None


def _scan_next_offset(buf: bytes, start: int, expect: int | None) -> int | None:
    nxt = None
    try:
        for b in BatchScan(buf, start):
            if nxt is None and expect is not None and not (b.base_offset <= expect <= b.last_offset):
                return None  # the index points elsewhere than a batch holding its offset
            nxt = b.next_offset
    except CorruptRecordError:
        pass
    return nxt
