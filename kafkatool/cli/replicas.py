"""`kafkatool replicas`: do copies of a partition's dirs hold the same log, and where do they part?"""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from kafkatool.cli.app import app, handle_errors
from kafkatool.cli.errors import EXIT_FINDINGS, EXIT_USAGE, CliError
from kafkatool.cli.render import check_format, dumps

HELP = """Compare the replicas of one partition offline: where they diverge, and what truncation would drop;
or live (--bootstrap-server), Kafka's kafka-replica-verification.sh.

Give the same partition's dir from several brokers (or copies of them), as PATH or NAME=PATH; with
--partition TOPIC-N, PATHs may be log dirs.  For each pair: identical, behind (one holds all the
other does and more) or diverged at an offset — the first batch whose base/last offset, leader epoch
or CRC differ (--records narrows it to the first differing record) — with the offsets only one side
holds past it.  Each replica's leader-epoch history is shown, and what Kafka's follower truncation
(OffsetsForLeaderEpoch against the leader's epoch cache) would remove from every other replica if
--leader (default: the highest latest epoch, then the longest log) leads.

\b
Exit codes: 0 identical or only behind; 1 diverged (or data differs below what truncation reaches);
2 bad path or option.

\b
Live (--bootstrap-server B --topic REGEX): each round fetches the same offsets from every replica of
the matching topics' partitions as a debugging replica (Fetch replica id -2) and compares them
batch by batch (last offset, checksum) up to each replica's high watermark, as Kafka's
ReplicaVerificationTool does, printing its lines (unmatched checksum; offset mismatch, which stops
the run; `max lag is N for partition T-P at offset O among K partitions` every
--report-interval-ms and once at the end).  One round unless --time-limit S.  --time -2 starts
at the log start (default -1: the log end, as Kafka).  --format json: per partition replicas,
offset, high_watermark, lag, checksum_mismatches, first_divergence.  Exit 1 when replicas differ.

\b
Examples:
  kafkatool replicas --bootstrap-server k1:9092 --topic 'orders.*' --time -2
  kafkatool replicas --bootstrap-server k1:9092 --topic orders --time-limit 300 --report-interval-ms 10000
  kafkatool replicas broker1=/mnt/b1/kafka/orders-0 broker2=/mnt/b2/kafka/orders-0 broker3=/mnt/b3/kafka/orders-0
  kafkatool replicas /mnt/b1/kafka /mnt/b2/kafka --partition orders-0 --records
  kafkatool replicas b1=/backup/1/orders-0 b2=/backup/2/orders-0 --leader b2 --format json
"""


def _named(paths: list[str], partition: str | None) -> list[tuple[str, Path]]:
    out = []
    for arg in paths:
        name, sep, raw = arg.partition("=")
        if not sep:
            name, raw = arg, arg
        if not name or not raw:
            raise CliError(f"{arg!r}: give PATH or NAME=PATH", EXIT_USAGE)
        path = Path(raw)
        if partition is not None and not path.name == partition:
            path = path / partition
        if not path.exists():
            raise CliError(f"{path}: no such file or directory", EXIT_USAGE)
        if not path.is_dir():
            raise CliError(f"{path}: not a partition directory", EXIT_USAGE)
        out.append((name, path))
    unnamed = [i for i, arg in enumerate(paths) if "=" not in arg]
    short = [out[i][1].resolve().parent.name for i in unnamed]  # the broker's log dir, e.g. b1 or kafka-logs
    if len(set(short)) == len(short) and all(short):
        for i, name in zip(unnamed, short, strict=True):
            out[i] = (name, out[i][1])
    names = [n for n, _ in out]
    if len(set(names)) != len(names):
        raise CliError("replica names repeat: name them with NAME=PATH", EXIT_USAGE)
    return out


def _range(r: object) -> str:
    first, last, n = r.first, r.last, r.records  # type: ignore[attr-defined]
    return f"{first}..{last} ({n} record{'s' if n != 1 else ''})"


def render_text(rep: object) -> str:
    from kafkatool.ops.replicas import ReplicaReport

    assert isinstance(rep, ReplicaReport)
    lines = []
    what = f"Partition {rep.topic}-{rep.partition}" if rep.topic is not None else "Partition"
    lines.append(f"{what}, {len(rep.replicas)} replicas:")
    for r in rep.replicas:
        extent = "empty log" if r.log_start is None else (
            f"offsets {r.log_start}..{r.log_end - 1} ({r.records} records in {r.batches} batches)")
        epochs = " ".join(f"{e}@{s}" for e, s in r.epochs) if r.epochs else "none"
        line = f"  {r.name}: {extent}, leader epochs {epochs}"
        if r.epoch_problem:
            line += f" ({r.epoch_problem})"
        if r.damage:
            line += f"; unreadable past {r.damage}"
        lines.append(line)
    for p in rep.pairs:
        if p.status == "identical":
            span = f" over offsets {p.common_from}..{next(r.log_end for r in rep.replicas if r.name == p.a) - 1}" \
                if p.common_from is not None else ""
            lines.append(f"{p.a} ~ {p.b}: identical{span}")
            continue
        if p.status == "behind":
            ahead, rest = (p.a, p.only_a) if p.only_a else (p.b, p.only_b)
            lines.append(f"{p.a} ~ {p.b}: {p.b if ahead == p.a else p.a} is behind; only in {ahead}: {_range(rest)}")
            continue
        ba, bb = p.batch_a, p.batch_b
        assert ba is not None and bb is not None
        text = (f"{p.a} ~ {p.b}: diverged at offset {p.diverged_at} "
                f"(batch {ba.base_offset}..{ba.last_offset} epoch {ba.leader_epoch} crc {ba.crc} in {p.a}, "
                f"batch {bb.base_offset}..{bb.last_offset} epoch {bb.leader_epoch} crc {bb.crc} in {p.b})")
        if p.first_differing_record is not None:
            text += f"; first differing record at offset {p.first_differing_record}"
        if p.only_a:
            text += f"; only in {p.a}: {_range(p.only_a)}"
        if p.only_b:
            text += f"; only in {p.b}: {_range(p.only_b)}"
        lines.append(text)
    lead = next(r for r in rep.replicas if r.name == rep.leader)
    lines.append(f"If {rep.leader} leads (latest epoch {lead.latest_epoch}, log end {lead.log_end}):")
    for t in rep.truncations:
        if t.truncate_to is None:
            lines.append(f"  {t.replica}: {t.reason}")
        elif t.dropped is None:
            lines.append(f"  {t.replica}: keeps everything ({t.reason})")
        else:
            lines.append(f"  {t.replica}: truncates to {t.truncate_to}, dropping {_range(t.dropped)} ({t.reason})")
        if t.below_divergence:
            lines.append(f"  {t.replica}: WARNING: it differs from {t.leader} below {t.truncate_to}; "
                         "truncation and fetching will not repair that")
    return "\n".join(lines) + "\n"


def _verify_live(bootstrap_server: str, command_config: Path | None, timeout: float, topic: str | None,
                 initial_time: int, fetch_size: int, max_wait_ms: int, report_interval_ms: int,
                 time_limit: float | None, output_format: str) -> bool:
    """Kafka's replica verification over the cluster; True when replicas differ."""
    import time

    from kafkatool.cli.cluster_options import cluster_errors
    from kafkatool.cli.profiles import with_profile
    from kafkatool.cluster.groups import BrokerOffsets
    from kafkatool.cluster.replica_verify import ReplicaVerifier, kafka_time, started_line

    def say(line: str) -> None:
        if output_format == "text":
            sys.stdout.write(f"{kafka_time(int(time.time() * 1000))}: {line}\n")
            sys.stdout.flush()

    _, bootstrap_server, command_config = with_profile(None, bootstrap_server, command_config)  # type: ignore[assignment]
    with cluster_errors("replicas"):
        conn = BrokerOffsets.connect(bootstrap_server, command_config, timeout)
    try:
        with cluster_errors("replicas"):
            verifier = ReplicaVerifier(conn, topic or ".*", initial_time, fetch_size, max_wait_ms)
            verifier.start()
            from kafkatool.cluster.versions import client_release
            from kafkatool.release import text_release

            say(started_line(text_release(client_release(conn.admin))))
            started = last_report = time.monotonic()
            while True:
                for line in verifier.round():
                    say(line)
                now = time.monotonic()
                done = verifier.stopped or time_limit is None or now - started >= time_limit
                if done or (now - last_report) * 1000 > report_interval_ms:
                    say(verifier.max_lag_line())
                    last_report = now
                if done:
                    break
    finally:
        conn.close()
    if output_format == "json":
        sys.stdout.write(dumps(verifier.rows()) + "\n")
    return verifier.diverged


@app.command("replicas", help=HELP, no_args_is_help=True)
@handle_errors
def replicas(
    paths: list[str] = typer.Argument(None, help="The partition's dirs (PATH or NAME=PATH), two or more."),
    bootstrap_server: str = typer.Option(None, "--bootstrap-server", "--broker-list", metavar="HOST:PORT[,HOST:PORT…]",
                                         help="Live: verify the replicas of these brokers' cluster."),
    topic: str = typer.Option(None, "--topic", "--topics-include", "--topic-white-list", metavar="REGEX",
                              help="Live: topics to verify (default: all; Kafka's --topics-include)."),
    initial_time: int = typer.Option(-1, "--time", help="Live: start at -1 (log end), -2 (log start) or a time in ms."),
    report_interval_ms: int = typer.Option(30000, "--report-interval-ms", help="Live: how often to report max lag."),
    time_limit: float = typer.Option(None, "--time-limit", metavar="SECONDS", help="Live: verify for this long "
                                     "(default: one round)."),
    fetch_size: int = typer.Option(1024 * 1024, "--fetch-size", help="Live: bytes per partition per Fetch."),
    max_wait_ms: int = typer.Option(1000, "--max-wait-ms", help="Live: how long each Fetch may wait for data."),
    command_config: Path = typer.Option(None, "--command-config", metavar="FILE",
                                        help="Live: Java client properties (security, client.id)."),
    timeout: float = typer.Option(30.0, "--timeout", metavar="SECONDS", help="Live: limit for each cluster call."),
    partition: str = typer.Option(None, "--partition", help="TOPIC-N: the PATHs are log dirs holding it."),
    records: bool = typer.Option(False, "--records", help="Narrow each divergence to the first differing record."),
    leader: str = typer.Option(None, "--leader", help="The replica that leads, for the truncation forecast."),
    output_format: str = typer.Option("text", "--format", help="text or json."),
) -> None:
    from kafkatool.ops.replicas import ReplicaInputError, compare_replicas, report_dict

    check_format(output_format, ("text", "json"))
    if bootstrap_server or topic is not None or time_limit is not None:
        if paths:
            raise CliError("replicas: give partition dir PATHs (offline) or --bootstrap-server (live), not both",
                           EXIT_USAGE)
        if not bootstrap_server:
            raise CliError("replicas: the live mode needs --bootstrap-server", EXIT_USAGE)
        if partition or records or leader:
            raise CliError("replicas: --partition, --records and --leader apply to dirs on disk", EXIT_USAGE)
        for name, value in (("--fetch-size", fetch_size), ("--report-interval-ms", report_interval_ms + 1),
                            ("--timeout", timeout), ("--max-wait-ms", max_wait_ms + 1)):
            if value <= 0:
                raise CliError(f"{name}: must be positive", EXIT_USAGE)
        if time_limit is not None and time_limit < 0:
            raise CliError("--time-limit: must not be negative", EXIT_USAGE)
        if initial_time < -2:
            raise CliError(f"--time: {initial_time} is not -1, -2 or a time in ms", EXIT_USAGE)
        if _verify_live(bootstrap_server, command_config, timeout, topic, initial_time, fetch_size, max_wait_ms,
                        report_interval_ms, time_limit, output_format):
            raise typer.Exit(EXIT_FINDINGS)
        return
    if not paths:
        raise CliError("replicas: give the partition's dirs, or --bootstrap-server", EXIT_USAGE)
    try:
        rep = compare_replicas(_named(paths, partition), records=records, leader=leader)
    except ReplicaInputError as exc:
        raise CliError(str(exc), EXIT_USAGE) from None
    if output_format == "json":
        sys.stdout.write(dumps(report_dict(rep)) + "\n")
    else:
        sys.stdout.write(render_text(rep))
    if rep.diverged:
        raise typer.Exit(EXIT_FINDINGS)
