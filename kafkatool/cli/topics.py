"""`kafkatool topics`: kafka-topics.sh over the Admin API (Kafka 3.3/4.0 text) or ZooKeeper (Kafka 2.1 text)."""

from __future__ import annotations

import sys
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
from kafkatool.cli.errors import EXIT_FINDINGS, EXIT_USAGE, CliError
from kafkatool.cli.render import check_format, render_rows

HELP = """Create, delete, describe, or change a topic: Kafka's kafka-topics.sh.

Exactly one action: --list, --describe, --create, --alter or --delete. With --bootstrap-server the text is Kafka 3.3's tool over the Admin API (4.0's with --kafka-release 4.0 or a 4.x broker: partition lines end with Elr/LastKnownElr); with --zookeeper (Kafka 0.8–2.x clusters) it is Kafka 2.1's ZooKeeper-mode tool, writing the same znodes (/brokers/topics/T, /config/topics/T, /admin/delete_topics/T).

--describe filters (one at a time): --under-replicated-partitions, --unavailable-partitions, --under-min-isr-partitions, --at-min-isr-partitions, --topics-with-overrides; the command exits 1 when a filter finds anything (for scripts and probes).

--create takes --partitions and --replication-factor or --replica-assignment 0:1,1:2,…. Over the Admin API, as Kafka's tool, it sends the counts (a count left out is the brokers' default, Kafka 2.4+) and the controller places the replicas; --dry-run has the controller validate the request (validateOnly) and says what would be sent. Over ZooKeeper both counts are needed and kafkatool places replicas as Kafka 2.x's AdminUtils did (rack-aware unless --disable-rack-aware; --seed makes it reproducible), so --dry-run shows exactly what will be written. --alter --partitions N grows a topic: over the Admin API, as Kafka's tool, it sends the new count (with --replica-assignment also the new partitions' replicas) in one CreatePartitions for all matching topics and the controller places the new replicas; --dry-run has the controller validate it (validateOnly). Over ZooKeeper the new partitions are placed as Kafka 2.x's addPartitions placed them. --delete refuses internal topics.

Exit codes: 0 done; 1 a --describe filter found partitions (or topics); 2 bad input or refused by Kafka's rules; 3 cluster failure.

\b
Examples:
  kafkatool topics --bootstrap-server k1:9092 --list --exclude-internal
  kafkatool topics --bootstrap-server k1:9092 --describe --topic 'orders.*'
  kafkatool topics --bootstrap-server k1:9092 --describe --under-replicated-partitions
  kafkatool topics --zookeeper zk1:2181/kafka --describe --unavailable-partitions --format json
  kafkatool topics --bootstrap-server k1:9092 --create --topic orders --partitions 12 --replication-factor 3 --config retention.ms=86400000
  kafkatool topics --zookeeper zk1:2181 --create --topic audit --replica-assignment 1:2,2:3,3:1 --dry-run
  kafkatool topics --bootstrap-server k1:9092 --alter --topic orders --partitions 24 --dry-run
  kafkatool topics --zookeeper zk1:2181 --delete --topic old-orders
"""

ACTIONS = ("list", "describe", "create", "alter", "delete")


@app.command("topics", help=HELP, no_args_is_help=True)
@handle_errors
def topics(
    list_: bool = typer.Option(False, "--list", help="List all available topics."),
    describe: bool = typer.Option(False, "--describe", help="List details for the given topics."),
    create: bool = typer.Option(False, "--create", help="Create a new topic."),
    alter: bool = typer.Option(False, "--alter", help="Add partitions to a topic (--partitions)."),
    delete: bool = typer.Option(False, "--delete", help="Delete a topic."),
    topic: str | None = typer.Option(
        None, "--topic", help="The topic; a regular expression except for --create (',' means '|')."),
    topic_id: str | None = typer.Option(
        None, "--topic-id", help="--describe the topic with this id (Admin API; wins over --topic)."),
    exclude_internal: bool = typer.Option(False, "--exclude-internal", help="Leave out internal topics (--list, --describe)."),
    partitions: int | None = typer.Option(None, "--partitions", help="Partitions of the new topic, or the new total (--alter)."),
    replication_factor: int | None = typer.Option(None, "--replication-factor", help="Replicas per partition (--create)."),
    replica_assignment: str | None = typer.Option(
        None, "--replica-assignment", metavar="B1:B2,B1:B2,…", help="Brokers per partition, partition 0 first."),
    config: list[str] = typer.Option(
        [], "--config", metavar="NAME=VALUE", help="Topic config override (--create; --alter over ZooKeeper; repeatable)."),
    delete_config: list[str] = typer.Option(
        [], "--delete-config", metavar="NAME", help="Override to remove (--alter over ZooKeeper, as Kafka 2.1; repeatable)."),
    disable_rack_aware: bool = typer.Option(
        False, "--disable-rack-aware", help="Assign replicas ignoring racks (where kafkatool assigns them)."),
    seed: int | None = typer.Option(
        None, "--seed", help="Seed Kafka's java.util.Random for --create's assignment (--zookeeper)."),
    under_replicated: bool = typer.Option(False, "--under-replicated-partitions", help="Only partitions whose ISR is short of their replicas."),
    unavailable: bool = typer.Option(False, "--unavailable-partitions", help="Only partitions whose leader is not available."),
    under_min_isr: bool = typer.Option(False, "--under-min-isr-partitions", help="Only partitions whose ISR is below min.insync.replicas."),
    at_min_isr: bool = typer.Option(False, "--at-min-isr-partitions", help="Only partitions whose ISR equals min.insync.replicas."),
    with_overrides: bool = typer.Option(False, "--topics-with-overrides", help="Only topics with config overrides (no partitions)."),
    if_exists: bool = typer.Option(False, "--if-exists", help="--alter/--delete/--describe: do nothing when no topic matches."),
    if_not_exists: bool = typer.Option(False, "--if-not-exists", help="--create: do nothing when the topic exists."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Show what --create/--alter/--delete would change; change nothing."),
    output_format: str = typer.Option("text", "--format", help="text, json, ndjson, csv or table."),
    bootstrap_server: BootstrapServer = None,
    zookeeper: ZooKeeper = None,
    command_config: CommandConfig = None,
    timeout: Timeout = DEFAULT_TIMEOUT,
) -> None:
    from kafkatool.cluster.topics import DescribeFilter, TopicError, parse_configs, parse_replica_assignment

    chosen = [a for a, on in zip(ACTIONS, (list_, describe, create, alter, delete), strict=True) if on]
    if len(chosen) != 1:
        raise CliError("topics: Command must include exactly one action: --list, --describe, --create, --alter or --delete")
    action = chosen[0]
    check_format(output_format)
    flt = DescribeFilter(under_replicated, unavailable, under_min_isr, at_min_isr, with_overrides)
    if sum((under_replicated, unavailable, under_min_isr, at_min_isr, with_overrides)) > 1:
        raise CliError("topics: give at most one of --under-replicated-partitions, --unavailable-partitions, "
                       "--under-min-isr-partitions, --at-min-isr-partitions, --topics-with-overrides")
    if action != "describe" and (flt.partition_filter or with_overrides):
        raise CliError("topics: the report filters apply to --describe only")
    if action in ("create", "alter", "delete") and not topic:
        raise CliError(f'topics: Missing required argument "[topic]" for --{action}')
    if action == "alter" and partitions is None and not (config or delete_config):
        raise CliError('topics: Missing required argument "[partitions]" for --alter')
    if delete_config and action != "alter":
        raise CliError("topics: --delete-config goes with --alter")
    if action == "create" and replica_assignment and (partitions is not None or replication_factor is not None):
        raise CliError("topics: --replica-assignment cannot be used with --partitions or --replication-factor")
    if dry_run and action in ("list", "describe"):
        raise CliError("topics: --dry-run applies to --create, --alter and --delete")
    try:
        assignment = parse_replica_assignment(replica_assignment) if replica_assignment else None
        configs = parse_configs(config)
    except TopicError as exc:
        raise CliError(f"topics: {exc}") from None
    if config and action not in ("create", "alter"):
        raise CliError("topics: --config applies to --create (use `kafkatool configs` to change a topic's configs)")

    with cluster_from_options(zookeeper, bootstrap_server, command_config, timeout, thing="topics") as cluster:
        try:
            if action == "list":
                _list(cluster, topic, exclude_internal, output_format)
            elif action == "describe":
                if topic_id and cluster.kind == "zookeeper":
                    raise CliError("topics: --topic-id needs --bootstrap-server (ZooKeeper clusters have no topic ids)")
                _describe(cluster, topic, exclude_internal, flt, if_exists, output_format, topic_id)
            elif action == "create":
                _create(cluster, topic or "", partitions, replication_factor, assignment, configs,
                        not disable_rack_aware, seed, if_not_exists, dry_run, output_format)
            elif action == "alter":
                if (config or delete_config) and cluster.kind != "zookeeper":
                    raise CliError('topics: Option combination "[bootstrap-server],[config]" can\'t be used with option '
                                   '"[alter]" (the kafka-configs CLI supports altering topic configs with a '
                                   "--bootstrap-server option)")
                _alter(cluster, topic or "", partitions, assignment, not disable_rack_aware, if_exists, dry_run,
                       output_format, configs, [k.strip() for k in delete_config])
            else:
                _delete(cluster, topic or "", if_exists, dry_run, output_format)
        except TopicError as exc:
            sys.stdout.flush()
            raise CliError(f"topics: {exc}", EXIT_USAGE) from None


def _all_topics(cluster: Any) -> list[str]:
    if cluster.kind == "zookeeper":
        return cluster.topics()
    from kafkatool.cluster.topics_backend import admin_list

    return admin_list(cluster)


def _matching(cluster: Any, pattern: str | None, exclude_internal: bool) -> list[str]:
    from kafkatool.cluster.topics import select_topics

    return select_topics(_all_topics(cluster), pattern, exclude_internal)


def _existing(cluster: Any, pattern: str, if_exists: bool) -> list[str]:
    """The topics an --alter/--delete acts on; none is Kafka's error unless --if-exists."""
    names = _matching(cluster, pattern, False)
    if not names and not if_exists:
        raise _not_found(cluster, pattern)
    return names


def _not_found(cluster: Any, pattern: str) -> CliError:
    if cluster.kind == "zookeeper":
        return CliError(f"topics: Topic {pattern} does not exist on ZK path {cluster.connect_string}", EXIT_USAGE)
    return CliError(f"topics: Topic '{pattern}' does not exist as expected", EXIT_USAGE)


def _list(cluster: Any, pattern: str | None, exclude_internal: bool, fmt: str) -> None:
    from kafkatool.cluster.topics import is_internal
    from kafkatool.cluster.topics_text import list_text

    names = _matching(cluster, pattern, exclude_internal)
    marked = None
    if cluster.kind == "zookeeper":
        from kafkatool.cluster.topics_backend import zk_marked_for_deletion

        marked = zk_marked_for_deletion(cluster)
    if fmt == "text":
        sys.stdout.write(list_text(names, marked))
        return
    render_rows([{"topic": t, "internal": is_internal(t), "marked_for_deletion": bool(marked and t in marked)}
                 for t in names], fmt)


def _text_release(cluster: Any) -> Any:
    return cluster.text_release()


def _describe(cluster: Any, pattern: str | None, exclude_internal: bool, flt: Any, if_exists: bool, fmt: str,
              topic_id: str | None = None) -> None:
    from kafkatool.cluster.topics_text import ZERO_UUID, describe_admin_text, describe_rows, describe_zk_text

    if topic_id and topic_id != ZERO_UUID:  # Kafka 3.3: a non-zero --topic-id wins over --topic
        from kafkatool.cluster.topics import is_internal
        from kafkatool.cluster.topics_backend import topic_ids

        names = [n for n, i in topic_ids(cluster).items() if i == topic_id and not (exclude_internal and is_internal(n))]
        if not names and not if_exists:
            raise CliError(f"topics: TopicId '{topic_id}' does not exist as expected", EXIT_USAGE)
    else:
        names = _matching(cluster, pattern, exclude_internal)
    if pattern is not None and not topic_id and not names and not if_exists and cluster.kind != "zookeeper":
        raise _not_found(cluster, pattern)
    if cluster.kind == "zookeeper":
        from kafkatool.cluster.topics_backend import zk_describe

        topics = zk_describe(cluster, names)
        live = {b.id for b in cluster.brokers()}
        text, matched = (describe_zk_text(topics, flt, live) if fmt == "text" else ("", 0))
    else:
        from kafkatool.cluster.topics_backend import admin_describe

        rel = _text_release(cluster)
        topics, live = admin_describe(cluster, names, rel)
        text, matched = (describe_admin_text(topics, flt, live, rel) if fmt == "text" else ("", 0))
    if fmt == "text":
        sys.stdout.write(text)
    else:
        rows, matched = describe_rows(topics, flt, live, legacy=cluster.kind == "zookeeper")
        render_rows(rows, fmt)
    if (flt.partition_filter or flt.with_overrides) and matched:
        sys.stdout.flush()
        raise typer.Exit(EXIT_FINDINGS)


def _assignment_text(assignment: dict[int, list[int]]) -> str:
    return ", ".join(f"{p}:[{','.join(map(str, r))}]" for p, r in sorted(assignment.items()))


def _create(cluster: Any, topic: str, partitions: int | None, rf: int | None, assignment: Any, configs: dict[str, str],
            rack_aware: bool, seed: int | None, if_not_exists: bool, dry_run: bool, fmt: str) -> None:
    """Over ZooKeeper the assignment is computed and written as Kafka 2.x's tool did; over the Admin API the
    controller places replicas (only --replica-assignment is sent), as Kafka's TopicCommand lets it."""
    from kafkatool.cluster.topics import (
        COLLISION_WARNING,
        TopicExistsError,
        check_zk_topic_config_names,
        has_collision_chars,
        plan_create,
    )
    from kafkatool.cluster.topics_backend import admin_create, zk_create
    from kafkatool.jvm.random import JavaRandom

    zk = cluster.kind == "zookeeper"
    if not zk and assignment is None:
        if seed is not None:
            raise CliError("topics: --seed needs --zookeeper: over the Admin API the controller places the replicas")
        if not rack_aware:  # Kafka 3.3's tool accepts it and sends nothing of it either
            sys.stderr.write("kafkatool: note: --disable-rack-aware has no effect over the Admin API: "
                             "the controller places the replicas\n")
    out: list[str] = []
    if has_collision_chars(topic) and fmt == "text":  # Kafka warns before it validates anything
        sys.stdout.write(COLLISION_WARNING + "\n")
    if zk:  # no broker checks config names on this path
        check_zk_topic_config_names(configs)
    try:
        plan = plan_create(topic, _all_topics(cluster), cluster.brokers(), partitions, rf, assignment, configs,
                           rack_aware, JavaRandom(seed) if seed is not None else None, place=zk)
    except TopicExistsError:
        if if_not_exists:
            _report(fmt, [], [{"action": "create", "topic": topic, "status": "exists"}])
            return
        raise
    try:
        if zk and not dry_run:
            zk_create(cluster, plan)
        elif not zk:  # with --dry-run the controller checks it (validateOnly) and says what it would create
            answer = admin_create(cluster, plan, validate_only=dry_run)
            plan.partitions = plan.partitions or answer.partitions
            plan.replication_factor = plan.replication_factor or answer.replication_factor
    except TopicExistsError:
        if if_not_exists:
            _report(fmt, out, [{"action": "create", "topic": topic, "status": "exists"}])
            return
        raise
    if dry_run:
        out.append("dry run: nothing is changed. Would create topic " + _create_text(plan, partitions, rf, zk))
        _report(fmt, out, [{**plan.row(), "status": "dry-run"}])
        return
    out.append(f'Created topic "{topic}".' if zk else f"Created topic {topic}.")
    _report(fmt, out, [{**plan.row(), "status": "created"}])


def _create_text(plan: Any, partitions: int | None, rf: int | None, zk: bool) -> str:
    """What --dry-run says --create would ask for; counts the user left out are the brokers' defaults
    (as the controller reported them: CreateTopics v5+, Kafka 2.4+)."""
    def count(value: int | None, given: int | None, what: str, config: str) -> str:
        if given is not None or plan.assignment is not None:
            return f"{value} {what}" if what == "partitions" else f"{what} {value}"
        if value is not None:
            return (f"{value} {what}" if what == "partitions" else f"{what} {value}") + f" (the brokers' {config})"
        return f"the brokers' default {'number of partitions' if what == 'partitions' else what} ({config})"

    text = (f"{plan.topic} with {count(plan.partitions, partitions, 'partitions', 'num.partitions')}, "
            f"{count(plan.replication_factor, rf, 'replication factor', 'default.replication.factor')}")
    text += f": {_assignment_text(plan.assignment)}" if plan.assignment is not None else ", replicas placed by the controller"
    if plan.configs:
        text += f"; configs {','.join(f'{k}={v}' for k, v in plan.configs.items())}"
    return text if zk else text + " (the controller validated it: CreateTopics with validateOnly)"


def _alter(cluster: Any, pattern: str, partitions: int | None, assignment: Any, rack_aware: bool, if_exists: bool,
           dry_run: bool, fmt: str, configs: dict[str, str] | None = None, delete_configs: list[str] | None = None) -> None:
    """Over ZooKeeper each topic in turn as Kafka 2.x's tool did (the assignment computed here); over the
    Admin API one CreatePartitions for every matched topic, as Kafka's TopicCommand sends it."""
    from kafkatool.cluster.topics import plan_add_partitions
    from kafkatool.cluster.topics_backend import current_assignment, zk_add_partitions

    zk = cluster.kind == "zookeeper"
    names = _existing(cluster, pattern, if_exists)
    if not names:
        return
    if not zk:
        if partitions is not None:
            _alter_admin(cluster, names, partitions, assignment, rack_aware, dry_run, fmt)
        return
    brokers = cluster.brokers()
    out: list[str] = []
    rows: list[dict[str, Any]] = []
    for name in names:
        if configs or delete_configs:
            _alter_configs_zk(cluster, name, configs or {}, delete_configs or [], dry_run, out, rows)
        if partitions is None:
            continue
        plan = plan_add_partitions(name, current_assignment(cluster, name), brokers, partitions, assignment, rack_aware)
        out += plan.warnings
        new = plan.new_partitions or {}
        if dry_run:
            out.append(f"dry run: nothing is changed. Would add {len(new)} partitions to {name} "
                       f"({plan.current} -> {plan.total}): {_assignment_text(new)}")
            rows.append({**plan.row(), "status": "dry-run"})
            continue
        zk_add_partitions(cluster, plan)
        out.append("Adding partitions succeeded!")
        rows.append({**plan.row(), "status": "altered"})
    _report(fmt, out, rows)


def _alter_admin(cluster: Any, names: list[str], partitions: int, assignment: Any, rack_aware: bool, dry_run: bool,
                 fmt: str) -> None:
    """Kafka's TopicCommand: the new count (and only --replica-assignment's new partitions) for every topic
    in one request; it prints nothing when all were grown and, when some were refused, the first refusal in
    `CreatePartitionsResult.all()`'s order (the others were still grown).  --dry-run sends the same request
    with validateOnly and says what was sent."""
    from kafkatool.cluster.topics import plan_grow
    from kafkatool.cluster.topics_backend import admin_add_partitions
    from kafkatool.cluster.topics_text import create_partitions_result_order

    if not rack_aware:  # Kafka's tool accepts it and sends nothing of it either
        sys.stderr.write("kafkatool: note: --disable-rack-aware has no effect over the Admin API: "
                         "the controller places the replicas\n")
    counts: dict[str, int] = {}
    for tp in cluster.assignment(names):
        counts[tp.topic] = counts.get(tp.topic, 0) + 1
    plans = [plan_grow(n, counts.get(n, 0), partitions, assignment) for n in names]
    refused = admin_add_partitions(cluster, plans, validate_only=dry_run)
    out: list[str] = []
    rows: list[dict[str, Any]] = []
    for plan in plans:
        if plan.topic in refused:
            rows.append({**plan.row(), "status": "refused", "error": str(refused[plan.topic])})
            continue
        if dry_run:
            out.append("dry run: nothing is changed. Would " + _grow_text(plan))
        rows.append({**plan.row(), "status": "dry-run" if dry_run else "altered"})
    _report(fmt, out, rows)
    if refused:
        raise refused[create_partitions_result_order(list(refused))[0]]


def _grow_text(plan: Any) -> str:
    """What --dry-run over the Admin API says was asked for (CreatePartitions with validateOnly)."""
    text = f"add {plan.total - plan.current} partitions to {plan.topic} ({plan.current} -> {plan.total})"
    if plan.new_partitions is None:
        text += ", new replicas placed by the controller"
    else:
        text += f": {_assignment_text(plan.new_partitions)}"
    return text + " (the controller validated it: CreatePartitions with validateOnly)"


def _alter_configs_zk(cluster: Any, name: str, configs: dict[str, str], delete: list[str], dry_run: bool,
                      out: list[str], rows: list[dict[str, Any]]) -> None:
    """Kafka 2.1's deprecated `--alter --config/--delete-config`: the warning, then the config znode and its
    change notification (deleting a config that is not set is no error there)."""
    from kafkatool.cluster.configs import Entity, zk_configs
    from kafkatool.cluster.model import ConfigChange
    from kafkatool.cluster.topics import check_zk_topic_config_names

    check_zk_topic_config_names([*configs, *delete])
    out += ["WARNING: Altering topic configuration from this script has been deprecated and may be removed in "
            "future releases.", "         Going forward, please use kafka-configs.sh for this functionality"]
    current = dict(zk_configs(cluster, Entity("topics", name)))
    change = ConfigChange("topics", name, set=dict(configs), delete=[k for k in delete if k in current])
    row = {"action": "alter-config", "topic": name, "before": current, "after": change.apply(current)}
    if dry_run:
        out.append(f"dry run: nothing is changed. Would set the configs of {name} to "
                   + ",".join(f"{k}={v}" for k, v in change.apply(current).items()))
        rows.append({**row, "status": "dry-run"})
        return
    cluster.alter_configs([change])
    out.append(f'Updated config for topic "{name}".')
    rows.append({**row, "status": "altered"})


def _delete(cluster: Any, pattern: str, if_exists: bool, dry_run: bool, fmt: str) -> None:
    from kafkatool.cluster.topics import check_delete
    from kafkatool.cluster.topics_backend import admin_delete, zk_mark_deleted

    zk = cluster.kind == "zookeeper"
    names = _existing(cluster, pattern, if_exists)
    if not names:
        return
    for name in names:
        check_delete(name)
    if dry_run:
        _report(fmt, [f"dry run: nothing is changed. Would delete topic {n}" for n in names],
                [{"action": "delete", "topic": n, "status": "dry-run"} for n in names])
        return
    out: list[str] = []
    rows = []
    if zk:
        for name in names:
            if zk_mark_deleted(cluster, name):
                out += [f"Topic {name} is marked for deletion.",
                        "Note: This will have no impact if delete.topic.enable is not set to true."]
                rows.append({"action": "delete", "topic": name, "status": "marked"})
            else:
                out.append(f"Topic {name} is already marked for deletion.")
                rows.append({"action": "delete", "topic": name, "status": "already-marked"})
    else:
        admin_delete(cluster, names)
        rows = [{"action": "delete", "topic": n, "status": "deleted"} for n in names]
    _report(fmt, out, rows)


def _report(fmt: str, lines: list[str], rows: list[dict[str, Any]]) -> None:
    if fmt == "text":
        sys.stdout.write("".join(line + "\n" for line in lines))
    else:
        render_rows(rows, fmt)
