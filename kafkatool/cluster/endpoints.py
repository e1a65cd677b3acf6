"""The cluster's endpoints as `kafka-cluster.sh list-endpoints` prints them (DescribeCluster v1+, Kafka 3.7+).

Follows `ClusterTool.listEndpoints` (4.0) and the admin client's `describeCluster`: brokers (endpoint type
1; with `--include-fenced-brokers` DescribeCluster v2 lists fenced ones too) or, asked through a controller
listener, the controllers (endpoint type 2), in the answer's order; columns padded with Java's `%-Ns`
(HOST to the longest host, RACK to the longest rack or 10, `null` for none).
"""

from __future__ import annotations

from dataclasses import dataclass

from kafkatool.cluster.connect import ClusterError
from kafkatool.cluster.kraft_channel import Channel, need
from kafkatool.release import Release

DESCRIBE_CLUSTER = 60
BROKERS, CONTROLLERS = 1, 2


@dataclass(frozen=True)
class Endpoint:
    id: int
    host: str
    port: int
    rack: str | None
    fenced: bool


def list_endpoints(channel: Channel, include_fenced: bool) -> list[Endpoint]:
    from kafka.protocol.admin.cluster import DescribeClusterRequest

    controllers = channel.kind == "controller"
    need(
        channel,
        "list endpoints",
        DESCRIBE_CLUSTER,
        2 if include_fenced else 1,
        Release(4, 0) if include_fenced else Release(3, 7),
    )
    kwargs = {
        "include_cluster_authorized_operations": False,
        "endpoint_type": CONTROLLERS if controllers else BROKERS,
    }
    if include_fenced:
        kwargs["include_fenced_brokers"] = True
    resp = channel.send(DescribeClusterRequest(**kwargs))
    if resp.error_code:
        from kafkatool.cluster.kafka_errors import java_to_string

        raise ClusterError(f"list endpoints: {java_to_string(resp.error_code, resp.error_message)}")
    return [
        Endpoint(int(b.broker_id), b.host, int(b.port), b.rack, bool(getattr(b, "is_fenced", False)))
        for b in resp.brokers
    ]


def endpoints_text(nodes: list[Endpoint], controllers: bool) -> str:
    host_w = max((len(n.host) for n in nodes), default=100)
    rack_w = max((len(n.rack) for n in nodes if n.rack is not None), default=10)

    def row(*cells: object) -> str:
        widths = [10, host_w, 10, rack_w] + ([15] if controllers else [10, 15])
        return " ".join(str(c).ljust(w) for c, w in zip(cells, widths, strict=True)) + "\n"

    if controllers:
        lines = [row("ID", "HOST", "PORT", "RACK", "ENDPOINT_TYPE")]
        lines += [
            row(n.id, n.host, n.port, "null" if n.rack is None else n.rack, "controller") for n in nodes
        ]
    else:
        lines = [row("ID", "HOST", "PORT", "RACK", "STATE", "ENDPOINT_TYPE")]
        lines += [
            row(
                n.id,
                n.host,
                n.port,
                "null" if n.rack is None else n.rack,
                "fenced" if n.fenced else "unfenced",
                "broker",
            )
            for n in nodes
        ]
    return "".join(lines)
