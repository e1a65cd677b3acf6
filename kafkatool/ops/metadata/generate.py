"""A demo KRaft metadata log dir, written with the project's own writer: what a one-controller,
two-broker Kafka 4.0 cluster's controller would hold after a short scripted history.

Deterministic (fixed ids and clock), so the README's examples can show its output.  The history, one
batch a minute from `START_MS`: format and features, the controller and brokers 2 and 3 register and
unfence, topic `orders` (3 partitions, replicas on 2 and 3) with a retention config, a config change
and a broker default, broker 3 shuts down (its partitions' ISR shrinks, leadership moves to 2) and
comes back (ISR expands), a preferred election moves leaders back, topic `scratch` is created and
deleted.  A snapshot is taken half way (as a controller does every so many records), and the files
around the log are written too: `quorum-state`, `leader-epoch-checkpoint`, `partition.metadata` and
the metadata dir's `meta.properties`.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kafkatool.log.decoders.metadata import decode_metadata_record
from kafkatool.log.record import Record
from kafkatool.log.writer import SegmentWriter, encode_v2_batch
from kafkatool.ops.metadata.encode import control_record, metadata_record
from kafkatool.ops.metadata.image import Image, ImageBuilder
from kafkatool.ops.metadata.source import METADATA_PARTITION, snapshot_name
from kafkatool.release import NEWEST

START_MS = 1_767_225_600_000  # 2026-01-01T00:00:00Z
CLUSTER_ID = "kafkatool-demo-cluster"
NODE_ID = 1
EPOCH = 1


def _uuid(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "==")


CONTROLLER_DIR = _uuid("ctrlDirectoryIdAAAAAAA")
BROKER_DIRS = {2: _uuid("brokerTwoLogDirAAAAAAA"), 3: _uuid("brokerThreeLogDirAAAAA")}
TOPIC_IDS = {"orders": _uuid("ordersTopicIdAAAAAAAAA"), "scratch": _uuid("scratchTopicIdAAAAAAAA")}
_FEATURES = [
    {"name": "metadata.version", "minSupportedVersion": 7, "maxSupportedVersion": 25},
    {"name": "kraft.version", "minSupportedVersion": 0, "maxSupportedVersion": 1},
    {"name": "group.version", "minSupportedVersion": 0, "maxSupportedVersion": 1},
    {"name": "transaction.version", "minSupportedVersion": 0, "maxSupportedVersion": 2},
]


class GenerateMetadataError(ValueError):
    """Where the demo cannot be written (the dir already holds a metadata log)."""


@dataclass
class GeneratedMetadata:
    partition_dir: Path
    records: int
    log_end_offset: int
    snapshot: str


def _broker(bid: int, epoch: int, incarnation: str) -> dict[str, Any]:
    return {
        "brokerId": bid,
        "isMigratingZkBroker": False,
        "incarnationId": _uuid(incarnation),
        "brokerEpoch": epoch,
        "endPoints": [{"name": "PLAINTEXT", "host": "localhost", "port": 9190 + bid, "securityProtocol": 0}],
        "features": _FEATURES,
        "rack": None,
        "fenced": True,
        "inControlledShutdown": False,
        "logDirs": [BROKER_DIRS[bid]],
    }


def _partition(topic: str, pid: int, replicas: list[int]) -> dict[str, Any]:
    return {
        "partitionId": pid,
        "topicId": TOPIC_IDS[topic],
        "replicas": replicas,
        "isr": replicas,
        "removingReplicas": [],
        "addingReplicas": [],
        "leader": replicas[0],
        "leaderRecoveryState": 0,
        "leaderEpoch": 0,
        "partitionEpoch": 0,
        "directories": [BROKER_DIRS[r] for r in replicas],
        "eligibleLeaderReplicas": None,
        "lastKnownElr": None,
    }


def _change(topic: str, pid: int, **kw: Any) -> tuple[str, dict[str, Any]]:
    return "PARTITION_CHANGE_RECORD", {"partitionId": pid, "topicId": TOPIC_IDS[topic], **kw}


def _config(rtype: int, name: str, key: str, value: str | None) -> tuple[str, dict[str, Any]]:
    return "CONFIG_RECORD", {"resourceType": rtype, "resourceName": name, "name": key, "value": value}


def _reg_change(bid: int, epoch: int, fenced: int = 0, shutdown: int = 0) -> tuple[str, dict[str, Any]]:
    return "BROKER_REGISTRATION_CHANGE_RECORD", {
        "brokerId": bid,
        "brokerEpoch": epoch,
        "fenced": fenced,
        "inControlledShutdown": shutdown,
    }


def history_batches() -> list[list[tuple[str, dict[str, Any]]]]:
    """The scripted history: one list of (record type, fields) per batch."""
    orders = [[2, 3], [3, 2], [2, 3]]
    return [
        [
            ("FEATURE_LEVEL_RECORD", {"name": "metadata.version", "featureLevel": 25}),
            ("FEATURE_LEVEL_RECORD", {"name": "group.version", "featureLevel": 1}),
            ("FEATURE_LEVEL_RECORD", {"name": "transaction.version", "featureLevel": 2}),
        ],
        [
            (
                "REGISTER_CONTROLLER_RECORD",
                {
                    "controllerId": 1,
                    "incarnationId": _uuid("controllerOneIncarnaAA"),
                    "zkMigrationReady": False,
                    "endPoints": [
                        {"name": "CONTROLLER", "host": "localhost", "port": 9093, "securityProtocol": 0}
                    ],
                    "features": _FEATURES,
                },
            )
        ],
        [("REGISTER_BROKER_RECORD", _broker(2, 10, "brokerTwoIncarnationAA"))],
        [("REGISTER_BROKER_RECORD", _broker(3, 12, "brokerThreeIncarnatiAA"))],
        [_reg_change(2, 10, fenced=-1), _reg_change(3, 12, fenced=-1)],
        [
            ("TOPIC_RECORD", {"name": "orders", "topicId": TOPIC_IDS["orders"]}),
            _config(2, "orders", "retention.ms", "604800000"),
            *[("PARTITION_RECORD", _partition("orders", i, r)) for i, r in enumerate(orders)],
        ],
        [("PRODUCER_IDS_RECORD", {"brokerId": 2, "brokerEpoch": 10, "nextProducerId": 1000})],
        [_config(2, "orders", "retention.ms", "86400000"), _config(4, "", "log.retention.ms", "1209600000")],
        # broker 3 shuts down: leaders move to 2, the ISR shrinks, then it is fenced
        [
            _reg_change(3, 12, shutdown=1),
            _change("orders", 0, isr=[2]),
            _change("orders", 1, isr=[2], leader=2),
            _change("orders", 2, isr=[2]),
        ],
        [_reg_change(3, 12, fenced=1)],
        # and comes back with a new epoch: unfenced, then back in the ISR
        [("REGISTER_BROKER_RECORD", _broker(3, 40, "brokerThreeRestartedAA"))],
        [_reg_change(3, 40, fenced=-1)],
        [
            _change("orders", 0, isr=[2, 3]),
            _change("orders", 1, isr=[2, 3]),
            _change("orders", 2, isr=[2, 3]),
        ],
        [_change("orders", 1, leader=3)],  # preferred leader election
        [
            ("TOPIC_RECORD", {"name": "scratch", "topicId": TOPIC_IDS["scratch"]}),
            ("PARTITION_RECORD", _partition("scratch", 0, [2])),
        ],
        [("REMOVE_TOPIC_RECORD", {"topicId": TOPIC_IDS["scratch"]})],
    ]


SNAPSHOT_AFTER_BATCH = 8  # the snapshot holds the image after this many history batches


def image_records(img: Image) -> list[tuple[str, dict[str, Any]]]:
    """Records that rebuild an image, in the order a controller's snapshot writes them."""
    out: list[tuple[str, dict[str, Any]]] = []
    if img.metadata_version is not None:
        out.append(
            ("FEATURE_LEVEL_RECORD", {"name": "metadata.version", "featureLevel": img.metadata_version})
        )
    out += [("FEATURE_LEVEL_RECORD", {"name": k, "featureLevel": v}) for k, v in img.finalized.items()]
    for b in img.brokers.values():
        out.append(
            (
                "REGISTER_BROKER_RECORD",
                {
                    "brokerId": b["id"],
                    "isMigratingZkBroker": b["isMigratingZkBroker"],
                    "incarnationId": b["incarnationId"],
                    "brokerEpoch": b["epoch"],
                    "endPoints": b["endPoints"],
                    "features": b["features"],
                    "rack": b["rack"],
                    "fenced": b["fenced"],
                    "inControlledShutdown": b["inControlledShutdown"],
                    "logDirs": b["directories"],
                },
            )
        )
    out += [("REGISTER_CONTROLLER_RECORD", dict(c)) for c in img.controllers.values()]
    for t in img.topics.values():
        out.append(("TOPIC_RECORD", {"name": t["name"], "topicId": t["id"]}))
        for pid, p in t["partitions"].items():
            out.append(
                (
                    "PARTITION_RECORD",
                    {
                        "partitionId": pid,
                        "topicId": t["id"],
                        "replicas": p["replicas"],
                        "isr": p["isr"],
                        "removingReplicas": p["removingReplicas"],
                        "addingReplicas": p["addingReplicas"],
                        "leader": p["leader"],
                        "leaderRecoveryState": p["leaderRecoveryState"],
                        "leaderEpoch": p["leaderEpoch"],
                        "partitionEpoch": p["partitionEpoch"],
                        "directories": p["directories"],
                        "eligibleLeaderReplicas": p["elr"] or None,
                        "lastKnownElr": p["lastKnownElr"] or None,
                    },
                )
            )
    for (rtype, name), data in img.configs.items():
        out += [
            ("CONFIG_RECORD", {"resourceType": rtype, "resourceName": name, "name": k, "value": v})
            for k, v in data.items()
        ]
    if img.next_producer_id >= 0:
        out.append(
            (
                "PRODUCER_IDS_RECORD",
                {"brokerId": -1, "brokerEpoch": -1, "nextProducerId": img.next_producer_id},
            )
        )
    return out


_VOTERS = {
    "version": 0,
    "voters": [
        {
            "voterId": NODE_ID,
            "voterDirectoryId": CONTROLLER_DIR,
            "endpoints": [{"name": "CONTROLLER", "host": "localhost", "port": 9093}],
            "kRaftVersionFeature": {"minSupportedVersion": 0, "maxSupportedVersion": 1},
        }
    ],
}


def _control_batch(offset: int, ts: int, records: list[tuple[int, dict[str, Any]]]) -> bytes:
    recs = [Record(offset + i, ts, *control_record(t, d), ()) for i, (t, d) in enumerate(records)]
    return encode_v2_batch(recs, is_control=True, partition_leader_epoch=EPOCH)


def _data_batch(offset: int, ts: int, records: list[tuple[str, dict[str, Any]]]) -> bytes:
    recs = [Record(offset + i, ts, None, metadata_record(t, d), ()) for i, (t, d) in enumerate(records)]
    return encode_v2_batch(recs, partition_leader_epoch=EPOCH)


def generate_metadata(meta_dir: Path) -> GeneratedMetadata:
    """Write `<meta_dir>/__cluster_metadata-0/` and `<meta_dir>/meta.properties`."""
    pdir = meta_dir / METADATA_PARTITION
    if pdir.exists() and any(pdir.glob("*.log")):
        raise GenerateMetadataError(f"{pdir} already holds a metadata log: choose another directory")
    pdir.mkdir(parents=True, exist_ok=True)
    w = SegmentWriter(pdir, 0)
    ts = START_MS
    leader_change = {
        "version": 1,
        "leaderId": NODE_ID,
        "voters": [{"voterId": NODE_ID, "voterDirectoryId": CONTROLLER_DIR}],
        "grantingVoters": [{"voterId": NODE_ID, "voterDirectoryId": CONTROLLER_DIR}],
    }
    first = _control_batch(0, ts, [(2, leader_change), (5, {"version": 0, "kRaftVersion": 1}), (6, _VOTERS)])
    w.append(first, 2, ts, 2)
    offset, count = 3, 0
    builder = ImageBuilder()
    snapshot = ""
    for i, batch in enumerate(history_batches()):
        ts += 60_000
        data = _data_batch(offset, ts, batch)
        w.append(data, offset + len(batch) - 1, ts, offset + len(batch) - 1)
        for t, d in batch:
            builder.apply(decode_metadata_record(metadata_record(t, d), NEWEST))
        offset += len(batch)
        count += len(batch)
        if i + 1 == SNAPSHOT_AFTER_BATCH:
            snapshot = snapshot_name(offset, EPOCH)
            _write_snapshot(pdir / snapshot, builder.image, ts)
    w.close()
    (pdir / "quorum-state").write_text(
        f'{{"leaderId":{NODE_ID},"leaderEpoch":{EPOCH},"votedId":{NODE_ID},'
        f'"votedDirectoryId":"{base64.urlsafe_b64encode(CONTROLLER_DIR).decode().rstrip("=")}","data_version":1}}'
    )
    (pdir / "leader-epoch-checkpoint").write_text(f"0\n1\n{EPOCH} 0\n")
    (pdir / "partition.metadata").write_text("version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAQ\n")
    (meta_dir / "meta.properties").write_text(
        f"#\nnode.id={NODE_ID}\ndirectory.id={base64.urlsafe_b64encode(CONTROLLER_DIR).decode().rstrip('=')}\n"
        f"version=1\ncluster.id={CLUSTER_ID}\n"
    )
    return GeneratedMetadata(pdir, count, offset, snapshot)


def _write_snapshot(path: Path, img: Image, ts: int) -> None:
    """A snapshot file: header, kraft.version and voters, the image's records, footer (offsets from 0)."""
    recs = image_records(img)
    parts = [
        _control_batch(
            0,
            ts,
            [
                (3, {"version": 0, "lastContainedLogTimestamp": ts}),
                (5, {"version": 0, "kRaftVersion": 1}),
                (6, _VOTERS),
            ],
        )
    ]
    parts.append(_data_batch(3, ts, recs))
    parts.append(_control_batch(3 + len(recs), ts, [(4, {"version": 0})]))
    path.write_bytes(b"".join(parts))
