"""Standard output for commands that print gigabytes (dump-log, index dump): fewer, larger writes.

Python's `sys.stdout.buffer` flushes every 8 KiB and a pipe holds 64 KiB, so 9 GB of dump-log text
through `| wc -c` or `| grep` costs over a million writes and as many sleeps and wake-ups on either
side.  Here the buffer is 1 MiB and, when stdout is a pipe, the pipe is widened to 1 MiB as well
(Linux `F_SETPIPE_SZ`, up to /proc/sys/fs/pipe-max-size; refused quietly where not allowed).
"""

from __future__ import annotations

import io
import os
import stat
import sys
from typing import BinaryIO

BUFFER = 1 << 20
PIPE_SIZE = 1 << 20
_F_SETPIPE_SZ = 1031  # linux/fcntl.h (fcntl.F_SETPIPE_SZ from Python 3.10, where the platform has it)


def widen_pipe(fd: int, size: int = PIPE_SIZE) -> int:
    """Ask for a `size`-byte pipe buffer on fd when it is a pipe; the size granted, or 0."""
    try:
        if not stat.S_ISFIFO(os.fstat(fd).st_mode):
            return 0
        import fcntl

        return int(fcntl.fcntl(fd, getattr(fcntl, "F_SETPIPE_SZ", _F_SETPIPE_SZ), size))
    except (OSError, ValueError, ImportError):
        return 0


def bulk_stdout() -> BinaryIO:
    """A binary writer on stdout with a 1 MiB buffer (the caller flushes it); sys.stdout is flushed
    first so nothing written before comes after."""
    sys.stdout.flush()
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, ValueError, io.UnsupportedOperation):  # replaced stdout (tests, in-process runs)
        return sys.stdout.buffer
    widen_pipe(fd)
    return open(fd, "wb", buffering=BUFFER, closefd=False)  # noqa: SIM115 - flushed by the caller, never closed
