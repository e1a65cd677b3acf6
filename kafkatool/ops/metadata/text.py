"""The text Kafka 4.0's metadata image classes print, for the metadata shell's `cat` and `tree`.

Each function follows one class's `toString()`: `PartitionRegistration`, `BrokerRegistration`,
`ControllerRegistration`, `StandardAcl`, `Endpoint`, `VersionRange`, `Uuid`, `MetadataVersion` and the
provenance line of `ProvenanceNode` (`DateTimeFormatter.ISO_ZONED_DATE_TIME` in UTC).
"""

from __future__ import annotations

import base64
import datetime as _dt
import struct
from collections.abc import Iterable, Mapping, Sequence
from decimal import Decimal

# Kafka's enums by id (clients: AclResourceType, PatternType, AclOperation, AclPermissionType,
# SecurityProtocol; metadata: LeaderRecoveryState)
ACL_RESOURCE_TYPES = {
    0: "UNKNOWN",
    1: "ANY",
    2: "TOPIC",
    3: "GROUP",
    4: "CLUSTER",
    5: "TRANSACTIONAL_ID",
    6: "DELEGATION_TOKEN",
    7: "USER",
}
PATTERN_TYPES = {0: "UNKNOWN", 1: "ANY", 2: "MATCH", 3: "LITERAL", 4: "PREFIXED"}
ACL_OPERATIONS = {
    0: "UNKNOWN",
    1: "ANY",
    2: "ALL",
    3: "READ",
    4: "WRITE",
    5: "CREATE",
    6: "DELETE",
    7: "ALTER",
    8: "DESCRIBE",
    9: "CLUSTER_ACTION",
    10: "DESCRIBE_CONFIGS",
    11: "ALTER_CONFIGS",
    12: "IDEMPOTENT_WRITE",
    13: "CREATE_TOKENS",
    14: "DESCRIBE_TOKENS",
    15: "TWO_PHASE_COMMIT",
}
PERMISSION_TYPES = {0: "UNKNOWN", 1: "ANY", 2: "DENY", 3: "ALLOW"}
SECURITY_PROTOCOLS = {0: "PLAINTEXT", 1: "SSL", 2: "SASL_PLAINTEXT", 3: "SASL_SSL"}
LEADER_RECOVERY_STATES = {0: "RECOVERED", 1: "RECOVERING"}
# ConfigResource.Type by id, in the declaration order `resourceFromName` tries them
CONFIG_RESOURCE_TYPES = {
    32: "GROUP",
    16: "CLIENT_METRICS",
    8: "BROKER_LOGGER",
    4: "BROKER",
    2: "TOPIC",
    0: "UNKNOWN",
}

# MetadataVersion by feature level (4.0 knows 7..26; the older names are 3.x's)
_MV_NAMES = {
    1: "3.0-IV1",
    2: "3.1-IV0",
    3: "3.2-IV0",
    4: "3.3-IV0",
    5: "3.3-IV1",
    6: "3.3-IV2",
    7: "3.3-IV3",
    8: "3.4-IV0",
    9: "3.5-IV0",
    10: "3.5-IV1",
    11: "3.5-IV2",
    12: "3.6-IV0",
    13: "3.6-IV1",
    14: "3.6-IV2",
    15: "3.7-IV0",
    16: "3.7-IV1",
    17: "3.7-IV2",
    18: "3.7-IV3",
    19: "3.7-IV4",
    20: "3.8-IV0",
    21: "3.9-IV0",
    22: "4.0-IV0",
    23: "4.0-IV1",
    24: "4.0-IV2",
    25: "4.0-IV3",
    26: "4.1-IV0",
}


def metadata_version(level: int | None) -> str:
    """`FeaturesImage.metadataVersion()` as the shell prints it: `Optional[4.0-IV3]` or `Optional.empty`."""
    if level is None:
        return "Optional.empty"
    return f"Optional[{metadata_version_name(level)}]"


def metadata_version_name(level: int) -> str:
    return _MV_NAMES.get(level, f"level-{level}")


def uuid_text(raw: bytes | str) -> str:
    """Kafka's `Uuid.toString()`: URL-safe base64 of the 16 bytes, without padding."""
    if isinstance(raw, str):
        return raw
    return base64.urlsafe_b64encode(bytes(raw)).decode("ascii").rstrip("=")


_TWO_LONGS = struct.Struct(">qq")


def uuid_sort_key(raw: bytes) -> tuple[int, int]:
    """`Uuid.compareTo`: the two halves as signed longs."""
    return _TWO_LONGS.unpack(bytes(raw))


def int_array(values: Iterable[int]) -> str:
    """`Arrays.toString(int[])` / `List.toString()`."""
    return "[" + ", ".join(str(v) for v in values) + "]"


def uuid_array(values: Iterable[bytes]) -> str:
    return "[" + ", ".join(uuid_text(v) for v in values) + "]"


def java_bool(v: bool) -> str:
    return "true" if v else "false"


def version_range(lo: int, hi: int) -> str:
    """`VersionRange.toString()`."""
    if lo == hi:
        return str(lo)
    if hi == 32767:
        return f"{lo}+"
    return f"{lo}-{hi}"


def endpoint_text(ep: Mapping) -> str:
    """`Endpoint.toString()` of a registration's listener."""
    proto = SECURITY_PROTOCOLS.get(ep["securityProtocol"], str(ep["securityProtocol"]))
    host = "null" if ep["host"] is None else f"'{ep['host']}'"
    return f"Endpoint(listenerName='{ep['name']}', securityProtocol={proto}, host={host}, port={ep['port']})"


def _listeners(endpoints: Sequence[Mapping]) -> str:
    by_name = {ep["name"]: ep for ep in endpoints}
    return "[" + ", ".join(endpoint_text(by_name[n]) for n in sorted(by_name)) + "]"


def _features(features: Sequence[Mapping]) -> str:
    by_name = {f["name"]: f for f in features}
    return (
        "{"
        + ", ".join(
            f"{n}: {version_range(by_name[n]['minSupportedVersion'], by_name[n]['maxSupportedVersion'])}"
            for n in sorted(by_name)
        )
        + "}"
    )


def broker_text(b: Mapping) -> str:
    """`BrokerRegistration.toString()` (listeners and features sorted by name, directories by id)."""
    rack = "Optional.empty" if b["rack"] is None else f"Optional[{b['rack']}]"
    dirs = sorted(b["directories"], key=uuid_sort_key)
    return (
        f"BrokerRegistration(id={b['id']}, epoch={b['epoch']}, incarnationId={uuid_text(b['incarnationId'])}, "
        f"listeners={_listeners(b['endPoints'])}, supportedFeatures={_features(b['features'])}, rack={rack}, "
        f"fenced={java_bool(b['fenced'])}, inControlledShutdown={java_bool(b['inControlledShutdown'])}, "
        f"isMigratingZkBroker={java_bool(b['isMigratingZkBroker'])}, directories={uuid_array(dirs)})"
    )


def controller_text(c: Mapping) -> str:
    """`ControllerRegistration.toString()`."""
    return (
        f"ControllerRegistration(id={c['controllerId']}, incarnationId={uuid_text(c['incarnationId'])}, "
        f"zkMigrationReady={java_bool(c['zkMigrationReady'])}, listeners={_listeners(c['endPoints'])}, "
        f"supportedFeatures={_features(c['features'])})"
    )


def partition_text(p: Mapping) -> str:
    """`PartitionRegistration.toString()`."""
    lrs = LEADER_RECOVERY_STATES.get(p["leaderRecoveryState"], str(p["leaderRecoveryState"]))
    return (
        f"PartitionRegistration(replicas={int_array(p['replicas'])}, directories={uuid_array(p['directories'])}, "
        f"isr={int_array(p['isr'])}, removingReplicas={int_array(p['removingReplicas'])}, "
        f"addingReplicas={int_array(p['addingReplicas'])}, elr={int_array(p['elr'])}, "
        f"lastKnownElr={int_array(p['lastKnownElr'])}, leader={p['leader']}, leaderRecoveryState={lrs}, "
        f"leaderEpoch={p['leaderEpoch']}, partitionEpoch={p['partitionEpoch']})"
    )


def acl_text(a: Mapping) -> str:
    """`StandardAcl.toString()`."""
    return (
        f"StandardAcl(resourceType={ACL_RESOURCE_TYPES.get(a['resourceType'], a['resourceType'])}, "
        f"resourceName={a['resourceName']}, patternType={PATTERN_TYPES.get(a['patternType'], a['patternType'])}, "
        f"principal={a['principal']}, host={a['host']}, "
        f"operation={ACL_OPERATIONS.get(a['operation'], a['operation'])}, "
        f"permissionType={PERMISSION_TYPES.get(a['permissionType'], a['permissionType'])})"
    )


def iso_zoned_utc(ms: int) -> str:
    """`DateTimeFormatter.ISO_ZONED_DATE_TIME` of an epoch-ms instant in zone UTC: the fraction has as
    few digits as it needs (none for whole seconds), then `Z[UTC]`."""
    t = _dt.datetime(1970, 1, 1, tzinfo=_dt.UTC) + _dt.timedelta(milliseconds=ms)
    text = t.strftime("%Y-%m-%dT%H:%M:%S")
    frac = f"{t.microsecond * 1000:09d}".rstrip("0")
    return f"{text}{'.' + frac if frac else ''}Z[UTC]"


def iso_utc(ms: int) -> str:
    """An epoch-ms instant as kafkatool's rows give it: `2026-11-28T07:41:12.234Z`."""
    t = _dt.datetime(1970, 1, 1, tzinfo=_dt.UTC) + _dt.timedelta(milliseconds=ms)
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"


def double_text(v: float) -> str:
    """Java's `Double.toString`: plain from 10^-3 to 10^7, else `d.dddEn`; shortest digits either way."""
    if v != v or v in (float("inf"), float("-inf")):
        return {True: "NaN"}.get(v != v, "Infinity" if v > 0 else "-Infinity")
    if v == 0:
        return "-0.0" if str(v).startswith("-") else "0.0"
    if 1e-3 <= abs(v) < 1e7:
        text = repr(v)
        return text if "e" not in text else f"{v:f}"
    sign, digits, exp = Decimal(repr(v)).normalize().as_tuple()
    ds = "".join(map(str, digits))
    e10 = len(ds) - 1 + int(exp)
    return f"{'-' if sign else ''}{ds[0]}.{ds[1:] or '0'}E{e10}"
