"""Consumer group offsets on a live cluster, over ZooKeeper (old consumers) and the Admin API.

Three pieces, one concern each, one module each:

* `broker_offsets.BrokerOffsets` asks the partition leaders about their logs: log-end, log-start
  and by-timestamp offsets (ListOffsets) and the timestamp of the record at an offset (a bounded
  Fetch).  Requests are grouped by leader and sent concurrently: one request per broker however
  many partitions (10,000 partitions on 3 brokers cost 3 ListOffsets, not 10,000).  It also holds
  the command's single `--timeout` deadline the other calls share.
* `kafka_groups.KafkaGroups` reads and writes groups the brokers coordinate — the admin calls
  `ConsumerGroupCommand`'s `ConsumerGroupService` makes: ListGroups (`--list`), DescribeGroups and
  ConsumerGroupDescribe (`--describe`), OffsetFetch and OffsetCommit (`--reset-offsets`), one request
  per coordinator where the protocol allows, looked up again when the coordinator moves.
* `zk_groups.ZkGroups` reads and writes the znodes old (ZooKeeper-based) consumers keep under
  `/consumers`; brokers and leaders come from `kafkatool.cluster.zk.ZkCluster`.

`model` holds the values they return (Member, GroupInfo, Committed, ListedOffset, RecordStamp) and
the broker error codes they react to.  Nothing here consumes as a group: the Fetch carries no group,
commits nothing, and reads at most a batch or two per partition.  kafka-python and kazoo are
imported lazily by `kafkatool.cluster.connect`.  Every name other modules use is re-exported here.
"""

from __future__ import annotations

from kafkatool.cluster.groups.broker_offsets import BrokerOffsets, _partial_batch
from kafkatool.cluster.groups.kafka_groups import KafkaGroups, _CoordinatorMoved
from kafkatool.cluster.groups.model import (
    EARLIEST,
    LATEST,
    MAX_TIMESTAMP,
    TP,
    ClusterMetadata,
    Committed,
    GroupInfo,
    ListedOffset,
    Member,
    RecordStamp,
    _error_name,
)
from kafkatool.cluster.groups.zk_groups import ZkGroups

__all__ = [
    "TP",
    "LATEST",
    "EARLIEST",
    "MAX_TIMESTAMP",
    "Member",
    "GroupInfo",
    "Committed",
    "ListedOffset",
    "RecordStamp",
    "ClusterMetadata",
    "_error_name",
    "BrokerOffsets",
    "_partial_batch",
    "KafkaGroups",
    "_CoordinatorMoved",
    "ZkGroups",
]
