"""The MLLP listener: a threaded TCP server, one thread per engine connection, each frame
answered in turn on the connection it came on (an engine sends the next message after the
ACK, so answers keep its order)."""

from __future__ import annotations

import logging
import socket
import socketserver
import threading
from collections.abc import Callable

from hl7v2.inbound.ack import ERROR
from hl7v2.inbound.oru import APPLICATION_ERROR, Refusal
from hl7v2.inbound.receive import Receiver, answer_for, handle
from hl7v2.messages import frame, unframe

log = logging.getLogger("hl7v2.inbound")
IDLE_SECONDS = 600.0  # a connection silent this long is closed (the engine reconnects)
MAX_FRAME = 1 << 20  # bytes: an ORU is a few kB; more without an end block is not MLLP


class _Connection(socketserver.BaseRequestHandler):
    server: MllpListener

    def handle(self) -> None:
        conn: socket.socket = self.request
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
                answer = self.server.answer(text)
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
                 idle_seconds: float = IDLE_SECONDS) -> None:
        self.answer = answer
        self.idle_seconds = idle_seconds
        super().__init__(address, _Connection)

    @property
    def port(self) -> int:
        return int(self.server_address[1])


def results_listener(receiver: Receiver, host: str, port: int) -> MllpListener:
    """A listener that records ORU^R01 results with ``receiver``; a failure nobody foresaw
    is answered AE (the engine resends), logged by its type only (no patient data)."""
    def answer(text: str) -> str | None:
        try:
            return handle(receiver, text)
        except Exception as exc:  # noqa: BLE001 - the connection must get an answer
            log.error("ORU not recorded: %s", type(exc).__name__)
            return answer_for(receiver, ERROR, text, Refusal(
                "MSH^1^10", APPLICATION_ERROR, "The message could not be recorded; send it "
                "again later."))

    return MllpListener((host, port), answer)


def serve_in_thread(listener: MllpListener) -> threading.Thread:
    """Start ``listener`` on a daemon thread (tests, and embedding); stop it with
    ``listener.shutdown(); listener.server_close()``."""
    thread = threading.Thread(target=listener.serve_forever, name="mllp-listener",
                              daemon=True)
    thread.start()
    return thread
