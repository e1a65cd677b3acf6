"""What a ZooKeeper-mode cluster's znodes tell of its Kafka release, and which release's tool text applies.

A ZooKeeper cluster has no ApiVersions to read, but its brokers and controller write znodes whose
format changed with some releases (facts from `kafka/zk/ZkData.scala` at apache/kafka tags 2.1.0-3.9.0):

- `/brokers/ids/<id>` (ephemeral: each live broker): `"version": 4` (endpoints and
  `listener_security_protocol_map`) from inter-broker protocol 0.10.0 to 2.6, `5` with `"features"`
  from IBP 2.7 (KIP-584).  ZooKeeper-mode brokers register empty features in every release up to 3.9
  (`BrokerFeatures.createEmpty`), and KIP-866's migration (3.4+) registers with the KRaft controller,
  not here: nothing in a registration tells one 3.x release from another.
- `/controller` (ephemeral: the active controller): `"version": 2` with `"kraftControllerEpoch"` since
  3.4 (KIP-866), version 1 before.  During a migration a KRaft controller writes it under its own id,
  which is no registered broker's: then it speaks for none of them.
- `/feature` (written by a 2.7+ controller): `"version": 2` (no `min_version_level`) once the IBP is
  3.3 or later, 1 before.  A broker's IBP is never newer than its software, and Kafka does not support
  lowering the IBP again, so this holds for every broker since.
- The upper bound: Kafka 4.0 has no ZooKeeper mode; 3.9 is the last release with one.  A 2.7+
  controller always writes `/feature` (status disabled below IBP 2.7): a registered controller with
  no `/feature` znode proves software older than 2.7, and then Kafka 2.1's tool text applies.

A registration at IBP 2.6 may come from newer software (the IBP is held back during upgrades), so
every fact is a lower bound.  None proves 3.7 or later, when the admin tools became Java programs
(`release.JAVA_TOOLS_SINCE`): a ZooKeeper cluster's tool text is the Scala tools', modelled by 3.3's.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kafkatool.release import KNOWN_RELEASES, Release, tools_in_scala

__all__ = ["LAST_ZOOKEEPER_RELEASE", "SCALA_TOOLS_TEXT", "ReleaseRange", "release_range", "text_release_of"]

#: The last Kafka release that runs on ZooKeeper.
LAST_ZOOKEEPER_RELEASE = Release(3, 9)
#: The modelled release whose text is that of the Scala admin tools (before 3.7).
SCALA_TOOLS_TEXT: Release = max(r for r in KNOWN_RELEASES if tools_in_scala(r))

#: The newest release a controller that writes no /feature znode can run (2.7 added it).
PRE_FEATURE_HIGH = Release(2, 6)
#: The text of a cluster proven older than 2.7: Kafka 2.1's tools (2.6's reassign tool already printed
#: the later words; `--kafka-release 2.6` says so for such a cluster).
OLD_TOOLS_TEXT = Release(2, 1)

_REGISTRATION_SINCE = {5: Release(2, 7)}  # /brokers/ids "version" -> the first release writing it
_CONTROLLER_SINCE = {2: Release(3, 4)}  # /controller "version"
_FEATURE_SINCE = {2: Release(3, 3)}  # /feature "version"


@dataclass(frozen=True)
class ReleaseRange:
    """The releases the live brokers may run: at least `low` (None: nothing narrows it) and at most `high`."""

    low: Release | None
    high: Release = LAST_ZOOKEEPER_RELEASE

    def __str__(self) -> str:
        return f"Kafka {self.low or '0.8'}-{self.high}"


def _version(data: bytes | None) -> int | None:
    """The `"version"` of a znode's JSON object (None when absent or not Kafka's JSON: no evidence)."""
    if not data:
        return None
    try:
        info: Any = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return None
    version = info.get("version") if isinstance(info, dict) else None
    return version if isinstance(version, int) and not isinstance(version, bool) else None


def _since(table: dict[int, Release], version: int | None) -> Release | None:
    """The newest release whose format `version` shows (a newer format version than we know counts as the newest)."""
    if version is None:
        return None
    known = [r for v, r in table.items() if version >= v]
    return max(known) if known else None


def _max(*releases: Release | None) -> Release | None:
    found = [r for r in releases if r is not None]
    return max(found) if found else None


def release_range(registrations: Mapping[int, bytes | None], controller: bytes | None,
                  feature: bytes | None) -> ReleaseRange:
    """The release range of the live brokers from their registrations (`/brokers/ids/<id>` data by id),
    the `/controller` and `/feature` znodes (None when absent).

    Conservative: the range's low end is the lowest release any live broker is proven to run (the
    controller's own znode speaks for the controller only, `/feature` for every broker).
    """
    cluster_wide = _since(_FEATURE_SINCE, _version(feature))
    controller_id = None
    if controller:
        try:
            info = json.loads(controller.decode("utf-8"))
            controller_id = info.get("brokerid") if isinstance(info, dict) else None
        except (UnicodeDecodeError, ValueError):
            controller_id = None
    controller_since = _since(_CONTROLLER_SINCE, _version(controller))
    per_broker = [
        _max(cluster_wide, _since(_REGISTRATION_SINCE, _version(data)),
             controller_since if broker_id == controller_id else None)
        for broker_id, data in registrations.items()
    ]
    # A 2.7+ controller always writes /feature (enabled, or disabled below IBP 2.7): a registered
    # controller without it runs older software, and so does every broker in a 2.x cluster it controls.
    old = controller_id is not None and feature is None and controller_since is None
    if not per_broker:  # no broker registered: only the cluster-wide facts speak
        low = _max(cluster_wide, controller_since)
    elif any(r is None for r in per_broker):
        low = None
    else:
        low = min(r for r in per_broker if r is not None)
    newer = any(r is not None and r > PRE_FEATURE_HIGH for r in per_broker)  # e.g. a rolling upgrade
    high = PRE_FEATURE_HIGH if old and not newer and (low is None or low <= PRE_FEATURE_HIGH) else LAST_ZOOKEEPER_RELEASE
    return ReleaseRange(low, high)


def text_release_of(brokers: ReleaseRange) -> Release:
    """The release whose tool text applies to a cluster in range `brokers`: its low end once that proves
    the Java tools (3.7+); Kafka 2.1's when the controller is proven older than 2.7 (no /feature); else
    the Scala tools' (3.3's text)."""
    if brokers.low is not None and not tools_in_scala(brokers.low):
        return brokers.low
    if brokers.high <= PRE_FEATURE_HIGH:
        return OLD_TOOLS_TEXT
    return SCALA_TOOLS_TEXT
