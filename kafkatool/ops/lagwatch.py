"""Live lag watching: the rounds of `offsets watch` on a cluster, on commits or on samples.

Two kinds of evidence, best first (`kafkatool.ops.lagstatus` has the rules):

* commits — `__consumer_offsets` followed as it is written (`kafkatool.cluster.commit_log`): the
  history already in the log fills each window at once (the lag of those commits is the end offset
  at the commit's time, by ListOffsets on the commit timestamp); after that each commit is judged
  the moment it is read, against the newest end offsets.  Every round re-reads the end offsets and
  the group list.
* samples — where the topic cannot be read: committed offsets over the Admin API (or ZooKeeper),
  one sample per round, the group list read again every round.

The clock is passed in (`lagstatus.Clock`): the rounds wait on it and judge at its time.  Nothing
here prints; `emit` receives each commit and each change of a partition's status as it happens.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from kafkatool.ops import lagstatus as ls

Emit = Callable[[dict], None]
POLL_SECONDS = 0.5  # longest wait between two reads of the commit log


def _noop(_: dict) -> None:
    return None


class CommitWatch:
    """Windows of commits read from `__consumer_offsets`, judged as commits arrive."""

    def __init__(
        self,
        tail: Any,
        brokers: Any,
        size: int,
        clock: ls.Clock,
        *,
        groups: set[str] | None,
        topics: set[str] | None = None,
        list_groups: Callable[[], Iterable[str]] | None = None,
        emit: Emit = _noop,
    ) -> None:
        self.tail = tail
        self.brokers = brokers
        self.windows = ls.CommitWindows(size)
        self.clock = clock
        self.groups = groups  # None: every group listed or committing
        self.topics = topics
        self.list_groups = list_groups
        self.listed: set[str] = set()
        self.emit = emit
        self.last: dict[ls.Key, str] = {}
        self.started_ms = clock.now_ms()

    # -- the run -----------------------------------------------------------------------------------
    def run(self, rounds: int, interval: float) -> list[ls.GroupStatus]:
        """Backfill from the log, then `rounds` rounds `interval` seconds apart; the final statuses."""
        self._backfill()
        for r in range(rounds):
            if r:
                self._follow_until(self.clock.now_ms() + int(interval * 1000))
            self._refresh()
            self._judge()
        return self.statuses()

    def statuses(self) -> list[ls.GroupStatus]:
        now = self.clock.now_ms()
        return ls.group_statuses(self.windows.judge(k, now, ls.COMMITS) for k in self._keys())

    # -- steps -------------------------------------------------------------------------------------
    def _backfill(self) -> None:
        """Read the log to its end; give the history's commits the lag at their own time."""
        history = list(self.tail.poll())
        for _ in range(10_000):
            if self.tail.caught_up():
                break
            got = self.tail.poll()
            if not got:
                break
            history.extend(got)
        self._listing()
        for c in history:
            if self._wanted(c.group, c.topic, during_run=False):
                self.windows.add((c.group, c.topic, c.partition), c.offset, c.commit_timestamp, lag=-1)
        self._lags_at_commit_times()

    def _lags_at_commit_times(self) -> None:
        """History commits (stored with lag -1): the end offset when each was made, by timestamp."""

        todo = [(k, i, c) for k, w in self.windows.windows.items() for i, c in enumerate(w) if c.lag == -1]
        tps = {(k[1], k[2]) for k, _, _ in todo}
        self._read_ends(tps)
        asks: dict[tuple[str, int], set[int]] = {}
        for k, _, c in todo:
            asks.setdefault((k[1], k[2]), set()).add(c.timestamp)
        ends: dict[tuple[str, int, int], int | None] = {}
        pending = {tp: sorted(ts) for tp, ts in asks.items()}
        while pending:  # a ListOffsets holds a partition once: one timestamp of each a request
            spec = {tp: ts.pop() for tp, ts in pending.items()}
            for tp, lo in self.brokers.list_offsets(spec).items():
                end = lo.offset if lo.offset is not None else self.windows.latest_end(*tp)
                ends[(tp[0], tp[1], spec[tp])] = end
            pending = {tp: ts for tp, ts in pending.items() if ts}
        for k, i, c in todo:
            end = ends.get((k[1], k[2], c.timestamp))
            self.windows.windows[k][i] = ls.Commit(
                c.offset, c.timestamp, None if end is None else max(0, end - c.offset)
            )

    def _read_ends(self, tps: Iterable[tuple[str, int]]) -> None:
        from kafkatool.cluster.groups import LATEST

        tps = set(tps)
        if tps:
            now = self.clock.now_ms()
            for tp, lo in self.brokers.list_offsets(dict.fromkeys(tps, LATEST)).items():
                self.windows.end_offset(tp[0], tp[1], lo.offset, now)

    def _follow_until(self, until_ms: int) -> None:
        while True:
            seen = [c for c in self.tail.poll() if self._wanted(c.group, c.topic, during_run=True)]
            # the lag of a commit: the end offset right when it is seen
            self._read_ends((c.topic, c.partition) for c in seen)
            now = self.clock.now_ms()
            for c in seen:
                key = (c.group, c.topic, c.partition)
                entry = self.windows.add(key, c.offset, c.commit_timestamp)
                self.emit(
                    {
                        "type": "commit",
                        "time_ms": now,
                        "group": c.group,
                        "topic": c.topic,
                        "partition": c.partition,
                        "offset": c.offset,
                        "commit_ms": c.commit_timestamp,
                        "lag": entry.lag,
                    }
                )
            self._judge()
            left = until_ms - self.clock.now_ms()
            if left <= 0:
                return
            if not seen:
                self.clock.sleep(min(POLL_SECONDS, left / 1000))

    def _refresh(self) -> None:
        self._listing()
        self._read_ends((k[1], k[2]) for k in self._keys())

    def _listing(self) -> None:
        if self.groups is None and self.list_groups is not None:
            self.listed = set(self.list_groups())

    def _wanted(self, group: str, topic: str, during_run: bool) -> bool:
        if self.topics is not None and topic not in self.topics:
            return False
        if self.groups is not None:
            return group in self.groups
        return during_run or not self.listed or group in self.listed

    def _keys(self) -> list[ls.Key]:
        keys = list(self.windows.windows)
        if self.groups is None and self.listed:
            run = {k for k, w in self.windows.windows.items() if w and w[-1].timestamp >= self.started_ms}
            keys = [k for k in keys if k[0] in self.listed or k in run]
        return keys

    def _judge(self) -> None:
        now = self.clock.now_ms()
        for k in self._keys():
            st = self.windows.judge(k, now, ls.COMMITS)
            if self.last.get(k) != st.status:
                self.last[k] = st.status
                self.emit(
                    {
                        "type": "verdict",
                        "time_ms": now,
                        "group": k[0],
                        "topic": k[1],
                        "partition": k[2],
                        "status": st.status,
                        "evidence": ls.COMMITS,
                    }
                )


def watch_samples(
    gather: Callable[[list[str]], Iterable[Any]],
    names: Callable[[], list[str]],
    rounds: int,
    interval: float,
    clock: ls.Clock,
    emit: Emit = _noop,
) -> ls.SampleWindows:
    """`rounds` samples `interval` apart; the group list (`names`) is read again every round."""
    samples = ls.SampleWindows()
    for i in range(rounds):
        if i:
            clock.sleep(interval)
        taken = clock.now_ms()
        for report in gather(names()):
            for r in report.rows:
                if r.topic is None or r.partition is None:
                    continue
                samples.add((r.group, r.topic, r.partition), r.current_offset, r.lag, taken)
                emit(
                    {
                        "type": "sample",
                        "sample": i + 1,
                        "time_ms": taken,
                        "group": r.group,
                        "topic": r.topic,
                        "partition": r.partition,
                        "offset": r.current_offset,
                        "lag": r.lag,
                    }
                )
    return samples
