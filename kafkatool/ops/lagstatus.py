"""Lag status over a window of commits, with Burrow's rules in Burrow's order — not just a lag number.

One snapshot of lag cannot tell a consumer that is keeping up with a burst from one that has died.
Burrow (core/internal/evaluator, 1.2 and later) keeps each partition's last N commits (offset,
commit time, lag when the commit was seen) and judges the window, in this order:

1. OK      when the current lag (the newest end offset minus the last commit) is zero;
2. STOP    when the time since the last commit is longer than the window's own span
           (now - last > last - first), unless a recent end offset was at or below the last commit
           (the consumer was caught up a moment ago and new data just arrived);
3. OK      when the lag was zero at any commit of the window;
4. REWIND  when the committed offset went backwards between two commits;
5. STALL   when the committed offset never moved while there is lag;
6. WARN    when the offset moves but the lag never decreased between two commits ("lag always
           increasing": each lag at least the one before it, unknown lags passed over);
7. OK      otherwise.

A group is ERR when any partition is STOP, STALL or REWIND, WARN when any is WARN, else OK.

The rules that compare commits (2, 4, 5, 6) need two commits: a window of one commit has no span
and no direction, so it is judged by its lag alone (Burrow would call every single commit stopped
the moment it is older than zero seconds).

Evidence, named in every row (`evidence`):

* ``commits``: each commit read from `__consumer_offsets` as it is written, with its commit time,
  the lag when it was seen (the partition's newest end offset then; for commits already in the
  log at start, the end offset at the commit's time, by ListOffsets on its timestamp); two commits
  less than a second apart are one entry (the later offset, the earlier time), as Burrow stores them;
* ``log``: the same history from `__consumer_offsets` segments on disk, the lag at each commit from
  the topic's own log when it is on disk too;
* ``samples``: committed offsets sampled over the Admin API (OffsetFetch has no commit times). A
  sample stands for a commit when its offset is new; STOP cannot be judged (no commit time), and
  WARN compares the lag of new commits only (the same commit sampled again while the log grows is
  not a consumer falling behind).
"""

from __future__ import annotations

import bisect
import time
from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from kafkatool.log.files import MappedFile, list_partition_dirs, list_segments, parse_partition_dir
from kafkatool.log.records import BatchScan

OK, WARN, STOP, STALL, REWIND = "OK", "WARN", "STOP", "STALL", "REWIND"
UNKNOWN = "UNKNOWN"  # no commit in the window, or no lag to judge by
ERR = "ERR"
SEVERITY = {OK: 0, UNKNOWN: 0, WARN: 1, STOP: 2, STALL: 2, REWIND: 2}
GROUP_OF = {OK: OK, UNKNOWN: OK, WARN: WARN, STOP: ERR, STALL: ERR, REWIND: ERR}
COMMITS, LOG, SAMPLES = "commits", "log", "samples"
MIN_DISTANCE_MS = 1000  # Burrow's storage `min-distance` default: closer commits share one entry

Key = tuple[str, str, int]


class Clock(Protocol):
    """Wall time for judging and waiting; tests pass their own so nothing depends on the machine's speed."""

    def now_ms(self) -> int: ...

    def sleep(self, seconds: float) -> None: ...


class SystemClock:
    def now_ms(self) -> int:
        return int(time.time() * 1000)

    def sleep(self, seconds: float) -> None:
        time.sleep(seconds)


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
    evidence: str = LOG
    current_lag: int | None = None

    def row(self) -> dict:
        """The documented row (docs/offsets.md: offsets watch)."""
        first = self.window[0] if self.window else None
        last = self.window[-1] if self.window else None
        return {
            "group": self.group,
            "topic": self.topic,
            "partition": self.partition,
            "status": self.status,
            "evidence": self.evidence,
            "commits": len(self.window),
            "complete": self.complete,
            "first_offset": first.offset if first else None,
            "last_offset": last.offset if last else None,
            "first_lag": first.lag if first else None,
            "last_lag": last.lag if last else None,
            "current_lag": self.current_lag,
            "first_commit_ms": first.timestamp if first else None,
            "last_commit_ms": last.timestamp if last else None,
        }


@dataclass
class GroupStatus:
    group: str
    status: str  # OK, WARN or ERR
    partitions: list[PartitionStatus]

    @property
    def worst(self) -> PartitionStatus | None:
        return max(self.partitions, key=lambda p: SEVERITY[p.status], default=None)

    @property
    def evidence(self) -> str:
        kinds = sorted({p.evidence for p in self.partitions})
        return "+".join(kinds) if kinds else LOG

    def row(self) -> dict:
        w = self.worst
        return {
            "group": self.group,
            "status": self.status,
            "evidence": self.evidence,
            "partitions": len(self.partitions),
            "worst_partition": None
            if w is None
            else {"topic": w.topic, "partition": w.partition, "status": w.status},
            "counts": {
                s: sum(1 for p in self.partitions if p.status == s)
                for s in (OK, WARN, STOP, STALL, REWIND, UNKNOWN)
            },
        }


# -- the rules ----------------------------------------------------------------------------------


def is_stopped(window: Sequence[Commit], now_ms: int) -> bool:
    """Rule 2's clock test: longer since the last commit than the window spans (needs two commits)."""
    if len(window) < 2:
        return False
    first, last = window[0].timestamp, window[-1].timestamp
    return now_ms - last > last - first


def recent_lag_zero(window: Sequence[Commit], recent_ends: Iterable[int]) -> bool:
    """A recent end offset at or below the last commit: caught up a moment ago."""
    last = window[-1].offset
    return any(end <= last for end in recent_ends)


def is_rewound(window: Sequence[Commit]) -> bool:
    return any(window[i].offset < window[i - 1].offset for i in range(1, len(window)))


def is_stalled(window: Sequence[Commit]) -> bool:
    return len(window) >= 2 and all(c.offset == window[0].offset for c in window)


def lag_never_decreased(lags: Sequence[int | None]) -> bool:
    """Burrow's "lag always increasing": no known lag below the known lag before it (two needed)."""
    known = [lag for lag in lags if lag is not None]
    return len(known) >= 2 and all(known[i] >= known[i - 1] for i in range(1, len(known)))


def evaluate(
    window: Sequence[Commit],
    now_ms: int,
    *,
    current_lag: int | None = None,
    recent_ends: Iterable[int] = (),
    evidence: str = LOG,
) -> str:
    """Burrow's rules, in Burrow's order, over one partition's window (oldest first).

    `current_lag` is the newest end offset minus the last commit (None: take the last entry's lag);
    `recent_ends` the partition's recent end offsets (rule 2's exception).  With `evidence` SAMPLES
    there are no commit times: STOP is not judged and WARN looks at new commits only.
    """
    if not window:
        return UNKNOWN
    current = current_lag if current_lag is not None else window[-1].lag
    if current == 0:
        return OK
    if evidence != SAMPLES and is_stopped(window, now_ms) and not recent_lag_zero(window, recent_ends):
        return STOP
    lags = [c.lag for c in window]
    if any(lag == 0 for lag in lags):
        return OK
    if is_rewound(window):
        return REWIND
    if current is None and all(lag is None for lag in lags):
        return UNKNOWN
    if is_stalled(window):
        return STALL
    if evidence == SAMPLES:
        lags = [c.lag for i, c in enumerate(window) if i == 0 or c.offset != window[i - 1].offset]
    if lag_never_decreased(lags):
        return WARN
    return OK


def group_statuses(parts: Iterable[PartitionStatus]) -> list[GroupStatus]:
    by_group: dict[str, list[PartitionStatus]] = {}
    for p in sorted(parts, key=lambda p: (p.group, p.topic, p.partition)):
        by_group.setdefault(p.group, []).append(p)
    out = []
    for g, ps in by_group.items():
        worst = max((SEVERITY[p.status] for p in ps), default=0)
        status = next((GROUP_OF[p.status] for p in ps if SEVERITY[p.status] == worst), OK)
        out.append(GroupStatus(g, status, ps))
    return out


def evaluate_groups(
    windows: dict[Key, list[Commit]],
    size: int,
    now_ms: int,
    *,
    evidence: str = LOG,
    current_lags: dict[Key, int | None] | None = None,
    recent_ends: dict[tuple[str, int], Sequence[int]] | None = None,
) -> list[GroupStatus]:
    """Statuses of every partition (its last `size` entries) and of every group, by group name."""
    parts = []
    for (g, t, p), commits in windows.items():
        w = list(commits[-size:])
        cur = (current_lags or {}).get((g, t, p))
        ends = (recent_ends or {}).get((t, p), ())
        status = evaluate(w, now_ms, current_lag=cur, recent_ends=ends, evidence=evidence)
        parts.append(
            PartitionStatus(
                g,
                t,
                p,
                status,
                w,
                len(w) >= size,
                evidence,
                cur if cur is not None else (w[-1].lag if w else None),
            )
        )
    return group_statuses(parts)


def exit_code(groups: Iterable[GroupStatus]) -> int:
    """0 all OK, 1 some WARN, 4 some ERR (STOP, STALL or REWIND): for probes and cron jobs."""
    statuses = {g.status for g in groups}
    return 4 if ERR in statuses else 1 if WARN in statuses else 0


# -- windows ------------------------------------------------------------------------------------


class CommitWindows:
    """Per group-partition, its last `size` commits as Burrow stores them, plus each partition's end
    offsets as read (the lag of a commit is the newest end offset when it is seen).

    Rule 2's exception looks at end offsets read after the last commit and within the window's span
    before now: caught up since it last committed, and recently, so its silence is not yet a stop.
    """

    def __init__(self, size: int, min_distance_ms: int = MIN_DISTANCE_MS) -> None:
        self.size = size
        self.min_distance_ms = min_distance_ms
        self.windows: dict[Key, deque[Commit]] = {}
        self.ends: dict[tuple[str, int], deque[tuple[int, int]]] = {}

    def end_offset(self, topic: str, partition: int, end: int | None, at_ms: int) -> None:
        """An end offset of a partition read at `at_ms` (the last `size` are kept)."""
        if end is not None and end >= 0:
            self.ends.setdefault((topic, partition), deque(maxlen=max(self.size, 1))).append((at_ms, end))

    def latest_end(self, topic: str, partition: int) -> int | None:
        d = self.ends.get((topic, partition))
        return d[-1][1] if d else None

    def add(self, key: Key, offset: int, ts: int, lag: int | None = None) -> Commit:
        """Store a commit; with no `lag` given, the lag against the newest end offset known."""
        if lag is None:
            end = self.latest_end(key[1], key[2])
            lag = None if end is None else max(0, end - offset)
        w = self.windows.setdefault(key, deque(maxlen=self.size))
        if w and ts - w[-1].timestamp < self.min_distance_ms:
            ts = w.pop().timestamp
        c = Commit(offset, ts, lag)
        w.append(c)
        return c

    def current_lag(self, key: Key) -> int | None:
        w = self.windows.get(key)
        end = self.latest_end(key[1], key[2])
        if not w or end is None:
            return None
        return max(0, end - w[-1].offset)

    def recent_ends(self, key: Key, now_ms: int) -> list[int]:
        w = self.windows.get(key)
        if not w:
            return []
        span = w[-1].timestamp - w[0].timestamp
        return [
            e for t, e in self.ends.get((key[1], key[2]), ()) if t >= w[-1].timestamp and now_ms - t <= span
        ]

    def judge(self, key: Key, now_ms: int, evidence: str = COMMITS) -> PartitionStatus:
        w = list(self.windows.get(key, ()))
        cur = self.current_lag(key)
        status = evaluate(
            w, now_ms, current_lag=cur, recent_ends=self.recent_ends(key, now_ms), evidence=evidence
        )
        return PartitionStatus(
            key[0],
            key[1],
            key[2],
            status,
            w,
            len(w) >= self.size,
            evidence,
            cur if cur is not None else (w[-1].lag if w else None),
        )

    def statuses(
        self,
        now_ms: int,
        evidence: str = COMMITS,
        groups: set[str] | None = None,
        topics: set[str] | None = None,
    ) -> list[GroupStatus]:
        keys = [
            k
            for k in self.windows
            if (groups is None or k[0] in groups) and (topics is None or k[1] in topics)
        ]
        return group_statuses(self.judge(k, now_ms, evidence) for k in keys)


class SampleWindows:
    """Windows built from live samples, one entry a sample at the time it was taken (no commit times)."""

    def __init__(self) -> None:
        self.windows: dict[Key, list[Commit]] = {}

    def add(self, key: Key, offset: int | None, lag: int | None, now_ms: int) -> None:
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
    events: Iterable[object],
    end_offsets: EndOffsetsAt,
    groups: set[str] | None = None,
    until_ms: int | None = None,
) -> tuple[dict[Key, list[Commit]], int]:
    """Per group-partition, its commits in log order with the lag at each; and the newest commit time.

    With `until_ms`, the history is cut there: commits made later are not part of it.
    """
    windows: dict[Key, list[Commit]] = {}
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
        if until_ms is not None and ts > until_ms:
            continue
        newest = max(newest, ts)
        end = end_offsets.at(t, p, ts)
        lag = None if end is None else max(0, end - off)
        windows.setdefault((g, t, p), []).append(Commit(off, ts, lag))
    return windows, newest


def current_lags_at(
    windows: dict[Key, list[Commit]], end_offsets: EndOffsetsAt, now_ms: int
) -> dict[Key, int | None]:
    """Offline rule 1: the end offset at `now` minus each partition's last commit (None off disk)."""
    out: dict[Key, int | None] = {}
    for (g, t, p), commits in windows.items():
        end = end_offsets.at(t, p, now_ms)
        out[(g, t, p)] = None if end is None or not commits else max(0, end - commits[-1].offset)
    return out
