"""What every command promises (issue: one CLI that scripts can trust).

--help with examples and exit 0; an unknown option, a missing input file or malformed input is one
`kafkatool: …` line on stderr and exit 2; an unreachable cluster is one line and exit 3 within the
timeout.  Exit 1 (findings) is exercised by each command's own tests (corrupt logs, mismatches,
reassignment in progress, lag over --max-lag).
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from kafkatool.cli.main import COMMANDS


def kt(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kafkatool", *args], capture_output=True, timeout=timeout,
                          stdin=subprocess.DEVNULL)


def one_line(p: subprocess.CompletedProcess) -> bool:
    lines = p.stderr.decode().splitlines()
    return len(lines) == 1 and lines[0].startswith("kafkatool: ") and "Traceback" not in lines[0]


def test_top_level_help_and_version() -> None:
    p = kt("--help")
    assert p.returncode == 0
    for name in COMMANDS:
        assert name.encode() in p.stdout
    assert b"Exit codes" in p.stdout
    v = kt("--version")
    assert v.returncode == 0 and v.stdout.startswith(b"kafkatool ")


@pytest.mark.parametrize("command", list(COMMANDS))
def test_help_has_examples_and_unknown_options_are_usage_errors(command: str) -> None:
    p = kt(command, "--help")
    assert p.returncode == 0 and b"Examples" in p.stdout, command
    bad = kt(command, "--no-such-option")
    assert bad.returncode == 2 and one_line(bad), bad.stderr


MISSING = [
    ("dump-log", "--files", "/nope/00000000000000000000.log"),
    ("index", "verify", "/nope"),
    ("index", "rebuild", "/nope"),
    ("recover", "/nope"),
    ("compact", "/nope"),
    ("compact", "--estimate", "/nope"),
    ("spark-scan", "/nope"),
    ("offsets", "--log-dir", "/nope", "--all-groups"),
    ("reassign", "--zookeeper", "127.0.0.1:1", "--generate", "--topics-to-move-json-file", "/nope.json", "--broker-list", "1"),
    ("reassign", "--zookeeper", "127.0.0.1:1", "--execute", "--reassignment-json-file", "/nope.json"),
    ("elect", "--zookeeper", "127.0.0.1:1", "--election-type", "preferred", "--path-to-json-file", "/nope.json"),
    ("replicas", "/nope/orders-0", "/nope2/orders-0"),
    ("log-dirs", "/nope/kafka-logs"),
    ("offsets", "watch", "--log-dir", "/nope/kafka-logs", "--all-groups"),
]


@pytest.mark.parametrize("args", MISSING, ids=lambda a: " ".join(a[:2]))
def test_a_missing_input_file_is_exit_2(args: tuple[str, ...]) -> None:
    p = kt(*args)
    assert p.returncode == 2 and one_line(p), p.stderr


def test_malformed_json_input_is_exit_2(tmp_path: Path) -> None:
    bad = tmp_path / "topics.json"
    bad.write_text("{not json")
    p = kt("reassign", "--zookeeper", "127.0.0.1:1", "--generate", "--topics-to-move-json-file", str(bad),
           "--broker-list", "1")
    assert p.returncode == 2 and one_line(p), p.stderr


UNREACHABLE = [
    ("reassign", "--bootstrap-server", "127.0.0.1:1", "--list"),
    ("reassign", "--zookeeper", "127.0.0.1:1", "--list"),
    ("elect", "--bootstrap-server", "127.0.0.1:1", "--election-type", "preferred", "--all-topic-partitions"),
    ("offsets", "--bootstrap-server", "127.0.0.1:1", "--all-groups"),
    ("offsets", "--zookeeper", "127.0.0.1:1", "--all-groups"),
    ("offsets", "end", "--bootstrap-server", "127.0.0.1:1", "--topic", "t"),
    ("offsets", "watch", "--bootstrap-server", "127.0.0.1:1", "--all-groups", "--window", "1"),
]


@pytest.mark.parametrize("args", UNREACHABLE, ids=lambda a: " ".join(a[:2]))
def test_an_unreachable_cluster_is_exit_3_within_the_timeout(args: tuple[str, ...]) -> None:
    start = time.monotonic()
    p = kt(*args, "--timeout", "2")
    assert p.returncode == 3 and one_line(p), p.stderr
    assert time.monotonic() - start < 30
