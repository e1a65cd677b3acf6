"""Reading the kafka-dump-log goldens (MANIFEST.tsv) and running our dumper the same way.

Three golden sets share this machinery: Kafka 3.3.1's (`fixtures/dump-log`, flags only in `args`, run
from inside `kafka-logs/` on the relative path), Kafka 4.0.0's (`fixtures/kafka-4.0.0/dump-log`) and
Kafka 4.3's (`fixtures/kafka-4.3/dump-log`), whose `args` hold `--files <KAFKA_LOGS>/...`.  Each golden is run with the dialect of the release
that printed it.
"""

from __future__ import annotations

import io
import os
import shlex
from dataclasses import dataclass
from pathlib import Path

from kafkatool.ops.dumplog import DumpOptions, dump_files

PLACEHOLDER = "<KAFKA_LOGS>"


@dataclass(frozen=True)
class Golden:
    rel: str
    mode: str
    args: str
    rc: int
    dir: Path
    release: str = "3.3"

    @property
    def id(self) -> str:
        return f"{self.rel}[{self.mode}]"

    def expected(self, kafka_logs: Path) -> tuple[bytes, bytes]:
        real = str(kafka_logs).encode()
        out = (self.dir / f"{self.mode}.out").read_bytes()
        err = (self.dir / f"{self.mode}.err").read_bytes()
        return out.replace(PLACEHOLDER.encode(), real), err.replace(PLACEHOLDER.encode(), real)

    def argv(self, kafka_logs: Path) -> list[str]:
        """kafka-dump-log's arguments, `--files` included (the relative file when `args` has none)."""
        toks = shlex.split(self.args.replace(PLACEHOLDER, str(kafka_logs)))
        return toks if "--files" in toks else ["--files", self.rel, *toks]


def load_manifest(goldens: Path, release: str = "3.3") -> list[Golden]:
    rows = []
    lines = (goldens / "MANIFEST.tsv").read_text().splitlines()
    for line in lines[1:]:
        rel, mode, args, rc = line.split("\t")
        rows.append(Golden(rel, mode, args, int(rc), goldens / rel, release))
    return rows


_FLAGS = {
    "--print-data-log": ("print_data_log", True),
    "--deep-iteration": ("deep_iteration", True),
    "--verify-index-only": ("verify_index_only", True),
    "--index-sanity-check": ("index_sanity_check", True),
    "--skip-record-metadata": ("skip_record_metadata", True),
    "--offsets-decoder": ("payload_decoder", "offsets"),
    "--transaction-log-decoder": ("payload_decoder", "transaction"),
    "--cluster-metadata-decoder": ("payload_decoder", "cluster-metadata"),
    "--remote-log-metadata-decoder": ("payload_decoder", "remote-log-metadata"),
    "--share-group-state-decoder": ("payload_decoder", "share-group-state"),
}


def options_from_args(args: str | list[str], release: str = "3.3") -> tuple[list[str], DumpOptions]:
    """The files and DumpOptions for a golden's kafka-dump-log arguments."""
    kw: dict = {"kafka_release": release}
    files: list[str] = []
    toks = shlex.split(args) if isinstance(args, str) else args
    i = 0
    while i < len(toks):
        t = toks[i]
        if t in _FLAGS:
            name, value = _FLAGS[t]
            kw[name] = value
        elif t == "--max-bytes":
            i += 1
            kw["max_bytes"] = int(toks[i])
        elif t == "--files":
            i += 1
            files += toks[i].split(",")
        else:
            raise ValueError(f"unknown golden flag {t}")
        i += 1
    return files, DumpOptions(**kw)


def run_golden(g: Golden, kafka_logs: Path) -> tuple[bytes, bytes, int]:
    out = io.BytesIO()
    err = io.BytesIO()
    files, opts = options_from_args(g.argv(kafka_logs), g.release)
    cwd = os.getcwd()
    os.chdir(kafka_logs)
    try:
        result = dump_files(files, opts, out, err)
    finally:
        os.chdir(cwd)
    return out.getvalue(), err.getvalue(), result.exit_code
