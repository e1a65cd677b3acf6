"""Byte-range access to segment files on any filesystem pyarrow reaches (local, HDFS, S3, GCS) or fsspec.

Spark tasks read slices of segments that may sit in object stores or on HDFS, so nothing here maps
files: every read is an explicit byte range through `pyarrow.fs`.  Locations travel between the
driver and the executors as plain strings (an absolute local path or a URI); each process resolves
them to a filesystem itself and caches it.  Pure Python + pyarrow: no pyspark, so the single-process
scanner (`kafkatool.ops.scan`) reads through the same code.
"""

from __future__ import annotations

import errno
import os
import threading
from dataclasses import dataclass
from typing import Any

_FS_CACHE: dict[str, Any] = {}
_FS_LOCK = threading.Lock()


class StorageError(OSError):
    """A location no filesystem can serve (unknown scheme, missing optional package)."""


def _pafs() -> Any:
    try:
        import pyarrow.fs as pafs
    except ImportError:  # pragma: no cover - pyarrow is in the spark extra
        raise StorageError("reading segments needs pyarrow: pip install 'kafkatool[spark]'") from None
    return pafs


def has_scheme(location: str) -> bool:
    """True for `scheme://...` URIs (a Windows drive letter is not a scheme)."""
    head, sep, _ = location.partition("://")
    return bool(sep) and len(head) > 1 and head.replace("+", "").replace("-", "").replace(".", "").isalnum()


def normalize(location: str | os.PathLike[str]) -> str:
    """A location every process can resolve: URIs as given (no trailing '/'), local paths made absolute."""
    text = os.fspath(location)
    if has_scheme(text):
        return text.rstrip("/") if not text.endswith(":///") else text
    return os.path.abspath(text)


def _resolve_uncached(location: str) -> tuple[Any, str, str]:
    """(filesystem, path inside it, prefix) where prefix + path == location."""
    pafs = _pafs()
    if not has_scheme(location):
        return pafs.LocalFileSystem(), location, ""
    try:
        fs, path = pafs.FileSystem.from_uri(location)
    except (ValueError, NotImplementedError, OSError) as exc:  # ArrowInvalid is a ValueError
        fs, path = _fsspec_filesystem(location, exc)
    bare = location.split("?", 1)[0]
    if not bare.endswith(path):
        raise StorageError(f"{location}: URIs with query parameters are not supported; configure the filesystem "
                           "through its environment variables instead")
    return fs, path, bare[: len(bare) - len(path)]


def _fsspec_filesystem(location: str, cause: Exception) -> tuple[Any, str]:
    """Wrap an fsspec filesystem for schemes pyarrow has no native implementation of."""
    try:
        import fsspec
        from pyarrow.fs import FSSpecHandler, PyFileSystem
    except ImportError:
        scheme = location.split("://", 1)[0]
        raise StorageError(f"{location}: no filesystem for scheme {scheme!r} ({cause}); installing fsspec and "
                           "its plugin for that scheme adds it") from None
    fs, path = fsspec.core.url_to_fs(location)
    return PyFileSystem(FSSpecHandler(fs)), path


def resolve(location: str) -> tuple[Any, str, str]:
    """Cached (filesystem, path, prefix) of a normalized location."""
    if not has_scheme(location):
        key = ""
    else:
        scheme, _, rest = location.partition("://")
        key = scheme + "://" + rest.split("/", 1)[0]
    with _FS_LOCK:
        cached = _FS_CACHE.get(key)
    if cached is not None:
        fs, prefix = cached
        if prefix and location.startswith(prefix):
            return fs, location[len(prefix) :], prefix
        if not prefix and not has_scheme(location):
            return fs, location, prefix
    fs, path, prefix = _resolve_uncached(location)
    with _FS_LOCK:
        _FS_CACHE[key] = (fs, prefix)
    return fs, path, prefix


def parent(location: str) -> str:
    return location.rstrip("/").rsplit("/", 1)[0]


def basename(location: str) -> str:
    return location.rstrip("/").rsplit("/", 1)[-1]


def child(location: str, name: str) -> str:
    return location.rstrip("/") + "/" + name


@dataclass(frozen=True)
class Entry:
    """A file or directory found by a listing."""

    location: str
    size: int
    is_dir: bool

    @property
    def name(self) -> str:
        return basename(self.location)


def stat(location: str) -> Entry:
    """The entry at location; FileNotFoundError when there is nothing there."""
    fs, path, prefix = resolve(location)
    pafs = _pafs()
    info = fs.get_file_info([path])[0]
    if info.type == pafs.FileType.NotFound:
        raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), location)
    return Entry(location, int(info.size or 0), info.type == pafs.FileType.Directory)


def list_tree(location: str, recursive: bool = True) -> list[Entry]:
    """Every file and directory under a directory (one listing call on object stores)."""
    fs, path, prefix = resolve(location)
    pafs = _pafs()
    infos = fs.get_file_info(pafs.FileSelector(path, recursive=recursive))
    return [
        Entry(prefix + info.path, int(info.size or 0), info.type == pafs.FileType.Directory)
        for info in infos
        if info.type in (pafs.FileType.File, pafs.FileType.Directory)
    ]


class RangeReader:
    """An open file read by explicit byte ranges (`read(start, length)`); use as a context manager."""

    def __init__(self, location: str) -> None:
        self.location = location
        fs, path, _ = resolve(location)
        try:
            self._f = fs.open_input_file(path)
        except FileNotFoundError:
            raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), location) from None
        self.size = int(self._f.size())

    def read(self, start: int, length: int) -> bytes:
        """Up to `length` bytes from `start` (fewer at the end of the file)."""
        length = min(length, self.size - start)
        if length <= 0:
            return b""
        return self._f.read_at(length, start)

    def close(self) -> None:
        self._f.close()

    def __enter__(self) -> RangeReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def read_all(location: str) -> bytes:
    with RangeReader(location) as r:
        return r.read(0, r.size)
