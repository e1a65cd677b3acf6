"""Safety rails for every offline writer: the broker's lock, and Kafka's segment-swap protocol.

A broker holds `<logdir>/.lock` (Java's FileChannel.tryLock: a POSIX fcntl lock on Linux).  We test
and take both fcntl and flock locks, so neither a broker nor another kafkatool can run beside us.

Segments are never rewritten in place.  New files are written as `*.cleaned`, renamed to `*.swap`,
the old segments renamed to `*.deleted`, the `.swap` suffix stripped, and only then `.deleted` files
removed — Kafka's own protocol, which the broker's startup already knows how to finish or roll back
(`finish_interrupted_swaps` is that startup logic).  A kill at any point leaves a loadable directory.

Read-only modes (dry runs, `compact --estimate`, `index verify`/`dump`, `dump-log`) take no lock, so
they can preview a live log dir; `read_consistently` runs such a pass again when a file it read was
renamed, replaced, deleted or truncated meanwhile (a broker's or another kafkatool's swap), and after
a few tries says which file keeps changing (`ChangedWhileReading`, an OSError: exit 3).

Fault injection: set `KAFKATOOL_CRASH_AT=<step>` and the process exits with status 99 right at that
step (the steps are the `crash_point(...)` names below); tests use it to prove the claim above.
`<step>@<n>` exits at the n-th time the step is reached (steps inside loops), and
`KAFKATOOL_CRASH_TRACE=<file>` appends every step reached to that file, one a line, so a test can
enumerate them (`tests/support/faults.py`).  `KAFKATOOL_INTERRUPT_AT=<step>[@<n>]` sends the process a
real SIGINT there instead: a Ctrl-C at that moment, with the clean-up an interrupted command does.
"""

from __future__ import annotations

import errno
import fcntl
import os
import signal
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from kafkatool.log.checkpoint import fsync_dir
from kafkatool.log.files import (
    CLEANED_SUFFIX,
    DELETED_SUFFIX,
    LOCK_FILE,
    LOG_SUFFIX,
    SWAP_SUFFIX,
    offset_from_name,
    parse_partition_dir,
)

CRASH_ENV = "KAFKATOOL_CRASH_AT"
CRASH_TRACE_ENV = "KAFKATOOL_CRASH_TRACE"
CRASH_EXIT = 99
INTERRUPT_ENV = "KAFKATOOL_INTERRUPT_AT"  # the same steps, but a real SIGINT (Ctrl-C) instead of a kill
SEGMENT_FILE_SUFFIXES = (".log", ".index", ".timeindex", ".txnindex")
_crash_counts: dict[str, int] = {}
_interrupt_counts: dict[str, int] = {}


def crash_point(step: str) -> None:
    """Exit abruptly (no cleanup, no flush) when KAFKATOOL_CRASH_AT names this step (or `step@n`); raise
    SIGINT when KAFKATOOL_INTERRUPT_AT does (the clean-up an interrupted command does then runs)."""
    trace = os.environ.get(CRASH_TRACE_ENV)
    if trace:
        with open(trace, "a", encoding="utf-8") as f:
            f.write(step + "\n")
    if _reached(os.environ.get(CRASH_ENV), step, _crash_counts):
        os._exit(CRASH_EXIT)
    if _reached(os.environ.get(INTERRUPT_ENV), step, _interrupt_counts):
        signal.raise_signal(signal.SIGINT)  # KeyboardInterrupt right here, as a Ctrl-C at this moment


def _reached(want: str | None, step: str, counts: dict[str, int]) -> bool:
    """Whether `want` (`step` or `step@n`) names this occurrence of `step`."""
    if not want:
        return False
    name, _, nth = want.partition("@")
    if name != step:
        return False
    count = counts[step] = counts.get(step, 0) + 1
    return not nth or int(nth) == count


class LogDirLockedError(Exception):
    """The log dir's .lock is held by a running broker or another kafkatool."""


def log_dir_of(path: Path) -> Path:
    """The log dir that holds the broker lock: the path itself, or the parent of a partition dir."""
    path = path.resolve()
    if parse_partition_dir(path.name) is not None and not (path / LOCK_FILE).exists():
        return path.parent
    return path


class LogDirLock:
    """Take the broker's lock on a log dir for the duration of an offline write.

    Raises LogDirLockedError when another process holds it.  With `create=False` (dry runs) a
    missing `.lock` file is not created and only tested when present.
    """

    def __init__(self, log_dir: Path, create: bool = True) -> None:
        self.log_dir = log_dir
        self.path = log_dir / LOCK_FILE
        self.create = create
        self._fd: int | None = None

    def __enter__(self) -> LogDirLock:
        if not self.path.exists() and not self.create:
            return self
        flags = os.O_RDWR | (os.O_CREAT if self.create else 0)
        try:
            fd = os.open(self.path, flags, 0o644)
        except PermissionError:
            fd = os.open(self.path, os.O_RDONLY)
        try:
            try:
                fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as exc:
                if exc.errno == errno.EBADF:  # read-only descriptor: a shared lock still detects writers
                    fcntl.lockf(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
                else:
                    raise
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            os.close(fd)
            if exc.errno in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
                raise LogDirLockedError(
                    f"{self.path} is locked by another process (a running broker?): stop it first"
                ) from None
            raise
        self._fd = fd
        return self

    def __exit__(self, *exc: object) -> None:
        if self._fd is not None:
            try:
                fcntl.flock(self._fd, fcntl.LOCK_UN)
                fcntl.lockf(self._fd, fcntl.LOCK_UN)
            finally:
                os.close(self._fd)
                self._fd = None


def is_locked(log_dir: Path) -> bool:
    """True when another process holds the log dir's lock (never creates the file)."""
    try:
        with LogDirLock(log_dir, create=False):
            return False
    except LogDirLockedError:
        return True


def lock_holder_note(log_dir: Path) -> str | None:
    """For a read-only mode: a warning when a broker (or a writer) holds the lock, else None."""
    if not is_locked(log_dir):
        return None
    return (
        f"note: {log_dir / LOCK_FILE} is held by another process (a running broker?): "
        "this reads a live log dir without locking it, so what it shows may race with that process"
    )


class ChangedWhileReading(OSError):
    """A file of a log dir kept changing (renamed, replaced, deleted, truncated) while it was read."""

    def __init__(self, path: Path | str) -> None:
        super().__init__(
            errno.EAGAIN,
            "changed while being read (renamed, replaced or truncated by another process); run again",
            str(path),
        )


_T = TypeVar("_T")
#: names whose change invalidates a read: segment files (and their .cleaned/.swap/.deleted forms),
#: snapshots and the leader-epoch cache.  The log dir's checkpoints are rewritten every few seconds
#: by a live broker and are read once, so they do not count.
_WATCHED_PREFIX_DIGITS = 20


def _watched(name: str) -> bool:
    return name[:_WATCHED_PREFIX_DIGITS].isdigit() or name == "leader-epoch-checkpoint"


def dir_fingerprint(dirs: Iterable[Path]) -> dict[Path, tuple[int, int]]:
    """(inode, size) of every watched file in the given partition dirs."""
    out: dict[Path, tuple[int, int]] = {}
    for d in dirs:
        try:
            entries = list(os.scandir(d))
        except FileNotFoundError:
            continue
        for e in entries:
            if _watched(e.name):
                try:
                    st = e.stat()
                except FileNotFoundError:
                    continue
                out[Path(e.path)] = (st.st_ino, st.st_size)
    return out


def file_identity(path: Path) -> tuple[int, int] | None:
    """(inode, size) of a file, None when it is gone."""
    try:
        st = path.stat()
    except FileNotFoundError:
        return None
    return st.st_ino, st.st_size


def identity_changed(before: tuple[int, int] | None, after: tuple[int, int] | None) -> bool:
    """Gone, replaced by another inode, or shorter: what was read no longer is the file.

    Growth is what a live log does all the time (appends) and leaves what was read valid as of its
    listing, so it does not count.
    """
    return before is not None and (after is None or after[0] != before[0] or after[1] < before[1])


def changed_files(before: dict[Path, tuple[int, int]], after: dict[Path, tuple[int, int]]) -> list[Path]:
    """Files of `before` that are gone, replaced or shorter in `after` (new files do not count)."""
    return [path for path, ident in before.items() if identity_changed(ident, after.get(path))]


def read_consistently(read: Callable[[], _T], dirs: Iterable[Path], attempts: int = 3) -> _T:
    """Run a read-only pass until no file it could have read changed under it.

    A pass that fails with FileNotFoundError because a file went away (a swap renamed it), or whose
    files were renamed, replaced or truncated while it ran, is run again from a fresh listing; after
    `attempts` passes ChangedWhileReading names the first file that changed.
    """
    dirs = list(dirs)
    changed: list[Path] = []
    for _ in range(attempts):
        before = dir_fingerprint(dirs)
        try:
            result = read()
        except FileNotFoundError as exc:
            changed = changed_files(before, dir_fingerprint(dirs))
            if not changed:
                raise  # not a concurrent change: a path that was never there
            changed = [Path(exc.filename)] if exc.filename else changed
            continue
        changed = changed_files(before, dir_fingerprint(dirs))
        if not changed:
            return result
    raise ChangedWhileReading(changed[0])


def _segment_files(partition_dir: Path, base: int, suffix: str) -> list[Path]:
    stem = f"{base:020d}"
    return [
        partition_dir / f"{stem}{s}{suffix}"
        for s in SEGMENT_FILE_SUFFIXES
        if (partition_dir / f"{stem}{s}{suffix}").exists()
    ]


def _rename_suffix(path: Path, old: str, new: str) -> Path:
    name = path.name
    if old:
        assert name.endswith(old), (name, old)
        name = name[: -len(old)]
    target = path.with_name(name + new)
    os.replace(path, target)
    return target


def replace_segments(partition_dir: Path, new_bases: Iterable[int], old_bases: Iterable[int]) -> None:
    """Swap in the `.cleaned` segments for new_bases and retire old_bases (Kafka's replaceSegments).

    Steps: fsync the `.cleaned` files; rename them to `.swap`; rename every old segment file to
    `.deleted`; strip `.swap`; delete the `.deleted` files.  Each step is durable (directory fsync)
    before the next starts.
    """
    new_bases = sorted(set(new_bases))
    old_bases = sorted(set(old_bases))
    for base in new_bases:
        for f in _segment_files(partition_dir, base, CLEANED_SUFFIX):
            with open(f, "rb+") as fh:
                os.fsync(fh.fileno())
    fsync_dir(partition_dir)
    crash_point("cleaned-written")
    # .cleaned -> .swap: log file last, so a .log.swap implies its indexes are already .swap
    for base in new_bases:
        files = _segment_files(partition_dir, base, CLEANED_SUFFIX)
        files.sort(key=lambda p: p.name.startswith(f"{base:020d}.log"))
        for f in files:
            _rename_suffix(f, CLEANED_SUFFIX, SWAP_SUFFIX)
            crash_point("renaming-to-swap")
    fsync_dir(partition_dir)
    crash_point("swap-renamed")
    for base in old_bases:
        for f in _segment_files(partition_dir, base, ""):
            _rename_suffix(f, "", DELETED_SUFFIX)
            crash_point("renaming-to-deleted")
    fsync_dir(partition_dir)
    crash_point("old-renamed-deleted")
    for base in new_bases:
        files = _segment_files(partition_dir, base, SWAP_SUFFIX)
        files.sort(key=lambda p: p.name.startswith(f"{base:020d}.log"))
        for f in files:
            _rename_suffix(f, SWAP_SUFFIX, "")
            crash_point("stripping-swap")
    fsync_dir(partition_dir)
    crash_point("swap-stripped")
    for base in old_bases:
        for f in _segment_files(partition_dir, base, DELETED_SUFFIX):
            f.unlink()
    fsync_dir(partition_dir)
    crash_point("deleted-removed")


@dataclass
class SwapResolution:
    """What finishing interrupted swaps did (or would do, in a dry run)."""

    deleted: list[str] = field(default_factory=list)
    renamed: list[tuple[str, str]] = field(default_factory=list)


def _swap_log_last_offset(swap_log: Path) -> int:
    """Last offset in a `.log.swap` file (the range of old segments it replaces)."""
    from kafkatool.log.files import MappedFile
    from kafkatool.log.records import BatchScan

    last = offset_from_name(swap_log.name) - 1
    with MappedFile(swap_log) as mf:
        for b in BatchScan(mf.buf):
            last = b.last_offset
    return last


def finish_interrupted_swaps(partition_dir: Path, dry_run: bool = False) -> SwapResolution:
    """The broker's startup handling of temporary files (LogLoader.removeTempFilesAndCollectSwapFiles
    and completeSwapOperations): delete `.deleted`; delete `.cleaned` and the `.swap` files at or past
    the lowest `.cleaned` offset; complete the remaining swaps by deleting the segments a `.log.swap`
    covers and stripping `.swap`.
    """
    res = SwapResolution()
    names = sorted(os.listdir(partition_dir))

    def delete(name: str) -> None:
        res.deleted.append(name)
        if not dry_run:
            (partition_dir / name).unlink(missing_ok=True)

    for n in names:
        if n.endswith(DELETED_SUFFIX):
            delete(n)
    cleaned = [n for n in names if n.endswith(CLEANED_SUFFIX)]
    min_cleaned = min((offset_from_name(n) for n in cleaned), default=None)
    for n in cleaned:
        delete(n)
    swaps = [n for n in names if n.endswith(SWAP_SUFFIX)]
    remaining = []
    for n in swaps:
        if min_cleaned is not None and offset_from_name(n) >= min_cleaned:
            delete(n)
        else:
            remaining.append(n)
    for n in remaining:
        if not n.endswith(LOG_SUFFIX + SWAP_SUFFIX):
            continue
        base = offset_from_name(n)
        last = _swap_log_last_offset(partition_dir / n)
        for other in sorted(os.listdir(partition_dir)):
            if other.endswith(tuple(SEGMENT_FILE_SUFFIXES)) and other[:20].isdigit():
                ob = offset_from_name(other)
                if base <= ob <= last:
                    delete(other)
    for n in remaining:
        target = n[: -len(SWAP_SUFFIX)]
        res.renamed.append((n, target))
        if not dry_run and (partition_dir / n).exists():
            os.replace(partition_dir / n, partition_dir / target)
    if not dry_run and (res.deleted or res.renamed):
        fsync_dir(partition_dir)
    return res
