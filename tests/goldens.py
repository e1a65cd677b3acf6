"""Reading the kafka-dump-log goldens (MANIFEST.tsv) and running our dumper the same way."""

from __future__ import annotations

import io
import os
import shlex
from dataclasses import dataclass
from pathlib import Path

from kafkatool.ops.dumplog import DumpOptions, dump_files


@dataclass(frozen=True)
class Golden:
    rel: str
    mode: str
    args: str
    rc: int
    dir: Path

    @property
    def id(self) -> str:
        return f"{self.rel}[{self.mode}]"

    def expected(self, kafka_logs: Path) -> tuple[bytes, bytes]:
        out = (self.dir / f"{self.mode}.out").read_bytes()
        err = (self.dir / f"{self.mode}.err").read_bytes()
        return out, err.replace(b"<KAFKA_LOGS>", str(kafka_logs).encode())


def load_manifest(goldens: Path) -> list[Golden]:
    rows = []
    lines = (goldens / "MANIFEST.tsv").read_text().splitlines()
    for line in lines[1:]:
        rel, mode, args, rc = line.split("\t")
        rows.append(Golden(rel, mode, args, int(rc), goldens / rel))
    return rows


def options_from_args(args: str) -> DumpOptions:
    """DumpOptions for a golden's kafka-dump-log flags."""
    kw: dict = {}
    toks = shlex.split(args)
    i = 0
    while i < len(toks):
        t = toks[i]
        if t == "--print-data-log":
            kw["print_data_log"] = True
        elif t == "--deep-iteration":
            kw["deep_iteration"] = True
        elif t == "--verify-index-only":
            kw["verify_index_only"] = True
        elif t == "--index-sanity-check":
            kw["index_sanity_check"] = True
        elif t == "--skip-record-metadata":
            kw["skip_record_metadata"] = True
        elif t == "--offsets-decoder":
            kw["payload_decoder"] = "offsets"
        elif t == "--transaction-log-decoder":
            kw["payload_decoder"] = "transaction"
        elif t == "--cluster-metadata-decoder":
            kw["payload_decoder"] = "cluster-metadata"
        elif t == "--max-bytes":
            i += 1
            kw["max_bytes"] = int(toks[i])
        else:
            raise ValueError(f"unknown golden flag {t}")
        i += 1
    return DumpOptions(**kw)


def run_golden(g: Golden, kafka_logs: Path) -> tuple[bytes, bytes, int]:
    out = io.BytesIO()
    err = io.BytesIO()
    cwd = os.getcwd()
    os.chdir(kafka_logs)
    try:
        result = dump_files([g.rel], options_from_args(g.args), out, err)
    finally:
        os.chdir(cwd)
    return out.getvalue(), err.getvalue(), result.exit_code
