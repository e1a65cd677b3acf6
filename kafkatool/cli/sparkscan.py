"""`kafkatool spark-scan`: summaries, top keys, timelines and SQL over raw segment files, on Spark."""

from __future__ import annotations

import datetime as _dt
import signal
import sys
import threading
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from typing import Any

import typer

from kafkatool.cli.app import app, handle_errors
from kafkatool.cli.errors import EXIT_USAGE, CliError
from kafkatool.cli.progress import progress
from kafkatool.cli.render import check_format, render_rows
from kafkatool.cli.signals import Terminated

QUERIES = ("summary", "keys", "timeline", "sql")
ENGINES = ("spark", "local")
OUTPUT_FORMATS = ("parquet", "json", "csv")
PRINT_FORMATS = ("table", "json", "ndjson", "csv")

HELP = """Scan raw Kafka segment files with Spark: per-partition summary, top keys, records per minute, or SQL.

PATHs are log dirs, partition dirs or .log segment files, local or on any filesystem pyarrow reaches
(hdfs://namenode/path, s3://bucket/prefix).  Big segments are split on batch boundaries (found with
the .index) into tasks of about --split-size, so one 1 GiB segment runs in parallel.

\b
Queries (--format json prints one JSON array of row objects):
  summary   per topic-partition: topic, partition, segments, batches, records, bytes,
            uncompressed_bytes, compression_ratio, first_offset, last_offset, min_timestamp,
            max_timestamp, keyed_records, keyless_records, distinct_keys, tombstones,
            txn_markers, txn_aborts, reclaimable_records, reclaimable_bytes
  keys      top keys of data records: topic, key, key_hex, records, payload_bytes, tombstones
  timeline  data records per minute: topic, minute, minute_ms, records, payload_bytes
  sql       --sql over the views `records` (one row per record) and `batches` (one per batch)

\b
Examples:
  kafkatool spark-scan /var/lib/kafka/data
  kafkatool spark-scan /backup/kafka-logs --query keys --topic orders --top 50 --format json
  kafkatool spark-scan /backup/kafka-logs --query timeline --format csv > per-minute.csv
  kafkatool spark-scan s3://backups/kafka --sql "SELECT partition, count(*) FROM records WHERE offset >= 1000 GROUP BY 1"
  kafkatool spark-scan /data --master spark://spark-master:7077 --output /shared/summary --output-format parquet
  kafkatool spark-scan /data/orders-0 --engine local        # single process, no Spark
"""


def _parse_conf(items: Sequence[str] | None) -> dict[str, str]:
    conf = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise CliError(f"--spark-conf: {item!r} is not KEY=VALUE", EXIT_USAGE)
        conf[key.strip()] = value
    return conf


def _text(value: Any) -> Any:
    """Bytes as UTF-8 text (invalid sequences replaced), recursively; everything else unchanged."""
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value).decode("utf-8", "replace")
    if isinstance(value, list):
        return [_text(v) for v in value]
    if isinstance(value, dict):
        return {k: _text(v) for k, v in value.items()}
    return value


def _minute(ms: int | None) -> str | None:
    if ms is None:
        return None
    return _dt.datetime.fromtimestamp(ms / 1000, _dt.UTC).strftime("%Y-%m-%dT%H:%MZ")


def present(query: str, rows: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[str] | None]:
    """Rows as printed (keys as text + hex, minutes as ISO-8601) and their column order."""
    if query == "keys":
        out = [
            {
                "topic": r["topic"],
                "key": _text(r["key"]),
                "key_hex": bytes(r["key"]).hex(),
                "records": r["records"],
                "payload_bytes": r["payload_bytes"],
                "tombstones": r["tombstones"],
            }
            for r in rows
        ]
        return out, ["topic", "key", "key_hex", "records", "payload_bytes", "tombstones"]
    if query == "timeline":
        out = [
            {
                "topic": r["topic"],
                "minute": _minute(r["minute_ms"]),
                "minute_ms": r["minute_ms"],
                "records": r["records"],
                "payload_bytes": r["payload_bytes"],
            }
            for r in rows
        ]
        return out, ["topic", "minute", "minute_ms", "records", "payload_bytes"]
    if query == "summary":
        from kafkatool.slices.rows import SUMMARY_COLUMNS

        return rows, list(SUMMARY_COLUMNS)
    return [_text(r) for r in rows], None


@app.command("spark-scan", help=HELP, no_args_is_help=True)
@handle_errors
def spark_scan(
    paths: list[str] = typer.Argument(..., help="Log dirs, partition dirs or segment files (paths or URIs)."),
    master: str = typer.Option(None, "--master", help="Spark master URL (default local[*], or what spark-submit set)."),
    query: str = typer.Option("summary", "--query", help="summary, keys, timeline or sql."),
    sql: str = typer.Option(None, "--sql", help="SQL over the views `records` and `batches` (implies --query sql)."),
    engine: str = typer.Option("spark", "--engine", help="spark, or local (single process; not for sql/--output)."),
    output: str = typer.Option(None, "--output", "-o", help="Write the result into this directory instead of printing it."),
    output_format: str = typer.Option("parquet", "--output-format", help="parquet, json or csv (with --output)."),
    overwrite: bool = typer.Option(False, "--overwrite", help="Replace an existing --output directory."),
    fmt: str = typer.Option("table", "--format", "-f", help="Printed result: table, json (one array), ndjson or csv."),
    split_size: str = typer.Option("128MiB", "--split-size", help="Bytes per task (e.g. 134217728, 128MiB, 64m)."),
    topics: list[str] = typer.Option(None, "--topic", "-t", help="Only these topics (repeat or comma-separate)."),
    top: int = typer.Option(20, "--top", help="keys: how many keys to show."),
    by: str = typer.Option("records", "--by", help="keys: rank by records or payload_bytes."),
    approx: bool = typer.Option(False, "--approx", help="summary: HyperLogLog distinct keys, no per-key shuffle."),
    on_corrupt: str = typer.Option("fail", "--on-corrupt", help="fail (exit 1 naming file and position) or skip."),
    verify_crc: bool = typer.Option(False, "--verify-crc", help="Check every batch's CRC."),
    no_index: bool = typer.Option(False, "--no-index", help="Do not use .index/.timeindex files (walk headers)."),
    limit: int = typer.Option(1000, "--limit", help="sql: print at most this many rows (0 = all)."),
    spark_conf: list[str] = typer.Option(None, "--spark-conf", help="Extra Spark setting KEY=VALUE (repeatable)."),
    executor_timeout: float = typer.Option(120.0, "--executor-timeout", help="Seconds to wait for executors on a cluster."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bar."),
) -> None:
    from kafkatool.ops.scan import ScanSettings
    from kafkatool.sizes import SizeError, parse_size
    from kafkatool.slices.planning import ScanFilter, ScanInputError, discover
    from kafkatool.slices.reading import ON_CORRUPT
    from kafkatool.slices.rows import KEYS_ORDER
    from kafkatool.slices.storage import StorageError

    if sql is not None:
        query = "sql"
    if query not in QUERIES:
        raise CliError(f"--query: {query!r} is not one of {', '.join(QUERIES)}")
    if query == "sql" and not (sql or "").strip():
        raise CliError("--query sql needs --sql \"SELECT ... FROM records\"")
    if engine not in ENGINES:
        raise CliError(f"--engine: {engine!r} is not one of {', '.join(ENGINES)}")
    if engine == "local" and (query == "sql" or output):
        raise CliError("--engine local computes summary, keys and timeline only; sql and --output need Spark")
    check_format(fmt, PRINT_FORMATS)
    if output_format not in OUTPUT_FORMATS:
        raise CliError(f"--output-format: {output_format!r} is not one of {', '.join(OUTPUT_FORMATS)}")
    if on_corrupt not in ON_CORRUPT:
        raise CliError(f"--on-corrupt: {on_corrupt!r} is not one of {', '.join(ON_CORRUPT)}")
    if by not in KEYS_ORDER:
        raise CliError(f"--by: {by!r} is not one of {', '.join(KEYS_ORDER)}")
    if top <= 0 or limit < 0:
        raise CliError("--top must be positive and --limit not negative")
    conf = _parse_conf(spark_conf)
    if output and not overwrite:
        _refuse_existing(output)
    wanted = tuple(dict.fromkeys(t.strip() for item in topics or [] for t in item.split(",") if t.strip()))
    try:
        split = parse_size(split_size)
    except SizeError as exc:
        raise CliError(f"--split-size: {exc}") from None
    try:
        segments = discover(paths)  # fails fast, before Spark starts, on a missing path or a typo
    except ScanInputError as exc:
        raise CliError(str(exc)) from None
    except StorageError as exc:
        raise CliError(str(exc)) from None
    if wanted:
        present_topics = {s.topic for s in segments}
        missing = [t for t in wanted if t not in present_topics]
        if missing:
            raise CliError(f"--topic: no segments of {', '.join(missing)} under {', '.join(paths)}")
    settings = ScanSettings(
        split_size=split,
        flt=ScanFilter(topics=frozenset(wanted)) if wanted else ScanFilter(),
        on_corrupt=on_corrupt,
        verify_crc=verify_crc,
        use_index=not no_index,
    )
    rows: list[dict[str, Any]] | None
    if engine == "local":
        rows = _run_local(paths, query, settings, top, by, quiet)
    else:
        rows = _run_spark(paths, query, sql, settings, wanted, master, conf, executor_timeout, top, by, approx,
                          limit, output, output_format, overwrite, quiet)
    if rows is None:
        return
    shown, columns = present(query, rows)
    render_rows(shown, fmt, columns, title=f"spark-scan {query}")


def _run_local(paths: list[str], query: str, settings: Any, top: int, by: str, quiet: bool) -> list[dict[str, Any]]:
    from kafkatool.ops.scan import planned_bytes, scan
    from kafkatool.slices.reading import CorruptSegmentError

    try:
        total = planned_bytes(paths, settings) if not quiet and sys.stderr.isatty() else None
        with progress("scanning", total, quiet=quiet, unit_bytes=True) as bar:
            acc = scan(paths, settings, bar, queries=(query,))
    except CorruptSegmentError as exc:
        from kafkatool.spark.session import explain_error

        raise CliError(*explain_error(exc)) from None
    if query == "summary":
        return acc.summary_rows()
    if query == "keys":
        return acc.key_rows(top, by)
    return acc.timeline_rows()


def _run_spark(
    paths: list[str], query: str, sql: str | None, settings: Any, topics: tuple[str, ...], master: str | None,
    conf: dict[str, str], executor_timeout: float, top: int, by: str, approx: bool, limit: int,
    output: str | None, output_format: str, overwrite: bool, quiet: bool,
) -> list[dict[str, Any]] | None:
    from kafkatool.cli.app import _state
    from kafkatool.spark import queries as q
    from kafkatool.spark.session import JobWatcher, context_of, explain_error, spark_session

    log_path = None
    try:
        with ExitStack() as stack:
            stack.enter_context(_sigterm_as_interrupt())  # so the JVM is ended on `kill` as on Ctrl-C
            with progress("starting Spark", None, quiet=quiet):  # the JVM takes a while to come up
                session = stack.enter_context(
                    spark_session(master, conf, jvm_log=not _state["debug"], executor_timeout=executor_timeout,
                                  sql=query == "sql" or approx or bool(output))
                )
            log_path = session.log_path
            spark = session.spark  # without sql, only a SparkContext: the exact queries are RDD jobs
            opts = q.SourceOptions(
                split_size=settings.split_size,
                min_partitions=context_of(spark).defaultParallelism,
                on_corrupt=settings.on_corrupt,
                verify_crc=settings.verify_crc,
                use_index=settings.use_index,
                topics=topics,
            )
            compute = {  # the exact queries: RDD jobs whose small results come back as rows
                "summary": None if approx else lambda: q.summary_rows(spark, paths, opts),
                "keys": lambda: q.top_keys_rows(spark, paths, opts, top, by),
                "timeline": lambda: q.timeline_rows(spark, paths, opts),
            }.get(query)
            df = None
            if query == "summary" and approx:
                df = q.summary(spark, paths, opts, approx=True)
            elif query == "sql":
                q.register_views(spark, paths, opts)
                df = spark.sql(sql)
            with progress(f"spark-scan {query}", None, quiet=quiet) as bar, JobWatcher(
                spark, lambda done, total: bar.update(completed=done, total=total or None)
            ):
                result = None
                if compute is not None:
                    result = compute()
                    if output:
                        df, result = q.frame(spark, query, result), None
                if df is not None and output:
                    _write(df, query, output, output_format, overwrite)
                elif df is not None:
                    result = q.rows(df.limit(limit + 1) if query == "sql" and limit else df)
    except (CliError, typer.Exit):
        raise
    except Exception as exc:  # Spark reports everything (task failures, bad SQL) as exceptions
        raise CliError(*explain_error(exc, log_path)) from None
    if output:
        if not quiet:
            sys.stderr.write(f"kafkatool: spark-scan: wrote the {query} result to {output} ({output_format})\n")
        return None
    assert result is not None
    if query == "sql" and limit and len(result) > limit:
        result = result[:limit]
        if not quiet:
            sys.stderr.write(f"kafkatool: spark-scan: showing the first {limit} rows (--limit 0 shows all, "
                             "--output writes all)\n")
    return result


@contextmanager
def _sigterm_as_interrupt() -> Iterator[None]:
    """SIGTERM unwinds like Ctrl-C while Spark runs (also where `kafkatool.cli.signals` did not set it up,
    e.g. in-process), so the session's clean-up ends its JVM."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(signum: int, frame: Any) -> None:
        raise Terminated()

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _refuse_existing(output: str) -> None:
    from kafkatool.slices import storage

    try:
        storage.stat(storage.normalize(output))
    except FileNotFoundError:
        return
    raise CliError(f"--output: {output} already exists (--overwrite replaces it)")


def _write(df: Any, query: str, output: str, output_format: str, overwrite: bool) -> None:
    from pyspark.sql import functions as F
    from pyspark.sql.types import ArrayType, BinaryType, MapType, StructType

    if query == "keys":
        df = df.select("topic", F.col("key"), F.lower(F.hex("key")).alias("key_hex"), "records",
                       "payload_bytes", "tombstones")
    if output_format == "csv":  # CSV holds neither bytes nor nested values: base64 and JSON text
        cols = []
        for f in df.schema.fields:
            if isinstance(f.dataType, BinaryType):
                cols.append(F.base64(F.col(f.name)).alias(f.name))
            elif isinstance(f.dataType, (ArrayType, MapType, StructType)):
                cols.append(F.to_json(F.col(f.name)).alias(f.name))
            else:
                cols.append(F.col(f.name))
        df = df.select(*cols)
    writer = df.write.mode("overwrite" if overwrite else "errorifexists").format(output_format)
    if output_format == "csv":
        writer = writer.option("header", "true")
    writer.save(output)
