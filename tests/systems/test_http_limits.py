"""HTTP adapters against servers that misbehave on the wire: `--timeout` is a deadline per call,
Retry-After is honoured inside it, and no reply can make a stored row large.

The servers are real sockets on 127.0.0.1; each test is bounded to a few seconds and waits on
the server's own record of what arrived, never on fixed sleeps.
"""

from __future__ import annotations

import asyncio
import email.utils
import gzip
import json
import threading
import time
from http.server import BaseHTTPRequestHandler
from typing import Any

from twinbench.jsonl import dumps_line, record_dict
from twinbench.records import ChoiceQuestion, Response
from twinbench.systems import SystemOptions, make_system
from twinbench.systems.base import RAW_CAP, Request

from .servers import Hit, chat_reply, free_port, send, serve_raw

TEAMS = ChoiceQuestion(instructions="Which team?", options=["billing", "sales"])
ABSTAIN = json.dumps({"abstain": True, "reason": "underspecified_state", "answer": None})
OK_BODY = json.dumps(chat_reply(ABSTAIN)).encode()


def _requests(n: int) -> list[Request]:
    return [Request(item_id=f"i{k}", state=f"state {k}", question=TEAMS) for k in range(n)]


def _respond(url: str, n: int = 1, **options: Any) -> tuple[list[Response], float]:
    """Responses of `openai` at `url` for n requests, and the seconds the call took."""
    settings = {"retries": 0, "concurrency": 4} | options
    system = make_system("openai", SystemOptions(base_url=url, **settings))
    started = time.monotonic()
    out = system.respond(_requests(n))
    return out, time.monotonic() - started


def _row_bytes(res: Response) -> int:
    """The size of the row the runner would append to responses.jsonl."""
    return len(dumps_line(record_dict(res)))


def test_a_trickling_server_cannot_outlive_the_deadline() -> None:
    # one byte every 0.5 s for 3 s, then the rest: every single read is quick, the call is not
    stop = threading.Event()

    def trickle(handler: BaseHTTPRequestHandler, hit: Hit) -> None:
        handler.send_response(200)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(OK_BODY)))
        handler.end_headers()
        for byte in OK_BODY[:6]:
            handler.wfile.write(bytes([byte]))
            handler.wfile.flush()
            if stop.wait(0.5):
                return
        handler.wfile.write(OK_BODY[6:])

    with serve_raw(trickle) as (url, hits):
        out, seconds = _respond(url, n=3, timeout_s=1.0)
        stop.set()
    assert len(hits) == 3
    assert [r.status for r in out] == ["error"] * 3
    assert all("1 s deadline" in (r.error or "") for r in out), out[0].error
    assert seconds < 2.0  # the deadline (1 s), not 3 s of trickle


def test_jev_obeys_the_same_deadline() -> None:
    stop = threading.Event()

    def hang(handler: BaseHTTPRequestHandler, hit: Hit) -> None:
        handler.send_response(200)
        handler.send_header("Content-Length", "100")
        handler.end_headers()
        while not stop.wait(0.2):
            handler.wfile.write(b" ")
            handler.wfile.flush()

    request = Request(item_id="j", state="x", question=TEAMS)
    with serve_raw(hang) as (url, _):
        started = time.monotonic()
        out = make_system("jev", SystemOptions(base_url=url, timeout_s=0.6)).respond([request])
        seconds = time.monotonic() - started
        stop.set()
    assert (out[0].status, out[0].abstain) == ("error", None)
    assert "deadline" in (out[0].error or "") and seconds < 1.5


def _retry_after_server(first: tuple[int, str]) -> Any:
    """First call: status + Retry-After value; later calls: a valid reply."""
    calls: list[int] = []
    lock = threading.Lock()

    def reply(handler: BaseHTTPRequestHandler, hit: Hit) -> None:
        with lock:
            calls.append(1)
            first_call = len(calls) == 1
        if first_call:
            send(handler, first[0], b'{"error": "slow down"}', {"Retry-After": first[1]})
        else:
            send(handler, 200, OK_BODY)

    return reply


def test_retry_after_seconds_on_429_is_honoured() -> None:
    with serve_raw(_retry_after_server((429, "1"))) as (url, hits):
        out, _ = _respond(url, retries=2, timeout_s=5.0)
    assert (out[0].status, out[0].abstain) == ("ok", True)
    assert len(hits) == 2 and hits[1].at - hits[0].at >= 0.95


def test_retry_after_http_date_on_503_is_honoured() -> None:
    when = email.utils.formatdate(time.time() + 2, usegmt=True)  # 1-2 s away, to the second
    with serve_raw(_retry_after_server((503, when))) as (url, hits):
        out, _ = _respond(url, retries=2, timeout_s=6.0)
    assert out[0].status == "ok"
    assert len(hits) == 2 and hits[1].at - hits[0].at >= 0.9


def test_a_retry_after_past_the_deadline_fails_at_once() -> None:
    with serve_raw(_retry_after_server((429, "30"))) as (url, hits):
        out, seconds = _respond(url, retries=3, timeout_s=1.0)
    assert (out[0].status, out[0].abstain) == ("error", None)
    assert "HTTP 429" in (out[0].error or "") and "Retry-After 30 s" in (out[0].error or "")
    assert len(hits) == 1 and seconds < 0.9


def test_retries_never_run_past_the_deadline() -> None:
    def busy(handler: BaseHTTPRequestHandler, hit: Hit) -> None:
        send(handler, 503, b'{"error": "busy"}', {"Retry-After": "0.3"})

    with serve_raw(busy) as (url, hits):
        out, seconds = _respond(url, retries=20, timeout_s=1.0)
    assert out[0].status == "error" and "HTTP 503" in (out[0].error or "")
    assert 2 <= len(hits) <= 4 and seconds < 1.3


def _huge(data: bytes, headers: dict[str, str | None] | None = None) -> Any:
    def handle(handler: BaseHTTPRequestHandler, hit: Hit) -> None:
        send(handler, 200, data, headers)

    return handle


def test_a_reply_over_the_read_cap_is_invalid_and_its_row_stays_small() -> None:
    body = json.dumps(chat_reply("x" * 10_000_000)).encode()
    with serve_raw(_huge(body)) as (url, _):
        out, seconds = _respond(url, n=2, max_reply_bytes=1_000_000)
    for res in out:
        assert (res.status, res.abstain) == ("invalid", None)
        assert "read cap" in (res.error or "") and "10000" in (res.error or "")
        assert res.raw["truncated"] is True and res.raw["kept"] == RAW_CAP
        assert res.raw["length"] > 1_000_000
        assert _row_bytes(res) < RAW_CAP + 2_000
    assert seconds < 3


def test_a_large_reply_under_the_read_cap_is_stored_truncated() -> None:
    content = "not json " * 100_000  # 900 kB of model output
    with serve_raw(_huge(json.dumps(chat_reply(content)).encode())) as (url, _):
        out, _ = _respond(url)
    res = out[0]
    assert (res.status, res.error) == ("invalid", "output is not JSON")
    assert res.raw == {
        "truncated": True,
        "length": len(content),
        "kept": RAW_CAP,
        "head": content[:RAW_CAP],
    }
    assert _row_bytes(res) < RAW_CAP + 2_000


def test_a_gzip_bomb_is_stopped_at_the_read_cap() -> None:
    bomb = gzip.compress(b"0" * 50_000_000, compresslevel=9)  # 50 MB inflated, ~50 kB sent
    with serve_raw(_huge(bomb, {"Content-Encoding": "gzip"})) as (url, _):
        out, seconds = _respond(url, max_reply_bytes=1_000_000)
    assert out[0].status == "invalid" and "read cap" in (out[0].error or "")
    assert _row_bytes(out[0]) < RAW_CAP + 2_000 and seconds < 3


def test_a_reply_without_length_is_stopped_at_the_read_cap() -> None:
    body = b"[" + b"1," * 3_000_000 + b"1]"
    with serve_raw(_huge(body, {"Content-Length": None})) as (url, _):
        out, _ = _respond(url, max_reply_bytes=1_000_000)
    assert out[0].status == "invalid" and "read cap" in (out[0].error or "")


def test_broken_replies_are_statuses() -> None:
    def cut(handler: BaseHTTPRequestHandler, hit: Hit) -> None:
        handler.send_response(200)
        handler.send_header("Content-Length", "1000")
        handler.end_headers()
        handler.wfile.write(OK_BODY[:10])

    with serve_raw(cut) as (url, _):
        out, _ = _respond(url)
    assert (out[0].status, out[0].abstain) == ("error", None)
    assert "connection" in (out[0].error or "")
    with serve_raw(_huge(b"<html><body>Bad gateway</body></html>")) as (url, _):
        html, _ = _respond(url)
    assert html[0].status == "invalid" and html[0].raw.startswith("<html>")
    refused, seconds = _respond(f"http://127.0.0.1:{free_port()}", timeout_s=2.0)
    assert refused[0].status == "error" and "connection failed" in (refused[0].error or "")
    assert seconds < 2.5


def test_an_error_body_is_cut_in_the_row() -> None:
    with serve_raw(lambda h, hit: send(h, 404, b"n" * 5_000_000)) as (url, _):
        out, _ = _respond(url)
    assert out[0].status == "error" and (out[0].error or "").startswith("HTTP 404: nnn")
    assert _row_bytes(out[0]) < 2_000


def test_respond_works_from_inside_a_running_event_loop() -> None:
    # a notebook or an async caller: the adapter runs its own loop in a worker thread
    async def caller(url: str) -> list[Response]:
        return make_system("openai", SystemOptions(base_url=url)).respond(_requests(2))

    with serve_raw(lambda h, hit: send(h, 200, OK_BODY)) as (url, _):
        out = asyncio.run(caller(url))
    assert [r.status for r in out] == ["ok", "ok"]
