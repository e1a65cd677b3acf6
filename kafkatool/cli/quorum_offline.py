"""`kafkatool quorum describe --log-dir DIR`: a KRaft node's quorum view from its metadata log dir, offline.

`describe_log_dir` is the whole command; `quorum describe` (kafkatool.cli.quorum) calls it when
`--log-dir` is given.
"""

from __future__ import annotations

import sys
from pathlib import Path

from kafkatool.cli.errors import EXIT_FINDINGS, EXIT_USAGE, CliError
from kafkatool.cli.render import check_format, render_json, render_rows

LOG_DIR_HELP = "A controller's or broker's metadata log dir (__cluster_metadata-0, or the metadata dir holding it): read offline."

OFFLINE_HELP = """Describe the KRaft quorum as one node's metadata log dir records it, offline.

From the files alone: quorum-state (leader, epoch, vote), the log's start and end offsets, the
snapshot ids, kraft.version and the voter set (KRaftVoters records of the latest snapshot and the log
after it: dynamic quorums have no controller.quorum.voters; a static quorum's voter ids come from
its last LeaderChange record), and meta.properties' cluster, node and directory ids.  Text uses the
layout of kafka-metadata-quorum.sh describe --status; --format json gives one object.

\b
Exit codes: 0 ok; 1 the metadata log is damaged (what was read is shown, the damage on stderr);
2 not a KRaft metadata log dir, or a malformed quorum-state.

\b
Examples:
  kafkatool quorum describe --log-dir /var/lib/kafka/meta
  kafkatool quorum describe --log-dir /var/lib/kafka/meta/__cluster_metadata-0 --format json
"""


def describe_log_dir(log_dir: Path, fmt: str = "text") -> int:
    """Print the offline description of `log_dir` in `fmt` (text, json, ndjson, csv); the exit code."""
    from kafkatool.ops.metadata.source import SourceError
    from kafkatool.ops.quorum_offline import QuorumStateError, describe_offline

    check_format(fmt, ("text", "json", "ndjson", "csv"))
    try:
        q = describe_offline(log_dir)
    except (QuorumStateError, SourceError) as exc:
        raise CliError(str(exc), EXIT_USAGE) from None
    if fmt == "text":
        sys.stdout.write(q.status_text())
    elif fmt == "json":
        render_json(q.as_json())
    else:
        render_rows(
            [
                {
                    "id": v.id,
                    "directoryId": v.directory_id,
                    "endpoints": v.endpoints,
                    "leader": v.id == q.leader_id,
                }
                for v in q.voters
            ],
            fmt,
        )
    if q.damage:
        sys.stdout.flush()
        for d in q.damage:
            sys.stderr.write(f"kafkatool: {d.describe()}\n")
        return EXIT_FINDINGS
    return 0
