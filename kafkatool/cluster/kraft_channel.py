"""Requests to brokers or controllers for the KRaft-era tools (quorum, transactions, records, features).

Kafka's KRaft-era tools take `--bootstrap-server` (a broker, through the admin client) or
`--bootstrap-controller` (a controller listener, Kafka 3.7+, KIP-919).  kafka-python's admin client
cannot bootstrap from a controller (it needs Metadata, which controllers do not serve), so two
channels answer the same `send(request, node)`:

- `AdminChannel`: kafka-python's `KafkaAdminClient` (security settings of `--command-config`,
  connections to any broker of the cluster by id);
- `DirectChannel`: one plain socket to the first answering bootstrap address, ApiVersions first
  (v3, v0 after UNSUPPORTED_VERSION, as Kafka's `NetworkClient` does), then each request at the
  highest version both sides know.  Used for `--bootstrap-controller` (PLAINTEXT listeners only).

Request and response structs are kafka-python's (generated from Kafka's message specs); every call is
bounded by the timeout.  `need` refuses, before anything is sent, a request the broker lacks.
"""

from __future__ import annotations

import socket
import struct
import time
from pathlib import Path
from typing import Any, Protocol

from kafkatool.cluster.connect import ClusterError, ClusterInputError, check_host_port, read_client_properties
from kafkatool.cluster.versions import describe_broker
from kafkatool.release import Release

API_VERSIONS_KEY = 18
UNSUPPORTED_VERSION = 35

#: api key -> (name, first Kafka release whose brokers accept it), for the refusals
KRAFT_APIS: dict[int, tuple[str, Release]] = {
    2: ("ListOffsets", Release(0, 10)),
    3: ("Metadata", Release(0, 8)),
    10: ("FindCoordinator", Release(0, 11)),
    21: ("DeleteRecords", Release(0, 11)),
    27: ("WriteTxnMarkers", Release(0, 11)),
    55: ("DescribeQuorum", Release(3, 3)),
    60: ("DescribeCluster", Release(2, 8)),
    61: ("DescribeProducers", Release(2, 8)),
    65: ("DescribeTransactions", Release(3, 0)),
    66: ("ListTransactions", Release(3, 0)),
}


class BrokerLacksApiError(ClusterInputError):
    """The broker (or controller) accepts no version of a request the command needs (exit 2)."""


class Channel(Protocol):
    kind: str  # "broker" or "controller"
    address: str

    def api_table(self) -> dict[int, tuple[int, int]]: ...

    def send(self, request: Any, node: int | None = None) -> Any: ...

    def close(self) -> None: ...


def need(channel: Channel, what: str, key: int, version: int = 0, since: Release | None = None) -> int:
    """The highest version of request `key` the peer accepts (at least `version`), else BrokerLacksApiError."""
    table = channel.api_table()
    name, first = KRAFT_APIS.get(key, (f"API {key}", Release(0, 0)))
    since = since or first  # the release that brought `version` (callers name it when it is not the first)
    lo, hi = table.get(key, (0, -1))
    if hi < max(lo, version):
        who = "controller" if channel.kind == "controller" else "broker"
        peer = (
            f"the {who}s at {channel.address} are"
            if "," in channel.address
            else f"the {who} at {channel.address} is"
        )
        needed = f"{name} v{version}+" if version else name
        raise BrokerLacksApiError(
            f"{what} needs {needed} (Kafka >= {since}); {peer} {describe_broker(table, since)}"
        )
    return hi


#: A controller's table has no Produce (broker_release's markers): the controller-served requests
#: that changed (validVersions at each release's specs): Fetch v18 came with 4.1, DescribeCluster v2 with
#: 4.0, Fetch v17 with 3.9, Fetch v16 with 3.7.  Tools reach controllers since 3.7 (KIP-919), so an
#: older controller is answered with 3.7's text.
CONTROLLER_TOOLS_SINCE = Release(3, 7)
_CONTROLLER_MARKERS = (
    (Release(4, 1), 1, 18),
    (Release(4, 0), 60, 2),
    (Release(3, 9), 1, 17),
    (Release(3, 7), 1, 16),
)


def peer_release(channel: Channel) -> Release | None:
    """The release of the broker or controller a channel talks to, from its ApiVersions table."""
    from kafkatool.cluster.versions import broker_release

    table = channel.api_table()
    if not table:
        return None
    if 0 in table:
        return broker_release(table)
    for release, key, highest in _CONTROLLER_MARKERS:
        if table.get(key, (0, -1))[1] >= highest:
            return release
    return CONTROLLER_TOOLS_SINCE


def _error_text(exc: BaseException) -> str:
    detail = getattr(exc, "description", "") or str(exc)
    return f"{type(exc).__name__}: {detail[:300]}" if detail else type(exc).__name__


class AdminChannel:
    """Requests through kafka-python's admin client (bootstrapped from brokers)."""

    kind = "broker"

    def __init__(self, bootstrap: str, command_config: str | Path | None, timeout: float) -> None:
        from kafkatool.cluster.connect import admin_client

        self.address = bootstrap
        self.timeout = timeout
        self.client = admin_client(bootstrap, command_config, timeout)

    def api_table(self) -> dict[int, tuple[int, int]]:
        data = getattr(getattr(self.client, "_manager", None), "broker_version_data", None)
        table = getattr(data, "api_versions", None)
        return {int(k): (int(v[0]), int(v[1])) for k, v in (table or {}).items()}

    def send(self, request: Any, node: int | None = None) -> Any:
        from kafka.errors import KafkaError, KafkaTimeoutError

        manager = self.client._manager
        what = type(request).__name__.removesuffix("Request")
        try:
            if node is None:
                return manager.run(manager.send, request)
            return manager.run(manager.send, request, node)
        except KafkaTimeoutError:
            raise ClusterError(f"{what}: no answer from {self.address} within {self.timeout:g}s") from None
        except (KafkaError, OSError) as exc:
            raise ClusterError(f"{what}: {_error_text(exc)}") from None

    def close(self) -> None:
        try:
            self.client.close()
        except Exception:  # closing must not mask the real error
            pass


def _uvarint(data: bytes, pos: int) -> tuple[int, int]:
    shift = n = 0
    while True:
        if pos >= len(data):
            raise ValueError("response ends early")
        b = data[pos]
        pos += 1
        n |= (b & 0x7F) << shift
        if b < 0x80:
            return n, pos
        shift += 7


class DirectChannel:
    """One socket to a broker or controller listener; requests at the negotiated version."""

    def __init__(self, bootstrap: str, timeout: float, kind: str = "controller") -> None:
        self.address = bootstrap
        self.timeout = timeout
        self.kind = kind
        self._correlation = 0
        self._sock: socket.socket | None = None
        self._table: dict[int, tuple[int, int]] = {}
        self.features: Any = (
            None  # the handshake's ApiVersions answer (v3+: supported and finalized features)
        )
        self.deadline = time.monotonic() + timeout
        servers = [s.strip() for s in bootstrap.split(",") if s.strip()]
        option = "--bootstrap-controller" if kind == "controller" else "--bootstrap-server"
        if not servers:
            raise ClusterInputError(f"{option}: empty")
        for s in servers:
            check_host_port(s, option)
        errors = []
        for s in servers:
            host, _, port = s.rpartition(":")
            host = host.strip("[]") if host else s
            if time.monotonic() >= self.deadline:
                errors.append(f"{s}: not tried (--timeout spent)")
                continue
            try:
                self._open(host, int(port or 9093))
                return
            except Exception as exc:  # refused, timed out, or an answer that is not ApiVersions: the next one
                errors.append(f"{s}: {exc}")
                self.close()
        raise ClusterError(
            f"cannot reach any {kind} at {bootstrap} within {timeout:g}s ({'; '.join(errors)})"
        )

    def _open(self, host: str, port: int) -> None:
        from kafka.protocol.metadata import ApiVersionsRequest

        left = max(0.05, self.deadline - time.monotonic())  # the servers share --timeout for connecting
        self._sock = socket.create_connection((host, port), timeout=left)
        self._sock.settimeout(self.timeout)
        for version in (3, 0):
            req = (
                ApiVersionsRequest(client_software_name="kafkatool", client_software_version="1")
                if version >= 3
                else ApiVersionsRequest()
            )
            resp = self._roundtrip(req, version)
            if resp.error_code == UNSUPPORTED_VERSION:
                continue
            if resp.error_code:
                raise ClusterError(f"ApiVersions: error code {resp.error_code}")
            self._table = {int(a.api_key): (int(a.min_version), int(a.max_version)) for a in resp.api_keys}
            self.features = resp
            return
        raise ClusterError("ApiVersions: no version both sides accept")

    def _roundtrip(self, request: Any, version: int) -> Any:
        import importlib

        if self._sock is None:
            raise ClusterError("not connected")
        self._correlation += 1
        request.with_header(correlation_id=self._correlation, client_id="kafkatool")
        frame = request.encode(version=version, header=True, framed=True)
        response_cls = getattr(
            importlib.import_module(type(request).__module__),
            type(request).__name__.removesuffix("Request") + "Response",
        )
        try:
            self._sock.sendall(frame)
            size = struct.unpack(">i", self._recv(4))[0]
            payload = self._recv(size)
        except TimeoutError:
            raise ClusterError(f"no answer from {self.address} within {self.timeout:g}s") from None
        correlation = struct.unpack(">i", payload[:4])[0]
        if correlation != self._correlation:
            raise ClusterError(f"{self.address} answered request {correlation}, not {self._correlation}")
        pos = 4
        if request.API_KEY != API_VERSIONS_KEY and response_cls.flexible_version_q(version):
            count, pos = _uvarint(payload, pos)
            for _ in range(count):
                _, pos = _uvarint(payload, pos)
                size, pos = _uvarint(payload, pos)
                pos += size
        return response_cls.decode(payload[pos:], version=version)

    def _recv(self, n: int) -> bytes:
        assert self._sock is not None
        buf = bytearray()
        while len(buf) < n:
            chunk = self._sock.recv(n - len(buf))
            if not chunk:
                raise ClusterError(f"{self.address} closed the connection")
            buf += chunk
        return bytes(buf)

    def api_table(self) -> dict[int, tuple[int, int]]:
        return dict(self._table)

    def send(self, request: Any, node: int | None = None) -> Any:
        key = request.API_KEY
        lo, hi = self._table.get(key, (0, -1))
        version = min(hi, request.max_version)
        if version < lo:
            raise ClusterError(f"{type(request).__name__}: no version both sides accept")
        try:
            return self._roundtrip(request, version)
        except ClusterError:
            raise
        except (OSError, ValueError) as exc:
            raise ClusterError(f"{type(request).__name__.removesuffix('Request')}: {exc}") from None
        except (
            Exception
        ) as exc:  # kafka-python's decoder on bytes that are not the response: say so, never a traceback
            raise ClusterError(
                f"{type(request).__name__.removesuffix('Request')}: the answer from {self.address} "
                f"cannot be read ({type(exc).__name__}: {exc})"
            ) from None

    def close(self) -> None:
        if self._sock is not None:
            try:
                self._sock.close()
            except OSError:
                pass
            self._sock = None


def open_channel(
    bootstrap_server: str | None,
    bootstrap_controller: str | None,
    command_config: str | Path | None,
    timeout: float,
) -> Channel:
    """A channel for exactly one of --bootstrap-server or --bootstrap-controller."""
    if bool(bootstrap_server) == bool(bootstrap_controller):
        raise ClusterInputError("give exactly one of --bootstrap-server or --bootstrap-controller")
    if timeout <= 0:
        raise ClusterInputError("--timeout must be positive")
    if bootstrap_server:
        return AdminChannel(bootstrap_server, command_config, timeout)
    props = read_client_properties(command_config)
    protocol = props.get("security.protocol", "PLAINTEXT").upper()
    if protocol != "PLAINTEXT":
        raise ClusterInputError(
            f"--bootstrap-controller: security.protocol={protocol} is not supported "
            "(PLAINTEXT controller listeners only); use --bootstrap-server"
        )
    return DirectChannel(bootstrap_controller or "", timeout)
