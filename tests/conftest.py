"""Shared test fixtures: where the real-broker fixtures live, and generated logs."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from hypothesis import settings

# No test may depend on chance: hypothesis draws the same examples on every run (and keeps no database
# of past failures that would make one machine's run differ from another's).
settings.register_profile("kafkatool", derandomize=True, database=None)
settings.load_profile("kafkatool")

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("KAFKATOOL_SHARED", REPO.parent / "shared")).resolve()
FIXTURES = SHARED / "fixtures"
KAFKA_LOGS = FIXTURES / "kafka-logs"
GOLDENS = FIXTURES / "dump-log"
KAFKA4 = FIXTURES / "kafka-4.0.0"  # a Kafka 4.0.0 broker's data and its kafka-dump-log output
KAFKA4_LOGS = KAFKA4 / "kafka-logs"
KAFKA4_GOLDENS = KAFKA4 / "dump-log"
KAFKA43 = FIXTURES / "kafka-4.3"  # a Kafka 4.3 broker's data and its kafka-dump-log output
KAFKA43_LOGS = KAFKA43 / "kafka-logs"
KAFKA43_GOLDENS = KAFKA43 / "dump-log"


@contextmanager
def kafka_text(name: str) -> Iterator[None]:
    """Print Kafka release `name`'s text (as `--kafka-release` does) for the duration."""
    from kafkatool import release

    before = release.explicit()
    release.select(name)
    try:
        yield
    finally:
        release.select(before)


def require_fixtures() -> Path:
    """Skip (with the reason) when the shared real-broker fixtures are not beside the repo."""
    if not (KAFKA_LOGS.is_dir() and GOLDENS.is_dir()):
        pytest.skip(f"shared fixtures not found at {FIXTURES} (set KAFKATOOL_SHARED to the shared/ directory)")
    return FIXTURES


@pytest.fixture
def fixtures() -> Path:
    return require_fixtures()


@pytest.fixture
def kafka_logs() -> Path:
    require_fixtures()
    return KAFKA_LOGS


@pytest.fixture(scope="session")
def zookeeper(tmp_path_factory):  # type: ignore[no-untyped-def]
    """A real ZooKeeper server for the whole session (skips with the reason when none can start)."""
    from tests.support.zkserver import start_zookeeper, zookeeper_classpath

    if zookeeper_classpath() is None:
        pytest.skip("no ZooKeeper jars: install the 'zookeeper' Debian package or pyspark")
    server = start_zookeeper(tmp_path_factory.mktemp("zookeeper"))
    yield server
    server.stop()


@pytest.fixture
def zk_chroot(zookeeper, request):  # type: ignore[no-untyped-def]
    """A fresh chroot per test (`127.0.0.1:port/test-name`) so tests never see each other's znodes."""
    import re
    import uuid

    name = re.sub(r"[^A-Za-z0-9_-]", "_", request.node.name)[:60] + "-" + uuid.uuid4().hex[:8]
    return f"{zookeeper.connect}/{name}"


def _shape(app) -> tuple:  # type: ignore[no-untyped-def]
    """What the click tree of a typer app is built from: its commands and groups, recursively."""
    return (id(app), len(app.registered_commands), app.registered_callback is not None,
            tuple(_shape(g.typer_instance) for g in app.registered_groups if g.typer_instance is not None))


@pytest.fixture(scope="session", autouse=True)
def _click_tree_built_once():  # type: ignore[no-untyped-def]
    """Build each app's click command tree once, not on every in-process invocation.

    typer rebuilds the whole tree (every command's parameters from its signature) on each call of the
    app: ~0.1 s, a third of the in-process runs' time; a process pays it once.  The tree is rebuilt
    whenever a command or group is registered (the key is the app's shape), and click commands hold no
    state between invocations.
    """
    import typer.main
    import typer.testing

    build = typer.main.get_command
    built: dict[tuple, tuple[object, object]] = {}  # the app is kept too: its id is never reused

    def get_command(app):  # type: ignore[no-untyped-def]
        key = _shape(app)
        if key not in built:
            built[key] = (app, build(app))
        return built[key][1]

    mp = pytest.MonkeyPatch()
    mp.setattr(typer.main, "get_command", get_command)
    mp.setattr(typer.testing, "_get_command", get_command)
    yield
    mp.undo()


@pytest.fixture(autouse=True)
def _state_dir(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Files commands keep for the operator (reassign plans, rollbacks) go to a per-test directory,
    never the user's ~/.local/state (kafkatool.config.default_state_dir)."""
    state = tmp_path_factory.mktemp("state")
    monkeypatch.setenv("KAFKATOOL_STATE_DIR", str(state))
    return state


@pytest.fixture
def frozen_port():  # type: ignore[no-untyped-def]
    """A 127.0.0.1 port whose kernel accepts connections that nobody ever reads (a SIGSTOPped broker), held
    for the whole test."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen(8)
        yield s.getsockname()[1]


@pytest.fixture
def garbage_port():  # type: ignore[no-untyped-def]
    """A 127.0.0.1 port whose listener reads one request and answers with bytes that are no Kafka
    response (a length prefix and 0xff), then closes: for "never a traceback" tests of the clients."""
    import socket
    import threading

    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(4)

    def serve() -> None:
        while True:
            try:
                conn, _ = srv.accept()
            except OSError:
                return
            with conn:
                try:
                    conn.recv(4096)
                    conn.sendall(b"\x00\x00\x00\x08" + b"\xff" * 8)
                except OSError:
                    pass

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    try:
        yield srv.getsockname()[1]
    finally:
        srv.close()


@pytest.fixture
def refused_port():  # type: ignore[no-untyped-def]
    """A 127.0.0.1 port that refuses connections for the whole test: bound and never listened on, so no
    other process can take it between the moment it is picked and the moment the test connects."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        yield s.getsockname()[1]
