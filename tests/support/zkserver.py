"""A real ZooKeeper server for tests, on a free 127.0.0.1 port.

It uses the Debian `zookeeper` package when installed, else the ZooKeeper jars that ship inside
the pyspark wheel, started with `java` (ZooKeeperServerMain <port> <dataDir>).
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def zookeeper_classpath() -> str | None:
    """Classpath with ZooKeeper and its logging deps, or None when none is installed."""
    debian = sorted(glob.glob("/usr/share/java/zookeeper*.jar"))
    if debian:
        return ":".join(["/usr/share/java/*", "/usr/share/zookeeper/*"])
    try:
        import pyspark
    except ImportError:
        return None
    jars = Path(pyspark.__file__).parent / "jars"
    if not list(jars.glob("zookeeper-*.jar")):
        return None
    return str(jars / "*")


@dataclass
class ZooKeeperServer:
    port: int
    process: subprocess.Popen
    data_dir: Path

    @property
    def connect(self) -> str:
        return f"127.0.0.1:{self.port}"

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(5)


def _ruok(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1) as s:
            s.sendall(b"srvr")
            return b"Zookeeper version" in s.recv(4096)
    except OSError:
        return False


def start_zookeeper(data_dir: Path, timeout: float = 60.0) -> ZooKeeperServer:
    """Start ZooKeeper and wait until it answers; raises RuntimeError with its log otherwise."""
    cp = zookeeper_classpath()
    java = shutil.which("java")
    if not cp or not java:
        raise RuntimeError("no ZooKeeper (Debian package or pyspark jars) or no java on this machine")
    port = _free_port()
    data_dir.mkdir(parents=True, exist_ok=True)
    log = open(data_dir / "zookeeper.out", "wb")  # noqa: SIM115
    cmd = [
        java,
        "-Xmx256m",
        "-Dzookeeper.admin.enableServer=false",
        "-Dzookeeper.4lw.commands.whitelist=*",
        "-Dzookeeper.clientPortAddress=127.0.0.1",
        "-cp",
        cp,
        "org.apache.zookeeper.server.ZooKeeperServerMain",
        str(port),
        str(data_dir / "data"),
    ]
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=dict(os.environ))
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            break
        if _ruok(port):
            return ZooKeeperServer(port, proc, data_dir)
        time.sleep(0.2)
    proc.kill()
    raise RuntimeError("ZooKeeper did not start: " + (data_dir / "zookeeper.out").read_text(errors="replace")[-2000:])
