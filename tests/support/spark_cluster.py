"""A real Spark standalone cluster on 127.0.0.1 — a master and two one-core workers — from the pyspark wheel.

The daemons are the JVM classes `bin/spark-class` would start (`deploy.master.Master`,
`deploy.worker.Worker`), launched with `java` directly in a process group of their own so the
fixture can end them all.  The wheel has no build directories and no RELEASE file, so the workers
are told the Scala version (SPARK_SCALA_VERSION), as `load-spark-env.sh` does for them.
The master binds a port of its choosing (`--port 0`) and the fixture reads the URL from its log: a
port picked free beforehand may be taken by another process before the master binds it.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest


def _wait_for(path: Path, pattern: str, proc: subprocess.Popen, limit: float) -> re.Match[str]:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        found = re.search(pattern, path.read_text(errors="replace")) if path.exists() else None
        if found:
            return found
        if proc.poll() is not None:
            raise RuntimeError(f"{proc.args[-1]} exited: {path.read_text(errors='replace')[-2000:]}")
        time.sleep(0.2)
    raise TimeoutError(f"no {pattern!r} in {path} within {limit:g} s")


@pytest.fixture(scope="module")
def spark_standalone(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """spark://127.0.0.1:PORT of a running master with two registered one-core workers."""
    pytest.importorskip("pyspark")
    pytest.importorskip("pyarrow")
    pytest.importorskip("pandas")
    java = shutil.which("java")
    if java is None:
        pytest.skip("no Java runtime: a standalone Spark cluster needs Java 17+")
    import pyspark

    home = Path(pyspark.__file__).parent
    work = tmp_path_factory.mktemp("spark-standalone")
    env = dict(os.environ, SPARK_HOME=str(home), SPARK_SCALA_VERSION="2.13", SPARK_LOCAL_IP="127.0.0.1")
    base = [java, "-Xmx256m", "-cp", f"{home}/jars/*"]
    procs: list[subprocess.Popen] = []

    def start(name: str, *args: str) -> tuple[subprocess.Popen, Path]:
        log = work / f"{name}.log"
        with open(log, "wb") as out:
            p = subprocess.Popen([*base, *args], stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                 env=env, start_new_session=True)
        procs.append(p)
        return p, log

    try:
        master, mlog = start("master", "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                             "--port", "0", "--webui-port", "0")
        master_url = _wait_for(mlog, r"Starting Spark master at (spark://127\.0\.0\.1:[1-9][0-9]*)", master,
                               120).group(1)
        for i in (1, 2):
            w, wlog = start(f"worker{i}", "org.apache.spark.deploy.worker.Worker", "--host", "127.0.0.1",
                            "--cores", "1", "--memory", "1g", "--webui-port", "0",
                            "--work-dir", str(work / f"work{i}"), master_url)
            _wait_for(wlog, "Successfully registered with master", w, 120)
        yield master_url
    finally:
        for p in reversed(procs):
            try:
                os.killpg(p.pid, signal.SIGTERM)
            except ProcessLookupError:
                continue
        for p in procs:
            try:
                p.wait(20)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait(5)
