"""`kafkatool reassign`: kafka-reassign-partitions over ZooKeeper or the Admin API, and more."""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
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

Exactly one action: --generate, --execute, --verify, --cancel or --list. Text output is what Kafka 3.x's tool prints. Beyond Kafka: --strategy minimal (move as little as possible while balancing replicas and preferred leaders within ±1), --seed to reproduce Kafka's random assignment, plan files that remember the current assignment so --execute refuses when the cluster changed since (--force to override), atomic ZooKeeper writes, and throttles rolled back if the Admin API accepted nothing.

--generate saves a plan file (Kafka's JSON plus a "kafkatool" section; pass it to --execute or to Kafka's tool); --execute prints and saves the rollback JSON. --verify exits 0 when every reassignment completed (and clears throttles), 1 while any is in progress, 3 when one ended with other replicas than asked. Refusals (reassignment in progress, drift) exit 1.

\b
Examples:
  kafkatool reassign --bootstrap-server k1:9092 --generate --topics-to-move-json-file topics.json --broker-list 1,2,3
  kafkatool reassign --zookeeper zk1:2181/kafka --generate --topics-to-move-json-file topics.json --broker-list 1,2,3,4 --strategy minimal --sizes log-dirs.json
  kafkatool reassign --bootstrap-server k1:9092 --generate --topics-to-move-json-file t.json --broker-list 1,2,3 --seed 42
  kafkatool reassign --bootstrap-server k1:9092 --generate --topics-to-move-json-file t.json --broker-list 1,2,3,4 --strategy minimal --compare
  kafkatool reassign --bootstrap-server k1:9092 --execute --reassignment-json-file reassign-plan-20240101T000000Z.json --throttle 50000000
  kafkatool reassign --bootstrap-server k1:9092 --verify --reassignment-json-file plan.json
  kafkatool reassign --bootstrap-server k1:9092 --cancel --reassignment-json-file plan.json
  kafkatool reassign --zookeeper zk1:2181 --list --format json
"""

ACTIONS = ("generate", "execute", "verify", "cancel", "list")
ALLOWED: dict[str, set[str]] = {
    "generate": {"topics_to_move_json_file", "broker_list", "disable_rack_aware", "strategy", "seed", "start_index",
                 "replica_shift", "sizes", "compare", "plan_file", "no_plan_file"},
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


def _read(path: Path) -> str:
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
    return Path(f"{prefix}-{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}.json")


def _library_errors(exc: Exception) -> CliError | None:
    from kafkatool.cluster.assignment import AssignmentError
    from kafkatool.cluster.backend import ReassignmentInProgressError
    from kafkatool.cluster.reassign import ReassignInputError, ReassignRefused

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
    topics_to_move_json_file: Path | None = typer.Option(None, "--topics-to-move-json-file", metavar="FILE", help='Topics to move: {"topics":[{"topic":"foo"}],"version":1}.'),
    broker_list: str | None = typer.Option(None, "--broker-list", metavar="1,2,3", help="Brokers to assign to (--generate)."),
    disable_rack_aware: bool = typer.Option(False, "--disable-rack-aware", help="Ignore broker racks when assigning."),
    strategy: str = typer.Option("kafka", "--strategy", help="kafka: Kafka's algorithm; minimal: fewest moves to balance replicas and leaders."),
    seed: int | None = typer.Option(None, "--seed", help="Seed Kafka's java.util.Random: the same seed gives Kafka's output exactly."),
    start_index: int | None = typer.Option(None, "--start-index", min=0, help="Fix Kafka's start index (and, unless --replica-shift, its shift)."),
    replica_shift: int | None = typer.Option(None, "--replica-shift", min=0, help="Fix Kafka's replica shift."),
    sizes: Path | None = typer.Option(None, "--sizes", metavar="FILE", help="Partition sizes (kafka-log-dirs.sh JSON or {\"t-0\": bytes}); the Admin API reads them itself."),
    compare: bool = typer.Option(False, "--compare", help="Also plan with the other strategy and print both summaries."),
    plan_file: Path | None = typer.Option(None, "--plan-file", metavar="FILE", help="Where --generate saves the plan (default reassign-plan-<UTC time>.json)."),
    no_plan_file: bool = typer.Option(False, "--no-plan-file", help="Save no plan (--generate) or rollback (--execute) file."),
    reassignment_json_file: Path | None = typer.Option(None, "--reassignment-json-file", metavar="FILE", help="Reassignment JSON or kafkatool plan file."),
    throttle: int = typer.Option(-1, "--throttle", metavar="B/S", help="Inter-broker replication throttle in bytes/second for the moving replicas."),
    replica_alter_log_dirs_throttle: int = typer.Option(-1, "--replica-alter-log-dirs-throttle", metavar="B/S", help="Throttle for moves between log dirs of a broker."),
    additional: bool = typer.Option(False, "--additional", help="Execute although other reassignments are running (Admin API)."),
    force: bool = typer.Option(False, "--force", help="Execute although the cluster's assignment differs from the plan's."),
    rollback_file: Path | None = typer.Option(None, "--rollback-file", metavar="FILE", help="Where --execute saves the rollback plan (default reassign-rollback-<UTC time>.json)."),
    preserve_throttles: bool = typer.Option(False, "--preserve-throttles", help="Leave throttles in place on --verify/--cancel."),
    output_format: str = typer.Option("text", "--format", help="text (Kafka's output), json, and for --verify/--list also ndjson, csv, table."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No notes on stderr."),
    bootstrap_server: BootstrapServer = None,
    zookeeper: ZooKeeper = None,
    command_config: CommandConfig = None,
    timeout: Timeout = DEFAULT_TIMEOUT,
) -> None:
    given = locals()
    actions = [a for a, on in zip(ACTIONS, (generate, execute, verify, cancel, list_), strict=True) if on]
    if len(actions) != 1:
        raise CliError("reassign: Command must include exactly one action: --generate, --execute, --verify, --cancel, --list")
    action = actions[0]
    defaults = {"topics_to_move_json_file": None, "broker_list": None, "disable_rack_aware": False, "strategy": "kafka",
                "seed": None, "start_index": None, "replica_shift": None, "sizes": None, "compare": False,
                "plan_file": None, "no_plan_file": False, "reassignment_json_file": None, "throttle": -1,
                "replica_alter_log_dirs_throttle": -1, "additional": False, "force": False, "rollback_file": None,
                "preserve_throttles": False}
    for name, default in defaults.items():
        if given[name] != default and name not in ALLOWED[action]:
            raise CliError(f'reassign: Option "{_flag(name)}" can\'t be used with action "--{action}"')
    for name in REQUIRED[action]:
        if given[name] is None:
            raise CliError(f'reassign: Missing required argument "{_flag(name)}" for --{action}')
    check_format(output_format, FORMATS[action])
    opts = dict(zookeeper=zookeeper, bootstrap_server=bootstrap_server, command_config=command_config, timeout=timeout)
    try:
        if action == "generate":
            _generate(given, opts, output_format, quiet)
        elif action == "execute":
            _execute(given, opts, output_format, quiet)
        elif action == "verify":
            _verify(given, opts, output_format)
        elif action == "cancel":
            _cancel(given, opts, output_format)
        else:
            _list(opts, output_format)
    except CliError:
        raise
    except Exception as exc:
        mapped = _library_errors(exc)
        if mapped is None:
            raise
        raise mapped from None


def _generate(g: dict[str, Any], opts: dict[str, Any], fmt: str, quiet: bool) -> None:
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

    if g["strategy"] not in ("kafka", "minimal"):
        raise CliError(f"reassign: --strategy: {g['strategy']!r} is not one of kafka, minimal")
    if g["seed"] is not None and not -(2**63) <= g["seed"] < 2**63:
        raise CliError("reassign: --seed must fit in a Java long")
    if g["strategy"] == "minimal" and (g["seed"] is not None or g["start_index"] is not None or g["replica_shift"] is not None) and not g["compare"]:
        raise CliError("reassign: --seed, --start-index and --replica-shift apply to --strategy kafka")
    topics = parse_topics_to_move(_read(g["topics_to_move_json_file"]))
    brokers = parse_broker_list(g["broker_list"])
    sizes = parse_sizes(_read(g["sizes"])) if g["sizes"] is not None else None
    with cluster_from_options(**opts, thing="reassign") as cluster:
        result = generate(
            cluster, topics, brokers,
            strategy=g["strategy"], rack_aware=not g["disable_rack_aware"], seed=g["seed"],
            start_index=g["start_index"], replica_shift=g["replica_shift"], sizes=sizes, compare=g["compare"],
        )
        source = cluster.source
    printed = result.printed_proposal()
    plan_path = None
    if not g["no_plan_file"]:
        plan_path = g["plan_file"] or _default_file("reassign-plan")
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
            "plan_file": str(plan_path) if plan_path else None,
        })
    else:
        out = generate_text(result.current, printed)
        if result.strategy == "minimal":
            out += "\n" + format_summary(result.summary, target)
        if result.comparison:
            out += "\n" + format_comparison(result.comparison, target)
        sys.stdout.write(out)
    missing = [b for b in brokers if b not in target]
    if missing:
        _note(f"Note: broker{'' if len(missing) == 1 else 's'} {','.join(map(str, missing))} of --broker-list "
              "not in the cluster: ignored, as Kafka does", quiet)
    if plan_path:
        _note(f"Saved the plan to {plan_path} (use it as --reassignment-json-file)", quiet)
    if result.seed is not None and g["seed"] is None and g["start_index"] is None:
        _note(f"Random assignment drawn with --seed {result.seed} (recorded in the plan)", quiet or plan_path is None)


def _execute(g: dict[str, Any], opts: dict[str, Any], fmt: str, quiet: bool) -> None:
    from kafkatool.cluster.reassign import (
        VERIFY_PERIODICALLY,
        current_assignment_text,
        parse_reassignment,
        plan_document,
        prepare_execute,
        reassign_errors_text,
        started_text,
    )

    rf = parse_reassignment(_read(g["reassignment_json_file"]))
    text_out = fmt == "text"
    report: dict[str, Any] = {}
    with cluster_from_options(**opts, thing="reassign") as cluster:
        plan = prepare_execute(cluster, rf, throttle=g["throttle"], additional=g["additional"], force=g["force"])
        for note in plan.notes:
            _note(f"Note: {note}", quiet)
        if plan.drift:
            _note(f"Warning: --force: executing although {len(plan.drift)} partition(s) changed since the plan was made", quiet)
        rollback_path = None
        if not g["no_plan_file"]:
            rollback_path = g["rollback_file"] or _default_file("reassign-rollback")
            _save(rollback_path, plan_document(plan.current, plan.rollback_meta(cluster.source)))
        if text_out:
            sys.stdout.write(current_assignment_text(plan.current))
            if g["throttle"] >= 0 or g["replica_alter_log_dirs_throttle"] >= 0:
                sys.stdout.write(VERIFY_PERIODICALLY + "\n")
            sys.stdout.flush()
        if rollback_path:
            _note(f"Saved the rollback plan to {rollback_path}", quiet)
        errors = cluster.start_reassignment(plan.targets, plan.throttles)
        failed = {tp: e for tp, e in errors.items() if e is not None}
        if g["throttle"] >= 0 and text_out and len(failed) < len(errors):
            sys.stdout.write(f"The inter-broker throttle limit was set to {g['throttle']} B/s\n")
        if g["replica_alter_log_dirs_throttle"] >= 0 and plan.log_dirs:
            with _started(plan.targets, failed, text_out):
                _log_dir_throttle(cluster, plan.log_dirs, g["replica_alter_log_dirs_throttle"], text_out)
        report = {"rollback_file": str(rollback_path) if rollback_path else None,
                  "started": [str(tp) for tp in sorted(errors) if errors[tp] is None],
                  "errors": {str(tp): e for tp, e in sorted(failed.items())},
                  "throttle": g["throttle"] if g["throttle"] >= 0 else None}
        if failed:
            if text_out:
                sys.stdout.write(reassign_errors_text(failed) + "\n")
            else:
                render_json(report)
            raise CliError(f"reassign: {len(failed)} partition(s) could not be reassigned", EXIT_FAILURE)
        if text_out:
            sys.stdout.write(started_text(plan.targets))
        if plan.log_dirs:
            with _started(plan.targets, failed, False):
                moved = _execute_moves(cluster, plan.log_dirs, opts["timeout"], text_out)
            report["log_dir_moves"] = moved
    if not text_out:
        render_json(report)


@contextmanager
def _started(targets: Any, failed: dict[Any, str], text_out: bool) -> Iterator[None]:
    """A cluster error after the reassignment started: say it started (and what to run), exit 3."""
    from kafkatool.cluster.connect import ClusterError
    from kafkatool.cluster.reassign import started_text

    try:
        yield
    except ClusterError as exc:
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
    """Kafka's executeMoves: retry AlterReplicaLogDirs until each replica's move starts."""
    pending = dict(moves)
    started: list[str] = []
    deadline = time.monotonic() + timeout
    order = lambda r: (r.broker, r.topic, r.partition)  # noqa: E731
    while pending:
        results = cluster.alter_replica_log_dirs(pending)
        done = sorted((r for r, err in results.items() if err is None and r in pending), key=order)
        for r in done:
            if text_out:
                sys.stdout.write(f"Successfully started moving log directory to {pending[r]} for replica "
                                 f"{r.topic}-{r.partition} with broker {r.broker} \n")
            started.append(str(r))
            del pending[r]
        if not pending:
            break
        if time.monotonic() >= deadline:
            left = ",".join(str(r) for r in sorted(pending, key=order))
            raise CliError(f"reassign: Timed out before log directory move{'' if len(pending) == 1 else 's'} could be started for: {left}"
                           " (the partition reassignment itself was started: --verify follows it and clears the throttles)",
                           EXIT_FAILURE)
        time.sleep(0.1)
    return started


def _verify(g: dict[str, Any], opts: dict[str, Any], fmt: str) -> None:
    from kafkatool.cluster.reassign import parse_reassignment, verify, verify_text

    rf = parse_reassignment(_read(g["reassignment_json_file"]))
    with cluster_from_options(**opts, thing="reassign") as cluster:
        result = verify(cluster, rf)
        if fmt == "text":
            sys.stdout.write(verify_text(result, cluster.kind == "admin"))
        else:
            render_rows(result.rows(), fmt,
                        ["topic", "partition", "status", "current_replicas", "target_replicas"])
        sys.stdout.flush()
        if not result.parts_ongoing and not result.moves_ongoing and not g["preserve_throttles"]:
            text = _clear_throttles(cluster, rf.partitions, fmt, "")
            if fmt == "text":
                sys.stdout.write(text)
    if result.in_progress:
        raise typer.Exit(EXIT_FINDINGS)
    if result.failed:
        raise typer.Exit(EXIT_FAILURE)


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


def _cancel(g: dict[str, Any], opts: dict[str, Any], fmt: str) -> None:
    from kafkatool.cluster.connect import ClusterError
    from kafkatool.cluster.reassign import (
        cancel_errors_text,
        cancellable,
        cancelled_text,
        parse_reassignment,
        verify,
    )

    rf = parse_reassignment(_read(g["reassignment_json_file"]))
    report: dict[str, Any] = {}
    with cluster_from_options(**opts, thing="reassign") as cluster:
        if cluster.kind == "zookeeper":
            from kafkatool.cluster.backend import ClusterUnsupported

            raise ClusterUnsupported(
                "--cancel needs --bootstrap-server: reassignments started through ZooKeeper cannot be cancelled"
            )
        ongoing = cluster.ongoing_reassignments()
        parts = cancellable(ongoing, [tp for tp, _ in rf.partitions])
        out = []
        if parts:
            try:
                errors = {tp: e for tp, e in cluster.cancel_reassignments(parts).items() if e is not None}
            except ClusterError as exc:
                raise CliError(f"reassign: {exc} (which moves were cancelled is unknown: --list shows what still "
                               "runs; the throttles stay set until --cancel or --verify clears them)", EXIT_FAILURE) from None
            if errors:
                if fmt == "text":
                    sys.stdout.write(cancel_errors_text(errors) + "\n")
                raise CliError(f"reassign: {len(errors)} cancellation(s) failed (the throttles stay set while those "
                               "moves run: re-run --cancel, or --verify once they complete)", EXIT_FAILURE)
        out.append(cancelled_text(parts))
        reverted: list[str] = []
        if rf.log_dirs:
            states = verify(cluster, rf).moves
            active = {r: m.current for r, m in states.items() if m.kind == "active" and m.current}
            if active:
                reverted = _execute_moves(cluster, active, opts["timeout"], fmt == "text")
            else:
                out.append("None of the specified partition moves are active.")
        else:
            out.append("None of the specified partition moves are active.")
        if not g["preserve_throttles"]:
            out.append(_clear_throttles(cluster, rf.partitions, fmt, "".join(out)))
        report = {"cancelled": [str(tp) for tp in parts], "log_dir_moves_reverted": reverted,
                  "throttles_cleared": not g["preserve_throttles"]}
    if fmt == "text":
        sys.stdout.write("".join(out))
    else:
        render_json(report)


def _list(opts: dict[str, Any], fmt: str) -> None:
    from kafkatool.cluster.reassign import list_rows, list_text

    with cluster_from_options(**opts, thing="reassign") as cluster:
        ongoing = cluster.ongoing_reassignments()
    if fmt == "text":
        sys.stdout.write(list_text(ongoing))
    else:
        render_rows(list_rows(ongoing), fmt, ["topic", "partition", "replicas", "adding", "removing", "target"])
