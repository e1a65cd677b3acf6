"""Apply a named cluster profile (`--cluster NAME`, KAFKATOOL_CLUSTER, or the config's default)
to commands that were given neither --bootstrap-server nor --zookeeper."""

from __future__ import annotations

import os
from pathlib import Path

from kafkatool.cli.app import _state
from kafkatool.cli.errors import EXIT_USAGE, CliError

GLOBAL_OPTIONS = ("--cluster", "--config-file", "--kafka-release")


def hoist_global_options(argv: list[str]) -> list[str]:
    """Move --cluster/--config-file to the front wherever they were typed, so
    `kafkatool reassign --list --cluster prod` works like `kafkatool --cluster prod reassign --list`."""
    front: list[str] = []
    rest: list[str] = []
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "--":
            rest += argv[i:]
            break
        name = a.split("=", 1)[0]
        if name in GLOBAL_OPTIONS:
            if "=" in a:
                front.append(a)
            elif i + 1 >= len(argv) or argv[i + 1].startswith("-"):
                # else the next word (the command, or another option) would be taken as its value
                raise CliError(f"{name} needs a value")
            else:
                front += argv[i : i + 2]
                i += 1
        else:
            rest.append(a)
        i += 1
    return front + rest


def _properties_file(base: str | Path | None, props: dict[str, str]) -> str:
    """A temporary properties file: the profile's properties over those of `base` (removed at exit)."""
    import atexit
    import tempfile

    from kafkatool.cluster.connect import read_client_properties

    merged = dict(read_client_properties(base)) if base else {}
    merged.update(props)
    fd, name = tempfile.mkstemp(prefix="kafkatool-", suffix=".properties")
    with os.fdopen(fd, "w") as f:
        for k, v in merged.items():
            f.write(f"{k}={v}\n")
    def remove() -> None:
        if os.path.exists(name):
            os.unlink(name)

    atexit.register(remove)
    return name


def with_profile(
    zookeeper: str | None, bootstrap_server: str | None, command_config: Path | None
) -> tuple[str | None, str | None, Path | None]:
    """Fill in the connection from the chosen profile when the command line named none.

    A profile names exactly one of the two (the config loader refuses both); an explicit
    --command-config is merged under the profile's properties.
    """
    if zookeeper or bootstrap_server:
        return zookeeper, bootstrap_server, command_config
    from kafkatool.config import ConfigError, resolve_cluster  # tomllib: only when a profile may be needed

    try:
        profile = resolve_cluster(_state.get("cluster"), _state.get("config_file"))
    except ConfigError as exc:
        raise CliError(str(exc), EXIT_USAGE) from None
    if profile is None:
        return zookeeper, bootstrap_server, command_config
    cc: str | Path | None = command_config or profile.command_config
    if profile.properties:
        cc = _properties_file(cc, profile.properties)
    if profile.bootstrap_server:
        return None, profile.bootstrap_server, Path(cc) if cc else None
    return profile.zookeeper, None, Path(cc) if cc else None
