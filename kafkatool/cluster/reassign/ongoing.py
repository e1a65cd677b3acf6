"""`--cancel` and `--list`: the reassignments in progress.

`ReassignPartitionsCommand.cancelAssignment` (which partitions can be cancelled, its texts) and
`curReassignmentsToString` (`--list`'s text, and rows for `--format`).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from kafkatool.cluster.model import (
    OngoingReassignment,
    TopicPartition,
)
from kafkatool.release import Release, tools_in_scala


def no_active_moves_text(text: Release) -> str:
    """`--cancel` with no log-dir move to revert: the Scala tool ends the line, 3.7+'s Java does not."""
    return "None of the specified partition moves are active." + ("\n" if tools_in_scala(text) else "")


def cancellable(ongoing: dict[TopicPartition, OngoingReassignment], targets: Iterable[TopicPartition]) -> list[TopicPartition]:
    return sorted(tp for tp in targets if tp in ongoing and (ongoing[tp].adding or ongoing[tp].removing))


def cancelled_text(parts: list[TopicPartition]) -> str:
    if not parts:
        return "None of the specified partition reassignments are active.\n"
    return (f"Successfully cancelled partition reassignment{'' if len(parts) == 1 else 's'} for: "
            f"{','.join(map(str, sorted(parts)))}\n")


def cancel_errors_text(errors: dict[TopicPartition, str]) -> str:
    return (f"Error cancelling partition reassignment{'' if len(errors) == 1 else 's'} for:\n"
            + "\n".join(f"{tp}: {errors[tp]}" for tp in sorted(errors)))


def list_text(ongoing: dict[TopicPartition, OngoingReassignment]) -> str:
    lines = []
    for tp in sorted(ongoing):
        r = ongoing[tp]
        line = f"{tp}: replicas: {','.join(map(str, r.replicas))}."
        if r.adding:
            line += f" adding: {','.join(map(str, r.adding))}."
        if r.removing:
            line += f" removing: {','.join(map(str, r.removing))}."
        lines.append(line)
    if not lines:
        return "No partition reassignments found.\n"
    return "Current partition reassignments:\n" + "\n".join(lines) + "\n"


def list_rows(ongoing: dict[TopicPartition, OngoingReassignment]) -> list[dict[str, Any]]:
    return [
        {"topic": tp.topic, "partition": tp.partition, "replicas": r.replicas, "adding": r.adding,
         "removing": r.removing, "target": r.target}
        for tp, r in sorted(ongoing.items())
    ]
