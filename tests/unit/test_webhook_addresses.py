"""Where a webhook may be delivered: globally routable addresses, and the networks named in
WEBHOOK_ALLOWED_NETWORKS (pure logic)."""

from __future__ import annotations

import pytest

from patients.domain.errors import InvalidInput
from webhooks.domain.addresses import allowed, check_destination, parse_networks, refusal


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


@pytest.mark.parametrize(("address", "rule"), [
    ("64:ff9b::7f00:1", "NAT64 address (64:ff9b::7f00:1) that embeds a loopback address "
     "(127.0.0.1)"),
    ("64:ff9b::a9fe:a9fe", "NAT64 address (64:ff9b::a9fe:a9fe) that embeds the cloud's "
     "metadata service (169.254.169.254)"),
    ("64:ff9b:1::a00:1", "local-use NAT64 address"),
    ("2002:a00:1::1", "6to4 address (2002:a00:1::1) that embeds a private address (10.0.0.1)"),
    ("::127.0.0.1", "IPv4-compatible address (::7f00:1) that embeds a loopback address"),
    ("::ffff:0:7f00:1", "IPv4-translated (SIIT) address (::ffff:0:7f00:1) that embeds a "
     "loopback address"),
    ("2001:0:4136:e378:8000:63bf:80ff:fffe", "Teredo address"),
    ("::ffff:169.254.169.254", "the cloud's metadata service (169.254.169.254)"),
    ("fd00:ec2::254", "the cloud's metadata service"),
    ("127.0.0.1", "a loopback address (127.0.0.1)"),
    ("fe80::1%eth0", "a link-local address (fe80::1)"),
    ("192.168.1.20", "a private address (192.168.1.20)"),
    ("100.64.0.1", "not globally routable"),
])
def test_a_refusal_names_the_rule(address: str, rule: str) -> None:
    why = refusal(address)
    assert why is not None and rule in why


@pytest.mark.parametrize("address", ["64:ff9b::808:808", "2002:808:808::1", "::8.8.8.8",
                                     "::ffff:0:808:808", "2001:0:4136:e378:8000:63bf:f7f7:f7f7"])
def test_transition_forms_are_refused_even_around_a_global_address(address: str) -> None:
    """A gateway on the way may turn them into the IPv4 address inside: never by default."""
    assert not allowed(address)


def test_a_transition_form_needs_its_network_and_the_address_inside_allowed() -> None:
    nat64 = parse_networks("64:ff9b::/96")
    assert allowed("64:ff9b::808:808", nat64)
    assert not allowed("64:ff9b::7f00:1", nat64)  # 127.0.0.1 inside, not named
    assert allowed("64:ff9b::a14:1", parse_networks("64:ff9b::/96, 10.20.0.0/16"))
    assert not allowed("2002:808:808::1", nat64)  # another form, not named


def test_a_destination_is_refused_on_the_url_field_naming_the_address() -> None:
    with pytest.raises(InvalidInput) as refused:
        check_destination(["8.8.8.8", "127.0.0.1"])
    assert refused.value.field == "url"
    assert "resolves to a loopback address (127.0.0.1)" in str(refused.value)
    assert "WEBHOOK_ALLOWED_NETWORKS" in str(refused.value)
    check_destination(["127.0.0.1"], parse_networks("127.0.0.0/8"))
    check_destination([])  # unresolved now: the delivery checks what it finds then
