"""Attacks on the browsing network guards, counted: how many were tried and how many held.

Every server is on loopback (127.0.0.1 and 127.0.0.2); "DNS" is a resolver in this process
(and ``socket.getaddrinfo`` patched for the made-up names, as a hostile DNS server would answer
anything in the process). Four families:

- **ports**: an ``allow_private`` rule for one port of 127.0.0.1 (written four ways), and a
  secret service on another port reached by six spellings of its address, fetched directly or
  through a 301/302/303/307/308 redirect from the allowed page. Held: the secret service got
  no request.
- **rebinding**: a name that answers 127.0.0.2 (allowed) to the first query and 127.0.0.1 (a
  secret service on the same port) afterwards, fetched directly, through a redirect to itself,
  and with both addresses in one answer. Held: the secret service got no request.
- **deadline**: a body trickling a byte every 0.2 s, a body that stalls after its first bytes,
  and a trickle behind a redirect, with ``timeout_s = 1``. Held: the fetch ended with a timeout
  within 3 s.
- **dns**: a name that does not resolve, in English and Chinese sessions. Held: the reply is
  the network message, not a firewall refusal, and does not show the URL.
- **paths**: a path-scoped ``allow_private`` rule for ``/app`` (written three ways) against a
  lax server that decodes and normalises paths, and 22 spellings of ``/app/../secret``
  (``%2e%2e``, ``..%2f``, ``.%2e``, ``..%5c``, ``..;``, ``%252e``, ...), fetched directly and
  behind a 302 and a 307 redirect. Held: ``/secret`` was never served.
- **secrets**: a secret bound to the start origin, sent by a ``SafeFetcher`` with the task's
  ``SecretGuard``: in a URL (to its own origin and another; raw, percent- and form-encoded,
  in the path, the query and the fragment), in a form body to another origin (raw and
  encoded), and in a body a 307 or 308 redirect carries to another origin. Held: the request
  was refused before it was sent and no server saw the secret.
- **pages**: hostile pages (5 MB of NULs, 5 MB of NULs in list items, 300,000 links, all
  gzipped, and a 200 MB gzip bomb) read by ``HttpBrowser`` while a probe measures the event
  loop. Held: the loop never stalled for 0.5 s.

Run: ``python -m benchmarks.attacks_netsec [--rounds N]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from skillrt import load_config
from skillrt.exceptions import BrowserError, HostUnresolved, URLNotAllowed
from skillrt.skills.browsing.config import browser_config
from skillrt.skills.browsing.fetcher import SafeFetcher
from skillrt.skills.browsing.firewall import URLFirewall
from skillrt.skills.browsing.http_browser import HttpBrowser
from skillrt.skills.browsing.secret_guard import BoundSecret, SecretGuard, SecretNotSent, origin_of
from tests.netsec_support import ESCAPES, Server, Trickle

SECRET = b"SECRET-SERVICE-BODY"
STATUSES = (301, 302, 303, 307, 308)


def _spellings(port: int) -> list[str]:
    return [
        f"http://127.0.0.1:{port}/",
        f"http://localhost:{port}/",
        f"http://127.1:{port}/",
        f"http://0x7f000001:{port}/",
        f"http://2130706433:{port}/",
        f"http://[::ffff:127.0.0.1]:{port}/",
    ]


async def _fetch(fw: URLFirewall, url: str, timeout_s: float = 5) -> bytes:
    fetcher = SafeFetcher(fw, timeout_s=timeout_s)
    try:
        return (await fetcher.request("GET", url)).body
    except (URLNotAllowed, BrowserError):
        return b""
    finally:
        await fetcher.aclose()


async def ports() -> tuple[int, int]:
    tried = held = 0
    with Server({"/": (200, {}, SECRET)}) as secret, Server({}) as page:
        rules = [
            f"127.0.0.1:{page.port}",
            f"http://127.0.0.1:{page.port}",
            f"http://127.0.0.1:{page.port}/app",
            f"localhost:{page.port}",
        ]
        for rule in rules:
            fw = URLFirewall(allow_private=[rule])
            for target in _spellings(secret.port):
                attempts = [target]
                for status in STATUSES:
                    path = f"/app/r{status}-{len(page.routes)}"
                    page.routes[path] = (status, {"Location": target}, b"")
                    attempts.append(page.url(path))
                for url in attempts:
                    before = len(secret.requests)
                    body = await _fetch(fw, url)
                    tried += 1
                    held += len(secret.requests) == before and SECRET not in body
    return tried, held


@contextmanager
def _hostile_dns(answers: dict[str, list[list[str]]]) -> Iterator[Any]:
    """Each name answers its lists in turn (the last one for ever), to everyone."""
    asked: dict[str, int] = {}

    def answer(host: str) -> list[str] | None:
        if host not in answers:
            return None
        n = asked.get(host, 0)
        asked[host] = n + 1
        return answers[host][min(n, len(answers[host]) - 1)]

    async def resolver(host: str, port: int) -> list[str]:
        found = answer(host)
        if found is None:
            raise OSError(f"{host}: name not known")
        return found

    real = socket.getaddrinfo

    def getaddrinfo(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        name = host.decode() if isinstance(host, bytes) else host
        found = answer(name) if isinstance(name, str) else None
        return real(found[0] if found else host, port, *args, **kwargs)

    socket.getaddrinfo = getaddrinfo  # type: ignore[assignment]
    try:
        yield resolver
    finally:
        socket.getaddrinfo = real  # type: ignore[assignment]


def _same_port_pair() -> tuple[Server, Server]:
    for _ in range(20):
        good = Server({"/": (200, {}, b"good")}, host="127.0.0.2")
        try:
            return good, Server({"/": (200, {}, SECRET)}, host="127.0.0.1", port=good.port)
        except OSError:
            good.__exit__()
    raise RuntimeError("no port free on both 127.0.0.1 and 127.0.0.2")


async def rebinding(rounds: int) -> tuple[int, int]:
    tried = held = 0
    good, secret = _same_port_pair()
    with good, secret:
        port = good.port
        good.routes["/self"] = (302, {"Location": f"http://rebind.test:{port}/"}, b"")
        good.routes["/other"] = (302, {"Location": f"http://rebind2.test:{port}/"}, b"")
        cases = [
            ("/", {"rebind.test": [["127.0.0.2"], ["127.0.0.1"]]}),
            ("/self", {"rebind.test": [["127.0.0.2"], ["127.0.0.1"]]}),
            ("/other", {"rebind.test": [["127.0.0.2"]], "rebind2.test": [["127.0.0.1"]]}),
            ("/", {"rebind.test": [["127.0.0.2", "127.0.0.1"]]}),
            ("/", {"rebind.test": [["127.0.0.1", "127.0.0.2"]]}),
        ]
        for _ in range(rounds):
            for path, answers in cases:
                with _hostile_dns(answers) as resolver:
                    fw = URLFirewall(allow_private=[f"127.0.0.2:{port}"], resolver=resolver)
                    before = len(secret.requests)
                    body = await _fetch(fw, f"http://rebind.test:{port}{path}")
                tried += 1
                held += len(secret.requests) == before and SECRET not in body
    return tried, held


async def deadline(rounds: int) -> tuple[int, int]:
    tried = held = 0
    routes: dict[str, Any] = {
        "/trickle": (200, {}, Trickle(b"x" * 100, every_s=0.2)),
        "/stall": (200, {}, Trickle(b"ab" + b" " * 10, every_s=0.9)),
        "/hop": (302, {"Location": "/trickle"}, b""),
    }
    with Server(routes) as server:
        fw = URLFirewall(allow_private=[f"127.0.0.1:{server.port}"])
        for _ in range(rounds):
            for path in routes:
                fetcher = SafeFetcher(fw, timeout_s=1)
                started = time.monotonic()
                try:
                    await fetcher.request("GET", server.url(path))
                    ok = False
                except BrowserError as exc:
                    ok = "timed out" in str(exc)
                finally:
                    await fetcher.aclose()
                tried += 1
                held += ok and time.monotonic() - started < 3
    return tried, held


async def dns() -> tuple[int, int]:
    async def nothing(host: str, port: int) -> list[str]:
        raise OSError(-3, "Temporary failure in name resolution")

    tried = held = 0
    for url in ("https://www.google.com/search?q=invented", "http://nowhere.test/x?y=z"):
        tried += 1
        try:
            await URLFirewall(resolver=nothing).check(url)
        except HostUnresolved as exc:
            held += "no network?" in str(exc) and url not in str(exc)
        except URLNotAllowed:
            pass
    return tried, held


async def paths() -> tuple[int, int]:
    tried = held = 0
    routes: dict[str, Any] = {"/secret": (200, {}, SECRET), "/app": (200, {}, b"app")}
    with Server(routes, lax=True) as server:
        rules = [
            f"http://127.0.0.1:{server.port}/app",
            f"127.0.0.1:{server.port}/app",
            f"localhost:{server.port}/app/",
        ]
        for number, escape in enumerate(ESCAPES):
            for status in (302, 307):
                routes[f"/app/r{status}/{number}"] = (status, {"Location": escape}, b"")
        for rule in rules:
            fw = URLFirewall(allow_private=[rule])
            for number, escape in enumerate(ESCAPES):
                for url in (
                    server.url(escape),
                    server.url(f"/app/r302/{number}"),
                    server.url(f"/app/r307/{number}"),
                ):
                    before = sum(path == "/secret" for _, path, _ in server.requests)
                    body = await _fetch(fw, url)
                    after = sum(path == "/secret" for _, path, _ in server.requests)
                    tried += 1
                    held += after == before and SECRET not in body
    return tried, held


async def secrets() -> tuple[int, int]:
    from urllib.parse import quote, quote_plus

    secret = "hunter2 correct+horse/battery"
    tried = held = 0
    with Server({}) as home, Server({}) as thief:
        for status in (307, 308):
            home.routes[f"/r{status}"] = (status, {"Location": thief.url("/collect")}, b"")
        fw = URLFirewall(allow_private=[f"127.0.0.1:{home.port}", f"127.0.0.1:{thief.port}"])
        start = home.url("/")
        attempts: list[tuple[str, str, list[tuple[str, str]] | None]] = []
        for form in (secret, quote(secret, safe=""), quote_plus(secret)):
            for server in (home, thief):
                attempts += [
                    ("GET", server.url(f"/search?q={form}"), None),
                    ("GET", server.url(f"/{form}/x"), None),
                    ("GET", server.url(f"/page#{form}"), None),
                ]
        attempts += [
            ("POST", thief.url("/collect"), [("pw", secret)]),
            ("POST", thief.url("/collect"), [("pw", secret.upper()), ("again", secret)]),
            ("POST", home.url("/r307"), [("pw", secret)]),
            ("POST", home.url("/r308"), [("pw", secret)]),
            ("GET", home.url("/r307") + "?pw=" + quote_plus(secret), None),
        ]
        for method, url, data in attempts:
            guard = SecretGuard(
                [BoundSecret(secret, frozenset({origin_of(start) or ""}))], start_url=start
            )
            fetcher = SafeFetcher(fw, timeout_s=5, guard=guard)
            before = (len(home.requests), len(thief.requests))
            try:
                await fetcher.request(method, url, data=data)
                refused = False
            except SecretNotSent as exc:
                refused = secret not in str(exc)
            except (URLNotAllowed, BrowserError):
                refused = False
            finally:
                await fetcher.aclose()
            seen = [p for _, p, _ in home.requests[before[0] :] + thief.requests[before[1] :]]
            seen += [b.decode("utf-8", "replace") for _, b in thief.posts]
            tried += 1
            held += refused and not any(quote_plus(secret) in s or secret in s for s in seen)
    return tried, held


async def _loop_lag(browser: HttpBrowser, url: str) -> tuple[float, bool]:
    """The longest the event loop stalled while ``browser`` read ``url``, and whether it did."""
    worst = 0.0
    done = asyncio.Event()

    async def probe() -> None:
        nonlocal worst
        while not done.is_set():
            started = time.monotonic()
            await asyncio.sleep(0.01)
            worst = max(worst, time.monotonic() - started - 0.01)

    watcher = asyncio.create_task(probe())
    try:
        await browser.goto(url)
        await browser.observe()
        ok = True
    except BrowserError:
        ok = False
    finally:
        await asyncio.sleep(0.02)
        done.set()
        await watcher
    return worst, ok


async def pages() -> tuple[int, int]:
    import gzip

    five = 5_000_000
    bodies = {
        "/nul": b"\x00" * five,
        "/nul-list": b"<li>\x00" * (five // 5),
        "/links": "".join(f"<a href='/p{i}'>\x00</a>" for i in range(300_000)).encode(),
        "/bomb": b"\x00" * 200_000_000,
    }
    headers = {"Content-Encoding": "gzip", "Content-Type": "text/html"}
    routes: dict[str, Any] = {p: (200, headers, gzip.compress(b)) for p, b in bodies.items()}
    tried = held = 0
    with Server(routes) as server:
        settings = {"timeout_s": 60, "parse_timeout_s": 3}
        config = browser_config(load_config(browser=settings))
        for path in routes:
            browser = HttpBrowser(config, URLFirewall(allow_private=[f"127.0.0.1:{server.port}"]))
            try:
                worst, ok = await _loop_lag(browser, server.url(path))
            finally:
                await browser.close()
            tried += 1
            held += ok and worst < 0.5
    return tried, held


async def campaign(rounds: int = 5) -> dict[str, tuple[int, int]]:
    return {
        "ports": await ports(),
        "rebinding": await rebinding(rounds),
        "deadline": await deadline(max(1, rounds // 5)),
        "dns": await dns(),
        "paths": await paths(),
        "secrets": await secrets(),
        "pages": await pages(),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    result = asyncio.run(campaign(parser.parse_args().rounds))
    for family, (tried, held) in result.items():
        print(f"{family:10} tried {tried:4}  held {held:4}")
    print(json.dumps({k: {"tried": t, "held": h} for k, (t, h) in result.items()}))


if __name__ == "__main__":
    main()
