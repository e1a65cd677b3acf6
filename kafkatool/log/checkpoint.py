"""Checkpoint and metadata text files of log dirs and partition dirs.

Versioned checkpoints share one layout (version line, count line, entries); the broker writes them
to `<file>.tmp`, fsyncs and renames, and so does `write_checkpoint`.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from kafkatool.log.errors import CheckpointError


@dataclass(frozen=True)
class Checkpoint:
    """A parsed checkpoint: version and entries (tuples of the entry's whitespace-split fields)."""

    version: int
    entries: list[tuple[str, ...]]


_JAVA_INT = re.compile(r"[+-]?[0-9]+")
_LINE_BREAK = re.compile(r"\r\n|\r|\n")  # BufferedReader.readLine's terminators
_JAVA_WS = re.compile(r"[ \t\n\x0b\f\r]+")  # Java's \s


def java_int(text: str, bits: int = 32) -> int:
    """Integer.parseInt / Long.parseLong: no surrounding spaces, no underscores, in range; else ValueError."""
    if not _JAVA_INT.fullmatch(text):
        raise ValueError(f"For input string: \"{text}\"")
    value = int(text)
    if not -(2 ** (bits - 1)) <= value < 2 ** (bits - 1):
        raise ValueError(f"For input string: \"{text}\"")
    return value


def _split_fields(line: str) -> tuple[str, ...]:
    """`line.split("\\s+")` as Java does it: a leading blank gives an empty first field."""
    if not _JAVA_WS.search(line):
        return (line,)
    parts = _JAVA_WS.split(line)
    while parts and parts[-1] == "":
        parts.pop()
    return tuple(parts)


def parse_checkpoint(text: str, path: str = "<checkpoint>", fields: int | None = None) -> Checkpoint:
    """Parse versioned checkpoint text with the broker's checks and error wording.

    As Kafka's CheckpointFile reads: an empty file, or one with only a version line, has no entries;
    the version and count lines must be plain Java ints; entries split on whitespace.
    """
    lines = _LINE_BREAK.split(text)
    if lines and lines[-1] == "":
        lines.pop()
    if not lines:
        return Checkpoint(0, [])
    try:
        version = java_int(lines[0])
    except ValueError:
        raise CheckpointError(f"Malformed line in checkpoint file [{path}]: {lines[0]}") from None
    if version != 0:
        raise CheckpointError(f"Unrecognised version:{version}, expected version: 0 in checkpoint file at: {path}")
    if len(lines) < 2:
        return Checkpoint(version, [])
    try:
        expected = java_int(lines[1])
    except ValueError:
        raise CheckpointError(f"Malformed line in checkpoint file [{path}]: {lines[1]}") from None
    entries = []
    for line in lines[2:]:
        parts = _split_fields(line)
        if fields is not None and len(parts) != fields:
            raise CheckpointError(f"Malformed line in checkpoint file [{path}]: {line}")
        entries.append(parts)
    if len(entries) != expected:
        raise CheckpointError(f"Expected [{expected}] entries in checkpoint file [{path}], but found only [{len(entries)}]")
    return Checkpoint(version, entries)


def _read_text(path: Path) -> str:
    """The file as UTF-8; malformed bytes are a CheckpointError, as Java's strict reader fails on them."""
    try:
        return path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CheckpointError(f"checkpoint file [{path}] is not valid UTF-8: {exc.reason} at byte {exc.start}") from None


def read_offset_checkpoint(path: Path) -> dict[tuple[str, int], int]:
    """`topic partition offset` checkpoints (recovery point, replication, log start, cleaner)."""
    cp = parse_checkpoint(_read_text(path), str(path), fields=3)
    out = {}
    for topic, partition, offset in cp.entries:
        try:
            out[(topic, java_int(partition))] = java_int(offset, 64)
        except ValueError:
            raise CheckpointError(f"Malformed line in checkpoint file [{path}]: {topic} {partition} {offset}") from None
    return out


def read_leader_epoch_checkpoint(path: Path) -> list[tuple[int, int]]:
    """`epoch startOffset` entries of a partition's leader-epoch-checkpoint."""
    cp = parse_checkpoint(_read_text(path), str(path), fields=2)
    try:
        return [(java_int(e), java_int(o, 64)) for e, o in cp.entries]
    except ValueError as exc:
        raise CheckpointError(f"Malformed line in checkpoint file [{path}]: {exc}") from None


def format_checkpoint(entries: list[tuple[object, ...]], version: int = 0) -> str:
    """The text CheckpointFile writes: version line, count line, one space-joined entry a line."""
    lines = [str(version), str(len(entries))] + [" ".join(str(f) for f in e) for e in entries]
    return "\n".join(lines) + "\n"


def atomic_write(path: Path, data: bytes) -> None:
    """Write beside the target, fsync, rename over it, fsync the directory: a crash leaves old or new."""
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    fsync_dir(path.parent)


def fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_offset_checkpoint(path: Path, offsets: dict[tuple[str, int], int]) -> None:
    entries = [(t, p, o) for (t, p), o in sorted(offsets.items())]
    atomic_write(path, format_checkpoint(entries).encode())  # type: ignore[arg-type]


def write_leader_epoch_checkpoint(path: Path, entries: list[tuple[int, int]]) -> None:
    atomic_write(path, format_checkpoint(entries).encode())  # type: ignore[arg-type]


def read_properties(text: str) -> dict[str, str]:
    """Java .properties subset as brokers write meta.properties (comments, key=value)."""
    out = {}
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line[0] in "#!":
            continue
        sep = min((i for i in (line.find("="), line.find(":")) if i >= 0), default=-1)
        if sep < 0:
            out[line] = ""
        else:
            out[line[:sep].strip()] = line[sep + 1 :].strip()
    return out


def read_partition_metadata(text: str) -> dict[str, str]:
    """`partition.metadata`: `version: 0` and `topic_id: <base64url uuid>`."""
    out = {}
    for line in text.splitlines():
        if ":" in line:
            k, v = line.split(":", 1)
            out[k.strip()] = v.strip()
    if out.get("version") != "0" or "topic_id" not in out:
        raise CheckpointError("partition.metadata: expected 'version: 0' and a 'topic_id' line")
    return out
