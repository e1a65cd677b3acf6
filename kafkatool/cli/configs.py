"""`kafkatool configs`: kafka-configs.sh for topics and brokers, over the Admin API or ZooKeeper."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import typer

from kafkatool.cli.app import app, handle_errors
from kafkatool.cli.cluster_options import (
    DEFAULT_TIMEOUT,
    BootstrapServer,
    CommandConfig,
    Timeout,
    ZooKeeper,
    cluster_from_options,
)
from kafkatool.cli.errors import EXIT_USAGE, CliError
from kafkatool.cli.render import check_format, render_rows

HELP = """Show and change the dynamic configs of topics and brokers: Kafka's kafka-configs.sh.

One action: --describe (--all: every config, not only the dynamic ones) or --alter (--add-config k=v,k2=[a,b] and/or --delete-config k,k2). The entity: --entity-type topics|brokers with --entity-name NAME or --entity-default (brokers' cluster-wide defaults), or Kafka 3.3's shortcuts --topic NAME, --broker ID, --broker-defaults. --describe without a name describes every entity of the type.

With --bootstrap-server the text is Kafka 3.3's (4.0's lists the configs sorted by name, as from 3.5) (Dynamic configs for topic X are: / "  k=v sensitive=false synonyms={…}"), through DescribeConfigs and IncrementalAlterConfigs (Kafka 2.0-2.2 brokers: AlterConfigs, read-modify-write of the entity's dynamic configs, as Kafka 3.3's tool does for brokers, with a note on stderr). With --zookeeper it is Kafka 2.1's (Configs for topic 'X' are k=v,…), and --alter writes /config/<type>/<name> and its /config/changes notification in one transaction; as in Kafka 2.x, broker configs other than the replication quotas cannot be changed through ZooKeeper while the broker runs.

The replication throttles that reassign sets are dynamic configs like any other: leader.replication.throttled.rate and follower.replication.throttled.rate on brokers, leader.replication.throttled.replicas and follower.replication.throttled.replicas on topics. --describe --format json marks them ("throttle": true); --alter --delete-config removes one left behind. --dry-run shows an --alter's change without making it.

Exit codes: 0 done; 2 bad input or refused (unknown topic, deleting a config that is not set); 3 cluster failure.

\b
Examples:
  kafkatool configs --bootstrap-server k1:9092 --describe --entity-type topics --entity-name orders
  kafkatool configs --bootstrap-server k1:9092 --describe --broker 1
  kafkatool configs --bootstrap-server k1:9092 --alter --topic orders --add-config retention.ms=86400000,cleanup.policy=[compact,delete]
  kafkatool configs --bootstrap-server k1:9092 --alter --entity-type brokers --entity-default --add-config log.cleaner.threads=2
  kafkatool configs --zookeeper zk1:2181 --describe --entity-type brokers
  kafkatool configs --zookeeper zk1:2181 --alter --entity-type brokers --entity-name 1 --delete-config leader.replication.throttled.rate,follower.replication.throttled.rate
  kafkatool configs --zookeeper zk1:2181 --alter --topic orders --delete-config leader.replication.throttled.replicas --dry-run
"""


@app.command("configs", help=HELP, no_args_is_help=True)
@handle_errors
def configs(
    describe: bool = typer.Option(False, "--describe", help="List configs for the given entity."),
    alter: bool = typer.Option(False, "--alter", help="Alter the configuration for the entity."),
    entity_type: str | None = typer.Option(None, "--entity-type", help="topics or brokers."),
    entity_name: str | None = typer.Option(None, "--entity-name", help="Topic name or broker id."),
    entity_default: bool = typer.Option(False, "--entity-default", help="The brokers' cluster-wide default configs."),
    topic: str | None = typer.Option(None, "--topic", help="Shortcut for --entity-type topics --entity-name TOPIC."),
    broker: str | None = typer.Option(None, "--broker", help="Shortcut for --entity-type brokers --entity-name ID."),
    broker_defaults: bool = typer.Option(False, "--broker-defaults", help="Shortcut for --entity-type brokers --entity-default."),
    add_config: str | None = typer.Option(
        None, "--add-config", metavar="K=V,K2=[A,B]", help="Configs to set (lists in square brackets)."),
    add_config_file: Path | None = typer.Option(
        None, "--add-config-file", metavar="FILE", help="A properties file of configs to set (instead of --add-config)."),
    delete_config: list[str] = typer.Option([], "--delete-config", metavar="K,K2", help="Configs to remove (repeatable)."),
    all_: bool = typer.Option(False, "--all", help="--describe every config, defaults and static ones too (Admin API)."),
    dry_run: bool = typer.Option(False, "--dry-run", help="--alter: show the change, make none."),
    output_format: str = typer.Option("text", "--format", help="text, json, ndjson, csv or table."),
    bootstrap_server: BootstrapServer = None,
    zookeeper: ZooKeeper = None,
    command_config: CommandConfig = None,
    timeout: Timeout = DEFAULT_TIMEOUT,
) -> None:
    from kafkatool.cluster.configs import (
        DEFAULT_ENTITY,
        ENTITY_TYPES,
        ConfigInputError,
        Entity,
        parse_add_config,
        parse_delete_config,
    )

    if describe == alter:
        raise CliError("configs: Command must include exactly one action: --describe, --alter")
    check_format(output_format)
    shortcuts = [(t, n) for t, n, on in (("topics", topic, topic is not None), ("brokers", broker, broker is not None),
                                         ("brokers", DEFAULT_ENTITY, broker_defaults)) if on]
    if shortcuts and (entity_type or entity_name or entity_default):
        raise CliError("configs: --entity-{type,name,default} should not be used in conjunction with specific entity flags")
    if len(shortcuts) > 1:
        raise CliError("configs: give one of --topic, --broker, --broker-defaults")
    if shortcuts:
        etype, name = shortcuts[0]
    else:
        if entity_type is None:
            raise CliError("configs: At least one entity type must be specified")
        if entity_type not in ENTITY_TYPES:
            raise CliError(f"configs: Invalid entity type {entity_type}, the entity type must be one of "
                           f"{', '.join(ENTITY_TYPES)} (kafkatool handles topics and brokers)")
        if entity_name is not None and entity_default:
            raise CliError("configs: give --entity-name or --entity-default, not both")
        etype, name = entity_type, (DEFAULT_ENTITY if entity_default else entity_name)
    if alter and name is None:
        raise CliError(f"configs: an entity name must be specified with --alter of {etype}")
    if describe and (add_config or add_config_file or delete_config or dry_run):
        raise CliError("configs: --add-config, --add-config-file, --delete-config and --dry-run go with --alter")
    if add_config and add_config_file:
        raise CliError("configs: Only one of --add-config or --add-config-file must be specified")
    if all_ and not describe:
        raise CliError("configs: --all goes with --describe")
    try:
        add = parse_add_config(add_config or "") if add_config_file is None else _config_file(add_config_file)
        delete = parse_delete_config(delete_config)
        entity = Entity(etype, name) if name is not None else None
        if entity is not None:
            entity.check()
    except ConfigInputError as exc:
        raise CliError(f"configs: {exc}") from None

    with cluster_from_options(zookeeper, bootstrap_server, command_config, timeout, thing="configs") as cluster:
        try:
            if describe:
                if all_ and cluster.kind == "zookeeper":
                    raise CliError("configs: --bootstrap-server must be specified for --all", EXIT_USAGE)
                _describe(cluster, etype, entity, output_format, all_)
            else:
                assert entity is not None
                _alter(cluster, entity, add, delete, dry_run, output_format)
        except ConfigInputError as exc:
            sys.stdout.flush()
            raise CliError(f"configs: {exc}", EXIT_USAGE) from None


def _config_file(path: Path) -> dict[str, str]:
    """`--add-config-file`: Java properties (ConfigCommand's `Utils.loadProps`), keys in file order."""
    from kafkatool.log.checkpoint import read_properties

    if not path.is_file():
        raise CliError(f"configs: --add-config-file: {path}: no such file")
    try:
        return read_properties(path.read_text("utf-8"))
    except UnicodeDecodeError:
        raise CliError(f"configs: --add-config-file: {path}: not a text file") from None


def _describe(cluster: Any, etype: str, entity: Any, fmt: str, describe_all: bool = False) -> None:
    from kafkatool.cluster.configs import (
        ConfigInputError,
        admin_describe_text,
        admin_dynamic,
        admin_entities,
        config_rows,
        describe_order,
        missing_entity_text,
        zk_configs,
        zk_describe_text,
        zk_entities,
    )
    from kafkatool.cluster.topics import ConfigEntry

    zk = cluster.kind == "zookeeper"
    if entity is not None and etype == "topics":
        _check_topic(cluster, entity.name)
    entities = [entity] if entity is not None else (zk_entities(cluster, etype) if zk else admin_entities(cluster, etype))
    rows: list[dict[str, object]] = []
    for e in entities:
        if zk:
            pairs = zk_configs(cluster, e)
            if fmt == "text":
                sys.stdout.write(zk_describe_text(e, pairs))
            rows += config_rows(e, [ConfigEntry(k, v, "ZOOKEEPER") for k, v in pairs])
        else:
            missing = missing_entity_text(cluster, e) if entity is not None and not describe_all else None
            if missing is not None:  # Kafka 4.1+ prints this line and describes nothing
                if fmt == "text":
                    sys.stdout.write(missing)
                raise ConfigInputError(f"{e.type[:-1]} '{e.name}' does not exist")
            entries = describe_order(admin_dynamic(cluster, e, describe_all), cluster.text_release())
            if fmt == "text":
                sys.stdout.write(admin_describe_text(e, entries, describe_all))
            rows += config_rows(e, entries)
    if fmt != "text":
        render_rows(rows, fmt)


def _check_topic(cluster: Any, name: str) -> None:
    from kafkatool.cluster.configs import ConfigInputError

    if cluster.kind == "zookeeper":
        if name not in cluster.topics():
            raise ConfigInputError(f'Topic "{name}" does not exist.')


def _alter(cluster: Any, entity: Any, add: dict[str, str], delete: list[str], dry_run: bool, fmt: str) -> None:
    from kafkatool.cluster.configs import (
        ConfigInputError,
        admin_alter,
        admin_dynamic,
        alter_done_text,
        check_zk_broker_alter,
        legacy_alter,
        legacy_alter_note,
        needs_legacy_alter,
        plan_alter,
        zk_configs,
    )
    from kafkatool.cluster.topics import TopicError, check_zk_topic_config_names

    zk = cluster.kind == "zookeeper"
    legacy = False
    if entity.type == "topics":
        _check_topic(cluster, entity.name)
    if zk:
        check_zk_broker_alter(cluster, entity, add)
        if entity.type == "topics":
            try:
                check_zk_topic_config_names(add)
            except TopicError as exc:
                raise ConfigInputError(str(exc)) from None
        current = dict(zk_configs(cluster, entity))
    else:
        from kafkatool.cluster.versions import ApiKey

        legacy = needs_legacy_alter(cluster)  # Kafka 2.0-2.2: AlterConfigs, read-modify-write
        if not legacy:
            cluster._need("alter configs", ApiKey.INCREMENTAL_ALTER_CONFIGS)
        dynamic = admin_dynamic(cluster, entity)
        current = {e.name: e.value or "" for e in dynamic}
    change = plan_alter(entity, current, add, delete)
    after = change.apply(current)
    row = {"entity_type": entity.type, "entity_name": entity.name, "set": change.set, "delete": change.delete,
           "before": current, "after": after, "status": "dry-run" if dry_run else "altered"}
    if dry_run:
        if fmt == "text":
            sets = ",".join(f"{k}={v}" for k, v in change.set.items())
            sys.stdout.write(f"dry run: nothing is changed. Would set {{{sets}}} and delete {{{','.join(change.delete)}}} "
                             f"for {entity.type[:-1]} {entity.name}\n")
        else:
            render_rows([row], fmt)
        return
    if zk:
        cluster.alter_configs([change])
    elif legacy:
        legacy_alter(cluster, entity, dynamic, change)
        sys.stderr.write(f"kafkatool: note: {legacy_alter_note(cluster, entity)}\n")
    else:
        admin_alter(cluster, change)
    if fmt == "text":
        sys.stdout.write(alter_done_text(entity, zk))
    else:
        render_rows([row], fmt)
