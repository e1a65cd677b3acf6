"""`kafkatool recover`: a broker's startup log recovery, offline, with a preview and salvage."""

from __future__ import annotations

import sys
from contextlib import ExitStack
from pathlib import Path

import typer

from kafkatool.cli.app import app, handle_errors
from kafkatool.cli.errors import EXIT_FAILURE, EXIT_FINDINGS, EXIT_USAGE, CliError

HELP = """A broker's start-up log recovery, offline: with a preview, and salvage of what it drops.

Recovers a log dir or partition dir exactly as a broker does when it starts after an unclean
shutdown - without the broker, with a preview, and keeping what it would throw away.

In the broker's order: delete *.deleted files; resolve interrupted cleanings/swaps (.cleaned, .swap);
delete orphan indexes; recover segments - those whose index is missing or fails the sanity check,
and (unless the log dir has .kafka_cleanshutdown) every segment from the one holding the recovery
point in recovery-point-offset-checkpoint (0 when absent) on, or every segment with --full - by
validating each batch (size, outer CRC, offsets) and truncating at the first invalid or partial
one, deleting all later segments; rebuild .index/.timeindex/.txnindex (byte-identical to what the
broker writes with the same --index-interval); load leader-epoch-checkpoint as the broker does at
every start (entries past the new log end go, the first moves up to the log start - by Kafka 2.1's
or 3.x's rule, --kafka-version - and a missing one is created empty); delete producer snapshots
past the log end or corrupt; set the recovery point to the new log end offset and lower the high
watermark and cleaner checkpoints if above it.

--dry-run prints every change (files, byte ranges, offsets lost) and changes nothing.  --salvage DIR
first scans past the damage for further valid batches (framing + CRC; a v2 batch whose only damage
is its length field is repaired), writes every one of them - and every batch of the segments
recovery deletes - as valid segments to DIR/<partition>/, and reports the exact byte ranges and
offset ranges that could not be read (also in DIR/salvage-report.json).

Safety: refuses while a broker holds the log dir's .lock (--dry-run takes no lock: it previews a
live log dir, says so on stderr, and plans again if a segment is swapped or truncated under it; a
file that keeps changing is named, exit 3); new files are written beside the old and renamed in
(Kafka's .cleaned -> .swap -> .deleted protocol), so a kill at any point leaves a directory a
broker (or a re-run) loads to the same result; nothing is deleted without being reported.

\b
Formats: text (default), json (the whole report).
Exit codes: 0 done, no record lost; 1 records were (or, with --dry-run, would be) lost, or a
partition could not be recovered (see the report); 2 bad path or option; 3 the log dir is locked by
a running broker (not with --dry-run), a file kept changing while --dry-run read it, or an I/O error.

\b
Examples:
  kafkatool recover /var/lib/kafka --dry-run
  kafkatool recover /var/lib/kafka/orders-0
  kafkatool recover /var/lib/kafka/orders-0 --salvage /backup/orders-salvage
  kafkatool recover /var/lib/kafka --full --index-interval 4096 --format json
"""


def _render_text(plan, dry_run: bool, quiet: bool) -> str:  # type: ignore[no-untyped-def]
    would = "would " if dry_run else ""
    out = []
    if dry_run:
        out.append(f"dry run of recover in {plan.log_dir}: nothing is changed\n")
    for a in plan.actions:
        if a.kind in ("remove_clean_shutdown_marker", "salvage"):
            out.append(f"{would}{a.text}\n")
    for p in plan.partitions:
        if p.error:
            out.append(f"{p.name}: not recovered: {p.error}\n")
            continue
        head = f"{p.name}: "
        if p.recovered:
            segs = ", ".join(str(b) for b in p.recovered)
            head += f"recovered segment{'s' if len(p.recovered) != 1 else ''} {segs}"
        else:
            head += "no segment needed recovery"
        if p.log_end_before is not None and p.log_end_after != p.log_end_before:
            head += f"; log end offset {p.log_end_before} -> {p.log_end_after}"
        elif p.log_end_after is not None:
            head += f"; log end offset {p.log_end_after}"
        if not p.actions and not p.warnings:
            if not quiet:
                out.append(head + "; nothing to change\n")
            continue
        out.append(head + "\n")
        out.extend(f"  {would}{a.text}\n" for a in p.actions)
        out.extend(f"  ! {w}\n" for w in p.warnings)
    for a in plan.actions:
        if a.kind not in ("remove_clean_shutdown_marker", "salvage"):
            out.append(f"{would}{a.text}\n")
    for r in plan.salvage_reports:
        j = r.to_json()
        where = "would be written to" if dry_run else "written to"
        if j["batches"]:
            out.append(
                f"salvage {r.partition}: {j['batches']} batches ({j['bytes']} bytes) {where} {r.out_dir}\n"
            )
        else:
            out.append(f"salvage {r.partition}: nothing readable past the damage\n")
        for f in j["files"]:  # type: ignore[union-attr]
            spans = ", ".join(f"{a}..{b}" for a, b in f["salvaged_offsets"]) or "none"
            unreadable = ", ".join(f"{a}..{b}" for a, b in f["lost_byte_ranges"]) or "none"
            out.append(f"  {f['file']}: salvaged offsets {spans}; unreadable bytes {unreadable}\n")
            for rep in f["repaired"]:
                out.append(f"    repaired batch at position {rep['position']}: {rep['repaired']}\n")
        lost_off = ", ".join(f"{a}..{'?' if b is None else b}" for a, b in r.lost_offsets) or "none"
        out.append(f"  offsets lost: {lost_off}\n")
    out.extend(f"! {w}\n" for w in plan.warnings)
    lost = [p for p in plan.partitions if p.data_loss]
    failed = [p for p in plan.partitions if p.error]
    summary = f"{len(plan.partitions)} partition{'s' if len(plan.partitions) != 1 else ''}"
    if lost:
        summary += f", {len(lost)} with records {'to be removed' if dry_run else 'removed'} from the log"
    else:
        summary += ", no records lost"
    if failed:
        summary += f", {len(failed)} not recovered"
    out.append(summary + "\n")
    return "".join(out)


@app.command("recover", help=HELP, no_args_is_help=True)
@handle_errors
def recover_cmd(
    path: Path = typer.Argument(..., help="A log dir, or one partition dir (e.g. /var/lib/kafka/orders-0)."),
    full: bool = typer.Option(
        False, "--full", help="Recover every segment (ignore the recovery point and a clean shutdown)."
    ),
    dry_run: bool = typer.Option(
        False, "--dry-run", help="Print every change recover would make; change nothing."
    ),
    salvage: Path = typer.Option(
        None,
        "--salvage",
        metavar="OUTDIR",
        help="Write every valid batch past the damage (and of deleted segments) here first.",
    ),
    index_interval: int = typer.Option(
        4096,
        "--index-interval",
        help="index.interval.bytes of the rebuilt indexes (the topic's; Kafka's default 4096).",
    ),
    kafka_version: str = typer.Option(
        "3",
        "--kafka-version",
        help="Whose load rules for the leader-epoch cache: 3 (Kafka 3.x, default) or 2.1.",
    ),
    output_format: str = typer.Option("text", "--format", help="text or json."),
    quiet: bool = typer.Option(
        False, "--quiet", "-q", help="No progress bar; skip partitions with nothing to change."
    ),
) -> None:
    from kafkatool.cli.progress import progress
    from kafkatool.cli.render import render_json
    from kafkatool.ops.recover import KAFKA_VERSIONS, RecoverInputError, RecoverOptions, classify, recover
    from kafkatool.ops.safety import LogDirLock, LogDirLockedError, lock_holder_note

    if output_format not in ("text", "json"):
        raise CliError(f"--format: {output_format!r} is not one of text, json", EXIT_USAGE)
    if kafka_version not in KAFKA_VERSIONS:
        raise CliError(f"--kafka-version: {kafka_version!r} is not one of {', '.join(KAFKA_VERSIONS)}", EXIT_USAGE)
    if index_interval < 0:
        raise CliError(f"--index-interval: {index_interval} is negative", EXIT_USAGE)
    try:
        log_dir, parts = classify(path)
    except RecoverInputError as exc:
        raise CliError(str(exc), EXIT_USAGE) from None
    options = RecoverOptions(
        full=full, dry_run=dry_run, index_interval=index_interval, salvage_dir=salvage, kafka_version=kafka_version
    )
    with ExitStack() as stack:
        if dry_run:  # a preview reads only: it takes no lock, so it works beside a running broker
            note = lock_holder_note(log_dir)
            if note:
                sys.stderr.write(f"kafkatool: {note}\n")
        else:
            try:
                stack.enter_context(LogDirLock(log_dir))
            except LogDirLockedError as exc:
                raise CliError(str(exc), EXIT_FAILURE) from None
        try:
            with progress("recovering segments", None, quiet=quiet) as bar:
                plan = recover(path, options, on_segment=lambda _p, _b: bar.advance(1))
        except RecoverInputError as exc:
            raise CliError(str(exc), EXIT_USAGE) from None
    if output_format == "json":
        render_json(plan.to_json())
    else:
        sys.stdout.write(_render_text(plan, dry_run, quiet))
    if plan.data_loss or plan.errors:
        raise typer.Exit(EXIT_FINDINGS)
