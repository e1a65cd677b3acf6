"""Derive brokers' ApiVersions tables from Kafka's message specs at release tags (facts, not copies).

For each release: every `clients/src/main/resources/common/message/*Request.json` at the tag whose
`"listeners"` include the chosen listener (`zkBroker` for ZooKeeper-mode releases, `broker` for
KRaft) contributes `apiKey -> [lowest, highest]` from `"validVersions"`, with the highest lowered by
one when the spec marks it `"latestVersionUnstable"` (brokers hide unstable versions by default),
without the telemetry APIs (a default broker has no client-metrics plugin) and, from 4.0, with Produce
from version 0 as 4.x brokers advertise it.  `--check` shows this reproduces the real 3.3.1 and 4.0.0
answers exactly.
Usage: python3 scripts/gen_broker_versions.py [--check]  (reads the `fetch`ed mirrors under /work/.mirror)
The result is tests/support/data/broker_api_versions.json (with the tables of the real brokers in
shared/fixtures/brokers copied beside them); --check also derives the releases whose real
ApiVersions answers are in shared/fixtures/brokers and prints where the derivation differs from them.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

MIRROR = Path("/work/.mirror")
SPEC_DIR = "clients/src/main/resources/common/message"
OUT = Path(__file__).resolve().parents[1] / "tests/support/data/broker_api_versions.json"

#: release -> (mirror, tag, listener, what the tag is)
RELEASES = {
    "2.8": ("apache+kafka", "2.8.0", "zkBroker", "Apache Kafka 2.8.0, ZooKeeper mode"),
    "3.6": ("apache+kafka", "3.6.0", "broker", "Apache Kafka 3.6.0, KRaft broker"),
    "3.9": ("confluentinc+kafka", "v7.9.0", "broker", "Kafka 3.9.0 (confluentinc/kafka v7.9.0 = 3.9.0-ccs), KRaft broker"),
    "4.1": ("confluentinc+kafka", "v8.1.0", "broker", "Kafka 4.1.0 (confluentinc/kafka v8.1.0 = 4.1.0-ccs), KRaft broker"),
    "4.2": ("confluentinc+kafka", "v8.2.0", "broker", "Kafka 4.2.0 (confluentinc/kafka v8.2.0 = 4.2.0-ccs), KRaft broker"),
    "4.4": ("confluentinc+kafka", "4.4", "broker", "Kafka 4.4 (confluentinc/kafka branch 4.4), KRaft broker"),
}
REAL = ("2.1.1", "3.3.1", "4.0.0", "4.3")
CHECKS = {
    "3.3.1": ("apache+kafka", "3.3.1", "broker"),
    "4.0.0": ("confluentinc+kafka", "v8.0.0", "broker"),
    "4.3": ("confluentinc+kafka", "4.3", "broker"),
}


PRODUCE = 0
#: GetTelemetrySubscriptions and PushTelemetry: advertised only when a client-metrics plugin is configured.
TELEMETRY = {71, 72}


def _git(mirror: str, *args: str) -> str:
    return subprocess.run(["git", "--git-dir", str(MIRROR / mirror / "repo"), *args], check=True,
                          capture_output=True, text=True).stdout


def _strip_comments(text: str) -> str:
    return re.sub(r"^\s*//.*$", "", text, flags=re.M)


def load_spec(text: str) -> dict:
    """A message spec: JSON with // comments (2.8.0's DescribeProducersRequest has stray brackets after it)."""
    return json.JSONDecoder().raw_decode(_strip_comments(text).strip())[0]


def compact_fields(fields: list[dict], common: dict[str, dict], facts: Callable[[dict], dict]) -> list[dict]:
    """A spec's fields as `facts` writes each, a struct's fields (its own, or those of the common struct its
    type names) inlined under "f" with its type written "struct" or "[]struct" (gen_wire_specs, gen_record_specs)."""
    out = []
    for f in fields:
        c = facts(f)
        inner = f.get("fields")
        elem = f["type"][2:] if f["type"].startswith("[]") else f["type"]
        if inner is None and elem in common:
            inner = common[elem]["fields"]
        if inner is not None:
            c["t"] = "[]struct" if f["type"].startswith("[]") else "struct"
            c["f"] = compact_fields(inner, common, facts)
        out.append(c)
    return out


def derive(mirror: str, tag: str, listener: str) -> dict[int, list[int]]:
    out: dict[int, list[int]] = {}
    for name in _git(mirror, "ls-tree", "--name-only", f"{tag}:{SPEC_DIR}").split():
        if not name.endswith("Request.json"):
            continue
        spec = load_spec(_git(mirror, "show", f"{tag}:{SPEC_DIR}/{name}"))
        if listener not in spec.get("listeners", []):
            continue
        lo, _, hi = spec["validVersions"].partition("-")
        high = int(hi or lo) - (1 if spec.get("latestVersionUnstable") else 0)
        if high >= int(lo) and int(spec["apiKey"]) not in TELEMETRY:
            out[int(spec["apiKey"])] = [int(lo), high]
    if PRODUCE in out and out[PRODUCE][0] > 0 and _major(tag) >= 4:
        out[PRODUCE][0] = 0  # 4.x brokers still advertise Produce v0-2 (KAFKA-18659), refusing them later
    return dict(sorted(out.items()))


def _major(tag: str) -> int:
    major = int(re.match(r"v?(\d+)", tag).group(1))
    return major - 4 if tag.startswith("v") else major  # confluentinc vX.Y.0 is Kafka .Y


def main() -> int:
    doc = {"about": __doc__.splitlines()[0], "releases": {}}
    before = json.loads(OUT.read_text())["releases"] if OUT.is_file() else {}
    for rel, (mirror, tag, listener, what) in RELEASES.items():
        if not (MIRROR / mirror / "repo").is_dir() and rel in before:
            doc["releases"][rel] = before[rel]  # its mirror is not fetched here: keep the table derived before
            continue
        table = derive(mirror, tag, listener)
        doc["releases"][rel] = {"source": what, "listener": listener,
                                "apis": {str(k): v for k, v in table.items()}}
    fixtures = Path(__file__).resolve().parents[2] / "shared/fixtures/brokers"
    for rel in REAL:  # the real brokers' answers too, so a clone without shared/ still has the whole matrix
        real = json.loads((fixtures / f"kafka-{rel}.api_versions.json").read_text())
        doc["releases"][rel] = {"source": real["broker"], "listener": "real broker",
                                "apis": {str(a["key"]): [a["min"], a["max"]]
                                         for a in sorted(real["apis"].values(), key=lambda a: a["key"])}}
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(doc, indent=1) + "\n")
    if "--check" in sys.argv:
        fixtures = Path(__file__).resolve().parents[2] / "shared/fixtures/brokers"
        for rel, (mirror, tag, listener) in CHECKS.items():
            if not (MIRROR / mirror / "repo").is_dir():
                print(f"{rel}: {mirror} is not fetched here, not checked")
                continue
            real = {a["key"]: [a["min"], a["max"]] for a in
                    json.loads((fixtures / f"kafka-{rel}.api_versions.json").read_text())["apis"].values()}
            got = derive(mirror, tag, listener)
            diff = {k: (got.get(k), real.get(k)) for k in set(got) | set(real) if got.get(k) != real.get(k)}
            print(f"{rel}: {len(got)} derived, {len(real)} real, differences (derived, real): {diff}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
