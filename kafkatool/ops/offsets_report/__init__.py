"""Group offsets as reports: lag in messages and in time, Kafka's texts, export and import formats.

Everything here is pure (no network, no printing): the CLI gathers offsets through
`kafkatool.cluster.groups` or `kafkatool.ops.offsets_log` and hands them here.  The package follows
the services of Kafka's ConsumerGroupCommand, one module each:

* `rows`: the report's rows (Kafka's PartitionAssignmentState, MemberAssignmentState, GroupInformation).
* `orders`: the JVM hash-collection orders Kafka's rows come out in (`TopicPartition.hashCode`).
* `describe`: `--describe` (`--offsets`, `--members [--verbose]`, `--state`), each release's text and order.
* `reset`: `--reset-offsets`: the scenarios, the plan and its text (`prepareOffsetsToReset`).
* `export`: `--export` CSV, ExportZkOffsets lines, kafkatool's JSON, and the `--from-file` reader.
* `offset_checker`: ConsumerOffsetChecker's text (ZooKeeper-stored groups, Kafka 0.8-0.10).
* `get_offset_shell`: GetOffsetShell's `topic:partition:offset` lines.
* `time_lag`: lag in time, consume/produce rates, time to drain (kafkatool's own).
* `gather`: live groups' rows (`collectGroupsOffsets`; ConsumerOffsetChecker's ZooKeeper reads).
* `offline`: groups replayed from `__consumer_offsets` segments, and the commit history.

Every public name is re-exported here: `from kafkatool.ops import offsets_report as rep` reaches them all.
"""

from __future__ import annotations

from kafkatool.ops.offsets_report.describe import (
    NUMERIC_ASSIGNMENT_SINCE,
    SORTED_DESCRIBE_SINCE,
    describe_chunks,
    describe_rows,
    format_describe,
    format_members,
    format_state,
    members_chunks_40,
    state_chunks_40,
)
from kafkatool.ops.offsets_report.export import (
    EXPORT_JSON_VERSION,
    OffsetsFileError,
    export_csv,
    export_json,
    export_zk,
    parse_offsets_file,
)
from kafkatool.ops.offsets_report.gather import (
    gather_kafka,
    gather_zookeeper,
)
from kafkatool.ops.offsets_report.get_offset_shell import (
    format_get_offset_shell,
)
from kafkatool.ops.offsets_report.offline import (
    format_history,
    gather_offline,
)
from kafkatool.ops.offsets_report.offset_checker import (
    checker_rows,
    format_offset_checker,
)
from kafkatool.ops.offsets_report.orders import (
    java_hashmap_order,
    java_hashset_order,
    scala211_int_map_order,
    scala_immutable_map_order,
    scala_mutable_map_order,
)
from kafkatool.ops.offsets_report.reset import (
    SIZED_RESET_SINCE,
    ResetError,
    ResetPlan,
    ResetSpec,
    format_reset,
    format_reset_warnings,
    parse_datetime_ms,
    parse_duration_ms,
    plan_reset,
    reset_rows,
)
from kafkatool.ops.offsets_report.rows import (
    MISSING,
    RATE_COLUMNS,
    ROW_COLUMNS,
    TIME_COLUMNS,
    TP,
    GroupReport,
    MemberRow,
    PartitionLag,
    StateRow,
    lag_of,
    member_rows,
)
from kafkatool.ops.offsets_report.time_lag import (
    add_time_lag,
    apply_rates,
    apply_time_lag,
    format_duration_ms,
    format_time_lag,
    format_timestamp,
    sample_key,
)

__all__ = [
    "EXPORT_JSON_VERSION",
    "GroupReport",
    "MISSING",
    "MemberRow",
    "NUMERIC_ASSIGNMENT_SINCE",
    "OffsetsFileError",
    "PartitionLag",
    "RATE_COLUMNS",
    "ROW_COLUMNS",
    "ResetError",
    "ResetPlan",
    "ResetSpec",
    "SIZED_RESET_SINCE",
    "SORTED_DESCRIBE_SINCE",
    "StateRow",
    "TIME_COLUMNS",
    "TP",
    "add_time_lag",
    "apply_rates",
    "apply_time_lag",
    "checker_rows",
    "describe_chunks",
    "describe_rows",
    "export_csv",
    "export_json",
    "export_zk",
    "format_describe",
    "format_duration_ms",
    "format_get_offset_shell",
    "format_history",
    "format_members",
    "format_offset_checker",
    "format_reset",
    "format_reset_warnings",
    "format_state",
    "format_time_lag",
    "format_timestamp",
    "gather_kafka",
    "gather_offline",
    "gather_zookeeper",
    "java_hashmap_order",
    "java_hashset_order",
    "lag_of",
    "member_rows",
    "members_chunks_40",
    "parse_datetime_ms",
    "parse_duration_ms",
    "parse_offsets_file",
    "plan_reset",
    "reset_rows",
    "sample_key",
    "scala211_int_map_order",
    "scala_immutable_map_order",
    "scala_mutable_map_order",
    "state_chunks_40",
]
