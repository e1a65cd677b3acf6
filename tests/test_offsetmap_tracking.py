"""OffsetMap.track_offsets: which records are their key's latest, known by offset alone.

Checked against a dict model of the cleaner's first pass (log order, the last put of a key wins, puts
stop where the map fills), and the cases where tracking must switch itself off.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from kafkatool.ops.compact.offsetmap import OffsetMap, digests


@settings(max_examples=80, deadline=None)
@given(
    keys=st.lists(st.integers(0, 40), min_size=1, max_size=300),
    gaps=st.lists(st.integers(1, 3), min_size=300, max_size=300),
    slots=st.integers(3, 200),
    chunk=st.integers(1, 64),
)
def test_latest_by_offset_matches_a_dict(keys, gaps, slots, chunk):
    offsets = np.cumsum(gaps[: len(keys)]) + 1000
    omap = OffsetMap(24 * slots)
    assert omap.track_offsets(1000, int(offsets[-1]) + 1) == (offsets[-1] + 1 - 1000 <= omap.memory // 16)
    tracking = omap._track is not None
    raw = [b"k%d" % k for k in keys]
    consumed = 0
    for c in range(0, len(raw), chunk):
        k = omap.put_until_full(digests(raw[c : c + chunk]), offsets[c : c + chunk])
        consumed += k
        if k < len(raw[c : c + chunk]):
            break
    model: dict[bytes, int] = {}
    for key, off in zip(raw[:consumed], offsets[:consumed].tolist(), strict=True):
        model[key] = off
    put, latest = omap.latest_by_offset(np.concatenate(([5, 999], offsets, [10**9])))
    assert not put[:2].any() and not put[-1] and not latest[-1]
    put, latest = put[2:-1], latest[2:-1]
    if not tracking:
        assert not put.any() and not latest.any()
        return
    assert put.tolist() == [i < consumed for i in range(len(raw))]
    assert latest.tolist() == [i < consumed and model[raw[i]] == offsets[i] for i in range(len(raw))]


def test_tracking_switches_off_when_it_cannot_name_records():
    omap = OffsetMap(24 * 1000)
    assert not omap.track_offsets(0, omap.memory // 16 + 1)  # more than 1/16 of the map's memory
    assert omap.track_offsets(0, 100)
    omap.put_until_full(digests([b"a", b"b"]), np.array([5, 4]))  # offsets going back
    assert not omap.latest_by_offset(np.array([4, 5]))[0].any()
    assert omap.track_offsets(0, 100)
    omap.put_until_full(digests([b"a"]), np.array([5]))
    assert omap.latest_by_offset(np.array([5]))[1].tolist() == [True]
    omap.put(b"a", 6)  # single puts are not tracked
    assert not omap.latest_by_offset(np.array([5]))[0].any()
    assert omap.track_offsets(0, 100)
    omap.clear()
    assert not omap.latest_by_offset(np.array([5]))[0].any()
