"""The MLLP listener: a threaded TCP server, one thread per engine connection, each frame
answered in turn on the connection it came on (an engine sends the next message after the
ACK, so answers keep its order).

It cannot be flooded: only peers in ``HL7_LISTENER_PEERS`` (networks; loopback when unset)
are served, others closed at connect; a frame over 1 MB closes the connection; a message
over the segment or repetition limits is AR'd before any parser sees it
(:func:`hl7v2.inbound.oru.check_size`), one that takes longer than
``HL7_LISTENER_PARSE_SECONDS`` to read at that limit; and at most ``HL7_LISTENER_PARSES`` messages are read
and recorded at once, each peer address one at a time, so one peer's messages never keep
another's waiting: a message that finds no room within a second is answered AR (ERR 206: resend later).
"""

from __future__ import annotations

import ipaddress
import logging
import os
import socket
import socketserver
import threading
from collections.abc import Callable

from hl7v2.inbound.ack import REJECT
from hl7v2.inbound.oru import APPLICATION_ERROR, SystemProblem
from hl7v2.inbound.receive import RECORD_LOCKED, Receiver, answer_for, handle
from hl7v2.messages import frame, unframe

log = logging.getLogger("hl7v2.inbound")
IDLE_SECONDS = 600.0  # a connection silent this long is closed (the engine reconnects)
MAX_FRAME = 1 << 20  # bytes: an ORU is a few kB; more without an end block is not MLLP
DEFAULT_PEERS = "127.0.0.0/8,::1/128"
PARSES = 4  # messages read and recorded at once (HL7_LISTENER_PARSES)
WAIT_FOR_ROOM = 1.0  # seconds a message waits for a parse slot before it is answered AE


def allowed_peers() -> list[ipaddress.IPv4Network | ipaddress.IPv6Network]:
    """``HL7_LISTENER_PEERS``: the networks engines connect from (comma separated); loopback
    when unset. ValueError naming the entry when one is not a network."""
    raw = os.environ.get("HL7_LISTENER_PEERS", "").strip() or DEFAULT_PEERS
    return [ipaddress.ip_network(part.strip(), strict=False)
            for part in raw.split(",") if part.strip()]


def peer_allowed(address: str, peers: list[ipaddress.IPv4Network | ipaddress.IPv6Network]
                 ) -> bool:
    try:
        ip = ipaddress.ip_address(address.split("%")[0])
    except ValueError:
        return False
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return any(ip.version == net.version and ip in net for net in peers)


class Room:
    """At most ``size`` messages at once, one per peer address."""

    def __init__(self, size: int) -> None:
        self.slots = threading.BoundedSemaphore(size)
        self.lock = threading.Lock()
        self.peers: dict[str, threading.Lock] = {}

    def enter(self, peer: str, timeout: float) -> Callable[[], None] | None:
        """A function that leaves, or None when there was no room within ``timeout``."""
        with self.lock:
            mine = self.peers.setdefault(peer, threading.Lock())
        if not mine.acquire(timeout=timeout):
            return None
        if not self.slots.acquire(timeout=timeout):
            mine.release()
            return None

        def leave() -> None:
            self.slots.release()
            mine.release()
        return leave


class _Connection(socketserver.BaseRequestHandler):
    server: MllpListener

    def handle(self) -> None:
        conn: socket.socket = self.request
        peer = str(self.client_address[0])
        if not peer_allowed(peer, self.server.peers):
            log.warning("MLLP connection from a peer not in HL7_LISTENER_PEERS: closed")
            return
        conn.settimeout(self.server.idle_seconds)
        buffer = b""
        while True:
            try:
                chunk = conn.recv(65536)
            except OSError:  # idle timeout or reset: the engine reconnects
                return
            if not chunk:
                return
            buffer += chunk
            while True:
                text, buffer = unframe(buffer)
                if text is None:
                    break
                leave = self.server.room.enter(peer, WAIT_FOR_ROOM)
                if leave is None:
                    answer = self.server.busy(text)
                else:
                    try:
                        answer = self.server.answer(text)
                    finally:
                        leave()
                if answer is not None:  # enhanced mode may ask for no answer
                    conn.sendall(frame(answer))
            if len(buffer) > MAX_FRAME:
                log.warning("MLLP frame over %d bytes without an end block: closed", MAX_FRAME)
                return


class MllpListener(socketserver.ThreadingTCPServer):
    """Listens on ``address``; ``answer(text) -> ack text`` is called once per frame."""

    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, address: tuple[str, int], answer: Callable[[str], str | None], *,
                 idle_seconds: float = IDLE_SECONDS,
                 busy: Callable[[str], str | None] | None = None) -> None:
        self.answer = answer
        self.busy = busy or (lambda text: None)
        self.idle_seconds = idle_seconds
        self.peers = allowed_peers()
        self.room = Room(int(os.environ.get("HL7_LISTENER_PARSES", str(PARSES))))
        super().__init__(address, _Connection)

    @property
    def port(self) -> int:
        return int(self.server_address[1])


def results_listener(receiver: Receiver, host: str, port: int) -> MllpListener:
    """A listener that records ORU^R01 results with ``receiver``; a failure nobody foresaw
    is a system problem, answered AR with ERR 207 (the engine resends later), logged by its
    type only (no patient data)."""
    def answer(text: str) -> str | None:
        try:
            return handle(receiver, text)
        except Exception as exc:  # noqa: BLE001 - the connection must get an answer
            log.error("ORU not recorded: %s", type(exc).__name__)
            return answer_for(receiver, REJECT, text, SystemProblem(
                "MSH^1^10", APPLICATION_ERROR, "A system problem: the message was not "
                "recorded; send it again later."))

    def busy(text: str) -> str | None:
        return answer_for(receiver, REJECT, text, SystemProblem(
            "MSH^1^10", RECORD_LOCKED, "The listener is busy; send the message again later."))

    return MllpListener((host, port), answer, busy=busy)


def serve_in_thread(listener: MllpListener) -> threading.Thread:
    """Start ``listener`` on a daemon thread (tests, and embedding); stop it with
    ``listener.shutdown(); listener.server_close()``."""
    thread = threading.Thread(target=listener.serve_forever, name="mllp-listener",
                              daemon=True)
    thread.start()
    return thread
