"""`kafkatool metadata ls|cat|tree|find|shell|diff|history`: a KRaft cluster's metadata from its files."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from kafkatool.cli.app import app, handle_errors
from kafkatool.cli.errors import EXIT_FINDINGS, EXIT_USAGE, CliError
from kafkatool.cli.render import check_format, render_json, render_rows

metadata_app = typer.Typer(
    name="metadata",
    help=(
        "A KRaft cluster's metadata from a controller's or broker's files, no cluster needed: the metadata "
        "shell's ls, cat, tree and find over the cluster image (the same paths and text as "
        "kafka-metadata-shell.sh), the image at any offset or time, what changed between two points, and "
        "the history of one partition, broker or config.\n\n"
        "SOURCE is a snapshot (.checkpoint) or log segment (.log), read alone as kafka-metadata-shell.sh "
        "--snapshot reads it, or a metadata log dir (__cluster_metadata-0, or the metadata dir holding it): "
        "its latest snapshot and the log after it, as a restarting node reads them.\n\n"
        "\b\nExit codes: 0 ok (the shell's 'no such file' answers are output, as Kafka's); 1 the files are "
        "damaged (everything before the damage is shown, and where it is on stderr) or find met "
        "/image/features/zkMigrationState, as Kafka 4.0's shell does; 2 bad path, option or point.\n\n"
        "\b\nExamples:\n"
        "  kafkatool metadata ls /image/topics/byName -s /var/lib/kafka/meta\n"
        "  kafkatool metadata cat /image/topics/byName/orders/0 -s /var/lib/kafka/meta --at 2026-11-28T07:42:00Z\n"
        "  kafkatool metadata tree /image/configs -s meta/__cluster_metadata-0/00000000000000000090-0000000001.checkpoint\n"
        "  kafkatool metadata diff 100 200 -s /var/lib/kafka/meta\n"
        "  kafkatool metadata history --partition orders-3 -s /var/lib/kafka/meta --format json"
    ),
    no_args_is_help=True,
    context_settings={"help_option_names": ["-h", "--help"]},
)
app.add_typer(metadata_app, name="metadata")

SOURCE_HELP = (
    "A snapshot or segment file (read alone, as kafka-metadata-shell.sh --snapshot), or a metadata log dir."
)
AT_HELP = (
    "With a metadata log dir: the image at this offset (included) or ISO-8601 time (2026-11-28T07:42:00Z)."
)
SHELL_FORMATS = ("text", "json", "ndjson", "csv")


def _load(source: Path, at: str | None):  # type: ignore[no-untyped-def]
    from kafkatool.ops.metadata.image import ImageError
    from kafkatool.ops.metadata.load import PointError, open_image, parse_point
    from kafkatool.ops.metadata.source import SourceError

    try:
        loaded = open_image(source, parse_point(at) if at else None)
    except (PointError, SourceError, ImageError) as exc:
        raise CliError(str(exc), EXIT_USAGE) from None
    return loaded


def _damage_exit(loaded) -> int:  # type: ignore[no-untyped-def]
    if loaded.skipped:
        first = loaded.skipped[0]
        sys.stdout.flush()
        sys.stderr.write(
            f"kafkatool: note: {len(loaded.skipped)} record(s) of {first.path} could not apply to what the file "
            f"held before them and were skipped, as Kafka's shell skips them (first at offset {first.offset}: "
            f"{first.reason})\n"
        )
    if loaded.damage:
        sys.stdout.flush()
        for d in loaded.damage:
            sys.stderr.write(f"kafkatool: {d.describe()}; the image holds what was read before it\n")
        return EXIT_FINDINGS
    return 0


def _check_release() -> None:
    """The shell's paths and text are Kafka 4.0's; 3.x's metadata shell had another tree."""
    from kafkatool import release

    chosen = release.explicit()
    if chosen is not None and not chosen.at_least("4.0"):
        raise CliError(
            f"--kafka-release {chosen}: the metadata shell's paths and text are Kafka 4.0's; "
            "3.x's metadata shell (another tree) is not reproduced",
            EXIT_USAGE,
        )


def _shell(command: str, source: Path, paths: list[str], at: str | None, fmt: str) -> int:
    from kafkatool.ops.metadata import tree as shell

    _check_release()
    check_format(fmt, SHELL_FORMATS)
    loaded = _load(source, at)
    root = shell.root_node(loaded.image)
    try:
        if fmt == "text":
            sys.stdout.write(shell.COMMANDS[command](root, paths))
        elif command == "tree":
            render_json(shell.tree_objects(root, paths))
        else:
            rows = {"ls": shell.ls_rows, "find": shell.find_rows, "cat": shell.cat_rows}[command](root, paths)
            render_rows(rows, fmt)
    except shell.FindError as exc:
        sys.stdout.write(exc.output if fmt == "text" else "")
        sys.stdout.flush()
        sys.stderr.write(f"kafkatool: {command}: {exc} (Kafka 4.0's shell stops here too)\n")
        return EXIT_FINDINGS
    return _damage_exit(loaded)


def _source_opt() -> Path:
    return typer.Option(..., "--snapshot", "-s", help=SOURCE_HELP)  # type: ignore[no-any-return]


@metadata_app.command(
    "ls",
    help="List metadata nodes (the shell's ls).\n\n\b\nExample:\n  kafkatool metadata ls /image/topics/byName -s /var/lib/kafka/meta",
)
@handle_errors
def ls_cmd(
    paths: list[str] = typer.Argument(None, help="Paths or globs (default: /)."),
    source: Path = _source_opt(),
    at: str = typer.Option(None, "--at", help=AT_HELP),
    fmt: str = typer.Option(
        "text", "--format", help="text (the shell's), json, ndjson or csv rows (dir, name, path, type)."
    ),
) -> int:
    return _shell("ls", source, list(paths or []), at, fmt)


@metadata_app.command(
    "cat",
    help="Show metadata files (the shell's cat).\n\n\b\nExample:\n  kafkatool metadata cat /image/cluster/brokers/4 -s /var/lib/kafka/meta",
    no_args_is_help=True,
)
@handle_errors
def cat_cmd(
    paths: list[str] = typer.Argument(..., help="Paths or globs of files."),
    source: Path = _source_opt(),
    at: str = typer.Option(None, "--at", help=AT_HELP),
    fmt: str = typer.Option(
        "text", "--format", help="text (the shell's), json, ndjson or csv rows (path, text)."
    ),
) -> int:
    return _shell("cat", source, list(paths), at, fmt)


@metadata_app.command(
    "tree",
    help="Show metadata nodes as a tree (the shell's tree).\n\n\b\nExample:\n  kafkatool metadata tree /image/configs -s /var/lib/kafka/meta",
    no_args_is_help=True,
)
@handle_errors
def tree_cmd(
    paths: list[str] = typer.Argument(..., help="Paths or globs."),
    source: Path = _source_opt(),
    at: str = typer.Option(None, "--at", help=AT_HELP),
    fmt: str = typer.Option(
        "text", "--format", help="text (the shell's) or json (one object per path matched)."
    ),
) -> int:
    check_format(fmt, ("text", "json"))
    return _shell("tree", source, list(paths), at, fmt)


@metadata_app.command(
    "find",
    help="List every node under paths (the shell's find).\n\n\b\nExample:\n  kafkatool metadata find /image/topics -s /var/lib/kafka/meta",
)
@handle_errors
def find_cmd(
    paths: list[str] = typer.Argument(None, help="Paths to start at (default: /)."),
    source: Path = _source_opt(),
    at: str = typer.Option(None, "--at", help=AT_HELP),
    fmt: str = typer.Option(
        "text", "--format", help="text (the shell's), json, ndjson or csv rows (path, type)."
    ),
) -> int:
    return _shell("find", source, list(paths or []), at, fmt)


@metadata_app.command(
    "shell",
    help=(
        "Run one metadata shell command line as kafka-metadata-shell.sh --snapshot SOURCE WORDS... does "
        "(its commands ls, cat, tree, find; anything else gets the shell's 'invalid choice' line).\n\n"
        "\b\nExample:\n  kafkatool metadata shell -s /var/lib/kafka/meta -- ls /image"
    ),
    no_args_is_help=True,
)
@handle_errors
def shell_cmd(
    words: list[str] = typer.Argument(..., help="The command and its arguments (after --)."),
    source: Path = _source_opt(),
    at: str = typer.Option(None, "--at", help=AT_HELP),
) -> int:
    from kafkatool.ops.metadata import tree as shell

    _check_release()
    if words and words[0] in shell.COMMANDS:
        return _shell(words[0], source, list(words[1:]), at, "text")
    loaded = _load(source, at)
    sys.stdout.write(shell.run_shell_words(shell.root_node(loaded.image), list(words)))
    return _damage_exit(loaded)


def _change_text(rows: list[dict], with_offset: bool) -> str:
    """kafkatool's text for change rows: one line each, `before -> after`."""
    from kafkatool.cli.render import dumps

    def val(v: object) -> str:
        return "-" if v is None else v if isinstance(v, str) else dumps(v)

    lines = []
    for r in rows:
        head = f"{r['offset']:>8} {r['time'] or '-':24} " if with_offset else ""
        what = f"{r['kind']} {r['name']}".rstrip() + (f" {r['field']}" if r["field"] else "")
        if r["change"] in ("added", "snapshot"):
            body = f"{r['change']}: {val(r['after'])}"
        elif r["change"] == "removed":
            body = f"removed (was {val(r['before'])})"
        elif r["change"] == "unchanged":
            body = "unchanged"
        else:
            body = f"{val(r['before'])} -> {val(r['after'])}"
        rec = f" [{r['record']}]" if with_offset else ""
        lines.append(f"{head}{what}: {body}{rec}\n")
    return "".join(lines)


@metadata_app.command(
    "diff",
    help=(
        "What changed between two points of a metadata log dir: topics, partitions (replicas, ISR, leader, "
        "epochs), configs, brokers, controllers, features, ACLs, producer ids.  A point is an offset (included) "
        "or an ISO-8601 time; B defaults to the newest the files hold.\n\n"
        "\b\nRows: kind, name, field, change (added, removed, set, changed, deleted), before, after.\n\n"
        "\b\nExamples:\n"
        "  kafkatool metadata diff 100 200 -s /var/lib/kafka/meta\n"
        "  kafkatool metadata diff 2026-11-28T07:41:50Z 2026-11-28T07:42:25Z -s /var/lib/kafka/meta --format json"
    ),
    no_args_is_help=True,
)
@handle_errors
def diff_cmd(
    a: str = typer.Argument(..., help="The earlier point: an offset or an ISO-8601 time."),
    b: str = typer.Argument(None, help="The later point (default: the newest)."),
    source: Path = typer.Option(
        ..., "--snapshot", "-s", help="A metadata log dir (__cluster_metadata-0 or the dir holding it)."
    ),
    fmt: str = typer.Option("text", "--format", help="text, json, ndjson, csv or table."),
) -> int:
    from kafkatool.ops.metadata.history import DIFF_COLUMNS, diff_images

    check_format(fmt)
    if source.is_file():
        raise CliError("diff needs a metadata log dir, not one file", EXIT_USAGE)
    la, lb = _load(source, a), _load(source, b)
    rows = diff_images(la.image, lb.image)
    if fmt == "text":
        sys.stdout.write(_change_text(rows, False))
    else:
        render_rows(rows, fmt, DIFF_COLUMNS)
    return max(_damage_exit(la), _damage_exit(lb))


@metadata_app.command(
    "history",
    help=(
        "Every change to one partition, broker or config in a metadata log dir, oldest first: the offset of "
        "the record that made it, its batch's append time, and what changed (one row per field).  The "
        "history starts at offset 0 when the log still holds it, else at the oldest snapshot it continues "
        "from (a 'snapshot' row with the state there).\n\n"
        "\b\nRows: offset, time, epoch, record, kind, name, field, change, before, after.\n\n"
        "\b\nExamples:\n"
        "  kafkatool metadata history --partition orders-3 -s /var/lib/kafka/meta\n"
        "  kafkatool metadata history --broker 4 -s /var/lib/kafka/meta --format csv\n"
        "  kafkatool metadata history --config TOPIC:orders/retention.ms -s /var/lib/kafka/meta\n"
        "  kafkatool metadata history --config BROKER/log.retention.ms -s /var/lib/kafka/meta"
    ),
    no_args_is_help=True,
)
@handle_errors
def history_cmd(
    source: Path = typer.Option(
        ..., "--snapshot", "-s", help="A metadata log dir (__cluster_metadata-0 or the dir holding it)."
    ),
    partition: str = typer.Option(None, "--partition", help="TOPIC-PARTITION, e.g. orders-3."),
    broker: str = typer.Option(None, "--broker", help="A broker id."),
    config: str = typer.Option(
        None,
        "--config",
        help="TYPE:NAME[/KEY] as the shell names configs: TOPIC:orders/retention.ms, BROKER:4, BROKER/log.retention.ms (the default).",
    ),
    fmt: str = typer.Option("text", "--format", help="text, json, ndjson, csv or table."),
) -> int:
    from kafkatool.ops.metadata.history import (
        HISTORY_COLUMNS,
        FilterError,
        history,
        parse_broker,
        parse_config,
        parse_partition,
    )
    from kafkatool.ops.metadata.load import PointError
    from kafkatool.ops.metadata.source import Damage, SourceError, partition_dir

    check_format(fmt)
    given = [
        (p, f) for p, f in ((partition, parse_partition), (broker, parse_broker), (config, parse_config)) if p
    ]
    if len(given) != 1:
        raise CliError("history: give exactly one of --partition, --broker, --config", EXIT_USAGE)
    damage: list[Damage] = []
    try:
        subject = given[0][1](given[0][0])
        rows = history(partition_dir(source), subject, damage)
    except (FilterError, SourceError, PointError) as exc:
        raise CliError(str(exc), EXIT_USAGE) from None
    if fmt == "text":
        sys.stdout.write(_change_text(rows, True))
    else:
        render_rows(rows, fmt, HISTORY_COLUMNS)
    if damage:
        sys.stdout.flush()
        for d in damage:
            sys.stderr.write(f"kafkatool: {d.describe()}; the history stops there\n")
        return EXIT_FINDINGS
    return 0


@metadata_app.command(
    "generate",
    help=(
        "Write a demo KRaft metadata dir (a controller's __cluster_metadata-0 with a snapshot, quorum-state "
        "and meta.properties) to try the metadata and quorum commands on: a scripted, deterministic history "
        "of a one-controller, two-broker cluster (topics, configs, a broker restart, an election, a deleted "
        "topic).\n\n"
        "\b\nExample:\n  kafkatool metadata generate /tmp/kt-meta && kafkatool metadata ls /image/topics/byName -s /tmp/kt-meta"
    ),
    no_args_is_help=True,
)
@handle_errors
def generate_cmd(
    meta_dir: Path = typer.Argument(..., help="The metadata dir to create (it gets __cluster_metadata-0/)."),
) -> None:
    from kafkatool.ops.metadata.generate import GenerateMetadataError, generate_metadata

    try:
        res = generate_metadata(meta_dir)
    except GenerateMetadataError as exc:
        raise CliError(str(exc), EXIT_USAGE) from None
    typer.echo(
        f"Wrote {res.records} metadata records (offsets 0 to {res.log_end_offset - 1}) and snapshot "
        f"{res.snapshot} to {res.partition_dir}"
    )
