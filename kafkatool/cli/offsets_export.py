"""`kafkatool offsets export`: committed offsets as Kafka's `--reset-offsets --export` CSV,
ExportZkOffsets lines or kafkatool's JSON (lag and the committed record's time added).

ConsumerGroupService's `exportOffsetsToCsv` (Kafka-stored groups: rows in the map order of the
brokers' release, as `offsets reset --export` prints them) and ExportZkOffsets (every offset znode,
no broker needed); the formats themselves are in `kafkatool.ops.offsets_report.export`.  Registers on
the `offsets` app and takes its shared options and connection helpers from `kafkatool.cli.offsets`.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import typer

from kafkatool.cli.app import EXIT_CODES_HELP, handle_errors
from kafkatool.cli.cluster_options import CommandConfig
from kafkatool.cli.errors import EXIT_USAGE, CliError
from kafkatool.cli.offsets import (
    _ALL_GROUPS,
    _BOOTSTRAP,
    _GROUP,
    _TIMEOUT,
    _TOPIC,
    _ZOOKEEPER,
    _brokers,
    _check_groups,
    _check_source,
    _check_timeout,
    _emit,
    _profile,
    _read_log_dirs,
    _split,
    _translate,
    _zookeeper,
    offsets_app,
)
from kafkatool.cli.render import check_format
from kafkatool.release import text_release

EXPORT_HELP = """Export committed offsets: Kafka's --export CSV, ExportZkOffsets lines, or JSON.

--format csv (default) prints `topic,partition,offset` for one group, `group,topic,partition,offset`
for several (as kafka-consumer-groups --reset-offsets --export); --format zk prints
`/consumers/<group>/offsets/<topic>/<partition>:<offset>` (ExportZkOffsets); --format json adds the
log-end offset, lag and the timestamp of the record at the committed offset.  Any of them is read
back by `kafkatool offsets reset --from-file`.

\b
Examples:
  kafkatool offsets export --bootstrap-server kafka:9092 --group orders-app > orders-app.csv
  kafkatool offsets export --zookeeper zk:2181 --all-groups --format zk --output offsets.txt
  kafkatool offsets export --bootstrap-server kafka:9092 --group a --group b --format json
  kafkatool offsets export --log-dir /var/lib/kafka --all-groups --format csv
"""


@offsets_app.command("export", help=EXPORT_HELP + "\n" + EXIT_CODES_HELP, no_args_is_help=True)
@handle_errors
def export(
    group: list[str] = _GROUP,
    all_groups: bool = _ALL_GROUPS,
    bootstrap_server: str = _BOOTSTRAP,
    zookeeper: str = _ZOOKEEPER,
    log_dir: list[Path] = typer.Option(None, "--log-dir", help="Offline: broker log dir(s) with __consumer_offsets-*."),
    command_config: CommandConfig = None,
    topic: list[str] = _TOPIC,
    output_format: str = typer.Option("csv", "--format", help="csv (Kafka's --export), zk (ExportZkOffsets) or json."),
    output: Path = typer.Option(None, "--output", "-o", help="Write to this file instead of stdout."),
    timeout: float = _TIMEOUT,
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bar."),
) -> None:
    fmt = check_format(output_format, ("csv", "zk", "json"))
    groups = list(dict.fromkeys(_split(group)))
    topics = _split(topic) or None
    _check_groups(groups, all_groups, "export")
    deadline = _check_timeout(timeout)
    zookeeper, bootstrap_server, command_config = _profile(zookeeper, bootstrap_server, command_config, log_dir)
    source = _check_source(bootstrap_server, zookeeper, log_dir)
    from kafkatool.ops import offsets_report as rep

    with _translate():
        if source == "log-dir":
            st = _read_log_dirs(log_dir, None if all_groups else groups, quiet, None)
            reports = rep.gather_offline(st, log_dir, None if all_groups else groups, topics)
        elif source == "zookeeper":
            with _zookeeper(zookeeper, timeout) as zk:
                names = zk.list_groups() if all_groups else groups
                if fmt == "json":
                    with _brokers(bootstrap_server, command_config, timeout, deadline, zk, optional=True) as bo:
                        from kafkatool.cluster.groups import KafkaGroups

                        reports = rep.gather_zookeeper(zk, bo, names, topics, KafkaGroups(bo) if bo else None,
                                                       every_offset=True)
                        if bo is not None:
                            rep.add_time_lag(reports, bo, int(time.time() * 1000))
                else:
                    reports = _zk_export_reports(zk, names, topics)
        else:
            from kafkatool.cluster.groups import KafkaGroups

            with _brokers(bootstrap_server, command_config, timeout, deadline) as bo:
                kg = KafkaGroups(bo)
                names = kg.list_groups() if all_groups else groups
                reports = rep.gather_kafka(kg, bo, names, topics, text_release())
                if fmt == "json":
                    rep.add_time_lag(reports, bo, int(time.time() * 1000))
    missing = [r.group for r in reports if not all_groups and (r.state is None or r.state == "Dead") and not r.rows]
    if missing:
        raise CliError(f"group {', '.join(repr(g) for g in missing)}: does not exist", EXIT_USAGE)
    offsets = {
        r.group: {(row.topic, row.partition): row.current_offset for row in r.rows
                  if row.topic is not None and row.partition is not None and row.current_offset is not None and row.current_offset >= 0}
        for r in reports
    }
    if fmt == "csv" and source == "bootstrap":  # Kafka's --reset-offsets --to-current --export: its map order
        ordered: dict[str, dict[Any, int]] = {}
        for g, t, part, o in rep.reset_rows([rep.ResetPlan(g, offs, []) for g, offs in offsets.items()], text_release()):
            ordered.setdefault(g, {})[(t, part)] = o
        text = rep.export_csv(ordered, with_group=not (len(groups) == 1 and not all_groups), keep_order=True)
    elif fmt == "csv":
        text = rep.export_csv(offsets, with_group=not (len(groups) == 1 and not all_groups))
    elif fmt == "zk":
        text = rep.export_zk(offsets)
    else:
        text = rep.export_json([row for r in reports for row in r.rows], int(time.time() * 1000))
    if output is None:
        _emit(text)
    else:
        from kafkatool.log.checkpoint import atomic_write

        atomic_write(output, text.encode("utf-8"))


def _zk_export_reports(zk: Any, names: list[str], topics: list[str] | None) -> list[Any]:
    """ExportZkOffsets reads every offset znode (no broker needed)."""
    from kafkatool.ops.offsets_report import GroupReport, PartitionLag

    keep = set(topics or [])
    out = []
    for g in names:
        if not zk.exists(g):
            out.append(GroupReport(g, "zookeeper", None, [], []))
            continue
        rows = [PartitionLag(g, t, p, o, None, None) for (t, p), o in sorted(zk.all_committed(g).items()) if not keep or t in keep]
        out.append(GroupReport(g, "zookeeper", "Empty", rows, []))
    return out
