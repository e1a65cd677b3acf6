"""The reports DumpLogSegments prints on stderr after every file is dumped.

Kafka collects index mismatches (dumpIndex), the time index's problems (TimeIndexDumpErrors:
timestamp mismatches, out-of-order timestamps, indexed offsets not found) and non-consecutive offsets
(dumpLog) while it reads, and prints them at the end, per file, in this order.  The Scala tool (up to
4.2) printed its index mismatches and non-consecutive pairs newest first (prepended Lists); the Java
tool (4.3 on) keeps them in TreeMaps: index mismatches highest offset first, pairs lowest first.
"""

from __future__ import annotations

from collections.abc import Iterable


class _Stderr:
    """Deferred stderr reports, printed after all files as DumpLogSegments does."""

    def __init__(self, java: bool = False) -> None:
        self.java = java  # Kafka 4.3's Java tool: TreeMaps where the Scala tool kept prepended Lists
        self.index_mismatches: dict[str, list[tuple[int, int]]] = {}
        self.time_mismatches: dict[str, list[tuple[int, int]]] = {}
        self.time_out_of_order: dict[str, list[tuple[int, int]]] = {}
        self.time_not_found: dict[str, list[tuple[int, int]]] = {}
        self.non_consecutive: dict[str, list[tuple[int, int]]] = {}

    def lines(self) -> Iterable[str]:
        for f, pairs in self.index_mismatches.items():
            yield f"Mismatches in :{f}"
            for a, b in sorted(dict(pairs).items(), reverse=True) if self.java else reversed(pairs):
                yield f"  Index offset: {a}, log offset: {b}"
        for f, pairs in self.time_mismatches.items():
            yield f"Found timestamp mismatch in :{f}"
            for a, b in pairs:
                yield f"  Index timestamp: {a}, log timestamp: {b}"
        for f, pairs in self.time_out_of_order.items():
            yield f"Found out of order timestamp in :{f}"
            for a, b in pairs:
                yield f"  Index timestamp: {a}, Previously indexed timestamp: {b}"
        for f, pairs in self.time_not_found.items():
            yield (
                f"The following indexed offsets are not found in :{f}"
                if self.java
                else "The following indexed offsets are not found in the log."
            )
            for a, b in pairs:
                yield f"Indexed offset: {a}, found log offset: {b}"
        for f, pairs in self.non_consecutive.items():
            yield f"Non-consecutive offsets in {f}"
            for a, b in sorted(dict(pairs).items()) if self.java else reversed(pairs):
                yield f"  {a} is followed by {b}"
