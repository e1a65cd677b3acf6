"""The cleaner's settings: topic configs and broker defaults by Kafka's names, checked as the broker checks them."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, replace
from typing import Any


class CompactInputError(ValueError):
    """Bad settings or a directory that is not a partition: the caller's input is wrong."""


@dataclass(frozen=True)
class CompactConfig:
    """Topic and cleaner settings, defaulting to Kafka's defaults."""

    segment_bytes: int = 1073741824  # segment.bytes: a cleaned group never exceeds it
    segment_index_bytes: int = 10485760  # segment.index.bytes
    index_interval_bytes: int = 4096  # index.interval.bytes: index density of cleaned segments
    delete_retention_ms: int = 86400000  # delete.retention.ms: how long tombstones and markers stay
    min_compaction_lag_ms: int = 0  # min.compaction.lag.ms: younger segments are not cleaned
    max_compaction_lag_ms: int = 2**63 - 1  # max.compaction.lag.ms: reported by --estimate only
    min_cleanable_dirty_ratio: float = 0.5  # min.cleanable.dirty.ratio: would the broker pick this log?
    max_message_bytes: int = 1048588  # max.message.bytes: how far the read buffer may grow
    dedupe_buffer_size: int = 134217728  # log.cleaner.dedupe.buffer.size: offset map memory
    dedupe_buffer_load_factor: float = 0.9  # log.cleaner.io.buffer.load.factor
    io_buffer_size: int = 524288  # log.cleaner.io.buffer.size: read chunk = half of it (one thread)
    message_max_bytes: int = 1048588  # message.max.bytes (broker): the cleaner's largest I/O buffer
    producer_id_expiration_ms: int = 86400000  # producer.id.expiration.ms: older producers are gone
    kafka_version: str = "3"  # whose cleaner rules: "3" (Kafka 3.1+, KIP-534) or "2.1"
    policy_confirmed: bool = False  # cleanup.policy=compact was given: compact even with keyless records

    @property
    def read_buffer_size(self) -> int:
        return self.io_buffer_size // 2

    @property
    def before_kip534(self) -> bool:
        """Kafka 2.1's rules: no delete horizons, tombstones and markers expire with their segment's age."""
        return self.kafka_version == "2.1"


# Kafka names (topic configs and the broker defaults they fall back to) → (field, parser)
_INT = int
CONFIG_NAMES: dict[str, tuple[str, Callable[[str], Any]]] = {
    "segment.bytes": ("segment_bytes", _INT),
    "log.segment.bytes": ("segment_bytes", _INT),
    "segment.index.bytes": ("segment_index_bytes", _INT),
    "log.index.size.max.bytes": ("segment_index_bytes", _INT),
    "index.interval.bytes": ("index_interval_bytes", _INT),
    "log.index.interval.bytes": ("index_interval_bytes", _INT),
    "delete.retention.ms": ("delete_retention_ms", _INT),
    "log.cleaner.delete.retention.ms": ("delete_retention_ms", _INT),
    "min.compaction.lag.ms": ("min_compaction_lag_ms", _INT),
    "log.cleaner.min.compaction.lag.ms": ("min_compaction_lag_ms", _INT),
    "max.compaction.lag.ms": ("max_compaction_lag_ms", _INT),
    "log.cleaner.max.compaction.lag.ms": ("max_compaction_lag_ms", _INT),
    "min.cleanable.dirty.ratio": ("min_cleanable_dirty_ratio", float),
    "log.cleaner.min.cleanable.ratio": ("min_cleanable_dirty_ratio", float),
    "max.message.bytes": ("max_message_bytes", _INT),
    "message.max.bytes": ("message_max_bytes", _INT),
    "log.cleaner.dedupe.buffer.size": ("dedupe_buffer_size", _INT),
    "log.cleaner.io.buffer.load.factor": ("dedupe_buffer_load_factor", float),
    "log.cleaner.io.buffer.size": ("io_buffer_size", _INT),
    "producer.id.expiration.ms": ("producer_id_expiration_ms", _INT),
}
# Topic settings that exist but do not change what compaction keeps: accepted so that a topic's whole
# config can be pasted, and ignored.
IGNORED_CONFIG_NAMES = frozenset(
    {
        "compression.type",
        "compression.gzip.level",
        "compression.lz4.level",
        "compression.zstd.level",
        "retention.ms",
        "retention.bytes",
        "local.retention.ms",
        "local.retention.bytes",
        "file.delete.delay.ms",
        "flush.messages",
        "flush.ms",
        "follower.replication.throttled.replicas",
        "leader.replication.throttled.replicas",
        "message.downconversion.enable",
        "message.format.version",
        "message.timestamp.type",
        "message.timestamp.difference.max.ms",
        "message.timestamp.before.max.ms",
        "message.timestamp.after.max.ms",
        "min.insync.replicas",
        "preallocate",
        "remote.storage.enable",
        "segment.jitter.ms",
        "segment.ms",
        "unclean.leader.election.enable",
        "log.cleaner.threads",
        "log.cleaner.enable",
        "log.cleaner.backoff.ms",
        "log.cleaner.io.max.bytes.per.second",
    }
)


def parse_config(pairs: Iterable[str], base: CompactConfig | None = None) -> CompactConfig:
    """Apply `key=value` settings (Kafka's names) to base; raise CompactInputError on anything wrong."""
    values: dict[str, Any] = {}
    for key, raw in _split_settings(pairs):
        if key == "cleanup.policy":
            policies = {p.strip() for p in raw.replace("[", "").replace("]", "").split(",") if p.strip()}
            if "compact" not in policies:
                raise CompactInputError(
                    f"--config cleanup.policy={raw}: the broker never compacts such a topic "
                    "(give cleanup.policy=compact to compact it anyway)"
                )
            values["policy_confirmed"] = True
            continue
        if key in IGNORED_CONFIG_NAMES:
            continue
        if key not in CONFIG_NAMES:
            known = ", ".join(sorted(CONFIG_NAMES))
            raise CompactInputError(f"--config {key}: not a setting compaction uses (known: {known})")
        name, parse = CONFIG_NAMES[key]
        try:
            values[name] = parse(raw)
        except ValueError:
            raise CompactInputError(f"--config {key}={raw}: not a valid number") from None
    return check_config(replace(base or CompactConfig(), **values))


def _split_settings(pairs: Iterable[str]) -> Iterator[tuple[str, str]]:
    """key=value items, comma-separated as kafka-configs takes them: a piece without `=` continues the
    previous value (`cleanup.policy=compact,delete`), and `[a,b]` brackets keep their commas."""
    items: list[str] = []
    for pair in pairs:
        depth = 0
        piece = ""
        for ch in pair + ",":
            if ch == "," and depth == 0:
                piece = piece.strip()
                if piece:
                    if "=" in piece or not items:
                        items.append(piece)
                    else:
                        items[-1] += "," + piece
                piece = ""
                continue
            depth += ch == "["
            depth -= ch == "]"
            piece += ch
    for item in items:
        if "=" not in item:
            raise CompactInputError(f"--config {item!r}: expected key=value")
        key, _, raw = item.partition("=")
        yield key.strip(), raw.strip()


KAFKA_VERSIONS = ("3", "2.1")


def check_config(cfg: CompactConfig) -> CompactConfig:
    """Reject settings the broker would reject (same lower bounds as Kafka's config definitions)."""
    if cfg.kafka_version not in KAFKA_VERSIONS:
        raise CompactInputError(f"kafka version {cfg.kafka_version!r}: cleaner rules exist for 3 and 2.1")
    minimums = {
        "segment_bytes": 14,
        "segment_index_bytes": 4,
        "index_interval_bytes": 0,
        "delete_retention_ms": 0,
        "min_compaction_lag_ms": 0,
        "max_compaction_lag_ms": 1,
        "max_message_bytes": 0,
        "io_buffer_size": 0,
        "message_max_bytes": 0,
        "producer_id_expiration_ms": 1,
    }
    for name, low in minimums.items():
        if getattr(cfg, name) < low:
            raise CompactInputError(f"{_kafka_name(name)}={getattr(cfg, name)}: must be at least {low}")
    if not 0 <= cfg.min_cleanable_dirty_ratio <= 1:
        raise CompactInputError(f"min.cleanable.dirty.ratio={cfg.min_cleanable_dirty_ratio}: must be in [0, 1]")
    if not 0 < cfg.dedupe_buffer_load_factor <= 1:
        raise CompactInputError(
            f"log.cleaner.io.buffer.load.factor={cfg.dedupe_buffer_load_factor}: must be in (0, 1]"
        )
    if (cfg.dedupe_buffer_size // 24) * cfg.dedupe_buffer_load_factor <= 1:
        raise CompactInputError(
            f"log.cleaner.dedupe.buffer.size={cfg.dedupe_buffer_size}: too small to map even one key "
            "(24 bytes a key, filled to the load factor)"
        )
    return cfg


def _kafka_name(field_name: str) -> str:
    for key, (name, _) in CONFIG_NAMES.items():
        if name == field_name and not key.startswith("log."):
            return key
    return next(k for k, (n, _) in CONFIG_NAMES.items() if n == field_name)
