"""What recovering a segment changes: truncation at the first invalid batch, the later segments
deleted after it, and the rebuilt indexes (LogLoader.recoverLog with LogSegment.recover).

A segment truncated past the recovery point takes every later segment with it (the broker deletes
them); one below it is truncated alone.  What `--salvage` can read past the damage is scanned here
(`ops/salvage`), and the offsets lost are described either way.  Indexes are rebuilt for every
recovered segment (`.txnindex` from the transactions open before each run of segments:
`log/producer_state.TxnIndexState`) and written only where they differ.
"""

from __future__ import annotations

from pathlib import Path

from kafkatool.log.files import LOG_SUFFIX, TXN_INDEX_SUFFIX, SegmentFiles, segment_name
from kafkatool.log.producer_state import TxnIndexState
from kafkatool.log.segment import SegmentWalk
from kafkatool.ops import salvage as salv
from kafkatool.ops.indexcheck import index_changes, rebuilt_files
from kafkatool.ops.recovery.plan import SEGMENT_SUFFIXES, Action, PartitionPlan
from kafkatool.ops.recovery.segments import DirView, last_offset_of


def plan_truncations(
    plan: PartitionPlan,
    view: DirView,
    bases: list[int],
    scans: dict[int, SegmentWalk],
    truncated: list[int],
    later: list[int],
) -> None:
    """Truncations (with what salvage can read past the damage), deletion of the `later` segments, and
    the index rebuilds of every recovered segment, as actions in the broker's order."""
    options = plan.options
    pdir = plan.dir
    trunc_actions: dict[int, Action] = {}
    delete_actions: list[Action] = []
    for tb in truncated:
        scan = scans[tb]
        name = segment_name(tb, LOG_SUFFIX)
        real = view.real(name)
        fs = salv.scan_file(real, tb, scan.valid_bytes, scan.next_offset)
        nxt_base = next((x for x in bases if x > tb), None)
        deletes_after = bool(later) and tb == truncated[-1]
        files_s: list[tuple[Path, salv.FileSalvage]] = [(real, fs)]
        nexts: list[int | None] = [nxt_base]
        if options.salvage_dir is not None and deletes_after:
            for i, x in enumerate(later):
                lp = view.real(segment_name(x, LOG_SUFFIX))
                files_s.append((lp, salv.scan_file(lp, x)))
                nexts.append(later[i + 1] if i + 1 < len(later) else None)
        plan.salvage.extend(files_s)
        plan.salvage_next_bases.extend(nexts)
        if options.salvage_dir is not None:
            plan.lost_offsets.extend(
                salv.lost_offset_ranges(scan.next_offset, [f for _, f in files_s], nexts)
            )
        elif deletes_after:
            plan.lost_offsets.extend(_lost_without_salvage(scan.next_offset, fs, later, plan.log_end_before))
        else:
            bound = None if nxt_base is None else nxt_base - 1
            plan.lost_offsets.extend(_lost_without_salvage(scan.next_offset, fs, [], None, bound))
        readable = (
            f"; {len(fs.batches)} valid batches ({fs.salvaged_bytes} bytes) were found past the damage"
            + (
                " and are written to the salvage dir"
                if options.salvage_dir
                else ", use --salvage DIR to keep them"
            )
            if fs.batches
            else ""
        )
        kind = "empty_segment" if scan.valid_bytes == 0 and scan.stop == "invalid_offset" else "truncate_log"
        trunc_actions[tb] = Action(
            kind,
            name,
            f"truncate {name} at byte {scan.valid_bytes}: {scan.truncated_bytes} bytes removed, from offset "
            f"{scan.next_offset} ({scan.error}){readable}",
            {
                "from_position": scan.valid_bytes,
                "to_position": scan.size,
                "bytes": scan.truncated_bytes,
                "first_offset_lost": scan.next_offset,
                "reason": scan.error,
                "stop": scan.stop,
                "salvageable_batches": len(fs.batches),
                "salvageable_bytes": fs.salvaged_bytes,
            },
            data_loss=True,
        )
    for i, x in enumerate(later):
        files_x = [segment_name(x, s) for s in SEGMENT_SUFFIXES if view.exists(segment_name(x, s))]
        nbytes = sum(view.size(f) for f in files_x)
        lp = view.real(segment_name(x, LOG_SUFFIX))
        last_x = later[i + 1] - 1 if i + 1 < len(later) else last_offset_of(lp, x)
        span = describe_range(x, last_x) if last_x is None or last_x >= x else "no offsets"
        plan.segment_deletes.append(x)
        delete_actions.append(
            Action(
                "delete_segment",
                segment_name(x, LOG_SUFFIX),
                f"delete segment {x} ({', '.join(files_x)}; {nbytes} bytes, {span}): it follows the truncation",
                {"files": files_x, "bytes": nbytes, "base_offset": x, "last_offset": last_x},
                data_loss=True,
            )
        )

    # index rebuilds (txn indexes need the transactions open before each run of segments)
    kept_scans = [s for b, s in scans.items() if b not in later]
    aborted = TxnIndexState(pdir, [SegmentFiles(pdir, x) for x in bases], plan.log_start).entries(kept_scans)
    for b in sorted(scans):
        if b in later:
            continue
        files = rebuilt_files(
            SegmentFiles(pdir, b), scans[b], aborted.get(b), view.exists(segment_name(b, TXN_INDEX_SUFFIX))
        )
        if b in trunc_actions:
            plan.truncations.append((b, scans[b].valid_bytes, files))
            plan.actions.append(trunc_actions[b])
            for c in index_changes(files, actual=lambda q: view.get(q.name)):
                if c.changed:
                    plan.actions.append(_index_action(c, "written with the truncated log"))
            continue
        for c in index_changes(files, actual=lambda q: view.get(q.name)):
            if c.changed:
                plan.actions.append(_index_action(c, plan.reasons.get(b, "")))
                plan.index_writes[Path(c.file)] = files[Path(c.file)]
    plan.actions.extend(delete_actions)


def describe_range(first: int, last: int | None) -> str:
    if last is None:
        return f"offsets {first} and up (how far is unknown)"
    return f"offset {first}" if first == last else f"offsets {first}..{last}"


def _lost_without_salvage(
    first: int, fs: salv.FileSalvage, later: list[int], log_end_before: int | None, bound: int | None = None
) -> list[tuple[int, int | None]]:
    """Offsets a truncation without --salvage drops: from the first dropped one to the last known
    (`bound`: the offset before the next segment, when that one is kept)."""
    if bound is not None:
        return [(first, bound)] if bound >= first else []
    hi: int | None = None
    if later:
        hi = None if log_end_before is None else log_end_before - 1
    else:
        if fs.batches:
            hi = fs.batches[-1].last_offset
        lost = fs.lost_ranges
        if lost and lost[-1][1] == fs.end and not fs.tail_zero:
            if fs.tail_last is None:
                return [(first, None)]
            hi = max(hi if hi is not None else -1, fs.tail_last)
    if hi is not None and hi >= first:
        return [(first, hi)]
    return []


def _index_action(c, why: str) -> Action:  # type: ignore[no-untyped-def]
    name = Path(c.file).name
    if c.old_bytes is None:
        text = f"create {name} ({c.new_entries} entries)"
    else:
        text = f"rewrite {name}: {c.old_bytes} -> {c.new_bytes} bytes ({c.old_entries} -> {c.new_entries} entries)"
    if why:
        text += f" [{why}]"
    return Action(
        "write_index" if c.old_bytes is None else "rewrite_index",
        name,
        text,
        {
            "type": c.type,
            "old_bytes": c.old_bytes,
            "new_bytes": c.new_bytes,
            "old_entries": c.old_entries,
            "new_entries": c.new_entries,
        },
    )


# ---------------------------------------------------------------------------------------------
