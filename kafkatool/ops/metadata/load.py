"""The cluster image at a point: from one file, or from a metadata log dir's snapshot and log.

`load_file` reads one file as `kafka-metadata-shell.sh --snapshot FILE` does (`SnapshotFileReader`
feeding a `MetadataLoader`): control batches are skipped, each data batch's records apply and the
provenance becomes the batch's last offset, its leader epoch and its max timestamp.

`load_dir` starts, as a restarting node does, from the newest snapshot at or below the point asked
for (its provenance: the snapshot id's offset minus one, its epoch, the header's
`lastContainedLogTimestamp`) and replays the log after it up to the point; with no point, everything.
A point is an offset (the last one to include) or a time (every batch appended at or before it).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from kafkatool.log.decoders.metadata import MetadataRecord
from kafkatool.ops.metadata.image import Image, ImageBuilder, ImageError, Provenance
from kafkatool.ops.metadata.source import (
    Batch,
    Damage,
    Snapshot,
    list_snapshots,
    log_batches,
    log_files,
    read_batches,
    snapshot_header,
)


class PointError(ValueError):
    """A point the files do not cover."""


@dataclass
class Loaded:
    """An image and how it was read: the snapshot it started from, the last offset applied, damage."""

    image: Image
    snapshot: Snapshot | None = None
    last_offset: int = -1
    damage: list[Damage] = field(default_factory=list)
    skipped: list[Damage] = field(default_factory=list)  # records that could not apply (one file read alone)


@dataclass(frozen=True)
class Change:
    """One record that took effect: where and when it was written."""

    offset: int
    epoch: int
    time_ms: int
    record: MetadataRecord


def _apply_batch(
    builder: ImageBuilder,
    b: Batch,
    upto: int | None,
    damage: list[Damage],
    skipped: list[Damage] | None = None,
) -> Iterator[Change]:
    """Apply a batch's records (up to `upto`), yielding each as it takes effect (a metadata transaction's
    at its end record, each with its own offset).  A record that cannot apply is damage, or with
    `skipped` given is noted there and passed over, as Kafka's `MetadataBatchLoader` does."""
    offsets: dict[int, int] = {}
    for off, rec in b.records:
        if upto is not None and off > upto:
            break
        offsets[id(rec)] = off
        try:
            done = builder.apply(rec)
        except ImageError as exc:
            what = Damage(b.path, b.position, off, f"{rec.type} cannot apply: {exc}")
            if skipped is None:
                damage.append(what)
                return
            skipped.append(what)
            continue
        for r in done:
            yield Change(offsets.get(id(r), off), b.epoch, b.time_ms, r)


def load_file(path: Path) -> Loaded:
    """One snapshot or segment, read alone as the metadata shell reads it (a record that cannot apply
    to what was read before it, e.g. a change to a broker registered in an earlier segment, is skipped
    and noted, as the shell's loader does)."""
    damage: list[Damage] = []
    skipped: list[Damage] = []
    builder = ImageBuilder()
    last = -1
    for b in read_batches(path, damage):
        if b.control:
            continue
        for _ in _apply_batch(builder, b, None, damage, skipped):
            pass
        if damage:
            break
        builder.image.provenance = Provenance(b.base_offset + len(b.records) - 1, b.epoch, b.time_ms)
        last = b.last_offset
    return Loaded(builder.image, None, last, damage, skipped)


def load_snapshot(snap: Snapshot, damage: list[Damage]) -> Image:
    """A snapshot's image, with the provenance a node gives it."""
    builder = ImageBuilder()
    for b in read_batches(snap.path, damage):
        if not b.control:
            for _ in _apply_batch(builder, b, None, damage):
                pass
        if damage:
            break
    header = snapshot_header(snap.path) or {}
    builder.image.provenance = Provenance(
        snap.end_offset - 1, snap.epoch, header.get("lastContainedLogTimestamp", -1)
    )
    return builder.image


def offset_at_time(pdir: Path, time_ms: int) -> int:
    """The last offset appended at or before `time_ms`: from the log, else from the snapshots' headers."""
    damage: list[Damage] = []
    best = -1
    first = None
    for b in log_batches(pdir, 0, damage):
        first = b.base_offset if first is None else first
        if b.time_ms > time_ms:
            break
        best = b.last_offset
    if best >= 0 or (first == 0):
        return best
    for snap in reversed(list_snapshots(pdir)):
        header = snapshot_header(snap.path) or {}
        if header.get("lastContainedLogTimestamp", time_ms + 1) <= time_ms:
            return snap.end_offset - 1
    raise PointError(f"no snapshot or log batch of {pdir} is as old as the time asked for")


def base_for(pdir: Path, upto: int | None) -> tuple[Snapshot | None, int]:
    """The snapshot to start from for a point (None: the log from its start) and the first log offset."""
    snaps = [s for s in list_snapshots(pdir) if upto is None or s.end_offset - 1 <= upto]
    snaps = [s for s in snaps if s.end_offset > 0]
    segs = log_files(pdir)
    log_start = int(segs[0].name.split(".")[0]) if segs else None
    if snaps:
        return snaps[-1], snaps[-1].end_offset
    if log_start is None or log_start > 0:
        where = "no log segments" if log_start is None else f"the log starts at offset {log_start}"
        raise PointError(f"{pdir}: no snapshot at or before the point asked for, and {where}")
    return None, 0


def replay_into(
    builder: ImageBuilder, pdir: Path, first: int, upto: int | None, damage: list[Damage]
) -> Iterator[Change]:
    """Apply the log from offset `first` up to `upto` (None: its end) to `builder`, yielding each record
    as it takes effect; the provenance follows every data batch applied."""
    for b in log_batches(pdir, first, damage):
        if upto is not None and b.base_offset > upto:
            break
        if b.control:
            continue
        recs = [(o, r) for o, r in b.records if o >= first]
        yield from _apply_batch(
            builder,
            Batch(b.path, b.position, b.base_offset, b.last_offset, b.epoch, b.time_ms, False, recs),
            upto,
            damage,
        )
        if damage:
            return
        last = b.last_offset if upto is None else min(upto, b.last_offset)
        builder.image.provenance = Provenance(last, b.epoch, b.time_ms)


def start_image(
    pdir: Path, upto: int | None, damage: list[Damage]
) -> tuple[ImageBuilder, Snapshot | None, int]:
    """A builder holding the base image for a point: the newest snapshot at or below it, or an empty
    image when the log starts at offset 0 with none; and the first log offset to replay."""
    snap, first = base_for(pdir, upto)
    return ImageBuilder(load_snapshot(snap, damage) if snap else Image()), snap, first


def load_dir(pdir: Path, upto: int | None = None) -> Loaded:
    """The image at `upto` (inclusive; None: the newest the files hold)."""
    damage: list[Damage] = []
    builder, snap, first = start_image(pdir, upto, damage)
    if not damage:
        for _ in replay_into(builder, pdir, first, upto, damage):
            pass
    return Loaded(builder.image, snap, builder.image.provenance.offset, damage)


@dataclass(frozen=True)
class Point:
    """A point in a metadata log: an offset (the last one included) or a time (epoch ms)."""

    offset: int | None = None
    time_ms: int | None = None

    def describe(self) -> str:
        return f"offset {self.offset}" if self.offset is not None else f"time {self.time_ms}"


def parse_point(text: str) -> Point:
    """An offset (digits) or an ISO-8601 time (`2026-11-28T07:42:00Z`; no zone means UTC)."""
    import datetime as dt

    s = text.strip()
    if s.isdigit():
        return Point(offset=int(s))
    try:
        t = dt.datetime.fromisoformat(s.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        raise PointError(
            f"{text!r} is neither an offset nor an ISO-8601 time such as 2026-11-28T07:42:00Z"
        ) from None
    if t.tzinfo is None:
        t = t.replace(tzinfo=dt.UTC)
    return Point(time_ms=int(t.timestamp() * 1000))


def resolve(pdir: Path, point: Point | None) -> int | None:
    """The last offset a point includes (None: everything)."""
    if point is None:
        return None
    if point.offset is not None:
        return point.offset
    assert point.time_ms is not None
    return offset_at_time(pdir, point.time_ms)


def open_image(source: Path, point: Point | None = None) -> Loaded:
    """The image a path holds: one file read alone, or a metadata dir at a point (default: its newest)."""
    from kafkatool.ops.metadata.source import partition_dir

    if source.is_file():
        if point is not None:
            raise PointError(
                "a point (--at) needs a metadata log dir: one file is read whole, as the shell does"
            )
        return load_file(source)
    pdir = partition_dir(source)
    return load_dir(pdir, resolve(pdir, point))
