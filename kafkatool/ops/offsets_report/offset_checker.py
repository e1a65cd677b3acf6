"""ConsumerOffsetChecker (Kafka 0.8-0.10): the lag text of ZooKeeper-stored groups.

Topics sorted, partitions sorted, `unknown` where no offset or log size is known, and with
`--broker-info` the brokers contacted in the order of the Scala 2.11 map the tool kept them in.
"""

from __future__ import annotations

from kafkatool.ops.offsets_report.orders import scala211_int_map_order
from kafkatool.ops.offsets_report.rows import TP, PartitionLag, _s, lag_of

_CHECKER = "{:<15} {:<30} {:<3} {:<15} {:<15} {:<15} {}\n"


def checker_rows(
    group: str,
    partitions: dict[str, list[int]],
    committed: dict[TP, int | None],
    leaders: dict[TP, int | None],
    log_end: dict[TP, int | None],
    owners: dict[TP, str | None],
) -> list[PartitionLag]:
    """Rows of ConsumerOffsetChecker: topics sorted, partitions sorted; `leader` None = no broker."""
    rows = []
    for topic in sorted(partitions):
        for p in sorted(partitions[topic]):
            tp = (topic, p)
            off = committed.get(tp)
            leo = log_end.get(tp)
            rows.append(PartitionLag(group, topic, p, off, leo, lag_of(off, leo), owner=owners.get(tp), leader=leaders.get(tp)))
    return rows


def format_offset_checker(rows: list[PartitionLag], broker_info: dict[int, str] | None = None) -> str:
    """ConsumerOffsetChecker's output; `broker_info` (id -> host:port) adds `--broker-info`."""
    out = [_CHECKER.format("Group", "Topic", "Pid", "Offset", "logSize", "Lag", "Owner")]
    contacted: list[int] = []
    for r in rows:
        if r.leader is None:
            out.append(f"No broker for partition {r.topic} - {r.partition}\n")
            continue
        contacted.append(r.leader)
        offset = "unknown" if r.current_offset is None else str(r.current_offset)
        if r.current_offset is None or r.current_offset == -1 or r.log_end_offset is None:
            lag = "unknown"
        else:
            lag = str(r.log_end_offset - r.current_offset)
        log_size = "unknown" if r.log_end_offset is None else str(r.log_end_offset)  # no broker answered
        out.append(_CHECKER.format(r.group, _s(r.topic), _s(r.partition), offset, log_size, lag,
                                   r.owner if r.owner is not None else "none"))
    if broker_info is not None:
        out.append("BROKER INFO\n")
        for bid in scala211_int_map_order(contacted):
            if bid in broker_info:
                out.append(f"{bid} -> {broker_info[bid]}\n")
    return "".join(out)
