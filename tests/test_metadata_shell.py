"""`kafkatool metadata ls|cat|tree|find|shell` against Kafka 4.0.0's kafka-metadata-shell.sh goldens.

Every golden of the kraft-4.0.0 fixture whose source is one snapshot or segment file: the same stdout
byte for byte (the library in-process for all of them, the CLI for a sample and for the exit codes).
The goldens where Kafka's shell never returned (the format-time snapshot, directories: rc 124 from
`timeout`) or failed to start are checked for what kafkatool does instead: it answers.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from kafkatool.ops.metadata.load import load_file
from kafkatool.ops.metadata.tree import FindError, root_node, run_shell_words
from tests.conftest import FIXTURES, require_fixtures

KRAFT = FIXTURES / "kraft-4.0.0"
GOLDENS = KRAFT / "goldens" / "kafka-metadata-shell"
META = KRAFT / "data" / "c1" / "meta"


@dataclass(frozen=True)
class ShellGolden:
    case: str
    words: list[str]
    rc: int

    @property
    def source(self) -> Path | None:
        return Path(self.words[1]) if len(self.words) > 1 and self.words[0] in ("-s", "--snapshot") else None

    @property
    def command(self) -> list[str]:
        return self.words[2:] if self.source else self.words

    def stdout(self) -> str:
        return (GOLDENS / f"{self.case}.stdout").read_text()


def _goldens() -> list[ShellGolden]:
    if not (KRAFT / "goldens" / "MANIFEST.tsv").is_file():
        return []
    out = []
    for line in (KRAFT / "goldens" / "MANIFEST.tsv").read_text().splitlines():
        tool, case, args, rc, _when = line.split("\t")
        if tool == "kafka-metadata-shell":
            out.append(ShellGolden(case, shlex.split(args.replace("<ROOT>", str(KRAFT))), int(rc)))
    return out


ALL = _goldens()
ANSWERED = [g for g in ALL if g.rc in (0, 1) and g.source is not None and g.source.is_file()]


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "kafkatool", *args], capture_output=True, text=True, timeout=120
    )


def _run_library(g: ShellGolden) -> tuple[str, int]:
    assert g.source is not None
    root = root_node(load_file(g.source).image)
    try:
        return run_shell_words(root, g.command), 0
    except FindError as exc:
        return exc.output, 1


def test_fixture_has_the_shell_goldens() -> None:
    require_fixtures()
    if not ALL:
        pytest.skip(f"kraft-4.0.0 goldens not found at {GOLDENS}")
    assert len(ANSWERED) >= 70


@pytest.mark.parametrize("g", ANSWERED, ids=[g.case for g in ANSWERED])
def test_shell_golden_byte_exact(g: ShellGolden) -> None:
    """Same stdout and exit code as kafka-metadata-shell.sh --snapshot FILE (no clock-dependent text here:
    the provenance time is the batch's append time, written in the file)."""
    require_fixtures()
    out, rc = _run_library(g)
    assert out == g.stdout()
    assert rc == g.rc


CLI_SAMPLE = [
    "mid-tree-image",
    "mid-find-root",
    "mid-ls-glob-fx",
    "mid-err-cat-dir",
    "mid-err-noninteractive-pwd",
    "mid-cat-fx-orders-1-2",
    "early-tree-topics",
]


@pytest.mark.parametrize("case", CLI_SAMPLE)
def test_cli_matches_golden(case: str) -> None:
    require_fixtures()
    g = next((x for x in ANSWERED if x.case == case), None)
    if g is None:
        pytest.skip(f"golden {case} not in the fixture")
    assert g.source is not None
    cmd = g.command
    if cmd[0] in ("ls", "cat", "tree", "find"):
        p = run_cli("metadata", cmd[0], *cmd[1:], "-s", str(g.source))
    else:
        p = run_cli("metadata", "shell", "-s", str(g.source), "--", *cmd)
    assert p.stdout == g.stdout()
    assert p.returncode == g.rc
    if g.rc == 1:  # Kafka's find dies on zkMigrationState: one line on stderr, no traceback
        assert p.stderr.count("\n") == 1 and "zkMigrationState" in p.stderr


def test_format_time_snapshot_answers_where_kafka_hangs() -> None:
    """Kafka 4.0's shell never returns on the format-time snapshot (nothing applied past offset 0)."""
    require_fixtures()
    g = next((x for x in ALL if x.case == "boot-ls-root-HANGS"), None)
    if g is None or g.source is None:
        pytest.skip("no boot golden")
    assert g.rc == 124 and g.stdout() == ""
    p = run_cli("metadata", "ls", "/", "-s", str(g.source))
    assert p.returncode == 0 and p.stdout == "image\nlocal\n"


def test_directory_source_reads_snapshot_and_log() -> None:
    """Kafka's shell hangs on a directory; kafkatool reads the newest snapshot and the log after it.
    Its final image agrees with the final snapshot where the log after it changed nothing shown."""
    require_fixtures()
    final = META / "__cluster_metadata-0" / "00000000000000000219-0000000001.checkpoint"
    if not final.is_file():
        pytest.skip("final snapshot missing")
    for src in (META, META / "__cluster_metadata-0"):
        p = run_cli("metadata", "ls", "/image/topics/byName", "-s", str(src))
        assert p.returncode == 0, p.stderr
        assert (
            p.stdout == "__consumer_offsets\n__transaction_state\nfx-compact\nfx-events\nfx-orders\nfx-txn\n"
        )
    p = run_cli("metadata", "tree", "/image/acls", "/image/configs", "-s", str(META))
    snap = run_cli("metadata", "tree", "/image/acls", "/image/configs", "-s", str(final))
    assert p.stdout == snap.stdout and p.returncode == 0


def test_missing_source_and_no_source() -> None:
    p = run_cli("metadata", "ls", "/", "-s", "/nonexistent/x.checkpoint")
    assert p.returncode == 2 and p.stderr.startswith("kafkatool: ") and p.stderr.count("\n") == 1
    p = run_cli("metadata", "ls", "/")
    assert p.returncode == 2 and "Traceback" not in p.stderr


def test_json_rows() -> None:
    require_fixtures()
    mid = META / "__cluster_metadata-0" / "00000000000000000090-0000000001.checkpoint"
    p = run_cli("metadata", "ls", "/image/topics/byName/fx-orders", "-s", str(mid), "--format", "json")
    rows = json.loads(p.stdout)
    assert [r["name"] for r in rows] == ["0", "1", "2", "id", "name"]
    assert rows[0] == {
        "dir": "/image/topics/byName/fx-orders",
        "name": "0",
        "path": "/image/topics/byName/fx-orders/0",
        "type": "file",
    }
    p = run_cli("metadata", "tree", "/image/features", "-s", str(mid), "--format", "json")
    assert json.loads(p.stdout) == {
        "/image/features": {
            "finalized_group.version": "1",
            "finalized_transaction.version": "2",
            "metadataVersion": "Optional[4.0-IV3]",
            "zkMigrationState": None,
        }
    }
    p = run_cli("metadata", "find", "/image/features", "-s", str(mid), "--format", "csv")
    assert p.returncode == 0 and p.stdout.splitlines()[-1] == "/image/features/zkMigrationState,missing"


def test_other_release_text_is_refused() -> None:
    """Kafka 3.x's metadata shell had another tree: asking for its text is refused in one line."""
    require_fixtures()
    p = run_cli("--kafka-release", "3.3", "metadata", "ls", "/", "-s", str(META))
    assert p.returncode == 2 and p.stderr.count("\n") == 1 and "4.0" in p.stderr
