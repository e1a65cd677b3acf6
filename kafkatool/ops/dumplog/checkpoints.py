"""Files whose names have no dot: the checkpoints and `quorum-state`, which Kafka's tool cannot dump.

The Scala tool (up to 4.2) died on such a name, the Java tool (4.3 on) ignores it; we dump the
offset checkpoints (`recovery-point-offset-checkpoint` and the others, `leader-epoch-checkpoint`)
through `log/checkpoint` and print `quorum-state`'s JSON.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from kafkatool.log.checkpoint import CheckpointError, parse_checkpoint
from kafkatool.log.files import LEADER_EPOCH_CHECKPOINT, TOPIC_CHECKPOINTS
from kafkatool.ops.dumplog.base import DumperBase


class CheckpointDumps(DumperBase):
    """The dumps of files without a dot in their names."""

    # -- files Kafka's tool cannot dump ----------------------------------------------------
    def dump_dotless(self, path: Path, shown: str) -> None:
        """Checkpoint files (Kafka's tool crashes on names without a dot): dump their entries."""
        name = path.name
        text = path.read_text("utf-8", errors="replace")
        if name in TOPIC_CHECKPOINTS or name == LEADER_EPOCH_CHECKPOINT:
            try:
                cp = parse_checkpoint(text, str(path))
            except CheckpointError as exc:
                self.problem(shown, "corrupt_checkpoint", str(exc))
                return
            fields: tuple[str, ...] = (
                ("epoch", "startOffset")
                if name == LEADER_EPOCH_CHECKPOINT
                else ("topic", "partition", "offset")
            )
            if self.json:
                for e in cp.entries:
                    self._emit(
                        {
                            "type": "checkpoint_entry",
                            "file": shown,
                            **dict(zip(fields, _typed(e), strict=False)),
                        }
                    )
                return
            lines = [f"Checkpoint version: {cp.version} entries: {len(cp.entries)}\n"]
            lines += [
                " ".join(f"{k}: {v}" for k, v in zip(fields, e, strict=False)) + "\n" for e in cp.entries
            ]
            self._w("".join(lines).encode())
            return
        if name == "quorum-state":
            try:
                state = json.loads(text)
            except ValueError as exc:
                self.problem(shown, "corrupt", f"{shown}: not valid JSON: {exc}")
                return
            if self.json:
                self._emit({"type": "quorum_state", "file": shown, "state": state})
            else:
                self._w(("quorum-state: " + json.dumps(state, separators=(",", ":")) + "\n").encode())
            return
        if self.json:
            self._emit({"type": "ignored", "file": shown, "reason": "unknown file"})
        else:
            self.err.write(f"Ignoring unknown file {shown}\n".encode("utf-8", "replace"))


_DECIMAL = re.compile(r"-?[0-9]+")


def _typed(fields: tuple[str, ...]) -> list[object]:
    return [int(f) if _DECIMAL.fullmatch(f) else f for f in fields]
