"""Local HTTP servers on 127.0.0.1 that speak documented wire formats, for adapter tests.

Laya and Jev are not installable here, so `systemone_server` answers their documented
`/v1/systemone` (+ `/batch`) contract deterministically: it picks the option whose text occurs
in the state (else the first), with confidence 0.9 when found and 0.4 otherwise.
`chat_reply` builds OpenAI chat-completions replies for scripted servers, `logprob_reply` ones
that carry token log-probabilities. `serve_raw` hands the
whole exchange to a handler, for servers that misbehave on the wire (trickle bytes, send huge or
gzip-bombed bodies, cut the connection, answer 429 with Retry-After, echo the Authorization
header). Every request is recorded.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

Handler = Callable[[str, Any], tuple[int, Any]]


@dataclass(frozen=True)
class Hit:
    """One request a raw server received: path, JSON body, headers, monotonic arrival time."""

    path: str
    body: Any
    headers: dict[str, str]
    at: float


RawHandler = Callable[[BaseHTTPRequestHandler, Hit], None]


def send(
    handler: BaseHTTPRequestHandler,
    status: int,
    data: bytes,
    headers: dict[str, str | None] | None = None,
) -> None:
    """Write one reply: JSON content type and Content-Length unless `headers` override them
    (a None value leaves that header out)."""
    handler.send_response(status)
    fields: dict[str, str | None] = {
        "Content-Type": "application/json",
        "Content-Length": str(len(data)),
    }
    for name, value in (fields | (headers or {})).items():
        if value is not None:
            handler.send_header(name, value)
    handler.end_headers()
    handler.wfile.write(data)


class _Server(ThreadingHTTPServer):
    request_queue_size = 1024  # a client opening a window of 256 connections at once


@contextmanager
def serve_raw(handle: RawHandler) -> Iterator[tuple[str, list[Hit]]]:
    """Run `handle(handler, hit)` for every POST on a free port; yield (url, hits)."""
    hits: list[Hit] = []

    class Server(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            hit = Hit(self.path, body, dict(self.headers.items()), time.monotonic())
            hits.append(hit)
            # the client may give up first (a deadline, a read cap): nothing left to do then
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                handle(self, hit)

    server = _Server(("127.0.0.1", 0), Server)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", hits
    finally:
        server.shutdown()
        server.server_close()


@contextmanager
def serve(handle: Handler) -> Iterator[tuple[str, list[tuple[str, Any]]]]:
    """Run `handle(path, body) -> (status, reply)` on a free port; yield (url, request log)."""
    log: list[tuple[str, Any]] = []

    def raw(handler: BaseHTTPRequestHandler, hit: Hit) -> None:
        log.append((hit.path, hit.body))
        status, reply = handle(hit.path, hit.body)
        send(handler, status, reply if isinstance(reply, bytes) else json.dumps(reply).encode())

    with serve_raw(raw) as (url, _):
        yield url, log


def _decide(state: str, question: dict[str, Any], jev: bool, floor: float | None) -> dict[str, Any]:
    kind = question["type"]
    if kind == "noul":
        answer: dict[str, Any] = {"type": "noul", "noul": 0.8 if "yes" in state.lower() else 0.3}
        if not jev:
            answer["answer_confidence"] = max(answer["noul"], 1 - answer["noul"])
        return answer
    options = question["criteria"]
    found = [i for i, o in enumerate(options) if str(o).lower() in state.lower()]
    index = found[0] if found else 0
    confidence = 0.9 if found else 0.4
    probabilities = {
        str(i if kind == "score" else o): (
            confidence if i == index else (1 - confidence) / (len(options) - 1)
        )
        for i, o in enumerate(options)
    }
    answer = {"type": kind, "probabilities": probabilities, "confidence": confidence}
    if kind == "choice":
        answer["choice"] = options[index]
        if jev:
            answer["choice_index"] = index
    else:
        answer["score"] = float(index)
        answer["legend"] = {str(i): o for i, o in enumerate(options)}
    if not jev:
        answer["answer_confidence"] = confidence
        if floor is not None:
            answer["low_confidence"] = confidence < floor
            answer["abstention"] = "abstained" if confidence < floor else "passed"
    return answer


def systemone_handler(jev: bool, delay_s: float = 0.0) -> Handler:
    """A Laya (jev=False) or Jev (jev=True) `/v1/systemone` server."""

    def handle(path: str, body: Any) -> tuple[int, Any]:
        time.sleep(delay_s)
        question = body["questions"]["q"]
        if jev and len(question.get("criteria", [])) > 255:
            return 400, {"error": "too many choices: at most 255"}
        floor = body.get("min_confidence")
        if path == "/v1/systemone/batch" and not jev:
            return 200, {
                "results": [
                    {
                        "answers": {"q": _decide(s, question, jev, floor)},
                        "usage": {"input_tokens": 10, "output_tokens": 0},
                    }
                    for s in body["states"]
                ]
            }
        if path != "/v1/systemone":
            return 404, {"detail": "not found"}
        return 200, {
            "model": "jev-1" if jev else "laya",
            "usage": {"input_tokens": 10},
            "answers": {"q": _decide(body["state"], question, jev, floor)},
        }

    return handle


def chat_reply(content: Any) -> dict[str, Any]:
    """An OpenAI chat-completions reply carrying `content`."""
    return {
        "id": "c1",
        "object": "chat.completion",
        "model": "m",
        "choices": [
            {
                "index": 0,
                "finish_reason": "stop",
                "message": {"role": "assistant", "content": content},
            }
        ],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }


def logprob_reply(
    content: str, tokens: list[tuple[str | bytes, float, list[tuple[str | bytes, float]]]]
) -> Any:
    """A chat reply whose `logprobs.content` lists `tokens` as (token, its log-probability, top
    candidates), in the OpenAI wire format: {"token", "logprob", "bytes", "top_logprobs":
    [{"token", "logprob", "bytes"}]}. A token given as bytes (part of a character) is sent as
    llama.cpp does: its text with a replacement character, its bytes as they are."""

    def entry(token: str | bytes, logprob: float) -> dict[str, Any]:
        raw = token if isinstance(token, bytes) else token.encode()
        text = raw.decode(errors="replace")
        return {"token": text, "logprob": logprob, "bytes": list(raw)}

    reply = chat_reply(content)
    reply["choices"][0]["logprobs"] = {
        "content": [
            entry(token, logprob) | {"top_logprobs": [entry(t, lp) for t, lp in top]}
            for token, logprob, top in tokens
        ]
    }
    return reply


def free_port() -> int:
    """A free TCP port on 127.0.0.1."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class ServerProcess:
    """A server started by `server_process`: its URL prefix, process and log file.

    `check()` raises at once when the process has died (its exit code and the last lines of
    its log), so a test that waits on the server fails with the cause instead of hanging."""

    url: str
    process: subprocess.Popen[bytes]
    log: Path

    def tail(self, lines: int = 20) -> str:
        text = self.log.read_text(errors="replace") if self.log.exists() else ""
        return "\n".join(text.splitlines()[-lines:])

    def check(self) -> None:
        code = self.process.poll()
        if code is not None:
            raise RuntimeError(
                f"the server {self.url} died with exit code {code}; last lines of its log:\n"
                f"{self.tail()}"
            )

    def wait(self, other: subprocess.Popen[str], seconds: float) -> int:
        """Wait for subprocess `other` to end, failing at once if this server dies first."""
        deadline = time.monotonic() + seconds
        while True:
            self.check()
            with contextlib.suppress(subprocess.TimeoutExpired):
                return other.wait(timeout=0.5)
            if time.monotonic() > deadline:
                other.kill()
                raise RuntimeError(f"{other.args[0]} did not end within {seconds:.0f} s")


@contextmanager
def server_process(
    args: list[str], probe: str, seconds: float = 120, url: str = ""
) -> Iterator[ServerProcess]:
    """Run a server process with its output in a log file; yield once GET `probe` answers 200
    (failing at once, with the log, if the process exits first); stop it afterwards, and fail
    the teardown if it died while the tests used it."""
    import httpx

    folder = Path(tempfile.mkdtemp(prefix="twinbench-server-"))
    log = folder / "server.log"
    with log.open("wb") as sink:
        process = subprocess.Popen(args, stdout=sink, stderr=subprocess.STDOUT)
    server = ServerProcess(url or probe, process, log)
    try:
        deadline = time.monotonic() + seconds
        while True:
            server.check()
            try:
                if httpx.get(probe, timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(
                    f"{args[2]} did not answer {probe} within {seconds:.0f} s:\n{server.tail()}"
                )
            time.sleep(0.2)  # polling interval while the condition (an answer) is awaited
        yield server
        server.check()
    finally:
        if process.poll() is None:
            process.terminate()
            process.wait(timeout=30)
        shutil.rmtree(folder, ignore_errors=True)
