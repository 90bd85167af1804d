"""Which addresses a cited page is never fetched from (docs/protocol.md section 10, "Fetching")."""

from __future__ import annotations

import ipaddress

import pytest

from rp1_duel.verify._addresses import refusal

REFUSED = [
    ("127.0.0.1", "loopback"),
    ("127.0.0.2", "loopback"),
    ("::1", "loopback"),
    ("10.1.2.3", "private"),
    ("172.16.0.9", "private"),
    ("192.168.1.1", "private"),
    ("169.254.1.1", "link-local"),
    ("fe80::1", "link-local"),
    ("fd12:3456::1", "unique-local"),
    ("100.64.0.1", "carrier-grade NAT"),
    ("240.0.0.1", "reserved"),
    ("192.0.2.10", "reserved"),  # documentation
    ("fec0::1", "site-local"),
    ("::ffff:127.0.0.1", "embeds 127.0.0.1 is a loopback"),  # IPv4-mapped
    ("::ffff:10.0.0.1", "embeds 10.0.0.1 is a private"),
    ("64:ff9b::a9fe:a9fe", "embeds 169.254.169.254 is a cloud metadata"),  # NAT64
    ("2002:7f00:1::", "embeds 127.0.0.1"),  # 6to4
    ("::7f00:1", "embeds 127.0.0.1"),  # IPv4-compatible
]


@pytest.mark.parametrize(("address", "said"), REFUSED)
def test_non_public_addresses_are_refused_by_default(address, said):
    reason = refusal(ipaddress.ip_address(address))
    assert reason is not None and said in reason, reason


@pytest.mark.parametrize(
    "address",
    [
        "169.254.169.254",
        "fd00:ec2::254",
        "169.254.170.2",
        "100.100.100.200",
        "::ffff:169.254.169.254",
        "0.0.0.0",  # noqa: S104  an address to refuse, not one to bind
        "::",
        "224.0.0.1",
        "ff02::1",
        "255.255.255.255",
    ],
)
def test_metadata_multicast_and_unspecified_addresses_stay_refused_with_allow_private_hosts(address):
    assert refusal(ipaddress.ip_address(address), allow_private=True) is not None


@pytest.mark.parametrize("address", ["127.0.0.1", "10.0.0.1", "192.168.0.10", "fe80::1", "::ffff:127.0.0.1"])
def test_allow_private_hosts_opens_loopback_and_private_networks(address):
    assert refusal(ipaddress.ip_address(address), allow_private=True) is None


@pytest.mark.parametrize(
    "address", ["93.184.215.14", "2606:4700::6810:84e5", "::ffff:93.184.215.14", "2002:5db8:d70e::1"]
)
def test_public_addresses_are_fetched(address):
    assert refusal(ipaddress.ip_address(address)) is None
