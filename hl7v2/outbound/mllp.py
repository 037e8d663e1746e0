"""A small MLLP client: one persistent TCP connection per destination, one message at a time,
each answered by its ACK before the next is sent.

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
from dataclasses import dataclass

from hl7v2.messages import frame, unframe
from webhooks.delivery import sender
from webhooks.domain import addresses

NOT_ALLOWED = sender.NOT_ALLOWED


class MllpFailed(Exception):
    """No ACK: the engine could not be reached or did not answer in time (the message names
    the error's kind only)."""


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
                        raise MllpFailed("connection closed without an ACK")
                    buffer += chunk
                    text, buffer = unframe(buffer)
                    if text is not None:
                        break
                ack = parse_ack(text)
            except TimeoutError:
                self.close()
                raise MllpFailed(f"no ACK within {timeout:g} s") from None
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


_pool: dict[str, Connection] = {}
_pool_lock = threading.Lock()


def connection(destination_id: str, host: str, port: int) -> Connection:
    """The process's connection to a destination (a new one when its address changed)."""
    with _pool_lock:
        conn = _pool.get(destination_id)
        if conn is None or (conn.host, conn.port) != (host, port):
            if conn is not None:
                conn.close()
            conn = _pool[destination_id] = Connection(host, port)
        return conn


def close_all() -> None:
    with _pool_lock:
        for conn in _pool.values():
            conn.close()
        _pool.clear()
