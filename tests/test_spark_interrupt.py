"""spark-scan leaves no process behind, whenever it is interrupted, and names what failed on the executors.

Each run starts the real console command (`python -m kafkatool spark-scan`) in a session of its own,
with a marker in its environment that every process it starts inherits (the spark-submit launcher,
the JVM, Spark's Python workers).  The interrupt is sent at a phase seen from outside — the launcher
appearing, the JVM running, a Python worker running — or after a fixed delay, to the process or to
its whole group as a terminal's Ctrl-C does.  Whatever phase the signal lands in, the assertion is
the same: once the command has exited, no process carrying the marker is left.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.support.ctrl_c import KAFKATOOL_CTRL_C
from tests.support.spark import write_log_dir

pytestmark = [pytest.mark.spark, pytest.mark.slow]

REPO = Path(__file__).resolve().parent.parent


def _need_spark() -> None:
    pytest.importorskip("pyspark")
    pytest.importorskip("pyarrow")
    pytest.importorskip("pandas")
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        pytest.skip("no Java runtime: PySpark needs Java 17+")


def _marked(mark: str) -> list[tuple[int, str]]:
    """(pid, command line) of every live process whose environment carries the marker."""
    found = []
    needle = f"KAFKATOOL_TEST_MARK={mark}".encode()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as f:
                env = f.read()
            if needle not in env.split(b"\0"):
                continue
            with open(f"/proc/{entry}/stat", "rb") as f:
                if f.read().rsplit(b")", 1)[1].split()[0] == b"Z":
                    continue  # a zombie is gone, only not yet reaped
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        found.append((int(entry), cmd))
    return found


def _start(logs: Path, mark: str) -> subprocess.Popen:
    env = dict(os.environ, KAFKATOOL_TEST_MARK=mark, PYTHONPATH=str(REPO))
    return subprocess.Popen(
        [*KAFKATOOL_CTRL_C, "spark-scan", str(logs), "--query", "summary", "--format", "json"],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )


def _wait_for(cond: Callable[[], bool], limit: float) -> bool:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if cond():
            return True
        time.sleep(0.05)
    return False


def _phase(mark: str, name: str) -> Callable[[], bool]:
    if name == "launcher":  # spark-submit's shell launcher or its first java (building the command)
        return lambda: any("spark-submit" in c or "launcher.Main" in c or "spark-class" in c for _, c in _marked(mark))
    if name == "jvm":
        return lambda: any("org.apache.spark.deploy.SparkSubmit" in c for _, c in _marked(mark))
    if name == "worker":
        return lambda: any("pyspark.daemon" in c or "pyspark.worker" in c for _, c in _marked(mark))
    raise AssertionError(name)


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_log_dir(tmp_path_factory.mktemp("interrupt"), batches=400)


@pytest.mark.parametrize(
    "when, to_group",
    [("launcher", False), ("jvm", True), ("worker", True), (2.0, False)],
    ids=["launcher-pid", "jvm-group", "workers-group", "2s-pid"],
)
def test_interrupt_leaves_no_process(logs: Path, when: str | float, to_group: bool) -> None:
    _need_spark()
    mark = uuid.uuid4().hex
    proc = _start(logs, mark)
    try:
        if isinstance(when, float):
            time.sleep(when)
        else:
            # the phase may be over before it is seen on a fast machine: then the signal lands later,
            # which the assertion below covers just the same
            _wait_for(_phase(mark, when), 90)
        if to_group:
            os.killpg(proc.pid, signal.SIGINT)
        else:
            proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=90)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode in (0, 130), err.decode()
    if proc.returncode == 130:
        assert err.decode().strip().splitlines()[-1] == "kafkatool: interrupted"
    # SIGTERM'd JVMs run their shutdown hooks first, slowly on a loaded machine: wait for the outcome
    # (returns as soon as none is left) with a limit far above any real shutdown, not a guess of one
    _wait_for(lambda: not _marked(mark), 120)
    left = _marked(mark)
    for pid, _ in left:  # do not leak them into the rest of the run either
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    assert not left, f"left behind after SIGINT at {when}: {left}"


def test_executor_failure_names_the_cause_and_the_setting(logs: Path, tmp_path: Path) -> None:
    """Workers on an interpreter without pyarrow/kafkatool: a real failure, reported with its cause."""
    _need_spark()
    bare = tmp_path / "bare"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(bare)], check=True)
    bare_python = bare / "bin" / "python"
    env = dict(os.environ, PYTHONPATH="")  # the workers must not find this checkout either
    env.pop("PYSPARK_PYTHON", None)
    res = subprocess.run(
        [sys.executable, "-m", "kafkatool", "spark-scan", str(logs), "--query", "summary",
         "--spark-conf", f"spark.pyspark.python={bare_python}"],
        env=env,
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert res.returncode == 3, res.stderr
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1, res.stderr
    line = lines[0]
    assert line.startswith("kafkatool: "), line
    assert "No module named" in line, line
    assert "spark.pyspark.python" in line, line
    assert "Traceback" not in line, line
