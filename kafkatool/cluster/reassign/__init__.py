"""kafka-reassign-partitions as a library: Kafka's JSON and text, plan files, and the actions.

Text and JSON follow Kafka 3.x's `ReassignPartitionsCommand` (compact JSON, `version` first,
partitions sorted by topic then partition, `log_dirs` of `"any"`), so output can be diffed against
Kafka's and files passed between the two tools.  Beyond Kafka:

* plan files: what `--generate` proposes and `--execute` saves for rollback is Kafka's reassignment
  JSON plus a `"kafkatool"` object that records the assignment the plan was made from (and the seed,
  strategy and brokers), so `--execute` can refuse when the cluster drifted since (see PLAN_FORMAT);
* summaries of what a plan moves: replicas and bytes per broker, preferred-leader counts;
* throttles are applied in the same ZooKeeper transaction as the reassignment, or rolled back on the
  Admin API when the cluster accepted none of it.

One module per part of the command, as `ReassignPartitionsCommand` divides it:

* `plan_file`  the JSON files: `formatAsReassignmentJson`, `parseTopicsData`,
  `parsePartitionReassignmentData`, `parseExecuteAssignmentArgs`'s checks; our plan section
* `generate`   `--generate` (`generateAssignment`), and partition sizes for the planner
* `summary`    what a plan moves, per broker (ours: Kafka prints none)
* `execute`    `--execute` (`executeAssignment`, `executeMoves`): its checks, drift, the texts
* `throttles`  the throttle configs: `calculateProposedMoveMap`, the leader/follower throttles,
  `clearAllThrottles`
* `verify`     `--verify` (`findPartitionReassignmentStates`, `findLogDirMoveStates`) and its text
* `ongoing`    `--cancel` and `--list` (`cancelAssignment`, `curReassignmentsToString`)
* `errors`     the three ways a command ends early

The strategies (`kafkatool.cluster.assignment`, `minimal`) and Kafka 2.1's texts (`reassign_21`)
live beside the package.  Functions here return values and text; the CLI prints them.  Every name
the CLI and tests use is re-exported here.
"""

from __future__ import annotations

from kafkatool.cluster.reassign.errors import LogDirMoveTimeout, ReassignInputError, ReassignRefused
from kafkatool.cluster.reassign.execute import (
    CANNOT_EXECUTE_BECAUSE_OF_EXISTING,
    RUNNING_ASSIGNMENT,
    VERIFY_PERIODICALLY,
    Drift,
    ExecutePlan,
    RunningThrottleUpdate,
    current_assignment_text,
    detect_drift,
    drift_message,
    log_dir_moves_started_text,
    prepare_execute,
    reassign_errors_text,
    running_throttle_update,
    start_log_dir_moves,
    started_text,
)
from kafkatool.cluster.reassign.generate import GenerateResult, generate, generate_text, parse_sizes
from kafkatool.cluster.reassign.ongoing import (
    cancel_errors_text,
    cancellable,
    cancelled_text,
    list_rows,
    list_text,
    no_active_moves_text,
)
from kafkatool.cluster.reassign.plan_file import (
    ANY_LOG_DIR,
    PLAN_FORMAT,
    PlanMeta,
    ReassignmentFile,
    compact_json,
    duplicates,
    format_reassignment_json,
    parse_broker_list,
    parse_json,
    parse_reassignment,
    parse_topics_to_move,
    plan_document,
    utc_now,
    validate_for_execute,
)
from kafkatool.cluster.reassign.summary import (
    BrokerMoves,
    MoveSummary,
    format_comparison,
    format_summary,
    human_bytes,
    summarize,
)
from kafkatool.cluster.reassign.throttles import (
    BROKER_THROTTLES,
    FOLLOWER_RATE,
    FOLLOWER_REPLICAS,
    LEADER_RATE,
    LEADER_REPLICAS,
    LOG_DIR_RATE,
    TOPIC_THROTTLES,
    PartitionMove,
    ThrottlesLeftError,
    clear_throttles,
    move_map,
    throttle_changes,
    throttled_entities,
    throttles_left,
)
from kafkatool.cluster.reassign.verify import (
    LogDirMoveState,
    PartitionReassignmentState,
    VerifyResult,
    move_states_text,
    partition_states_text,
    verify,
    verify_text,
)

__all__ = [
    "ReassignInputError",
    "ReassignRefused",
    "LogDirMoveTimeout",
    "ANY_LOG_DIR",
    "PLAN_FORMAT",
    "compact_json",
    "format_reassignment_json",
    "parse_json",
    "duplicates",
    "parse_topics_to_move",
    "parse_broker_list",
    "PlanMeta",
    "ReassignmentFile",
    "parse_reassignment",
    "validate_for_execute",
    "utc_now",
    "plan_document",
    "BrokerMoves",
    "MoveSummary",
    "summarize",
    "human_bytes",
    "format_summary",
    "format_comparison",
    "GenerateResult",
    "generate_text",
    "generate",
    "parse_sizes",
    "LEADER_RATE",
    "FOLLOWER_RATE",
    "LOG_DIR_RATE",
    "LEADER_REPLICAS",
    "FOLLOWER_REPLICAS",
    "BROKER_THROTTLES",
    "TOPIC_THROTTLES",
    "PartitionMove",
    "move_map",
    "throttle_changes",
    "throttled_entities",
    "clear_throttles",
    "ThrottlesLeftError",
    "throttles_left",
    "PartitionReassignmentState",
    "LogDirMoveState",
    "VerifyResult",
    "verify",
    "partition_states_text",
    "move_states_text",
    "verify_text",
    "CANNOT_EXECUTE_BECAUSE_OF_EXISTING",
    "VERIFY_PERIODICALLY",
    "current_assignment_text",
    "Drift",
    "detect_drift",
    "drift_message",
    "RUNNING_ASSIGNMENT",
    "RunningThrottleUpdate",
    "running_throttle_update",
    "ExecutePlan",
    "prepare_execute",
    "start_log_dir_moves",
    "log_dir_moves_started_text",
    "started_text",
    "reassign_errors_text",
    "no_active_moves_text",
    "cancellable",
    "cancelled_text",
    "cancel_errors_text",
    "list_text",
    "list_rows",
]
