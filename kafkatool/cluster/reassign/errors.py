"""How a reassignment command ends early, each with its exit code (the CLI maps them).

Kafka's tool throws `AdminCommandFailedException` or `TerseException` for these; ours tell the three
apart so the exit code says which.
"""

from __future__ import annotations


class ReassignInputError(ValueError):
    """Bad JSON, options or references: exit code 2 with Kafka's message."""


class ReassignRefused(Exception):
    """The cluster is not in a state to execute (reassignment in progress, drift): exit code 1."""


class LogDirMoveTimeout(Exception):
    """Some log-dir moves did not start within the timeout (Kafka's message): exit code 3."""
