"""Which network addresses a webhook may be delivered to.

A subscription's URL is chosen by an admin, and the worker that sends to it sits inside the
hospital's network: without a rule, a URL could make it POST to the cloud's metadata
service (169.254.169.254), to a service on the worker's own host, or to any system of the
intranet. By default only globally routable addresses are allowed; an intranet receiver's
network is allowed by naming it (``WEBHOOK_ALLOWED_NETWORKS``, CIDR, comma-separated).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def parse_networks(raw: str) -> tuple[Network, ...]:
    """``"10.20.0.0/16, 127.0.0.1/32"`` → networks; :class:`ValueError` naming a bad entry."""
    out: list[Network] = []
    for part in (raw or "").split(","):
        part = part.strip()
        if not part:
            continue
        try:
            out.append(ipaddress.ip_network(part, strict=False))
        except ValueError:
            raise ValueError(f"WEBHOOK_ALLOWED_NETWORKS: {part!r} is not a network "
                             "(e.g. 10.20.0.0/16)") from None
    return tuple(out)


def allowed(address: str, extra: Sequence[Network] = ()) -> bool:
    """May a delivery connect to ``address`` (an IP, as ``getaddrinfo`` gives it)?"""
    ip = ipaddress.ip_address(address.split("%", 1)[0])  # an IPv6 zone is not the address
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped  # ::ffff:127.0.0.1 is 127.0.0.1
    if any(ip.version == net.version and ip in net for net in extra):
        return True
    return ip.is_global and not ip.is_multicast
