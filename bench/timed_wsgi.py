"""``hisadmin.wsgi.application`` with its own time per call in an ``X-App-Ms`` header, and
``/__bare?bytes=N``: N static bytes from a WSGI app that does nothing (the server's and the
loopback's share). For ``bench.read_parts`` only: never part of a deployment."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from typing import Any

from hisadmin.wsgi import application as site


def application(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
    if environ.get("PATH_INFO") == "/__bare":
        size = int(environ.get("QUERY_STRING", "bytes=0").partition("=")[2] or 0)
        start_response("200 OK", [("Content-Type", "application/json"),
                                  ("Content-Length", str(size))])
        return [b" " * size]
    began = time.perf_counter()
    answered: list[Any] = []
    parts = site(environ, lambda status, headers, exc_info=None: answered.extend(
        [status, headers]))
    body = b"".join(parts)
    if hasattr(parts, "close"):
        parts.close()
    took = (time.perf_counter() - began) * 1000
    start_response(answered[0], [*answered[1], ("X-App-Ms", f"{took:.4f}")])
    return [body]
