"""Options every cluster command shares, and the mapping of cluster errors to exit codes.

Use the annotated types as parameter annotations:

    def cmd(bootstrap_server: BootstrapServer = None, zookeeper: ZooKeeper = None,
            command_config: CommandConfig = None, timeout: Timeout = DEFAULT_TIMEOUT): ...
        with cluster_from_options(zookeeper, bootstrap_server, command_config, timeout) as cluster: ...
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from kafkatool.cli.errors import EXIT_FAILURE, EXIT_FINDINGS, EXIT_USAGE, CliError
from kafkatool.cluster.connect import DEFAULT_TIMEOUT

if TYPE_CHECKING:
    from kafkatool.cluster.backend import Cluster

__all__ = [
    "BootstrapServer",
    "ZooKeeper",
    "CommandConfig",
    "Timeout",
    "DEFAULT_TIMEOUT",
    "cluster_from_options",
    "cluster_errors",
]

BootstrapServer = Annotated[
    str | None,
    typer.Option(
        "--bootstrap-server",
        metavar="HOST:PORT[,HOST:PORT…]",
        help="Brokers to bootstrap from (Admin API). Exactly one of --bootstrap-server or --zookeeper.",
    ),
]
ZooKeeper = Annotated[
    str | None,
    typer.Option(
        "--zookeeper",
        metavar="HOST:PORT[,…][/CHROOT]",
        help="ZooKeeper connect string of a Kafka 0.8–2.x cluster, chroot included.",
    ),
]
CommandConfig = Annotated[
    Path | None,
    typer.Option(
        "--command-config",
        metavar="FILE",
        help="Java client properties (security.protocol, sasl.*, ssl.* as PEM files, client.id).",
    ),
]
Timeout = Annotated[
    float,
    typer.Option("--timeout", metavar="SECONDS", help="Limit for connecting and for each cluster call."),
]


@contextmanager
def cluster_errors(thing: str) -> Iterator[None]:
    """Report cluster errors as `kafkatool: <thing>: <reason>`: exit 3 (failure), 2 (input), 1 (busy)."""
    from kafkatool.cluster.backend import ElectionInProgressError, ReassignmentInProgressError
    from kafkatool.cluster.connect import ClusterError, ClusterInputError

    try:
        yield
    except (ReassignmentInProgressError, ElectionInProgressError) as exc:
        raise CliError(f"{thing}: {exc}", EXIT_FINDINGS) from None
    except ClusterInputError as exc:
        raise CliError(f"{thing}: {exc}", EXIT_USAGE) from None
    except ClusterError as exc:
        raise CliError(f"{thing}: {exc}", EXIT_FAILURE) from None


@contextmanager
def cluster_from_options(
    zookeeper: str | None,
    bootstrap_server: str | None,
    command_config: Path | None,
    timeout: float,
    thing: str = "cluster",
) -> Iterator[Cluster]:
    """An open cluster for the shared options, closed afterwards; errors become CliErrors."""
    from kafkatool.cli.profiles import with_profile
    from kafkatool.cluster.open import open_cluster

    zookeeper, bootstrap_server, command_config = with_profile(zookeeper, bootstrap_server, command_config)
    with cluster_errors(thing):
        cluster = open_cluster(zookeeper, bootstrap_server, command_config, timeout)
    try:
        with cluster_errors(thing):
            yield cluster
    finally:
        cluster.close()
