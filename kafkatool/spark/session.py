"""Start (or reuse) a SparkSession for kafkatool, follow its jobs, and explain its failures in one line.

The JVM's own chatter (log4j warnings, stage banners) goes to a log file instead of the terminal,
because a command prints its result and at most one line of error; the file is named in errors.
Local sessions run the workers on this very interpreter (`spark.pyspark.python`): the data source
needs pyarrow and kafkatool on the workers, and a different `python3` on PATH may have neither.
"""

from __future__ import annotations

import os
import re
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from kafkatool.slices.reading import CORRUPT_MARK

DEFAULT_MASTER = "local[*]"
APP_NAME = "kafkatool spark-scan"

EXIT_FINDINGS = 1
EXIT_USAGE = 2
EXIT_FAILURE = 3


class SparkStartError(RuntimeError):
    """The session could not start or got no executors in time."""


def under_spark_submit() -> bool:
    """True when spark-submit launched this interpreter (it then owns the master and the JVM)."""
    return "PYSPARK_GATEWAY_PORT" in os.environ


def local_parallelism(master: str) -> int | None:
    """Worker threads of a local master (local, local[4], local[*], local[2,3]); None for clusters."""
    m = re.fullmatch(r"local(?:\[(\*|\d+)(?:,\s*\d+)?\])?", master.strip())
    if not m:
        return None
    n = m.group(1)
    if n is None:
        return 1
    return os.cpu_count() or 1 if n == "*" else int(n)


def session_conf(master: str | None, extra: dict[str, str] | None = None) -> dict[str, str]:
    """The settings kafkatool starts a session with; `extra` (--spark-conf) wins over every default."""
    conf = {
        "spark.app.name": APP_NAME,
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.sql.python.filterPushdown.enabled": "true",
        "spark.log.level": "WARN",
    }
    if master:
        conf["spark.master"] = master
    cores = local_parallelism(master) if master else None
    if cores is not None:
        conf["spark.sql.shuffle.partitions"] = str(max(2, 2 * cores))
        conf["spark.pyspark.python"] = sys.executable
        conf["spark.pyspark.driver.python"] = sys.executable
    conf.update(extra or {})
    return conf


@dataclass
class Session:
    spark: Any
    log_path: str | None  # where the JVM writes its log (None when it writes to the terminal)
    owned: bool  # started here, so stopped here


@contextmanager
def spark_session(
    master: str | None = None,
    extra_conf: dict[str, str] | None = None,
    jvm_log: bool = True,
    executor_timeout: float = 120.0,
) -> Iterator[Session]:
    """A session for one command: reuses an active one (tests, notebooks), else starts and stops one.

    master None means local[*], or whatever spark-submit was given when it launched us.  With
    jvm_log the JVM's stdout/stderr go to a temporary log file (removed after a clean run).  On a
    cluster master, waits up to executor_timeout seconds for a first executor, so a wrong or busy
    master fails with a message instead of waiting forever.
    """
    from pyspark.sql import SparkSession

    if jvm_log:
        _quiet_pyspark_loggers()
    active = SparkSession.getActiveSession()
    if active is not None:
        yield Session(active, None, owned=False)
        return
    if master is None and not under_spark_submit():
        master = DEFAULT_MASTER
    conf_map = session_conf(master, extra_conf)
    if conf_map.get("spark.pyspark.python"):
        os.environ.setdefault("PYSPARK_PYTHON", conf_map["spark.pyspark.python"])
    log_path = None
    log_file = None
    if jvm_log and not under_spark_submit():
        fd, log_path = tempfile.mkstemp(prefix="kafkatool-spark-", suffix=".log")
        log_file = os.fdopen(fd, "wb")
    ok = False
    spark = None
    try:
        cluster = local_parallelism(master or "") is None
        spark = _start_within(conf_map, log_file, executor_timeout if cluster else None, log_path)
        master_used = spark.sparkContext.master
        if local_parallelism(master_used) is None:
            _wait_for_executors(spark, master_used, executor_timeout, log_path)
        yield Session(spark, log_path, owned=True)
        ok = True
    finally:
        if spark is not None:
            try:
                spark.stop()
            except Exception:  # noqa: BLE001 - stopping a broken context must not hide the real error
                pass
        if log_file is not None:
            log_file.close()
        if ok and log_path:
            try:
                os.unlink(log_path)
            except OSError:
                pass


def _quiet_pyspark_loggers() -> None:
    """PySpark logs every failed query as a JSON line on stderr; the caller reports it in one line."""
    from pyspark.logger import PySparkLogger

    for name in ("SQLQueryContextLogger", "DataFrameQueryContextLogger"):
        PySparkLogger.getLogger(name).disabled = True


def _start_within(conf_map: dict[str, str], log_file: Any, timeout: float | None, log_path: str | None) -> Any:
    """_start, given up after timeout seconds (a standalone master that never answers blocks a minute).

    The abandoned start runs on in a daemon thread; the JVM it launched exits with this process.
    """
    where = f" (Spark log: {log_path})" if log_path else ""
    if timeout is None:
        try:
            return _start(conf_map, log_file)
        except SparkStartError as exc:
            raise SparkStartError(f"{exc}{where}") from exc
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["spark"] = _start(conf_map, log_file)
        except BaseException as exc:  # noqa: BLE001 - handed to the caller below
            box["error"] = exc

    thread = threading.Thread(target=run, name="kafkatool-spark-start", daemon=True)
    thread.start()
    thread.join(timeout)
    if "error" in box:
        raise SparkStartError(f"{box['error']} on {conf_map.get('spark.master')}{where}") from box["error"]
    if "spark" not in box:
        raise SparkStartError(f"no answer from {conf_map.get('spark.master')} within {timeout:g} s{where}")
    return box["spark"]


def _start(conf_map: dict[str, str], log_file: Any) -> Any:
    from pyspark import SparkConf, SparkContext
    from pyspark.sql import SparkSession

    conf = SparkConf(loadDefaults=True)
    for k, v in conf_map.items():
        conf.set(k, v)
    try:
        if log_file is not None and SparkContext._gateway is None:
            from pyspark.java_gateway import launch_gateway

            gateway = launch_gateway(conf, popen_kwargs={"stdout": log_file, "stderr": log_file})
            SparkContext(conf=conf, gateway=gateway)
        return SparkSession.builder.config(conf=conf).getOrCreate()
    except Exception as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise SparkStartError(f"cannot start Spark: {first}") from exc


def _wait_for_executors(spark: Any, master: str, timeout: float, log_path: str | None) -> None:
    sc = spark.sparkContext
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        jsc = sc._jsc  # noqa: SLF001 - the executor list is only on the JVM side
        if jsc is None or jsc.sc().isStopped():
            break
        if len(jsc.sc().statusTracker().getExecutorInfos()) > 1:  # the driver is listed too
            return
        time.sleep(0.5)
    where = f" (Spark log: {log_path})" if log_path else ""
    raise SparkStartError(f"no executor registered with {master} within {timeout:g} s{where}")


# -- progress ------------------------------------------------------------------------------------


class JobWatcher:
    """Follows the tasks of one job group through Spark's status tracker, for a progress bar."""

    def __init__(self, spark: Any, on_update: Callable[[int, int], None], interval: float = 0.25) -> None:
        self.sc = spark.sparkContext
        self.group = f"kafkatool-{uuid.uuid4().hex[:12]}"
        self.on_update = on_update
        self.interval = interval
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="kafkatool-progress", daemon=True)

    def counts(self) -> tuple[int, int]:
        """(completed tasks, total tasks) over the group's jobs so far."""
        tracker = self.sc.statusTracker()
        done = total = 0
        for job_id in tracker.getJobIdsForGroup(self.group):
            job = tracker.getJobInfo(job_id)
            if job is None:
                continue
            for stage_id in job.stageIds:
                stage = tracker.getStageInfo(stage_id)
                if stage is not None:
                    done += stage.numCompletedTasks
                    total += stage.numTasks
        return done, total

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            try:
                self.on_update(*self.counts())
            except Exception:  # noqa: BLE001 - a progress bar must never break the query
                return

    def __enter__(self) -> JobWatcher:
        self.sc.setJobGroup(self.group, APP_NAME)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=2)
        try:
            self.sc.clearJobGroup()
        except AttributeError:
            pass


# -- errors --------------------------------------------------------------------------------------

_INPUT_ERRORS = re.compile(r"(?:ScanInputError|FileNotFoundError): (.+)")


def explain_error(exc: BaseException, log_path: str | None = None) -> tuple[str, int]:
    """One line and an exit code for an exception out of Spark (or out of our code inside it).

    Corruption met under on_corrupt=fail is a finding (1); bad SQL, paths and options are usage
    errors (2); anything else is a failure (3) and names the JVM log when there is one.
    """
    text = str(exc)
    mark = text.find(CORRUPT_MARK)
    if mark >= 0:
        line = text[mark + len(CORRUPT_MARK) :].strip().splitlines()[0]
        return f"corrupt data: {line} (--on-corrupt skip reads past it)", EXIT_FINDINGS
    if isinstance(exc, SparkStartError):
        return str(exc), EXIT_FAILURE
    m = _INPUT_ERRORS.search(text)
    if m:
        return m.group(1).strip(), EXIT_USAGE
    name = type(exc).__name__
    first = next((ln.strip() for ln in text.splitlines() if ln.strip()), name)
    if name in ("AnalysisException", "ParseException"):
        return f"SQL: {first}", EXIT_USAGE
    where = f" (Spark log: {log_path})" if log_path else ""
    return f"Spark failed: {first}{where}", EXIT_FAILURE
