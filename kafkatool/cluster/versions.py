"""Which Kafka release a broker is, from its ApiVersions answer, and which release an API needs.

A broker does not say its release; its ApiVersions table does, within limits: every release line
raises the highest version of some request.  `broker_release` maps a table to the newest release
whose markers it shows (facts from the release's message specs, checked in the tests against real
brokers' answers (2.1.1, 3.3.1, 4.0.0, 4.3) and the tables derived for 2.8, 3.6, 3.9, 4.1, 4.2 and
4.4), so a live command can say
"the broker is Kafka 2.1" when it lacks an API, and `release.text_release(broker_release(...))`
prints the broker's release text.  A broker newer than the newest marker reads as that release.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kafkatool.release import Release

__all__ = ["API", "ApiKey", "broker_release", "describe_broker", "lacks"]

ApiTable = Mapping[int, tuple[int, int]]


class ApiKey:
    """The requests the live commands use, with the release that introduced each (its spec's history)."""

    PRODUCE, FETCH, LIST_OFFSETS, METADATA, ADD_PARTITIONS_TO_TXN, API_VERSIONS = 0, 1, 2, 3, 24, 18
    DESCRIBE_CONFIGS, ALTER_REPLICA_LOG_DIRS, DESCRIBE_LOG_DIRS = 32, 34, 35
    ELECT_LEADERS, INCREMENTAL_ALTER_CONFIGS = 43, 44
    ALTER_PARTITION_REASSIGNMENTS, LIST_PARTITION_REASSIGNMENTS = 45, 46
    UPDATE_FEATURES, DESCRIBE_CLUSTER = 57, 60
    CREATE_TOPICS, DELETE_TOPICS, CREATE_PARTITIONS, DESCRIBE_TOPIC_PARTITIONS = 19, 20, 37, 75


#: api key -> (name, the first release whose brokers accept it)
API: dict[int, tuple[str, Release]] = {
    ApiKey.DESCRIBE_CONFIGS: ("DescribeConfigs", Release(0, 11)),
    ApiKey.ALTER_REPLICA_LOG_DIRS: ("AlterReplicaLogDirs", Release(1, 0)),
    ApiKey.DESCRIBE_LOG_DIRS: ("DescribeLogDirs", Release(1, 0)),
    ApiKey.ELECT_LEADERS: ("ElectLeaders", Release(2, 2)),
    ApiKey.INCREMENTAL_ALTER_CONFIGS: ("IncrementalAlterConfigs", Release(2, 3)),
    ApiKey.ALTER_PARTITION_REASSIGNMENTS: ("AlterPartitionReassignments", Release(2, 4)),
    ApiKey.LIST_PARTITION_REASSIGNMENTS: ("ListPartitionReassignments", Release(2, 4)),
    ApiKey.DESCRIBE_CLUSTER: ("DescribeCluster", Release(2, 8)),
    ApiKey.CREATE_TOPICS: ("CreateTopics", Release(0, 10)),
    ApiKey.DELETE_TOPICS: ("DeleteTopics", Release(0, 10)),
    ApiKey.CREATE_PARTITIONS: ("CreatePartitions", Release(1, 0)),
    ApiKey.DESCRIBE_TOPIC_PARTITIONS: ("DescribeTopicPartitions", Release(3, 7)),
}

#: Newest first: (release, api key, lowest highest-version that shows it).  Each marker holds for
#: that release and every newer one (validVersions of the specs at each release tag, less a version
#: marked latestVersionUnstable): ApiVersions v5 came with 4.4, DescribeLogDirs v5 with 4.3, ListOffsets
#: v11 with 4.2, Produce v13 with 4.1, v12 with 4.0, Fetch v17 with 3.9, Produce v11 with 3.8 and v10 with 3.7,
#: AddPartitionsToTxn v4 with 3.6, ListOffsets v8 with 3.5, UpdateFeatures v1 with 3.3,
#: Metadata v11 with 2.8, Fetch v12 with 2.7 and Metadata v7 with 2.1.
_MARKERS: tuple[tuple[Release, int, int], ...] = (
    (Release(4, 4), ApiKey.API_VERSIONS, 5),
    (Release(4, 3), ApiKey.DESCRIBE_LOG_DIRS, 5),
    (Release(4, 2), ApiKey.LIST_OFFSETS, 11),
    (Release(4, 1), ApiKey.PRODUCE, 13),
    (Release(4, 0), ApiKey.PRODUCE, 12),
    (Release(3, 9), ApiKey.FETCH, 17),
    (Release(3, 8), ApiKey.PRODUCE, 11),
    (Release(3, 7), ApiKey.PRODUCE, 10),
    (Release(3, 6), ApiKey.ADD_PARTITIONS_TO_TXN, 4),
    (Release(3, 5), ApiKey.LIST_OFFSETS, 8),
    (Release(3, 3), ApiKey.UPDATE_FEATURES, 1),
    (Release(2, 8), ApiKey.METADATA, 11),
    (Release(2, 7), ApiKey.FETCH, 12),
    (Release(2, 1), ApiKey.METADATA, 7),
)


def broker_release(api_versions: ApiTable) -> Release | None:
    """The newest release line whose markers `api_versions` (key -> (min, max)) shows; None when older than 2.1.

    The answer is a lower bound between markers: a 2.3 broker reads as 2.1, a 3.4 one as 3.3.
    """
    for release, key, highest in _MARKERS:
        if api_versions.get(key, (0, -1))[1] >= highest:
            return release
    return None


def lacks(api_versions: ApiTable, key: int) -> bool:
    """Whether the broker accepts no version of request `key`."""
    return key not in api_versions


def describe_broker(api_versions: ApiTable, since: Release) -> str:
    """`Kafka 2.1 (or another release before 2.4)`: what the broker is, for a message about something it
    lacks that came with release `since`."""
    found = broker_release(api_versions)
    if found is None:
        return "older than Kafka 2.1"
    if found < since:
        return f"Kafka {found} (or another release before {since})"
    return f"Kafka {found} (or newer)"


def client_release(client: Any) -> Release | None:
    """The release of the brokers a connected kafka-python client negotiated with, from the ApiVersions
    table it holds (None when it holds none)."""
    data = getattr(getattr(client, "_manager", None), "broker_version_data", None)
    table = getattr(data, "api_versions", None)
    return broker_release(dict(table)) if isinstance(table, dict) else None
