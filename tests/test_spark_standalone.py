"""spark-scan on a real standalone Spark cluster (master + two workers on 127.0.0.1) gives the answers
of the single-process scanner, which shares no Spark code with it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.spark import write_log_dir
from tests.support.spark_cluster import spark_standalone  # noqa: F401 - fixture

pytestmark = [pytest.mark.spark, pytest.mark.slow]

REPO = Path(__file__).resolve().parent.parent


def _scan(*args: str) -> list[dict]:
    res = subprocess.run([sys.executable, "-m", "kafkatool", "spark-scan", *args, "--format", "json", "-q"],
                         capture_output=True, text=True, cwd=REPO, timeout=600)
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout)


def test_standalone_cluster_answers_as_the_local_engine(spark_standalone: str, tmp_path: Path) -> None:  # noqa: F811
    logs = write_log_dir(tmp_path, batches=120)
    # the executors run on this machine: point them at this interpreter, as docs/spark-scan.md says to
    conf = ["--spark-conf", f"spark.pyspark.python={sys.executable}", "--spark-conf", "spark.executor.memory=512m"]
    on_cluster = _scan(str(logs), "--query", "summary", "--master", spark_standalone, *conf)
    local = _scan(str(logs), "--query", "summary", "--engine", "local")
    assert on_cluster == local
    assert sum(r["records"] for r in local) > 0
