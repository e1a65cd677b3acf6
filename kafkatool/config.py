"""Named cluster profiles from `~/.config/kafkatool/config.toml` (or `--config-file`).

An operator names clusters once and then says `--cluster prod` (or sets KAFKATOOL_CLUSTER) instead of
repeating bootstrap servers, ZooKeeper connect strings and client properties on every command:

    default = "prod"

    [clusters.prod]
    bootstrap_server = "b1:9092,b2:9092"
    zookeeper = "zk1:2181,zk2:2181/kafka"
    command_config = "/etc/kafka/client.properties"

    [clusters.prod.properties]          # client properties, merged over command_config's
    "security.protocol" = "SASL_SSL"
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

ENV_CLUSTER = "KAFKATOOL_CLUSTER"
ENV_CONFIG = "KAFKATOOL_CONFIG"
ENV_STATE_DIR = "KAFKATOOL_STATE_DIR"


class ConfigError(Exception):
    """The config file is unreadable or names a cluster that is not there (CLI exit code 2)."""


@dataclass(frozen=True)
class ClusterProfile:
    name: str
    bootstrap_server: str | None = None
    zookeeper: str | None = None
    command_config: str | None = None
    properties: dict[str, str] = field(default_factory=dict)


def default_config_path(env: Mapping[str, str] = os.environ) -> Path:
    if env.get(ENV_CONFIG):
        return Path(env[ENV_CONFIG])
    base = env.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "kafkatool" / "config.toml"


def default_state_dir(env: Mapping[str, str] = os.environ) -> Path:
    """Where files kafkatool keeps for the operator (reassignment plans and rollbacks) go unless a path is
    given: $KAFKATOOL_STATE_DIR, else $XDG_STATE_HOME/kafkatool, else ~/.local/state/kafkatool."""
    if env.get(ENV_STATE_DIR):
        return Path(env[ENV_STATE_DIR])
    base = env.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "kafkatool"


def load_profiles(path: Path) -> tuple[dict[str, ClusterProfile], str | None]:
    """All profiles in the file and its `default` name; ({}, None) when the file does not exist."""
    if not path.exists():
        return {}, None
    try:
        data = tomllib.loads(path.read_text("utf-8"))
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: {exc}") from None
    clusters = data.get("clusters", {})
    if not isinstance(clusters, dict):
        raise ConfigError(f"{path}: [clusters] must be a table of named clusters")
    out = {}
    for name, spec in clusters.items():
        if not isinstance(spec, dict):
            raise ConfigError(f"{path}: [clusters.{name}] must be a table")
        unknown = set(spec) - {"bootstrap_server", "zookeeper", "command_config", "properties"}
        if unknown:
            raise ConfigError(f"{path}: [clusters.{name}]: unknown keys {', '.join(sorted(unknown))}")
        given = [k for k in ("bootstrap_server", "zookeeper") if spec.get(k)]
        if len(given) != 1:
            # Both would leave the backend to a silent rule; neither leaves the profile useless.
            raise ConfigError(f"{path}: [clusters.{name}]: give exactly one of bootstrap_server and zookeeper"
                              + (" (it has both: make one profile per backend)" if given else ""))
        props = spec.get("properties", {})
        if not isinstance(props, dict):
            raise ConfigError(f"{path}: [clusters.{name}.properties] must be a table")
        out[name] = ClusterProfile(
            name=name,
            bootstrap_server=spec.get("bootstrap_server"),
            zookeeper=spec.get("zookeeper"),
            command_config=spec.get("command_config"),
            properties={str(k): str(v) for k, v in props.items()},
        )
    default = data.get("default")
    if default is not None and default not in out:
        raise ConfigError(f"{path}: default = {default!r} names no [clusters.{default}] table")
    return out, default


def resolve_cluster(
    name: str | None = None, config_file: str | Path | None = None, env: Mapping[str, str] = os.environ
) -> ClusterProfile | None:
    """The profile chosen by `--cluster`, else KAFKATOOL_CLUSTER, else the file's default (or None)."""
    path = Path(config_file) if config_file else default_config_path(env)
    if config_file and not path.exists():
        raise ConfigError(f"--config-file: {path}: no such file")
    profiles, default = load_profiles(path)
    chosen = name or env.get(ENV_CLUSTER) or None
    if chosen:
        if chosen not in profiles:
            known = ", ".join(sorted(profiles)) or "none"
            raise ConfigError(f"cluster {chosen!r} is not in {path} (known: {known})")
        return profiles[chosen]
    return profiles.get(default) if default else None
