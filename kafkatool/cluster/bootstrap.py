"""Which `--bootstrap-server` address answers: every address tried at once, each failure named.

kafka-python bootstraps from one address picked at random and keeps retrying until its timeout,
so a refused connection cost the whole `--timeout`, and one frozen broker among three could make
a command fail naming the whole list while two brokers were up.  Kafka's own clients walk the
list too (`ClientUtils.parseAndValidateAddresses`, then `NetworkClient.leastLoadedNode`), moving
on from an address that fails.  Here every address is connected to at once (non-blocking); the
first that answers an ApiVersions v0 request (plaintext; with TLS, the first that accepts the
connection) is the one the client bootstraps from.  An address that refuses is tried once more
after Kafka's default `reconnect.backoff.ms` (50 ms); when every address has refused twice, or
the time is up, the caller gets each address's own reason.
"""

from __future__ import annotations

import errno
import os
import selectors
import socket
import struct
import time
from dataclasses import dataclass, field
from typing import Any

RETRY_AFTER = 0.05  # Kafka's default reconnect.backoff.ms
REFUSALS = 2  # an address that refused this many times is given up

# ApiVersions (key 18) v0 with request header v1: no body, so every broker release answers it.
_CORRELATION = 0x6B74


def _api_versions_v0(client_id: str) -> bytes:
    cid = client_id.encode("utf-8")[:200]
    body = struct.pack(">hhih", 18, 0, _CORRELATION, len(cid)) + cid
    return struct.pack(">i", len(body)) + body


@dataclass
class _Attempt:
    address: str
    host: str
    port: int
    sock: socket.socket | None = None
    refusals: int = 0
    retry_at: float = 0.0
    connected: bool = False
    out: bytes = b""
    got: bytes = b""
    reason: str = "no answer"
    done: bool = False  # given up
    infos: list[Any] = field(default_factory=list)  # the resolved addresses, tried in turn (IPv6, IPv4, …)
    next_info: int = 0


@dataclass
class Probe:
    """The first address that answered (None when none did) and why each other one failed."""

    answered: str | None
    failures: dict[str, str] = field(default_factory=dict)
    timed_out: bool = False  # some address was still being tried when the time was up

    def describe(self) -> str:
        """`a:1 refused the connection (twice); b:2 did not answer` in --bootstrap-server order."""
        return "; ".join(f"{addr} {why}" for addr, why in self.failures.items())


def _split(address: str, default_port: int) -> tuple[str, int]:
    """`host:port`, `[v6]:port` or a bare host (the default port), as connect.check_host_port accepts."""
    if address.startswith("["):
        host, _, rest = address[1:].partition("]")
        return host, int(rest[1:]) if rest.startswith(":") and rest[1:] else default_port
    host, colon, port = address.partition(":")
    return host, int(port) if colon and port else default_port


def probe(servers: list[str], timeout: float, client_id: str = "kafkatool", tls: bool = False,
          default_port: int = 9092) -> Probe:
    """Try every address at once for at most `timeout` seconds (see the module's docstring).  With
    `tls` (or for ZooKeeper, which speaks no Kafka protocol) an accepted connection is the answer."""
    deadline = time.monotonic() + timeout
    attempts = [_Attempt(s, *_split(s, default_port)) for s in servers]
    request = _api_versions_v0(client_id)
    sel = selectors.DefaultSelector()
    try:
        for a in attempts:
            _start(a, sel, request)
        while True:
            for a in attempts:
                if a.done and a.reason == "answered":
                    return _result(attempts, a.address)
            pending = [a for a in attempts if not a.done]
            if not pending:
                return _result(attempts, None)
            now = time.monotonic()
            if now >= deadline:
                return _result(attempts, None)
            for a in pending:
                if a.sock is None and a.retry_at <= now:
                    _start(a, sel, request)
            waits = [a.retry_at - now for a in pending if a.sock is None]
            wait = min([deadline - now, *waits])
            if not sel.get_map():
                time.sleep(max(0.0, wait))
                continue
            for key, events in sel.select(max(0.0, wait)):
                _step(key.data, sel, events, tls)
    finally:
        for a in attempts:
            _close(a, sel)
        sel.close()


def _result(attempts: list[_Attempt], answered: str | None) -> Probe:
    failures = {a.address: a.reason for a in attempts if a.address != answered}
    return Probe(answered, failures, answered is None and any(not a.done for a in attempts))


def _start(a: _Attempt, sel: selectors.BaseSelector, request: bytes) -> None:
    if not a.infos:
        try:
            a.infos = socket.getaddrinfo(a.host, a.port, type=socket.SOCK_STREAM)
        except (OSError, UnicodeError) as exc:
            a.done, a.reason = True, f"cannot be resolved ({getattr(exc, 'strerror', None) or exc})"
            return
    family, kind, proto, _, sockaddr = a.infos[a.next_info]
    sock = socket.socket(family, kind, proto)
    sock.setblocking(False)
    rc = sock.connect_ex(sockaddr)
    if rc not in (0, errno.EINPROGRESS, errno.EWOULDBLOCK):
        sock.close()
        _failed_connect(a, rc)
        return
    a.sock, a.connected, a.out, a.got = sock, False, request, b""
    sel.register(sock, selectors.EVENT_WRITE, a)


def _failed_connect(a: _Attempt, rc: int) -> None:
    if a.next_info + 1 < len(a.infos):  # another address of the name (IPv4 after IPv6): try it now
        a.next_info += 1
        a.retry_at = 0.0
        return
    a.next_info = 0
    if rc == errno.ECONNREFUSED:
        a.refusals += 1
        a.reason = "refused the connection" + (" (twice)" if a.refusals >= REFUSALS else "")
        if a.refusals >= REFUSALS:
            a.done = True
        else:
            a.retry_at = time.monotonic() + RETRY_AFTER
    else:
        a.done, a.reason = True, f"cannot be connected to ({os.strerror(rc)})"


def _close(a: _Attempt, sel: selectors.BaseSelector) -> None:
    if a.sock is not None:
        try:
            sel.unregister(a.sock)
        except (KeyError, ValueError):
            pass
        a.sock.close()
        a.sock = None


def _step(a: _Attempt, sel: selectors.BaseSelector, events: int, tls: bool) -> None:
    assert a.sock is not None
    if not a.connected:
        rc = a.sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
        if rc:
            _close(a, sel)
            _failed_connect(a, rc)
            return
        a.connected = True
        a.reason = "accepted the connection but did not answer"
        if tls:  # the TLS handshake is the client's: an accepted connection is enough here
            a.done, a.reason = True, "answered"
            return
    try:
        if a.out and events & selectors.EVENT_WRITE:
            a.out = a.out[a.sock.send(a.out) :]
            if not a.out:
                sel.modify(a.sock, selectors.EVENT_READ, a)
            return
        if events & selectors.EVENT_READ:
            chunk = a.sock.recv(65536)
            if not chunk:
                _close(a, sel)
                a.done, a.reason = True, "closed the connection without answering"
                return
            a.got += chunk
            if len(a.got) >= 4 and len(a.got) >= 4 + struct.unpack(">i", a.got[:4])[0]:
                a.done, a.reason = True, "answered"
    except OSError as exc:
        _close(a, sel)
        a.done, a.reason = True, f"dropped the connection ({exc.strerror or exc})"
