"""A receiving interface engine for the tests: an asyncio MLLP server on 127.0.0.1 that
validates every message against the v2.5.1 structures with hl7apy and answers AA, AE, AR or
nothing, as the test asks."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable

from hl7apy.consts import VALIDATION_LEVEL
from hl7apy.parser import parse_message

from hl7v2.messages import frame, unframe


class Engine:
    """``answers``: what to answer next, one per message (AA when empty); "none" answers
    nothing. ``got``: every message received, parsed and validated (STRICT)."""

    def __init__(self, port: int = 0, *, hang_up: bool = False) -> None:
        self.hang_up = hang_up  # close each connection after its first answer (a restart)
        self.answers: list[str] = []
        self.got: list = []
        self.raw: list[str] = []
        self.port = port
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> Engine:
        self._thread.start()
        assert self._ready.wait(5)
        return self

    def __exit__(self, *exc: object) -> None:
        time.sleep(0.05)  # let the server see the product's connections close
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(5)

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        server = self._loop.run_until_complete(
            asyncio.start_server(self._client, "127.0.0.1", self.port))
        self.port = server.sockets[0].getsockname()[1]
        self._ready.set()
        self._loop.run_forever()
        server.close()

    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        buffer = b""
        while True:
            chunk = await reader.read(65536)
            if not chunk:
                break
            buffer += chunk
            while True:
                text, buffer = unframe(buffer)
                if text is None:
                    break
                message = parse_message(text, validation_level=VALIDATION_LEVEL.STRICT)
                assert message.validate()
                self.raw.append(text)
                self.got.append(message)
                answer = self.answers.pop(0) if self.answers else "AA"
                if answer == "none":
                    continue
                control_id = message.msh.msh_10.to_er7()
                ack = "\r".join((
                    "MSH|^~\\&|ENGINE|LAB|HIS|HOSPITAL|20260101000000+0000||ACK^A01^ACK|"
                    f"ACK{len(self.got)}|P|2.5.1", f"MSA|{answer}|{control_id}"))
                writer.write(frame(ack))
                await writer.drain()
                if self.hang_up:
                    writer.close()
                    return
        writer.close()

    def triggers(self) -> list[str]:
        return [m.msh.msh_9.msh_9_2.to_er7() for m in self.got]


def wait_for(check: Callable[[], bool], seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)
