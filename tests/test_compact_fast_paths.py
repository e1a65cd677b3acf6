"""The cleaner's fast paths on the cases they must get exactly right.

Cleaning copies batches that keep every record straight from the segment, judges the records the
offset map was built from by offset (and, for batches the first pass decoded, without decoding them
again), and decodes in full only batches that lose records.  These tests pin the outcomes those
shortcuts could get wrong: markers that must stay as empty batches, tombstones in batches kept whole,
and a log whose offsets go backwards (where judging by offset must not be used).
"""

from __future__ import annotations

from kafkatool.log.index import AbortedTxn
from kafkatool.ops.compact import compact_partition
from tests.test_compact import CFG, NOW, BatchSpec, build_log, read_log

PID = 7


def _batches(d):
    return [(b.base_offset, b.count, b.is_control, b.delete_horizon_ms) for b in read_log(d)[1]]


def test_a_discarded_marker_that_ends_the_range_stays_as_an_empty_batch(tmp_path):
    d = tmp_path / "marker-0"
    segs = [
        [BatchSpec([(b"k", b"x")], producer_id=PID, transactional=True), BatchSpec(control=0, producer_id=PID)],
        [BatchSpec([(b"z", b"z")], producer_id=PID)],  # the producer's last data batch, in the active segment
    ]
    build_log(d, segs, aborted=[AbortedTxn(0, PID, 0, 1, 0)])
    compact_partition(d, CFG, now_ms=NOW)  # the aborted data goes; the marker stays (its txn had data)
    assert _batches(d) == [(1, 1, True, None), (2, 1, False, None)]
    compact_partition(d, CFG, now_ms=NOW + 1, first_dirty_offset=0)  # no data left: stamped
    horizon = NOW + 1 + CFG.delete_retention_ms
    assert _batches(d) == [(1, 1, True, horizon), (2, 1, False, None)]
    # past the horizon the marker record goes, but its batch ends the cleaned range: kept, empty
    compact_partition(d, CFG, now_ms=horizon, first_dirty_offset=0)
    assert _batches(d) == [(1, 0, True, None), (2, 1, False, None)]


def test_tombstones_in_a_batch_kept_whole_are_stamped_not_copied(tmp_path):
    d = tmp_path / "tomb-0"
    segs = [[BatchSpec([(b"a", None), (b"b", b"1")])], [BatchSpec([(b"z", b"z")])]]
    build_log(d, segs)
    res = compact_partition(d, CFG, now_ms=NOW)
    # every record stays, but the tombstone's batch gets its delete horizon: rebuilt, not copied
    assert res.stats.horizons_stamped == 1 and res.stats.tombstones_written == 1
    assert _batches(d) == [(0, 2, False, NOW + CFG.delete_retention_ms), (2, 1, False, None)]
    compact_partition(d, CFG, now_ms=NOW + CFG.delete_retention_ms, first_dirty_offset=0)
    assert read_log(d)[0] == [(1, b"b", b"1"), (2, b"z", b"z")]


def test_offsets_going_backwards_are_judged_by_key(tmp_path):
    """Two batches claiming the same offsets (a damaged log the cleaner still accepts): judging by offset
    would confuse their records, so the cleaner looks every key up, as before."""
    d = tmp_path / "back-0"
    segs = [[BatchSpec([(b"a", b"1"), (b"b", b"2")])], [BatchSpec([(b"z", b"z")])]]
    built = build_log(d, segs)
    # append a batch reusing offsets 0..1 to the first segment: keys a (again) and c
    from kafkatool.log.files import list_segments
    from kafkatool.log.record import Record
    from kafkatool.log.writer import encode_v2_batch

    first = list_segments(d)[0]
    extra = encode_v2_batch([Record(0, NOW, b"a", b"3", ()), Record(1, NOW, b"c", b"4", ())], 0)
    with open(first.log, "ab") as f:
        f.write(extra)
    assert built.active_base == 2
    compact_partition(d, CFG, now_ms=NOW, first_dirty_offset=0)
    # a's latest is the second a (offset 0 again): by key, the first a (also offset 0) is kept too, as
    # Kafka's offset comparison keeps it; b and c stay
    assert read_log(d)[0] == [(0, b"a", b"1"), (1, b"b", b"2"), (0, b"a", b"3"), (1, b"c", b"4"), (2, b"z", b"z")]


def test_a_first_clean_decodes_each_batch_once(tmp_path, monkeypatch):
    """Batches the offset-map pass decoded are judged from what it noted, not decoded again."""
    import kafkatool.ops.compact.cleaner as compact

    decoded: list[int] = []
    real = compact.decode_key_columns

    def counting(batches, **kw):
        decoded.extend(b.base_offset for b in batches)
        return real(batches, **kw)

    monkeypatch.setattr(compact, "decode_key_columns", counting)
    d = tmp_path / "once-0"
    segs = [[BatchSpec([(b"k%d" % (i % 5), b"v%d" % i) for i in range(4)]) for _ in range(3)] for _ in range(3)]
    build_log(d, segs + [[BatchSpec([(b"z", b"z")])]])
    res = compact_partition(d, CFG, now_ms=NOW)
    assert sorted(decoded) == list(range(0, 36, 4))  # the 9 dirty batches, once each (by the first pass)
    assert res.stats.records_read == 36 and read_log(d)[0][-1] == (36, b"z", b"z")
