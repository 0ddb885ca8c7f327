"""A checked HTTP endpoint and its secrets: the URL, the API key, and their redaction.

The key is checked when the system is built (InputError naming the variable, never its
value); URL credentials are sent as HTTP Basic auth; the URL a card records has credentials
removed and key-like query values replaced, and every stored error or body is redacted of the
key, the URL password (and its Basic-auth form) and those values.
"""

from __future__ import annotations

import base64
import json
import os
import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, unquote, unquote_plus, urlsplit, urlunsplit

from twinbench.jsonl import InputError
from twinbench.records import Response
from twinbench.systems.base import SystemOptions

REDACTED = "[redacted]"
#: query parameter names that carry credentials (matched after removing - and _)
KEY_PARAM = re.compile(r"key|token|secret|passw|sig|auth|credential", re.IGNORECASE)


def _api_key(options: SystemOptions) -> str | None:
    """The key in the environment variable `--api-key-env` names, checked (never echoed)."""
    name = options.api_key_env
    if not name:
        return None
    key = os.environ.get(name)
    where = f"--api-key-env: environment variable {name}"
    if key is None:
        raise InputError(f"{where} is not set")
    if not key:
        raise InputError(f"{where} is empty")
    if key != key.strip():
        raise InputError(f"{where} has leading or trailing whitespace (a stray newline?)")
    if not all(33 <= ord(c) <= 126 for c in key):
        raise InputError(
            f"{where} holds a character an HTTP header cannot carry "
            "(whitespace, a control or a non-ASCII character)"
        )
    return key


@dataclass(frozen=True)
class Endpoint:
    """A checked server URL: what is sent to it, what a record may show, what is redacted."""

    origin: str  # scheme://host[:port]/path, without credentials, query or trailing slash
    query: str  # as given (sent unchanged)
    headers: dict[str, str]
    auth: tuple[str, str] | None
    secrets: tuple[str, ...]  # longest first

    def url(self, path: str = "") -> str:
        """The URL to send to (query parameters included)."""
        return self.origin + path + (f"?{self.query}" if self.query else "")

    def shown(self, path: str = "") -> str:
        """The URL as records show it: no credentials, key-like parameters redacted."""
        return self.redact_text(self.url(path))

    def redact_text(self, text: str) -> str:
        """`text` with every secret replaced by "[redacted]"."""
        for secret in self.secrets:
            text = text.replace(secret, REDACTED)
        return text

    def redact(self, value: Any) -> Any:
        """JSON data (or a string) with every secret in its strings replaced by "[redacted]"."""
        if not self.secrets:
            return value
        if isinstance(value, str):
            return self.redact_text(value)
        if isinstance(value, dict):
            return {self.redact(k): self.redact(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self.redact(v) for v in value]
        return value

    def clean(self, res: Response) -> Response:
        """A response with its error, raw and usage redacted."""
        if not self.secrets:
            return res
        fields = {"error": res.error, "raw": res.raw, "usage": res.usage}
        return res.model_copy(update={k: self.redact(v) for k, v in fields.items()})


def _variants(secret: str) -> set[str]:
    """A secret as it may appear in a body: plain, URL-encoded, JSON-escaped."""
    if not secret:
        return set()
    return {secret, quote(secret, safe=""), json.dumps(secret)[1:-1]}


def endpoint(options: SystemOptions, system: str) -> Endpoint:
    """The checked endpoint of `--base-url` (InputError for anything but an http(s) URL)."""
    text = (options.base_url or "").strip()
    if not text:
        raise InputError(f"{system} needs --base-url (e.g. http://127.0.0.1:8000)")
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError:
        parts, port = None, None
    hint = f"--base-url: {_safe(text)!r} is not an http(s) URL with a host"
    if parts is None or parts.scheme not in ("http", "https") or not parts.hostname:
        shown = _safe(text)  # a bare host:port or host.name looks like a missing http://
        host_like = re.fullmatch(r"[\w-]+(\.[\w-]+)*(:\d+)?(/\S*)?", shown)
        guess = (
            f" (did you mean http://{shown}?)"
            if host_like and ("." in shown or ":" in shown)
            else ""
        )
        raise InputError(f"{hint} (e.g. http://127.0.0.1:8000){guess}")
    if any(c.isspace() or ord(c) < 32 for c in text):
        raise InputError(f"{hint}: it contains whitespace")
    key = _api_key(options)
    secrets: set[str] = set()
    auth = None
    if parts.username is not None or parts.password is not None:
        if key is not None:
            raise InputError(
                "--base-url carries credentials and --api-key-env names a key: give one of them"
            )
        user, password = unquote(parts.username or ""), unquote(parts.password or "")
        auth = (user, password)
        pair = f"{user}:{password}"
        secrets |= {pair, base64.b64encode(pair.encode()).decode(), *_variants(password)}
        if not password:  # a token passed as the user name
            secrets |= _variants(user)
    for pair in parts.query.split("&"):
        name, _, value = pair.partition("=")
        if KEY_PARAM.search(unquote_plus(name).replace("-", "").replace("_", "")):
            secrets |= {value, *_variants(unquote_plus(value))}
    headers = {"Accept-Encoding": "gzip, deflate"}
    if key is not None:
        headers["Authorization"] = f"Bearer {key}"
        secrets |= _variants(key)
    host = parts.hostname if ":" not in parts.hostname else f"[{parts.hostname}]"
    netloc = host + ("" if port is None else f":{port}")
    origin = urlunsplit((parts.scheme, netloc, parts.path.rstrip("/"), "", ""))
    ordered = tuple(sorted((s for s in secrets if s), key=len, reverse=True))
    return Endpoint(origin, parts.query, headers, auth, ordered)


def _safe(text: str) -> str:
    """A URL the user typed, fit for a message: no credentials (before an '@'), no query."""
    shown = re.sub(r"^([A-Za-z][A-Za-z0-9+.-]*://)?[^/?#]*@", r"\1", text)
    return shown.split("?")[0].split("#")[0][:80]
