"""Bootstrapping: every --bootstrap-server address is tried, refused connections fail at once, and a
failure names each address with its own reason (kafkatool.cluster.bootstrap)."""

from __future__ import annotations

import pytest

import kafkatool.cli.offsets  # noqa: F401  (registers the command)
import kafkatool.cli.offsets_end  # noqa: F401
from kafkatool.cluster.bootstrap import probe
from tests.support.cli import run_kafkatool
from tests.support.fake_groups import FakeKafkaCluster
from tests.support.kwire import MATRIX


def test_refused_everywhere_fails_without_waiting_for_the_timeout(refused_port: int) -> None:
    # --timeout 600: only the "refused twice" rule ends this before pytest's own timeout
    r = run_kafkatool(
        "offsets",
        "end",
        "--bootstrap-server",
        f"127.0.0.1:{refused_port}",
        "--timeout",
        "600",
        "--topic",
        "orders",
    )
    assert (r.code, r.out) == (3, "")
    assert (
        r.err
        == f"kafkatool: offsets: cannot reach any broker: 127.0.0.1:{refused_port} refused the connection (twice)\n"
    )


def test_each_failed_address_is_named_with_its_reason(refused_port: int, frozen_port: int) -> None:
    r = run_kafkatool(
        "offsets",
        "end",
        "--bootstrap-server",
        f"127.0.0.1:{refused_port},127.0.0.1:{frozen_port},no-such-host.invalid:9092",
        "--timeout",
        "1",
        "--topic",
        "orders",
    )
    assert (r.code, r.out) == (3, "")
    assert r.err.startswith(
        f"kafkatool: offsets: cannot reach any broker within 1s: 127.0.0.1:{refused_port} refused the connection (twice); "
        f"127.0.0.1:{frozen_port} accepted the connection but did not answer; no-such-host.invalid:9092 cannot be resolved"
    )
    assert r.err.count("\n") == 1


@pytest.mark.parametrize("release", MATRIX)
def test_a_frozen_and_a_refusing_address_do_not_hide_a_broker_that_is_up(
    release: str, refused_port: int, frozen_port: int
) -> None:
    with FakeKafkaCluster(brokers=3, version=release) as c:
        c.add_topic("orders", 2, log_end=[5, 7])
        live = c.bootstrap.split(",")[-1]
        servers = f"127.0.0.1:{frozen_port},127.0.0.1:{refused_port},{live}"
        r = run_kafkatool(
            "offsets", "end", "--bootstrap-server", servers, "--timeout", "600", "--topic", "orders"
        )
    assert (r.code, r.out, r.err) == (0, "orders:0:5\norders:1:7\n", "")
    # the probe itself: the live broker answered ApiVersions v0, the others are named
    with FakeKafkaCluster(brokers=1, version=release) as c:
        live = c.bootstrap
        got = probe([f"127.0.0.1:{frozen_port}", live], 600)
    assert got.answered == live
    assert got.failures == {f"127.0.0.1:{frozen_port}": "accepted the connection but did not answer"}
