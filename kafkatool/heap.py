"""The process's heap policy: keep freed memory instead of handing it back to the system batch by batch.

glibc maps a buffer above its mmap threshold (128 KiB until the first such buffer is freed) with its
own `mmap` and unmaps it on `free`, and gives heap space above its trim threshold back with `brk`.
A command that decodes and prints batch after batch frees and takes back the same few hundred KiB
every batch; whether glibc then churns depends on the heap's layout (which the environment, the
Python build and the import order all move) and on any MALLOC_* settings in the environment.  When
it churns, every page taken back is zeroed again by the kernel: on a log of small lz4 records,
dump-log --deep-iteration --print-data-log spent two thirds of its time in the kernel.

`keep_heap()` fixes the thresholds once at start-up, whatever the environment says: a trim
threshold and top pad that keep the working set of a batch loop in the heap, and the largest mmap
threshold glibc accepts (32 MiB), so only really large buffers (a compact offset map, a whole
segment's index) get their own mapping.  Peak RSS does not grow: freed space is reused, not
added to.  The compiled core calls mallopt; without it (no C compiler at install) ctypes does.
Other C libraries (musl, macOS) have no such thresholds: nothing is done there.
"""

from __future__ import annotations

import sys

__all__ = ["TRIM_THRESHOLD", "TOP_PAD", "MMAP_THRESHOLD", "keep_heap"]

TRIM_THRESHOLD = 256 << 20  # free heap kept at the top before any is handed back
TOP_PAD = 16 << 20  # extra heap asked for at each growth (address space; pages count when touched)
MMAP_THRESHOLD = 32 << 20  # glibc's ceiling for M_MMAP_THRESHOLD on 64-bit

_M_TRIM_THRESHOLD, _M_TOP_PAD, _M_MMAP_THRESHOLD = -1, -2, -3  # glibc's malloc.h

_done: bool | None = None


def keep_heap() -> bool:
    """Set glibc's heap thresholds for this process (once); True when they were set."""
    global _done
    if _done is not None:
        return _done
    _done = False
    if not sys.platform.startswith("linux"):
        return False
    try:
        from kafkatool import _speedups  # type: ignore[attr-defined]

        _done = bool(_speedups.heap_policy(TRIM_THRESHOLD, TOP_PAD, MMAP_THRESHOLD))
        return _done
    except (ImportError, AttributeError):
        pass
    try:  # no compiled core: the same three calls through ctypes (a few ms of import, only here)
        import ctypes

        libc = ctypes.CDLL(None)
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False  # not glibc
    _done = all(
        mallopt(param, value)
        for param, value in (
            (_M_TRIM_THRESHOLD, TRIM_THRESHOLD),
            (_M_TOP_PAD, TOP_PAD),
            (_M_MMAP_THRESHOLD, MMAP_THRESHOLD),
        )
    )
    return _done
