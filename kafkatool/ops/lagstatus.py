"""Lag status over a window of commits, as Burrow evaluates it — not just a lag number.

One snapshot of lag cannot tell a consumer that is keeping up with a burst from one that has died.
Burrow's evaluation looks at the last N commits of each partition (offset, time, lag) and applies,
in this order:

* OK      when the lag was zero at any point of the window;
* REWIND  when the committed offset went backwards;
* STOP    when the last commit is older than the window's own span (now - last > last - first);
* STALL   when the committed offset did not move while the lag stayed above zero;
* WARN    when the offset moves but the lag never shrinks;
* OK      otherwise.

A group is ERR when any partition is STOP, STALL or REWIND, WARN when any is WARN, else OK.
Windows come from live samples (`--interval` apart; a sample counts as a commit when the offset
changed, at the time it was first seen) or from the commit history in `__consumer_offsets` on disk,
with the lag at each commit computed from the topic's own log when it is on disk too (the end
offset at a time: the first offset whose record was written after it, from the time index).
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from kafkatool.log.files import MappedFile, list_partition_dirs, list_segments, parse_partition_dir
from kafkatool.log.records import BatchScan

OK, WARN, STOP, STALL, REWIND = "OK", "WARN", "STOP", "STALL", "REWIND"
UNKNOWN = "UNKNOWN"  # no commit in the window, or no lag to judge by
ERR = "ERR"
SEVERITY = {OK: 0, UNKNOWN: 0, WARN: 1, STOP: 2, STALL: 2, REWIND: 2}
GROUP_OF = {OK: OK, UNKNOWN: OK, WARN: WARN, STOP: ERR, STALL: ERR, REWIND: ERR}


@dataclass(frozen=True)
class Commit:
    """One window entry: the committed offset, when it was committed (ms), and the lag then."""

    offset: int
    timestamp: int
    lag: int | None


@dataclass
class PartitionStatus:
    group: str
    topic: str
    partition: int
    status: str
    window: list[Commit] = field(default_factory=list)
    complete: bool = False  # the window holds as many commits as asked for

    def row(self) -> dict:
        """The documented row (docs/offsets.md: offsets watch)."""
        first = self.window[0] if self.window else None
        last = self.window[-1] if self.window else None
        return {
            "group": self.group, "topic": self.topic, "partition": self.partition, "status": self.status,
            "commits": len(self.window), "complete": self.complete,
            "first_offset": first.offset if first else None, "last_offset": last.offset if last else None,
            "first_lag": first.lag if first else None, "last_lag": last.lag if last else None,
            "first_commit_ms": first.timestamp if first else None, "last_commit_ms": last.timestamp if last else None,
        }


@dataclass
class GroupStatus:
    group: str
    status: str  # OK, WARN or ERR
    partitions: list[PartitionStatus]

    @property
    def worst(self) -> PartitionStatus | None:
        return max(self.partitions, key=lambda p: SEVERITY[p.status], default=None)

    def row(self) -> dict:
        w = self.worst
        return {"group": self.group, "status": self.status, "partitions": len(self.partitions),
                "worst_partition": None if w is None else {"topic": w.topic, "partition": w.partition,
                                                           "status": w.status},
                "counts": {s: sum(1 for p in self.partitions if p.status == s)
                           for s in (OK, WARN, STOP, STALL, REWIND, UNKNOWN)}}


def evaluate(window: Sequence[Commit], now_ms: int) -> str:
    """Burrow's rules over one partition's window (oldest first)."""
    if not window:
        return UNKNOWN
    lags = [c.lag for c in window]
    if any(lag == 0 for lag in lags):
        return OK
    if any(window[i].offset < window[i - 1].offset for i in range(1, len(window))):
        return REWIND
    if now_ms - window[-1].timestamp > window[-1].timestamp - window[0].timestamp:
        return STOP
    if any(lag is None for lag in lags):
        return UNKNOWN
    if all(window[i].offset == window[i - 1].offset for i in range(1, len(window))):
        return STALL
    if all(lags[i] >= lags[i - 1] for i in range(1, len(lags))):  # type: ignore[operator]
        return WARN
    return OK


def evaluate_groups(
    windows: dict[tuple[str, str, int], list[Commit]], size: int, now_ms: int
) -> list[GroupStatus]:
    """Statuses of every partition (its last `size` commits) and of every group, by group name."""
    by_group: dict[str, list[PartitionStatus]] = {}
    for (g, t, p), commits in sorted(windows.items()):
        w = list(commits[-size:])
        by_group.setdefault(g, []).append(PartitionStatus(g, t, p, evaluate(w, now_ms), w, len(w) >= size))
    out = []
    for g, parts in by_group.items():
        worst = max((SEVERITY[p.status] for p in parts), default=0)
        status = next((GROUP_OF[p.status] for p in parts if SEVERITY[p.status] == worst), OK)
        out.append(GroupStatus(g, status, parts))
    return out


def exit_code(groups: Iterable[GroupStatus]) -> int:
    """0 all OK, 1 some WARN, 4 some ERR (STOP, STALL or REWIND): for probes and cron jobs."""
    statuses = {g.status for g in groups}
    return 4 if ERR in statuses else 1 if WARN in statuses else 0


class SampleWindows:
    """Windows built from live samples, one entry a sample at the time it was taken.

    OffsetFetch gives no commit times, so a consumer that stopped and one that recommits the same
    offset both show as STALL live; STOP needs commit times (the offline history has them).
    """

    def __init__(self) -> None:
        self.windows: dict[tuple[str, str, int], list[Commit]] = {}

    def add(self, key: tuple[str, str, int], offset: int | None, lag: int | None, now_ms: int) -> None:
        if offset is None or offset < 0:
            return
        self.windows.setdefault(key, []).append(Commit(offset, now_ms, lag))


# -- offline: commit history from __consumer_offsets, end offsets from the topic's own log ---------


class EndOffsetsAt:
    """The end offset of a partition at a time, from its log on disk (None when not on disk).

    The end offset at time t is taken as the last offset of the last batch whose max timestamp is at
    or before t, plus one: records are appended in time order on a healthy broker (LogAppendTime, or
    producers' CreateTime close to it).
    """

    def __init__(self, log_dirs: Sequence[Path]) -> None:
        self.dirs: dict[tuple[str, int], Path] = {}
        for d in log_dirs:
            for pdir in list_partition_dirs(d):
                parsed = parse_partition_dir(pdir.name)
                if parsed:
                    self.dirs.setdefault(parsed, pdir)
        self._timeline: dict[tuple[str, int], list[tuple[int, int]]] = {}

    def _batches(self, tp: tuple[str, int]) -> list[tuple[int, int]]:
        """(running max timestamp, next offset) per batch, in offset order."""
        if tp not in self._timeline:
            out: list[tuple[int, int]] = []
            top = -1
            for seg in list_segments(self.dirs[tp]):
                with MappedFile(seg.log) as mf:
                    for b in BatchScan(mf.buf, release=mf.release):
                        top = max(top, b.max_timestamp)
                        out.append((top, b.last_offset + 1))
            self._timeline[tp] = out
        return self._timeline[tp]

    def at(self, topic: str, partition: int, t_ms: int) -> int | None:
        tp = (topic, partition)
        if tp not in self.dirs:
            return None
        timeline = self._batches(tp)
        if not timeline or timeline[-1][0] < 0:  # no timestamps (message format v0): no end offset by time
            return None
        i = bisect.bisect_right(timeline, (t_ms, float("inf")))
        if i == 0:  # nothing written yet at that time
            return _first_offset(self.dirs[tp])
        return timeline[i - 1][1]


def _first_offset(pdir: Path) -> int:
    segs = list_segments(pdir)
    return segs[0].base_offset if segs else 0


def windows_from_history(
    events: Iterable[object], end_offsets: EndOffsetsAt, groups: set[str] | None = None
) -> tuple[dict[tuple[str, str, int], list[Commit]], int]:
    """Per group-partition, its commits in log order with the lag at each; and the newest commit time."""
    windows: dict[tuple[str, str, int], list[Commit]] = {}
    newest = 0
    for ev in events:
        kind = getattr(ev, "kind", None)
        if kind not in ("commit", "txn-commit"):
            continue
        g, t, p, off, ts = ev.group, ev.topic, ev.partition, ev.offset, ev.commit_timestamp  # type: ignore[attr-defined]
        if groups is not None and g not in groups:
            continue
        if t is None or p is None or off is None:
            continue
        ts = ts if ts is not None else ev.record_timestamp  # type: ignore[attr-defined]
        newest = max(newest, ts)
        end = end_offsets.at(t, p, ts)
        lag = None if end is None else max(0, end - off)
        windows.setdefault((g, t, p), []).append(Commit(off, ts, lag))
    return windows, newest
