"""Start (or reuse) a SparkSession for kafkatool, follow its jobs, and explain its failures in one line.

The JVM's own chatter (log4j warnings, stage banners) goes to a log file instead of the terminal,
because a command prints its result and at most one line of error; the file is named in errors.
Local sessions run the workers on this very interpreter (`spark.pyspark.python`): the data source
needs pyarrow and kafkatool on the workers, and a different `python3` on PATH may have neither.

The JVM a session starts runs in a process group of its own (with its Python workers), and that
group is ended whenever the session ends other than cleanly: PySpark's launcher deletes the
directory the JVM writes its port to when it is interrupted, and a JVM that then fails to write
it never reaches the stdin-EOF watch that normally ends it — it stayed behind, ppid 1, for ever.
"""

from __future__ import annotations

import atexit
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from kafkatool.slices.planning import ScanInputError
from kafkatool.slices.reading import CORRUPT_MARK

DEFAULT_MASTER = "local[*]"
APP_NAME = "kafkatool spark-scan"
LOCAL_JVM_OPTIONS = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"

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


def session_conf(master: str | None, extra: dict[str, str] | None = None, sql: bool = True) -> dict[str, str]:
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
        if not sql:
            # The driver is the executor here, and for RDD jobs it mostly moves bytes: the C1 compiler
            # alone and the serial collector halve the JVM's start-up CPU and cut its CPU per query 3x
            # (issue 14).  Spark SQL's generated code wants C2: record-level SQL ran 40% slower on C1.
            conf["spark.driver.extraJavaOptions"] = LOCAL_JVM_OPTIONS
        conf["spark.pyspark.python"] = sys.executable
        conf["spark.pyspark.driver.python"] = sys.executable
    conf.update(extra or {})
    return conf


@dataclass
class Session:
    spark: Any  # a SparkSession, or a bare SparkContext when started with sql=False
    log_path: str | None  # where the JVM writes its log (None when it writes to the terminal)
    owned: bool  # started here, so stopped here


@contextmanager
def spark_session(
    master: str | None = None,
    extra_conf: dict[str, str] | None = None,
    jvm_log: bool = True,
    executor_timeout: float = 120.0,
    sql: bool = True,
) -> Iterator[Session]:
    """A session for one command: reuses an active one (tests, notebooks), else starts and stops one.

    master None means local[*], or whatever spark-submit was given when it launched us.  With
    jvm_log the JVM's stdout/stderr go to a temporary log file (removed after a clean run).  On a
    cluster master, waits up to executor_timeout seconds for a first executor, so a wrong or busy
    master fails with a message instead of waiting forever.  sql=False starts only a SparkContext,
    for RDD jobs: a SparkSession's SQL machinery costs seconds of start-up they do not need.
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
    conf_map = session_conf(master, extra_conf, sql)
    if conf_map.get("spark.pyspark.python"):
        os.environ.setdefault("PYSPARK_PYTHON", conf_map["spark.pyspark.python"])
    log_path = None
    log_file = None
    if jvm_log and not under_spark_submit():
        fd, log_path = tempfile.mkstemp(prefix="kafkatool-spark-", suffix=".log")
        log_file = os.fdopen(fd, "wb")
    ok = False
    spark = None
    guard = JvmGuard()
    try:
        cluster = local_parallelism(master or "") is None
        spark = _start_within(conf_map, log_file, executor_timeout if cluster else None, log_path, guard, sql)
        master_used = context_of(spark).master
        if local_parallelism(master_used) is None:
            _wait_for_executors(spark, master_used, executor_timeout, log_path)
        try:
            yield Session(spark, log_path, owned=True)
        except Exception as exc:
            _keep_text(exc)  # PySpark renders its errors through the JVM, which ends below
            raise
        ok = True
    finally:
        if spark is not None and ok:
            try:
                spark.stop()
            except Exception:  # noqa: BLE001 - stopping a broken context must not hide the real error
                pass
        elif spark is not None:
            _stop_within(spark, 5.0)  # a JVM that no longer answers is killed below anyway
        if ok:
            guard.mark_clean()  # the JVM stays for reuse in this process; it ends with the process
        else:
            guard.end(grace=2.0)
            _forget_gateway()
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


class JvmGuard:
    """The JVM processes one session launched, ended with their whole process group when it ends.

    PySpark's `launch_gateway` only returns the process once the JVM has answered, so the launch is
    watched through the `Popen` it calls; a launch still under way when the session is abandoned
    (an interrupt during start-up, a start given up after its timeout) is ended as soon as it
    shows.  Also registered at exit, for the paths no `finally` sees.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._procs: list[subprocess.Popen] = []
        self._ended = False
        self._clean = False
        atexit.register(self._at_exit)

    def popen_class(self) -> type:
        guard = self

        class _GuardedPopen(subprocess.Popen):  # type: ignore[type-arg]
            def __init__(self, *args: Any, **kwargs: Any) -> None:
                kwargs["start_new_session"] = True  # our own group: killpg reaches the workers too
                try:
                    super().__init__(*args, **kwargs)
                finally:
                    # an interrupt after the fork but before Popen returns (while it waits for the
                    # exec) loses the Popen, not the child: the launcher goes on to start the JVM
                    if getattr(self, "pid", None) is not None:
                        guard._adopt(self)

        return _GuardedPopen

    def _adopt(self, proc: subprocess.Popen) -> None:
        with self._lock:
            self._procs.append(proc)
            ended = self._ended
        if ended:
            _end_group(proc, 0.0)

    def mark_clean(self) -> None:
        """The session stopped cleanly: its JVM reached the stdin watch and leaves when we do."""
        self._clean = True

    def end(self, grace: float = 2.0) -> None:
        """Close the JVMs' stdin (their normal way out), wait up to `grace` s, then end their groups."""
        with self._lock:
            self._ended = True
            procs = list(self._procs)
        for proc in procs:
            _end_group(proc, grace)
        atexit.unregister(self._at_exit)

    def _at_exit(self) -> None:
        if not self._clean:
            self.end(grace=2.0)


def _end_group(proc: subprocess.Popen, grace: float) -> None:
    try:
        if proc.stdin is not None:
            proc.stdin.close()
    except OSError:
        pass
    try:
        proc.wait(grace)
    except subprocess.TimeoutExpired:
        pass
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(proc.pid, sig)  # the launcher execs the JVM: its pid leads the group
        except (ProcessLookupError, PermissionError):
            break
        try:
            proc.wait(3.0)
        except subprocess.TimeoutExpired:
            continue
    try:
        os.killpg(proc.pid, signal.SIGKILL)  # workers the JVM left in its group
    except (ProcessLookupError, PermissionError):
        pass


def _keep_text(exc: BaseException) -> None:
    try:
        exc.kafkatool_text = str(exc)  # type: ignore[attr-defined]
    except Exception:  # noqa: BLE001 - an error that cannot be rendered is explained by its type
        pass


def exception_text(exc: BaseException) -> str:
    """str(exc), or what it was while the JVM still ran, or the type's name."""
    kept = getattr(exc, "kafkatool_text", None)
    if kept is not None:
        return kept
    try:
        return str(exc)
    except Exception:  # noqa: BLE001
        return type(exc).__name__


def _forget_gateway() -> None:
    """Make the next session launch a new JVM instead of talking to the one just ended."""
    try:
        from pyspark import SparkContext
    except ImportError:
        return
    SparkContext._gateway = None  # noqa: SLF001 - PySpark keeps the gateway in class attributes
    SparkContext._jvm = None  # noqa: SLF001
    SparkContext._active_spark_context = None  # noqa: SLF001


def _stop_within(spark: Any, timeout: float) -> None:
    """spark.stop(), given up after timeout s (an interrupted JVM may never answer)."""
    thread = threading.Thread(target=lambda: _quietly(spark.stop), name="kafkatool-spark-stop", daemon=True)
    thread.start()
    thread.join(timeout)


def _quietly(fn: Callable[[], Any]) -> None:
    try:
        fn()
    except Exception:  # noqa: BLE001 - a failing stop is followed by killing the JVM
        pass


def _start_within(
    conf_map: dict[str, str], log_file: Any, timeout: float | None, log_path: str | None, guard: JvmGuard,
    sql: bool = True,
) -> Any:
    """_start, given up after timeout seconds (a standalone master that never answers blocks a minute).

    The abandoned start runs on in a daemon thread; the JVM it launched exits with this process.
    """
    where = f" (Spark log: {log_path})" if log_path else ""
    if timeout is None:
        try:
            return _start(conf_map, log_file, guard, sql)
        except SparkStartError as exc:
            raise SparkStartError(f"{exc}{where}") from exc
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["spark"] = _start(conf_map, log_file, guard, sql)
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


_LAUNCH_LOCK = threading.Lock()


def _start(conf_map: dict[str, str], log_file: Any, guard: JvmGuard, sql: bool = True) -> Any:
    from pyspark import SparkConf, SparkContext
    from pyspark.sql import SparkSession

    conf = SparkConf(loadDefaults=True)
    for k, v in conf_map.items():
        conf.set(k, v)
    try:
        if SparkContext._gateway is None and not under_spark_submit():
            gateway = _launch_gateway(conf, log_file, guard)
            SparkContext(conf=conf, gateway=gateway)
        if not sql:
            return SparkContext.getOrCreate(conf)
        return SparkSession.builder.config(conf=conf).getOrCreate()
    except Exception as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise SparkStartError(f"cannot start Spark: {first}") from exc


def _launch_gateway(conf: Any, log_file: Any, guard: JvmGuard) -> Any:
    """PySpark's launch_gateway, with the JVM it starts watched by `guard`."""
    from pyspark import java_gateway

    kwargs = {"stdout": log_file, "stderr": log_file} if log_file is not None else {}
    with _LAUNCH_LOCK:
        plain = java_gateway.Popen
        java_gateway.Popen = guard.popen_class()  # type: ignore[misc,assignment]
        try:
            return java_gateway.launch_gateway(conf, popen_kwargs=kwargs)
        finally:
            java_gateway.Popen = plain  # type: ignore[misc]


def context_of(spark: Any) -> Any:
    """The SparkContext of a SparkSession (or the SparkContext itself)."""
    return getattr(spark, "sparkContext", spark)


def _wait_for_executors(spark: Any, master: str, timeout: float, log_path: str | None) -> None:
    sc = context_of(spark)
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
        self.sc = context_of(spark)
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
# The last "Name: message" line of a Python traceback carried inside a Spark error
_PY_EXCEPTION_LINE = re.compile(r"^([A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt)): (.*)$")
_IMPORT_FAILURES = ("ModuleNotFoundError", "ImportError")


def _python_worker_error(text: str) -> str | None:
    """For a Python traceback that failed in Spark's Python workers: its exception line, and for a
    missing module what to set, because the cause is on the executors, not on this machine."""
    if "Traceback (most recent call last)" not in text:
        return None
    last = None
    for line in text.splitlines():
        m = _PY_EXCEPTION_LINE.match(line.strip())
        if m:
            last = m
    if last is None:
        return None
    kind, message = last.group(1).rsplit(".", 1)[-1], last.group(2).strip()
    message = re.sub(r"\s*SQLSTATE: \w+$", "", message)
    where = "Spark's Python workers failed"
    if kind in _IMPORT_FAILURES:
        return (
            f"{where}: {kind}: {message}; their Python needs kafkatool, pyarrow and pandas (< 3): set "
            "--spark-conf spark.pyspark.python=PYTHON to an interpreter that has them on every executor"
        )
    return f"{where}: {kind}: {message}"


def explain_error(exc: BaseException, log_path: str | None = None) -> tuple[str, int]:
    """One line and an exit code for an exception out of Spark (or out of our code inside it).

    Corruption met under on_corrupt=fail is a finding (1); bad SQL, paths and options are usage
    errors (2); anything else is a failure (3) and names the JVM log when there is one.
    """
    text = exception_text(exc)
    mark = text.find(CORRUPT_MARK)
    if mark >= 0:
        line = text[mark + len(CORRUPT_MARK) :].strip().splitlines()[0]
        return f"corrupt data: {line} (--on-corrupt skip reads past it)", EXIT_FINDINGS
    if isinstance(exc, SparkStartError):
        return str(exc), EXIT_FAILURE
    if isinstance(exc, (ScanInputError, FileNotFoundError)):  # planning runs in this process now
        return text, EXIT_USAGE
    m = _INPUT_ERRORS.search(text)
    if m:
        return m.group(1).strip(), EXIT_USAGE
    name = type(exc).__name__
    first = next((ln.strip() for ln in text.splitlines() if ln.strip()), name)
    worker = _python_worker_error(text)
    if worker is not None:
        return worker, EXIT_FAILURE
    if name in ("AnalysisException", "ParseException"):
        return f"SQL: {first}", EXIT_USAGE
    where = f" (Spark log: {log_path})" if log_path else ""
    return f"Spark failed: {first}{where}", EXIT_FAILURE
