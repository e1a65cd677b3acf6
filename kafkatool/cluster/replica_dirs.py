"""The current log directory of each replica, as Kafka 4.2's reassign tool prints it.

From Kafka 4.2 (KAFKA-19582, `ReassignPartitionsCommand.getReplicaToLogDir`) the "Current partition
replica assignment" JSON of `--generate` and `--execute` names the directory every replica lives in
(DescribeLogDirs to the replicas' brokers), so the rollback file puts each replica back where it was;
replicas on brokers that are down and replicas the brokers do not report keep `"any"`.  Earlier
releases print `"any"` for every replica.
"""

from __future__ import annotations

from kafkatool.cluster.backend import Cluster, ClusterUnsupported
from kafkatool.cluster.model import Assignment, TopicPartitionReplica
from kafkatool.release import Release

__all__ = ["CURRENT_LOG_DIRS_SINCE", "current_log_dirs"]

CURRENT_LOG_DIRS_SINCE = Release(4, 2)


def current_log_dirs(cluster: Cluster, current: Assignment) -> dict[TopicPartitionReplica, str]:
    """replica -> current log dir for the text release's "Current partition replica assignment" ({} before 4.2)."""
    if cluster.text_release() < CURRENT_LOG_DIRS_SINCE:
        return {}
    alive = {b.id for b in cluster.brokers()}
    wanted = [
        TopicPartitionReplica(tp.topic, tp.partition, b)
        for tp, replicas in current.items()
        for b in replicas
        if b in alive
    ]
    try:
        found = cluster.replica_log_dirs(wanted)
    except ClusterUnsupported:  # a ZooKeeper-only connection cannot ask the brokers
        return {}
    return {r: now for r, (now, _future) in found.items() if now is not None}
