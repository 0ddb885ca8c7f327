"""The server fixture notices a server that dies: at start, under a waiting test, at teardown.

A llama.cpp build for the wrong CPU dies with a signal on its first generation; the tests that
use such a server must fail at once with the exit code and the end of its log, never hang.
"""

from __future__ import annotations

import subprocess
import sys

import httpx
import pytest

from .servers import free_port, server_process

# a server that answers GET /ready and kills itself with SIGSEGV on GET /crash
CRASHING = """
import os, signal, sys
from http.server import BaseHTTPRequestHandler, HTTPServer
class H(BaseHTTPRequestHandler):
    def do_GET(self):
        if self.path == "/crash":
            print("ggml: about to run the first generation", flush=True)
            os.kill(os.getpid(), signal.SIGSEGV)
        self.send_response(200); self.end_headers(); self.wfile.write(b"ok")
print("listening", flush=True)
HTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
"""


def _crashing(port: int) -> list[str]:
    return [sys.executable, "-c", CRASHING, str(port)]


def test_a_server_that_dies_under_a_waiting_test_fails_it_at_once_with_its_log() -> None:
    port = free_port()
    with (
        pytest.raises(RuntimeError) as failed,
        server_process(_crashing(port), f"http://127.0.0.1:{port}/ready") as server,
    ):
        server.check()  # alive
        with pytest.raises(httpx.TransportError):
            httpx.get(f"http://127.0.0.1:{port}/crash", timeout=30)
        sleeper = subprocess.Popen(
            [sys.executable, "-c", "import time; time.sleep(600)"], text=True
        )
        try:
            server.wait(sleeper, seconds=600)
        finally:
            running = sleeper.poll() is None
            sleeper.kill()
            sleeper.wait()
    message = str(failed.value)
    assert running  # it did not wait for the other process to end
    assert f"died with exit code {-11}" in message
    assert "ggml: about to run the first generation" in message
    assert "listening" in message


def test_a_server_that_exits_before_answering_fails_the_start_with_its_log() -> None:
    args = [sys.executable, "-c", "print('illegal instruction (tilezero)'); raise SystemExit(132)"]
    with (
        pytest.raises(RuntimeError, match=r"exit code 132[^$]*tilezero"),
        server_process(args, f"http://127.0.0.1:{free_port()}/ready"),
    ):
        pass


def test_a_server_that_died_during_the_tests_fails_the_teardown() -> None:
    port = free_port()
    with (
        pytest.raises(RuntimeError, match="died with exit code -11"),
        server_process(_crashing(port), f"http://127.0.0.1:{port}/ready"),
        pytest.raises(httpx.TransportError),
    ):
        httpx.get(f"http://127.0.0.1:{port}/crash", timeout=30)
