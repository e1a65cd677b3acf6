"""Write tests/support/data/wire_specs.json: our compact description of the messages the fake brokers serve.

Facts taken from Kafka's message specs (`clients/src/main/resources/common/message/*.json`): for each
request and response, every field's name (snake_case), type, versions, nullable versions, tag and
default, with common structs inlined.  Two releases are read because Kafka 4.0 dropped old versions:
Kafka 4.4 (confluentinc/kafka branch 4.4) and 4.1 (v8.1.0) for the versions they have, Kafka 3.9 (v7.9.0)
for the older ones (a release without the API is skipped); tests/support/kwire.py encodes and decodes with whichever entry covers the version.
Usage: python3 scripts/gen_wire_specs.py  (reads the `fetch`ed mirror under /work/.mirror)
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gen_broker_versions import MIRROR, SPEC_DIR, compact_fields, load_spec  # noqa: E402

OUT = Path(__file__).resolve().parents[1] / "tests/support/data/wire_specs.json"
SOURCES = (("confluentinc+kafka", "4.4", "4.4"), ("confluentinc+kafka", "v8.1.0", "4.1"),
           ("confluentinc+kafka", "v7.9.0", "3.9"))
#: API name -> key: what fake_admin.py, fake_groups.py and fake_topics.py serve (and ConsumerGroupDescribe, DeleteGroups).
APIS = {
    "ApiVersions": 18, "Metadata": 3, "DescribeCluster": 60, "ListPartitionReassignments": 46,
    "AlterPartitionReassignments": 45, "ElectLeaders": 43, "DescribeLogDirs": 35, "AlterReplicaLogDirs": 34,
    "DescribeConfigs": 32, "IncrementalAlterConfigs": 44, "AlterConfigs": 33, "FindCoordinator": 10, "ListGroups": 16,
    "DescribeGroups": 15, "OffsetFetch": 9, "ListOffsets": 2, "Fetch": 1, "OffsetCommit": 8,
    "ConsumerGroupDescribe": 69, "DeleteGroups": 42,
    # topics/configs (tests/support/fake_topics.py)
    "CreateTopics": 19, "DeleteTopics": 20, "CreatePartitions": 37, "DescribeTopicPartitions": 75,
    # KRaft-era tools: quorum, transactions, records delete (tests/support/fake_kraft.py)
    "DescribeQuorum": 55, "ListTransactions": 66, "DescribeTransactions": 65, "DescribeProducers": 61,
    "WriteTxnMarkers": 27, "DeleteRecords": 21,
    # share and streams groups (tests/support/fake_groups.py)
    "ShareGroupDescribe": 77, "StreamsGroupDescribe": 89, "DescribeShareGroupOffsets": 90,
    "AlterShareGroupOffsets": 91, "DeleteShareGroupOffsets": 92, "OffsetDelete": 47,
}


def snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def field_facts(f: dict) -> dict:
    """One field's name (snake_case), type, versions, nullable/tagged versions, tag and default."""
    c: dict = {"n": snake(f["name"]), "t": f["type"], "v": f["versions"]}
    for src, dst in (("nullableVersions", "nv"), ("taggedVersions", "tv"), ("tag", "tag"), ("default", "d")):
        if src in f:  # defaults as the specs mostly write them: strings (a few specs write -1 as a number)
            c[dst] = str(f[src]).lower() if src == "default" and not isinstance(f[src], str) else f[src]
    return c


def compact(spec: dict) -> dict:
    common = {s["name"]: s for s in spec.get("commonStructs", [])}
    return {"versions": spec["validVersions"], "flexible": spec.get("flexibleVersions", "none"),
            "fields": compact_fields(spec["fields"], common, field_facts)}


def main() -> int:
    doc: dict = {"about": __doc__.splitlines()[0], "messages": {}}
    for name in APIS:
        for kind in ("Request", "Response"):
            entries = []
            for mirror, tag, release in SOURCES:
                got = subprocess.run(["git", "--git-dir", str(MIRROR / mirror / "repo"), "show",
                                      f"{tag}:{SPEC_DIR}/{name}{kind}.json"], capture_output=True, text=True)
                if got.returncode != 0 and entries:
                    continue  # an API newer than this release
                got.check_returncode()
                text = got.stdout
                spec = load_spec(text)
                assert spec["apiKey"] == APIS[name], name
                entries.append({"release": release, **compact(spec)})
            doc["messages"][f"{name}{kind}"] = {"key": APIS[name], "specs": entries}
    OUT.write_text(json.dumps(doc, separators=(",", ":"), indent=None).replace('{"release"', '\n{"release"') + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
