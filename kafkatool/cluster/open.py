"""Opening a cluster: ZooKeeper or the Admin API, whichever the user named.

Apart from `backend` (the `Cluster` interface) so that the backends, which implement that interface,
and the code that picks one do not import each other.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from kafkatool.cluster.backend import Cluster
from kafkatool.cluster.connect import DEFAULT_TIMEOUT, ClusterInputError


def open_cluster(
    zookeeper: str | None = None,
    bootstrap_server: str | None = None,
    command_config: str | Path | None = None,
    timeout: float = DEFAULT_TIMEOUT,
) -> Cluster:
    """Connect with exactly one of `zookeeper` or `bootstrap_server`."""
    if bool(zookeeper) == bool(bootstrap_server):
        raise ClusterInputError("give exactly one of --zookeeper or --bootstrap-server")
    if timeout <= 0:
        raise ClusterInputError("--timeout must be positive")
    if zookeeper:
        if command_config:
            raise ClusterInputError("--command-config applies to --bootstrap-server only")
        from kafkatool.cluster.zk import ZkCluster

        return ZkCluster.connect(zookeeper, timeout)
    from kafkatool.cluster.admin import AdminCluster

    cluster = AdminCluster.connect(bootstrap_server or "", command_config, timeout)
    cluster.broker_release = cluster.negotiated_release()  # the release whose text to print, unless asked
    return cluster


@contextmanager
def cluster_session(
    zookeeper: str | None = None,
    bootstrap_server: str | None = None,
    command_config: str | Path | None = None,
    timeout: float = DEFAULT_TIMEOUT,
) -> Iterator[Cluster]:
    cluster = open_cluster(zookeeper, bootstrap_server, command_config, timeout)
    try:
        yield cluster
    finally:
        cluster.close()
