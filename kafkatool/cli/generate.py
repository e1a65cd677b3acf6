"""`kafkatool generate`: write a realistic partition directory to try the other commands on."""

from __future__ import annotations

from pathlib import Path

import typer

from kafkatool.cli.app import app, handle_errors
from kafkatool.cli.errors import CliError

HELP = """Generate a log dir with one partition of test data (no cluster needed).

Writes what a broker would have: segments and their indexes, a .txnindex where transactions were
aborted, producer snapshots (transactional data), leader-epoch-checkpoint, and the log dir's offset
checkpoints (other partitions' entries kept). Refuses a partition dir that already holds segments,
and data that would not fit the free disk space.

\b
Examples:
  kafkatool generate /tmp/kt-demo
  kafkatool generate /tmp/kt-demo --topic orders --records 100000 --codec lz4
  kafkatool generate /tmp/kt-demo --magic 1 --codec gzip --key-space 50 --tombstones 0.1
  kafkatool generate /tmp/kt-demo --transactional --abort-ratio 0.3
  kafkatool generate /tmp/kt-demo --transactional --open-transaction
"""


@app.command("generate", help=HELP, no_args_is_help=True)
@handle_errors
def generate(
    log_dir: Path = typer.Argument(..., help="Log dir to create the partition directory in."),
    topic: str = typer.Option("demo", "--topic", help="Topic name (Kafka's rules: ASCII letters, digits, '.', '_', '-')."),
    partition: int = typer.Option(0, "--partition", help="Partition number (0 or more)."),
    records: int = typer.Option(1000, "--records", help="Number of data records."),
    batch_records: int = typer.Option(10, "--batch-records", help="Records per batch (or per compressed wrapper)."),
    magic: int = typer.Option(2, "--magic", help="Message format: 0, 1 or 2."),
    codec: str = typer.Option("none", "--codec", help="none, gzip, snappy, lz4 or zstd."),
    key_space: int = typer.Option(100, "--key-space", help="Distinct keys (0: keyless records)."),
    value_bytes: int = typer.Option(64, "--value-bytes", help="Size of each record's value."),
    tombstones: float = typer.Option(0.0, "--tombstones", help="Fraction (0 to 1) of keyed records that are tombstones."),
    transactional: bool = typer.Option(False, "--transactional", help="Write transactions with COMMIT/ABORT markers."),
    abort_ratio: float = typer.Option(0.0, "--abort-ratio", help="Fraction (0 to 1) of transactions aborted."),
    open_transaction: bool = typer.Option(False, "--open-transaction", help="Leave the last transaction open (no marker), as a producer killed mid-transaction does."),
    log_append_time: bool = typer.Option(False, "--log-append-time", help="Stamp batches with LogAppendTime."),
    segment_bytes: int = typer.Option(1024 * 1024, "--segment-bytes", help="Roll segments at this size."),
    seed: int = typer.Option(42, "--seed", help="Seed of the data: the same seed writes the same bytes."),
) -> None:
    from kafkatool.ops.generate import GenerateInputError, GenerateSpec, generate_partition

    spec = GenerateSpec(
        topic=topic, partition=partition, records=records, batch_records=batch_records, magic=magic, codec=codec,
        key_space=key_space, value_bytes=value_bytes, tombstone_ratio=tombstones, transactional=transactional,
        abort_ratio=abort_ratio, open_transaction=open_transaction, log_append_time=log_append_time, segment_bytes=segment_bytes, seed=seed,
    )
    try:
        res = generate_partition(log_dir, spec)
    except (GenerateInputError, FileExistsError) as exc:
        raise CliError(str(exc)) from None
    typer.echo(
        f"Wrote {res.records} records ({res.bytes} bytes) in {len(res.segments)} segment(s) to {res.partition_dir}"
    )
