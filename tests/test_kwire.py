"""The fakes' wire layer against independent oracles: real brokers' bytes and kafka-python's decoder."""

from __future__ import annotations

import json

import pytest
from kafka.protocol.admin import DescribeClusterResponse, DescribeConfigsResponse
from kafka.protocol.metadata import ApiVersionsRequest, MetadataResponse

from kafkatool.cluster.versions import broker_release
from kafkatool.release import Release
from tests.conftest import FIXTURES
from tests.support import kwire


@pytest.mark.parametrize("release", ["2.1.1", "3.3.1", "4.0.0", "4.3"])
def test_api_versions_answer_is_the_real_brokers_bytes(release: str) -> None:
    path = FIXTURES / "brokers" / f"kafka-{release}.api_versions.json"
    if not path.is_file():
        pytest.skip(f"{path} not found (set KAFKATOOL_SHARED to the shared/ directory)")
    real = json.loads(path.read_text())
    frame = kwire.encode_response(18, 0, 7, kwire.api_versions_body(kwire.release_api_versions(release),
                                                                      real["error_code"]))
    assert frame[4:].hex() == real["response_hex"]


@pytest.mark.parametrize("release", kwire.MATRIX)
def test_broker_release_reads_every_table_of_the_matrix(release: str) -> None:
    expected = Release(*map(int, release.split(".")[:2]))
    assert broker_release(kwire.release_api_versions(release)) == expected
    assert broker_release({3: (0, 5)}) is None  # Metadata v5: Kafka 1.x


def test_a_field_the_version_lacks_is_absent_for_kafka_pythons_decoder() -> None:
    body = {"error_code": 0, "error_message": None, "cluster_id": "c", "controller_id": 1, "endpoint_type": 1,
            "brokers": [{"broker_id": 1, "host": "h", "port": 9, "rack": None, "is_fenced": True}]}
    v0 = kwire.encode_response(60, 0, 1, body)
    v2 = kwire.encode_response(60, 2, 1, body)
    assert len(v2) == len(v0) + 2  # endpoint_type (int8, v1+) and is_fenced (bool, v2+)
    decoded = DescribeClusterResponse.decode(v0[4:], version=0, header=True).to_dict()
    assert "endpoint_type" not in decoded and decoded["brokers"][0]["broker_id"] == 1
    meta = {"brokers": [{"node_id": 1, "host": "h", "port": 9, "rack": "r"}], "cluster_id": "c", "controller_id": 1,
            "topics": [{"error_code": 0, "name": "t", "partitions": [{"partition_index": 0, "leader_id": 1,
                                                                       "replica_nodes": [1], "isr_nodes": [1]}]}]}
    for v in range(13):
        got = MetadataResponse.decode(kwire.encode_response(3, v, 1, meta)[4:], version=v, header=True).to_dict()
        assert got["topics"][0]["partitions"][0]["replica_nodes"] == [1]
        assert ("rack" in got["brokers"][0]) == (v >= 1) and ("cluster_id" in got) == (v >= 2)
    cfg = {"results": [{"error_code": 0, "resource_type": 2, "resource_name": "t", "configs": [
        {"name": "a", "value": "1", "read_only": False, "is_default": False, "config_source": 1, "synonyms": []}]}]}
    for v in range(5):
        got = DescribeConfigsResponse.decode(kwire.encode_response(32, v, 1, cfg)[4:], version=v, header=True)
        assert got.results[0].configs[0].value == "1"


def test_requests_decode_and_unsupported_versions_get_the_brokers_answer() -> None:
    req = ApiVersionsRequest(client_software_name="x", client_software_version="1")
    req.API_VERSION = 3
    req.with_header(correlation_id=9, client_id="me")
    key, version, corr, body = kwire.decode_request(bytes(req.encode(header=True, framed=True))[4:])
    assert (key, version, corr, body.client_software_name, body.header.client_id) == (18, 3, 9, "x", "me")
    old = kwire.release_api_versions("2.1.1")
    assert kwire.answer(60, 0, 9, old, {}) is None  # no DescribeCluster: the broker closes the connection
    err = kwire.answer(18, 3, 9, old, None)
    assert err is not None and err[4:].hex() == "00000009" + "0023" + "00000000"  # v0, UNSUPPORTED_VERSION, []


def test_fake_broker_closes_on_a_version_its_release_lacks_and_answers_old_api_versions_requests() -> None:
    import socket
    import struct

    from tests.support.fake_admin import FakeKafka

    def frame(key: int, version: int) -> bytes:
        body = struct.pack(">hhih", key, version, 5, 1) + b"x"
        if version >= (3 if key == 18 else 0) and key in (18, 60):
            body += b"\x00" + (b"\x01\x01\x00" if key == 18 else b"\x00\x00\x00")  # flexible: tags, body, tags
        return struct.pack(">i", len(body)) + body

    with FakeKafka({1: None}, release="2.1.1") as k, socket.create_connection(("127.0.0.1", k.port[1]), 5) as s:
        s.sendall(frame(18, 3))  # ApiVersions v3: 2.1.1 knows 0-2
        size = struct.unpack(">i", s.recv(4))[0]
        assert s.recv(size).hex() == "00000005" + "0023" + "00000000"
        s.sendall(frame(60, 0))  # DescribeCluster: 2.1.1 has none, it drops the connection
        assert s.recv(4) == b""
