"""Which Kafka release's tool text kafkatool reproduces.

Kafka's tools print differently from release to release (kafka-dump-log's producer snapshots,
the offsets decoder's JSON, kafka-consumer-groups' row order, ...) and scripts parse the text of
their own release. One process-wide choice decides which release's text every command prints:
the user's `--kafka-release`, else (for live commands) the release of the broker talked to, else
the newest release kafkatool models. This module holds the choice; it imports nothing of ours so
every layer may ask it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = [
    "Release", "KNOWN_RELEASES", "NEWEST", "parse_release", "select", "explicit", "text_release", "tools_in_scala",
]


@dataclass(frozen=True, order=True)
class Release:
    """A Kafka release line, major.minor (patch releases never change tool text)."""

    major: int
    minor: int

    def __str__(self) -> str:
        return f"{self.major}.{self.minor}"

    def at_least(self, other: str | Release) -> bool:
        return self >= (parse_release(other) if isinstance(other, str) else other)


#: The releases whose text is modelled, oldest first.  A request for another release is served by
#: the newest known one not newer than it (2.8 prints as 3.3 does where they agree, 4.1 as 4.0).
KNOWN_RELEASES: tuple[Release, ...] = (Release(2, 1), Release(3, 3), Release(4, 0))
NEWEST: Release = KNOWN_RELEASES[-1]

_RELEASE_RE = re.compile(r"^(\d{1,2})\.(\d{1,2})(?:\.\d{1,3})?$")


def parse_release(text: str) -> Release:
    """Parse `3.3`, `3.3.1` or `4.0.0`; ValueError naming the text otherwise."""
    m = _RELEASE_RE.match(text.strip())
    if not m:
        raise ValueError(f"{text!r} is not a Kafka release (expected MAJOR.MINOR, e.g. 3.3 or 4.0)")
    return Release(int(m.group(1)), int(m.group(2)))


_selected: Release | None = None
_observed: Release | None = None  # the release of the brokers a live command talks to, once it knows


def select(release: Release | str | None) -> None:
    """Set (or with None clear) the release the user asked for."""
    global _selected
    _selected = parse_release(release) if isinstance(release, str) else release


def explicit() -> Release | None:
    """The release the user asked for, or None."""
    return _selected


def observe_broker(release: Release | None) -> None:
    """Note the release of the brokers this command talks to (live commands call it once connected)."""
    global _observed
    _observed = release


def text_release(broker: Release | None = None) -> Release:
    """The release whose text to print: the user's choice, else the broker's (given, or observed by the
    command's connection), else the newest."""
    return _selected or broker or _observed or NEWEST


#: Kafka 3.7 rewrote the admin tools (reassign, leader election, …) in Java: before it, their output
#: follows Scala's collection order (`kafkatool.jvm.scala_collections`), from it Java's.
JAVA_TOOLS_SINCE = Release(3, 7)


def tools_in_scala(text: Release) -> bool:
    """Whether this release's reassign/elect tools were Scala programs (their output order is Scala's)."""
    return text < JAVA_TOOLS_SINCE
