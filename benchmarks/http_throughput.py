"""Items/s of a streaming `twinbench run` against a loopback server with a fixed latency.

Usage: python benchmarks/http_throughput.py [--latency 0.2] [--windows 1,4,16,32,64,128,256]
       [--per-window 8] [--rounds-at C --rounds 25,50,100]

A separate process serves OpenAI-compatible chat completions with uvicorn (an ASGI app that
sleeps `--latency` seconds, then answers the first listed answer as a JSON decision), so the
server costs the client no GIL time. For each window C (`--concurrency C`), the runner sends
exactly C × per-window requests (the shipped example items, copied under new ids) through the
`openai` adapter and the real runner (responses written and fsynced to a temporary run
folder); items/s is compared with the ideal C / latency, and the client's CPU (process time of
this process, all its threads) is divided by the requests. The load average before and after
each window is printed: the server shares the machine, and so does anything else running.
Target (issue 25): at least 0.9 of ideal at C = 64 and 0.85 at C = 256, with at most 1 ms of
client CPU a request (docs/benchmarks.md runs it with --windows 1,16,64,256 --per-window 50).
`--rounds-at C` instead runs window C at each of `--rounds` requests per slot and prints the
seconds per round in steady state (the slope between the shortest and the longest run) and the
one-off cost per run (the intercept).
Needs uvicorn (installed with the dev extra: llama-cpp-python[server]); with uvloop and
httptools (also in the dev extra) uvicorn serves the way vLLM's server does, and costs the
shared CPU less.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

LATENCY = 0.2


def serve(port: int, latency: float) -> None:
    """Run the fixed-latency chat server (the subprocess side)."""
    import asyncio

    import uvicorn

    async def app(scope, receive, send):  # type: ignore[no-untyped-def]
        if scope["type"] != "http":
            return
        body = b""
        more = True
        while more:
            message = await receive()
            body += message.get("body", b"")
            more = message.get("more_body", False)
        if scope["path"] == "/health":
            reply = b"{}"
        else:
            await asyncio.sleep(latency)
            request = json.loads(body)
            schema = request["response_format"]["json_schema"]["schema"]
            answer = next(a for a in schema["properties"]["answer"]["enum"] if a is not None)
            content = json.dumps({"abstain": False, "reason": None, "answer": answer})
            reply = json.dumps(
                {"choices": [{"index": 0, "message": {"role": "assistant", "content": content}}]}
            ).encode()
        headers = [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(reply)).encode()),
        ]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": reply})

    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning", backlog=4096)


def _port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait_up(url: str) -> None:
    deadline = time.time() + 30
    while time.time() < deadline:
        try:
            if httpx.post(f"{url}/health", json={}).status_code == 200:
                return
        except httpx.TransportError:
            time.sleep(0.1)
    raise SystemExit("the latency server did not start")


def measure(url: str, window: int, per_window: int, latency: float) -> dict[str, float]:
    """One streaming run of window × per_window requests: items/s and its share of ideal."""
    from twinbench.runner import RunPlan, load_benchmark, run
    from twinbench.systems import SystemOptions, make_system

    examples = Path(__file__).resolve().parents[1] / "src" / "twinbench" / "examples"
    choice = [i for i in load_benchmark(examples / "items.jsonl") if i.question.type == "choice"]
    # exactly window x per_window requests, so the ideal is per_window rounds of `latency`
    # (a remainder would add a round of its own): the example items, copied under new ids
    wanted = window * per_window
    items = [
        choice[n % len(choice)].model_copy(update={"id": f"{choice[n % len(choice)].id}~{n}"})
        for n in range(wanted)
    ]
    options = SystemOptions(base_url=url, model="m", concurrency=window, retries=0, timeout_s=60)
    system = make_system("openai", options)
    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as folder:
        began, cpu = time.perf_counter(), time.process_time()
        record = run(system, RunPlan(items), Path(folder) / "run")
        seconds, cpu = time.perf_counter() - began, time.process_time() - cpu
    sent = record.responses or 0
    rate = sent / seconds
    ideal = window / latency
    return {
        "window": window,
        "requests": sent,
        "seconds": seconds,
        "rate": rate,
        "share": rate / ideal,
        "cpu_ms": cpu / sent * 1000,
        "load_before": load,
        "load_after": os.getloadavg()[0],
    }


def sweep(url: str, window: int, rounds: list[int], latency: float) -> None:
    """Window `window` at each number of rounds: seconds, and the steady-state round time."""
    seconds = [measure(url, window, n, latency)["seconds"] for n in rounds]
    for n, s in zip(rounds, seconds, strict=True):
        print(f"C = {window}, {n} rounds: {s:.2f} s (ideal {n * latency:.2f} s)")
    slope = (seconds[-1] - seconds[0]) / (rounds[-1] - rounds[0])
    once = seconds[0] - slope * rounds[0]
    print(
        f"steady state: {slope:.3f} s per round, {latency / slope:.2f} of ideal; "
        f"once per run: {once:.2f} s"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--latency", type=float, default=LATENCY)
    parser.add_argument("--windows", default="1,4,16,32,64,128,256")
    parser.add_argument("--per-window", type=int, default=8, help="requests per slot")
    parser.add_argument("--rounds-at", type=int, help="window for the rounds sweep")
    parser.add_argument("--rounds", default="25,50,100", help="requests per slot, swept")
    parser.add_argument("--serve", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.serve, args.latency)
        return
    port = _port()
    server = subprocess.Popen(
        [sys.executable, __file__, "--serve", str(port), "--latency", str(args.latency)]
    )
    try:
        url = f"http://127.0.0.1:{port}"
        _wait_up(url)
        machine = f"{platform.machine()}, {os.cpu_count()} CPUs"
        print(f"machine: {machine}, python {platform.python_version()}")
        if args.rounds_at:
            sweep(url, args.rounds_at, [int(r) for r in args.rounds.split(",")], args.latency)
            return
        print(f"latency {args.latency * 1000:.0f} ms, {args.per_window} requests per slot")
        print(
            "| window C | requests | seconds | items/s | ideal C/latency | share of ideal "
            "| client CPU ms/request | load before → after |"
        )
        print("|---:|---:|---:|---:|---:|---:|---:|---|")
        for window in (int(w) for w in args.windows.split(",")):
            r = measure(url, window, args.per_window, args.latency)
            print(
                f"| {window} | {r['requests']:.0f} | {r['seconds']:.2f} | {r['rate']:.1f} | "
                f"{window / args.latency:.0f} | {r['share']:.2f} | {r['cpu_ms']:.2f} | "
                f"{r['load_before']:.2f} → {r['load_after']:.2f} |",
                flush=True,
            )
    finally:
        server.terminate()
        server.wait()


if __name__ == "__main__":
    main()
