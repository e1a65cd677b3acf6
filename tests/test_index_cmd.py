"""`kafkatool index dump|verify|rebuild` and the recovery walk behind them (`ops.indexcheck`).

Ground truth: Kafka's own kafka-dump-log.sh output for `dump`, a real 2.1.1 broker's recovery for
`rebuild` (recovered/kafka-2.1.1), the real brokers' log dirs (which must verify clean) and their
damaged copies (which must not).  Generated logs come from the project's writer.
"""

from __future__ import annotations

import io
import os
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafkatool.log.errors import CorruptRecordError
from kafkatool.log.files import SegmentFiles, list_segments
from kafkatool.log.index import OffsetIndex
from kafkatool.log.indexer import IndexBuilder
from kafkatool.log.producer_state import TxnIndexState, open_transactions_at
from kafkatool.log.record import Record
from kafkatool.log.records import read_batch_header
from kafkatool.log.segment import (
    STOP_CORRUPT,
    STOP_END,
    STOP_INVALID_OFFSET,
    STOP_OVERFLOW,
    STOP_PARTIAL,
    walk_segment,
    walk_segment_file,
)
from kafkatool.log.writer import SegmentWriter, encode_control_record, encode_v2_batch
from kafkatool.ops.indexcheck import (
    dump_index_files,
    rebuild_target,
    resolve_targets,
    verify_segment,
    verify_targets,
)
from tests.conftest import KAFKA_LOGS, kafka_text, require_fixtures
from tests.goldens import load_manifest
from tests.support.faults import copy_tree, run_kafkatool, write_partition

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
BROKER_TREES = ["kafka-0.10.2.1", "kafka-2.1.1", "kafka-3.3.1-kraft"]


def recovered_dir(corrupt_name: str) -> Path:
    fx = require_fixtures()
    return fx / "recovered" / "kafka-2.1.1" / (corrupt_name[:-2].replace("-", "_") + "-0")


# ---------------------------------------------------------------------------------------------
# dump: dump-log's text, byte for byte
# ---------------------------------------------------------------------------------------------


def test_dump_matches_kafka_dump_log(fixtures: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    goldens = [
        g
        for g in load_manifest(fixtures / "dump-log")
        if g.mode == "dump" and g.rc == 0 and g.rel.endswith((".index", ".timeindex", ".txnindex"))
    ]
    assert len(goldens) > 300
    monkeypatch.chdir(KAFKA_LOGS)
    bad = []
    for g in goldens:
        out, err = io.BytesIO(), io.BytesIO()
        with kafka_text("3.3"):  # the goldens are Kafka 3.3.1's tool
            code = dump_index_files([Path(g.rel)], "text", out, err)
        exp_out, exp_err = g.expected(KAFKA_LOGS)
        if (out.getvalue(), err.getvalue(), code) != (exp_out, exp_err, 0):
            bad.append(g.rel)
    assert not bad, f"{len(bad)} index dumps differ from kafka-dump-log.sh, e.g. {bad[:5]}"


def test_dump_cli_partition_dir_and_json(kafka_logs: Path) -> None:
    d = kafka_logs / "kafka-2.1.1" / "txn-topic-0"
    proc = run_kafkatool(["index", "dump", str(d)])
    assert proc.returncode == 0, proc.stderr
    dumped = [line for line in proc.stdout.splitlines() if line.startswith("Dumping ")]
    assert [Path(x.split(" ", 1)[1]).name for x in dumped] == [
        "00000000000000000000.index",
        "00000000000000000000.timeindex",
        "00000000000000000000.txnindex",
        "00000000000000000217.index",
        "00000000000000000217.timeindex",
        "00000000000000000217.txnindex",
    ]
    assert "version: 0 producerId: 2 firstOffset: 155 lastOffset: 185 lastStableOffset: 186" in proc.stdout
    proc = run_kafkatool(["index", "dump", str(d / "00000000000000000217.log"), "--format", "ndjson"])
    assert proc.returncode == 0
    assert '"type":"txn_index_entry"' in proc.stdout and '"type":"index_entry"' in proc.stdout


# ---------------------------------------------------------------------------------------------
# the recovery walk: what LogSegment.recover finds, on the damaged fixtures
# ---------------------------------------------------------------------------------------------

EXPECTED_STOPS = {
    # corrupt dir: (segment, stop, valid bytes, next offset, Kafka's message or None)
    "v2-crc-flip-0": (
        0,
        STOP_CORRUPT,
        641,
        11,
        "Record is corrupt (stored crc = 18454073, computed crc = 2757231687)",
    ),
    "v2-zeroed-region-0": (
        0,
        STOP_CORRUPT,
        641,
        11,
        "Record is corrupt (stored crc = 18454073, computed crc = 3742534319)",
    ),
    "v2-length-flip-0": (0, STOP_PARTIAL, 1089, 17, None),
    "v2-trailing-zeros-0": (
        81,
        STOP_CORRUPT,
        3201,
        160,
        "Found record size 0 smaller than minimum record overhead (14)",
    ),
    "v2-truncated-tail-0": (81, STOP_PARTIAL, 3004, 155, None),
    "v1-crc-flip-0": (
        0,
        STOP_CORRUPT,
        53,
        1,
        "Record is corrupt (stored crc = 1718095443, computed crc = 2138259218)",
    ),
    "v0-truncated-tail-0": (90, STOP_PARTIAL, 2020, 150, None),
}


@pytest.mark.parametrize("name", sorted(EXPECTED_STOPS))
def test_scan_stops_where_the_broker_truncated(kafka_logs: Path, name: str) -> None:
    base, stop, valid, nxt, msg = EXPECTED_STOPS[name]
    seg = SegmentFiles(kafka_logs / "corrupt" / name, base)
    scan = walk_segment_file(seg.log, base)
    assert (scan.stop, scan.valid_bytes, scan.next_offset) == (stop, valid, nxt)
    if msg:
        assert scan.error is not None and scan.error.startswith(msg)  # the broker's own log line
    # the bytes it keeps are the bytes the broker kept, and the indexes are the broker's
    rec = recovered_dir(name)
    assert (rec / seg.log.name).read_bytes() == seg.log.read_bytes()[:valid]
    assert (rec / seg.index.name).read_bytes() == scan.offset_index_bytes()
    assert (rec / seg.timeindex.name).read_bytes() == scan.time_index_bytes()


def test_scan_of_every_undamaged_segment_is_clean(kafka_logs: Path) -> None:
    n = 0
    for tree in BROKER_TREES:
        for t in resolve_targets([kafka_logs / tree]):
            for seg in t.segments:
                scan = walk_segment_file(seg.log, seg.base_offset)
                assert scan.stop == STOP_END, (seg.log, scan.error)
                n += 1
    assert n > 150


def test_recovery_rule_reproduces_live_broker_indexes(kafka_logs: Path) -> None:
    """Where each append was one batch, the live append path and recovery index alike: the broker's
    own index files written with index.interval.bytes 256 come out of our rebuild byte for byte."""
    matched = []
    for tree in ("kafka-2.1.1", "kafka-3.3.1-kraft"):
        for t in resolve_targets([kafka_logs / tree]):
            for seg in t.segments:
                idx = seg.index.read_bytes()
                if len(idx) < 16:
                    continue
                scan = walk_segment_file(seg.log, seg.base_offset, 256)
                if scan.offset_index_bytes() == idx and scan.time_index_bytes() == seg.timeindex.read_bytes():
                    matched.append(f"{tree}/{seg.dir.name}/{seg.base_offset}")
    assert len(matched) >= 10, matched


def _batch(offset: int, n: int = 3, ts: int = 1_000, ple: int = 0, **kw: object) -> bytes:
    recs = [Record(offset + i, ts + i, b"k", b"v" * 40, ()) for i in range(n)]
    return encode_v2_batch(recs, partition_leader_epoch=ple, **kw)  # type: ignore[arg-type]


def test_scan_offset_overflow_and_backwards_offsets() -> None:
    buf = _batch(0) + _batch(2**31 + 5)
    scan = walk_segment(buf, 0)
    assert scan.stop == STOP_OVERFLOW and scan.valid_bytes == len(_batch(0))
    # offsets going back where an index entry lands: the broker's index throws, recovery empties the segment
    big = [_batch(o, n=40) for o in (0, 40, 80)]
    buf = big[0] + big[1] + big[2] + _batch(10, n=40)
    scan = walk_segment(buf, 0, 100)
    assert scan.stop == STOP_INVALID_OFFSET and scan.valid_bytes == 0 and scan.offset_index == b""


def test_scan_collects_leader_epochs_and_transactions() -> None:
    ctl_key, ctl_val = encode_control_record(0)
    abort = encode_v2_batch(
        [Record(9, 5, ctl_key, ctl_val, ())],
        producer_id=7,
        producer_epoch=0,
        is_transactional=True,
        is_control=True,
        partition_leader_epoch=3,
    )
    buf = (
        _batch(0, ple=1)
        + _batch(3, ple=1)
        + _batch(6, ple=3, producer_id=7, producer_epoch=0, base_sequence=0, is_transactional=True)
        + abort
    )
    scan = walk_segment(buf, 0, latest_epoch=0)
    assert scan.epochs == [(1, 0), (3, 6)]
    assert scan.txn_events == [("start", 7, 6), ("abort", 7, 9)]
    assert walk_segment(buf, 0, latest_epoch=5).epochs == []
    # an empty control batch (what the cleaner keeps of a marker) completes nothing
    empty = encode_v2_batch(
        [], 10, last_offset=10, producer_id=7, producer_epoch=0, is_transactional=True, is_control=True
    )
    assert walk_segment(buf + empty, 0).txn_events == [("start", 7, 6), ("abort", 7, 9)]


@st.composite
def segments(draw: st.DrawFn) -> tuple[list[bytes], list[int], int]:
    """Batches of random sizes and timestamps (some going back), and an index interval."""
    n = draw(st.integers(1, 40))
    off = draw(st.integers(0, 1000))
    batches, maxes = [], []
    for _ in range(n):
        count = draw(st.integers(1, 6))
        size = draw(st.integers(0, 700))
        ts = [draw(st.integers(0, 50_000)) for _ in range(count)]
        recs = [Record(off + i, ts[i], None, b"x" * size, ()) for i in range(count)]
        batches.append(encode_v2_batch(recs))
        maxes.append(max(ts))
        off += count
    return batches, maxes, draw(st.sampled_from([0, 64, 512, 4096]))


@SETTINGS
@given(segments())
def test_recovery_indexes_equal_single_batch_appends(data: tuple[list[bytes], list[int], int]) -> None:
    """LogSegment.append with one batch per append and LogSegment.recover + close index alike."""
    batches, maxes, interval = data
    b0 = read_batch_header(batches[0], 0, len(batches[0]))
    assert b0 is not None
    base = b0.base_offset
    live = IndexBuilder(base, interval)
    pos = 0
    for data_, mx in zip(batches, maxes, strict=True):
        b = read_batch_header(data_, 0, len(data_))
        assert b is not None
        live.on_append(b.last_offset, pos, mx, b.last_offset, len(data_))
        pos += len(data_)
    live.finish_on_close()
    scan = walk_segment(b"".join(batches), base, interval)
    assert scan.stop == STOP_END
    assert scan.offset_index_bytes() == live.offset_index_bytes()
    assert scan.time_index_bytes() == live.time_index_bytes()


@SETTINGS
@given(segments(), st.data())
def test_any_flipped_bit_stops_the_walk_at_its_batch(
    data: tuple[list[bytes], list[int], int], d: st.DataObject
) -> None:
    batches, _maxes, _interval = data
    buf = bytearray(b"".join(batches))
    i = d.draw(st.integers(0, len(batches) - 1))
    start = sum(len(b) for b in batches[:i])
    # anywhere the CRC covers (attributes on) or in the size field
    pos = d.draw(
        st.one_of(st.integers(start + 21, start + len(batches[i]) - 1), st.integers(start + 8, start + 11))
    )
    buf[pos] ^= 1 << d.draw(st.integers(0, 7))
    base = walk_segment(b"".join(batches), 0).first_offset
    assert base is not None
    scan = walk_segment(bytes(buf), base)
    assert scan.stop in (STOP_CORRUPT, STOP_PARTIAL)
    assert scan.valid_bytes == start


# ---------------------------------------------------------------------------------------------
# verify
# ---------------------------------------------------------------------------------------------


def test_verify_broker_trees_are_clean(kafka_logs: Path) -> None:
    checks = verify_targets(resolve_targets([kafka_logs / t for t in BROKER_TREES]))
    assert len(checks) > 450
    bad = [(c.file, [f.message for f in c.findings]) for c in checks if not c.ok]
    assert not bad


EXPECTED_FINDINGS = {
    "v2-index-bad-position-0": ("00000000000000000000.index", "index_mismatch"),
    "v2-index-trailing-zeros-0": ("00000000000000000081.index", "trailing_zero_entries"),
    "v2-timeindex-out-of-order-0": ("00000000000000000000.timeindex", "time_out_of_order"),
    "txnindex-truncated-0": ("00000000000000000000.txnindex", "txn_index_size"),
    "v2-crc-flip-0": ("00000000000000000000.log", "corrupt"),
    "v2-zeroed-region-0": ("00000000000000000000.log", "corrupt"),
    "v2-length-flip-0": ("00000000000000000000.log", "partial"),
    "v2-trailing-zeros-0": ("00000000000000000081.log", "corrupt"),
    "v2-truncated-tail-0": ("00000000000000000081.log", "partial"),
    "v1-crc-flip-0": ("00000000000000000000.log", "corrupt"),
    "v0-truncated-tail-0": ("00000000000000000090.log", "partial"),
}


@pytest.mark.parametrize("name", sorted(EXPECTED_FINDINGS))
def test_verify_finds_the_damage(kafka_logs: Path, name: str) -> None:
    fname, kind = EXPECTED_FINDINGS[name]
    checks = verify_targets(resolve_targets([kafka_logs / "corrupt" / name]))
    bad = {Path(c.file).name: {f.kind for f in c.findings} for c in checks if not c.ok}
    assert kind in bad.get(fname, set()), bad
    # nothing is reported that is not there: only the damaged file, plus derived index trouble
    assert set(bad) <= {
        fname,
        fname.replace(".log", ".index"),
        fname.replace(".log", ".timeindex"),
        fname.replace(".txnindex", ".txnindex"),
    }


def test_verify_strict_is_kafkas_rule(kafka_logs: Path) -> None:
    """--strict reports what kafka-dump-log.sh --verify-index-only reports on the same files."""
    seg = SegmentFiles(kafka_logs / "kafka-2.1.1" / "fmt-v2-0", 0)
    strict = {c.type: c for c in verify_segment(seg, strict=True)}
    assert [f.offset for f in strict["timeindex"].findings] == [6, 11, 19, 22, 28]  # the golden's list
    assert all(c.ok for c in verify_segment(seg))
    seg = SegmentFiles(kafka_logs / "kafka-2.1.1" / "fmt-v1-0", 0)
    assert [(f.offset) for f in {c.type: c for c in verify_segment(seg, strict=True)}["index"].findings] == [
        19,
        29,
        39,
    ]


def test_verify_walks_for_per_batch_arrays_only_when_an_index_differs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An index equal to the rebuilt one needs no entry-by-entry check, so verify's walk keeps no
    per-batch arrays (memory flat in segment size, issue 14); a differing index gets them."""
    from kafkatool.ops import indexcheck

    pdir = tmp_path / "t-0"
    write_partition(pdir, [300], value_size=200)
    seg = SegmentFiles(pdir, 0)
    scan = walk_segment_file(seg.log, 0)
    seg.index.write_bytes(scan.offset_index_bytes())
    seg.timeindex.write_bytes(scan.time_index_bytes())
    assert len(scan.offset_index_bytes()) >= 5 * 8
    calls: list[bool] = []

    def counting_walk(*args: object, record_batches: bool = False, **kw: object) -> object:
        calls.append(record_batches)
        return walk_segment_file(*args, record_batches=record_batches, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(indexcheck, "walk_segment_file", counting_walk)
    assert all(c.ok and c.note is None for c in verify_segment(seg)) and calls == [False]
    # one entry fewer: still valid, but not what recovery writes, so checked entry by entry (one walk more)
    calls.clear()
    seg.index.write_bytes(scan.offset_index_bytes()[:-8])
    checks = {c.type: c for c in verify_segment(seg)}
    assert calls == [False, True]
    assert checks["index"].ok and checks["index"].note is not None and checks["timeindex"].note is None
    # a wrong position is found through the arrays
    calls.clear()
    data = bytearray(scan.offset_index_bytes())
    struct.pack_into(">i", data, 12, struct.unpack_from(">i", data, 12)[0] + 1)
    seg.index.write_bytes(bytes(data))
    checks = {c.type: c for c in verify_segment(seg)}
    assert calls == [False, True]
    assert [(f.kind, f.entry) for f in checks["index"].findings] == [("index_mismatch", 1)]


def test_verify_cli_exit_codes_and_formats(kafka_logs: Path, tmp_path: Path) -> None:
    ok = run_kafkatool(["index", "verify", str(kafka_logs / "kafka-2.1.1" / "txn-topic-0")])
    assert ok.returncode == 0, ok.stderr
    assert ok.stdout.endswith("8 files checked, 0 with problems\n")
    bad = run_kafkatool(
        ["index", "verify", str(kafka_logs / "corrupt" / "v2-index-bad-position-0"), "--format", "json"]
    )
    assert bad.returncode == 1
    assert '"kind":"index_mismatch"' in bad.stdout
    missing = run_kafkatool(["index", "verify", str(tmp_path / "nope")])
    assert (
        missing.returncode == 2
        and missing.stderr.startswith("kafkatool: ")
        and "Traceback" not in missing.stderr
    )
    notalog = tmp_path / "x.txt"
    notalog.write_text("x")
    assert run_kafkatool(["index", "verify", str(notalog)]).returncode == 2


# ---------------------------------------------------------------------------------------------
# rebuild
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name",
    [
        "v2-index-bad-position-0",
        "v2-index-trailing-zeros-0",
        "v2-timeindex-out-of-order-0",
        "txnindex-truncated-0",
    ],
)
def test_rebuild_is_byte_identical_to_the_broker(kafka_logs: Path, tmp_path: Path, name: str) -> None:
    work = copy_tree(kafka_logs / "corrupt" / name, tmp_path / (name[:-2].replace("-", "_") + "-0"))
    res = rebuild_target(resolve_targets([work])[0])
    assert not res.findings
    rec = recovered_dir(name)
    for n in sorted(os.listdir(rec)):
        if n.endswith((".index", ".timeindex", ".txnindex")):
            assert (work / n).read_bytes() == (rec / n).read_bytes(), n


def test_rebuild_txnindex_from_snapshot_or_log(kafka_logs: Path, tmp_path: Path) -> None:
    """The second segment's aborted transactions need the state before it: from its snapshot, and
    the same from the first segment's log when the snapshot is gone."""
    src = kafka_logs / "kafka-2.1.1" / "txn-topic-0"
    want = (src / "00000000000000000217.txnindex").read_bytes()
    for drop_snapshots in (False, True):
        work = copy_tree(src, tmp_path / f"txn-topic-{int(drop_snapshots)}")
        if drop_snapshots:
            for p in work.glob("*.snapshot"):
                p.unlink()
        (work / "00000000000000000217.txnindex").unlink()
        rebuild_target(resolve_targets([work / "00000000000000000217.log"])[0])
        assert (work / "00000000000000000217.txnindex").read_bytes() == want
        assert (work / "00000000000000000000.txnindex").read_bytes() == (
            src / "00000000000000000000.txnindex"
        ).read_bytes()


def _txn_log(tmp_path: Path) -> Path:
    """Two producers with overlapping transactions, aborts and commits, over two segments."""
    d = tmp_path / "txn-0"
    ctl = {a: encode_control_record(a) for a in (0, 1)}

    def data(off: int, pid: int, n: int = 2) -> bytes:
        return encode_v2_batch(
            [Record(off + i, 10 + off + i, b"k", b"v", ()) for i in range(n)],
            producer_id=pid,
            producer_epoch=0,
            base_sequence=off,
            is_transactional=True,
        )

    def marker(off: int, pid: int, abort: bool) -> bytes:
        k, v = ctl[0 if abort else 1]
        return encode_v2_batch(
            [Record(off, 10 + off, k, v, ())],
            producer_id=pid,
            producer_epoch=0,
            is_transactional=True,
            is_control=True,
        )

    plan = [  # (offset, bytes) ; producer 1 opens at 0, producer 2 at 2
        [(0, data(0, 1)), (2, data(2, 2)), (4, marker(4, 1, True)), (5, data(5, 1))],
        [(7, marker(7, 2, True)), (8, marker(8, 1, False)), (9, data(9, 2)), (11, marker(11, 2, True))],
    ]
    for seg in plan:
        w = SegmentWriter(d, seg[0][0])
        for _off, b in seg:
            batch = read_batch_header(b, 0, len(b))
            assert batch is not None
            w.append(b, batch.last_offset, batch.max_timestamp, batch.last_offset)
        w.close()
    return d


def test_rebuild_txnindex_lso_across_segments(tmp_path: Path) -> None:
    d = _txn_log(tmp_path)
    rebuild_target(resolve_targets([d])[0])
    from kafkatool.log.index import AbortedTxn, read_txn_index

    assert read_txn_index((d / "00000000000000000000.txnindex").read_bytes()) == [AbortedTxn(0, 1, 0, 4, 2)]
    assert read_txn_index((d / "00000000000000000007.txnindex").read_bytes()) == [
        AbortedTxn(0, 2, 2, 7, 5),  # producer 1's second transaction (from 5) is still open
        AbortedTxn(0, 2, 9, 11, 12),
    ]
    segs = list_segments(d)
    assert open_transactions_at(d, segs, 7) == {1: 5, 2: 2}
    scans = [walk_segment_file(s.log) for s in segs[1:]]
    assert TxnIndexState(d, segs).entries(scans)[7][0].last_stable_offset == 5


def test_rebuild_dry_run_changes_nothing_and_reports(tmp_path: Path) -> None:
    d = tmp_path / "t-0"
    write_partition(d, [60, 60], index_interval=256)
    before = {p.name: p.read_bytes() for p in d.iterdir()}
    res = rebuild_target(resolve_targets([d])[0], 4096, dry_run=True)
    assert {p.name: p.read_bytes() for p in d.iterdir()} == before
    assert [Path(c.file).name for c in res.changed] == [
        "00000000000000000000.index",
        "00000000000000000000.timeindex",
        "00000000000000000300.index",
        "00000000000000000300.timeindex",
    ]
    proc = run_kafkatool(["index", "rebuild", str(d), "--index-interval", "256", "--format", "json"])
    assert proc.returncode == 0 and '"changed":true' not in proc.stdout


def test_rebuild_reports_damage_and_indexes_the_valid_part(tmp_path: Path) -> None:
    d = tmp_path / "t-0"
    write_partition(d, [50])
    log = d / "00000000000000000000.log"
    with open(log, "ab") as f:
        f.write(b"\x00" * 100)
    proc = run_kafkatool(["index", "rebuild", str(d)])
    assert proc.returncode == 1
    assert "kafkatool recover" in proc.stdout
    idx = OffsetIndex((d / "00000000000000000000.index").read_bytes(), 0)
    assert idx.entries and all(e.position < log.stat().st_size - 100 for e in idx)


def test_rebuild_refuses_while_the_log_dir_is_locked(tmp_path: Path) -> None:
    d = tmp_path / "logs" / "t-0"
    write_partition(d, [5])
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import fcntl,os,sys,time; fd=os.open(sys.argv[1], os.O_RDWR|os.O_CREAT); fcntl.lockf(fd, fcntl.LOCK_EX);"
            " fcntl.flock(fd, fcntl.LOCK_EX); print('locked', flush=True); time.sleep(60)",
            str(tmp_path / "logs" / ".lock"),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        proc = run_kafkatool(["index", "rebuild", str(d)])  # refuses at once (run_kafkatool has a timeout)
        assert proc.returncode == 3 and "locked by another process" in proc.stderr
    finally:
        holder.kill()
        holder.wait()
    shutil.rmtree(tmp_path / "logs")


# ---------------------------------------------------------------------------------------------
# one frame parser: the walk reads frames with records.read_frame and speaks Kafka's messages
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("size", [-1, 0, 13])
def test_walk_and_reader_share_the_size_field_message(size: int) -> None:
    data = struct.pack(">qi", 0, size) + bytes(64)
    scan = walk_segment(data, 0, path="/logs/t-0/00000000000000000000.log")
    # FileLogInputStream's text (Kafka names the file); the buffer reader says the same without it
    kafka = f"Found record size {size} smaller than minimum record overhead (14)"
    assert scan.stop == STOP_CORRUPT and scan.valid_bytes == 0
    assert scan.error == f"{kafka} in file /logs/t-0/00000000000000000000.log."
    with pytest.raises(CorruptRecordError) as exc:
        read_batch_header(data, 0, len(data))
    assert str(exc.value) == kafka


def test_walk_reports_kafkas_ensure_valid_for_a_short_v2_batch() -> None:
    data = struct.pack(">qiib", 0, 30, 0, 2) + bytes(40)
    scan = walk_segment(data, 0)
    assert scan.stop == STOP_CORRUPT
    # DefaultRecordBatch.ensureValid's text (Kafka 3.3)
    assert scan.error == "Record batch is corrupt (the size 42 is smaller than the minimum allowed overhead 61)"
