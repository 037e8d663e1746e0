"""The bench's HTTP client: one kept-alive ``http.client`` connection per simulated user,
bodies by orjson, so the client's own cost is not charged to the system measured."""

from __future__ import annotations

import http.client
import select
from typing import Any
from urllib.parse import quote, urlsplit

import orjson

CLIENT = "http.client"  # recorded in every run: runs before it used requests (no "client")
# What a request path may hold as it is (``requests`` quotes the rest the same way): a
# search for "Mü" goes out as ``q=M%C3%BC``.
_URL_SAFE = "/?&=%:+,;@!$'()*~"


class HttpClient:
    """One kept-alive connection (``http.client``), bodies by orjson: the client's own cost
    is not the system's. ``requests`` spent about 0.55 ms of its own per call on this
    machine (a 20 KB page: 1.75 ms against 1.20 ms), the same on every system, which
    narrowed every ratio the bench reports and took CPU from the servers under load."""

    def __init__(self, base: str) -> None:
        url = urlsplit(base)
        self.host, self.port = url.hostname or "127.0.0.1", url.port or 80
        self.conn: http.client.HTTPConnection | None = None

    def _connection(self) -> http.client.HTTPConnection:
        conn = self.conn
        if conn is not None and conn.sock is not None and \
                select.select([conn.sock], [], [], 0)[0]:
            conn.close()  # the server closed it while idle (as urllib3 checks before reuse)
            conn = None
        if conn is None:
            conn = self.conn = http.client.HTTPConnection(self.host, self.port, timeout=60)
        return conn

    def call(self, method: str, path: str, body: dict[str, Any] | None = None,
             token: str | None = None, headers: dict[str, str] | None = None
             ) -> tuple[int, Any]:
        sent = {"Authorization": f"Bearer {token}", **(headers or {})}
        data = None
        if body is not None:
            data = orjson.dumps(body)
            sent["Content-Type"] = "application/json"
        reused = self.conn is not None
        conn = self._connection()
        try:
            conn.request(method, quote(path, safe=_URL_SAFE), body=data, headers=sent)
            r = conn.getresponse()
            raw = r.read()
        except (http.client.HTTPException, OSError):
            conn.close()
            self.conn = None
            # The server closed a kept-alive connection (idle past its keep-alive time) as
            # this read went out on it: sent again on a new one, as browsers and urllib3
            # do. Writes are not, so none is ever applied twice.
            if reused and method == "GET":
                return self.call(method, path, body, token, headers)
            raise
        if r.will_close:
            conn.close()
            self.conn = None
        try:
            return r.status, orjson.loads(raw)
        except orjson.JSONDecodeError:
            return r.status, raw.decode("utf-8", "replace")


