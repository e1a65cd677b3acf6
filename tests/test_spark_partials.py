"""The RDD queries' partial aggregates merge to the single-process scanner's rows (no Spark needed).

`kafkatool.spark.partials` runs each task's part in a Spark worker and merges the parts in the
driver; here the same functions run in this process, task by task with a pickle round trip between
(what Spark does to them), over every way the parts can meet: partitions whole in a task or cut
across several, keys read by one task or by many (the dict merge), two replicas of a partition
(equal offsets in two tasks: the tie rule), and all-distinct keys (the set check alone).
"""

from __future__ import annotations

import pickle
import shutil
from pathlib import Path

import pytest

from kafkatool.log.record import Record
from kafkatool.log.writer import SegmentWriter, encode_v2_batch
from kafkatool.ops.scan import ScanSettings, scan
from kafkatool.slices.planning import plan_tasks
from tests.support.spark import write_log_dir

pytest.importorskip("pyarrow")

QUERIES = ("summary", "keys", "timeline")


def _rows(paths: list[str], query: str, split: int, top: int = 30, by: str = "records") -> list[dict]:
    from kafkatool.spark import partials

    settings = ScanSettings(split_size=split)
    groups = plan_tasks(paths, split)
    job = partials.Job(query, settings, partials.split_units(groups, query), top, by)
    merged = job.empty()
    for group in groups:
        for part in partials.map_task(job, [group]):
            merged = merged.merge(pickle.loads(pickle.dumps(part)))
    return merged.finish().rows()


def _expected(paths: list[str], query: str, top: int = 30, by: str = "records") -> list[dict]:
    acc = scan(paths, ScanSettings(), queries=(query,))
    return {"summary": acc.summary_rows, "keys": lambda: acc.key_rows(top, by), "timeline": acc.timeline_rows}[query]()


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_log_dir(tmp_path_factory.mktemp("partials") / "logs", seed=3, batches=40)


@pytest.mark.parametrize("split", [1 << 30, 5000, 1500])
@pytest.mark.parametrize("query", QUERIES)
def test_parts_merge_to_the_local_rows(logs: Path, query: str, split: int) -> None:
    paths = [str(logs)]
    assert _rows(paths, query, split) == _expected(paths, query)
    if query == "keys":
        assert _rows(paths, query, split, 5, "payload_bytes") == _expected(paths, query, 5, "payload_bytes")


def test_cut_partitions_merge_keys_read_by_several_tasks(logs: Path) -> None:
    from kafkatool.spark import partials

    groups = plan_tasks([str(logs)], 1500)
    assert partials.split_units(groups, "summary") and partials.split_units(groups, "keys")
    assert _rows([str(logs)], "summary", 1500) == _expected([str(logs)], "summary")


def test_two_replicas_of_a_partition_count_as_one_partition(logs: Path, tmp_path: Path) -> None:
    """The same offsets in two tasks: a key's latest record is the larger (offset, payload), as in Scan."""
    for broker in ("a", "b"):
        shutil.copytree(logs / "plain-0", tmp_path / broker / "plain-0")
    paths = [str(tmp_path / "a"), str(tmp_path / "b")]
    from kafkatool.spark import partials

    for split in (1 << 30, 3000):
        groups = plan_tasks(paths, split)
        assert (("plain", 0) in partials.split_units(groups, "summary")) == (split == 3000)
        for query in QUERIES:
            assert _rows(paths, query, split) == _expected(paths, query), (query, split)


def test_all_distinct_keys_across_tasks(tmp_path: Path) -> None:
    part = tmp_path / "uniq-0"
    w = SegmentWriter(part, 0, index_interval=1000)
    for b in range(40):
        recs = [Record(b * 50 + i, 1_700_000_000_000 + b, b"k%06d" % (b * 50 + i), b"v" * (i % 7), ())
                for i in range(50)]
        w.append(encode_v2_batch(recs, base_offset=b * 50), b * 50 + 49, 1_700_000_000_000 + b, b * 50)
    w.close()
    paths = [str(part)]
    groups = plan_tasks(paths, 8000)
    assert len(groups) > 2
    for query in QUERIES:
        assert _rows(paths, query, 8000) == _expected(paths, query), query
