"""Offline `__consumer_offsets` replay: against the real brokers' fixtures and their offsets-decoder
goldens, and against logs written with the project's writer (transactions, tombstones, deletions)."""

from __future__ import annotations

import json
import re
import struct
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import kafkatool.cli.offsets  # noqa: F401  (registers the command)
from kafkatool.log.codecs import Codec
from kafkatool.log.files import list_segments
from kafkatool.log.records import BatchScan
from kafkatool.log.writer import (
    Record,
    SegmentWriter,
    encode_control_record,
    encode_legacy_batch,
    encode_v2_batch,
)
from kafkatool.ops.offsets_log import (
    log_end_offset,
    offsets_partition_dirs,
    offsets_partition_for,
    replay_log_dirs,
    replay_partition_dir,
)
from kafkatool.ops.offsets_report import format_describe, gather_offline
from tests.goldens import load_manifest
from tests.support.cli import run_kafkatool
from tests.support.fake_groups import encode_consumer_assignment

# --------------------------------------------------------------------------------------------------
# Encoders for test data (the wire formats of GroupMetadataManager)


def _s(v: str | None) -> bytes:
    if v is None:
        return struct.pack(">h", -1)
    b = v.encode()
    return struct.pack(">h", len(b)) + b


def _b(v: bytes) -> bytes:
    return struct.pack(">i", len(v)) + v


def commit_key(group: str, topic: str, partition: int) -> bytes:
    return struct.pack(">h", 1) + _s(group) + _s(topic) + struct.pack(">i", partition)


def commit_value(offset: int, commit_ts: int, metadata: str = "", version: int = 3) -> bytes:
    if version == 1:
        return struct.pack(">hq", 1, offset) + _s(metadata) + struct.pack(">qq", commit_ts, commit_ts + 86400000)
    return struct.pack(">hqi", 3, offset, -1) + _s(metadata) + struct.pack(">q", commit_ts)


def group_key(group: str) -> bytes:
    return struct.pack(">h", 2) + _s(group)


def group_value(members: list[tuple[str, list[tuple[str, int]]]], generation: int = 1) -> bytes:
    out = struct.pack(">h", 3) + _s("consumer") + struct.pack(">i", generation) + _s("range" if members else None)
    out += _s(members[0][0] if members else None) + struct.pack(">q", 1_700_000_000_000) + struct.pack(">i", len(members))
    for mid, parts in members:
        out += _s(mid) + _s(None) + _s("client-" + mid) + _s("/10.0.0.1") + struct.pack(">ii", 300000, 10000)
        out += _b(struct.pack(">hi", 0, 0) + struct.pack(">i", -1)) + _b(encode_consumer_assignment(parts))
    return out


class OffsetsLogBuilder:
    """Appends batches to a `__consumer_offsets-N` directory, rolling segments every `segment_records`."""

    def __init__(self, log_dir: Path, partition: int = 0, segment_records: int = 1000) -> None:
        self.dir = log_dir / f"__consumer_offsets-{partition}"
        self.next = 0
        self.segment_records = segment_records
        self.writer: SegmentWriter | None = None
        self.in_segment = 0
        self.ts = 1_700_000_000_000

    def _append(self, data: bytes, last: int, ts: int) -> None:
        if self.writer is None or self.in_segment >= self.segment_records:
            if self.writer:
                self.writer.close()
            self.writer = SegmentWriter(self.dir, self.next, 256)
            self.in_segment = 0
        self.writer.append(data, last, ts, last)
        self.in_segment += last - self.next + 1
        self.next = last + 1

    def batch(self, kvs: list[tuple[bytes, bytes | None]], *, pid: int = -1, txn: bool = False, codec: int = Codec.NONE) -> int:
        """Append one batch; returns its base offset."""
        base = self.next
        self.ts += 1
        recs = [Record(base + i, self.ts, k, v, (), -1, None, True) for i, (k, v) in enumerate(kvs)]
        data = encode_v2_batch(recs, base, codec=codec, producer_id=pid, producer_epoch=0 if pid >= 0 else -1,
                               base_sequence=0 if pid >= 0 else -1, is_transactional=txn)
        self._append(data, base + len(recs) - 1, self.ts)
        return base

    def legacy(self, kvs: list[tuple[bytes, bytes | None]], magic: int = 1, codec: int = Codec.NONE) -> None:
        base = self.next
        self.ts += 1
        recs = [Record(base + i, self.ts, k, v, (), -1, None, True) for i, (k, v) in enumerate(kvs)]
        self._append(encode_legacy_batch(recs, magic=magic, codec=codec), base + len(recs) - 1, self.ts)

    def marker(self, pid: int, commit: bool) -> None:
        base = self.next
        self.ts += 1
        k, v = encode_control_record(1 if commit else 0)
        data = encode_v2_batch([Record(base, self.ts, k, v, (), -1, None, True)], base, producer_id=pid,
                               producer_epoch=0, is_transactional=True, is_control=True)
        self._append(data, base, self.ts)

    def close(self) -> Path:
        if self.writer:
            self.writer.close()
        else:
            self.dir.mkdir(parents=True, exist_ok=True)
        return self.dir


# --------------------------------------------------------------------------------------------------
# Agreement with the real brokers' data and Kafka's own offsets decoder


_REC = re.compile(r"^\| offset: (\d+) .*? key: (offset_commit|group_metadata)::group=(.*?)(?:,partition=(.*))? payload: (.*)$")


def _golden_model(texts: list[str]) -> tuple[dict[tuple[str, str, int], tuple[int, str]], set[str], set[str]]:
    """Replay Kafka's own decoded text: last write wins, <DELETE> removes (no transactions in it)."""
    offsets: dict[tuple[str, str, int], tuple[int, str]] = {}
    groups: set[str] = set()
    deleted: set[str] = set()
    for text in texts:
        for line in text.splitlines():
            assert "isTransactional: true" not in line, "the golden model below assumes no transactions"
            m = _REC.match(line)
            if not m:
                continue
            _, kind, group, tp, payload = m.groups()
            if kind == "offset_commit":
                topic, _, part = tp.rpartition("-")
                key = (group, topic, int(part))
                if payload == "<DELETE>":
                    offsets.pop(key, None)
                else:
                    pm = re.fullmatch(r"offset=(-?\d+)(?:,metadata=(.*))?", payload)
                    assert pm, payload
                    offsets[key] = (int(pm[1]), pm[2] or "")
            elif payload == "<DELETE>":
                groups.discard(group)
                deleted.add(group)
            else:
                groups.add(group)
                deleted.discard(group)
    return offsets, groups, deleted


def _offsets_goldens(fixtures: Path) -> dict[Path, list[tuple[int, Path]]]:
    by_dir: dict[Path, list[tuple[int, Path]]] = {}
    for g in load_manifest(fixtures / "dump-log"):
        if g.mode == "offsets":
            rel = Path(g.rel)
            by_dir.setdefault(fixtures / "kafka-logs" / rel.parent, []).append((int(rel.name.split(".")[0]), g.dir / "offsets.out"))
    return by_dir


def test_replay_agrees_with_kafka_offsets_decoder_goldens(fixtures: Path) -> None:
    by_dir = _offsets_goldens(fixtures)
    assert len(by_dir) >= 20
    compared = 0
    for pdir, goldens in sorted(by_dir.items()):
        segs = [s.base_offset for s in list_segments(pdir)]
        assert sorted(b for b, _ in goldens) == segs, f"{pdir}: every segment needs its golden"
        want_offsets, want_groups, want_deleted = _golden_model([p.read_text() for _, p in sorted(goldens)])
        got = replay_partition_dir(pdir)
        assert got.problems == [], pdir
        assert {k: (c.offset, c.metadata) for k, c in got.offsets.items()} == want_offsets, pdir
        assert set(got.groups) == want_groups, pdir
        assert got.deleted_groups == want_deleted, pdir
        compared += len(want_offsets)
    assert compared >= 20


def test_groups_live_in_the_partition_their_hash_picks(kafka_logs: Path) -> None:
    # 0.10.2.1 / 2.1.1 / 3.3.1 brokers ran with 4 offsets partitions, the others with Kafka's 50.
    counts = {"kafka-0.10.2.1": 4, "kafka-2.1.1": 4, "kafka-3.3.1-kraft": 4}
    seen = 0
    for d in sorted(kafka_logs.iterdir()):
        if d.name == "corrupt" or not d.is_dir():
            continue
        for pdir in offsets_partition_dirs(d):
            n = int(pdir.name.rsplit("-", 1)[1])
            for g in replay_partition_dir(pdir).group_ids():
                assert offsets_partition_for(g, counts.get(d.name, 50)) == n, (d.name, g)
                seen += 1
    assert seen >= 15


def test_log_end_offset_matches_a_full_scan(kafka_logs: Path) -> None:
    checked = 0
    for d in sorted(kafka_logs.iterdir()):
        if d.name == "corrupt" or not d.is_dir():
            continue
        for pdir in sorted(p for p in d.iterdir() if p.is_dir()):
            segs = list_segments(pdir)
            if not segs:
                continue
            expect = None
            for seg in segs:
                for b in BatchScan(seg.log.read_bytes()):
                    expect = b.next_offset
            if expect is None and segs[-1].log.stat().st_size == 0 and len(segs) == 1:
                expect = segs[0].base_offset
            assert log_end_offset(pdir) == expect, pdir
            checked += 1
    assert checked > 30


def test_cli_describes_fixture_groups_and_history(kafka_logs: Path) -> None:
    r = run_kafkatool("offsets", "--log-dir", str(kafka_logs / "kafka-2.1.1"), "--group", "group-fmt-v2")
    assert r.code == 0, r.err
    assert r.out == (
        "\nGROUP           TOPIC           PARTITION  CURRENT-OFFSET  LOG-END-OFFSET  LAG             CONSUMER-ID     HOST            CLIENT-ID\n"
        "group-fmt-v2    fmt-v2          0          160             160             0               -               -               -\n"
        "group-fmt-v2    fmt-v2          1          140             140             0               -               -               -\n"
    )
    # the data cannot tell which release's tool order applies: the note says which text this is
    from kafkatool.release import NEWEST

    assert r.err == (f"kafkatool: note: offline: rows in Kafka {NEWEST}'s order (the segments do not show the release "
                     "that wrote them; --kafka-release 3.3 prints a 2.x/3.x cluster's)\n"
                     "\nConsumer group 'group-fmt-v2' has no active members.\n")
    r = run_kafkatool("--kafka-release", "3.3", "offsets", "--log-dir", str(kafka_logs / "kafka-2.1.1"),
                      "--group", "group-fmt-v2")
    assert r.code == 0 and r.err == "\nConsumer group 'group-fmt-v2' has no active members.\n"
    r = run_kafkatool("offsets", "--log-dir", str(kafka_logs / "github-William0423+kafka"), "--all-groups",
                            "--format", "json")
    rows = json.loads(r.out)
    assert [(x["group"], x["topic"], x["partition"], x["current_offset"], x["log_end_offset"], x["lag"], x["client_id"])
            for x in rows] == [("debug-consumer-group", "debug_topic", 0, 40, 40, 0, "consumer-1")]
    r = run_kafkatool("offsets", "--log-dir", str(kafka_logs / "kafka-2.1.1"), "--history", "--group",
                            "group-fmt-v2", "--format", "ndjson")
    events = [json.loads(x) for x in r.out.splitlines()]
    commits = [(e["topic"], e["partition"], e["offset"]) for e in events if e["kind"] == "commit"]
    assert commits == [("fmt-v2", 0, 81), ("fmt-v2", 1, 79), ("fmt-v2", 0, 160), ("fmt-v2", 1, 140)]
    assert all(e["commit_timestamp"] > 1_500_000_000_000 for e in events if e["kind"] == "commit")
    r = run_kafkatool("offsets", "--log-dir", str(kafka_logs / "kafka-2.1.1"), "--history")
    assert r.code == 0 and r.out.startswith("COMMIT-TIME ") and len(r.out.splitlines()) == 25


def test_cli_offline_input_errors(tmp_path: Path, kafka_logs: Path) -> None:
    r = run_kafkatool("offsets", "--log-dir", str(tmp_path / "missing"), "--group", "g")
    assert r.code == 2 and r.err.startswith("kafkatool: ") and r.err.count("\n") == 1
    r = run_kafkatool("offsets", "--log-dir", str(tmp_path), "--group", "g")
    assert r.code == 2 and "no __consumer_offsets" in r.err
    r = run_kafkatool("offsets", "--log-dir", str(kafka_logs / "kafka-2.1.1"), "--group", "nope")
    assert r.code == 2
    assert r.out == "\nError: Consumer group 'nope' does not exist.\n"
    assert r.err == "kafkatool: group 'nope': does not exist\n"
    r = run_kafkatool("offsets", "--log-dir", str(tmp_path), "--zookeeper", "h:1", "--group", "g")
    assert r.code == 2


# --------------------------------------------------------------------------------------------------
# Generated logs: transactions, tombstones, group deletion, legacy formats, compression


def test_transactions_tombstones_and_group_deletion(tmp_path: Path) -> None:
    b = OffsetsLogBuilder(tmp_path, partition=5, segment_records=4)
    b.batch([(group_key("g"), group_value([("m1", [("t", 0), ("t", 1)])]))])
    b.batch([(commit_key("g", "t", 0), commit_value(10, 1)), (commit_key("g", "t", 1), commit_value(20, 2, "meta"))])
    b.batch([(commit_key("g", "t", 0), commit_value(15, 3))], pid=7, txn=True)  # pending ...
    b.batch([(commit_key("g", "t", 1), commit_value(99, 4))], pid=8, txn=True)
    b.marker(8, commit=False)  # ... aborted: dropped
    b.marker(7, commit=True)  # ... committed: visible
    b.batch([(commit_key("g", "t", 2), commit_value(5, 5))])
    b.batch([(commit_key("g", "t", 2), None)])  # tombstone
    b.batch([(commit_key("h", "u", 0), commit_value(1, 6))], pid=9, txn=True)  # still open at the end
    b.batch([(group_key("dead"), group_value([]))])
    b.batch([(commit_key("dead", "t", 0), commit_value(3, 7))], codec=Codec.GZIP)
    b.batch([(group_key("dead"), None)])
    pdir = b.close()
    assert len(list_segments(pdir)) > 2

    events: list = []
    st = replay_partition_dir(pdir, on_event=events.append)
    assert {k: c.offset for k, c in st.offsets.items()} == {("g", "t", 0): 15, ("g", "t", 1): 20, ("dead", "t", 0): 3}
    assert st.offsets[("g", "t", 1)].metadata == "meta"
    assert set(st.groups) == {"g"} and st.deleted_groups == {"dead"}
    assert set(st.pending) == {("h", "u", 0)}
    assert st.group_state("g") == "Stable" and st.group_state("dead") == "Empty"
    kinds = [e.kind for e in events]
    assert kinds.count("txn-commit") == 1 and kinds.count("txn-abort") == 1 and kinds.count("tombstone") == 1
    assert st.problems == []

    reports = gather_offline(st, [tmp_path], ["g"])
    out, err = format_describe([(r.group, r.state, r.rows) for r in reports])
    assert "g               t               0          15              -" in out
    assert err == ""
    # a group read from its own partition only
    only = replay_log_dirs([tmp_path], ["g"], offsets_partitions=50)
    assert only.partitions_read == ([5] if offsets_partition_for("g", 50) == 5 else [])


def test_older_loaded_offset_wins_over_a_later_transaction_marker(tmp_path: Path) -> None:
    # A transactional commit appended before a plain commit must not override it when its COMMIT
    # marker arrives later (the broker compares the batches' offsets).
    b = OffsetsLogBuilder(tmp_path)
    b.batch([(commit_key("g", "t", 0), commit_value(100, 1))], pid=3, txn=True)
    b.batch([(commit_key("g", "t", 0), commit_value(200, 2))])
    b.marker(3, commit=True)
    st = replay_partition_dir(b.close())
    assert st.offsets[("g", "t", 0)].offset == 200


def test_legacy_message_formats_and_damage(tmp_path: Path) -> None:
    b = OffsetsLogBuilder(tmp_path, partition=1)
    b.legacy([(commit_key("old", "t", 0), commit_value(7, 1, version=1))], magic=0)
    b.legacy([(commit_key("old", "t", 1), commit_value(8, 1, version=1)), (group_key("old"), group_value([]))],
             magic=1, codec=Codec.SNAPPY)
    b.batch([(b"\x00\x11garbage", b"x")])  # a key version even Kafka 4.0 does not know: the broker refuses it
    pdir = b.close()
    st = replay_partition_dir(pdir)
    assert {k: c.offset for k, c in st.offsets.items()} == {("old", "t", 0): 7, ("old", "t", 1): 8}
    assert len(st.problems) == 1 and "key version 17" in st.problems[0]
    r = run_kafkatool("offsets", "--log-dir", str(tmp_path), "--all-groups")
    assert r.code == 1 and "key version 17" in r.err


def _kafka40_offsets_golden(golden: Path) -> tuple[dict[tuple[str, str, int], int], set[str]]:
    """Offsets and groups from what Kafka 4.0.0's own `--offsets-decoder` printed (its JSON text)."""
    offsets: dict[tuple[str, str, int], int] = {}
    groups: set[str] = set()
    for line in golden.read_text().splitlines():
        m = re.search(r" key: (\{.*?\}) payload: (.*)$", line)
        if not m:
            continue
        key = json.loads(m.group(1))
        data, payload = key["data"], m.group(2)
        if key["type"] in ("0", "1"):
            gtp = (data["group"], data["topic"], data["partition"])
            if payload == "<DELETE>":
                offsets.pop(gtp, None)
            else:
                offsets[gtp] = json.loads(payload)["data"]["offset"]
        elif key["type"] == "2":
            (groups.discard if payload == "<DELETE>" else groups.add)(data["group"])
    return offsets, groups


def test_kafka40_consumer_protocol_records_are_passed_over(tmp_path: Path, fixtures: Path) -> None:
    """A Kafka 4.0.0 broker's __consumer_offsets replays as its own tool read it; the records of the
    consumer and share group protocols (types 3-16, KIP-848/932) are no problem; type 17 still is."""
    import shutil

    src = fixtures / "kafka-4.0.0" / "kafka-logs" / "__consumer_offsets-2"
    golden = fixtures / "kafka-4.0.0" / "dump-log" / "__consumer_offsets-2" / "00000000000000000000.log"
    if not src.is_dir():
        pytest.skip(f"Kafka 4.0.0 fixtures not found at {src}")
    want_offsets, want_groups = _kafka40_offsets_golden(golden / "offsets-decoder.out")
    assert want_offsets and want_groups
    pdir = tmp_path / src.name
    shutil.copytree(src, pdir)
    st = replay_partition_dir(pdir)
    assert st.problems == []
    assert {k: c.offset for k, c in st.offsets.items()} == want_offsets
    assert set(st.groups) == want_groups

    # what a 4.0 broker writes for a group on the new protocol (group.protocol=consumer): its
    # records of types 3-16 (keys: int16 type, then GroupId [, MemberId | TopicId...]; values
    # flexible v0), tombstones, and its offsets as plain offset commits
    def cg_key(record_type: int, *more: str) -> bytes:
        return struct.pack(">h", record_type) + b"".join(_s(x) for x in ("cg", *more))

    epoch = struct.pack(">hi", 0, 5) + b"\x00"  # value v0: an int32 epoch, no tagged fields
    b = OffsetsLogBuilder(tmp_path, partition=2)
    b.next = log_end_offset(pdir)
    b.batch([(cg_key(3), epoch), (cg_key(6), epoch), (cg_key(11), epoch)])
    b.batch([(cg_key(t, "m1"), None) for t in (5, 7, 8, 10, 12, 13, 14)] + [(cg_key(t), None) for t in (4, 9, 15)])
    b.batch([(cg_key(16, "t.*"), None), (commit_key("cg", "t", 0), commit_value(42, 1))])
    b.close()
    st = replay_partition_dir(pdir)
    assert st.problems == []
    assert {k: c.offset for k, c in st.offsets.items()} == {**want_offsets, ("cg", "t", 0): 42}
    r = run_kafkatool("offsets", "--log-dir", str(tmp_path), "--all-groups", "--format", "json")
    assert r.code == 0 and r.err == "", r.err
    assert ("cg", "t", 0, 42) in [(x["group"], x["topic"], x["partition"], x["current_offset"]) for x in json.loads(r.out)]
    later = OffsetsLogBuilder(tmp_path, partition=2)  # a record type after 4.0's newest, in a new segment
    later.next = b.next
    later.batch([(struct.pack(">h", 17) + _s("cg"), b"\x00\x00")])
    later.close()
    st = replay_partition_dir(pdir)
    assert len(st.problems) == 1 and "unexpected key version 17" in st.problems[0]


_group = st.sampled_from(["a", "b", "c"])
_tp = st.tuples(st.sampled_from(["t", "u"]), st.integers(0, 2))
_op = st.one_of(
    st.tuples(st.just("commit"), _group, _tp, st.integers(0, 10**6)),
    st.tuples(st.just("delete"), _group, _tp, st.just(0)),
    st.tuples(st.just("txn"), _group, _tp, st.integers(0, 10**6)),
    st.tuples(st.just("end"), st.sampled_from([True, False]), st.integers(1, 3), st.just(0)),
    st.tuples(st.just("meta"), _group, st.booleans(), st.just(0)),
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=st.lists(_op, max_size=40), codec=st.sampled_from([Codec.NONE, Codec.LZ4]), seg=st.integers(2, 9))
def test_replay_matches_a_model_of_the_coordinator(tmp_path_factory: pytest.TempPathFactory, ops: list, codec: int, seg: int) -> None:
    tmp = tmp_path_factory.mktemp("model")
    b = OffsetsLogBuilder(tmp, segment_records=seg)
    loaded: dict = {}  # key -> (offset, batch base)
    pending: dict[int, dict] = {}
    groups: set[str] = set()
    pid_of = {"a": 1, "b": 2, "c": 3}
    for op in ops:
        kind = op[0]
        if kind in ("commit", "delete"):
            _, g, (t, p), off = op
            base = b.batch([(commit_key(g, t, p), None if kind == "delete" else commit_value(off, 1))], codec=codec)
            if kind == "delete":
                loaded.pop((g, t, p), None)
            else:
                loaded[(g, t, p)] = (off, base)
        elif kind == "txn":
            _, g, (t, p), off = op
            pid = pid_of[g]
            base = b.batch([(commit_key(g, t, p), commit_value(off, 1))], pid=pid, txn=True, codec=codec)
            pending.setdefault(pid, {})[(g, t, p)] = (off, base)
        elif kind == "end":
            _, commit, pid, _ = op
            b.marker(pid, commit)
            for k, v in pending.pop(pid, {}).items():
                if commit and (k not in loaded or loaded[k][1] < v[1]):
                    loaded[k] = v
        else:
            _, g, alive, _ = op
            b.batch([(group_key(g), group_value([("m", [("t", 0)])]) if alive else None)])
            (groups.add if alive else groups.discard)(g)
    pdir = b.close()
    got = replay_partition_dir(pdir)
    assert {k: c.offset for k, c in got.offsets.items()} == {k: v[0] for k, v in loaded.items()}
    assert set(got.groups) == groups
    assert set(got.pending) == {k for per in pending.values() for k in per}
    assert got.problems == []
