"""Where a webhook may be delivered: globally routable addresses, and the networks named in
WEBHOOK_ALLOWED_NETWORKS (pure logic)."""

from __future__ import annotations

import pytest

from webhooks.domain.addresses import allowed, parse_networks


@pytest.mark.parametrize("address", [
    "169.254.169.254",  # the cloud's metadata service
    "127.0.0.1", "::1", "::ffff:127.0.0.1",  # this host, also as a mapped IPv6 address
    "10.1.2.3", "172.16.0.9", "192.168.1.20", "fd00::5",  # the intranet
    "0.0.0.0", "224.0.0.1", "fe80::1%eth0",
])
def test_addresses_inside_are_refused_by_default(address: str) -> None:
    assert not allowed(address)


@pytest.mark.parametrize("address", ["8.8.8.8", "2606:4700:4700::1111"])
def test_global_addresses_are_allowed(address: str) -> None:
    assert allowed(address)


def test_a_named_network_is_allowed_and_only_it() -> None:
    extra = parse_networks(" 10.20.0.0/16, 127.0.0.1/32 ,")
    assert allowed("10.20.4.5", extra) and allowed("127.0.0.1", extra)
    assert allowed("::ffff:127.0.0.1", extra)
    assert not allowed("10.21.0.1", extra) and not allowed("127.0.0.2", extra)
    assert not allowed("169.254.169.254", extra)


def test_a_bad_network_is_named() -> None:
    assert parse_networks("") == ()
    with pytest.raises(ValueError, match="'10.20.0/33' is not a network"):
        parse_networks("10.0.0.0/8, 10.20.0/33")
