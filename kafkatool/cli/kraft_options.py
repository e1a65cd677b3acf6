"""Options and connection handling shared by the KRaft-era tools (quorum, transactions, records, features,
cluster): `--bootstrap-server` or `--bootstrap-controller`, `--command-config`, `--timeout`, `--format`."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from kafkatool.cli.cluster_options import cluster_errors

if TYPE_CHECKING:
    from kafkatool.cluster.kraft_channel import Channel

BootstrapController = Annotated[
    str | None,
    typer.Option(
        "--bootstrap-controller",
        metavar="HOST:PORT[,HOST:PORT…]",
        help="Controllers to talk to instead of brokers (PLAINTEXT controller listeners, Kafka 3.7+).",
    ),
]

#: --format for the tools whose text is Kafka's and whose rows go out in any of the row formats
KafkaFormat = Annotated[str, typer.Option("--format", help="text (Kafka's), json, ndjson, csv or table.")]


@contextmanager
def kraft_channel(
    bootstrap_server: str | None,
    bootstrap_controller: str | None,
    command_config: Path | None,
    timeout: float,
    thing: str,
    controllers: bool = True,
) -> Iterator[Channel]:
    """An open channel (closed afterwards) whose peer's release becomes the text release unless asked;
    cluster errors become one line and an exit code (cli/cluster_options.cluster_errors)."""
    from kafkatool import release
    from kafkatool.cli.errors import CliError
    from kafkatool.cli.profiles import with_profile
    from kafkatool.cluster.kraft_channel import open_channel, peer_release

    if bootstrap_controller and not controllers:
        raise CliError(
            f"{thing}: --bootstrap-controller: Kafka's tool talks to brokers only; use --bootstrap-server"
        )
    if not bootstrap_controller:
        _, bootstrap_server, command_config = with_profile(None, bootstrap_server, command_config)
    with cluster_errors(thing):
        channel = open_channel(bootstrap_server, bootstrap_controller, command_config, timeout)
    try:
        release.observe_broker(peer_release(channel))
        with cluster_errors(thing):
            yield channel
    finally:
        channel.close()
