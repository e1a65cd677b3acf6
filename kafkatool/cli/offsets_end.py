"""`kafkatool offsets end` (GetOffsetShell): partitions' offsets at a time, `topic:partition:offset`.

GetOffsetShell's `--time` words and values, `--topic-partitions` rules (`kafkatool.ops.topic_partitions`)
and ListOffsets' isolation level, with the rows in the release's order
(`kafkatool.ops.offsets_report.get_offset_shell`).  Registers on the `offsets` app and takes its
shared options and connection helpers from `kafkatool.cli.offsets`.
"""

from __future__ import annotations

import re
import sys
from typing import Any

import typer

from kafkatool.cli.app import EXIT_CODES_HELP, handle_errors
from kafkatool.cli.cluster_options import CommandConfig
from kafkatool.cli.errors import CliError
from kafkatool.cli.offsets import (
    _BOOTSTRAP,
    _TIMEOUT,
    TEXT_FORMATS,
    _brokers,
    _check_source,
    _check_timeout,
    _emit,
    _profile,
    _translate,
    _zookeeper,
    offsets_app,
)
from kafkatool.cli.render import check_format, render_rows
from kafkatool.release import text_release

END_HELP = """Offsets of partitions at a time, as GetOffsetShell prints them: `topic:partition:offset`.

--time -1 / latest (default): log-end offsets; -2 / earliest: log-start offsets; -3 /
max-timestamp: the offset of the record with the largest timestamp; a timestamp in ms: the first
offset whose record timestamp is at or after it (partitions with none are left out, as Kafka does).
--topic is a regular expression matched against whole topic names. --topic-partitions takes
GetOffsetShell's rules instead: TOPIC_REGEX[:N | :N-M | :N- | :-M], comma-separated (M exclusive).
Rows come in the release's order: 3.x by topic then partition, 4.0 as strings (big:0 big:1 big:10 big:2).
--isolation-level read_committed:
the last stable offset instead of the high watermark for latest (what a read_committed consumer can
read up to; an open transaction holds it back), as kcat's -o end with isolation.level.

\b
Examples:
  kafkatool offsets end --bootstrap-server kafka:9092 --topic orders
  kafkatool offsets end --bootstrap-server kafka:9092 --topic payments --isolation-level read_committed
  kafkatool offsets end --bootstrap-server kafka:9092 --topic 'orders.*' --time -2
  kafkatool offsets end --bootstrap-server kafka:9092 --topic orders --partitions 0,1 --time 1700000000000
  kafkatool offsets end --bootstrap-server kafka:9092 --topic-partitions 'orders:1,big:3-5'
  kafkatool offsets end --zookeeper zk:2181 --topic orders --format json
"""

_TIME_WORDS = {"latest": -1, "earliest": -2, "max-timestamp": -3}
_ISOLATION_LEVELS = {"read_uncommitted": 0, "read_committed": 1}  # ListOffsets' IsolationLevel


@offsets_app.command("end", help=END_HELP + "\n" + EXIT_CODES_HELP, no_args_is_help=True)
@handle_errors
def end(
    topic: str = typer.Option(None, "--topic", "-t", help="Topic name or regular expression (all topics when absent)."),
    partitions: str = typer.Option(None, "--partitions", help="Comma-separated partition ids."),
    topic_partitions: str = typer.Option(None, "--topic-partitions", metavar="RULES",
                                         help="GetOffsetShell's topic-partition rules, comma-separated: TOPIC_REGEX[:N | :N-M (M exclusive) | :N- | :-M], e.g. 'orders:1,big:3-5'."),
    time_spec: str = typer.Option("-1", "--time", help="-1/latest, -2/earliest, -3/max-timestamp, or a timestamp in ms."),
    bootstrap_server: str = _BOOTSTRAP,
    zookeeper: str = typer.Option(None, "--zookeeper", help="Find the brokers through ZooKeeper."),
    command_config: CommandConfig = None,
    exclude_internal_topics: bool = typer.Option(False, "--exclude-internal-topics", help="Leave out __consumer_offsets and the like."),
    output_format: str = typer.Option("text", "--format", help="text (GetOffsetShell's), json, ndjson, csv or table."),
    isolation_level: str = typer.Option("read_uncommitted", "--isolation-level",
                                        help="read_uncommitted (the high watermark) or read_committed (the last stable offset)."),
    timeout: float = _TIMEOUT,
) -> None:
    fmt = check_format(output_format, TEXT_FORMATS)
    if isolation_level not in _ISOLATION_LEVELS:
        raise CliError(f"--isolation-level: {isolation_level!r} is not one of read_uncommitted, read_committed")
    deadline = _check_timeout(timeout)
    zookeeper, bootstrap_server, command_config = _profile(zookeeper, bootstrap_server, command_config, None)
    _check_source(bootstrap_server, zookeeper, None, offline_ok=False)
    spec = _TIME_WORDS.get(time_spec)
    if spec is None:
        try:
            spec = int(time_spec)
        except ValueError:
            raise CliError(f"Malformed time argument {time_spec}, please use -1 or latest / -2 or earliest / -3 or "
                           "max-timestamp, or a specified long format timestamp") from None
        if spec < -3:
            raise CliError(f"--time: {spec} is not -1, -2, -3 or a timestamp")
    try:
        wanted_parts = {int(p) for p in partitions.split(",")} if partitions else set()
    except ValueError:
        raise CliError(f"--partitions expects a comma separated list of numeric partition ids, but received: {partitions}") from None
    try:
        pattern = re.compile(topic if topic is not None else ".*")
    except re.error as exc:
        raise CliError(f"--topic: {topic!r} is not a regular expression: {exc}") from None
    rules = None
    if topic_partitions is not None:
        from kafkatool.ops.topic_partitions import TopicPartitionsError, parse_topic_partitions

        if topic is not None or partitions:
            raise CliError("--topic-partitions cannot be used with --topic or --partitions")
        try:
            rules = parse_topic_partitions(topic_partitions)
        except TopicPartitionsError as exc:
            raise CliError(str(exc)) from None
    from kafkatool.ops import offsets_report as rep

    with _translate():
        if zookeeper:
            with _zookeeper(zookeeper, timeout) as zk, _brokers(bootstrap_server, command_config, timeout, deadline, zk) as bo:
                result = _end_offsets(bo, pattern, wanted_parts, spec, exclude_internal_topics,
                                      _ISOLATION_LEVELS[isolation_level], rules)
        else:
            with _brokers(bootstrap_server, command_config, timeout, deadline) as bo:
                result = _end_offsets(bo, pattern, wanted_parts, spec, exclude_internal_topics,
                                      _ISOLATION_LEVELS[isolation_level], rules)
    if not result:
        raise CliError("Could not match any topic-partitions with the specified filters")
    errors = sorted((tp, lo.error) for tp, lo in result.items() if lo.error)
    for (t, p), e in errors:
        sys.stderr.write(f"Skip getting offsets for topic-partition {t}:{p} due to error: {e}\n")
    if fmt == "text":
        _emit(rep.format_get_offset_shell({tp: lo.offset for tp, lo in result.items()}, text_release()))
    else:
        render_rows(({"topic": t, "partition": p, "offset": lo.offset, "timestamp": lo.timestamp, "error": lo.error}
                     for (t, p), lo in sorted(result.items())), fmt, ["topic", "partition", "offset", "timestamp", "error"])


def _end_offsets(bo: Any, pattern: re.Pattern[str], parts: set[int], spec: int, exclude_internal: bool,
                 isolation_level: int = 0, rules: Any = None) -> dict[Any, Any]:
    from kafkatool.ops.topic_partitions import allowed

    meta = bo.metadata(None)
    tps = [
        (t, p) for t, ps in meta.topics.items() if not (exclude_internal and t.startswith("__"))
        for p in ps if (allowed(rules, t, p) if rules is not None else pattern.fullmatch(t) and (not parts or p in parts))
    ]
    return bo.list_offsets({tp: spec for tp in tps}, isolation_level) if tps else {}
