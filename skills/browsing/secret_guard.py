"""Secrets bound to origins: where a Browse task may type or send each secret.

``secrets = ["pw", {value = "pw2", origins = ["https://shop.example"]}]``: a secret with
origins may go to those origins only; a plain string (and text the redactor calls a secret, an
API-key shape, and text typed into a password field) may go only to the origin the task
started on. The runtime's own credentials (``llm.api_key``, the serve token, the search key)
go nowhere. A task with no start URL takes the origin of the first page it opens as its start
origin (no page has been seen yet, so that choice is the task's, not a page's).

The guard is asked twice: before a ``type`` (is this page's origin allowed for the secret in the
text?) and before every request each backend sends, every redirect hop and, in Chromium, every
request the page makes (does the URL or the body carry a secret, and may it go there?). A
secret is never sent in a URL (a goto, a GET form, a redirect), except in the start URL the
user gave, to that URL's origin. A refusal raises ``SecretNotSent`` before anything is sent;
its message names the origin and never the secret (``scrub`` replaces each secret in a text
with ``<secret>``), and the agent tells the model why.

A secret is found as it is, percent-encoded and form-encoded (``+`` for spaces). A page's own
script in Chromium could still transform a typed secret (reverse it, hash it) before sending
it; see docs/security.md.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import quote, quote_plus, unquote, unquote_plus

import httpx
from pydantic import SecretStr

from skillrt._io.redaction import MIN_SECRET_CHARS, Redactor
from skillrt.exceptions import URLNotAllowed, UserError
from skillrt.skills.browsing.firewall import DEFAULT_PORTS, normalize_host

if TYPE_CHECKING:
    from skillrt.settings import RuntimeConfig

__all__ = ["SECRET_TEXT", "BoundSecret", "SecretGuard", "SecretNotSent", "origin_of"]

SECRET_TEXT = "<secret>"  # noqa: S105 - a placeholder shown instead of a secret
MIN_SECRET = MIN_SECRET_CHARS
"""Shorter secrets are not looked for (they would match ordinary text), as by the redactor."""


class SecretNotSent(URLNotAllowed):
    """A request (or a ``type``) would have carried a secret where it may not go."""


def origin_of(url: str) -> str | None:
    """``scheme://host:port`` of an http(s) URL (host normalised, port explicit), else None."""
    try:
        parsed = httpx.URL(url.strip())
        scheme = parsed.scheme.lower()
        if scheme not in DEFAULT_PORTS or not parsed.host:
            return None
        host = normalize_host(parsed.host)
    except (httpx.InvalidURL, ValueError):
        return None
    shown = f"[{host}]" if ":" in host else host
    return f"{scheme}://{shown}:{parsed.port or DEFAULT_PORTS[scheme]}"


@dataclass(frozen=True, slots=True)
class BoundSecret:
    """A secret and the origins it may go to (empty: nowhere); ``follows_start`` adds the
    task's start origin."""

    value: str
    origins: frozenset[str]
    follows_start: bool = False

    def forms(self) -> set[str]:
        """How it may look in a URL or a form body."""
        return {self.value, quote(self.value, safe=""), quote_plus(self.value)}


class SecretGuard:
    """Which secrets a task knows and where each may go."""

    def __init__(
        self,
        secrets: Iterable[BoundSecret] = (),
        *,
        start_url: str | None = None,
        redactor: Redactor | None = None,
    ) -> None:
        self.start_url = start_url.strip() if start_url else None
        self.start_origin = origin_of(self.start_url) if self.start_url else None
        self._redactor = redactor or Redactor()
        self._secrets: dict[str, BoundSecret] = {}
        for secret in secrets:
            self._add(secret)

    @classmethod
    def from_config(cls, config: RuntimeConfig, start_url: str | None) -> SecretGuard:
        """The guard for a task: ``config.secrets`` bound as configured (plain ones to the
        start URL's origin), every other configured credential bound to nothing."""
        bound: list[BoundSecret] = []
        for entry in config.secrets:
            if isinstance(entry, SecretStr):
                bound.append(BoundSecret(entry.get_secret_value(), frozenset(), True))
            else:
                origins = frozenset(_configured_origin(o) for o in entry.origins)
                bound.append(BoundSecret(entry.value.get_secret_value(), origins, not origins))
        own = {b.value for b in bound}
        bound += [
            BoundSecret(v, frozenset()) for v in config.secret_values() if v not in own
        ]  # the runtime's own credentials: never sent to a page
        return cls(bound, start_url=start_url, redactor=Redactor(config.secret_values()))

    def _add(self, secret: BoundSecret) -> None:
        if len(secret.value) < MIN_SECRET:
            return
        known = self._secrets.get(secret.value)
        if known is not None:
            secret = BoundSecret(
                secret.value,
                known.origins | secret.origins,
                known.follows_start or secret.follows_start,
            )
        self._secrets[secret.value] = secret

    def origins(self, value: str) -> frozenset[str]:
        """Where the secret ``value`` may go now."""
        secret = self._secrets[value]
        if secret.follows_start and self.start_origin:
            return secret.origins | {self.start_origin}
        return secret.origins

    @property
    def values(self) -> list[str]:
        """Every secret the guard knows, longest first."""
        return sorted(self._secrets, key=len, reverse=True)

    def is_secret(self, text: str) -> bool:
        """Whether ``text`` holds a known secret or something the redactor calls one."""
        return any(v in text for v in self._secrets) or self._redactor.text(text) != text

    def scrub(self, text: str) -> str:
        """``text`` with every known secret (in any of its forms) replaced by ``<secret>``, and
        whatever else the redactor hides (key shapes) by ``***``."""
        for value in self.values:
            for form in sorted(self._secrets[value].forms(), key=len, reverse=True):
                if form in text:
                    text = text.replace(form, SECRET_TEXT)
        return self._redactor.text(text)

    # --- typing ---------------------------------------------------------------------------

    def check_type(self, text: str, page_url: str, *, password_field: bool) -> None:
        """Raise ``SecretNotSent`` when ``text`` holds a secret that may not go to the page's
        origin. Text new to the guard that is a secret (a password field's, a key shape) is
        learnt, bound to the start origin, so a later request carrying it is checked too."""
        if not text:
            return
        origin = origin_of(page_url)
        if (password_field or self._redactor.text(text) != text) and text not in self._secrets:
            self._add(BoundSecret(text, frozenset(), follows_start=True))
        for value in self.values:
            if value in text and origin not in self.origins(value):
                raise SecretNotSent(
                    self.scrub(page_url),
                    self._where(value, origin, "typed into a page of"),
                )

    # --- requests -------------------------------------------------------------------------

    def check_request(self, url: str, body: bytes | None = None) -> None:
        """Raise ``SecretNotSent`` when the request would carry a secret where it may not go:
        in its URL (anywhere but the user's own start URL), or in its body to another origin."""
        origin = origin_of(url)
        if self.start_origin is None:  # no start URL: the task's first page is its start
            self.start_origin = origin
        url_forms = {url, unquote(url), unquote_plus(url)}
        text = _body_text(body)
        for value, secret in self._secrets.items():
            in_url = any(form in u for form in secret.forms() for u in url_forms)
            if in_url and not (self._is_start(url) and origin in self.origins(value)):
                raise SecretNotSent(
                    self.scrub(url), "a secret is never sent in a URL (only typed on its origin)"
                )
            in_body = bool(text) and any(form in text for form in secret.forms())
            if in_body and origin not in self.origins(value):
                raise SecretNotSent(self.scrub(url), self._where(value, origin, "sent to"))

    def _is_start(self, url: str) -> bool:
        """Whether ``url`` is the start URL the user gave (as a browser may have rewritten it)."""
        if self.start_url is None:
            return False
        try:
            return str(httpx.URL(url)) == str(httpx.URL(self.start_url))
        except httpx.InvalidURL:
            return False

    def _where(self, value: str, origin: str | None, verb: str) -> str:
        allowed = sorted(self.origins(value))
        where = ", ".join(allowed) if allowed else "no origin (a credential of the runtime)"
        return (
            f"a secret would be {verb} {origin or 'this page'}; it may go only to {where}. "
            "Secrets go only to the origins configured for them (secrets = [{value, origins}])"
        )


def _body_text(body: bytes | None) -> str:
    if not body:
        return ""
    text = body.decode("utf-8", errors="replace")
    return text + "\n" + unquote_plus(text)


def _configured_origin(text: str) -> str:
    origin = origin_of(text if "://" in text else f"https://{text}")
    if origin is None:
        raise UserError(f"secrets: {text!r} is not an origin (write it as https://host[:port])")
    return origin
