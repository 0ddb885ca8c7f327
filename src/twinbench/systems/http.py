"""Shared HTTP plumbing: a checked endpoint, deadline-bound POSTs, retries, and failure statuses.

Outcome rules (never an abstention):

* `--timeout` is a **deadline per call**: connecting, sending, every read and every wait between
  retries count against it. Past it the call is `error` ("no complete reply within the N s
  deadline"), however steadily the server trickles bytes.
* A transport failure, 429 or 5xx is retried up to `retries` times, waiting what `Retry-After`
  says (seconds or an HTTP-date) or else 0.2 s, 0.4 s, ... (at most 4 s); a wait that would
  pass the deadline ends the call at once, `error`, saying so.
* 400, 413 and 422 are request-level rejections, `rejected`; any other non-2xx is `error`.
* Reading stops past `max_reply_bytes` (after decompression: a gzip bomb is cut, too); such a
  reply is `invalid`. A 2xx that is not JSON, or outside the adapter's contract, is `invalid`.

Secrets: the API key is checked when the system is built (InputError naming the variable,
never its value); URL credentials are sent as HTTP Basic auth and, like key-like query
parameters, never shown: the URL a card records has them removed, and the key, the URL
credentials and those parameters are redacted from every stored error and raw body.
"""

from __future__ import annotations

import asyncio
import base64
import email.utils
import json
import math
import os
import re
import time
import zlib
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, unquote, unquote_plus, urlsplit, urlunsplit

import httpx

from twinbench.jsonl import InputError
from twinbench.records import Response
from twinbench.systems.base import Request, SystemOptions, failure
from twinbench.systems.wire import OffContract, loads

__all__ = ["HttpClient", "OffContract", "loads", "retry_after"]

REJECTED = (400, 413, 422)
REDACTED = "[redacted]"
#: query parameter names that carry credentials (matched after removing - and _)
KEY_PARAM = re.compile(r"key|token|secret|passw|sig|auth|credential", re.IGNORECASE)
ERROR_EXCERPT = 300

Parse = Callable[[Request, Any, float], Response]
GroupParse = Callable[[list[Request], Any, float], list[Response]]


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


@dataclass(frozen=True)
class _Got:
    """A reply read to its end, or to just past the read cap."""

    status: int
    headers: httpx.Headers
    data: bytes
    over_cap: bool


class _Undecodable(Exception):
    pass


def _decoder(encoding: str) -> Any:
    encoding = encoding.strip().lower()
    if encoding in ("", "identity"):
        return None
    if encoding in ("gzip", "x-gzip"):
        return zlib.decompressobj(16 + zlib.MAX_WBITS)
    if encoding == "deflate":
        return zlib.decompressobj()
    raise _Undecodable(f"unsupported Content-Encoding {encoding!r}")


async def _exchange(client: httpx.AsyncClient, url: str, body: Any, auth: Any, cap: int) -> _Got:
    """POST `body`; read the (decompressed) reply up to `cap` + 1 bytes."""
    async with client.stream("POST", url, json=body, auth=auth) as reply:
        decoder = _decoder(reply.headers.get("Content-Encoding", ""))
        chunks: list[bytes] = []
        size = 0
        async for raw in reply.aiter_raw():
            pending = raw
            while pending and size <= cap:
                if decoder is None:
                    piece, pending = pending[: cap + 1 - size], b""
                else:
                    try:
                        piece = decoder.decompress(pending, cap + 1 - size)
                    except zlib.error as exc:
                        raise _Undecodable(f"cannot decompress the reply: {exc}") from None
                    pending = decoder.unconsumed_tail
                chunks.append(piece)
                size += len(piece)
            if size > cap:
                break
        return _Got(reply.status_code, reply.headers, b"".join(chunks), size > cap)


def retry_after(headers: httpx.Headers) -> float | None:
    """Seconds a Retry-After header asks to wait (delay-seconds or an HTTP-date), if any."""
    value = headers.get("Retry-After", "").strip()
    if not value:
        return None
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        seconds = when.timestamp() - time.time()
    return max(0.0, seconds) if math.isfinite(seconds) else None


def _text(data: bytes) -> str:
    return data.decode("utf-8", errors="replace")


class HttpClient:
    """POSTs to one checked endpoint under the options' deadline, retries and read cap."""

    def __init__(self, options: SystemOptions, system: str) -> None:
        self.options = options
        self.endpoint = endpoint(options, system)

    async def _call(self, client: httpx.AsyncClient, url: str, body: Any) -> _Got | tuple[str, str]:
        """One call with its retries: a reply, or (status, error) of a call that got none.

        The retry loop is written here rather than with tenacity: a wait is bounded by what is
        left of one total deadline (Retry-After included), and the recorded error must say
        which of the two stopped it; tenacity's `stop_before_delay` (8.3+) does the first but
        leaves the second to a callback as long as this loop."""
        options = self.options
        deadline = time.monotonic() + options.timeout_s
        auth = None if self.endpoint.auth is None else httpx.BasicAuth(*self.endpoint.auth)
        for attempt in range(options.retries + 1):
            wait: float | None = None
            try:
                got = await _exchange(client, url, body, auth, options.max_reply_bytes)
            except httpx.TimeoutException:
                raise TimeoutError from None
            except httpx.TransportError as exc:
                cause = f"connection failed: {type(exc).__name__}: {exc}".rstrip(": ")
            except _Undecodable as exc:
                return "invalid", str(exc)
            else:
                if got.status != 429 and got.status < 500:
                    return got
                cause = f"HTTP {got.status}: {self._excerpt(got)}"
                wait = retry_after(got.headers)
            if attempt == options.retries:
                tries = f" (after {attempt + 1} attempts)" if attempt else ""
                return "error", cause + tries
            pause = wait if wait is not None else min(4.0, 0.2 * 2**attempt)
            if time.monotonic() + pause >= deadline:
                what = f"Retry-After {wait:g} s" if wait is not None else f"a {pause:g} s wait"
                limit = f"the {options.timeout_s:g} s deadline"
                return "error", f"{cause} ({what} would pass {limit}; not retried)"
            await asyncio.sleep(pause)
        raise AssertionError("unreachable")

    def _excerpt(self, got: _Got) -> str:
        """The start of a non-2xx body, redacted (a JSON body after parsing: no escapes hide)."""
        text = _text(got.data)
        try:
            text = json.dumps(self.endpoint.redact(loads(got.data)), ensure_ascii=False)
        except ValueError:
            text = self.endpoint.redact_text(text)
        return text[:ERROR_EXCERPT]

    async def _one(self, client: httpx.AsyncClient, url: str, body: Any) -> _Got | tuple[str, str]:
        try:
            async with asyncio.timeout(self.options.timeout_s):
                return await self._call(client, url, body)
        except TimeoutError:
            return (
                "error",
                f"timeout: no complete reply within the {self.options.timeout_s:g} s deadline",
            )

    def _outcome(
        self,
        group: list[Request],
        got: _Got | tuple[str, str],
        parse: GroupParse,
        system: str,
        started: float,
    ) -> list[Response]:
        def fail(status: str, error: str, raw: Any = None) -> list[Response]:
            error, raw = self.endpoint.redact(error), self.endpoint.redact(raw)
            return [failure(r, system, status, error, raw=raw, started=started) for r in group]

        if isinstance(got, tuple):
            return fail(*got)
        if got.status in REJECTED:
            return fail("rejected", f"HTTP {got.status}: {self._excerpt(got)}")
        if got.status >= 300:
            return fail("error", f"HTTP {got.status}: {self._excerpt(got)}")
        if got.over_cap:
            length = got.headers.get("Content-Length")
            declared = f" (Content-Length {length})" if length else ""
            cap = self.options.max_reply_bytes
            return fail(
                "invalid",
                f"reply larger than the read cap of {cap} bytes{declared}; not read further",
                _text(got.data),
            )
        try:
            data = self.endpoint.redact(loads(got.data))
        except ValueError:
            return fail("invalid", "reply is not JSON", _text(got.data))
        latency = (time.perf_counter() - started) * 1000
        try:
            return parse(group, data, latency / len(group))
        except Exception as exc:  # any parse failure is the reply's fault: never raise
            detail = str(exc) if isinstance(exc, OffContract) else f"{type(exc).__name__} {exc}"
            return fail("invalid", f"reply outside the contract: {detail}", data)

    def post_groups(
        self,
        groups: Sequence[list[Request]],
        path: Callable[[list[Request]], str],
        body: Callable[[list[Request]], Any],
        parse: GroupParse,
        system: str,
    ) -> list[list[Response]]:
        """POST one body per group (at most `concurrency` at once); one Response per request.

        A failed call gives every request of its group the same failure status.
        """

        async def one(
            client: httpx.AsyncClient, gate: asyncio.Semaphore, group: list[Request]
        ) -> list[Response]:
            async with gate:
                started = time.perf_counter()
                try:
                    got = await self._one(client, self.endpoint.url(path(group)), body(group))
                    out = self._outcome(group, got, parse, system, started)
                except Exception as exc:  # a bug or an odd server: a status, never a crash
                    error = self.endpoint.redact_text(f"{type(exc).__name__}: {exc}")
                    out = [failure(r, system, "error", error, started=started) for r in group]
                return [self.endpoint.clean(r) for r in out]

        async def main() -> list[list[Response]]:
            gate = asyncio.Semaphore(self.options.concurrency)
            timeout = httpx.Timeout(self.options.timeout_s)
            async with httpx.AsyncClient(timeout=timeout, headers=self.endpoint.headers) as client:
                return list(await asyncio.gather(*(one(client, gate, g) for g in groups)))

        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return asyncio.run(main())
        with ThreadPoolExecutor(1) as pool:  # called from async code (a notebook): own loop
            return pool.submit(asyncio.run, main()).result()

    def post_all(
        self,
        requests: Sequence[Request],
        path: Callable[[Request], str],
        body: Callable[[Request], Any],
        parse: Parse,
        system: str,
    ) -> list[Response]:
        """POST one body per request and parse each reply (see post_groups)."""
        groups = self.post_groups(
            [[r] for r in requests],
            lambda g: path(g[0]),
            lambda g: body(g[0]),
            lambda g, data, ms: [parse(g[0], data, ms)],
            system,
        )
        return [group[0] for group in groups]
