"""A clock for tests: time moves only when the code under test waits, and things happen on cue.

`offsets watch` waits and judges on the clock it is given (`kafkatool.cli.offsets_watch.CLOCK`);
with this one a run of ten rounds a minute apart takes no wall time, and `at(t, action)` makes a
consumer commit (or die) at exactly that moment of the run.
"""

from __future__ import annotations

from collections.abc import Callable


class FakeClock:
    def __init__(self, start_ms: int) -> None:
        self.ms = start_ms
        self.cues: list[tuple[int, Callable[[], None]]] = []
        self.slept = 0.0

    def now_ms(self) -> int:
        return self.ms

    def at(self, t_ms: int, action: Callable[[], None]) -> None:
        self.cues.append((t_ms, action))
        self.cues.sort(key=lambda c: c[0])

    def sleep(self, seconds: float) -> None:
        until = self.ms + int(seconds * 1000)
        while self.cues and self.cues[0][0] <= until:
            t, action = self.cues.pop(0)
            self.ms = max(self.ms, t)
            action()
        self.ms = until
        self.slept += seconds
