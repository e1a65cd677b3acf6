"""`kafkatool reassign`: kafka-reassign-partitions over ZooKeeper or the Admin API, and more."""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, fields
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
from kafkatool.cli.errors import EXIT_FAILURE, EXIT_FINDINGS, EXIT_USAGE, CliError
from kafkatool.cli.render import check_format, render_json, render_rows

HELP = """Move partition replicas between brokers, as Kafka's kafka-reassign-partitions.sh does.

Exactly one action: --generate, --execute, --verify, --cancel or --list. Text output is what the tool of the brokers' Kafka release prints (or of --kafka-release; 2.1 (ZooKeeper --generate, --execute and --verify), 3.3 and 4.0 to 4.4 are modelled, order of JVM collections included). Beyond Kafka: --strategy minimal (goals in order: racks kept; required moves; replicas per broker within ±1 with the fewest moves; every topic's replicas within ±1 unless --no-topic-balance; preferred leaders per broker, then per topic, within ±1 by reordering only), each plan scored on every goal beside the current state, --remove-brokers, --replace OLD=NEW, --replication-factor N and --max-moves/--max-bytes stages, --seed to reproduce Kafka's random assignment, plan files that remember the current assignment so --execute refuses when the cluster changed since (--force to override), atomic ZooKeeper writes, and throttles rolled back if the Admin API accepted nothing.

--generate saves a plan file (Kafka's JSON plus a "kafkatool" section; pass it to --execute or to Kafka's tool); --execute prints and saves the rollback JSON. --verify exits 0 when every reassignment completed (and clears throttles), 1 while any is in progress, 3 when one ended with other replicas than asked. Refusals (reassignment in progress, drift) exit 1. Over ZooKeeper, --execute during a reassignment changes its throttle, as Kafka 2.x did.

\b
Examples:
  kafkatool reassign --bootstrap-server k1:9092 --generate --topics-to-move-json-file topics.json --broker-list 1,2,3
  kafkatool reassign --zookeeper zk1:2181/kafka --generate --topics-to-move-json-file topics.json --broker-list 1,2,3,4 --strategy minimal --sizes log-dirs.json
  kafkatool reassign --bootstrap-server k1:9092 --generate --topics-to-move-json-file t.json --broker-list 1,2,3 --seed 42
  kafkatool reassign --bootstrap-server k1:9092 --generate --topics-to-move-json-file t.json --broker-list 1,2,3,4 --strategy minimal --compare
  kafkatool reassign --bootstrap-server k1:9092 --generate --topics-to-move-json-file t.json --strategy minimal --remove-brokers 5,6
  kafkatool reassign --bootstrap-server k1:9092 --generate --topics-to-move-json-file t.json --strategy minimal --replace 4=7
  kafkatool reassign --bootstrap-server k1:9092 --generate --topics-to-move-json-file t.json --broker-list 1,2,3,4 --strategy minimal --replication-factor 3
  kafkatool reassign --bootstrap-server k1:9092 --generate --topics-to-move-json-file t.json --broker-list 1,2,3,4,5 --strategy minimal --max-moves 50
  kafkatool log-dirs /var/lib/kafka/data --format json > sizes.json   # or: log-dirs --describe --bootstrap-server …
  kafkatool reassign --bootstrap-server k1:9092 --generate --topics-to-move-json-file t.json --broker-list 1,2,3,4 --strategy minimal --log-dir-sizes sizes.json
  kafkatool reassign --bootstrap-server k1:9092 --execute --reassignment-json-file reassign-plan-20240101T000000Z.json --throttle 50000000
  kafkatool reassign --bootstrap-server k1:9092 --verify --reassignment-json-file plan.json
  kafkatool reassign --bootstrap-server k1:9092 --cancel --reassignment-json-file plan.json
  kafkatool reassign --zookeeper zk1:2181 --list --format json
"""

ACTIONS = ("generate", "execute", "verify", "cancel", "list")


@dataclass(frozen=True)
class ReassignOptions:
    """The action-specific options of `reassign`, with their defaults (also typer's defaults)."""

    topics_to_move_json_file: Path | None = None
    broker_list: str | None = None
    disable_rack_aware: bool = False
    strategy: str = "kafka"
    seed: int | None = None
    start_index: int | None = None
    replica_shift: int | None = None
    sizes: Path | None = None
    compare: bool = False
    remove_brokers: str | None = None
    replace: tuple[str, ...] = ()
    replication_factor: int | None = None
    max_moves: int | None = None
    max_bytes: int | None = None
    no_topic_balance: bool = False
    plan_file: Path | None = None
    no_plan_file: bool = False
    reassignment_json_file: Path | None = None
    throttle: int = -1
    replica_alter_log_dirs_throttle: int = -1
    additional: bool = False
    force: bool = False
    rollback_file: Path | None = None
    preserve_throttles: bool = False

    def given(self) -> list[str]:
        """Names of the options set to something other than their default."""
        return [f.name for f in fields(self) if getattr(self, f.name) != f.default]


D = ReassignOptions()
ALLOWED: dict[str, set[str]] = {
    "generate": {"topics_to_move_json_file", "broker_list", "disable_rack_aware", "strategy", "seed", "start_index",
                 "replica_shift", "sizes", "compare", "plan_file", "no_plan_file", "remove_brokers", "replace",
                 "replication_factor", "max_moves", "max_bytes", "no_topic_balance"},
    "execute": {"reassignment_json_file", "throttle", "replica_alter_log_dirs_throttle", "additional", "force",
                "rollback_file", "no_plan_file"},
    "verify": {"reassignment_json_file", "preserve_throttles"},
    "cancel": {"reassignment_json_file", "preserve_throttles"},
    "list": set(),
}
REQUIRED = {
    "generate": ("topics_to_move_json_file", "broker_list"),
    "execute": ("reassignment_json_file",),
    "verify": ("reassignment_json_file",),
    "cancel": ("reassignment_json_file",),
    "list": (),
}
FORMATS = {
    "generate": ("text", "json"),
    "execute": ("text", "json"),
    "verify": ("text", "json", "ndjson", "csv", "table"),
    "cancel": ("text", "json"),
    "list": ("text", "json", "ndjson", "csv", "table"),
}


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def _read(path: Path | None) -> str:
    if path is None:  # the action's REQUIRED check names the option first
        raise CliError("reassign: a required file option is missing", EXIT_USAGE)
    if not path.is_file():
        raise CliError(f"{path}: no such file", EXIT_USAGE)
    return path.read_text("utf-8")


def _note(message: str, quiet: bool) -> None:
    if not quiet:
        sys.stderr.write(message + "\n")


def _save(path: Path, text: str) -> None:
    from kafkatool.log.checkpoint import atomic_write

    try:
        atomic_write(path, text.encode("utf-8"))
    except OSError as exc:
        raise CliError(f"{path}: cannot write: {exc.strerror or exc}", EXIT_FAILURE) from None


def _default_file(prefix: str) -> Path:
    """`<state dir>/<prefix>-<UTC time>.json`: never the current directory (config.default_state_dir)."""
    from kafkatool.config import default_state_dir

    state = default_state_dir()
    try:
        state.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise CliError(f"{state}: cannot create the state directory: {exc.strerror or exc} "
                       "(set KAFKATOOL_STATE_DIR, or pass a file name)", EXIT_FAILURE) from None
    return state / f"{prefix}-{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}.json"


def _library_errors(exc: Exception) -> CliError | None:
    from kafkatool.cluster.assignment import AssignmentError
    from kafkatool.cluster.backend import ReassignmentInProgressError
    from kafkatool.cluster.reassign import LogDirMoveTimeout, ReassignInputError, ReassignRefused

    if isinstance(exc, LogDirMoveTimeout):
        return CliError(f"reassign: {exc}", EXIT_FAILURE)
    if isinstance(exc, (ReassignInputError, AssignmentError)):
        return CliError(f"reassign: {exc}", EXIT_USAGE)
    if isinstance(exc, (ReassignRefused, ReassignmentInProgressError)):
        return CliError(f"reassign: {exc}", EXIT_FINDINGS)
    return None


@app.command("reassign", help=HELP, no_args_is_help=True)
@handle_errors
def reassign(
    generate: bool = typer.Option(False, "--generate", help="Propose an assignment of --topics-to-move-json-file onto --broker-list."),
    execute: bool = typer.Option(False, "--execute", help="Start the reassignment in --reassignment-json-file."),
    verify: bool = typer.Option(False, "--verify", help="Report the status of --reassignment-json-file; clear throttles when done."),
    cancel: bool = typer.Option(False, "--cancel", help="Cancel the reassignments in --reassignment-json-file (Admin API)."),
    list_: bool = typer.Option(False, "--list", help="List the reassignments in progress."),
    topics_to_move_json_file: Path | None = typer.Option(D.topics_to_move_json_file, "--topics-to-move-json-file", metavar="FILE", help='Topics to move: {"topics":[{"topic":"foo"}],"version":1}.'),
    broker_list: str | None = typer.Option(D.broker_list, "--broker-list", metavar="1,2,3", help="Brokers to assign to (--generate)."),
    disable_rack_aware: bool = typer.Option(D.disable_rack_aware, "--disable-rack-aware", help="Ignore broker racks when assigning."),
    strategy: str = typer.Option(D.strategy, "--strategy", help="kafka: Kafka's algorithm; minimal: fewest moves to balance replicas and leaders."),
    seed: int | None = typer.Option(D.seed, "--seed", help="Seed Kafka's java.util.Random: the same seed gives Kafka's output exactly."),
    start_index: int | None = typer.Option(D.start_index, "--start-index", min=0, help="Fix Kafka's start index (and, unless --replica-shift, its shift)."),
    replica_shift: int | None = typer.Option(D.replica_shift, "--replica-shift", min=0, help="Fix Kafka's replica shift."),
    sizes: Path | None = typer.Option(D.sizes, "--sizes", "--log-dir-sizes", metavar="FILE", help="Partition sizes for --strategy minimal instead of asking the brokers: `kafkatool log-dirs --format json` (offline or live), kafka-log-dirs.sh output or {\"t-0\": bytes}."),
    compare: bool = typer.Option(D.compare, "--compare", help="Also plan with the other strategy and print both summaries."),
    remove_brokers: str | None = typer.Option(D.remove_brokers, "--remove-brokers", metavar="4,5", help="Decommission these brokers: move their replicas off (the broker list defaults to the others)."),
    replace: list[str] = typer.Option(list(D.replace), "--replace", metavar="OLD=NEW", help="Replace a broker: its replicas go to NEW, nothing else moves (--strategy minimal; repeatable)."),
    replication_factor: int | None = typer.Option(D.replication_factor, "--replication-factor", min=1, help="New replication factor for the topics to move (--strategy minimal)."),
    max_moves: int | None = typer.Option(D.max_moves, "--max-moves", min=0, help="Stage: keep the plan's first changes up to this many replicas moved."),
    max_bytes: int | None = typer.Option(D.max_bytes, "--max-bytes", min=0, help="Stage: keep the plan's first changes up to this many bytes moved."),
    no_topic_balance: bool = typer.Option(D.no_topic_balance, "--no-topic-balance", help="--strategy minimal: balance brokers only, never moving more than the fewest moves (topics may stay uneven)."),
    plan_file: Path | None = typer.Option(D.plan_file, "--plan-file", metavar="FILE", help="Where --generate saves the plan (default: the state dir, $KAFKATOOL_STATE_DIR or ~/.local/state/kafkatool, as reassign-plan-<UTC time>.json)."),
    no_plan_file: bool = typer.Option(D.no_plan_file, "--no-plan-file", help="Save no plan (--generate) or rollback (--execute) file."),
    reassignment_json_file: Path | None = typer.Option(D.reassignment_json_file, "--reassignment-json-file", metavar="FILE", help="Reassignment JSON or kafkatool plan file."),
    throttle: int = typer.Option(D.throttle, "--throttle", metavar="B/S", help="Inter-broker replication throttle in bytes/second for the moving replicas."),
    replica_alter_log_dirs_throttle: int = typer.Option(D.replica_alter_log_dirs_throttle, "--replica-alter-log-dirs-throttle", metavar="B/S", help="Throttle for moves between log dirs of a broker."),
    additional: bool = typer.Option(D.additional, "--additional", help="Execute although other reassignments are running (Admin API)."),
    force: bool = typer.Option(D.force, "--force", help="Execute although the cluster's assignment differs from the plan's."),
    rollback_file: Path | None = typer.Option(D.rollback_file, "--rollback-file", metavar="FILE", help="Where --execute saves the rollback plan (default: the state dir, as reassign-rollback-<UTC time>.json)."),
    preserve_throttles: bool = typer.Option(D.preserve_throttles, "--preserve-throttles", help="Leave throttles in place on --verify/--cancel."),
    output_format: str = typer.Option("text", "--format", help="text (Kafka's output), json, and for --verify/--list also ndjson, csv, table."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No notes on stderr."),
    bootstrap_server: BootstrapServer = None,
    zookeeper: ZooKeeper = None,
    command_config: CommandConfig = None,
    timeout: Timeout = DEFAULT_TIMEOUT,
) -> None:
    o = ReassignOptions(
        topics_to_move_json_file=topics_to_move_json_file, broker_list=broker_list,
        disable_rack_aware=disable_rack_aware, strategy=strategy, seed=seed, start_index=start_index,
        replica_shift=replica_shift, sizes=sizes, compare=compare, plan_file=plan_file,
        no_plan_file=no_plan_file, remove_brokers=remove_brokers, replace=tuple(replace or ()),
        replication_factor=replication_factor, max_moves=max_moves, max_bytes=max_bytes,
        no_topic_balance=no_topic_balance,
        reassignment_json_file=reassignment_json_file, throttle=throttle,
        replica_alter_log_dirs_throttle=replica_alter_log_dirs_throttle, additional=additional, force=force,
        rollback_file=rollback_file, preserve_throttles=preserve_throttles,
    )
    actions = [a for a, on in zip(ACTIONS, (generate, execute, verify, cancel, list_), strict=True) if on]
    if len(actions) != 1:
        raise CliError("reassign: Command must include exactly one action: --generate, --execute, --verify, --cancel, --list")
    action = actions[0]
    for name in o.given():
        if name not in ALLOWED[action]:
            raise CliError(f'reassign: Option "{_flag(name)}" can\'t be used with action "--{action}"')
    for name in REQUIRED[action]:
        if name == "broker_list" and (o.remove_brokers is not None or o.replace):
            continue  # the cluster's brokers, less those removed or replaced
        if getattr(o, name) is None:
            raise CliError(f'reassign: Missing required argument "{_flag(name)}" for --{action}')
    check_format(output_format, FORMATS[action])
    conn = dict(zookeeper=zookeeper, bootstrap_server=bootstrap_server, command_config=command_config,
                timeout=timeout)
    try:
        if action == "generate":
            _generate(o, conn, output_format, quiet)
        elif action == "execute":
            _execute(o, conn, output_format, quiet)
        elif action == "verify":
            _verify(o, conn, output_format)
        elif action == "cancel":
            _cancel(o, conn, output_format)
        else:
            _list(conn, output_format)
    except CliError:
        raise
    except Exception as exc:
        mapped = _library_errors(exc)
        if mapped is None:
            raise
        raise mapped from None


def _generate(o: ReassignOptions, conn: dict[str, Any], fmt: str, quiet: bool) -> None:
    from kafkatool.cluster.reassign import (
        format_comparison,
        format_summary,
        generate,
        generate_text,
        parse_broker_list,
        parse_reassignment,
        parse_sizes,
        parse_topics_to_move,
        plan_document,
    )
    from kafkatool.cluster.replica_dirs import current_log_dirs

    if o.strategy not in ("kafka", "minimal"):
        raise CliError(f"reassign: --strategy: {o.strategy!r} is not one of kafka, minimal")
    if o.seed is not None and not -(2**63) <= o.seed < 2**63:
        raise CliError("reassign: --seed must fit in a Java long")
    if o.strategy == "minimal" and (o.seed is not None or o.start_index is not None or o.replica_shift is not None) and not o.compare:
        raise CliError("reassign: --seed, --start-index and --replica-shift apply to --strategy kafka")
    from kafkatool.cluster.minimal import Goals
    from kafkatool.cluster.plan_score import format_scores, score, stage

    for name in ("replace", "replication_factor", "no_topic_balance"):
        if getattr(o, name) != getattr(D, name) and o.strategy != "minimal":
            raise CliError(f"reassign: {_flag(name)} needs --strategy minimal")
    topics = parse_topics_to_move(_read(o.topics_to_move_json_file))
    removed = set(parse_broker_list(o.remove_brokers)) if o.remove_brokers is not None else set()
    replace = _replacements(o.replace)
    sizes = parse_sizes(_read(o.sizes)) if o.sizes is not None else None
    goals = Goals(topic_balance=not o.no_topic_balance, replace=replace, replication_factor=o.replication_factor,
                  rf_topics=frozenset(topics) if o.replication_factor is not None else frozenset())
    order: list[Any] = []
    with cluster_from_options(**conn, thing="reassign") as cluster:
        if o.broker_list is not None:
            brokers = parse_broker_list(o.broker_list)
        else:
            brokers = sorted(b.id for b in cluster.brokers())
        brokers = [b for b in brokers if b not in removed and b not in replace] + sorted(
            n for n in replace.values() if n not in brokers)
        if not brokers:
            raise CliError("reassign: no brokers left to assign to")
        result = generate(
            cluster, topics, brokers,
            strategy=o.strategy, rack_aware=not o.disable_rack_aware, seed=o.seed,
            start_index=o.start_index, replica_shift=o.replica_shift, sizes=sizes, compare=o.compare,
            goals=goals, order=order,
        )
        source = cluster.source
        dirs = current_log_dirs(cluster, result.current) if fmt != "json" else {}
        text_21 = _kafka_21_text(cluster)
        znode_order = _znode_order(cluster, topics) if text_21 else None
    if o.max_bytes is not None and result.sizes is None:
        raise CliError("reassign: --max-bytes needs the partitions' sizes: give --sizes, or use --strategy minimal")
    if o.max_moves is not None or o.max_bytes is not None:
        from dataclasses import replace as _with

        from kafkatool.cluster.reassign import summarize

        staged = stage(result.current, result.proposed, order or None, _sizes_of(result), o.max_moves,
                       o.max_bytes)
        result = _with(result, proposed=staged,
                       summary=summarize(result.current, staged, result.brokers, _sizes_of(result), result.strategy))
    plan_sizes = _sizes_of(result)
    scores = [("current", score(result.current, result.current, result.brokers, plan_sizes)),
              (result.strategy, score(result.current, result.proposed, result.brokers, plan_sizes))]
    if result.compared is not None:
        other_name = "minimal" if result.strategy == "kafka" else "kafka"
        scores.append((other_name, score(result.current, result.compared, result.brokers, plan_sizes)))
    printed = result.printed_proposal()
    plan_path = None
    if not o.no_plan_file:
        plan_path = o.plan_file or _default_file("reassign-plan")
        doc = plan_document(printed, result.plan_meta(source))
        parse_reassignment(doc)  # what we save must read back
        _save(plan_path, doc)
    target = {b.id for b in result.brokers}
    if fmt == "json":
        import json

        from kafkatool.cluster.reassign import format_reassignment_json

        render_json({
            "current": json.loads(format_reassignment_json(result.current)),
            "proposed": json.loads(format_reassignment_json(printed)),
            "strategy": result.strategy,
            "seed": result.seed,
            "summary": result.summary.to_json(),
            "comparison": [s.to_json() for s in result.comparison],
            "score": {name: sc.to_json() for name, sc in scores},
            "plan_file": str(plan_path) if plan_path else None,
        })
    else:
        if text_21:
            from kafkatool.cluster.reassign_21 import generate_text_21

            out = generate_text_21(topics, result.current, printed, znode_order)
        else:
            out = generate_text(result.current, printed, dirs)
        if result.strategy == "minimal":
            out += "\n" + format_summary(result.summary, target)
        if result.comparison:
            out += "\n" + format_comparison(result.comparison, target)
        if result.strategy == "minimal" or result.comparison or o.max_moves is not None or o.max_bytes is not None:
            out += "\n" + format_scores(scores, result.summary.lower_bound)
        sys.stdout.write(out)
    missing = [b for b in brokers if b not in target]
    if missing:
        _note(f"Note: broker{'' if len(missing) == 1 else 's'} {','.join(map(str, missing))} of --broker-list "
              "not in the cluster: ignored, as Kafka does", quiet)
    if plan_path:
        _note(f"Saved the plan to {plan_path} (use it as --reassignment-json-file)", quiet)
    if result.seed is not None and o.seed is None and o.start_index is None:
        _note(f"Random assignment drawn with --seed {result.seed} (recorded in the plan)", quiet or plan_path is None)


def _replacements(pairs: tuple[str, ...]) -> dict[int, int]:
    out: dict[int, int] = {}
    for pair in pairs:
        old, sep, new = pair.partition("=")
        if not sep or not old.strip().isdigit() or not new.strip().isdigit():
            raise CliError(f"reassign: --replace: {pair!r} is not OLD=NEW (two broker ids)")
        if int(old) in out or int(old) == int(new):
            raise CliError(f"reassign: --replace: broker {int(old)} is replaced twice or by itself")
        out[int(old)] = int(new)
    return out


def _sizes_of(result: Any) -> Any:
    """The partition sizes the plan was made with (None when unknown)."""
    return result.sizes

def _execute(o: ReassignOptions, conn: dict[str, Any], fmt: str, quiet: bool) -> None:
    from kafkatool.cluster.reassign import (
        VERIFY_PERIODICALLY,
        current_assignment_text,
        parse_reassignment,
        plan_document,
        prepare_execute,
        reassign_errors_text,
        started_text,
    )
    from kafkatool.cluster.replica_dirs import current_log_dirs

    rf = parse_reassignment(_read(o.reassignment_json_file))
    text_out = fmt == "text"
    report: dict[str, Any] = {}
    with cluster_from_options(**conn, thing="reassign") as cluster:
        plan = prepare_execute(cluster, rf, throttle=o.throttle,
                               log_dir_throttle=o.replica_alter_log_dirs_throttle,
                               additional=o.additional, force=o.force)
        if plan.running is not None:
            _change_running_throttle(cluster, plan.running, o, fmt, quiet)
            return
        for note in plan.notes:
            _note(f"Note: {note}", quiet)
        if plan.drift:
            _note(f"Warning: --force: executing although {len(plan.drift)} partition(s) changed since the plan was made", quiet)
        rollback_path = None
        if not o.no_plan_file:
            rollback_path = o.rollback_file or _default_file("reassign-rollback")
            _save(rollback_path, plan_document(plan.current, plan.rollback_meta(cluster.source)))
        old_words = _kafka_21_text(cluster)  # Kafka 2.1's words (ZooKeeper clusters before 2.6)
        if text_out and old_words:
            from kafkatool.cluster.reassign_21 import VERIFY_PERIODICALLY_21, rollback_text_21

            file_topics = [tp.topic for tp, _ in rf.partitions]
            sys.stdout.write(rollback_text_21(cluster.assignment(sorted(set(file_topics))), file_topics,
                                              _znode_order(cluster, file_topics)))
            if o.throttle >= 0 or o.replica_alter_log_dirs_throttle >= 0:
                sys.stdout.write(VERIFY_PERIODICALLY_21 + "\n")
            sys.stdout.flush()
        elif text_out:
            sys.stdout.write(current_assignment_text(plan.current, current_log_dirs(cluster, plan.current)))
            if o.throttle >= 0 or o.replica_alter_log_dirs_throttle >= 0:
                sys.stdout.write(VERIFY_PERIODICALLY + "\n")
            sys.stdout.flush()
        if rollback_path:
            _note(f"Saved the rollback plan to {rollback_path}", quiet)
        errors = cluster.start_reassignment(plan.targets, plan.throttles)
        failed = {tp: e for tp, e in errors.items() if e is not None}
        if o.throttle >= 0 and text_out and len(failed) < len(errors):
            sys.stdout.write(f"The inter-broker throttle limit was set to {o.throttle} B/s\n")
        if o.replica_alter_log_dirs_throttle >= 0 and plan.log_dirs:
            with _started(plan.targets, failed, text_out):
                _log_dir_throttle(cluster, plan.log_dirs, o.replica_alter_log_dirs_throttle, text_out)
        report = {"rollback_file": str(rollback_path) if rollback_path else None,
                  "started": [str(tp) for tp in sorted(errors) if errors[tp] is None],
                  "errors": {str(tp): e for tp, e in sorted(failed.items())},
                  "throttle": o.throttle if o.throttle >= 0 else None}
        if failed:
            if text_out:
                sys.stdout.write(reassign_errors_text(failed) + "\n")
            else:
                render_json(report)
            raise CliError(f"reassign: {len(failed)} partition(s) could not be reassigned", EXIT_FAILURE)
        if text_out and old_words:
            from kafkatool.cluster.reassign_21 import STARTED_21

            sys.stdout.write(STARTED_21 + "\n")
        elif text_out:
            sys.stdout.write(started_text(plan.targets))
        if plan.log_dirs:
            with _started(plan.targets, failed, False):
                report["log_dir_moves"] = _execute_moves(cluster, plan.log_dirs, conn["timeout"], text_out)
    if not text_out:
        render_json(report)


def _change_running_throttle(cluster: Any, running: Any, o: ReassignOptions, fmt: str, quiet: bool) -> None:
    """Kafka 2.x over ZooKeeper: a reassignment is running, so only its throttle changes."""
    from kafkatool.cluster.reassign import RUNNING_ASSIGNMENT

    if fmt == "text":
        sys.stdout.write(RUNNING_ASSIGNMENT + "\n")
        sys.stdout.flush()
    cluster.alter_configs(running.changes)
    if fmt != "text":
        render_json({"running": True, "throttle": o.throttle if o.throttle >= 0 else None,
                     "replica_alter_log_dirs_throttle": o.replica_alter_log_dirs_throttle
                     if o.replica_alter_log_dirs_throttle >= 0 else None,
                     "brokers_throttled": [c.name for c in running.changes],
                     "not_started": [str(tp) for tp in running.not_started]})
    if running.changes:
        plural = "" if len(running.changes) == 1 else "s"
        _note(f"Changed the throttle of the running reassignment on broker{plural} "
              f"{','.join(c.name for c in running.changes)}", quiet)
    if running.not_started:
        raise CliError(
            f"reassign: not started: {','.join(map(str, running.not_started))}: a ZooKeeper reassignment is "
            "running (/admin/reassign_partitions exists) and only its throttle can change; run --execute again "
            "when it is done",
            EXIT_FINDINGS,
        )


@contextmanager
def _started(targets: Any, failed: dict[Any, str], text_out: bool) -> Iterator[None]:
    """A cluster error after the reassignment started: say it started (and what to run), exit 3."""
    from kafkatool.cluster.connect import ClusterError
    from kafkatool.cluster.reassign import LogDirMoveTimeout, started_text

    try:
        yield
    except (ClusterError, LogDirMoveTimeout) as exc:
        if text_out and not failed:
            sys.stdout.write(started_text(targets))
        raise CliError(f"reassign: {exc} (the partition reassignment itself was started: --verify follows it "
                       "and clears the throttles)", EXIT_FAILURE) from None


def _log_dir_throttle(cluster: Any, log_dirs: dict[Any, str], rate: int, text_out: bool) -> None:
    from kafkatool.cluster.model import ConfigChange
    from kafkatool.cluster.reassign import LOG_DIR_RATE

    brokers = sorted({r.broker for r in log_dirs})
    cluster.alter_configs([ConfigChange("brokers", str(b), set={LOG_DIR_RATE: str(rate)}) for b in brokers])
    if text_out:
        sys.stdout.write(f"The replica-alter-dir throttle limit was set to {rate} B/s\n")


def _execute_moves(cluster: Any, moves: dict[Any, str], timeout: float, text_out: bool) -> list[str]:
    """Start the log-dir moves (the library retries), printing each round as Kafka does."""
    from kafkatool.cluster.reassign import log_dir_moves_started_text, start_log_dir_moves

    started: list[str] = []
    for batch in start_log_dir_moves(cluster, moves, timeout):
        if text_out:
            sys.stdout.write(log_dir_moves_started_text(batch, moves, cluster.text_release()))
            sys.stdout.flush()
        started += map(str, batch)
    return started


def _verify(o: ReassignOptions, conn: dict[str, Any], fmt: str) -> None:
    from kafkatool.cluster.reassign import parse_reassignment, verify, verify_text

    rf = parse_reassignment(_read(o.reassignment_json_file))
    with cluster_from_options(**conn, thing="reassign") as cluster:
        result = verify(cluster, rf)
        old_words = fmt == "text" and _kafka_21_text(cluster)
        if old_words:
            _verify_21(cluster, rf, result, o.preserve_throttles)
        elif fmt == "text":
            sys.stdout.write(verify_text(result, cluster.kind == "admin"))
        else:
            render_rows(result.rows(), fmt,
                        ["topic", "partition", "status", "current_replicas", "target_replicas"])
        sys.stdout.flush()
        if not old_words and not result.parts_ongoing and not result.moves_ongoing and not o.preserve_throttles:
            text = _clear_throttles(cluster, rf.partitions, fmt, "")
            if fmt == "text":
                sys.stdout.write(text)
    if result.in_progress:
        raise typer.Exit(EXIT_FINDINGS)
    if result.failed:
        raise typer.Exit(EXIT_FAILURE)


def _znode_order(cluster: Any, topics: list[str]) -> Any:
    """The partitions as the topic znodes list them (ZooKeeper only; Kafka 2.x's small Maps keep it)."""
    from kafkatool.cluster.zk import ZkCluster

    return cluster.znode_order(topics) if isinstance(cluster, ZkCluster) else None


def _kafka_21_text(cluster: Any) -> bool:
    """Kafka 2.1's words: a ZooKeeper cluster whose text release is before 2.6 (its tool's rewrite)."""
    from kafkatool.cluster.reassign_21 import uses_21_text

    return bool(cluster.kind == "zookeeper" and uses_21_text(cluster.text_release()))


def _verify_21(cluster: Any, rf: Any, result: Any, preserve_throttles: bool) -> None:
    """Kafka 2.1's --verify: the status lines, then `Throttle was removed.` when every partition is done
    and a throttle config was there to remove (its `removeThrottle`)."""
    from kafkatool.cluster.reassign import BROKER_THROTTLES, TOPIC_THROTTLES
    from kafkatool.cluster.reassign_21 import THROTTLE_REMOVED_21, verify_text_21

    statuses = {tp: ("in progress" if not s.done else "completed" if s.current == s.target else "failed")
                for tp, s in result.states.items()}
    sys.stdout.write(verify_text_21(statuses, [tp for tp, _ in rf.partitions]))
    sys.stdout.flush()
    if result.parts_ongoing or result.moves_ongoing or preserve_throttles or "failed" in statuses.values():
        return
    brokers = cluster.describe_configs("brokers", [str(b.id) for b in cluster.brokers()])
    topics = cluster.describe_configs("topics", sorted({tp.topic for tp, _ in rf.partitions}))
    present = any(k in cfg for cfg in brokers.values() for k in BROKER_THROTTLES) or \
        any(k in cfg for cfg in topics.values() for k in TOPIC_THROTTLES)
    _clear_throttles(cluster, rf.partitions, "text", "")
    if present:
        sys.stdout.write(THROTTLE_REMOVED_21 + "\n")


def _clear_throttles(cluster: Any, partitions: Any, fmt: str, before: str) -> str:
    """clear_throttles; when it fails, print `before`, what is left and the commands that clear it, then exit 3."""
    from kafkatool.cluster.reassign import ThrottlesLeftError, clear_throttles

    try:
        return clear_throttles(cluster, partitions)
    except ThrottlesLeftError as exc:
        if fmt == "text":
            sys.stdout.write(before + exc.text())
            sys.stdout.flush()
        raise


def _cancel(o: ReassignOptions, conn: dict[str, Any], fmt: str) -> None:
    from kafkatool.cluster.connect import ClusterError
    from kafkatool.cluster.reassign import (
        cancel_errors_text,
        cancellable,
        cancelled_text,
        no_active_moves_text,
        parse_reassignment,
        verify,
    )

    rf = parse_reassignment(_read(o.reassignment_json_file))
    text_out = fmt == "text"

    def out(text: str) -> None:
        if text_out:
            sys.stdout.write(text)
            sys.stdout.flush()

    with cluster_from_options(**conn, thing="reassign") as cluster:
        if cluster.kind == "zookeeper":
            from kafkatool.cluster.backend import ClusterUnsupported

            raise ClusterUnsupported(
                "--cancel needs --bootstrap-server: reassignments started through ZooKeeper cannot be cancelled"
            )
        ongoing = cluster.ongoing_reassignments()
        parts = cancellable(ongoing, [tp for tp, _ in rf.partitions])
        if parts:
            try:
                errors = {tp: e for tp, e in cluster.cancel_reassignments(parts).items() if e is not None}
            except ClusterError as exc:
                raise CliError(f"reassign: {exc} (which moves were cancelled is unknown: --list shows what still "
                               "runs; the throttles stay set until --cancel or --verify clears them)", EXIT_FAILURE) from None
            if errors:
                out(cancel_errors_text(errors) + "\n")
                raise CliError(f"reassign: {len(errors)} cancellation(s) failed (the throttles stay set while those "
                               "moves run: re-run --cancel, or --verify once they complete)", EXIT_FAILURE)
        out(cancelled_text(parts))
        reverted: list[str] = []
        active = {}
        if rf.log_dirs:
            states = verify(cluster, rf).moves
            active = {r: m.current for r, m in states.items() if m.kind == "active" and m.current}
        if active:
            reverted = _execute_moves(cluster, active, conn["timeout"], text_out)
        else:
            out(no_active_moves_text(cluster.text_release()))
        if not o.preserve_throttles:
            out(_clear_throttles(cluster, rf.partitions, fmt, ""))
    if not text_out:
        render_json({"cancelled": [str(tp) for tp in parts], "log_dir_moves_reverted": reverted,
                     "throttles_cleared": not o.preserve_throttles})


def _list(conn: dict[str, Any], fmt: str) -> None:
    from kafkatool.cluster.reassign import list_rows, list_text

    with cluster_from_options(**conn, thing="reassign") as cluster:
        ongoing = cluster.ongoing_reassignments()
    if fmt == "text":
        sys.stdout.write(list_text(ongoing))
    else:
        render_rows(list_rows(ongoing), fmt, ["topic", "partition", "replicas", "adding", "removing", "target"])
