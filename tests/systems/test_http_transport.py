"""The HTTP client's transport against real sockets on 127.0.0.1: a window of 256 calls is in
flight at once on one client, the URL goes out as given (percent-escapes in a query kept), a
redirect is not followed, a proxy named by the environment is used (NO_PROXY honoured), and a
streaming client never closed ends quietly with the program.

No test here measures speed: each waits on the server's own record of what arrived.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from concurrent.futures import wait
from http.server import BaseHTTPRequestHandler
from typing import Any

import pytest

from twinbench.systems import SystemOptions, make_system
from twinbench.systems.base import Request
from twinbench.systems.http import HttpClient

from .servers import Hit, chat_reply, free_port, send, serve_raw
from .test_http_limits import OK_BODY, TEAMS

WIDE = 256


def _requests(n: int) -> list[Request]:
    return [Request(item_id=f"i{k}", state=f"state {k}", question=TEAMS) for k in range(n)]


def _held_until(count: int) -> tuple[Any, threading.Event]:
    """A handler that answers nothing until `count` calls are in the server at once; the event
    is set when they were (and never, if the client holds fewer)."""
    lock, arrived, full = threading.Lock(), [0], threading.Event()

    def handle(handler: BaseHTTPRequestHandler, hit: Hit) -> None:
        with lock:
            arrived[0] += 1
            if arrived[0] == count:
                full.set()
        if full.wait(60):
            send(handler, 200, OK_BODY)
        else:
            send(handler, 503, b'{"error": "the client never had them all in flight"}')

    return handle, full


def test_one_client_holds_a_window_of_256_calls_in_flight() -> None:
    handle, full = _held_until(WIDE)
    with serve_raw(handle) as (url, hits):
        options = SystemOptions(base_url=url, concurrency=WIDE, retries=0, timeout_s=90)
        client = HttpClient(options, "openai")
        out = client.exchange_all([("/v1", {"n": k}) for k in range(WIDE)])
    assert full.is_set() and len(hits) == WIDE
    assert [e.status for e in out] == ["ok"] * WIDE
    assert sorted(h.body["n"] for h in hits) == list(range(WIDE))


def test_the_streaming_path_holds_256_in_flight_and_close_ends_it() -> None:
    handle, full = _held_until(WIDE)
    with serve_raw(handle) as (url, hits):
        options = SystemOptions(base_url=url, concurrency=WIDE, retries=0, timeout_s=90)
        system = make_system("openai", options)
        futures = system.submit(_requests(WIDE))
        done, _ = wait(futures, timeout=120)
        system.close()
    assert full.is_set() and len(hits) == len(done) == WIDE
    assert {f.result().status for f in futures} == {"ok"}
    assert {f.result().item_id for f in futures} == {f"i{k}" for k in range(WIDE)}


def test_the_url_goes_out_as_given() -> None:
    with serve_raw(lambda h, hit: send(h, 200, OK_BODY)) as (url, hits):
        base = f"{url}/v1?sig=a%2Fb%3D%3D&x=1+2"
        out = make_system("openai", SystemOptions(base_url=base, retries=0)).respond(_requests(1))
    assert out[0].status == "ok"
    assert hits[0].path == "/v1/chat/completions?sig=a%2Fb%3D%3D&x=1+2"
    assert hits[0].headers["Content-Type"] == "application/json"
    assert hits[0].headers["Accept-Encoding"] == "gzip, deflate"


def test_a_redirect_is_an_error_not_followed() -> None:
    def moved(handler: BaseHTTPRequestHandler, hit: Hit) -> None:
        send(handler, 307, b'{"error": "moved"}', {"Location": "/elsewhere"})

    with serve_raw(moved) as (url, hits):
        out = make_system("openai", SystemOptions(base_url=url, retries=0)).respond(_requests(1))
    assert out[0].status == "error" and (out[0].error or "").startswith("HTTP 307")
    assert [h.path for h in hits] == ["/chat/completions"]


def test_a_proxy_in_the_environment_is_used_and_no_proxy_is_honoured(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # the "proxy" is a plain server: a request through it names the whole target URL
    target = f"http://127.0.0.1:{free_port()}/v1"  # nothing listens there
    reply = json.dumps(chat_reply(json.loads(OK_BODY)["choices"][0]["message"]["content"]))
    with serve_raw(lambda h, hit: send(h, 200, reply.encode())) as (proxy, hits):
        monkeypatch.setenv("HTTP_PROXY", proxy)
        monkeypatch.delenv("http_proxy", raising=False)
        monkeypatch.delenv("NO_PROXY", raising=False)
        monkeypatch.delenv("no_proxy", raising=False)
        via = make_system("openai", SystemOptions(base_url=target, retries=0)).respond(_requests(1))
        monkeypatch.setenv("NO_PROXY", "127.0.0.1")
        direct = make_system("openai", SystemOptions(base_url=target, retries=0)).respond(
            _requests(1)
        )
    assert via[0].status == "ok"
    assert [h.path for h in hits] == [f"{target}/chat/completions"]
    assert direct[0].status == "error" and "connection failed" in (direct[0].error or "")


LEFT_OPEN = """
import sys
from twinbench.systems import SystemOptions, make_system
from twinbench.systems.base import Request
from twinbench.records import ChoiceQuestion
question = ChoiceQuestion(instructions="Which team?", options=["billing", "sales"])
system = make_system("openai", SystemOptions(base_url=sys.argv[1], retries=0))
requests = [Request(item_id=f"i{k}", state="s", question=question) for k in range(3)]
print(" ".join(f.result().status for f in system.submit(requests)))
"""


def test_a_streaming_client_never_closed_ends_quietly_with_the_program() -> None:
    # a library caller that submits and never calls close(): its connections are closed at
    # exit, and nothing is said about an unclosed session
    with serve_raw(lambda h, hit: send(h, 200, OK_BODY)) as (url, hits):
        done = subprocess.run(
            [sys.executable, "-c", LEFT_OPEN, url], capture_output=True, text=True, timeout=120
        )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["ok"] * 3 and len(hits) == 3
    assert done.stderr == ""
