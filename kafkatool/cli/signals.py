"""How a kafkatool process stops when asked: Ctrl-C (SIGINT) and `kill` (SIGTERM) alike.

Ctrl-C raises KeyboardInterrupt (Python's own handler); every command then undoes what it had
started (offline writers leave the directory as it was or as it will be, cluster writers say what was
done) and exits 130.  A process whose parent ignores SIGINT keeps ignoring it: that is how a shell
starts a background job (`cmd &` in a script, `nohup cmd &`), so that the terminal's Ctrl-C does not
reach it, and kafkatool leaves it so.  Such a job is stopped with `kill` (SIGTERM), which kafkatool
handles like Ctrl-C (the same clean-up) and answers with exit 143.  A SIGTERM handler someone else
installed (an embedding program) is left in place; SIGKILL cannot be handled, and every offline
writer is safe against it too (kafkatool.ops.safety).
"""

from __future__ import annotations

import os
import signal
from types import FrameType

__all__ = ["Terminated", "stop_on_sigterm"]


class Terminated(KeyboardInterrupt):
    """SIGTERM arrived: unwound like a Ctrl-C, reported as `terminated` with exit 143."""


def _raise_terminated(signum: int, frame: FrameType | None) -> None:
    raise Terminated()


def _default_in_child() -> None:
    """A process forked by kafkatool (dump-log's and compact's worker pools) dies on SIGTERM as usual:
    a pool ends its workers with SIGTERM, and they have nothing of their own to undo."""
    if signal.getsignal(signal.SIGTERM) is _raise_terminated:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)


def stop_on_sigterm() -> bool:
    """Make SIGTERM unwind like Ctrl-C, where it has its default action (True when installed)."""
    try:
        if signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
            return False
        signal.signal(signal.SIGTERM, _raise_terminated)
    except ValueError:  # not the main thread (an embedding program): leave signals alone
        return False
    global _registered
    if not _registered:
        os.register_at_fork(after_in_child=_default_in_child)
        _registered = True
    return True


_registered = False
