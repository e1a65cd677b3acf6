"""Are the replicas of a partition the same?  Where do they part, and what would truncation drop?

Followers copy the leader's batches byte for byte, so healthy replicas hold the same batches —
same base and last offset, same partition leader epoch, same CRC — over the offsets they share.
After an unclean election, a disk swap or a crash they may not: this module walks the batch
headers of copies of one partition's dirs side by side and reports, for every pair, the first
offset where they differ (refined to the first differing record on request), the offsets only one
side holds past that point, and each replica's leader-epoch history.  From the histories it
predicts what Kafka's own follower truncation (KIP-101/KIP-279: OffsetsForLeaderEpoch against the
leader's epoch cache) would remove from each replica if a given one leads, and says when the data
diverges below what that truncation reaches (damage that fetching will not repair).

Only batch headers are read unless records are asked for; memory is flat in the log size.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from kafkatool.log.checkpoint import read_leader_epoch_checkpoint
from kafkatool.log.errors import CheckpointError, CorruptRecordError, LogFormatError
from kafkatool.log.files import MappedFile, list_segments, parse_partition_dir
from kafkatool.log.records import Batch, BatchScan, Record

LEADER_EPOCH_FILE = "leader-epoch-checkpoint"
NO_EPOCH = -1


class ReplicaInputError(ValueError):
    """A replica path that is not a partition dir, or replicas of different partitions."""


@dataclass(frozen=True)
class BatchHeader:
    """What identifies a batch across replicas, and where it lies in one of them."""

    base_offset: int
    last_offset: int
    leader_epoch: int
    crc: int
    records: int
    segment: str
    position: int

    def same_as(self, other: BatchHeader) -> bool:
        return (
            self.base_offset == other.base_offset
            and self.last_offset == other.last_offset
            and self.leader_epoch == other.leader_epoch
            and self.crc == other.crc
        )


@dataclass
class Replica:
    """One copy of the partition: its dir, the offsets it holds and its leader-epoch cache."""

    name: str
    path: Path
    log_start: int | None = None  # base offset of its first batch (None: empty log)
    log_end: int = 0  # next offset (last offset of its last readable batch + 1)
    batches: int = 0
    records: int = 0
    epochs: list[tuple[int, int]] = field(default_factory=list)  # (epoch, start offset)
    epoch_problem: str | None = None
    damage: str | None = None  # where its log stops being readable, if it does

    @property
    def latest_epoch(self) -> int:
        return self.epochs[-1][0] if self.epochs else NO_EPOCH

    def end_offset_for_epoch(self, epoch: int) -> tuple[int, int]:
        """(largest epoch <= `epoch` it knows, that epoch's end offset), as the leader answers
        OffsetsForLeaderEpoch: the start of the next epoch, or the log end for its latest one;
        (NO_EPOCH, -1) when it knows no such epoch (UNDEFINED_EPOCH_OFFSET)."""
        found = None
        for i, (e, _start) in enumerate(self.epochs):
            if e <= epoch:
                found = i
        if found is None:
            return NO_EPOCH, -1
        e = self.epochs[found][0]
        if found + 1 < len(self.epochs):
            return e, self.epochs[found + 1][1]
        return e, self.log_end


@dataclass
class OffsetRange:
    first: int
    last: int  # inclusive
    records: int

    def as_dict(self) -> dict[str, int]:
        return {"first_offset": self.first, "last_offset": self.last, "records": self.records}


@dataclass
class PairReport:
    """How two replicas compare over the offsets both hold."""

    a: str
    b: str
    status: str  # identical | behind (one is a prefix of the other) | diverged
    common_from: int | None  # first offset both hold
    diverged_at: int | None = None  # first offset at which they differ
    first_differing_record: int | None = None  # with records=True: first offset whose record differs
    batch_a: BatchHeader | None = None  # the first differing batches
    batch_b: BatchHeader | None = None
    only_a: OffsetRange | None = None  # what a holds past the common part that b does not
    only_b: OffsetRange | None = None


@dataclass
class Truncation:
    """What Kafka's follower truncation would do to `replica` if `leader` leads."""

    replica: str
    leader: str
    truncate_to: int | None  # None: no common epoch, falls back to the high watermark (unknown offline)
    dropped: OffsetRange | None
    reason: str
    below_divergence: bool = False  # data differs below the truncation point: fetching will not repair it


@dataclass
class ReplicaReport:
    topic: str | None
    partition: int | None
    replicas: list[Replica]
    pairs: list[PairReport]
    leader: str | None
    truncations: list[Truncation]

    @property
    def diverged(self) -> bool:
        return any(p.status == "diverged" for p in self.pairs) or any(t.below_divergence for t in self.truncations)


def _batches(replica: Replica) -> Iterator[tuple[BatchHeader, Batch]]:
    """The replica's readable batches in offset order; notes where damage stops the walk."""
    for seg in list_segments(replica.path):
        with MappedFile(seg.log) as mf:
            scan = BatchScan(mf.buf, release=mf.release)
            for b in scan:
                records = b.count if b.count is not None else b.last_offset - b.base_offset + 1
                epoch = b.partition_leader_epoch if b.magic >= 2 else NO_EPOCH
                yield BatchHeader(b.base_offset, b.last_offset, epoch, b.crc, records, seg.log.name, b.position), b
            if scan.error is not None:
                replica.damage = f"{seg.log.name} at byte {scan.valid_bytes}: {scan.error}"
                return
            if scan.trailing_bytes:
                replica.damage = f"{seg.log.name}: {scan.trailing_bytes} trailing bytes at byte {scan.valid_bytes}"
                return


def open_replica(name: str, path: Path) -> Replica:
    """Read the replica's extent (one header walk) and its leader-epoch cache."""
    if not path.is_dir():
        raise ReplicaInputError(f"{path}: not a directory")
    rep = Replica(name, path)
    for h, _ in _batches(rep):
        if rep.log_start is None:
            rep.log_start = h.base_offset
        rep.log_end = h.last_offset + 1
        rep.batches += 1
        rep.records += h.records
    cp = path / LEADER_EPOCH_FILE
    if cp.exists():
        try:
            rep.epochs = read_leader_epoch_checkpoint(cp)
        except (CheckpointError, OSError, ValueError) as exc:
            rep.epoch_problem = f"{LEADER_EPOCH_FILE}: {exc}"
    else:
        rep.epoch_problem = f"no {LEADER_EPOCH_FILE}"
    return rep


def _records_equal(x: Record, y: Record) -> bool:
    return (
        x.offset == y.offset
        and x.timestamp == y.timestamp
        and x.key == y.key
        and x.value == y.value
        and x.headers == y.headers
    )


def _first_differing_record(ba: Batch, bb: Batch) -> int:
    """The first offset at which two differing batches' records differ (content or presence)."""
    ra = {r.offset: r for r in ba.records()}
    rb = {r.offset: r for r in bb.records()}
    for off in sorted(set(ra) | set(rb)):
        x, y = ra.get(off), rb.get(off)
        if x is None or y is None or not _records_equal(x, y):
            return off
    return min(ba.base_offset, bb.base_offset)  # same records, other framing (epoch, producer fields)


def compare_pair(a: Replica, b: Replica, records: bool = False) -> PairReport:
    """Walk both replicas' batches from the first offset both hold to the first difference."""
    rep = PairReport(a.name, b.name, "identical", None)
    if a.log_start is None or b.log_start is None:
        rep.status = "identical" if a.log_start == b.log_start else "behind"
        rep.only_a = OffsetRange(a.log_start, a.log_end - 1, a.records) if a.log_start is not None else None
        rep.only_b = OffsetRange(b.log_start, b.log_end - 1, b.records) if b.log_start is not None else None
        return rep
    start = max(a.log_start, b.log_start)
    rep.common_from = start
    ia, ib = _batches(a), _batches(b)
    # skip what lies below the other's log start (retention, not divergence)
    ha = _advance(ia, start)
    hb = _advance(ib, start)
    while ha is not None and hb is not None:
        if not ha[0].same_as(hb[0]):
            rep.status = "diverged"
            rep.diverged_at = max(min(ha[0].base_offset, hb[0].base_offset), start)
            rep.batch_a, rep.batch_b = ha[0], hb[0]
            if records:
                rep.first_differing_record = max(_first_differing_record(ha[1], hb[1]), start)
            break
        ha, hb = next(ia, None), next(ib, None)
    if rep.status != "diverged":
        if ha is None and hb is None:
            return rep
        rep.status = "behind"  # one holds all the other does and more: a lagging copy, not a divergence
    rep.only_a = _rest(ha, ia)
    rep.only_b = _rest(hb, ib)
    return rep


def _advance(it: Iterator[tuple[BatchHeader, Batch]], start: int) -> tuple[BatchHeader, Batch] | None:
    for item in it:
        if item[0].last_offset >= start:
            return item
    return None


def _rest(first: tuple[BatchHeader, Batch] | None, it: Iterator[tuple[BatchHeader, Batch]]) -> OffsetRange | None:
    if first is None:
        return None
    lo, hi, n = first[0].base_offset, first[0].last_offset, first[0].records
    for h, _ in it:
        hi = h.last_offset
        n += h.records
    return OffsetRange(lo, hi, n)


def choose_leader(replicas: Sequence[Replica]) -> Replica:
    """The replica that would win a clean election: the highest leader epoch, then the longest log."""
    return max(replicas, key=lambda r: (r.latest_epoch, r.log_end))


def truncation(follower: Replica, leader: Replica) -> Truncation:
    """Kafka's follower truncation (2.0+, KIP-279) computed from the two epoch caches.

    The follower asks for the end offset of its latest epoch; the leader answers with the largest
    epoch it knows not above it and that epoch's end; the follower truncates to the smaller of that
    end and its own end offset for the epoch answered.  With no epoch in common Kafka falls back to
    the high watermark, which only a live cluster knows.
    """
    if not follower.epochs:
        return Truncation(follower.name, leader.name, None, None,
                          "no leader epochs on the follower: truncates to the high watermark (not known offline)")
    asked = follower.latest_epoch
    epoch, leader_end = leader.end_offset_for_epoch(asked)
    if epoch == NO_EPOCH:
        return Truncation(follower.name, leader.name, None, None,
                          f"the leader knows no epoch <= {asked}: truncates to the high watermark (not known offline)")
    _, own_end = follower.end_offset_for_epoch(epoch)
    to = min(leader_end, own_end, follower.log_end)
    reason = f"epoch {asked} -> leader's epoch {epoch} ends at {leader_end}"
    if epoch != asked:
        reason += f"; follower's epoch {epoch} ends at {own_end}"
    dropped = None
    if follower.log_start is not None and to < follower.log_end:
        dropped = OffsetRange(to, follower.log_end - 1, -1)
    return Truncation(follower.name, leader.name, to, dropped, reason)


def _count_records(replica: Replica, first: int) -> int:
    return sum(h.records if h.base_offset >= first else max(0, h.last_offset - first + 1)
               for h, _ in _batches(replica) if h.last_offset >= first)


def compare_replicas(
    named_paths: Sequence[tuple[str, Path]], *, records: bool = False, leader: str | None = None
) -> ReplicaReport:
    """Compare every pair of the given copies of one partition and predict truncation."""
    if len(named_paths) < 2:
        raise ReplicaInputError("give at least two replicas of the partition")
    parsed = {parse_partition_dir(p.name) for _, p in named_paths}
    known = {tp for tp in parsed if tp is not None}
    if len(parsed) > 1 and None not in parsed:
        names = ", ".join(sorted(f"{t}-{n}" for t, n in known))
        raise ReplicaInputError(f"the dirs hold different partitions ({names})")
    topic: str | None = None
    partition: int | None = None
    if len(parsed) == 1 and known:
        topic, partition = next(iter(known))
    try:
        replicas = [open_replica(n, p) for n, p in named_paths]
    except (LogFormatError, CorruptRecordError) as exc:
        raise ReplicaInputError(str(exc)) from None
    pairs = [
        compare_pair(replicas[i], replicas[j], records)
        for i in range(len(replicas))
        for j in range(i + 1, len(replicas))
    ]
    if leader is not None:
        lead = next((r for r in replicas if r.name == leader), None)
        if lead is None:
            raise ReplicaInputError(f"--leader {leader}: not one of {', '.join(r.name for r in replicas)}")
    else:
        lead = choose_leader(replicas)
    truncs = []
    for r in replicas:
        if r is lead:
            continue
        t = truncation(r, lead)
        if t.dropped is not None:
            t.dropped.records = _count_records(r, t.dropped.first)
        pair = next(p for p in pairs if {p.a, p.b} == {r.name, lead.name})
        if pair.status == "diverged" and pair.diverged_at is not None and t.truncate_to is not None:
            t.below_divergence = pair.diverged_at < t.truncate_to
        truncs.append(t)
    return ReplicaReport(topic, partition, replicas, pairs, lead.name, truncs)


def report_dict(rep: ReplicaReport) -> dict:
    """The documented JSON form (docs/replicas.md)."""

    def header(h: BatchHeader | None) -> dict | None:
        if h is None:
            return None
        return {"base_offset": h.base_offset, "last_offset": h.last_offset, "leader_epoch": h.leader_epoch,
                "crc": h.crc, "segment": h.segment, "position": h.position}

    return {
        "topic": rep.topic,
        "partition": rep.partition,
        "diverged": rep.diverged,
        "replicas": [
            {"name": r.name, "path": str(r.path), "log_start_offset": r.log_start, "log_end_offset": r.log_end,
             "batches": r.batches, "records": r.records,
             "leader_epochs": [{"epoch": e, "start_offset": s} for e, s in r.epochs],
             "leader_epoch_problem": r.epoch_problem, "damage": r.damage}
            for r in rep.replicas
        ],
        "pairs": [
            {"a": p.a, "b": p.b, "status": p.status, "common_from": p.common_from, "diverged_at": p.diverged_at,
             "first_differing_record": p.first_differing_record, "batch_a": header(p.batch_a),
             "batch_b": header(p.batch_b), "only_a": p.only_a.as_dict() if p.only_a else None,
             "only_b": p.only_b.as_dict() if p.only_b else None}
            for p in rep.pairs
        ],
        "leader": rep.leader,
        "truncation": [
            {"replica": t.replica, "leader": t.leader, "truncate_to": t.truncate_to,
             "dropped": t.dropped.as_dict() if t.dropped else None, "reason": t.reason,
             "below_divergence": t.below_divergence}
            for t in rep.truncations
        ],
    }
