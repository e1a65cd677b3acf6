"""GetOffsetShell's `--topic-partitions` filter: `orders:1,big:3-5,audit,:0,logs:5-,x:-3`.

Kafka's grammar (tools GetOffsetShell, 3.x Scala and 4.x Java alike): a comma-separated list of
rules `TOPIC_REGEX(:PARTITIONS)?`, where the topic regex may be empty (any topic) and PARTITIONS is
`N` (that partition), `N-M` (N inclusive, M exclusive), `N-` (N and above), `-M` (below M) or
empty (all).  A topic-partition is kept when any rule accepts it; topic regexes match the whole
name, as Kafka's `IncludeList` does.
"""

from __future__ import annotations

import re
import warnings
from dataclasses import dataclass

_RULE = re.compile(r"([^:,]*)(?::(?:([0-9]*)|(?:([0-9]*)-([0-9]*))))?")
_INT_MAX = 2**31 - 1


class TopicPartitionsError(ValueError):
    """A rule Kafka's tool refuses too (its message)."""


@dataclass(frozen=True)
class Rule:
    topic: re.Pattern[str]
    low: int  # inclusive
    high: int  # exclusive

    def topic_allowed(self, topic: str) -> bool:
        return self.topic.fullmatch(topic) is not None

    def allows(self, topic: str, partition: int) -> bool:
        return self.topic_allowed(topic) and self.low <= partition < self.high


def _int(text: str | None, default: int, spec: str) -> int:
    if not text:
        return default
    value = int(text)
    if value > _INT_MAX:  # Java's Integer.parseInt refuses it
        raise TopicPartitionsError(f"Invalid rule specification: {spec} ({text} is not a partition number)")
    return value


def parse_topic_partitions(spec: str) -> list[Rule]:
    """The rules of a `--topic-partitions` value, or TopicPartitionsError naming the bad one."""
    items = spec.split(",")
    while items and not items[-1]:  # Java's String.split drops trailing empty strings
        items.pop()
    rules = []
    for item in items:
        m = _RULE.fullmatch(item)
        if m is None:
            raise TopicPartitionsError(f"Invalid rule specification: {item}")
        regex = m.group(1) or ".*"
        try:
            with warnings.catch_warnings():  # Python's notes on Java-valid syntax (nested sets) are not errors
                warnings.simplefilter("ignore", FutureWarning)
                topic = re.compile(regex.strip())
        except re.error as exc:
            raise TopicPartitionsError(f"Invalid rule specification: {item} ({regex!r} is not a regular expression: "
                                       f"{exc})") from None
        if m.group(2):
            n = _int(m.group(2), 0, item)
            rules.append(Rule(topic, n, n + 1))
        else:
            rules.append(Rule(topic, _int(m.group(3), 0, item), _int(m.group(4), _INT_MAX, item)))
    return rules


def allowed(rules: list[Rule], topic: str, partition: int) -> bool:
    return any(r.allows(topic, partition) for r in rules)


def topic_allowed(rules: list[Rule], topic: str) -> bool:
    return any(r.topic_allowed(topic) for r in rules)
