"""`kafka-consumer-groups --reset-offsets`: the scenarios, the plan and its text, per release.

ConsumerGroupService's `prepareOffsetsToReset` and `checkOffsetsRange` (3.3 to 4.1; from 4.2 the
scenarios and the range check are OffsetsUtils') as `plan_reset` (pure: the cluster side is in
`ops/offsets_reset.py`), the `--to-datetime`/`--by-duration` parsers (`Utils.getDateTime`,
`Duration.parse`), and `printOffsetsToReset` (OffsetsUtils' sized columns from 4.2) with the row
order of the maps each release walks (`reset_rows`, also the order of its `--export`).
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

from kafkatool.jvm.hashing import topic_partition_hash
from kafkatool.ops.offsets_report.orders import java_hashmap_order, scala_mutable_map_order
from kafkatool.ops.offsets_report.rows import TP

#: The release whose reset plan's columns are sized to their contents (OffsetsUtils).
SIZED_RESET_SINCE = "4.2"


def parse_datetime_ms(text: str) -> int:
    """Kafka's `--to-datetime`: `YYYY-MM-DDTHH:mm:SS.sss` with an optional zone (`Z`, `+01`, `+01:00`);
    without a zone it is UTC, as `Utils.getDateTime` reads it.  Seconds' fraction may be omitted."""
    m = re.fullmatch(
        r"(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,3}))?(Z|[+-]\d{2}(?::?\d{2})?)?", text.strip()
    )
    if not m:
        raise ValueError(f"{text!r} is not YYYY-MM-DDTHH:mm:SS.sss[Z|+HH:MM]")
    y, mo, d, h, mi, s = (int(x) for x in m.groups()[:6])
    frac = int((m[7] or "0").ljust(3, "0"))
    zone = m[8] or "Z"
    if zone == "Z":
        tz = UTC
    else:
        sign = -1 if zone[0] == "-" else 1
        digits = zone[1:].replace(":", "")
        tz = timezone(sign * timedelta(hours=int(digits[:2]), minutes=int(digits[2:4] or 0)))
    dt = datetime(y, mo, d, h, mi, s, tzinfo=tz)
    return (dt - _EPOCH) // timedelta(milliseconds=1) + frac


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_DURATION = re.compile(
    r"([-+]?)P(?:([-+]?\d+)D)?(?:T(?:([-+]?\d+)H)?(?:([-+]?\d+)M)?(?:([-+]?\d+)(?:[.,](\d{0,9}))?S)?)?", re.I
)


def parse_duration_ms(text: str) -> int:
    """Java's `Duration.parse` (`PnDTnHnMn.nS`) in milliseconds."""
    m = _DURATION.fullmatch(text.strip())
    if not m or text.strip().upper().endswith("T") or not any(m.groups()[1:]):
        raise ValueError(f"{text!r} is not an ISO-8601 duration such as P1DT2H or PT30M")
    sign = -1 if m[1] == "-" else 1
    days, hours, minutes, secs = (int(x) if x else 0 for x in m.groups()[1:5])
    frac = m[6] or ""
    ms = ((days * 24 + hours) * 60 + minutes) * 60_000 + secs * 1000
    if frac:
        ms += (-1 if secs < 0 or (m[5] or "").startswith("-") else 1) * int(frac.ljust(3, "0")[:3])
    return sign * ms


@dataclass(frozen=True, slots=True)
class ResetSpec:
    """One of Kafka's reset scenarios; exactly one field set (`to_current` as a flag)."""

    to_earliest: bool = False
    to_latest: bool = False
    to_current: bool = False
    to_offset: int | None = None
    shift_by: int | None = None
    to_datetime_ms: int | None = None
    by_duration_ms: int | None = None
    from_file: dict[str, dict[TP, int]] | None = None

    def describe(self) -> str:
        for k, v in asdict(self).items():
            if v not in (None, False):
                return k.replace("_", "-")
        return "none"


@dataclass(slots=True)
class ResetPlan:
    """New offsets of one group; `notes` go to stderr (Kafka logs them), `empty` are the partitions
    a by-time reset found no record for (Kafka's `Warn: ... is empty` lines on stdout)."""

    group: str
    offsets: dict[TP, int]
    notes: list[str]
    empty: list[TP] = field(default_factory=list)


def plan_reset(
    group: str,
    spec: ResetSpec,
    partitions: list[TP],
    committed: dict[TP, int | None],
    earliest: dict[TP, int | None],
    latest: dict[TP, int | None],
    by_time: dict[TP, int | None] | None = None,
) -> ResetPlan:
    """New offsets per partition, following `prepareOffsetsToReset` of Kafka 3.3.

    Explicit offsets (`--to-offset`, `--shift-by`, `--from-file`) are clamped into
    [log start, log end] as `checkOffsetsRange` does (with a note); by-time lookups that find no
    record fall back to the log end, as Kafka does (with its warning).
    """
    notes: list[str] = []
    empty: list[TP] = []
    out: dict[TP, int] = {}

    def need(table: dict[TP, int | None], tp: TP, what: str) -> int:
        v = table.get(tp)
        if v is None:
            raise ResetError(f"Error getting {what} offset of topic partition: {tp[0]}-{tp[1]}")
        return v

    def clamp(tp: TP, off: int) -> int:
        end = latest.get(tp)
        start = earliest.get(tp)
        if end is not None and off > end:
            notes.append(f"New offset ({off}) is higher than latest offset for topic partition {tp[0]}-{tp[1]}. Value will be set to {end}")
            return end
        if start is not None and off < start:
            notes.append(f"New offset ({off}) is lower than earliest offset for topic partition {tp[0]}-{tp[1]}. Value will be set to {start}")
            return start
        return off

    if spec.to_earliest:
        for tp in partitions:
            out[tp] = need(earliest, tp, "starting")
    elif spec.to_latest:
        for tp in partitions:
            out[tp] = need(latest, tp, "ending")
    elif spec.to_current:
        for tp in partitions:
            c = committed.get(tp)
            out[tp] = c if c is not None and c >= 0 else need(latest, tp, "ending")
    elif spec.to_offset is not None:
        for tp in partitions:
            out[tp] = clamp(tp, spec.to_offset)
    elif spec.shift_by is not None:
        for tp in partitions:
            c = committed.get(tp)
            if c is None or c < 0:
                raise ResetError(f"Cannot shift offset for partition {tp[0]}-{tp[1]} since there is no current committed offset")
            out[tp] = clamp(tp, c + spec.shift_by)
    elif spec.to_datetime_ms is not None or spec.by_duration_ms is not None:
        assert by_time is not None
        for tp in partitions:
            v = by_time.get(tp)
            if v is None:
                empty.append(tp)
                v = need(latest, tp, "offset by timestamp of")
            out[tp] = v
    elif spec.from_file is not None:
        plan = spec.from_file.get(group)
        if plan is None:
            notes.append(f"No reset plan for group {group} found")
        else:
            for tp, off in plan.items():
                out[tp] = clamp(tp, off)
    else:
        raise ResetError("no reset scenario given")
    return ResetPlan(group, out, notes, empty)


class ResetError(ValueError):
    """A reset that cannot be planned (Kafka prints these as usage errors)."""


def format_reset_warnings(plans: list[ResetPlan], release: Any) -> str:
    """Kafka's `Warn: Partition P from topic T is empty. Falling back to latest known offset.` lines
    (stdout, each after an empty line), printed while planning, before the table.

    The order is that of the map Kafka walks: 4.0's Java tool a `HashMap` of the partitions the
    by-time lookup found nothing for; 3.3's Scala tool a `mutable.HashMap` partitioned off the
    admin client's Java `HashMap` of all the lookups.
    """
    out = []
    for p in plans:
        if not p.empty:
            continue
        everything = list(p.offsets)
        if release.at_least("4.0"):
            order = java_hashmap_order(p.empty)
        else:
            empty = set(p.empty)
            java = java_hashmap_order(everything, len(everything))
            order = scala_mutable_map_order([tp for tp in java if tp in empty])
        out += [f"\nWarn: Partition {part} from topic {t} is empty. Falling back to latest known offset.\n"
                for t, part in order]
    return "".join(out)


def reset_rows(plans: list[ResetPlan], release: Any = None) -> list[tuple[str, str, int, int]]:
    """(group, topic, partition, offset) in the order Kafka prints a reset plan (and its --export).

    Kafka 4.0 walks a `HashMap` of groups, each a `HashMap` of partitions (`Collectors.toMap`).
    Kafka 3.3 (Scala 2.13) folds the admin client's `HashMap` of described groups into an
    `immutable.Map`, each group's offsets an `immutable.Map` built (`toMap`) from the partitions in
    the order the tool lists them (the plan's own order, see `offsets_reset`): up to 4 entries keep
    that order (`Map1`..`Map4`), from 5 it is a CHAMP `HashMap` (kafkatool.jvm.scala_collections).
    `release` None: sorted (kafkatool's own texts).
    """
    from kafkatool.jvm.hashing import string_hash
    from kafkatool.jvm.java_collections import grown_capacity, hash_order

    by_group = {p.group: p for p in plans}
    described = hash_order(list(by_group), string_hash, grown_capacity(len(by_group)))
    if release is not None and release.at_least("4.0"):
        return [(g, t, part, by_group[g].offsets[(t, part)])
                for g in described for t, part in java_hashmap_order(list(by_group[g].offsets))]
    if release is not None:
        from kafkatool.jvm.scala_collections import immutable_set_order

        return [(g, t, part, by_group[g].offsets[(t, part)])
                for g in immutable_set_order(described, string_hash)
                for t, part in immutable_set_order(list(by_group[g].offsets), lambda tp: topic_partition_hash(*tp))]
    return [(p.group, t, part, o) for p in sorted(plans, key=lambda p: p.group) for (t, part), o in sorted(p.offsets.items())]


def format_reset(plans: list[ResetPlan], release: Any = None) -> str:
    """`printOffsetsToReset`: Kafka 3.3's text, 4.0's (fixed widths) or 4.2's (sized columns), rows in
    the release's map order (`reset_rows`)."""
    rows = reset_rows(plans, release)
    if not rows:
        return ""
    if release is not None and release.at_least(SIZED_RESET_SINCE):
        # 4.2's OffsetsUtils.printOffsetsToReset: group and topic columns as wide as the widest (at least
        # 15), the offset unpadded.
        g = max([15] + [len(p.group) for p in plans])
        t = max([15] + [len(topic) for p in plans for topic, _ in p.offsets])
        fmt = "{:<" + str(g) + "} {:<" + str(t) + "} {:<10} {}\n"
        return "\n" + fmt.format("GROUP", "TOPIC", "PARTITION", "NEW-OFFSET") + "".join(fmt.format(*r) for r in rows)
    fmt = "{:<30} {:<30} {:<10} {:<15}\n"
    return "\n" + fmt.format("GROUP", "TOPIC", "PARTITION", "NEW-OFFSET") + "".join(fmt.format(*r) for r in rows)
