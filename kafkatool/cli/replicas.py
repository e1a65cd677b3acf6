"""`kafkatool replicas`: do copies of a partition's dirs hold the same log, and where do they part?"""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from kafkatool.cli.app import app, handle_errors
from kafkatool.cli.errors import EXIT_FINDINGS, EXIT_USAGE, CliError
from kafkatool.cli.render import check_format, dumps

HELP = """Compare the replicas of one partition offline: where they diverge, and what truncation would drop.

Give the same partition's dir from several brokers (or copies of them), as PATH or NAME=PATH; with
--partition TOPIC-N, PATHs may be log dirs.  For each pair: identical, behind (one holds all the
other does and more) or diverged at an offset — the first batch whose base/last offset, leader epoch
or CRC differ (--records narrows it to the first differing record) — with the offsets only one side
holds past it.  Each replica's leader-epoch history is shown, and what Kafka's follower truncation
(OffsetsForLeaderEpoch against the leader's epoch cache) would remove from every other replica if
--leader (default: the highest latest epoch, then the longest log) leads.

\\b
Exit codes: 0 identical or only behind; 1 diverged (or data differs below what truncation reaches);
2 bad path or option.

\\b
Examples:
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


@app.command("replicas", help=HELP, no_args_is_help=True)
@handle_errors
def replicas(
    paths: list[str] = typer.Argument(..., help="The partition's dirs (PATH or NAME=PATH), two or more."),
    partition: str = typer.Option(None, "--partition", help="TOPIC-N: the PATHs are log dirs holding it."),
    records: bool = typer.Option(False, "--records", help="Narrow each divergence to the first differing record."),
    leader: str = typer.Option(None, "--leader", help="The replica that leads, for the truncation forecast."),
    output_format: str = typer.Option("text", "--format", help="text or json."),
) -> None:
    from kafkatool.ops.replicas import ReplicaInputError, compare_replicas, report_dict

    check_format(output_format, ("text", "json"))
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
