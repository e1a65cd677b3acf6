"""`offsets end --isolation-level read_committed`: the last stable offset (ListOffsets v2+, IsolationLevel 1).

Over the release matrix of fake brokers (tests/support/fake_groups.py) whose partition holds an open
transaction: read_committed reports the partition's last stable offset (the open transaction's first
offset), read_uncommitted (the default) the high watermark; the request carries isolation level 1.
"""

from __future__ import annotations

import json

import pytest

from tests.support.cli import run_console
from tests.support.fake_groups import FakeKafkaCluster
from tests.support.kwire import MATRIX


def end_offsets(c: FakeKafkaCluster, *args: str):  # type: ignore[no-untyped-def]
    """`offsets end` of fx-txn on the fake cluster."""
    return run_console("offsets", "end", "--bootstrap-server", c.bootstrap, "--topic", "fx-txn", *args)


@pytest.mark.parametrize("release", MATRIX)
def test_read_committed_is_the_last_stable_offset(release: str) -> None:
    with FakeKafkaCluster(brokers=2, version=release) as c:
        c.add_topic("fx-txn", 2, log_end=[20, 15])
        c.partition("fx-txn", 0).stable_end = 7  # producer 1002's transaction, open from offset 7
        high = end_offsets(c)
        lso = end_offsets(c, "--isolation-level", "read_committed")
        rows = end_offsets(c, "--isolation-level", "read_committed", "--format", "json")
    assert (high.returncode, high.stdout) == (0, "fx-txn:0:20\nfx-txn:1:15\n")
    assert (lso.returncode, lso.stdout) == (0, "fx-txn:0:7\nfx-txn:1:15\n")
    assert [(r["partition"], r["offset"]) for r in json.loads(rows.stdout)] == [(0, 7), (1, 15)]


def test_bad_isolation_level() -> None:
    res = run_console("offsets", "end", "--bootstrap-server", "127.0.0.1:1", "--isolation-level", "committed")
    assert res.returncode == 2 and res.stderr.count("\n") == 1 and "--isolation-level" in res.stderr
