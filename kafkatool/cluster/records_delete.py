"""Deleting records below an offset, as `kafka-delete-records.sh` does (DeleteRecords, API 21).

Follows Kafka's `DeleteRecordsCommand` (3.3 Scala, 3.5+ Java) and the admin client's `deleteRecords`:
the offset JSON (`{"partitions": [{"topic": "t", "partition": 0, "offset": 10}], "version": 1}`; offset
-1 means the high watermark), one DeleteRecords per partition leader, and the result printed per
partition in the order of the Java client's result map: a `HashMap` of `TopicPartition`s, created with the
partition count as capacity before 3.6 and with the default capacity since (the `DeleteRecordsHandler`),
which also logs each partition that failed with an error that is not retried.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any

from kafkatool.cluster.connect import ClusterInputError
from kafkatool.cluster.kafka_errors import error_name, java_to_string
from kafkatool.cluster.kraft_channel import Channel, need
from kafkatool.jvm.hashing import topic_partition_hash
from kafkatool.jvm.java_collections import grown_capacity, hash_order, table_size_for
from kafkatool.release import Release

DELETE_RECORDS = 21
HANDLER_SINCE = Release(3, 6)
UNORDERED_SINCE = Release(4, 0)
#: errors the Java client retries (InvalidMetadataException / RetriableException) rather than reports
RETRIED = {5, 6, 7, 15, 16}

TP = tuple[str, int]


class OffsetJsonError(ClusterInputError):
    """The offset JSON file is malformed (one line, exit 2)."""


def parse_offset_json(text: str) -> dict[TP, int]:
    """topic-partition -> offset, in file order; Kafka's errors for bad JSON, versions and duplicates."""
    try:
        doc = json.loads(text)
    except (ValueError, RecursionError):
        raise OffsetJsonError("The input string is not a valid JSON") from None
    if not isinstance(doc, dict):
        raise OffsetJsonError('the offset JSON must be an object with a "partitions" list')
    version = doc.get("version", 1)
    if not isinstance(version, int) or isinstance(version, bool):
        raise OffsetJsonError(f"version: {json.dumps(version)} is not an integer")
    if version != 1:
        raise OffsetJsonError(f"Not supported version field value {version}")
    if "partitions" not in doc:
        raise OffsetJsonError("Missing partitions field")
    parts = doc["partitions"]
    if not isinstance(parts, list):
        raise OffsetJsonError("partitions: not a list")
    out: dict[TP, int] = {}
    duplicates: list[TP] = []
    for i, entry in enumerate(parts):
        if not isinstance(entry, dict):
            raise OffsetJsonError(f"partitions[{i}]: not an object")
        for key in ("topic", "partition", "offset"):
            if key not in entry:
                raise OffsetJsonError(f"partitions[{i}]: No such field exists: `{key}`")
        topic, partition, offset = entry["topic"], entry["partition"], entry["offset"]
        if not isinstance(topic, str) or not topic:
            raise OffsetJsonError(f"partitions[{i}].topic: {json.dumps(topic)} is not a topic name")
        for key, value, limit in (("partition", partition, 2**31), ("offset", offset, 2**63)):
            if not isinstance(value, int) or isinstance(value, bool) or not -limit <= value < limit:
                raise OffsetJsonError(f"partitions[{i}].{key}: {json.dumps(value)} is not an integer")
        if partition < 0:
            raise OffsetJsonError(f"partitions[{i}].partition: {partition} is negative")
        if offset < -1:
            raise OffsetJsonError(
                f"partitions[{i}].offset: {offset} is neither an offset nor -1 (the high watermark)"
            )
        if (topic, partition) in out:
            duplicates.append((topic, partition))
            continue
        out[(topic, partition)] = offset
    if duplicates:
        raise OffsetJsonError(
            "Offset json file contains duplicate topic partitions: "
            + ",".join(f"{t}-{p}" for t, p in dict.fromkeys(duplicates))
        )
    return out


@dataclass(frozen=True)
class Deleted:
    topic: str
    partition: int
    offset: int
    low_watermark: int | None
    error_code: int = 0


def result_order(tps: list[TP], release: Release) -> list[TP]:
    """The order Kafka's tool prints the partitions in (the Java client's result HashMap)."""
    n = len(tps)
    if release >= UNORDERED_SINCE:
        return list(tps)
    cap = grown_capacity(n) if release >= HANDLER_SINCE else grown_capacity(n, table_size_for(n))
    return hash_order(tps, lambda tp: topic_partition_hash(*tp), cap)


def leaders_of(channel: Channel, tps: list[TP]) -> dict[TP, int]:
    """Each partition's leader (-1 when none; absent when the partition does not exist)."""
    from kafkatool.cluster.transactions import metadata

    _, meta = metadata(channel, sorted({t for t, _ in tps}))
    return {tp: meta[tp[0]][tp[1]][0] for tp in tps if tp[0] in meta and tp[1] in meta[tp[0]]}


def delete_records(
    channel: Channel, offsets: dict[TP, int], timeout_ms: int, attempts: int = 3
) -> dict[TP, Deleted]:
    """DeleteRecords to each leader; partitions whose leader moved are asked again (up to `attempts`)."""
    from kafka.protocol.admin.topics import DeleteRecordsRequest

    need(channel, "delete records", DELETE_RECORDS)
    done: dict[TP, Deleted] = {}
    pending = dict(offsets)
    for _ in range(attempts):
        if not pending:
            break
        leaders = leaders_of(channel, list(pending))
        by_leader: dict[int, list[TP]] = {}
        for tp in pending:
            leader = leaders.get(tp)
            if leader is None:
                done[tp] = Deleted(tp[0], tp[1], pending[tp], None, 3)
            elif leader < 0:
                continue  # no leader yet: asked again
            else:
                by_leader.setdefault(leader, []).append(tp)
        for tp in [tp for tp in pending if tp in done]:
            pending.pop(tp)
        T = DeleteRecordsRequest.DeleteRecordsTopic
        for leader, tps in by_leader.items():
            topics: dict[str, list[Any]] = {}
            for t, p in tps:
                topics.setdefault(t, []).append(
                    T.DeleteRecordsPartition(partition_index=p, offset=pending[(t, p)])
                )
            req = DeleteRecordsRequest(
                topics=[T(name=t, partitions=ps) for t, ps in topics.items()], timeout_ms=timeout_ms
            )
            resp = channel.send(req, node=leader)
            for t in resp.topics:
                for p in t.partitions:
                    tp = (t.name, int(p.partition_index))
                    if tp not in pending or p.error_code in RETRIED:
                        continue
                    low = int(p.low_watermark) if not p.error_code else None
                    done[tp] = Deleted(tp[0], tp[1], pending.pop(tp), low, int(p.error_code))
    for tp, offset in pending.items():
        done[tp] = Deleted(
            tp[0], tp[1], offset, None, 7
        )  # still retried when time ran out: Kafka's TimeoutException
    return done


def delete_text(results: dict[TP, Deleted], release: Release) -> str:
    lines = ["Executing records delete operation", "Records delete operation completed:"]
    for tp in result_order(list(results), release):
        r = results[tp]
        if r.error_code:
            lines.append(f"partition: {r.topic}-{r.partition}\terror: {java_to_string(r.error_code)}")
        else:
            lines.append(f"partition: {r.topic}-{r.partition}\tlow_watermark: {r.low_watermark}")
    return "\n".join(lines) + "\n"


def handler_log(results: dict[TP, Deleted], release: Release, now: float | None = None) -> str:
    """The ERROR lines Kafka 3.6+'s admin client logs (stderr) for partitions that failed for good."""
    if release < HANDLER_SINCE:
        return ""
    stamp = time.time() if now is None else now
    when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(stamp)) + f",{int(stamp * 1000) % 1000:03d}"
    out = []
    for tp in result_order(list(results), release):
        r = results[tp]
        if not r.error_code or r.error_code in RETRIED:
            continue
        kind = "an error" if r.error_code == 29 else "an unexpected error"
        out.append(
            f"[{when}] ERROR [AdminClient clientId=adminclient-1] DeleteRecords request for topic partition "
            f"{r.topic}-{r.partition} failed due to {kind} {error_name(r.error_code)} "
            "(org.apache.kafka.clients.admin.internals.DeleteRecordsHandler)\n"
        )
    return "".join(out)


def dry_run_rows(channel: Channel, offsets: dict[TP, int]) -> list[dict[str, Any]]:
    """What a delete would ask of each leader, changing nothing (leader -1: none; missing: no such partition)."""
    leaders = leaders_of(channel, list(offsets))
    return [
        {
            "topic": t,
            "partition": p,
            "offset": o,
            "leader": leaders.get((t, p)),
            "error": None if (t, p) in leaders else "This server does not host this topic-partition.",
        }
        for (t, p), o in offsets.items()
    ]
