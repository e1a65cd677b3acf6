"""ConsumerGroupDescribe (API 69): how groups on the new consumer protocol (KIP-848,
`group.protocol=consumer`, Kafka 4.0) are described.

kafka-python 3.0 has no message classes for it; these are built by kafka-python's own JSON-schema
machinery from the field layout of Kafka's message specs (`schemas/*.json`: versions 0-1, flexible),
so connections, version negotiation and encoding stay kafka-python's.  Kafka 4.0's admin client asks
ConsumerGroupDescribe first and falls back to the classic DescribeGroups for the groups it answers
GROUP_ID_NOT_FOUND (classic groups) and when the broker lacks the API.
"""

from __future__ import annotations

from kafkatool.cluster import schemas

GROUP_ID_NOT_FOUND = 69
API_KEY = 69


ConsumerGroupDescribeRequest, ConsumerGroupDescribeResponse = schemas.api_messages("ConsumerGroupDescribe")


def assignment_partitions(assignment: object) -> list[tuple[str, int]]:
    """The topic-partitions of an `Assignment` struct, in the order the broker listed them."""
    out: list[tuple[str, int]] = []
    for t in getattr(assignment, "topic_partitions", None) or []:
        out.extend((t.topic_name, p) for p in t.partitions)
    return out
