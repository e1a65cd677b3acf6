"""Dynamic configs of topics and brokers, as `kafka-configs.sh` shows and changes them.

Admin API: Kafka 3.3's ConfigCommand — `Dynamic configs for topic X are:` then
`  k=v sensitive=false synonyms={SOURCE:k=v, …}` for the entries whose source is the entity's
dynamic source, in the `HashMap` order of the `Config` the Java client builds (from 3.5 sorted by
name); brokers' cluster-wide
defaults are the entity `<default>` (`Default configs for brokers in the cluster are:`).
ZooKeeper: Kafka 2.1's ConfigCommand — `Configs for topic 'X' are k=v,…` (a Java 9+ `Properties`'
order), and writes of `/config/<type>/<name>` plus a `/config/changes/config_change_` notification
(`{"version":2,"entity_path":"topics/X"}`), in one transaction.  The replication throttles
`reassign` sets (`leader.replication.throttled.rate`, `follower.replication.throttled.rate`,
`*.replication.throttled.replicas`) are ordinary dynamic configs here, so one left behind can be
seen and removed.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from kafkatool.cluster.model import ConfigChange
from kafkatool.cluster.topics import ConfigEntry, TopicError, validate_name

DEFAULT_ENTITY = "<default>"
ENTITY_TYPES = ("topics", "brokers")
THROTTLE_CONFIGS = (
    "leader.replication.throttled.rate",
    "follower.replication.throttled.rate",
    "leader.replication.throttled.replicas",
    "follower.replication.throttled.replicas",
)
#: Broker configs Kafka 2.x lets ZooKeeper change while the broker runs (the replication quotas).
ZK_RUNNING_BROKER_CONFIGS = frozenset({"leader.replication.throttled.rate", "follower.replication.throttled.rate",
                                       "replica.alter.log.dirs.io.max.bytes.per.second"})
DYNAMIC_SOURCE = {"topics": "DYNAMIC_TOPIC_CONFIG", "brokers": "DYNAMIC_BROKER_CONFIG"}


class ConfigInputError(ValueError):
    """Refused by ConfigCommand's rules (its message); a usage error."""


@dataclass(frozen=True)
class Entity:
    type: str  # "topics" | "brokers"
    name: str  # a topic, a broker id, or DEFAULT_ENTITY

    @property
    def is_default(self) -> bool:
        return self.name == DEFAULT_ENTITY

    def check(self) -> None:
        if self.type == "topics":
            if self.is_default:
                raise ConfigInputError("--entity-default applies to brokers only")
            try:
                validate_name(self.name)
            except TopicError as exc:
                raise ConfigInputError(str(exc)) from None
        elif not self.is_default and not re.fullmatch(r"-?\d+", self.name):
            raise ConfigInputError(f"The entity name for brokers must be a valid integer broker id, found: {self.name}")


# -- parsing --add-config / --delete-config ------------------------------------------------------------

_OUTSIDE_BRACKETS = r"(?=[^\]]*(?:\[|$))"


def parse_add_config(text: str) -> dict[str, str]:
    """ConfigCommand's `--add-config`: ',' separates pairs except inside [...], which hold lists."""
    out: dict[str, str] = {}
    if not text:
        return out
    for pair in re.split("," + _OUTSIDE_BRACKETS, text):
        kv = re.split(r"\s*=\s*" + _OUTSIDE_BRACKETS, pair)
        if len(kv) != 2:
            raise ConfigInputError('Invalid entity config: all configs to be added must be in the format "key=val".')
        out[kv[0].strip()] = re.sub(r"\[?\]?", "", kv[1]).strip()
    return out


def parse_delete_config(values: Sequence[str]) -> list[str]:
    return [k.strip() for v in values for k in v.split(",") if k.strip()]


# -- text ----------------------------------------------------------------------------------------------


def _java_value(v: str | None) -> str:
    return "null" if v is None else v


def admin_describe_text(entity: Entity, entries: Sequence[ConfigEntry], describe_all: bool = False) -> str:
    """Kafka 3.3's (and 4.0's) `describeResourceConfig` for one entity (entries already filtered and ordered)."""
    if entity.is_default:
        head = f"Default configs for {entity.type} in the cluster are:\n"
    else:
        head = f"{'All' if describe_all else 'Dynamic'} configs for {entity.type[:-1]} {entity.name} are:\n"
    lines = []
    for e in entries:
        synonyms = ", ".join(f"{s}:{n}={_java_value(v)}" for s, n, v in e.synonyms)
        lines.append(f"  {e.name}={_java_value(e.value)} sensitive={'true' if e.sensitive else 'false'} synonyms={{{synonyms}}}\n")
    return head + "".join(lines)


def zk_entity_text(entity: Entity) -> str:
    """Kafka 2.1's `Entity.toString`: `topic 'X'`, `brokers '1'`, `default brokers`."""
    type_name = "topic" if entity.type == "topics" else entity.type
    return f"default {type_name}" if entity.is_default else f"{type_name} '{entity.name}'"


def zk_describe_text(entity: Entity, configs: Sequence[tuple[str, str]]) -> str:
    return f"Configs for {zk_entity_text(entity)} are {','.join(f'{k}={v}' for k, v in configs)}\n"


def alter_done_text(entity: Entity, zookeeper: bool) -> str:
    if zookeeper:
        return f"Completed Updating config for entity: {zk_entity_text(entity)}.\n"
    if entity.is_default:
        return f"Completed updating default config for {entity.type} in the cluster.\n"
    return f"Completed updating config for {entity.type[:-1]} {entity.name}.\n"


# -- reads ---------------------------------------------------------------------------------------------


def dynamic_source(entity: Entity) -> str:
    return "DYNAMIC_DEFAULT_BROKER_CONFIG" if entity.is_default else DYNAMIC_SOURCE[entity.type]


#: From Kafka 4.1 ConfigCommand (`describeResourceConfig`) first checks that a named topic or broker
#: exists and, when it does not, prints one line instead of describing it.
MISSING_ENTITY_LINE_SINCE = "4.1"


def missing_entity_text(cluster: Any, entity: Entity) -> str | None:
    """Kafka 4.1+'s `The topic 'x' doesn't exist and doesn't have dynamic config.` for a named topic
    (ListTopics with internal ones) or broker id (DescribeCluster) the cluster lacks; None when it
    exists, is the broker default, or the text release is older."""
    if entity.is_default or not cluster.text_release().at_least(MISSING_ENTITY_LINE_SINCE):
        return None
    if entity.type == "topics":
        found = entity.name in cluster.topics()
    else:
        found = any(str(b.id) == entity.name for b in cluster.brokers())
    return None if found else f"The {entity.type[:-1]} '{entity.name}' doesn't exist and doesn't have dynamic config.\n"


def admin_entries(cluster: Any, entity: Entity) -> list[ConfigEntry]:
    """Every config of the entity with synonyms, in `Config.entries()` order (DescribeConfigs)."""
    from kafka.protocol.admin import DescribeConfigsRequest as R

    from kafkatool.cluster.topics_backend import _send, entries_from_response

    rtype = 2 if entity.type == "topics" else 4
    name = "" if entity.is_default else entity.name
    request = R(resources=[R.DescribeConfigsResource(resource_type=rtype, resource_name=name, configuration_keys=None)],
                include_synonyms=True, include_documentation=False)
    node = None if entity.type == "topics" or entity.is_default else int(entity.name)  # brokers answer for themselves
    response = _send(cluster, "describe configs", request, node_id=node)
    for res in response.results:
        if res.error_code:
            from kafka.errors import for_code

            err = for_code(res.error_code)
            message = res.error_message or getattr(err, "description", "") or err.__name__
            if err.__name__ == "UnknownTopicOrPartitionError":
                raise ConfigInputError(f"Topic {entity.name} does not exist" if entity.type == "topics" else message)
            raise ConfigInputError(message)
        return entries_from_response(res.configs, response.API_VERSION)
    return []


def admin_dynamic(cluster: Any, entity: Entity, describe_all: bool = False) -> list[ConfigEntry]:
    """The entity's own dynamic configs (or with `describe_all` every config), as `getResourceConfig` filters."""
    entries = admin_entries(cluster, entity)
    if describe_all:
        return entries
    source = dynamic_source(entity)
    return [e for e in entries if e.source == source]


#: From Kafka 3.5 ConfigCommand's `getResourceConfig` ends in `.toSeq.sortBy(entry => entry.name())`:
#: --describe lists configs by name (3.3 and 3.4 keep `Config.entries()`' HashMap order).
SORTED_DESCRIBE_SINCE = "3.5"


def describe_order(entries: Sequence[ConfigEntry], text: Any) -> list[ConfigEntry]:
    """The entries in the order the release's `kafka-configs.sh --describe` prints them."""
    if text.at_least(SORTED_DESCRIBE_SINCE):
        return sorted(entries, key=lambda e: e.name.encode("utf-16-be"))  # Java's String.compareTo
    return list(entries)


def zk_configs(cluster: Any, entity: Entity) -> list[tuple[str, str]]:
    from kafkatool.cluster.topics_backend import zk_topic_configs

    return zk_topic_configs(cluster, [entity.name], entity.type)[entity.name]


def zk_entities(cluster: Any, entity_type: str) -> list[Entity]:
    """`getAllEntitiesWithConfig`: the children of `/config/<type>` in the order ZooKeeper returns them
    (Kafka 2.1's ConfigCommand prints them so: the server's children set, not sorted)."""
    return [Entity(entity_type, n) for n in cluster.children(f"/config/{entity_type}")]


def admin_entities(cluster: Any, entity_type: str) -> list[Entity]:
    """Kafka 3.3 with no --entity-name: every topic (internal ones too), or every broker then the default."""
    if entity_type == "topics":
        from kafkatool.cluster.topics_backend import admin_list
        from kafkatool.jvm import java_collections

        return [Entity("topics", n) for n in java_collections.string_set_order(admin_list(cluster))]
    return [Entity("brokers", str(b.id)) for b in cluster.brokers()] + [Entity("brokers", DEFAULT_ENTITY)]


# -- writes --------------------------------------------------------------------------------------------


def plan_alter(entity: Entity, current: dict[str, str], add: dict[str, str], delete: Sequence[str]) -> ConfigChange:
    """ConfigCommand's checks: deleting a config that is not set is refused (`Invalid config(s): …`)."""
    if not add and not delete:
        raise ConfigInputError("At least one of --add-config or --delete-config must be specified with --alter")
    invalid = [k for k in delete if k not in current]
    if invalid:
        raise ConfigInputError(f"Invalid config(s): {','.join(invalid)}")
    return ConfigChange(entity.type, entity.name, set=dict(add), delete=list(delete))


def admin_alter(cluster: Any, change: ConfigChange) -> None:
    """IncrementalAlterConfigs for one entity, sent where the Java client sends it (a broker's own configs
    to that broker; topics and the cluster default to any broker)."""
    from kafka.errors import for_code
    from kafka.protocol.admin import IncrementalAlterConfigsRequest as R

    from kafkatool.cluster.topics_backend import _send

    default = change.entity == "brokers" and change.name == DEFAULT_ENTITY
    name = "" if default else change.name
    res = R.AlterConfigsResource
    ops = [res.AlterableConfig(name=k, config_operation=0, value=v) for k, v in change.set.items()]
    ops += [res.AlterableConfig(name=k, config_operation=1, value=None) for k in change.delete]
    request = R(resources=[res(resource_type=2 if change.entity == "topics" else 4, resource_name=name, configs=ops)],
                validate_only=False)
    node = int(name) if change.entity == "brokers" and not default else None
    response = _send(cluster, "alter configs", request, node_id=node)
    for r in response.responses:
        if r.error_code:
            err = for_code(r.error_code)
            raise ConfigInputError(r.error_message or getattr(err, "description", "") or err.__name__)


def needs_legacy_alter(cluster: Any) -> bool:
    """Whether the brokers lack IncrementalAlterConfigs (Kafka 2.0-2.2) and have AlterConfigs: then
    `legacy_alter` rewrites the entity's configs whole, as Kafka 3.3's ConfigCommand does for brokers."""
    from kafkatool.cluster.versions import ApiKey, lacks

    table = cluster.api_versions()
    return table is not None and lacks(table, ApiKey.INCREMENTAL_ALTER_CONFIGS) and not lacks(table, ALTER_CONFIGS)


ALTER_CONFIGS = 33  # the request before IncrementalAlterConfigs: replaces all of an entity's dynamic configs


def legacy_alter(cluster: Any, entity: Entity, dynamic: Sequence[ConfigEntry], change: ConfigChange) -> None:
    """AlterConfigs (read-modify-write): the entity's dynamic configs `dynamic` (read just before), with
    `change` applied, sent as its whole new config set — Kafka 3.3 ConfigCommand.alterConfig's broker path
    (`oldConfig ++ configsToBeAdded -- configsToBeDeleted`), which also refuses when a sensitive value it
    cannot read back would be lost."""
    from kafka.errors import for_code
    from kafka.protocol.admin import AlterConfigsRequest as R

    from kafkatool.cluster.topics_backend import _send

    new: dict[str, str | None] = {e.name: e.value for e in dynamic}
    new.update(change.set)
    for k in change.delete:
        new.pop(k, None)
    missing = [k for k, v in new.items() if v is None]
    if missing:
        raise ConfigInputError("All sensitive broker config entries must be specified for --alter, missing entries: "
                               f"Set({', '.join(missing)})")
    name = "" if entity.is_default else entity.name
    res = R.AlterConfigsResource
    request = R(resources=[res(resource_type=2 if entity.type == "topics" else 4, resource_name=name,
                               configs=[res.AlterableConfig(name=k, value=v) for k, v in new.items()])],
                validate_only=False)
    node = int(name) if entity.type == "brokers" and not entity.is_default else None
    response = _send(cluster, "alter configs", request, node_id=node)
    for r in response.responses:
        if r.error_code:
            err = for_code(r.error_code)
            raise ConfigInputError(r.error_message or getattr(err, "description", "") or err.__name__)


def legacy_alter_note(cluster: Any, entity: Entity) -> str:
    """What the fallback did, for stderr: the whole config set was rewritten, so a concurrent change is lost."""
    from kafkatool.cluster.versions import describe_broker
    from kafkatool.release import Release

    what = "the cluster-wide broker defaults" if entity.is_default else f"{entity.type[:-1]} {entity.name}"
    return (f"the brokers are {describe_broker(cluster.api_versions(), Release(2, 3))}, without IncrementalAlterConfigs: "
            f"rewrote every dynamic config of {what} with AlterConfigs (read-modify-write, as Kafka 3.3's "
            "kafka-configs.sh does for brokers; a change made meanwhile by another client is overwritten)")


def check_zk_broker_alter(cluster: Any, entity: Entity, add: dict[str, str]) -> None:
    """Kafka 2.x: other broker configs than the replication quotas need the broker(s) stopped."""
    dynamic = [k for k in add if k not in ZK_RUNNING_BROKER_CONFIGS]
    if entity.type != "brokers" or not dynamic:
        return
    running = {str(b.id) for b in cluster.brokers()}  # ZooKeeper registrations
    names = f"Set({', '.join(dynamic)})"
    info = ("Broker configuraton updates using ZooKeeper are supported for bootstrapping before brokers are started "
            "to enable encrypted password configs to be stored in ZooKeeper.")
    base = f"requirement failed: --bootstrap-server option must be specified to update broker configs {names}."
    if entity.is_default and running:
        raise ConfigInputError(f"{base} for default cluster if any broker is running. {info}")
    if not entity.is_default and entity.name in running:
        raise ConfigInputError(f"{base} when broker {entity.name} is running. {info}")


def config_rows(entity: Entity, entries: Sequence[ConfigEntry]) -> list[dict[str, object]]:
    return [{"entity_type": entity.type, "entity_name": entity.name, "name": e.name, "value": e.value,
             "source": e.source, "sensitive": e.sensitive, "read_only": e.read_only,
             "throttle": e.name in THROTTLE_CONFIGS,
             "synonyms": [{"source": s, "name": n, "value": v} for s, n, v in e.synonyms]} for e in entries]
