"""Which network addresses a webhook may be delivered to.

A subscription's URL is chosen by an admin, and the worker that sends to it sits inside the
hospital's network: without a rule, a URL could make it POST to the cloud's metadata
service (169.254.169.254), to a service on the worker's own host, or to any system of the
intranet. By default only globally routable addresses are allowed; an intranet receiver's
network is allowed by naming it (``WEBHOOK_ALLOWED_NETWORKS``, CIDR, comma-separated).

IPv6 transition forms carry an IPv4 address inside (NAT64, 6to4, IPv4-compatible, SIIT,
Teredo): a gateway on the way may turn them into that IPv4 address, so ``64:ff9b::7f00:1``
can reach 127.0.0.1 although Python calls it global. They are refused unless their network
is named, and then only when the IPv4 address inside is allowed too.

The same rules run when a subscription is created or switched on (:func:`check_destination`,
a 422 naming the rule) and at every delivery (:func:`allowed`).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence

from patients.domain.errors import InvalidInput

Network = ipaddress.IPv4Network | ipaddress.IPv6Network
Address = ipaddress.IPv4Address | ipaddress.IPv6Address

# Cloud metadata services (AWS, GCP, Azure: 169.254.169.254; AWS IPv6; Alibaba): named
# apart so the refusal says what the address is, not only that it is link-local.
METADATA = frozenset(ipaddress.ip_address(a) for a in
                     ("169.254.169.254", "fd00:ec2::254", "100.100.100.200"))
# (network, name) of the IPv6 forms that embed an IPv4 address; most specific first.
TRANSITION: tuple[tuple[ipaddress.IPv6Network, str], ...] = tuple(
    (ipaddress.IPv6Network(net), name) for net, name in (
        ("64:ff9b::/96", "NAT64"),
        ("64:ff9b:1::/48", "local-use NAT64"),
        ("::ffff:0:0:0/96", "IPv4-translated (SIIT)"),
        ("2002::/16", "6to4"),
        ("2001::/32", "Teredo"),
        ("::/96", "IPv4-compatible"),
    ))


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


def _named(ip: Address, extra: Sequence[Network]) -> bool:
    return any(ip.version == net.version and ip in net for net in extra)


def _kind(ip: Address) -> str | None:
    """What makes a plain (not transition-form) address unfit; None when globally routable."""
    if ip in METADATA:
        return "the cloud's metadata service"
    if ip.is_unspecified:
        return "an unspecified address"
    if ip.is_loopback:
        return "a loopback address"
    if ip.is_link_local:
        return "a link-local address"
    if ip.is_multicast:
        return "a multicast address"
    if ip.is_private:
        return "a private address"
    if not ip.is_global:
        return "an address that is not globally routable"
    return None


def _transition(ip: ipaddress.IPv6Address) -> tuple[str, ipaddress.IPv4Address] | None:
    """(form name, the IPv4 address inside) of a transition-form address, else None."""
    for net, name in TRANSITION:
        if ip not in net:
            continue
        if name == "6to4":
            inner = ip.sixtofour
        elif name == "Teredo":
            inner = ip.teredo[1] if ip.teredo else None  # the client's address
        else:  # the last 32 bits (RFC 6052's /96 layout)
            inner = ipaddress.IPv4Address(int(ip) & 0xFFFF_FFFF)
        if name == "IPv4-compatible" and int(ip) <= 1:
            return None  # :: and ::1 are the unspecified and loopback addresses
        assert inner is not None
        return name, inner
    return None


def refusal(address: str, extra: Sequence[Network] = ()) -> str | None:
    """Why a delivery may not connect to ``address`` (an IP, as ``getaddrinfo`` gives it), as
    a phrase naming the rule ("a loopback address (127.0.0.1)"); None when it may."""
    ip: Address = ipaddress.ip_address(address.split("%", 1)[0])  # a zone is not the address
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped  # ::ffff:127.0.0.1 is 127.0.0.1
    form = _transition(ip) if isinstance(ip, ipaddress.IPv6Address) else None
    if form is not None:
        name, inner = form
        inner_kind = _kind(inner)
        if _named(ip, extra) and (inner_kind is None or _named(inner, extra)):
            return None
        inside = f"{inner_kind} ({inner})" if inner_kind else f"{inner}"
        return f"a {name} address ({ip}) that embeds {inside}"
    if _named(ip, extra):
        return None
    kind = _kind(ip)
    return None if kind is None else f"{kind} ({ip})"


def allowed(address: str, extra: Sequence[Network] = ()) -> bool:
    """May a delivery connect to ``address`` (an IP, as ``getaddrinfo`` gives it)?"""
    return refusal(address, extra) is None


def check_destination(found: Sequence[str], extra: Sequence[Network] = ()) -> None:
    """Every address the URL's host resolved to (``found``) allowed, or :class:`InvalidInput`
    on ``url`` naming the first refused one and its rule. A host that resolved to nothing
    passes: the delivery resolves it again and checks what it finds then."""
    for address in found:
        why = refusal(address, extra)
        if why is not None:
            raise InvalidInput(
                f"The URL's host resolves to {why}: deliveries go only to globally routable "
                "addresses unless WEBHOOK_ALLOWED_NETWORKS names the network.",
                field="url",
            )
