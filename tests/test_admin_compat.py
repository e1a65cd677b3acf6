"""Every Admin-API command against fake brokers of every release of the matrix: it works, or it exits 2
with one line naming the request it needs and the broker's release.  The compatibility table of
docs/reassign.md is checked against what this proves, cell by cell, and the README's shorter one against it."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from kafka.protocol.admin import (
    AlterPartitionReassignmentsRequest,
    DescribeConfigsRequest,
    ElectLeadersRequest,
    IncrementalAlterConfigsRequest,
    ListPartitionReassignmentsRequest,
)
from kafka.protocol.metadata import MetadataRequest

import kafkatool.cli.logdirs  # noqa: F401
import kafkatool.cli.offsets  # noqa: F401  (registers the command)
import kafkatool.cli.offsets_end  # noqa: F401
import kafkatool.cli.offsets_export  # noqa: F401
import kafkatool.cli.offsets_groups  # noqa: F401
import kafkatool.cli.offsets_reset  # noqa: F401
import kafkatool.cli.offsets_streams  # noqa: F401
import kafkatool.cli.replicas  # noqa: F401
from tests.support.cli import Result, run_kafkatool
from tests.support.fake_admin import FakeKafka
from tests.support.fake_groups import FakeKafkaCluster
from tests.support.kwire import MATRIX

README = Path(__file__).resolve().parents[1] / "README.md"
REFERENCE = README.parent / "docs" / "reassign.md"
#: a row of the README's table -> the rows of the reference table it stands for
README_ROWS = {
    "`reassign --generate`, `elect --dry-run`": ["reassign --generate", "elect --dry-run"],
    "`reassign --execute/--verify/--list/--cancel`": ["reassign --execute", "reassign --verify", "reassign --list",
                                                      "reassign --cancel"],
    "`elect`": ["elect"],
    "`log-dirs --describe`, `offsets` (describe, reset, export, end), `replicas`": [
        "log-dirs --describe", "offsets (describe)", "offsets reset --execute", "offsets export", "offsets end",
        "replicas (live)"],
    "`offsets groups`": ["offsets groups"],
    "`offsets share`": ["offsets share --list"],
    "`offsets streams`": ["offsets streams --list"],
}
#: api key -> the highest version kafka-python sends (its own classes: the client side of the negotiation)
CLIENT_MAX = {cls.API_KEY: cls.max_version for cls in (  # type: ignore[attr-defined]
    MetadataRequest, DescribeConfigsRequest, IncrementalAlterConfigsRequest, AlterPartitionReassignmentsRequest,
    ListPartitionReassignmentsRequest, ElectLeadersRequest)}
TOO_OLD = re.compile(r"^kafkatool: (reassign|elect|offsets share|offsets streams): [a-z ]+ needs? (\w+) \(Kafka >= ([\d.]+)\); "
                     r"the brokers at (\S+) are Kafka [\d.]+ \(or another release before \3\)\n$")


def _reassign_cases(k: FakeKafka, tmp: Path) -> dict[str, Callable[[], Result]]:
    (tmp / "t.json").write_text('{"topics":[{"topic":"orders"}],"version":1}')
    (tmp / "r.json").write_text(json.dumps({"version": 1, "partitions": [
        {"topic": "orders", "partition": 0, "replicas": [3, 1]}]}))

    def run(*args: str) -> Result:
        return run_kafkatool(*args, "--bootstrap-server", k.bootstrap, "--timeout", "5", cwd=tmp)

    return {
        "reassign --generate": lambda: run("reassign", "--generate", "--topics-to-move-json-file", "t.json",
                                           "--broker-list", "1,2,3", "--no-plan-file"),
        "reassign --execute": lambda: run("reassign", "--execute", "--reassignment-json-file", "r.json",
                                          "--throttle", "100", "--no-plan-file"),
        "reassign --verify": lambda: run("reassign", "--verify", "--reassignment-json-file", "r.json"),
        "reassign --list": lambda: run("reassign", "--list"),
        "reassign --cancel": lambda: run("reassign", "--cancel", "--reassignment-json-file", "r.json"),
        "elect --dry-run": lambda: run("elect", "--election-type", "preferred", "--all-topic-partitions", "--dry-run"),
        "elect": lambda: run("elect", "--election-type", "preferred", "--all-topic-partitions"),
        "log-dirs --describe": lambda: run("log-dirs", "--describe"),
    }


def _offsets_cases(c: FakeKafkaCluster, tmp: Path) -> dict[str, Callable[[], Result]]:
    def run(*args: str) -> Result:
        return run_kafkatool(*args, "--bootstrap-server", c.bootstrap, cwd=tmp)

    return {
        "offsets (describe)": lambda: run("offsets", "--group", "app"),
        "offsets reset --execute": lambda: run("offsets", "reset", "--group", "app", "--all-topics", "--to-earliest",
                                               "--execute"),
        "offsets export": lambda: run("offsets", "export", "--group", "app"),
        "offsets end": lambda: run("offsets", "end", "--topic", "orders"),
        "replicas (live)": lambda: run("replicas", "--time", "-2"),
        "offsets groups": lambda: run("offsets", "groups"),
        "offsets share --list": lambda: run("offsets", "share", "--list"),
        "offsets streams --list": lambda: run("offsets", "streams", "--list"),
    }


def _cell(r: Result, bootstrap: str) -> str:
    if r.code in (0, 1):
        return "yes"
    m = TOO_OLD.match(r.err)
    assert r.code == 2 and m and m.group(4) == bootstrap, (r.code, r.out, r.err)
    return f"no: needs {m.group(2)} ({m.group(3)}+)"


def _table(text: str, heading: str) -> dict[str, dict[str, str]]:
    """row name -> release column -> cell, from the first table after `heading`."""
    section = text[text.index(heading):].splitlines()
    start = next(i for i, line in enumerate(section) if line.startswith("|"))
    rows = []
    for line in section[start:]:  # the table is the first run of "|" lines
        if not line.startswith("|"):
            break
        rows.append(line)
    header = [h.strip() for h in rows[0].strip("|").split("|")]
    table = {}
    for line in rows[2:]:
        cells = [c.strip() for c in line.strip("|").split("|")]
        table[cells[0]] = dict(zip(header[1:], cells[1:], strict=True))
    return table


def readme_table() -> dict[str, dict[str, str]]:
    """command -> release column -> cell, from the compatibility table of docs/reassign.md."""
    return {name.strip("`"): cells for name, cells in _table(REFERENCE.read_text(), "## Broker releases").items()}


def test_readme_table_agrees_with_the_reference() -> None:
    """The README's short table: each row's cells are those of the commands it stands for (the request's
    name left out: `no: needs 2.4+`)."""
    full = readme_table()
    short = _table(README.read_text(), "## Compatibility")
    assert set(short) == set(README_ROWS)
    for row, names in README_ROWS.items():
        for name in names:
            expected = {col: re.sub(r"needs \w+ \((.*)\)", r"needs \1", cell) for col, cell in full[name].items()}
            assert short[row] == expected, (row, name)


@pytest.mark.parametrize("release", MATRIX)
def test_every_command_works_or_names_what_the_release_lacks(release: str, tmp_path: Path) -> None:
    got: dict[str, str] = {}
    with FakeKafka({1: None, 2: None, 3: None}, release=release) as k:
        k.add_topic("orders", {0: [1, 2], 1: [2, 3]})
        k.partition("orders", 1).leader = 3
        for name, case in _reassign_cases(k, tmp_path).items():
            r = case()
            got[name] = _cell(r, k.bootstrap)
            if name == "reassign --execute" and r.code == 0:
                assert [t for t, _ in k.ongoing()] == ["orders"]
        if got["reassign --execute"] == "yes":
            assert k.ongoing() == {} and k.configs == {}  # --cancel cancelled and cleared the throttles
        # Every request came at the version a real broker of the release negotiates with kafka-python:
        # the highest both accept (so each release of the matrix really exercises its own versions).
        for key, request in k.requests:
            if key in CLIENT_MAX:
                assert request.api_version == min(CLIENT_MAX[key], k.api_versions[key][1]), (key, request.api_version)
    with FakeKafkaCluster(brokers=2, version=release) as c:
        c.add_topic("orders", 2, log_end=10)
        c.add_group("app", offsets={("orders", 0): (5, ""), ("orders", 1): (7, "")})
        for name, case in _offsets_cases(c, tmp_path).items():
            got[name] = _cell(case(), c.bootstrap)
        assert c.groups["app"].offsets[("orders", 0)] == (0, "")
    column = ".".join(release.split(".")[:2])
    assert {name: cells[column] for name, cells in readme_table().items()} == got
