"""One HTTP POST with a hard timeout, no redirects, and nothing of the answer kept.

Only the status code matters (2xx is delivered); the response body is read and dropped, so
nothing a receiver echoes ends up in a log or a dead letter.
"""

from __future__ import annotations

import http.client
import ssl
from collections.abc import Callable
from urllib.parse import urlsplit

Post = Callable[[str, bytes, dict[str, str], float], int]  # (url, body, headers, timeout)


class DeliveryFailed(Exception):
    """The receiver could not be reached or did not answer in time; the message names the
    error's kind only."""


def post(url: str, body: bytes, headers: dict[str, str], timeout: float) -> int:
    """POST ``body`` to ``url``; the status code, or :class:`DeliveryFailed`."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    connection: http.client.HTTPConnection
    if parts.scheme == "https":
        connection = http.client.HTTPSConnection(
            host, parts.port, timeout=timeout, context=ssl.create_default_context()
        )
    else:
        connection = http.client.HTTPConnection(host, parts.port, timeout=timeout)
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    try:
        connection.request("POST", target, body=body, headers=headers)
        response = connection.getresponse()
        response.read(64 * 1024)  # drain a little so the connection closes cleanly
        return response.status
    except (OSError, http.client.HTTPException) as exc:
        raise DeliveryFailed(type(exc).__name__) from None
    finally:
        connection.close()
