"""`kafkatool dump-log`: Kafka's kafka-dump-log.sh, byte-exact, with JSON output."""

from __future__ import annotations

import sys

import typer

from kafkatool.cli.app import app, handle_errors
from kafkatool.cli.bulk_output import bulk_stdout
from kafkatool.cli.errors import EXIT_USAGE, CliError

HELP = """Dump segment, index, snapshot and checkpoint files, as Kafka's kafka-dump-log.sh does.

Default text output is byte-for-byte what the newest modelled Kafka release's tool prints (4.4),
or another's with --kafka-release 3.3|4.0|4.1|4.2|4.3|4.4 (decoders' JSON from 4.0, transaction log
as JSON from 4.1, files without a dot ignored and continuity checked from offset -1 from 4.3: see
docs/dump-log.md); --format json|ndjson emits one object per batch (records nested with
--deep-iteration) or per record with --records.

\b
Examples:
  kafkatool dump-log --files /var/lib/kafka/orders-0/00000000000000000000.log
  kafkatool dump-log --files 00000000000000000000.log --print-data-log
  kafkatool dump-log --files __consumer_offsets-7/00000000000000000000.log --offsets-decoder
  kafkatool dump-log --files 00000000000000000000.index,00000000000000000000.timeindex --verify-index-only
  kafkatool dump-log --files 00000000000000000000.log --deep-iteration --format ndjson --records
  kafkatool dump-log --kafka-release 3.3 --files 00000000000000000000.snapshot
  kafkatool dump-log --kafka-release 4.0 --files __transaction_state-0/00000000000000000000.log --transaction-log-decoder
"""


@app.command("dump-log", help=HELP, no_args_is_help=True)
@handle_errors
def dump_log(
    files: str = typer.Option(None, "--files", help="Comma-separated files to dump (Kafka's option)."),
    paths: list[str] = typer.Argument(None, help="More files to dump (alternative to --files)."),
    print_data_log: bool = typer.Option(
        False, "--print-data-log", help="Print record keys and values (implies --deep-iteration)."
    ),
    deep_iteration: bool = typer.Option(
        False, "--deep-iteration", help="Print every record, decompressing batches."
    ),
    verify_index_only: bool = typer.Option(
        False, "--verify-index-only", help="Check index entries against the log; print only mismatches."
    ),
    index_sanity_check: bool = typer.Option(
        False, "--index-sanity-check", help="Run the broker's startup sanity check on index files."
    ),
    max_message_size: int = typer.Option(
        5 * 1024 * 1024, "--max-message-size", help="Largest batch looked at when verifying an index."
    ),
    max_bytes: int = typer.Option(2**31 - 1, "--max-bytes", help="Read at most this many bytes of each log."),
    skip_record_metadata: bool = typer.Option(
        False, "--skip-record-metadata", help="With --print-data-log, print only keys and values."
    ),
    key_decoder_class: str = typer.Option(
        "string",
        "--key-decoder-class",
        help="Key decoder: string, hex, base64, json, integer, long, bytes, or a Kafka decoder class name.",
    ),
    value_decoder_class: str = typer.Option(
        "string", "--value-decoder-class", help="Value decoder (same choices as --key-decoder-class)."
    ),
    offsets_decoder: bool = typer.Option(
        False, "--offsets-decoder", help="Decode __consumer_offsets records."
    ),
    transaction_log_decoder: bool = typer.Option(
        False, "--transaction-log-decoder", help="Decode __transaction_state records."
    ),
    cluster_metadata_decoder: bool = typer.Option(
        False, "--cluster-metadata-decoder", help="Decode KRaft __cluster_metadata records and snapshots."
    ),
    remote_log_metadata_decoder: bool = typer.Option(
        False,
        "--remote-log-metadata-decoder",
        help="Decode tiered storage's __remote_log_metadata records (Kafka 4.0).",
    ),
    share_group_state_decoder: bool = typer.Option(
        False,
        "--share-group-state-decoder",
        help="Decode __share_group_state records (share groups; Kafka 4.0).",
    ),
    output_format: str = typer.Option(
        "text", "--format", help="text (Kafka's output), json (one array) or ndjson (one object a line)."
    ),
    records: bool = typer.Option(
        False,
        "--records",
        help="JSON: one object per record instead of per batch (implies --deep-iteration).",
    ),
    jobs: int = typer.Option(
        0,
        "--jobs",
        "-j",
        help="Processes for --deep-iteration text on logs over 32 MiB (0: one per CPU with the pure-Python core, one process with the compiled core, whose record lines outrun the workers' pipe; 1: no workers). The output is the same.",
    ),
) -> None:
    targets = [f for f in (files or "").split(",") if f] + list(paths or [])
    if not targets:
        raise CliError("dump-log: give files with --files a,b or as arguments", EXIT_USAGE)
    if output_format not in ("text", "json", "ndjson"):
        raise CliError(f"--format: {output_format!r} is not one of text, json, ndjson", EXIT_USAGE)
    decoders = [
        n
        for n, on in (
            ("offsets", offsets_decoder),
            ("transaction", transaction_log_decoder),
            ("cluster-metadata", cluster_metadata_decoder),
            ("remote-log-metadata", remote_log_metadata_decoder),
            ("share-group-state", share_group_state_decoder),
        )
        if on
    ]
    if len(decoders) > 1:
        raise CliError(
            "choose at most one of --offsets-decoder, --transaction-log-decoder, --cluster-metadata-decoder, "
            "--remote-log-metadata-decoder, --share-group-state-decoder"
        )
    if jobs < 0:
        raise CliError("--jobs must be 0 (one per CPU) or a positive number")
    if max_bytes < 0 or max_message_size <= 0:
        raise CliError("--max-bytes and --max-message-size must be positive")
    from kafkatool.ops.dumplog import DumpOptions, dump_files  # not for --help or the command list

    try:
        opts = DumpOptions(
            print_data_log=print_data_log,
            deep_iteration=deep_iteration or records,
            verify_index_only=verify_index_only,
            index_sanity_check=index_sanity_check,
            max_message_size=max_message_size,
            max_bytes=max_bytes,
            skip_record_metadata=skip_record_metadata,
            payload_decoder=decoders[0] if decoders else None,
            key_decoder=key_decoder_class,
            value_decoder=value_decoder_class,
            output=output_format,
            per_record=records,
            jobs=jobs,
        )
    except ValueError as exc:
        raise CliError(str(exc)) from None
    out = bulk_stdout()
    err = sys.stderr.buffer
    result = dump_files(targets, opts, out, err)
    out.flush()
    err.flush()
    if result.exit_code:
        raise typer.Exit(result.exit_code)
