"""`kafkatool index dump|verify|rebuild`: offset, time and transaction indexes checked and rebuilt."""

from __future__ import annotations

import sys
from contextlib import ExitStack

import typer

from kafkatool.cli.app import app, handle_errors
from kafkatool.cli.bulk_output import bulk_stdout
from kafkatool.cli.errors import EXIT_FAILURE, EXIT_FINDINGS, EXIT_USAGE, CliError

index_app = typer.Typer(
    name="index",
    help=(
        "Dump, verify and rebuild .index/.timeindex/.txnindex files of segments, partition dirs or log dirs.\n\n"
        "\b\nExamples:\n"
        "  kafkatool index dump /var/lib/kafka/orders-0/00000000000000000000.index\n"
        "  kafkatool index verify /var/lib/kafka\n"
        "  kafkatool index rebuild /var/lib/kafka/orders-0 --dry-run"
    ),
    no_args_is_help=True,
    context_settings={"help_option_names": ["-h", "--help"]},
)
app.add_typer(index_app, name="index")

PATHS_HELP = "Segment files (.log/.index/.timeindex/.txnindex), partition dirs or log dirs."
INTERVAL_HELP = "index.interval.bytes the rebuilt indexes use (the topic's setting; Kafka's default 4096)."

DUMP_HELP = """Print the entries of index files, as kafka-dump-log.sh does.

Text output is byte for byte what `kafka-dump-log.sh --files <index files>` prints (the offset
index entries are checked against the log as Kafka's tool does, mismatches reported on stderr);
--format json|ndjson gives dump-log's index_entry / time_index_entry / txn_index_entry objects.
A partition or log dir dumps every index file in it; a .log file dumps its segment's indexes.

\b
Exit codes: 0 ok; 1 a file could not be read to the end; 2 bad path or option; 3 a file was
renamed, replaced or truncated while it was read (no lock is taken).

\b
Examples:
  kafkatool index dump /var/lib/kafka/orders-0/00000000000000000000.index
  kafkatool index dump /var/lib/kafka/orders-0
  kafkatool index dump orders-0/00000000000000000000.log --format ndjson
"""

VERIFY_HELP = """Check index files against their log, as a broker and kafka-dump-log.sh would.

Per segment: the log is walked as broker recovery walks it (size fields, outer CRC, offsets within
int32 of the base) and its damage reported; .index and .timeindex get the broker's sanity checks
(size a multiple of the entry size, last offset not below the base, time index monotonic) and
cross-checks against the log: an offset entry points at the start of a batch, every batch before
it ends below the indexed offset and the offset is reached before the next entry (what lookups
rely on; with --strict, Kafka's tool's rule: the offset is the last offset of the batch at that
position, which 0.10 and 2.x brokers' own indexes do not always follow); a time entry carries the
max timestamp of the batch holding its offset; trailing zero entries of a crashed broker's
preallocated index are reported.  .txnindex gets its sanity check plus one entry per ABORT marker
in the log and no other.  One summary line per file.

\b
Formats: text (default), json (one array of per-file rows), ndjson, csv, table.
Exit codes: 0 clean; 1 problems found; 2 could not run (bad path or option); 3 a file kept changing
while it was read (no lock is taken: it is listed and verified again when a segment is swapped).

\b
Examples:
  kafkatool index verify /var/lib/kafka
  kafkatool index verify /var/lib/kafka/orders-0 --format table
  kafkatool index verify orders-0/00000000000000000000.timeindex --format json
"""

REBUILD_HELP = """Regenerate .index, .timeindex and .txnindex exactly as broker recovery writes them.

Entries follow LogSegment.recover: an offset entry (the batch's last offset at the batch's
position) whenever a batch starts more than --index-interval bytes after the last entry, the
running maximum timestamp in the time index, a final time entry for the segment's maximum; the
transaction index gets one entry per ABORT marker with the first offset and last stable offset the
broker's producer state gives (read from producer snapshots and the log before the segment).
Only the valid part of a damaged log is indexed; the damage is reported (exit 1) - run
`kafkatool recover` to truncate it.  Files are written beside the old ones and renamed over them.
Refuses while a broker holds the log dir's .lock (--dry-run takes no lock and reads again if a
segment is swapped or truncated meanwhile).

\b
Formats: text (default), json, ndjson, csv, table: one row per index file.
Exit codes: 0 done; 1 a log is damaged past its valid part; 2 bad path or option; 3 the log dir is
locked by a running broker, or an I/O error.

\b
Examples:
  kafkatool index rebuild /var/lib/kafka/orders-0 --dry-run
  kafkatool index rebuild /var/lib/kafka/orders-0/00000000000000004096.log
  kafkatool index rebuild /var/lib/kafka --index-interval 4096 --format table
"""

VERIFY_COLUMNS = ["file", "type", "status", "bytes", "entries", "problems", "findings", "note"]
REBUILD_COLUMNS = ["file", "type", "changed", "old_bytes", "new_bytes", "old_entries", "new_entries"]


def _targets(paths: list[str]):  # type: ignore[no-untyped-def]
    from kafkatool.ops.indexcheck import TargetError, resolve_targets

    if not paths:
        raise CliError("give at least one segment file, partition dir or log dir", EXIT_USAGE)
    try:
        return resolve_targets(paths)
    except TargetError as exc:
        raise CliError(str(exc), EXIT_USAGE) from None


def _note_live_log_dirs(targets) -> None:  # type: ignore[no-untyped-def]
    """Read-only modes take no lock: say so once per log dir a broker (or a writer) holds."""
    from kafkatool.ops.safety import lock_holder_note, log_dir_of

    for ld in dict.fromkeys(log_dir_of(t.dir) for t in targets):
        note = lock_holder_note(ld)
        if note:
            sys.stderr.write(f"kafkatool: {note}\n")


def _check_interval(index_interval: int) -> None:
    if index_interval < 0:
        raise CliError(f"--index-interval: {index_interval} is negative", EXIT_USAGE)


@index_app.command("dump", help=DUMP_HELP, no_args_is_help=True)
@handle_errors
def dump(
    paths: list[str] = typer.Argument(None, help=PATHS_HELP),
    output_format: str = typer.Option("text", "--format", help="text (Kafka's output), json or ndjson."),
) -> None:
    from kafkatool.ops.indexcheck import dump_index_files, index_files_of

    if output_format not in ("text", "json", "ndjson"):
        raise CliError(f"--format: {output_format!r} is not one of text, json, ndjson", EXIT_USAGE)
    targets = _targets(paths)
    files = [f for t in targets for f in index_files_of(t)]
    if not files:
        raise CliError("no index files found in the given paths", EXIT_USAGE)
    _note_live_log_dirs(targets)
    out = bulk_stdout()
    code = dump_index_files(files, output_format, out, sys.stderr.buffer)
    out.flush()
    if code:
        raise typer.Exit(code)


@index_app.command("verify", help=VERIFY_HELP, no_args_is_help=True)
@handle_errors
def verify(
    paths: list[str] = typer.Argument(None, help=PATHS_HELP),
    index_interval: int = typer.Option(
        4096, "--index-interval", help=INTERVAL_HELP + " Only used for notes."
    ),
    output_format: str = typer.Option("text", "--format", help="text, json, ndjson, csv or table."),
    strict: bool = typer.Option(
        False, "--strict", help="Kafka's tool's rule: entries name the last offset of a batch."
    ),
    quiet: bool = typer.Option(
        False, "--quiet", "-q", help="No progress bar; text output lists only problems."
    ),
) -> None:
    from kafkatool.cli.progress import progress
    from kafkatool.cli.render import check_format, render_rows
    from kafkatool.ops.indexcheck import verify_targets
    from kafkatool.ops.safety import read_consistently

    check_format(output_format)
    _check_interval(index_interval)
    targets = _targets(paths)
    _note_live_log_dirs(targets)
    total = sum(len(t.segments) for t in targets)
    with progress("verifying segments", total, quiet=quiet) as bar:
        # no lock: a segment swapped or truncated meanwhile makes it list and verify again
        checks = read_consistently(
            lambda: verify_targets(
                _targets(paths), index_interval, on_segment=lambda _s: bar.advance(1), strict=strict
            ),
            [t.dir for t in targets],
        )
    bad = [c for c in checks if not c.ok]
    if output_format == "text":
        out = []
        for c in checks:
            if c.ok:
                if quiet:
                    continue
                what = f"{c.entries} batches" if c.type == "log" else f"{c.entries} entries"
                out.append(
                    f"{c.file}: ok ({what}, {c.bytes} bytes)" + (f"; {c.note}" if c.note else "") + "\n"
                )
            else:
                n = len(c.findings)
                out.append(f"{c.file}: {n} problem{'s' if n != 1 else ''}\n")
                out.extend(f"  {f.kind}: {f.message}\n" for f in c.findings)
        out.append(f"{len(checks)} files checked, {len(bad)} with problems\n")
        sys.stdout.write("".join(out))
    else:
        render_rows((c.row() for c in checks), output_format, VERIFY_COLUMNS)
    if bad:
        raise typer.Exit(EXIT_FINDINGS)


@index_app.command("rebuild", help=REBUILD_HELP, no_args_is_help=True)
@handle_errors
def rebuild(
    paths: list[str] = typer.Argument(None, help=PATHS_HELP),
    index_interval: int = typer.Option(4096, "--index-interval", help=INTERVAL_HELP),
    dry_run: bool = typer.Option(False, "--dry-run", help="Report what would be written; change nothing."),
    output_format: str = typer.Option("text", "--format", help="text, json, ndjson, csv or table."),
    quiet: bool = typer.Option(
        False, "--quiet", "-q", help="No progress bar; text output lists only changes."
    ),
) -> None:
    from kafkatool.cli.progress import progress
    from kafkatool.cli.render import check_format, render_rows
    from kafkatool.ops.indexcheck import rebuild_target
    from kafkatool.ops.safety import LogDirLock, LogDirLockedError, log_dir_of, read_consistently

    check_format(output_format)
    _check_interval(index_interval)
    targets = _targets(paths)
    total = sum(len(t.segments) for t in targets)

    def run(targets, on_segment):  # type: ignore[no-untyped-def]
        changes, damaged = [], []
        for t in targets:
            res = rebuild_target(t, index_interval, dry_run, on_segment=on_segment)
            changes.extend(res.changes)
            damaged.extend(res.findings)
        return changes, damaged

    with ExitStack() as stack:
        if dry_run:  # a preview takes no lock; it lists and reads again if a segment changes meanwhile
            _note_live_log_dirs(targets)
        else:
            for ld in dict.fromkeys(log_dir_of(t.dir) for t in targets):
                try:
                    stack.enter_context(LogDirLock(ld))
                except LogDirLockedError as exc:
                    raise CliError(str(exc), EXIT_FAILURE) from None
        with progress("rebuilding indexes", total, quiet=quiet) as bar:
            step = lambda _s: bar.advance(1)  # noqa: E731
            if dry_run:
                changes, damaged = read_consistently(
                    lambda: run(_targets(paths), step), [t.dir for t in targets]
                )
            else:
                changes, damaged = run(targets, step)
    if output_format == "text":
        verb = "would rewrite" if dry_run else "rewrote"
        out = []
        for c in changes:
            if c.changed:
                old = "missing" if c.old_bytes is None else f"{c.old_bytes} bytes ({c.old_entries} entries)"
                out.append(f"{verb} {c.file}: {old} -> {c.new_bytes} bytes ({c.new_entries} entries)\n")
            elif not quiet:
                out.append(f"unchanged {c.file} ({c.new_entries} entries)\n")
        for d in damaged:
            for f in d.findings:
                out.append(
                    f"{d.file}: {f.message}; only the part before it is indexed - run `kafkatool recover`\n"
                )
        n = sum(1 for c in changes if c.changed)
        out.append(f"{len(changes)} index files, {n} {'to rewrite' if dry_run else 'rewritten'}\n")
        sys.stdout.write("".join(out))
    else:
        render_rows((c.row() for c in changes), output_format, REBUILD_COLUMNS)
        for d in damaged:
            for f in d.findings:
                sys.stderr.write(f"kafkatool: {d.file}: {f.message}\n")
    if damaged:
        raise typer.Exit(EXIT_FINDINGS)
