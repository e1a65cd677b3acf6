"""Progress bars: rich, on stderr, only when stderr is a TTY and --quiet is not given."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any


class _NoProgress:
    def advance(self, n: float = 1) -> None:
        pass

    def update(self, **kw: Any) -> None:
        pass


class _RichProgress:
    def __init__(self, progress: Any, task: Any) -> None:
        self._p = progress
        self._t = task

    def advance(self, n: float = 1) -> None:
        self._p.advance(self._t, n)

    def update(self, **kw: Any) -> None:
        self._p.update(self._t, **kw)


def progress_enabled(quiet: bool = False) -> bool:
    return not quiet and sys.stderr.isatty()


@contextmanager
def progress(description: str, total: float | None, quiet: bool = False, unit_bytes: bool = False) -> Iterator[Any]:
    """A progress handle with advance(n); a no-op unless stderr is a terminal."""
    if not progress_enabled(quiet):
        yield _NoProgress()
        return
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        DownloadColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeRemainingColumn,
        TransferSpeedColumn,
    )

    cols: list[Any] = [TextColumn("{task.description}"), BarColumn()]
    cols += [DownloadColumn(), TransferSpeedColumn()] if unit_bytes else [MofNCompleteColumn()]
    cols.append(TimeRemainingColumn())
    with Progress(*cols, console=Console(file=sys.stderr), transient=True) as p:
        yield _RichProgress(p, p.add_task(description, total=total))
