"""What changed in a KRaft cluster's metadata: between two points (`diff_images`), and every change
to one partition, broker or config over the whole log (`history`), each with the offset of the record
that made it and the append time of its batch (the controller's clock when it committed the record).

Rows are plain dicts with stable keys (`DIFF_COLUMNS`, `HISTORY_COLUMNS`); values that Kafka prints
as text (UUIDs, directories) are given as that text.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kafkatool.log.decoders.metadata import MetadataRecord
from kafkatool.ops.metadata import text as T
from kafkatool.ops.metadata.image import SCRAM_MECHANISMS, Image, ImageBuilder
from kafkatool.ops.metadata.load import Change, load_snapshot, replay_into
from kafkatool.ops.metadata.source import Damage, Snapshot, list_snapshots, log_files

DIFF_COLUMNS = ("kind", "name", "field", "change", "before", "after")
HISTORY_COLUMNS = ("offset", "time", "epoch", "record", "kind", "name", "field", "change", "before", "after")

_PARTITION_FIELDS = (
    "replicas",
    "isr",
    "leader",
    "leaderEpoch",
    "partitionEpoch",
    "removingReplicas",
    "addingReplicas",
    "elr",
    "lastKnownElr",
    "leaderRecoveryState",
    "directories",
)
_BROKER_FIELDS = (
    "epoch",
    "incarnationId",
    "fenced",
    "inControlledShutdown",
    "rack",
    "listeners",
    "features",
    "directories",
    "isMigratingZkBroker",
)


class FilterError(ValueError):
    """A --partition, --broker or --config value that names nothing valid."""


# --------------------------------------------------------------------------------------------------
# plain views of image parts: what diff compares


def _json_value(v: Any) -> Any:
    if isinstance(v, (bytes, bytearray)):
        return T.uuid_text(bytes(v))
    if isinstance(v, list):
        return [_json_value(x) for x in v]
    return v


def partition_view(p: dict[str, Any]) -> dict[str, Any]:
    view = {k: _json_value(p[k]) for k in _PARTITION_FIELDS}
    view["leaderRecoveryState"] = T.LEADER_RECOVERY_STATES.get(
        p["leaderRecoveryState"], p["leaderRecoveryState"]
    )
    return view


def broker_view(b: dict[str, Any]) -> dict[str, Any]:
    return {
        "epoch": b["epoch"],
        "incarnationId": T.uuid_text(b["incarnationId"]),
        "fenced": b["fenced"],
        "inControlledShutdown": b["inControlledShutdown"],
        "rack": b["rack"],
        "listeners": [T.endpoint_text(e) for e in sorted(b["endPoints"], key=lambda e: e["name"])],
        "features": {
            f["name"]: T.version_range(f["minSupportedVersion"], f["maxSupportedVersion"])
            for f in sorted(b["features"], key=lambda f: f["name"])
        },
        "directories": [T.uuid_text(d) for d in sorted(b["directories"], key=T.uuid_sort_key)],
        "isMigratingZkBroker": b["isMigratingZkBroker"],
    }


def controller_view(c: dict[str, Any]) -> dict[str, Any]:
    return {
        "incarnationId": T.uuid_text(c["incarnationId"]),
        "listeners": [T.endpoint_text(e) for e in sorted(c["endPoints"], key=lambda e: e["name"])],
        "features": {
            f["name"]: T.version_range(f["minSupportedVersion"], f["maxSupportedVersion"])
            for f in sorted(c["features"], key=lambda f: f["name"])
        },
    }


def config_resource_name(key: tuple[int, str]) -> str:
    """The shell's name of a config resource: `TOPIC:orders`, `BROKER:4`, `BROKER` (the default)."""
    type_name = T.CONFIG_RESOURCE_TYPES.get(key[0], "UNKNOWN")
    return type_name if key[1] == "" else f"{type_name}:{key[1]}"


def _features(img: Image) -> dict[str, Any]:
    out: dict[str, Any] = {
        "metadata.version": None
        if img.metadata_version is None
        else T.metadata_version_name(img.metadata_version)
    }
    out.update(img.finalized)
    return out


def _entities(img: Image) -> dict[tuple[str, str], dict[str, Any] | Any]:
    """Every comparable thing in an image: (kind, name) -> its fields (or a single value)."""
    out: dict[tuple[str, str], Any] = {}
    for t in img.topics.values():
        out[("topic", t["name"])] = {"id": T.uuid_text(t["id"]), "partitions": len(t["partitions"])}
        for pid, p in t["partitions"].items():
            out[("partition", f"{t['name']}-{pid}")] = partition_view(p)
    for bid, b in img.brokers.items():
        out[("broker", str(bid))] = broker_view(b)
    for cid, c in img.controllers.items():
        out[("controller", str(cid))] = controller_view(c)
    for key, data in img.configs.items():
        out[("config", config_resource_name(key))] = dict(data)
    out[("features", "")] = _features(img)
    for aid, a in img.acls.items():
        out[("acl", T.uuid_text(aid))] = {"acl": T.acl_text(a)}
    out[("producerIds", "")] = {"nextProducerId": img.next_producer_id}
    for entity, quotas in img.client_quotas.items():
        out[("clientQuota", ",".join(f"{k}={v}" for k, v in entity))] = dict(quotas)
    for mech, users in img.scram.items():
        for user in users:
            out[("scram", f"{user}:{SCRAM_MECHANISMS.get(mech, mech)}")] = {
                "iterations": users[user]["iterations"]
            }
    for tid, tok in img.tokens.items():
        out[("delegationToken", tid)] = {
            "owner": tok["owner"],
            "expirationTimestamp": tok["expirationTimestamp"],
        }
    return out


def _diff_fields(kind: str, name: str, a: dict[str, Any] | None, b: dict[str, Any] | None) -> Iterator[dict]:
    if kind in ("config", "clientQuota"):  # keys come and go one by one: a row per key, never per resource
        a, b = a or {}, b or {}
    if a is None and b is None:
        return
    if a is None or b is None:
        yield {
            "kind": kind,
            "name": name,
            "field": "",
            "change": "added" if a is None else "removed",
            "before": a,
            "after": b,
        }
        return
    for f in list(dict.fromkeys([*a, *b])):
        if a.get(f) != b.get(f):
            change = "set" if f not in a else "deleted" if f not in b else "changed"
            yield {
                "kind": kind,
                "name": name,
                "field": f,
                "change": change,
                "before": a.get(f),
                "after": b.get(f),
            }


_KIND_ORDER = {
    k: i
    for i, k in enumerate(
        (
            "features",
            "broker",
            "controller",
            "topic",
            "partition",
            "config",
            "acl",
            "producerIds",
            "clientQuota",
            "scram",
            "delegationToken",
        )
    )
}


def _name_key(name: str) -> tuple:
    head, _, tail = name.rpartition("-")
    return (head, int(tail), "") if tail.isdigit() and head else (name, -1, name)


def diff_images(a: Image, b: Image) -> list[dict[str, Any]]:
    """Every difference from image `a` to image `b`, one row per field (whole things added or removed
    as one row), ordered by kind then name."""
    ea, eb = _entities(a), _entities(b)
    keys = sorted(set(ea) | set(eb), key=lambda k: (_KIND_ORDER.get(k[0], 99), _name_key(k[1])))
    rows: list[dict[str, Any]] = []
    for kind, name in keys:
        rows.extend(_diff_fields(kind, name, ea.get((kind, name)), eb.get((kind, name))))
    return rows


# --------------------------------------------------------------------------------------------------
# history


@dataclass(frozen=True)
class Subject:
    """What a history follows: a partition (topic, id), a broker id, or a config resource (and key)."""

    kind: str  # "partition" | "broker" | "config"
    topic: str = ""
    partition: int = -1
    broker: int = -1
    config: tuple[int, str] = (0, "")
    key: str | None = None

    def describe(self) -> str:
        if self.kind == "partition":
            return f"partition {self.topic}-{self.partition}"
        if self.kind == "broker":
            return f"broker {self.broker}"
        return f"config {config_resource_name(self.config)}{'/' + self.key if self.key else ''}"


def parse_partition(text: str) -> Subject:
    topic, _, pid = text.rpartition("-")
    if not topic or not pid.isdigit():
        raise FilterError(f"--partition: {text!r} is not TOPIC-PARTITION (e.g. orders-3)")
    return Subject("partition", topic=topic, partition=int(pid))


def parse_broker(text: str) -> Subject:
    if not text.strip().isdigit():
        raise FilterError(f"--broker: {text!r} is not a broker id")
    return Subject("broker", broker=int(text))


def parse_config(text: str) -> Subject:
    """`TYPE:NAME[/KEY]` or `TYPE[/KEY]` for the type's default (the shell's names: TOPIC:orders/retention.ms,
    BROKER:4, BROKER/log.retention.ms)."""
    resource, _, key = text.partition("/")
    type_name, _, name = resource.partition(":")
    by_name = {v: k for k, v in T.CONFIG_RESOURCE_TYPES.items()}
    if type_name.upper() not in by_name or type_name.upper() == "UNKNOWN":
        raise FilterError(
            f"--config: {text!r} does not start with a resource type "
            f"(TOPIC, BROKER, BROKER_LOGGER, CLIENT_METRICS, GROUP), e.g. TOPIC:orders/retention.ms"
        )
    return Subject("config", config=(by_name[type_name.upper()], name), key=key or None)


def _touches(s: Subject, rec: MetadataRecord, img_before: Image) -> bool:
    d, kind = rec.data, rec.type
    if s.kind == "partition":
        if kind in ("PARTITION_RECORD", "PARTITION_CHANGE_RECORD"):
            t = img_before.topics.get(bytes(d["topicId"]))
            return t is not None and t["name"] == s.topic and d["partitionId"] == s.partition
        if kind == "REMOVE_TOPIC_RECORD":
            t = img_before.topics.get(bytes(d["topicId"]))
            return t is not None and t["name"] == s.topic
        return kind == "CLEAR_ELR_RECORD"
    if s.kind == "broker":
        if kind in (
            "REGISTER_BROKER_RECORD",
            "UNREGISTER_BROKER_RECORD",
            "BROKER_REGISTRATION_CHANGE_RECORD",
        ):
            return bool(d["brokerId"] == s.broker)
        if kind in ("FENCE_BROKER_RECORD", "UNFENCE_BROKER_RECORD"):
            return bool(d["id"] == s.broker)
        return False
    if kind == "CONFIG_RECORD":
        return (d["resourceType"], d["resourceName"]) == s.config and (s.key is None or d["name"] == s.key)
    if kind == "REMOVE_TOPIC_RECORD" and s.config[0] == 2:
        t = img_before.topics.get(bytes(d["topicId"]))
        return t is not None and t["name"] == s.config[1]
    return False


def _state(s: Subject, img: Image) -> dict[str, Any] | None:
    if s.kind == "partition":
        t = img.topics_by_name.get(s.topic)
        p = t["partitions"].get(s.partition) if t else None
        return partition_view(p) if p else None
    if s.kind == "broker":
        b = img.brokers.get(s.broker)
        return broker_view(b) if b else None
    data = img.configs.get(s.config, {})
    return {k: v for k, v in data.items() if s.key is None or k == s.key}


def history_base(pdir: Path, damage: list[Damage]) -> tuple[Image, Snapshot | None, int]:
    """Where a history starts: offset 0 when the log still holds it, else the oldest snapshot the
    log continues from (the changes before it are gone)."""
    segs = log_files(pdir)
    log_start = int(segs[0].name.split(".")[0]) if segs else 0
    if segs and log_start == 0:
        return Image(), None, 0
    snaps = [s for s in list_snapshots(pdir) if s.end_offset >= log_start]
    if not snaps:
        raise FilterError(
            f"{pdir}: the log starts at offset {log_start} and no snapshot covers what came before"
        )
    return load_snapshot(snaps[0], damage), snaps[0], snaps[0].end_offset


def history(
    pdir: Path, subject: Subject, damage: list[Damage], on_change: Callable[[Change], None] | None = None
) -> list[dict[str, Any]]:
    """Every change to `subject`, oldest first: one row per field changed by each record (a record that
    creates or removes the thing is one row), with the record's offset, epoch and batch append time.
    A history starting from a snapshot begins with a `snapshot` row holding the state it had there."""
    image, snap, first = history_base(pdir, damage)
    rows: list[dict[str, Any]] = []
    if snap is not None:
        state = _state(subject, image)
        if state is not None:
            rows.append(
                _row(
                    Change(
                        snap.end_offset - 1,
                        snap.epoch,
                        image.provenance.time_ms,
                        MetadataRecord(-1, "SNAPSHOT", 0, {}),
                    ),
                    {
                        "kind": subject.kind,
                        "name": _name(subject),
                        "field": "",
                        "change": "snapshot",
                        "before": None,
                        "after": state,
                    },
                )
            )
    builder = ImageBuilder(image)
    before_img = image.copy()
    before = _state(subject, image)
    for ch in replay_into(builder, pdir, first, None, damage):
        if on_change is not None:
            on_change(ch)
        hit = _touches(subject, ch.record, before_img)
        after = _state(subject, builder.image) if hit else before
        if hit:
            diffs = list(_diff_fields(subject.kind, _name(subject), before, after))
            if not diffs:  # a record that changed nothing shown (a same-value config, an epoch-only bump)
                field = ch.record.data.get("name", "") if ch.record.type == "CONFIG_RECORD" else ""
                diffs = [
                    {
                        "kind": subject.kind,
                        "name": _name(subject),
                        "field": field,
                        "change": "unchanged",
                        "before": None,
                        "after": None,
                    }
                ]
            rows.extend(_row(ch, d) for d in diffs)
            before = after
        _apply_shadow(before_img, ch.record)
    return rows


def _apply_shadow(img: Image, rec: MetadataRecord) -> None:
    """Keep the image as it was before the next record (topic names for records that remove topics)."""
    from kafkatool.ops.metadata.image import ImageError, apply_record

    try:
        apply_record(img, rec)
    except ImageError:
        pass


def _name(s: Subject) -> str:
    if s.kind == "partition":
        return f"{s.topic}-{s.partition}"
    if s.kind == "broker":
        return str(s.broker)
    return config_resource_name(s.config)


def _row(ch: Change, d: dict[str, Any]) -> dict[str, Any]:
    return {
        "offset": ch.offset,
        "time": T.iso_utc(ch.time_ms) if ch.time_ms >= 0 else None,
        "epoch": ch.epoch,
        "record": ch.record.type,
        **d,
    }
