"""GetOffsetShell's `topic:partition:offset` lines (`kafkatool offsets end`), in each release's order."""

from __future__ import annotations

from typing import Any

from kafkatool.ops.offsets_report.rows import TP


def format_get_offset_shell(offsets: dict[TP, int | None], text: Any = None) -> str:
    """`topic:partition:offset`; partitions without an offset are left out.  Order: Kafka 3.x's Scala
    tool sorts by topic then partition number (`compareTopicPartitions`); 4.0's Java tool keys a
    `TreeMap` by `TopicPartition.toString()`, `topic-partition` as a string (big-0, big-1, big-10, big-2)."""
    if text is not None and text.at_least("4.0"):
        keys = sorted(offsets, key=lambda tp: f"{tp[0]}-{tp[1]}")
    else:
        keys = sorted(offsets)
    return "".join(f"{t}:{p}:{offsets[(t, p)]}\n" for t, p in keys if offsets[(t, p)] is not None)
