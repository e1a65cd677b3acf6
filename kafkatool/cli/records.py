"""`kafkatool records`: Kafka's kafka-delete-records.sh (DeleteRecords)."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from kafkatool.cli.app import EXIT_CODES_HELP, app, handle_errors
from kafkatool.cli.cluster_options import DEFAULT_TIMEOUT, BootstrapServer, CommandConfig, Timeout
from kafkatool.cli.errors import EXIT_USAGE, CliError
from kafkatool.cli.kraft_options import KafkaFormat, kraft_channel
from kafkatool.cli.render import check_format, render_rows

records_app = typer.Typer(
    name="records",
    help="""Records of partitions on the brokers: deleting those below an offset (kafka-delete-records.sh).

\b
Examples:
  kafkatool records delete --offset-json-file delete.json --bootstrap-server kafka1:9092
  kafkatool records delete --offset-json-file delete.json --dry-run --bootstrap-server kafka1:9092
""",
    no_args_is_help=True,
    context_settings={"help_option_names": ["-h", "--help"]},
)
app.add_typer(records_app, name="records")

DELETE_HELP = """Delete the records of partitions below an offset, as kafka-delete-records.sh does: each partition's
leader moves its log start offset (DeleteRecords) and the new low watermark, or the error, is printed
per partition in Kafka's text and order (--kafka-release, else the broker's release).

The offset JSON file: {"partitions": [{"topic": "orders", "partition": 0, "offset": 10}], "version": 1}
(offset -1: the high watermark, i.e. every record).  A malformed file, an unknown version or a partition
named twice is one line and exit 2, before anything is sent.

--dry-run deletes nothing: it lists each partition, the offset and its current leader.
--format json|ndjson|csv|table: rows topic, partition, offset, low_watermark, error.  As Kafka's tool, the
command exits 0 when the brokers answered, even for partitions that report an error (read the rows).

\b
Examples:
  kafkatool records delete --offset-json-file delete.json --bootstrap-server kafka1:9092
  kafkatool records delete --offset-json-file delete.json --dry-run --bootstrap-server kafka1:9092
  kafkatool records delete --offset-json-file delete.json --bootstrap-server kafka1:9092 --format csv
"""


@records_app.command("delete", help=DELETE_HELP + "\n" + EXIT_CODES_HELP, no_args_is_help=True)
@handle_errors
def delete(
    offset_json_file: Path | None = typer.Option(
        None, "--offset-json-file", metavar="FILE", help="Partitions and offsets to delete below (required)."
    ),
    dry_run: bool = typer.Option(False, "--dry-run", help="Show what would be deleted; delete nothing."),
    output_format: KafkaFormat = "text",
    bootstrap_server: BootstrapServer = None,
    command_config: CommandConfig = None,
    timeout: Timeout = DEFAULT_TIMEOUT,
) -> None:
    from kafkatool import release
    from kafkatool.cluster import records_delete as rd

    fmt = check_format(output_format)
    if offset_json_file is None:
        raise CliError("records delete: --offset-json-file is required")
    try:
        text = offset_json_file.read_text("utf-8")
    except FileNotFoundError:
        raise CliError(f"records delete: {offset_json_file}: no such file", EXIT_USAGE) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise CliError(f"records delete: {offset_json_file}: cannot read it ({exc})", EXIT_USAGE) from None
    try:
        offsets = rd.parse_offset_json(text)
    except rd.OffsetJsonError as exc:
        raise CliError(f"records delete: {offset_json_file}: {exc}", EXIT_USAGE) from None
    with kraft_channel(
        bootstrap_server, None, command_config, timeout, "records delete", controllers=False
    ) as channel:
        if dry_run:
            rows = rd.dry_run_rows(channel, offsets)
        else:
            results = rd.delete_records(channel, offsets, int(timeout * 1000))
        text_release = release.text_release()
    if dry_run:
        if fmt == "text":
            for r in rows:
                where = f"leader {r['leader']}" if r["error"] is None else r["error"]
                sys.stdout.write(
                    f"Would delete records of {r['topic']}-{r['partition']} below offset {r['offset']} "
                    f"({where})\n"
                )
            sys.stdout.write("Dry run: nothing deleted.\n")
        else:
            render_rows(rows, fmt, ["topic", "partition", "offset", "leader", "error"])
        return
    if fmt == "text":
        sys.stdout.write(rd.delete_text(results, text_release))
        sys.stdout.flush()
        sys.stderr.write(rd.handler_log(results, text_release))
    else:
        from kafkatool.cluster.kafka_errors import java_to_string

        render_rows(
            (
                {
                    "topic": t,
                    "partition": p,
                    "offset": r.offset,
                    "low_watermark": r.low_watermark,
                    "error": java_to_string(r.error_code) if r.error_code else None,
                }
                for (t, p), r in ((tp, results[tp]) for tp in rd.result_order(list(results), text_release))
            ),
            fmt,
            ["topic", "partition", "offset", "low_watermark", "error"],
        )
