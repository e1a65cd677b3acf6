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
    "Release", "KNOWN_RELEASES", "NEWEST", "parse_release", "resolve", "known_text", "select", "explicit",
    "text_release", "tools_in_scala",
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


#: The releases whose text is modelled, oldest first.  A request for an unmodelled line between two
#: of them is served by the newest known one not newer than it (3.5 prints as 3.3), with a note; a
#: release outside the range is refused.  Patch releases never change tool text (4.3.7 is 4.3).
KNOWN_RELEASES: tuple[Release, ...] = (
    Release(2, 1), Release(3, 3), Release(4, 0), Release(4, 1), Release(4, 2), Release(4, 3), Release(4, 4),
)
NEWEST: Release = KNOWN_RELEASES[-1]


def known_text() -> str:
    """The known releases as `--help` and error lines name them: `3.3, 4.0, 4.1, ...`."""
    return ", ".join(map(str, KNOWN_RELEASES))

_RELEASE_RE = re.compile(r"^(\d{1,2})\.(\d{1,2})(?:\.\d{1,3})?$")


def parse_release(text: str) -> Release:
    """Parse `3.3`, `3.3.1` or `4.0.0`; ValueError naming the text otherwise."""
    m = _RELEASE_RE.match(text.strip())
    if not m:
        raise ValueError(f"{text!r} is not a Kafka release (expected MAJOR.MINOR, e.g. 3.3 or 4.0)")
    return Release(int(m.group(1)), int(m.group(2)))


def resolve(text: str | Release) -> tuple[Release, str | None]:
    """The known release whose text serves a request, and a one-line note when it is not the one asked.

    ValueError (naming the known releases) for a release older than the oldest or newer than the
    newest known: kafkatool cannot say what that release's tools print."""
    asked = parse_release(text) if isinstance(text, str) else text
    if asked in KNOWN_RELEASES:
        return asked, None
    if asked > NEWEST or asked < KNOWN_RELEASES[0]:
        raise ValueError(f"Kafka {asked} is not a release kafkatool knows (it knows {known_text()})")
    served = max(r for r in KNOWN_RELEASES if r <= asked)
    return served, f"Kafka {asked}'s tool text is not modelled: printing Kafka {served}'s (the newest known before it)"


_selected: Release | None = None
_observed: Release | None = None  # the release of the brokers a live command talks to, once it knows


def select(release: Release | str | None) -> str | None:
    """Set (or with None clear) the release the user asked for; a text is resolved to a known release
    (ValueError when none serves it) and the note saying which text is printed instead is returned."""
    global _selected
    if isinstance(release, str):
        _selected, note = resolve(release)
        return note
    _selected = release
    return None


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
