"""Which Kafka release a ZooKeeper-mode cluster runs, from its znodes, and whose tool text it gets.

Znodes are written as the releases write them (facts from kafka/zk/ZkData.scala at apache/kafka tags
2.1.0-3.9.0): Kafka 2.1.1's broker registration is version 4 (endpoints, listener map), 2.7+ brokers
write version 5 with `"features":{}`, 3.4+ controllers write `/controller` version 2 with
`kraftControllerEpoch`, IBP 3.3+ controllers `/feature` version 2.  No ZooKeeper znode proves 3.7+, so
every ZooKeeper cluster prints the Scala tools' text (3.3's model), never 4.0's.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kafkatool import release
from kafkatool.cluster.open import open_cluster
from kafkatool.cluster.zkrelease import ReleaseRange, release_range, text_release_of
from kafkatool.release import Release
from tests.support.cli import run_kafkatool
from tests.support.zk_cluster import ZkKafka

V4 = (b'{"listener_security_protocol_map":{"PLAINTEXT":"PLAINTEXT"},"endpoints":["PLAINTEXT://k1:9092"],'
      b'"jmx_port":-1,"host":"k1","timestamp":"1700000000000","port":9092,"version":4}')
V5 = (b'{"features":{},"listener_security_protocol_map":{"PLAINTEXT":"PLAINTEXT"},"endpoints":["PLAINTEXT://k2:9092"],'
      b'"jmx_port":-1,"port":9092,"host":"k2","version":5,"timestamp":"1700000000000"}')
CONTROLLER_V1 = b'{"version":1,"brokerid":2,"timestamp":"1700000000000"}'
CONTROLLER_V2 = b'{"version":2,"brokerid":2,"timestamp":"1700000000000","kraftControllerEpoch":-1}'
FEATURE_V1 = b'{"features":{},"version":1,"status":0}'
FEATURE_V2 = b'{"features":{},"version":2,"status":1}'


def test_the_range_is_the_lowest_release_a_live_broker_is_proven_to_run() -> None:
    # a controller without /feature runs software before 2.7 (2.7+ controllers always write it)
    assert release_range({1: V4, 2: V4}, CONTROLLER_V1, None) == ReleaseRange(None, Release(2, 6))
    assert release_range({1: V4, 2: V4}, None, None) == ReleaseRange(None, Release(3, 9))  # no controller: no word
    assert release_range({1: V4, 2: V4}, CONTROLLER_V1, FEATURE_V1) == ReleaseRange(None, Release(3, 9))
    assert release_range({1: V5, 2: V5}, CONTROLLER_V1, None) == ReleaseRange(Release(2, 7))
    assert release_range({1: V4, 2: V5}, CONTROLLER_V1, None) == ReleaseRange(None)  # a rolling upgrade
    assert release_range({2: V5}, CONTROLLER_V2, None) == ReleaseRange(Release(3, 4))  # the controller is 3.4+
    assert release_range({1: V5, 2: V5}, CONTROLLER_V2, None) == ReleaseRange(Release(2, 7))  # broker 1 may be 2.7
    assert release_range({1: V4, 2: V5}, CONTROLLER_V2, FEATURE_V2) == ReleaseRange(Release(3, 3))  # IBP 3.3: all
    migrating = b'{"version":2,"brokerid":3000,"timestamp":"1700000000000","kraftControllerEpoch":5}'
    assert release_range({1: V5}, migrating, None) == ReleaseRange(Release(2, 7))  # a KRaft controller: no broker
    assert release_range({}, None, None) == ReleaseRange(None)
    assert release_range({1: b"not json", 2: b'{"version":"x"}'}, b"[]", b"{}") == ReleaseRange(None)
    assert str(ReleaseRange(Release(3, 4))) == "Kafka 3.4-3.9"


def test_no_zookeeper_cluster_gets_the_java_tools_text() -> None:
    for low in (None, Release(2, 7), Release(3, 3), Release(3, 4)):
        assert text_release_of(ReleaseRange(low)) == Release(3, 3)
    assert text_release_of(ReleaseRange(Release(3, 7))) == Release(3, 7)  # were 3.7+ ever proven


@pytest.mark.zookeeper
@pytest.mark.parametrize("registration, controller, feature, low, high, text", [
    (4, 1, None, None, Release(2, 6), Release(2, 1)),  # Kafka 2.1.1: its own tool's words
    (4, 1, 1, None, Release(3, 9), Release(3, 3)),  # 2.7+ software at IBP 2.6
    (5, 1, 1, Release(2, 7), Release(3, 9), Release(3, 3)),  # 2.7-3.3
    (5, 2, 2, Release(3, 4), Release(3, 9), Release(3, 3)),  # 3.4-3.9, e.g. 3.9 before a KRaft migration
])
def test_a_real_zookeeper_tells_the_backend_its_range(zk_chroot: str, registration: int, controller: int,
                                                      feature: int | None, low: Release | None, high: Release,
                                                      text: Release) -> None:
    k = ZkKafka(zk_chroot)
    try:
        k.add_broker(1, version=registration)
        k.become_controller(1, version=controller)
        if feature is not None:
            k.write_feature_znode(feature)
        release.select(None)
        with open_cluster(zookeeper=zk_chroot, timeout=10) as c:
            assert c.release_range == ReleaseRange(low, high)  # type: ignore[attr-defined]
            assert c.broker_release == text and c.text_release() == text
        release.select("4.0")
        try:
            with open_cluster(zookeeper=zk_chroot, timeout=10) as c:  # the user's choice wins, nothing is read
                assert c.release_range is None and c.text_release() == Release(4, 0)  # type: ignore[attr-defined]
        finally:
            release.select(None)
    finally:
        k.close()


@pytest.mark.zookeeper
@pytest.mark.parametrize("registration", [4, 5])
def test_reassign_generate_over_zookeeper_prints_in_scala_order(zk_chroot: str, tmp_path: Path,
                                                                registration: int) -> None:
    """Kafka 2.6-3.6's tool draws topics in its `groupBy`'s immutable.HashMap order (payments, clicks, orders,
    audit for these names), 3.7+'s in Java HashMap order (audit first), 2.1's in its Scala 2.11/2.12 order
    (and prints in it): with a seed the proposals differ."""
    k = ZkKafka(zk_chroot)
    try:
        for b in range(4):
            k.add_broker(b, version=registration)
        k.become_controller(0, version=2 if registration == 5 else 1)
        for t in ("orders", "payments", "audit", "clicks"):
            k.create_topic(t, {p: [p % 4, (p + 1) % 4] for p in range(3)})
        (tmp_path / "t.json").write_text(json.dumps(
            {"topics": [{"topic": t} for t in ("orders", "payments", "audit", "clicks")], "version": 1}))

        def generate(*pre: str) -> str:
            r = run_kafkatool(*pre, "reassign", "--zookeeper", zk_chroot, "--timeout", "10", "--generate",
                              "--topics-to-move-json-file", "t.json", "--broker-list", "0,1,2,3", "--seed", "42",
                              "--no-plan-file", cwd=tmp_path)
            assert r.code == 0, r.err
            return r.out

        default, scala, java = generate(), generate("--kafka-release", "3.3"), generate("--kafka-release", "4.0")
        if registration == 5:  # 2.7+: the Scala 2.13 tool's text
            assert default == scala
        else:  # no more than 2.1 proven: Kafka 2.1's tool
            assert default == generate("--kafka-release", "2.1") and default != scala
        assert scala != java
    finally:
        k.close()
