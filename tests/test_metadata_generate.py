"""The project's writer of KRaft metadata: records it encodes are Kafka's own bytes, and the demo
metadata dir it writes reads back as the history it scripted."""

from __future__ import annotations

from pathlib import Path

import pytest

from kafkatool.log.decoders.kraft_control import decode_control_record
from kafkatool.log.decoders.metadata import decode_metadata_record
from kafkatool.log.records import iter_batches
from kafkatool.ops.metadata.encode import control_record, metadata_record
from kafkatool.ops.metadata.generate import GenerateMetadataError, generate_metadata
from kafkatool.ops.metadata.history import diff_images, history, parse_broker, parse_partition
from kafkatool.ops.metadata.load import load_dir, load_file
from kafkatool.ops.metadata.source import Damage
from kafkatool.ops.quorum_offline import describe_offline
from tests.conftest import FIXTURES, require_fixtures

KRAFT_LOG = FIXTURES / "kraft-4.0.0" / "data" / "c1" / "meta" / "__cluster_metadata-0"


def test_encoder_writes_kafkas_bytes() -> None:
    """Every record of a real Kafka 4.0.0 controller's log, decoded and re-encoded, is the same bytes."""
    require_fixtures()
    if not KRAFT_LOG.is_dir():
        pytest.skip("kraft-4.0.0 fixture not found")
    n = 0
    for log in sorted(KRAFT_LOG.glob("*.log")) + sorted(KRAFT_LOG.glob("*.checkpoint")):
        for b in iter_batches(log.read_bytes()):
            for r in b.records():
                if b.is_control:
                    name, data = decode_control_record(r.key, r.value)
                    if name in (
                        "LEADER_CHANGE",
                        "SNAPSHOT_HEADER",
                        "SNAPSHOT_FOOTER",
                        "KRAFT_VERSION",
                        "KRAFT_VOTERS",
                    ):
                        assert control_record(int.from_bytes(r.key[2:4], "big"), data) == (r.key, r.value)
                        n += 1
                else:
                    m = decode_metadata_record(r.value)
                    assert metadata_record(m.type, m.data, m.version) == r.value, m.type
                    n += 1
    assert n > 500


@pytest.fixture()
def demo(tmp_path: Path) -> Path:
    generate_metadata(tmp_path / "meta")
    return tmp_path / "meta"


def test_demo_reads_back(demo: Path) -> None:
    pdir = demo / "__cluster_metadata-0"
    img = load_dir(pdir).image
    assert sorted(img.topics_by_name) == ["orders"]
    assert img.brokers[3]["epoch"] == 40 and not img.brokers[3]["fenced"]
    assert img.configs[(2, "orders")] == {"retention.ms": "86400000"}
    # the snapshot alone holds the image of every record below its offset
    snap = next(pdir.glob("*.checkpoint"))
    end = int(snap.name.split("-")[0])
    assert diff_images(load_file(snap).image, load_dir(pdir, end - 1).image) == []
    damage: list[Damage] = []
    rows = history(pdir, parse_partition("orders-1"), damage)
    assert [(r["field"], r["before"], r["after"]) for r in rows if r["field"] in ("isr", "leader")] == [
        ("isr", [3, 2], [2]),
        ("leader", 3, 2),
        ("isr", [2], [2, 3]),
        ("leader", 2, 3),
    ]
    assert [r["field"] for r in history(pdir, parse_broker("3"), damage) if r["change"] != "added"][:2] == [
        "fenced",
        "inControlledShutdown",
    ]
    assert not damage
    q = describe_offline(demo)
    assert q.cluster_id == "kafkatool-demo-cluster" and [v.id for v in q.voters] == [1] and q.leader_id == 1


def test_demo_refuses_an_existing_log(demo: Path) -> None:
    with pytest.raises(GenerateMetadataError):
        generate_metadata(demo)
