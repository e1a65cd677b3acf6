"""Feature flags as `kafka-features.sh describe` prints them (ApiVersions v3+, KIP-584).

Follows Kafka's `FeatureCommand.handleDescribe` (3.3 Scala, 3.4+ Java) and the admin client's
`describeFeatures`: every supported feature in name order, its supported range, its finalized level (0
when not finalized) and the finalized features' epoch ("-" when the broker reports none, i.e. < 0).
`metadata.version` levels print as release names (`MetadataVersion.fromFeatureLevel(level).version()`, or
"UNKNOWN <level>" for a level the tool's release does not know).  4.3 changed the separators from tabs to
padded columns.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kafkatool.cluster.connect import ClusterError
from kafkatool.cluster.kraft_channel import Channel, DirectChannel
from kafkatool.release import Release

METADATA_VERSION = "metadata.version"
PADDED_SINCE = Release(4, 3)

#: feature level -> MetadataVersion name (server-common MetadataVersion.java, 3.3 to 4.4)
_MV_NAMES = (
    "3.0-IV1 3.1-IV0 3.2-IV0 3.3-IV0 3.3-IV1 3.3-IV2 3.3-IV3 3.4-IV0 3.5-IV0 3.5-IV1 3.5-IV2 3.6-IV0 3.6-IV1 3.6-IV2 "
    "3.7-IV0 3.7-IV1 3.7-IV2 3.7-IV3 3.7-IV4 3.8-IV0 3.9-IV0 4.0-IV0 4.0-IV1 4.0-IV2 4.0-IV3 4.1-IV0 4.1-IV1 4.2-IV0 "
    "4.2-IV1 4.3-IV0 4.4-IV0 4.4-IV1 4.4-IV2"
).split()
METADATA_VERSIONS: dict[int, str] = {level: name for level, name in enumerate(_MV_NAMES, start=1)}

#: (release, the highest level its MetadataVersion knows), newest first
_MV_HIGHEST = (
    (Release(4, 4), 33),
    (Release(4, 3), 30),
    (Release(4, 1), 29),
    (Release(4, 0), 26),
    (Release(3, 9), 23),
    (Release(3, 8), 20),
    (Release(3, 7), 19),
    (Release(3, 6), 14),
    (Release(3, 5), 11),
    (Release(3, 4), 8),
    (Release(3, 3), 7),
)
LOWEST_SINCE_4_0 = 7  # 4.0 dropped the levels before 3.3-IV3


def level_to_string(feature: str, level: int, release: Release) -> str:
    if feature != METADATA_VERSION:
        return str(level)
    highest = next((h for r, h in _MV_HIGHEST if release >= r), 7)
    lowest = LOWEST_SINCE_4_0 if release >= Release(4, 0) else 1
    if lowest <= level <= highest:
        return METADATA_VERSIONS[level]
    return f"UNKNOWN {level}"


@dataclass(frozen=True)
class Feature:
    name: str
    supported_min: int
    supported_max: int
    finalized: int  # 0 when not finalized


@dataclass(frozen=True)
class FeatureMetadata:
    features: list[Feature]  # by name
    epoch: int | None


def describe_features(channel: Channel) -> FeatureMetadata:
    """ApiVersions v3+ from the broker or controller (the handshake's answer for a direct channel)."""
    from kafka.protocol.metadata import ApiVersionsRequest

    if isinstance(channel, DirectChannel):
        resp: Any = getattr(channel, "features", None)
    else:
        if channel.api_table().get(18, (0, -1))[1] < 3:
            resp = None
        else:
            resp = channel.send(
                ApiVersionsRequest(client_software_name="kafkatool", client_software_version="1")
            )
    if resp is None:
        raise ClusterError("describe features needs ApiVersions v3 (Kafka >= 2.4)")
    if resp.error_code:
        from kafkatool.cluster.kafka_errors import java_to_string

        raise ClusterError(f"describe features: {java_to_string(resp.error_code)}")
    finalized = {f.name: int(f.max_version_level) for f in (resp.finalized_features or [])}
    features = [
        Feature(f.name, int(f.min_version), int(f.max_version), finalized.get(f.name, 0))
        for f in sorted(resp.supported_features or [], key=lambda f: f.name)
    ]
    epoch = getattr(resp, "finalized_features_epoch", -1)
    return FeatureMetadata(features, None if epoch is None or epoch < 0 else int(epoch))


def describe_text(meta: FeatureMetadata, release: Release) -> str:
    epoch = "-" if meta.epoch is None else str(meta.epoch)
    out = []
    for f in meta.features:
        lo, hi, fin = (
            level_to_string(f.name, v, release) for v in (f.supported_min, f.supported_max, f.finalized)
        )
        if release >= PADDED_SINCE:
            out.append(
                f"Feature: {f.name:<40}  SupportedMinVersion: {lo:<15}  SupportedMaxVersion: {hi:<15}  "
                f"FinalizedVersionLevel: {fin:<15}  Epoch: {epoch}\n"
            )
        else:
            out.append(
                f"Feature: {f.name}\tSupportedMinVersion: {lo}\tSupportedMaxVersion: {hi}\t"
                f"FinalizedVersionLevel: {fin}\tEpoch: {epoch}\n"
            )
    return "".join(out)


def feature_rows(meta: FeatureMetadata) -> list[dict[str, Any]]:
    return [
        {
            "feature": f.name,
            "supported_min": f.supported_min,
            "supported_max": f.supported_max,
            "finalized_level": f.finalized,
            "epoch": meta.epoch,
        }
        for f in meta.features
    ]
