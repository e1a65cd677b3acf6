"""Connecting to clusters: ZooKeeper (kazoo) and brokers (kafka-python), always with timeouts.

Both `reassign`/`elect` and `offsets` connect through here, so connect strings, `--command-config`
client properties and the "cluster unreachable" error are handled once.  kazoo and kafka-python are
imported lazily: commands that never touch a cluster do not pay for them.
"""

from __future__ import annotations

import re
import time
import warnings
from pathlib import Path
from typing import Any

from kafkatool.cluster.bootstrap import probe
from kafkatool.log.checkpoint import read_properties

DEFAULT_TIMEOUT = 15.0


class ClusterError(Exception):
    """A cluster could not be reached or refused a request (CLI exit code 3)."""


class ZkDataError(ClusterError):
    """A znode holds what Kafka never writes there (not JSON, a non-numeric offset, ...): the
    command stops naming the znode rather than misread or skip it (CLI exit code 3)."""


class ClusterInputError(Exception):
    """A connect string or client-properties file is malformed (CLI exit code 2)."""


def kafka_error_text(exc: BaseException) -> str:
    """`KafkaConnectionError: 111 ECONNREFUSED` once: kafka-python's str() already starts with the class
    name, so prefixing it again doubled it.  Long messages (whole requests) are cut at 300 characters."""
    name = type(exc).__name__
    detail = getattr(exc, "description", "") or str(exc)
    if detail.startswith(f"{name}: "):
        detail = detail[len(name) + 2:]
    elif detail == name:
        detail = ""
    return f"{name}: {detail[:300]}" if detail else name


_HOST_PORT = re.compile(r"(?P<host>\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_.\-]+)(?::(?P<port>[^:]*))?")


def check_host_port(entry: str, option: str) -> None:
    """`host[:port]` with a port in 1..65535 (kafka-python and kazoo would fail later with a ValueError)."""
    m = _HOST_PORT.fullmatch(entry)
    if m is None:
        raise ClusterInputError(f"{option}: {entry!r} is not host:port")
    port = m.group("port")
    if port is not None and not (port.isascii() and port.isdigit() and 1 <= int(port) <= 65535):
        raise ClusterInputError(f"{option}: {entry!r}: the port must be a number from 1 to 65535")


def parse_bootstrap(bootstrap: str) -> list[str]:
    """The `host:port` entries of a comma-separated --bootstrap-server list, each checked."""
    servers = [s.strip() for s in bootstrap.split(",") if s.strip()]
    if not servers:
        raise ClusterInputError("--bootstrap-server: empty")
    for server in servers:
        check_host_port(server, "--bootstrap-server")
    return servers


def parse_zk_connect(connect: str) -> tuple[str, str]:
    """Split `h1:2181,h2:2181/chroot` into (hosts, chroot); chroot is '' when absent."""
    connect = connect.strip()
    if not connect:
        raise ClusterInputError("--zookeeper: empty connect string")
    hosts, slash, chroot = connect.partition("/")
    for hp in hosts.split(","):
        check_host_port(hp, "--zookeeper")
    return hosts, ("/" + chroot.rstrip("/")) if slash and chroot.strip("/") else ""


def zk_client(connect: str, timeout: float = DEFAULT_TIMEOUT) -> Any:
    """A started KazooClient for the connect string (with chroot), or ClusterError."""
    from kazoo.client import KazooClient
    from kazoo.handlers.threading import KazooTimeoutError

    hosts, chroot = parse_zk_connect(connect)
    # kazoo retries a refused connection until the timeout: every host refusing twice ends it at once
    tried = probe(hosts.split(","), timeout, tls=True, default_port=2181)
    if tried.answered is None:
        when = f" within {timeout:g}s" if tried.timed_out else ""
        raise ClusterError(f"cannot reach ZooKeeper{when}: {tried.describe()}")
    client = KazooClient(hosts=connect, timeout=timeout, connection_retry={"max_tries": 2, "delay": 0.2})
    try:
        with warnings.catch_warnings():  # kazoo warns of a missing chroot and carries on: we refuse below
            warnings.simplefilter("ignore", UserWarning)
            client.start(timeout=timeout)
        if chroot and client.exists("/") is None:
            client.stop()
            client.close()
            raise ClusterInputError(f"--zookeeper {connect}: chroot {chroot} does not exist "
                                    "(a typo? a Kafka cluster's chroot always exists)")
    except ClusterInputError:
        raise
    except KazooTimeoutError:
        client.close()
        raise ClusterError(f"cannot reach ZooKeeper at {connect} within {timeout:g}s") from None
    except Exception as exc:
        client.close()
        raise ClusterError(f"cannot connect to ZooKeeper at {connect}: {exc}") from None
    return client


def read_client_properties(path: str | Path | None) -> dict[str, str]:
    """Java client properties from `--command-config` (empty when not given)."""
    if not path:
        return {}
    p = Path(path)
    if not p.is_file():
        raise ClusterInputError(f"--command-config: {p}: no such file")
    return read_properties(p.read_text("utf-8"))


_JAAS = re.compile(r'(\w+)\s*=\s*"((?:[^"\\]|\\.)*)"')


def kafka_python_config(bootstrap: str, props: dict[str, str], timeout: float = DEFAULT_TIMEOUT) -> dict[str, Any]:
    """kafka-python keyword arguments for Java client properties (what kafka-python supports)."""
    servers = parse_bootstrap(bootstrap)
    ms = int(timeout * 1000)
    cfg: dict[str, Any] = {
        "bootstrap_servers": servers,
        "request_timeout_ms": ms,
        "client_id": props.get("client.id", "kafkatool"),
    }
    if "security.protocol" in props:
        cfg["security_protocol"] = props["security.protocol"].upper()
    if "sasl.mechanism" in props:
        cfg["sasl_mechanism"] = props["sasl.mechanism"]
    jaas = props.get("sasl.jaas.config")
    if jaas:
        fields = dict(_JAAS.findall(jaas))
        if "username" in fields:
            cfg["sasl_plain_username"] = fields["username"]
        if "password" in fields:
            cfg["sasl_plain_password"] = fields["password"]
    for java, py in (
        ("ssl.truststore.location", "ssl_cafile"),
        ("ssl.ca.location", "ssl_cafile"),
        ("ssl.keystore.location", "ssl_certfile"),
        ("ssl.certificate.location", "ssl_certfile"),
        ("ssl.key.location", "ssl_keyfile"),
        ("ssl.key.password", "ssl_password"),
    ):
        if java in props:
            if java.endswith(".location") and props[java].endswith((".jks", ".p12")):
                raise ClusterInputError(
                    f"--command-config: {java}={props[java]}: kafka-python needs PEM files, not JKS/PKCS12 stores"
                )
            cfg[py] = props[java]
    if props.get("ssl.endpoint.identification.algorithm", "https") == "":
        cfg["ssl_check_hostname"] = False
    return cfg


def admin_client(bootstrap: str, command_config: str | Path | None = None, timeout: float = DEFAULT_TIMEOUT,
                 connect_within: float | None = None) -> Any:
    """A KafkaAdminClient, or ClusterError when no broker answers in time (`connect_within`
    seconds when given: what is left of a command's --timeout; errors still name --timeout)."""
    from kafka import KafkaAdminClient
    from kafka.errors import KafkaConfigurationError, KafkaError

    cfg = kafka_python_config(bootstrap, read_client_properties(command_config), timeout)
    within = timeout if connect_within is None else connect_within
    started = time.monotonic()
    # Every address at once, each failure named; the client bootstraps from the one that answered.
    tried = probe(cfg["bootstrap_servers"], within, cfg["client_id"],
                  tls=cfg.get("security_protocol", "PLAINTEXT") in ("SSL", "SASL_SSL"))
    if tried.answered is None:
        when = f" within {timeout:g}s" if tried.timed_out else ""
        raise ClusterError(f"cannot reach any broker{when}: {tried.describe()}")
    cfg["bootstrap_servers"] = [tried.answered]
    if "bootstrap_timeout_ms" in KafkaAdminClient.DEFAULT_CONFIG:  # kafka-python 3.x waits 30 s by default
        cfg.setdefault("bootstrap_timeout_ms", max(1, int((within - (time.monotonic() - started)) * 1000)))

    try:
        admin = KafkaAdminClient(**cfg)
    except KafkaConfigurationError as exc:
        raise ClusterInputError(f"--command-config: {exc}") from None
    except KafkaError as exc:
        raise ClusterError(f"cannot reach the broker at {tried.answered} within {timeout:g}s: {exc}") from None
    except OSError as exc:
        raise ClusterError(f"cannot connect to {bootstrap}: {exc}") from None
    # A broker that accepts connections and never answers must not cost 10 s (kafka-python's
    # connection set-up timeout, which the admin client does not let us configure) past --timeout.
    manager_config = getattr(getattr(admin, "_manager", None), "config", None)
    if isinstance(manager_config, dict):
        for key in ("socket_connection_setup_timeout_ms", "socket_connection_setup_timeout_max_ms"):
            if key in manager_config:
                manager_config[key] = min(manager_config[key], int(timeout * 1000))
    return admin
