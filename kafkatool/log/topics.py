"""Topic names: the rules Kafka's brokers enforce (a name is also a directory name in every log dir)."""

from __future__ import annotations

import re

MAX_TOPIC_LENGTH = 249  # leaves room for "-<partition>" and the ".<uuid>-delete" suffix in 255 bytes
_LEGAL = re.compile(r"[a-zA-Z0-9._-]+")


def topic_name_problem(name: str) -> str | None:
    """Why Kafka would refuse `name` as a topic name, in its words; None when it is valid."""
    if name == "":
        reason = "the empty string is not allowed"
    elif name in (".", ".."):
        reason = f"'{name}' is not allowed"
    elif len(name) > MAX_TOPIC_LENGTH:
        reason = f"the length of '{name}' is longer than the max allowed length {MAX_TOPIC_LENGTH}"
    elif not _LEGAL.fullmatch(name):
        reason = f"'{name}' contains one or more characters other than ASCII alphanumerics, '.', '_' and '-'"
    else:
        return None
    return f"Topic name is invalid: {reason}"
