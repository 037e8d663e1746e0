"""One HTTP POST with a hard timeout, no redirects, and nothing of the answer kept.

Only the status code matters (2xx is delivered); the response body is read and dropped, so
nothing a receiver echoes ends up in a log or a dead letter.

The host is resolved once, every address it has is checked against
:mod:`webhooks.domain.addresses`, and the connection goes to an address that was checked
(a name that resolves differently a moment later cannot lead elsewhere). TLS still checks
the certificate against the host's name.
"""

from __future__ import annotations

import functools
import http.client
import os
import socket
import ssl
from collections.abc import Callable
from urllib.parse import urlsplit

from webhooks.domain import addresses

Post = Callable[[str, bytes, dict[str, str], float], int]  # (url, body, headers, timeout)
NOT_ALLOWED = "AddressNotAllowed"


class DeliveryFailed(Exception):
    """The receiver could not be reached or did not answer in time; the message names the
    error's kind only."""


@functools.lru_cache(maxsize=8)
def _networks(raw: str) -> tuple[addresses.Network, ...]:
    return addresses.parse_networks(raw)


def allowed_networks() -> tuple[addresses.Network, ...]:
    """Read per call, like the other ``WEBHOOK_*`` settings of a worker."""
    return _networks(os.environ.get("WEBHOOK_ALLOWED_NETWORKS", ""))


def vetted_addresses(host: str, port: int,
                     extra: tuple[addresses.Network, ...] | None = None) -> list[str]:
    """The addresses to try, in order: ``host`` resolved, every address it has allowed
    (``extra``: the networks allowed beside the public ones; default the webhooks').

    :class:`DeliveryFailed` (``AddressNotAllowed``) when any is not: a name that also points
    inside the network is refused whole, not half."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError as exc:
        raise DeliveryFailed(type(exc).__name__) from None
    found = [str(info[4][0]) for info in infos]
    extra = allowed_networks() if extra is None else extra
    if not found or not all(addresses.allowed(a, extra) for a in found):
        raise DeliveryFailed(NOT_ALLOWED)
    return list(dict.fromkeys(found))


def _connect(addresses_: list[str], port: int, timeout: float) -> socket.socket:
    """The first of the vetted addresses that answers (as ``socket.create_connection`` tries
    a name's addresses), never another one."""
    error: OSError = OSError("no address")
    for address in addresses_:
        try:
            return socket.create_connection((address, port), timeout)
        except OSError as exc:
            error = exc
    raise error


class _Pinned(http.client.HTTPConnection):
    def __init__(self, host: str, port: int, to: list[str], timeout: float) -> None:
        super().__init__(host, port, timeout=timeout)
        self.to = to

    def connect(self) -> None:
        self.sock = _connect(self.to, self.port, self.timeout)


class _PinnedTLS(http.client.HTTPSConnection):
    def __init__(self, host: str, port: int, to: list[str], timeout: float) -> None:
        super().__init__(host, port, timeout=timeout, context=ssl.create_default_context())
        self.to = to

    def connect(self) -> None:
        sock = _connect(self.to, self.port, self.timeout)
        self.sock = self._context.wrap_socket(sock, server_hostname=self.host)


def post(url: str, body: bytes, headers: dict[str, str], timeout: float) -> int:
    """POST ``body`` to ``url``; the status code, or :class:`DeliveryFailed`."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    tls = parts.scheme == "https"
    try:
        port = parts.port or (443 if tls else 80)
    except ValueError:
        raise DeliveryFailed("InvalidURL") from None
    to = vetted_addresses(host, port)
    connection = (_PinnedTLS if tls else _Pinned)(host, port, to, timeout)
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
