"""Shared HTTP plumbing: concurrency-limited async POSTs, retries, and failure statuses.

Outcome rules (never an abstention): a timeout, connection failure, or 429/5xx still failing
after the retries is `error`; 400, 413 and 422 are request-level rejections, `rejected`; any
other non-2xx is `error`; a 2xx whose body cannot be read is `invalid`.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import httpx
from tenacity import (
    AsyncRetrying,
    RetryError,
    retry_if_exception_type,
    stop_after_attempt,
    wait_exponential,
)

from twinbench.jsonl import InputError
from twinbench.records import Response
from twinbench.systems.base import Request, SystemOptions, failure

REJECTED = (400, 413, 422)


class _Retryable(Exception):
    def __init__(self, reply: httpx.Response) -> None:
        super().__init__(f"HTTP {reply.status_code}")
        self.reply = reply


@dataclass(frozen=True)
class Reply:
    """A 2xx reply: its JSON body and the round-trip time."""

    body: Any
    latency_ms: float


def api_headers(options: SystemOptions) -> dict[str, str]:
    """Authorization header from the named environment variable (the key is never logged)."""
    if not options.api_key_env:
        return {}
    key = os.environ.get(options.api_key_env)
    if not key:
        raise InputError(f"--api-key-env: environment variable {options.api_key_env} is not set")
    return {"Authorization": f"Bearer {key}"}


def require_url(options: SystemOptions, system: str) -> str:
    """The base URL without a trailing slash, or a clear error."""
    if not options.base_url:
        raise InputError(f"{system} needs --base-url (e.g. http://127.0.0.1:8000)")
    return options.base_url.rstrip("/")


async def _post(client: httpx.AsyncClient, url: str, body: Any, retries: int) -> httpx.Response:
    async for attempt in AsyncRetrying(
        stop=stop_after_attempt(retries + 1),
        wait=wait_exponential(multiplier=0.2, max=4.0),
        retry=retry_if_exception_type((_Retryable, httpx.TransportError)),
        reraise=False,
    ):
        with attempt:
            reply = await client.post(url, json=body)
            if reply.status_code == 429 or reply.status_code >= 500:
                raise _Retryable(reply)
            return reply
    raise AssertionError("unreachable")


Parse = Callable[[Request, Any, float], Response]
GroupParse = Callable[[list[Request], Any, float], list[Response]]


def post_groups(
    groups: Sequence[list[Request]],
    url: Callable[[list[Request]], str],
    body: Callable[[list[Request]], Any],
    parse: GroupParse,
    options: SystemOptions,
    system: str,
) -> list[list[Response]]:
    """POST one body per group of requests (at most `options.concurrency` at once).

    A failed call gives every request of its group the same failure status.
    """

    async def one(
        client: httpx.AsyncClient, gate: asyncio.Semaphore, group: list[Request]
    ) -> list[Response]:
        async with gate:
            started = time.perf_counter()

            def fail(status: str, error: str, raw: Any = None) -> list[Response]:
                return [failure(r, system, status, error, raw=raw, started=started) for r in group]

            try:
                reply = await _post(client, url(group), body(group), options.retries)
            except RetryError as exc:
                return fail(*_failure_cause(exc.last_attempt.exception()))
            except (httpx.TimeoutException, httpx.TransportError) as exc:
                return fail(*_failure_cause(exc))
            latency = (time.perf_counter() - started) * 1000
            if reply.status_code in REJECTED:
                return fail("rejected", f"HTTP {reply.status_code}: {reply.text[:300]}")
            if reply.status_code >= 300:
                return fail("error", f"HTTP {reply.status_code}: {reply.text[:300]}")
            try:
                data = reply.json()
            except ValueError:
                return fail("invalid", "reply is not JSON", reply.text[:1000])
            try:
                return parse(group, data, latency / len(group))
            except (KeyError, TypeError, ValueError, IndexError) as exc:
                return fail("invalid", f"reply outside the contract: {exc!r}", data)

    async def main() -> list[list[Response]]:
        gate = asyncio.Semaphore(options.concurrency)
        timeout = httpx.Timeout(options.timeout_s)
        async with httpx.AsyncClient(timeout=timeout, headers=api_headers(options)) as client:
            return list(await asyncio.gather(*(one(client, gate, g) for g in groups)))

    return asyncio.run(main())


def post_all(
    requests: Sequence[Request],
    url: Callable[[Request], str],
    body: Callable[[Request], Any],
    parse: Parse,
    options: SystemOptions,
    system: str,
) -> list[Response]:
    """POST one body per request and parse each reply (see post_groups)."""
    groups = post_groups(
        [[r] for r in requests],
        lambda g: url(g[0]),
        lambda g: body(g[0]),
        lambda g, data, ms: [parse(g[0], data, ms)],
        options,
        system,
    )
    return [group[0] for group in groups]


def _failure_cause(exc: BaseException | None) -> tuple[str, str]:
    """(status, message) for a call that never got a usable reply."""
    if isinstance(exc, _Retryable):
        return "error", f"HTTP {exc.reply.status_code} after retries: {exc.reply.text[:200]}"
    if isinstance(exc, httpx.TimeoutException):
        return "error", "timeout"
    return "error", f"connection failed: {exc}"
