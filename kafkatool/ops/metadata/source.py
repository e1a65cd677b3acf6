"""The files of a KRaft metadata log dir, read in offset order: snapshots and log segments.

A metadata log dir (`__cluster_metadata-0`, or the metadata dir holding it) has log segments and
snapshots named `<end offset>-<epoch>.checkpoint`: snapshot N holds the image of every record below
offset N.  A node starts from its latest snapshot and replays the log after it (Kafka's
`MetadataLoader`); reading up to an earlier point starts from the latest snapshot at or before it.

A single file (a snapshot or one segment) is read the way `kafka-metadata-shell.sh --snapshot` reads
it (`SnapshotFileReader`): every batch in the file, at the offsets written in it.

Reading stops at the first damage (a torn or corrupt batch, a record that does not decode, a record
that cannot apply) and says where: `Damage` names the file, the byte position and the offset.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kafkatool.log.decoders._wire import DecodeError
from kafkatool.log.decoders.kraft_control import decode_control_record
from kafkatool.log.decoders.metadata import MetadataRecord, decode_metadata_record
from kafkatool.log.errors import CorruptRecordError
from kafkatool.log.files import LOG_SUFFIX, list_segments
from kafkatool.log.records import BatchScan
from kafkatool.release import NEWEST

METADATA_PARTITION = "__cluster_metadata-0"
_SNAPSHOT_NAME = re.compile(r"^(\d{20})-(\d{10})\.checkpoint$")


class SourceError(ValueError):
    """A path that is not a metadata log dir or file."""


@dataclass(frozen=True)
class Damage:
    """Where reading stopped: the file, the byte position and offset of what could not be read, and why."""

    path: str
    position: int
    offset: int | None
    reason: str

    def describe(self) -> str:
        at = f"offset {self.offset}, " if self.offset is not None else ""
        return f"{self.path}: damaged at {at}byte {self.position}: {self.reason}"


@dataclass(frozen=True)
class Snapshot:
    end_offset: int  # the snapshot id's offset: it holds every record below it
    epoch: int
    path: Path


@dataclass
class Batch:
    """One batch of a metadata file: its records (decoded) and where it was."""

    path: str
    position: int
    base_offset: int
    last_offset: int
    epoch: int
    time_ms: int
    control: bool
    records: list[tuple[int, Any]] = field(default_factory=list)  # (offset, MetadataRecord | (type, data))


def snapshot_name(end_offset: int, epoch: int) -> str:
    return f"{end_offset:020d}-{epoch:010d}.checkpoint"


def partition_dir(path: Path) -> Path:
    """The metadata log dir itself, given it or the metadata dir that holds `__cluster_metadata-0`."""
    if not path.exists():
        raise FileNotFoundError(2, "No such file or directory", str(path))
    if not path.is_dir():
        raise SourceError(f"{path}: not a directory")
    inner = path / METADATA_PARTITION
    if inner.is_dir():
        return inner
    if any(_SNAPSHOT_NAME.match(p.name) or p.name.endswith(LOG_SUFFIX) for p in path.iterdir()):
        return path
    raise SourceError(f"{path}: no {METADATA_PARTITION} here, and no metadata log segments or snapshots")


def list_snapshots(pdir: Path) -> list[Snapshot]:
    """The complete snapshots of a metadata log dir, oldest first (`.checkpoint.part` and deleted ones skipped)."""
    out = []
    for p in pdir.iterdir():
        m = _SNAPSHOT_NAME.match(p.name)
        if m:
            out.append(Snapshot(int(m.group(1)), int(m.group(2)), p))
    return sorted(out, key=lambda s: (s.end_offset, s.epoch))


def log_files(pdir: Path) -> list[Path]:
    return [s.log for s in list_segments(pdir) if s.log.exists()]


def read_batches(path: Path, damage: list[Damage]) -> Iterator[Batch]:
    """Every batch of one file, records decoded; stops at the first damage, appending it to `damage`."""
    buf = path.read_bytes()
    scan = BatchScan(buf)
    for b in scan:
        try:
            if not b.is_valid():
                damage.append(
                    Damage(str(path), b.position, b.base_offset, "the batch's CRC does not match its bytes")
                )
                return
            recs: list[tuple[int, Any]] = []
            for r in b.records():
                if b.is_control:
                    recs.append((r.offset, decode_control_record(r.key, r.value)))
                else:
                    # the newest layouts whatever text release is chosen: the image reads every version
                    recs.append((r.offset, decode_metadata_record(r.value, NEWEST)))
        except (CorruptRecordError, DecodeError) as exc:
            damage.append(Damage(str(path), b.position, b.base_offset, str(exc) or type(exc).__name__))
            return
        yield Batch(
            str(path),
            b.position,
            b.base_offset,
            b.last_offset,
            b.partition_leader_epoch,
            b.max_timestamp,
            b.is_control,
            recs,
        )
    if scan.error is not None:
        damage.append(
            Damage(
                str(path), getattr(scan.error, "position", None) or scan.valid_bytes, None, str(scan.error)
            )
        )
    elif scan.trailing_bytes:
        damage.append(
            Damage(
                str(path),
                scan.valid_bytes,
                None,
                f"{scan.trailing_bytes} trailing byte(s) do not hold a whole batch",
            )
        )


def log_batches(pdir: Path, start: int, damage: list[Damage]) -> Iterator[Batch]:
    """The log's batches holding offsets at or after `start`, in order, across segments."""
    segs = log_files(pdir)
    for i, log in enumerate(segs):
        nxt = int(segs[i + 1].name.split(".")[0]) if i + 1 < len(segs) else None
        if nxt is not None and nxt <= start:
            continue
        for b in read_batches(log, damage):
            if b.last_offset >= start:
                yield b
        if damage:
            return


def log_range(pdir: Path) -> tuple[int | None, int | None]:
    """(first offset, next offset) of the log's segments, None when it has none; a shallow walk."""
    segs = log_files(pdir)
    if not segs:
        return None, None
    first = int(segs[0].name.split(".")[0])
    end = None
    for log in reversed(segs):
        last = None
        for b in BatchScan(log.read_bytes()):
            last = b.last_offset
        if last is not None:
            end = last + 1
            break
    return first, end if end is not None else first


def snapshot_header(path: Path) -> dict[str, Any] | None:
    """The SnapshotHeader control record's fields (lastContainedLogTimestamp), or None."""
    damage: list[Damage] = []
    for b in read_batches(path, damage):
        for _, rec in b.records:
            if b.control and rec[0] == "SNAPSHOT_HEADER":
                return dict(rec[1])
        break
    return None


def metadata_records(b: Batch) -> Iterator[tuple[int, MetadataRecord]]:
    if not b.control:
        yield from b.records
