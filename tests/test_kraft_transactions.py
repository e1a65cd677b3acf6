"""`kafkatool transactions` (kafka-transactions.sh) against Kafka 4.0.0's output at the fixture's mark C.

The fake brokers (tests/support/fake_kraft.py) hold what the real cluster held then (S13's three
transactions; fx-txn's producers, producer 1002's transaction open from offset 7); the oracle is the text
Kafka 4.0.0's tool printed, wall-clock columns (TransactionDurationMs) compared by shape.  Over the release
matrix: a one-line refusal where the broker lacks the request; the abort writes its marker to the leader.
"""

from __future__ import annotations

import json
import re

import pytest

from tests.conftest import FIXTURES
from tests.support.cli import run_console
from tests.support.fake_kraft import FakeKraftKafka, FakeProducer, FakeTxn
from tests.support.kwire import MATRIX

GOLDENS = FIXTURES / "kraft-4.0.0" / "goldens" / "kafka-transactions"


def _golden(name: str, ext: str = "stdout") -> str:
    if not GOLDENS.is_dir():
        pytest.skip(f"kraft-4.0.0 goldens not found at {GOLDENS}")
    return (GOLDENS / f"{name}.{ext}").read_text()


def _cluster(release: str = "4.0.0") -> FakeKraftKafka:
    k = FakeKraftKafka({4: None, 5: None}, controllers=[1, 2, 3], release=release)
    k.add_topic("fx-txn", {0: [4, 5], 1: [5, 4]})
    k.add_topic("fx-orders", {0: [4, 5], 1: [5, 4], 2: [4, 5]})
    k.transactions = {
        "fx-tx-aborted": FakeTxn(4, 2000, 1, "CompleteAbort", 3600000, 1795851753253, []),
        "fx-tx-hanging": FakeTxn(
            5, 1002, 0, "Ongoing", 3600000, 1795851754709, [("fx-txn", 0), ("fx-txn", 1)]
        ),
        "fx-tx-committed": FakeTxn(5, 1001, 1, "CompleteCommit", 3600000, 1795851751703, []),
    }
    for p, (t2000, t1001) in {0: (1795851753379, 1795851751858), 1: (1795851753381, 1795851751851)}.items():
        k.producers[("fx-txn", p)] = [
            FakeProducer(2000, 1, -1, t2000, 0, -1),
            FakeProducer(1001, 1, -1, t1001, 0, -1),
            FakeProducer(1002, 0, 1, 1795851754695, -1, 7),
        ]
    k.producers[("fx-orders", 0)] = [FakeProducer(1000, 0, 29, 1795851624794, -1, -1)]
    return k


def _run(k: FakeKraftKafka, *args: str):  # type: ignore[no-untyped-def]
    return run_console("transactions", *args, "--bootstrap-server", k.bootstrap)


_DURATION = re.compile(r"^(\S+ *\t){7}(\d+ *)\t", re.M)


def _abort_fx_txn_1(k: FakeKraftKafka, coordinator_epoch: str):  # type: ignore[no-untyped-def]
    """Abort producer 1002's (epoch 0) open transaction on fx-txn-1, named by its producer (the pre-3.0 way)."""
    return _run(
        k,
        "abort",
        "--topic",
        "fx-txn",
        "--partition",
        "1",
        "--producer-id",
        "1002",
        "--producer-epoch",
        "0",
        "--coordinator-epoch",
        coordinator_epoch,
        "--execute",
    )


def _shape(text: str) -> str:
    """TransactionDurationMs (now - start) changes with the clock: its cell becomes N, padded the same."""
    return _DURATION.sub(
        lambda m: m.group(0)[: m.start(2) - m.start(0)] + "N".ljust(len(m.group(2))) + "\t", text
    )


@pytest.mark.parametrize(
    "case,args",
    [
        ("C-list", ["list"]),
        ("C-list-duration-60s", ["list", "--duration-filter", "60000"]),
        ("C-describe-committed", ["describe", "--transactional-id", "fx-tx-committed"]),
        ("C-describe-aborted", ["describe", "--transactional-id", "fx-tx-aborted"]),
        ("C-describe-hanging", ["describe", "--transactional-id", "fx-tx-hanging"]),
        ("C-describe-unknown", ["describe", "--transactional-id", "no-such-txn"]),
        ("C-describe-producers-fx-txn-0", ["describe-producers", "--topic", "fx-txn", "--partition", "0"]),
        ("C-describe-producers-fx-txn-1", ["describe-producers", "--topic", "fx-txn", "--partition", "1"]),
        (
            "C-describe-producers-fx-orders-0",
            ["describe-producers", "--topic", "fx-orders", "--partition", "0"],
        ),
    ],
)
def test_goldens(case: str, args: list[str]) -> None:
    out, err, rc = _golden(case), _golden(case, "stderr"), int(_golden(case, "rc"))
    with _cluster() as k:
        res = _run(k, *args)
    assert (res.returncode, res.stderr) == (rc, err)
    assert _shape(res.stdout) == _shape(out)
    if "describe-" in case and "producers" not in case and rc == 0:
        assert res.stdout != _shape(res.stdout)  # the duration cell was there and compared by shape


def test_find_hanging_and_abort_by_start_offset() -> None:
    with _cluster() as k:
        # the coordinator still lists both partitions in the Ongoing transaction: not hanging (as recorded)
        res = _run(k, "find-hanging", "--broker-id", "5")
        assert res.returncode == 0
        assert res.stdout == (
            "Topic\tPartition\tProducerId\tProducerEpoch\tCoordinatorEpoch\tStartOffset\t"
            "LastTimestamp\tDuration(min)\t\n"
        )
        # once the coordinator forgets the transaction, both open partitions hang
        k.transactions["fx-tx-hanging"].partitions = []
        res = _run(k, "find-hanging", "--topic", "fx-txn", "--format", "json")
        rows = json.loads(res.stdout)
        assert sorted(
            (r["topic"], r["partition"], r["producer_id"], r["txn_start_offset"]) for r in rows
        ) == [("fx-txn", 0, 1002, 7), ("fx-txn", 1, 1002, 7)]
        dry = _run(k, "abort", "--topic", "fx-txn", "--partition", "0", "--start-offset", "7")
        assert dry.returncode == 0 and k.markers == []
        assert dry.stdout == (
            "Would abort AbortTransactionSpec(topicPartition=fx-txn-0, producerId=1002, producerEpoch=0, "
            "coordinatorEpoch=0); nothing written (add --execute to abort it).\n"
        )
        done = _run(k, "abort", "--topic", "fx-txn", "--partition", "0", "--start-offset", "7", "--execute")
        assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
        assert k.markers == [(4, "fx-txn", 0, 1002, 0, False)]  # ABORT, written by fx-txn-0's leader
        done = _abort_fx_txn_1(k, "-1")
        assert done.returncode == 0 and k.markers[-1] == (5, "fx-txn", 1, 1002, 0, False)
        gone = _run(k, "abort", "--topic", "fx-txn", "--partition", "0", "--start-offset", "7")
        assert gone.returncode == 1
        assert (
            gone.stderr == "Could not find any open transactions starting at offset 7 on partition fx-txn-0\n"
        )


def test_kafka_usage_lines() -> None:
    with _cluster() as k:
        res = _run(k, "find-hanging", "--max-transaction-timeout", "1")
        assert (res.returncode, res.stderr) == (
            1,
            "The `find-hanging` command requires either --topic or --broker-id "
            "to limit the scope of the search\n",
        )
        res = _run(k, "abort", "--topic", "fx-txn", "--partition", "0", "--producer-id", "1")
        assert (res.returncode, res.stderr) == (1, "Missing required argument --producer-epoch\n")


@pytest.mark.parametrize("release", MATRIX)
def test_release_matrix(release: str) -> None:
    with _cluster(release) as k:
        listing = _run(k, "list")
        producers = _run(k, "describe-producers", "--topic", "fx-orders", "--partition", "0")
        duration = _run(k, "list", "--duration-filter", "1")
    has = k.api_versions
    if 66 in has:
        assert listing.returncode == 0 and listing.stdout.splitlines()[1].startswith("fx-tx-aborted  \t4")
    else:
        assert listing.returncode == 2 and listing.stderr.count("\n") == 1
        assert "list transactions needs ListTransactions (Kafka >= 3.0)" in listing.stderr
    if 61 in has:
        assert producers.returncode == 0 and producers.stdout.splitlines()[1].startswith("1000      \t0")
    else:
        assert producers.returncode == 2 and "needs DescribeProducers (Kafka >= 2.8)" in producers.stderr
    if has.get(66, (0, -1))[1] >= 1:
        assert duration.returncode == 0
    else:
        assert duration.returncode == 2 and "ListTransactions v1+" in duration.stderr


def test_controller_refused() -> None:
    res = run_console("transactions", "list", "--bootstrap-controller", "127.0.0.1:1")
    assert res.returncode == 2


@pytest.mark.parametrize("release", MATRIX)
def test_abort_by_producer_id_over_the_matrix(release: str) -> None:
    """WriteTxnMarkers exists on every release of the matrix (v0 on 2.1, only v1 on 4.0): the marker reaches the leader."""
    with _cluster(release) as k:
        res = _abort_fx_txn_1(k, "3")
        by_offset = _run(k, "abort", "--topic", "fx-txn", "--partition", "0", "--start-offset", "7")
    assert (res.returncode, res.stdout, res.stderr) == (0, "", "")
    assert k.markers == [(5, "fx-txn", 1, 1002, 0, False)]
    if 61 in k.api_versions:
        assert by_offset.returncode == 0 and "producerId=1002" in by_offset.stdout
    else:
        assert by_offset.returncode == 2 and "needs DescribeProducers (Kafka >= 2.8)" in by_offset.stderr
