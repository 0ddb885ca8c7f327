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

Transport (`http_session.py`): one aiohttp session per event loop with room for `concurrency`
connections; the URL is sent as given, a redirect is not followed (a 3xx is `error`), and a
proxy named by HTTP_PROXY / HTTPS_PROXY / ALL_PROXY is used unless NO_PROXY exempts the host.

Secrets (`endpoint.py`): the API key is checked when the system is built (InputError
naming the variable, never its value); URL credentials are sent as HTTP Basic auth and, like
key-like query parameters, never shown: the URL a card records has them removed, and the key,
the URL credentials and those parameters are redacted from every stored error and raw body.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
import time
import weakref
from collections.abc import Callable, Coroutine, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, TypeVar

import aiohttp
import orjson

from twinbench.records import Response
from twinbench.systems.base import Request, SystemOptions, failure
from twinbench.systems.endpoint import endpoint
from twinbench.systems.http_futures import per_request, start_on
from twinbench.systems.http_reply import Got, Undecodable, read_reply, retry_after
from twinbench.systems.http_session import open_session, proxy_for, wire_url
from twinbench.systems.wire import OffContract, loads

__all__ = ["Exchange", "HttpClient", "OffContract", "loads", "per_request", "retry_after"]

T = TypeVar("T")

REJECTED = (400, 413, 422)
ERROR_EXCERPT = 300

Parse = Callable[[Request, Any, float], Response]
GroupParse = Callable[[list[Request], Any, float], list[Response]]


def _run(job: Coroutine[Any, Any, T]) -> T:
    """Run `job` to its end, in a thread with its own loop when called from async code."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(job)
    with ThreadPoolExecutor(1) as pool:  # called from async code (a notebook): own loop
        return pool.submit(asyncio.run, job).result()


@dataclass(frozen=True)
class Exchange:
    """One call's end: status ok (data holds the parsed JSON reply), invalid, rejected, error
    or timeout (error says why; raw holds a redacted excerpt of an unusable reply)."""

    status: str
    data: Any
    error: str | None
    raw: Any
    elapsed_ms: float


_LOCK = threading.Lock()
SHUT_S = 10.0


def _shut(
    loop: asyncio.AbstractEventLoop, session: aiohttp.ClientSession, thread: threading.Thread
) -> None:
    """Close a background loop's session, then stop the loop (waiting, at most SHUT_S, unless
    called on that loop's own thread)."""
    closing = asyncio.run_coroutine_threadsafe(session.close(), loop)
    closing.add_done_callback(lambda _: loop.call_soon_threadsafe(loop.stop))
    if threading.current_thread() is not thread:
        with contextlib.suppress(TimeoutError):
            closing.result(SHUT_S)


def _text(data: bytes) -> str:
    return data.decode("utf-8", errors="replace")


def _encode(body: Any) -> bytes:
    """A JSON request body: UTF-8, compact (the bytes httpx's json.dumps wrote, in a 25th of
    its time); keys that are not strings are written as strings, as json.dumps does."""
    return orjson.dumps(body, option=orjson.OPT_NON_STR_KEYS)


class HttpClient:
    """POSTs to one checked endpoint under the options' deadline, retries and read cap."""

    def __init__(self, options: SystemOptions, system: str) -> None:
        self.options = options
        self.endpoint = endpoint(options, system)
        self.proxy = proxy_for(self.endpoint.origin)
        self._loop: tuple[asyncio.AbstractEventLoop, aiohttp.ClientSession] | None = None
        self._shut: Callable[[], object] | None = None

    async def _call(
        self, session: aiohttp.ClientSession, url: str, body: Any
    ) -> Got | tuple[str, str]:
        """One call with its retries: a reply, or (status, error) of a call that got none.

        The retry loop is written here rather than with tenacity: a wait is bounded by what is
        left of one total deadline (Retry-After included), and the recorded error must say
        which of the two stopped it; tenacity's `stop_before_delay` (8.3+) does the first but
        leaves the second to a callback as long as this loop."""
        options = self.options
        deadline = time.monotonic() + options.timeout_s
        sent, data = wire_url(url), _encode(body)
        for attempt in range(options.retries + 1):
            wait: float | None = None
            try:
                got = await read_reply(session, sent, data, self.proxy, options.max_reply_bytes)
            except TimeoutError:  # the deadline's (a TimeoutError is an OSError, too)
                raise
            except (aiohttp.ClientError, OSError) as exc:
                cause = f"connection failed: {type(exc).__name__}: {exc}".rstrip(": ")
            except Undecodable as exc:
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

    def _excerpt(self, got: Got) -> str:
        """The start of a non-2xx body, redacted (a JSON body after parsing: no escapes hide)."""
        text = _text(got.data)
        try:
            text = json.dumps(self.endpoint.redact(loads(got.data)), ensure_ascii=False)
        except ValueError:
            text = self.endpoint.redact_text(text)
        return text[:ERROR_EXCERPT]

    async def _one(
        self, session: aiohttp.ClientSession, url: str, body: Any
    ) -> Got | tuple[str, str]:
        try:
            async with asyncio.timeout(self.options.timeout_s):
                return await self._call(session, url, body)
        except TimeoutError:
            return (
                "timeout",
                f"timeout: no complete reply within the {self.options.timeout_s:g} s deadline",
            )

    def _classify(self, got: Got | tuple[str, str], started: float) -> Exchange:
        """What one call came to: its JSON reply, or the status and error of a failed one."""

        def fail(status: str, error: str, raw: Any = None) -> Exchange:
            error, raw = self.endpoint.redact(error), self.endpoint.redact(raw)
            return Exchange(status, None, error, raw, (time.perf_counter() - started) * 1000)

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
        return Exchange("ok", data, None, None, (time.perf_counter() - started) * 1000)

    def _outcome(
        self,
        group: list[Request],
        got: Got | tuple[str, str],
        parse: GroupParse,
        system: str,
        started: float,
    ) -> list[Response]:
        reply = self._classify(got, started)
        if reply.status != "ok":
            status = "error" if reply.status == "timeout" else reply.status  # no Response timeout
            error = reply.error or status
            return [
                failure(r, system, status, error, raw=reply.raw, started=started) for r in group
            ]
        try:
            return parse(group, reply.data, reply.elapsed_ms / len(group))
        except Exception as exc:  # any parse failure is the reply's fault: never raise
            detail = str(exc) if isinstance(exc, OffContract) else f"{type(exc).__name__} {exc}"
            error = self.endpoint.redact(f"reply outside the contract: {detail}")
            return [
                failure(r, system, "invalid", error, raw=reply.data, started=started) for r in group
            ]

    def exchange_all(self, calls: Sequence[tuple[str, Any]]) -> list[Exchange]:
        """POST each (path, body) (at most `concurrency` at once); one Exchange per call.

        The generic form (no Request/Response): RAG generation and judges read the JSON reply
        themselves. A timeout is its own status here ("timeout"), never "error"."""

        async def one(
            session: aiohttp.ClientSession, gate: asyncio.Semaphore, path: str, body: Any
        ) -> Exchange:
            async with gate:
                started = time.perf_counter()
                try:
                    got = await self._one(session, self.endpoint.url(path), body)
                    return self._classify(got, started)
                except Exception as exc:  # a bug or an odd server: a status, never a crash
                    error = self.endpoint.redact_text(f"{type(exc).__name__}: {exc}")
                    return Exchange(
                        "error", None, error, None, (time.perf_counter() - started) * 1000
                    )

        async def main() -> list[Exchange]:
            gate = asyncio.Semaphore(self.options.concurrency)
            session = open_session(self.options, self.endpoint)
            try:
                return list(await asyncio.gather(*(one(session, gate, p, b) for p, b in calls)))
            finally:
                await session.close()

        return _run(main())

    async def _group(
        self,
        session: aiohttp.ClientSession,
        group: list[Request],
        path: Callable[[list[Request]], str],
        body: Callable[[list[Request]], Any],
        parse: GroupParse,
        system: str,
    ) -> list[Response]:
        """One group's call, parsed: one Response per request, failures as statuses."""
        started = time.perf_counter()
        try:
            got = await self._one(session, self.endpoint.url(path(group)), body(group))
            out = self._outcome(group, got, parse, system, started)
        except Exception as exc:  # a bug or an odd server: a status, never a crash
            error = self.endpoint.redact_text(f"{type(exc).__name__}: {exc}")
            out = [failure(r, system, "error", error, started=started) for r in group]
        return [self.endpoint.clean(r) for r in out]

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
            session: aiohttp.ClientSession, gate: asyncio.Semaphore, group: list[Request]
        ) -> list[Response]:
            async with gate:
                return await self._group(session, group, path, body, parse, system)

        async def main() -> list[list[Response]]:
            gate = asyncio.Semaphore(self.options.concurrency)
            session = open_session(self.options, self.endpoint)
            try:
                return list(await asyncio.gather(*(one(session, gate, g) for g in groups)))
            finally:
                await session.close()

        return _run(main())

    def submit_groups(
        self,
        groups: Sequence[list[Request]],
        path: Callable[[list[Request]], str],
        body: Callable[[list[Request]], Any],
        parse: GroupParse,
        system: str,
    ) -> list[Future[list[Response]]]:
        """Start one call per group now; a Future per group (the streaming runner's path).

        The calls run on this client's own event loop in a daemon thread, over one session
        kept for the client's life, so a run opens its connections once. The caller bounds how
        many are in flight (the runner keeps a window of `concurrency`)."""
        loop, session = self._background()
        return start_on(loop, [self._group(session, g, path, body, parse, system) for g in groups])

    def submit_all(
        self,
        requests: Sequence[Request],
        path: Callable[[Request], str],
        body: Callable[[Request], Any],
        parse: Parse,
        system: str,
    ) -> list[Future[Response]]:
        """submit_groups with one request per call: a Future per request."""

        async def one(session: aiohttp.ClientSession, request: Request) -> Response:
            (out,) = await self._group(
                session,
                [request],
                lambda g: path(g[0]),
                lambda g: body(g[0]),
                lambda g, data, ms: [parse(g[0], data, ms)],
                system,
            )
            return out

        loop, session = self._background()
        return start_on(loop, [one(session, r) for r in requests])

    def _background(self) -> tuple[asyncio.AbstractEventLoop, aiohttp.ClientSession]:
        with _LOCK:
            if self._loop is None:
                loop = asyncio.new_event_loop()
                thread = threading.Thread(target=loop.run_forever, daemon=True)
                thread.start()

                async def make() -> aiohttp.ClientSession:
                    return open_session(self.options, self.endpoint)

                session = asyncio.run_coroutine_threadsafe(make(), loop).result()
                self._loop = (loop, session)
                # closed by close(), or once this client is collected or the program exits
                self._shut = weakref.finalize(self, _shut, loop, session, thread)
            return self._loop

    def close(self) -> None:
        """Close the streaming session and stop its loop (a no-op when none was started)."""
        with _LOCK:
            shut, self._loop, self._shut = self._shut, None, None
        if shut is not None:
            shut()

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
