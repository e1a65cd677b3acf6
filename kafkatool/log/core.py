"""Which implementation of the hot loops runs: the compiled core (`kafkatool._speedups`) or pure Python.

The C extension is optional (built by `pip install -e .` when the machine has a C compiler); the
pure-Python functions stay the reference and the fallback, and the differential tests run both.
`KAFKATOOL_PURE_PYTHON=1` forces the fallback (read once, at import).  Callers test `speedups` for
None and keep their Python loop otherwise, so there is exactly one place that chooses.
"""

from __future__ import annotations

import os
from types import ModuleType

from kafkatool.jvm.text import java_utf8
from kafkatool.log.errors import CorruptRecordError
from kafkatool.log.record import Record


def load_speedups() -> ModuleType | None:
    """The compiled core, ready to use, or None when it was not built (whatever the environment says)."""
    try:
        from kafkatool import _speedups  # type: ignore[attr-defined]
    except ImportError:
        return None
    _speedups.init(Record, CorruptRecordError, java_utf8)
    return _speedups


def _load() -> ModuleType | None:
    if os.environ.get("KAFKATOOL_PURE_PYTHON", "") not in ("", "0"):
        return None
    return load_speedups()


speedups: ModuleType | None = _load()
CORE = "C" if speedups is not None else "pure Python"
