"""`kafkatool quorum describe` (kafka-metadata-quorum.sh describe) against Kafka 4.0.0's own output.

The fake controllers and brokers (tests/support/fake_kraft.py) hold the state the real cluster reported
in each golden (parsed from the golden's table: node ids, directory ids, log end offsets, timestamps);
the oracle is the text Kafka 4.0.0's tool printed for it.  Over the release matrix the expected text is
written from each release's MetadataQuorumCommand (3.3 Scala, 3.6 --human-readable, 3.9 directory ids,
4.1 zero directory ids left out), and releases without DescribeQuorum get a one-line refusal.
"""

from __future__ import annotations

import base64
import re
import time
import uuid
from pathlib import Path

import pytest

from tests.conftest import FIXTURES
from tests.support.cli import run_console
from tests.support.fake_kraft import FakeKraftKafka, FakeQuorum, FakeReplica
from tests.support.kwire import MATRIX

GOLDENS = FIXTURES / "kraft-4.0.0" / "goldens" / "kafka-metadata-quorum"
ENDPOINTS = {
    1: [("CONTROLLER", "127.0.0.1", 27001)],
    2: [("CONTROLLER", "127.0.0.1", 27002)],
    3: [("CONTROLLER", "127.0.0.1", 27003)],
}


def _golden(name: str) -> str:
    if not GOLDENS.is_dir():
        pytest.skip(f"kraft-4.0.0 goldens not found at {GOLDENS}")
    return (GOLDENS / f"{name}.stdout").read_text()


def _uuid(text: str) -> uuid.UUID:
    return uuid.UUID(bytes=base64.urlsafe_b64decode(text + "=="))


def _state_from_replication(text: str, now: int | None = None) -> FakeQuorum:
    """The quorum a --replication golden shows ("N ms ago" read back against `now`)."""
    voters, observers, leader = [], [], -1
    for line in text.splitlines()[1:]:
        node, directory, leo, _lag, fetch, caught, status = [c.strip() for c in line.split("\t")[:7]]

        def ts(cell: str) -> int:
            m = re.fullmatch(r"(\d+) ms ago", cell)
            return (now or 0) - int(m.group(1)) if m else int(cell)

        r = FakeReplica(int(node), _uuid(directory), int(leo), ts(fetch), ts(caught))
        (observers if status == "Observer" else voters).append(r)
        if status == "Leader":
            leader = int(node)
    return FakeQuorum(leader, 1, voters[0].log_end_offset, voters, observers, dict(ENDPOINTS))


def _state_from_status(text: str) -> FakeQuorum:
    fields = dict(line.split(":", 1) for line in text.splitlines() if line)
    hw = int(fields["HighWatermark"])
    ids = {
        1: "jDHhQBHEGzBdXSNsLaWzLQ",
        2: "hkQUzq9Kztzr_SoPehoe4w",
        3: "rsQNylOBOYMVX7C3rMKKlw",
        4: "yJ6JMT-djJHFcjFBX1PmYg",
        5: "CjgL14ygnjLnS4AcaFl5_g",
    }
    voters = [FakeReplica(n, _uuid(ids[n]), hw, 1795851586000, 1795851586000) for n in (1, 2, 3)]
    observers = [FakeReplica(n, _uuid(ids[n]), hw, 1795851586000, 1795851586000) for n in (4, 5)]
    return FakeQuorum(
        int(fields["LeaderId"]), int(fields["LeaderEpoch"]), hw, voters, observers, dict(ENDPOINTS)
    )


def _cluster(release: str = "4.0.0") -> FakeKraftKafka:
    return FakeKraftKafka(
        {4: None, 5: None}, controllers=[1, 2, 3], cluster_id="hYWQgWs-wDBsLQL4h4nALg", release=release
    )


def _run(k: FakeKraftKafka, via: str, *args: str):  # type: ignore[no-untyped-def]
    where = (
        ["--bootstrap-server", k.bootstrap]
        if via == "bs"
        else ["--bootstrap-controller", k.controller_bootstrap]
    )
    return run_console("quorum", "describe", *args, *where)


_AGO = re.compile(r"\d+ ms ago *")  # with its padding (the width follows the digits)


@pytest.mark.parametrize(
    "case",
    [
        "A-replication-bs",
        "A-replication-bc",
        "B-replication-bs",
        "B-replication-bc",
        "S09-replication-b4down",
        "A-status-bs",
        "A-status-bc",
        "B-status-bs",
        "B-status-bc",
        "A-replication-hr-bs",
        "A-replication-hr-bc",
        "B-replication-hr-bs",
    ],
)
def test_goldens_byte_for_byte(case: str) -> None:
    expected = _golden(case)
    via = case.rsplit("-", 1)[1]
    via = "bs" if via in ("bs", "b4down") else via
    hr = "-hr-" in case
    with _cluster() as k:
        if "status" in case:
            k.quorum = _state_from_status(expected)
            res = _run(k, via, "--status")
        else:
            k.quorum = _state_from_replication(expected, int(time.time() * 1000))
            res = _run(k, via, "--replication", *(["--human-readable"] if hr else []))
    assert (res.returncode, res.stderr) == (0, "")
    if hr:  # "N ms ago" changes with the clock: compared by shape
        assert _AGO.sub("N ms ago", res.stdout) == _AGO.sub("N ms ago", expected)
    else:
        assert res.stdout == expected


def _small(release: str) -> FakeKraftKafka:
    k = FakeKraftKafka({4: None}, controllers=[1, 2], cluster_id="abc", release=release)
    k.quorum = FakeQuorum(
        1,
        7,
        42,
        [FakeReplica(1, None, 42, 1000, 1000), FakeReplica(2, None, 40, 900, 800)],
        [FakeReplica(4, None, 41, -1, -1)],
        {1: [("CONTROLLER", "::1", 9093)]},
    )
    return k


EXPECTED_REPLICATION = {
    "3.3": (
        "NodeId\tLogEndOffset\tLag\tLastFetchTimestamp\tLastCaughtUpTimestamp\tStatus  \t\n"
        "1     \t42          \t0  \t1000              \t1000                 \tLeader  \t\n"
        "2     \t40          \t2  \t900               \t800                  \tFollower\t\n"
        "4     \t41          \t1  \t-1                \t-1                   \tObserver\t\n"
    ),
    "3.9": (
        "NodeId\tDirectoryId           \tLogEndOffset\tLag\tLastFetchTimestamp\tLastCaughtUpTimestamp\tStatus  \t\n"
        "1     \tAAAAAAAAAAAAAAAAAAAAAA\t42          \t0  \t1000              \t1000                 \tLeader  \t\n"
        "2     \tAAAAAAAAAAAAAAAAAAAAAA\t40          \t2  \t900               \t800                  \tFollower\t\n"
        "4     \tAAAAAAAAAAAAAAAAAAAAAA\t41          \t1  \t-1                \t-1                   \tObserver\t\n"
    ),
}
STATUS_HEAD = (
    "ClusterId:              abc\nLeaderId:               1\nLeaderEpoch:            7\n"
    "HighWatermark:          42\nMaxFollowerLag:         2\nMaxFollowerLagTimeMs:   200\n"
)
EXPECTED_STATUS = {
    "3.3": STATUS_HEAD + "CurrentVoters:          [1,2]\nCurrentObservers:       [4]\n\n",
    "3.6": STATUS_HEAD + "CurrentVoters:          [1,2]\nCurrentObservers:       [4]\n",
    "3.9": STATUS_HEAD
    + 'CurrentVoters:          [{"id": 1, "directoryId": null, "endpoints": ["CONTROLLER://[::1]:9093"]}, '
    '{"id": 2, "directoryId": null}]\nCurrentObservers:       [{"id": 4, "directoryId": null}]\n',
    "4.1": STATUS_HEAD
    + 'CurrentVoters:          [{"id": 1, "endpoints": ["CONTROLLER://[::1]:9093"]}, {"id": 2}]\n'
    'CurrentObservers:       [{"id": 4}]\n',
}


def _text_release(release: str) -> str:
    major_minor = tuple(int(x) for x in release.split(".")[:2])
    return (
        "4.1"
        if major_minor >= (4, 1)
        else "3.9"
        if major_minor >= (3, 9)
        else "3.6"
        if major_minor >= (3, 6)
        else "3.3"
    )


@pytest.mark.parametrize("release", MATRIX)
@pytest.mark.parametrize("via", ["bs", "bc"])
def test_release_matrix(release: str, via: str) -> None:
    with _small(release) as k:
        rep = _run(k, via, "--replication")
        st = _run(k, via, "--status")
    if release in ("2.1.1", "2.8"):
        for res in (rep, st):
            assert res.returncode == 2 and res.stdout == ""
            assert res.stderr.startswith(
                "kafkatool: quorum describe: describe the metadata quorum needs DescribeQuorum "
                "(Kafka >= 3.3); the "
            )
            assert res.stderr.count("\n") == 1
        return
    text = _text_release(release)
    if via == "bc" and text < "3.6":  # tools reach controllers since 3.7: an older one gets 3.7's text
        text = "3.6"
    assert (rep.returncode, rep.stderr) == (0, "")
    assert rep.stdout == EXPECTED_REPLICATION["3.9" if text >= "3.9" else "3.3"]
    assert (st.returncode, st.stderr) == (0, "")
    assert st.stdout == EXPECTED_STATUS[text]


def test_human_readable_refused_before_3_6() -> None:
    with _small("3.3.1") as k:
        res = _run(k, "bs", "--replication", "--human-readable")
    assert res.returncode == 2 and "Kafka 3.3's tool has no such option" in res.stderr


def test_rows_json() -> None:
    import json

    with _small("4.0.0") as k:
        res = _run(k, "bs", "--replication", "--format", "json")
    rows = json.loads(res.stdout)
    assert [(r["node_id"], r["status"], r["lag"]) for r in rows] == [
        (1, "Leader", 0),
        (2, "Follower", 2),
        (4, "Observer", 1),
    ]
    assert rows[0]["endpoints"] == ["CONTROLLER://[::1]:9093"] and rows[0]["directory_id"] is None


def test_usage_errors(refused_port: int) -> None:
    assert run_console("quorum", "describe", "--bootstrap-server", "x:1").returncode == 2
    res = run_console("quorum", "describe", "--status", "--replication", "--bootstrap-server", "x:1")
    assert res.returncode == 2 and "exactly one of --status or --replication" in res.stderr
    res = run_console(
        "quorum",
        "describe",
        "--status",
        "--bootstrap-controller",
        f"127.0.0.1:{refused_port}",
        "--timeout",
        "2",
    )
    assert res.returncode == 3 and res.stderr.count("\n") == 1 and "cannot reach any controller" in res.stderr


def test_log_dir_dispatch(tmp_path: Path) -> None:
    import importlib.util

    res = run_console("quorum", "describe", "--status", "--log-dir", str(tmp_path))
    if importlib.util.find_spec("kafkatool.cli.quorum_offline") is None:
        assert res.returncode == 2 and "offline reader is not part of this build" in res.stderr


@pytest.mark.parametrize("via", ["bs", "bc"])
def test_silent_peer_is_bounded_by_timeout(via: str) -> None:
    """A broker or controller that accepts connections and answers only ApiVersions: one line, exit 3."""
    with _small("4.0.0") as k:
        k.silent = True
        res = _run(k, via, "--replication", "--timeout", "2")
    assert res.returncode == 3 and res.stdout == "" and res.stderr.count("\n") == 1
    assert res.stderr.startswith("kafkatool: quorum describe: ")


def test_garbage_peer_is_one_line() -> None:
    """A listener that answers with bytes that are no Kafka response (never a traceback)."""
    import socket
    import threading

    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)

    def serve() -> None:
        conn, _ = srv.accept()
        conn.recv(4096)
        conn.sendall(b"\x00\x00\x00\x08" + b"\xff" * 8)
        conn.close()

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    try:
        res = run_console(
            "quorum",
            "describe",
            "--status",
            "--bootstrap-controller",
            f"127.0.0.1:{srv.getsockname()[1]}",
            "--timeout",
            "2",
        )
    finally:
        srv.close()
    assert res.returncode == 3 and res.stderr.count("\n") == 1 and "Traceback" not in res.stderr
