"""A real ZooKeeper server for tests, on a free 127.0.0.1 port.

It uses the Debian `zookeeper` package when installed, else the ZooKeeper jars that ship inside
the pyspark wheel, started with `java` (ZooKeeperServerMain <port> <dataDir>).

The port is picked free and bound by the server a moment later, so another process (another test run
on the machine) may take it in between: the server then exits, or a stranger answers on that port.
A server counts as started only when the one answering reports our data directory (the `conf`
four-letter word); otherwise it starts again on a new port.
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


def _four_letters(port: int, word: bytes) -> str:
    """The server's answer to a four-letter word ("" when nothing answers)."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=2) as s:
            s.sendall(word)
            chunks = []
            while chunk := s.recv(4096):
                chunks.append(chunk)
            return b"".join(chunks).decode(errors="replace")
    except OSError:
        return ""


def _serves(port: int, data_dir: Path) -> bool:
    """True when the ZooKeeper on port is the one keeping its data in data_dir (not a stranger)."""
    conf = _four_letters(port, b"conf")
    return any(line.startswith("dataDir=") and line[len("dataDir="):].startswith(str(data_dir))
               for line in conf.splitlines())


def start_zookeeper(data_dir: Path, timeout: float = 60.0, attempts: int = 5) -> ZooKeeperServer:
    """Start ZooKeeper and wait until it answers; raises RuntimeError with its log otherwise."""
    cp = zookeeper_classpath()
    java = shutil.which("java")
    if not cp or not java:
        raise RuntimeError("no ZooKeeper (Debian package or pyspark jars) or no java on this machine")
    data_dir.mkdir(parents=True, exist_ok=True)
    out = data_dir / "zookeeper.out"
    for _ in range(attempts):
        port = _free_port()
        with open(out, "wb") as log:
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
            proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                    env=dict(os.environ))
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and proc.poll() is None:
            if _serves(port, data_dir / "data"):
                return ZooKeeperServer(port, proc, data_dir)
            time.sleep(0.2)
        if proc.poll() is None:  # alive but never answered as ours within the limit: a real failure
            proc.kill()
            proc.wait(10)
            break
        # it exited: most likely the port was taken in between; try a new one
    raise RuntimeError("ZooKeeper did not start: " + out.read_text(errors="replace")[-2000:])
