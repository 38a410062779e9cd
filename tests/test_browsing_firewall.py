"""The URL firewall: hostile URL forms are refused, legitimate ones pass."""

from __future__ import annotations

import pytest

from skillrt.exceptions import HostUnresolved, URLNotAllowed
from skillrt.skills.browsing.firewall import URLFirewall, normalize_host

ZONE = {
    "intranet.example": ["10.0.0.1"],
    "metadata.example": ["169.254.169.254"],
    "mixed.example": ["93.184.216.34", "127.0.0.1"],
    "mapped.example": ["::ffff:10.1.2.3"],
    "ula.example": ["fd12:3456::1"],
    "good.example": ["93.184.216.34"],
    "docs.example": ["151.101.0.223"],
    "allowed.com": ["93.184.216.34"],
    "evil.com": ["203.0.113.66"],
    "v6.example": ["2606:4700::1111"],
}


async def resolver(host: str, port: int) -> list[str]:
    """The test's DNS: a fixed zone; anything else does not resolve."""
    if host not in ZONE:
        raise OSError(f"{host}: name not known")
    return ZONE[host]


def firewall(**kwargs: list[str]) -> URLFirewall:
    kwargs.setdefault("deny", ["evil.com", "blocked.example"])
    return URLFirewall(resolver=resolver, **kwargs)


HOSTILE = [
    ("http://127.1/", "loopback"),
    ("http://0x7f000001/", "loopback"),
    ("http://2130706433/", "loopback"),
    ("http://0x7f.1/", "loopback"),
    ("http://[::1]/", "loopback"),
    ("http://[::ffff:127.0.0.1]/", "IPv4-mapped"),
    ("http://[::ffff:7f00:1]/", "IPv4-mapped"),
    ("http://localhost./", "loopback"),
    ("http://LOCALHOST/", "loopback"),
    ("http://api.localhost/", "loopback"),
    ("http://0.0.0.0/", "unspecified"),
    ("http://0/", "unspecified"),
    ("http://intranet.example/", "resolves to 10.0.0.1"),
    ("http://metadata.example/latest", "link-local"),
    ("http://mixed.example/", "resolves to 127.0.0.1"),
    ("http://mapped.example/", "IPv4-mapped"),
    ("http://ula.example/", "unique local"),
    ("file:///etc/passwd", "scheme file:"),
    ("javascript:alert(1)", "scheme javascript:"),
    ("JavaScript:alert(1)", "scheme javascript:"),
    ("data:text/html,<script>alert(1)</script>", "scheme data:"),
    ("chrome://settings", "scheme chrome:"),
    ("ftp://good.example/file", "scheme ftp:"),
    ("about:blank", "scheme about:"),
    ("view-source:http://good.example/", "scheme view-source:"),
    ("blob:http://good.example/1", "scheme blob:"),
    ("ws://good.example/socket", "scheme ws:"),
    ("http://a.blocked.example/", "denied by rule 'blocked.example'"),
    ("http://blocked.example./", "denied by rule"),
    ("http://allowed.com@evil.com/", "denied by rule 'evil.com'"),
    ("http://allowed.com:pw@evil.com/", "denied by rule 'evil.com'"),
    ("http://allowed.com\\@evil.com/", "malformed"),
    ("https://good.example.evil.com/", "denied by rule 'evil.com'"),
    ("http://169.254.169.254/latest/meta-data/", "link-local"),
    ("http://100.64.0.1/", "CGNAT"),
    ("http://10.0.0.1/", "private"),
    ("http://192.168.1.1/", "private"),
    ("http://172.16.5.4/", "private"),
    ("http://[fd00::1]/", "unique local"),
    ("http://[fe80::1]/", "link-local"),
    ("http://[::]/", "unspecified"),
    ("http://224.0.0.1/", "multicast"),
    ("http://240.0.0.1/", "reserved"),
    ("http://[64:ff9b::a00:1]/", "NAT64"),
    ("http://[2002:a00:1::]/", "6to4"),
    ("http://1.2.3.256/", "malformed"),
    ("http:///nohost", "malformed"),
    ("http://exa mple.com/", "malformed"),
]


@pytest.mark.parametrize(("url", "why"), HOSTILE)
async def test_hostile_urls_are_refused_with_a_reason(url: str, why: str) -> None:
    with pytest.raises(URLNotAllowed) as info:
        await firewall().check(url)
    assert why in info.value.reason
    assert info.value.url == url


def test_there_are_at_least_fifteen_hostile_forms() -> None:
    assert len(HOSTILE) >= 15


@pytest.mark.parametrize(
    "url",
    [
        "http://good.example/",
        "https://good.example/path?q=1#frag",
        "HTTPS://GOOD.EXAMPLE./x",
        "https://good.example:8443/",
        "http://93.184.216.34/",
        "https://v6.example/",
        "http://[2606:4700::1111]/",
        "https://allowed.com/",
        "https://user@good.example/",
    ],
)
async def test_legitimate_urls_pass(url: str) -> None:
    await firewall().check(url)


async def test_allow_list_covers_subdomains_but_not_lookalikes() -> None:
    fw = firewall(allow=["good.example"])
    await fw.check("https://good.example/")
    ZONE["www.good.example"] = ["93.184.216.34"]
    await fw.check("https://www.good.example/")
    del ZONE["www.good.example"]
    for url in (
        "https://badgood.example/",
        "https://good.example.evil.org/",
        "https://docs.example/",
    ):
        with pytest.raises(URLNotAllowed, match="allow list"):
            await fw.check(url)


async def test_a_scheme_in_a_rule_is_not_a_string_prefix() -> None:
    fw = firewall(allow=["https://good.example/docs"])
    await fw.check("https://good.example/docs")
    await fw.check("https://good.example/docs/page")
    for url in (
        "https://good.example.evil.org/docs",  # prefix trick on the host
        "https://good.example/docsearch",  # prefix trick on the path
        "http://good.example/docs",  # another scheme
        "https://good.example/",
    ):
        with pytest.raises(URLNotAllowed):
            await fw.check(url)


async def test_deny_wins_over_allow() -> None:
    fw = firewall(allow=["good.example"], deny=["private.good.example"])
    ZONE["private.good.example"] = ["93.184.216.35"]
    try:
        await fw.check("https://good.example/")
        with pytest.raises(URLNotAllowed, match="denied"):
            await fw.check("https://x.private.good.example/")
    finally:
        del ZONE["private.good.example"]


async def test_deny_rules_by_network_apply_to_resolved_addresses() -> None:
    fw = firewall(deny=["203.0.113.0/24"])
    with pytest.raises(URLNotAllowed, match=r"203\.0\.113\.66 denied"):
        await fw.check("https://evil.com/")


async def test_allow_private_lets_a_named_address_through_and_nothing_else() -> None:
    fw = firewall(allow_private=["127.0.0.1"])
    await fw.check("http://127.0.0.1:8123/page")
    await fw.check("http://127.1:8123/")  # the same address, written short
    await fw.check("http://localhost:8123/")  # loopback by definition: 127.0.0.1
    for url in (
        "http://10.0.0.1/",
        "http://[::1]/",
        "http://127.0.0.2/",
        "http://intranet.example/",
    ):
        with pytest.raises(URLNotAllowed):
            await fw.check(url)


async def test_allow_private_by_network_and_by_host_name() -> None:
    fw = firewall(allow_private=["10.0.0.0/8", "metadata.example"])
    await fw.check("http://10.1.2.3/")
    await fw.check("http://intranet.example/")  # resolves into 10/8
    await fw.check("http://metadata.example/")  # the host is named
    with pytest.raises(URLNotAllowed):
        await fw.check("http://169.254.169.254/")


async def test_every_resolved_address_must_pass() -> None:
    with pytest.raises(URLNotAllowed, match=r"127\.0\.0\.1"):
        await firewall().check("https://mixed.example/")


async def test_a_slow_resolver_times_out_as_a_network_error() -> None:
    import asyncio

    async def slow(host: str, port: int) -> list[str]:
        await asyncio.sleep(5)
        return ["93.184.216.34"]

    fw = URLFirewall(resolver=slow, resolve_timeout_s=0.05)
    with pytest.raises(HostUnresolved, match=r"cannot resolve host slow\.example \(no network\?\)"):
        await fw.check("https://slow.example/")


async def test_the_default_resolver_checks_real_dns_for_localhost_names() -> None:
    fw = URLFirewall()
    with pytest.raises(URLNotAllowed, match="loopback"):
        await fw.check("http://localhost:1/")


@pytest.mark.parametrize(
    ("host", "normal"),
    [
        ("Example.COM.", "example.com"),
        ("127.1", "127.0.0.1"),
        ("0x7f000001", "127.0.0.1"),
        ("017700000001", "127.0.0.1"),
        ("2130706433", "127.0.0.1"),
        ("[::FFFF:127.0.0.1]", "::ffff:7f00:1"),
        ("bücher.example", "xn--bcher-kva.example"),
    ],
)
def test_hosts_are_normalised(host: str, normal: str) -> None:
    assert normalize_host(host) == normal


def test_bad_rules_are_reported_when_the_firewall_is_built() -> None:
    with pytest.raises(ValueError, match=r"browser\.deny"):
        URLFirewall(deny=["http://[not-an-ip/"])
