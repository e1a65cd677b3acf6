"""Topics as `kafka-topics.sh` sees them: Kafka's naming rules, the description model, health filters
and the plans for --create, --alter --partitions and --delete.

Everything here is pure: the backends (`topics_backend`) read a cluster into `TopicDescription`s and
carry plans out; `topics_text` prints them as Kafka's tools do.  Refusals carry Kafka's own message
(`Topic.validate`, `AdminZkClient.validateCreateOrUpdateTopic`/`addPartitions`,
`TopicCommand.parseReplicaAssignment`) so scripts that match on them keep working.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from kafkatool.cluster.assignment import (
    NOT_ALL_RACKS,
    AssignmentError,
    BrokerMetadata,
    assign_replicas_to_brokers,
)
from kafkatool.cluster.model import Broker
from kafkatool.jvm.random import JavaRandom

GROUP_METADATA_TOPIC = "__consumer_offsets"
TRANSACTION_STATE_TOPIC = "__transaction_state"
INTERNAL_TOPICS = frozenset({GROUP_METADATA_TOPIC, TRANSACTION_STATE_TOPIC})
MAX_NAME_LENGTH = 249
SHORT_MAX = 32767

COLLISION_WARNING = (
    "WARNING: Due to limitations in metric names, topics with a period ('.') or underscore ('_') could "
    "collide. To avoid issues it is best to use either, but not both."
)
PARTITIONS_WARNING = (
    "WARNING: If partitions are increased for a topic that has a key, the partition logic or ordering "
    "of the messages will be affected"
)
MIN_ISR = "min.insync.replicas"

#: The topic configs of Kafka 2.1 (`LogConfig.configNames`): over ZooKeeper nothing else checks names,
#: so kafkatool refuses others as the ZooKeeper-era tools did (`Unknown topic config name: …`).
ZK_TOPIC_CONFIGS = frozenset({
    "segment.bytes", "segment.ms", "segment.jitter.ms", "segment.index.bytes", "flush.messages", "flush.ms",
    "retention.bytes", "retention.ms", "max.message.bytes", "index.interval.bytes", "file.delete.delay.ms",
    "delete.retention.ms", "min.compaction.lag.ms", "min.cleanable.dirty.ratio", "cleanup.policy",
    "unclean.leader.election.enable", "min.insync.replicas", "compression.type", "preallocate",
    "message.format.version", "message.timestamp.type", "message.timestamp.difference.max.ms",
    "message.downconversion.enable", "leader.replication.throttled.replicas", "follower.replication.throttled.replicas",
})


def check_zk_topic_config_names(names: Iterable[str]) -> None:
    for name in names:
        if name not in ZK_TOPIC_CONFIGS:
            raise TopicError(f"Unknown topic config name: {name}")


class TopicError(ValueError):
    """Kafka refuses the request (its message); a usage error for the CLI."""


class TopicExistsError(TopicError):
    """The topic to create exists already (`--if-not-exists` makes this a no-op)."""


# -- names -----------------------------------------------------------------------------------------


def _utf16_length(s: str) -> int:
    return sum(2 if ord(c) > 0xFFFF else 1 for c in s)


def validate_name(name: str) -> None:
    """`org.apache.kafka.common.internals.Topic.validate`, with its messages, in its order."""
    prefix = "Topic name"
    if not name:
        raise TopicError(f"{prefix} is illegal, it can't be empty")
    if name in (".", ".."):
        raise TopicError(f'{prefix} cannot be "." or ".."')
    if _utf16_length(name) > MAX_NAME_LENGTH:
        raise TopicError(f"{prefix} is illegal, it can't be longer than {MAX_NAME_LENGTH} characters, {prefix}: {name}")
    if not re.fullmatch(r"[a-zA-Z0-9._-]+", name):
        raise TopicError(f'{prefix} "{name}" is illegal, it contains a character other than '
                         "ASCII alphanumerics, '.', '_' and '-'")


def has_collision_chars(name: str) -> bool:
    return "_" in name or "." in name


def collides(a: str, b: str) -> bool:
    """Metric names replace '.' by '_': two topics equal after that collide."""
    return a.replace(".", "_") == b.replace(".", "_")


def is_internal(name: str) -> bool:
    return name in INTERNAL_TOPICS


def select_topics(all_topics: Iterable[str], pattern: str | None, exclude_internal: bool) -> list[str]:
    """TopicCommand's `getTopics`: sorted names matching `--topic` as a whole-name Java regex.

    Kafka's `IncludeList` also accepts ',' as '|' and strips quotes around the pattern.
    """
    names = sorted(all_topics)
    if pattern is None:
        return [t for t in names if not (exclude_internal and is_internal(t))]
    regex = compile_include_list(pattern)
    return [t for t in names if regex.fullmatch(t) and not (exclude_internal and is_internal(t))]


def compile_include_list(pattern: str) -> re.Pattern[str]:
    """`kafka.utils.IncludeList`: trimmed, ',' means '|', spaces and surrounding quotes dropped."""
    text = re.sub(r"[\"']+$", "", re.sub(r"^[\"']+", "", pattern.strip().replace(",", "|").replace(" ", "")))
    try:
        return re.compile(text)
    except re.error:
        raise TopicError(f"{text} is an invalid regex.") from None


# -- the description model -------------------------------------------------------------------------


@dataclass
class PartitionDescription:
    partition: int
    leader: int | None  # None: no leader ("none")
    replicas: list[int]
    isr: list[int]
    adding: list[int] | None = None  # None: no reassignment known for this partition
    removing: list[int] | None = None
    elr: list[int] | None = None  # None: the broker did not say (4.0 prints "N/A")
    last_known_elr: list[int] | None = None

    @property
    def reassigning(self) -> bool:
        return self.adding is not None

    def replication_factor(self) -> int:
        """TopicCommand's `getReplicationFactor`: during a move, the replicas that stay or arrive."""
        if self.adding is not None and set(self.replicas) & (set(self.adding) | set(self.removing or [])):
            return len([b for b in self.replicas if b not in self.adding])
        return len(self.replicas)


@dataclass
class ConfigEntry:
    """One config of a topic as DescribeConfigs reports it (`source` is Kafka's ConfigSource name)."""

    name: str
    value: str | None
    source: str = "DYNAMIC_TOPIC_CONFIG"
    is_default: bool = False
    sensitive: bool = False
    read_only: bool = False
    synonyms: list[tuple[str, str, str | None]] = field(default_factory=list)  # (source, name, value)


@dataclass
class TopicDescription:
    name: str
    partitions: list[PartitionDescription]  # sorted by partition
    configs: list[ConfigEntry] = field(default_factory=list)  # in the order Kafka's tool prints them
    topic_id: str | None = None  # Kafka's base64 Uuid; None or ZERO: not printed
    marked_for_deletion: bool = False
    internal: bool = False

    def overrides(self) -> list[ConfigEntry]:
        return [c for c in self.configs if not c.is_default]

    def min_isr(self) -> int | None:
        for c in self.configs:
            if c.name == MIN_ISR and c.value is not None:
                try:
                    return int(c.value)
                except ValueError:
                    return None
        return None

    def replication_factor(self) -> int:
        return self.partitions[0].replication_factor() if self.partitions else 0


# -- health filters ---------------------------------------------------------------------------------

FILTERS = ("under_replicated", "unavailable", "under_min_isr", "at_min_isr")


@dataclass(frozen=True)
class DescribeFilter:
    """Kafka's report options; at most one partition filter may be combined with nothing else."""

    under_replicated: bool = False
    unavailable: bool = False
    under_min_isr: bool = False
    at_min_isr: bool = False
    with_overrides: bool = False

    @property
    def partition_filter(self) -> bool:
        return self.under_replicated or self.unavailable or self.under_min_isr or self.at_min_isr

    @property
    def describe_configs(self) -> bool:
        return not self.partition_filter

    @property
    def describe_partitions(self) -> bool:
        return not self.with_overrides

    def reasons(self, td: TopicDescription, p: PartitionDescription, live: set[int], legacy: bool = False) -> list[str]:
        """Which selected filters `p` matches (Kafka 3.3's DescribeOptions/PartitionDescription rules; with
        `legacy` Kafka 2.1's: under-replicated means an ISR shorter than the whole replica list)."""
        out = []
        min_isr = td.min_isr()
        no_leader = p.leader is None
        rf = len(p.replicas) if legacy else p.replication_factor()
        if self.under_replicated and rf - len(p.isr) > 0:
            out.append("under_replicated")
        if self.unavailable and (no_leader or p.leader not in live):
            out.append("unavailable")
        if self.under_min_isr and (no_leader or (min_isr is not None and len(p.isr) < min_isr)):
            out.append("under_min_isr")
        if self.at_min_isr and min_isr is not None and len(p.isr) == min_isr:
            out.append("at_min_isr")
        return out


# -- --replica-assignment --------------------------------------------------------------------------


def parse_replica_assignment(text: str) -> dict[int, list[int]]:
    """TopicCommand's `parseReplicaAssignment`: `0:1,1:2` → {0: [0, 1], 1: [1, 2]} (Kafka's refusals)."""
    out: dict[int, list[int]] = {}
    for i, part in enumerate(text.split(",")):
        try:
            brokers = [int(s.strip()) for s in part.split(":")]
        except ValueError:
            raise TopicError(f'For input string: "{part.strip()}"') from None
        dups = sorted({b for b in brokers if brokers.count(b) > 1}, key=brokers.index)
        if dups:
            raise TopicError(f"Partition replica lists may not contain duplicate entries: {','.join(map(str, dups))}")
        out[i] = brokers
        if len(brokers) != len(out[0]):
            # Kafka prints the JVM array reference (`[I@1b6d3586`); the brokers are more useful
            raise TopicError(f"Partition {i} has different replication factor: {','.join(map(str, brokers))}")
    return out


def parse_configs(pairs: Sequence[str]) -> dict[str, str]:
    """`--config k=v` (repeatable): TopicCommand splits on '=' with spaces around and trims."""
    out: dict[str, str] = {}
    for pair in pairs:
        kv = re.split(r"\s*=\s*", pair)
        if len(kv) != 2:
            raise TopicError('Invalid topic config: all configs to be added must be in the format "key=val".')
        out[kv[0].strip()] = kv[1].strip()
    return out


# -- plans ------------------------------------------------------------------------------------------


@dataclass
class CreatePlan:
    """A topic to create: with an `assignment` (given, or computed as ZooKeeper-era Kafka did), or with
    counts only (`assignment` None) for the controller to place the replicas; a count None asks for the
    brokers' default (`num.partitions`, `default.replication.factor`: -1 on the wire, KIP-464)."""

    topic: str
    assignment: dict[int, list[int]] | None
    configs: dict[str, str]
    partitions: int | None = None
    replication_factor: int | None = None

    def __post_init__(self) -> None:
        if self.assignment is not None:
            self.partitions = len(self.assignment)
            self.replication_factor = len(self.assignment[0]) if self.assignment else 0

    def row(self) -> dict[str, object]:
        """JSON row: `assignment` null means the controller places the replicas."""
        assignment = None if self.assignment is None else {str(p): r for p, r in sorted(self.assignment.items())}
        return {"action": "create", "topic": self.topic, "partitions": self.partitions,
                "replication_factor": self.replication_factor, "assignment": assignment, "configs": self.configs}


@dataclass
class AlterPlan:
    """Growing `topic` from `current` to `total` partitions: `new_partitions` holds the new partitions'
    replicas (computed over ZooKeeper; over the Admin API only those `--replica-assignment` gives, `{}`
    when it gives none past the current count), or is None when the controller places them."""

    topic: str
    current: int
    new_partitions: dict[int, list[int]] | None
    warnings: list[str] = field(default_factory=list)
    total: int = -1

    def __post_init__(self) -> None:
        if self.total < 0:
            self.total = self.current + len(self.new_partitions or {})

    def row(self) -> dict[str, object]:
        """JSON row: `new_partitions` null means the controller places the new replicas."""
        new = None if self.new_partitions is None else {str(p): r for p, r in sorted(self.new_partitions.items())}
        return {"action": "alter", "topic": self.topic, "partitions_before": self.current,
                "partitions_after": self.total, "new_partitions": new}


def broker_metadatas(brokers: Sequence[Broker], rack_aware: bool) -> list[BrokerMetadata]:
    """`AdminZkClient.getBrokerMetadatas`: sorted by id; some racks missing is refused unless disabled."""
    with_rack = [b for b in brokers if b.rack]
    if rack_aware and with_rack and len(with_rack) < len(brokers):
        raise TopicError(NOT_ALL_RACKS)
    return sorted((BrokerMetadata(b.id, b.rack if rack_aware and b.rack else None) for b in brokers), key=lambda m: m.id)


def check_new_topic(topic: str, existing: Iterable[str]) -> None:
    """Name rules and collisions (`validateCreateOrUpdateTopic`); the caller prints COLLISION_WARNING first."""
    existing = list(existing)
    validate_name(topic)
    if topic in existing:
        raise TopicExistsError(f"Topic '{topic}' already exists.")
    if has_collision_chars(topic):
        colliding = [t for t in existing if collides(topic, t)]
        if colliding:
            raise TopicError(f"Topic '{topic}' collides with existing topics: {', '.join(colliding)}")


def plan_create(
    topic: str,
    existing: Iterable[str],
    brokers: Sequence[Broker],
    partitions: int | None,
    replication_factor: int | None,
    replica_assignment: dict[int, list[int]] | None,
    configs: dict[str, str],
    rack_aware: bool = True,
    rng: JavaRandom | None = None,
    place: bool = True,
) -> CreatePlan:
    """What --create asks for: the given assignment; else with `place` (ZooKeeper, where Kafka 2.x's tool
    placed replicas itself) `AdminUtils.assignReplicasToBrokers`' (seedable), which needs both counts;
    else the counts alone (Admin API: the controller places replicas, as Kafka's TopicCommand lets it)."""
    if replication_factor is not None and not 1 <= replication_factor <= SHORT_MAX:
        raise TopicError(f"The replication factor must be between 1 and {SHORT_MAX} inclusive")
    if partitions is not None and partitions < 1:
        raise TopicError("The partitions must be greater than 0")
    check_new_topic(topic, existing)
    if replica_assignment is not None:
        live = {b.id for b in brokers}
        for p, reps in replica_assignment.items():
            missing = [b for b in reps if b not in live]
            if missing:
                raise TopicError(f"Some brokers specified for partition id {p} are not available. Specified brokers: "
                                 f"{', '.join(map(str, reps))}, available brokers: {', '.join(map(str, sorted(live)))}.")
        assignment = {p: list(r) for p, r in replica_assignment.items()}
    elif not place:
        return CreatePlan(topic, None, dict(configs), partitions, replication_factor)
    else:
        for value, name in ((partitions, "partitions"), (replication_factor, "replication-factor")):
            if value is None:  # Kafka 2.x's TopicCommand with --zookeeper needs both
                raise TopicError(f'Missing required argument "[{name}]"')
        assert partitions is not None and replication_factor is not None
        try:
            assignment = assign_replicas_to_brokers(broker_metadatas(brokers, rack_aware), partitions,
                                                    replication_factor, rng=rng)
        except AssignmentError as exc:
            raise TopicError(str(exc)) from None
    return CreatePlan(topic, assignment, dict(configs))


def plan_add_partitions(
    topic: str,
    existing: dict[int, list[int]],
    brokers: Sequence[Broker],
    partitions: int,
    replica_assignment: dict[int, list[int]] | None = None,
    rack_aware: bool = True,
) -> AlterPlan:
    """Over ZooKeeper, as Kafka 2.x's tool did it itself (`AdminZkClient.addPartitions`): only growth; new
    partitions from the broker after partition 0's leader, or the given assignment's, checked as 2.x did."""
    if topic == GROUP_METADATA_TOPIC:
        raise TopicError("The number of partitions for the offsets topic cannot be changed.")
    if 0 not in existing:
        raise TopicError(f"Unexpected existing replica assignment for topic '{topic}', partition id 0 is missing.")
    to_add = partitions - len(existing)
    if to_add <= 0:
        raise TopicError(f"The number of partitions for a topic can only be increased. Topic {topic} currently has "
                         f"{len(existing)} partitions, {partitions} would not be an increase.")
    rf = len(existing[0])
    if replica_assignment is not None:
        given = {p: r for p, r in replica_assignment.items() if p >= len(existing)}
        if len(given) < to_add:
            raise TopicError(f"Increasing the number of partitions by {to_add} but {len(given)} assignments provided.")
        live = {b.id for b in brokers}
        new = {}
        for p in sorted(given)[:to_add]:
            reps = given[p]
            if set(reps) - live:
                raise TopicError(f"Some brokers specified for partition id {p} are not available. Specified brokers: "
                                 f"{', '.join(map(str, reps))}, available brokers: {', '.join(map(str, sorted(live)))}.")
            if len(reps) != rf:
                raise TopicError(f"Inconsistent replication factor between partitions, partition 0 has {rf} while "
                                 f"partitions [{p}] have replication factors [{len(reps)}], respectively.")
            new[p] = list(reps)
        return AlterPlan(topic, len(existing), new, [PARTITIONS_WARNING])
    metas = broker_metadatas(brokers, rack_aware)
    leader0 = existing[0][0]
    start = next((i for i, m in enumerate(metas) if m.id >= leader0), -1)
    try:
        new = assign_replicas_to_brokers(metas, to_add, rf, fixed_start_index=max(0, start),
                                         start_partition_id=len(existing))
    except AssignmentError as exc:
        raise TopicError(str(exc)) from None
    return AlterPlan(topic, len(existing), new, [PARTITIONS_WARNING])


def plan_grow(topic: str, current: int, partitions: int, replica_assignment: dict[int, list[int]] | None) -> AlterPlan:
    """What Kafka's TopicCommand asks the controller for (`NewPartitions.increaseTo`): the new count and,
    with `--replica-assignment`, its entries past the current count (`drop(current)`), else no assignment.
    Kafka's tool checks nothing more: the controller refuses a count that is no increase, a wrong number of
    assignments or unknown brokers, with its release's message."""
    if topic == GROUP_METADATA_TOPIC:  # kafkatool's guard: Kafka's Admin-path tool would send it
        raise TopicError("The number of partitions for the offsets topic cannot be changed.")
    new = None
    if replica_assignment is not None:
        new = {p: list(r) for p, r in sorted(replica_assignment.items()) if p >= current}
    return AlterPlan(topic, current, new, total=partitions)


def check_delete(topic: str) -> None:
    if is_internal(topic):
        raise TopicError(f"Topic {topic} is a kafka internal topic and is not allowed to be marked for deletion.")
