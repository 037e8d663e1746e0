"""A small MLLP client: persistent TCP connections per destination, one message at a time on
each, answered by its ACK before the next is sent on it.

A process keeps a few idle connections per destination (a lane each): a delivery takes an
idle one or opens another, so one patient's message waiting for its ACK never holds another
patient's (each patient's messages are in order anyway: one at a time per patient). A
pooled connection the engine closed meanwhile (a restart, an idle timeout) is found out when
the send fails before any answer came: the message goes once more on a new connection, in
the same attempt.

The host is resolved and every address it has checked against the webhooks' address rules
(:mod:`webhooks.domain.addresses`) with ``WEBHOOK_ALLOWED_NETWORKS`` and
``HL7_ALLOWED_NETWORKS``; the connection goes to a checked address. A connection that
failed, timed out or answered for another message is closed: a late ACK must never be taken
for the next message's.
"""

from __future__ import annotations

import os
import socket
import threading
import time
from dataclasses import dataclass

from hl7v2.messages import frame, unframe
from webhooks.delivery import sender
from webhooks.domain import addresses

NOT_ALLOWED = sender.NOT_ALLOWED


class MllpFailed(Exception):
    """No ACK: the engine could not be reached or did not answer in time (the message names
    the error's kind only)."""


class MllpStale(MllpFailed):
    """A connection kept open was found closed before any answer came back."""


@dataclass(frozen=True)
class Ack:
    code: str  # MSA-1: AA, AE, AR (or CA, CE, CR in enhanced mode)
    control_id: str  # MSA-2: the message it acknowledges


def allowed_networks() -> tuple[addresses.Network, ...]:
    """Read per call, as the webhooks' workers do; an HL7 engine usually sits on the
    intranet, so its network is named apart from the webhooks' (either list allows)."""
    raw = ",".join((os.environ.get("WEBHOOK_ALLOWED_NETWORKS", ""),
                    os.environ.get("HL7_ALLOWED_NETWORKS", "")))
    return addresses.parse_networks(raw)


def vetted(host: str, port: int) -> list[str]:
    """The engine's addresses to try, checked as the webhooks' are (one rule for both);
    :class:`MllpFailed` naming the reason when one is not allowed or the name does not
    resolve."""
    try:
        return sender.vetted_addresses(host, port, allowed_networks())
    except sender.DeliveryFailed as exc:
        raise MllpFailed(str(exc)) from None


def parse_ack(text: str) -> Ack:
    """MSA-1 and MSA-2 of an ACK; :class:`MllpFailed` when it has no MSA segment."""
    for segment in text.replace("\n", "\r").split("\r"):
        if segment.startswith("MSA"):
            fields = segment.split(segment[3:4] or "|")
            return Ack(fields[1] if len(fields) > 1 else "",
                       fields[2] if len(fields) > 2 else "")
    raise MllpFailed("answer without MSA")


class Connection:
    """One open MLLP connection to ``host:port``; not shared between threads at once."""

    def __init__(self, host: str, port: int) -> None:
        self.host, self.port = host, port
        self.sock: socket.socket | None = None
        self.lock = threading.Lock()

    def close(self) -> None:
        if self.sock is not None:
            try:
                self.sock.close()
            finally:
                self.sock = None

    def _open(self, timeout: float) -> socket.socket:
        error: OSError = OSError("no address")
        for address in vetted(self.host, self.port):
            try:
                return socket.create_connection((address, self.port), timeout)
            except OSError as exc:
                error = exc
        raise MllpFailed(type(error).__name__)

    def exchange(self, message: str, control_id: str, timeout: float) -> Ack:
        """Send ``message`` and wait up to ``timeout`` seconds for its ACK."""
        with self.lock:
            try:
                if self.sock is None:
                    self.sock = self._open(timeout)
                self.sock.settimeout(timeout)
                self.sock.sendall(frame(message))
                buffer = b""
                while True:
                    chunk = self.sock.recv(65536)
                    if not chunk:
                        raise MllpStale("connection closed without an ACK")
                    buffer += chunk
                    text, buffer = unframe(buffer)
                    if text is not None:
                        break
                ack = parse_ack(text)
            except TimeoutError:
                self.close()
                raise MllpFailed(f"no ACK within {timeout:g} s") from None
            except (BrokenPipeError, ConnectionResetError) as exc:
                self.close()
                raise MllpStale(type(exc).__name__) from None
            except OSError as exc:
                self.close()
                raise MllpFailed(type(exc).__name__) from None
            except MllpFailed:
                self.close()
                raise
            if ack.control_id != control_id:
                self.close()
                raise MllpFailed("ACK for another message")
            return ack


IDLE_PER_DESTINATION = 4  # idle connections kept per destination and process
PROBE_SECONDS = 2.0  # how long a reachability probe waits to connect
_probed: dict[tuple[str, int], tuple[float, bool]] = {}


def reachable(host: str, port: int, *, within: float = PROBE_SECONDS) -> bool:
    """Whether the engine accepts a connection now (connected and closed at once; the answer
    kept 5 s, so a sweep probes each destination once)."""
    now = time.monotonic()
    kept = _probed.get((host, port))
    if kept is not None and now - kept[0] < 5.0:
        return kept[1]
    answer = False
    try:
        for address in vetted(host, port):
            try:
                socket.create_connection((address, port), within).close()
                answer = True
                break
            except OSError:
                continue
    except MllpFailed:
        answer = False
    _probed[(host, port)] = (now, answer)
    return answer


class Pool:
    """The idle connections to one destination's ``host:port``."""

    def __init__(self, host: str, port: int) -> None:
        self.host, self.port = host, port
        self.idle: list[Connection] = []

    def exchange(self, message: str, control_id: str, timeout: float) -> Ack:
        """Send on an idle connection (or a new one) and wait for the ACK; a pooled
        connection found closed before any answer is replaced once."""
        with _pool_lock:
            conn = self.idle.pop() if self.idle else None
        fresh = conn is None
        conn = conn or Connection(self.host, self.port)
        try:
            ack = conn.exchange(message, control_id, timeout)
        except MllpStale:
            if fresh:
                raise MllpFailed("connection closed without an ACK") from None
            conn = Connection(self.host, self.port)
            ack = conn.exchange(message, control_id, timeout)
        with _pool_lock:
            if conn.sock is not None and len(self.idle) < IDLE_PER_DESTINATION:
                self.idle.append(conn)
            else:
                conn.close()
        return ack

    def close(self) -> None:
        with _pool_lock:
            idle, self.idle = self.idle, []
        for conn in idle:
            conn.close()


_pool: dict[str, Pool] = {}
_pool_lock = threading.Lock()


def connection(destination_id: str, host: str, port: int) -> Pool:
    """The process's connections to a destination (new ones when its address changed)."""
    with _pool_lock:
        pool = _pool.get(destination_id)
        replaced = None
        if pool is None or (pool.host, pool.port) != (host, port):
            replaced = pool
            pool = _pool[destination_id] = Pool(host, port)
    if replaced is not None:
        replaced.close()
    return pool


def close_all() -> None:
    with _pool_lock:
        pools = list(_pool.values())
        _pool.clear()
    for pool in pools:
        pool.close()
