"""The audit page: an annotator does pass one in headless Chromium (Selenium), and the page
refuses hostile requests (cross-site posts, bad forms, huge or malformed bodies), keeps every
verdict when two servers share one annotator, and survives kill -9 with a whole verdict file."""

from __future__ import annotations

import http.client
import json
import os
import re
import select
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from typer.testing import CliRunner

from conftest import interruptible, read_rows, system_tool
from twinbench.audit.human import RUBRIC
from twinbench.audit.human import package as write_package
from twinbench.audit.serve import MAX_BODY, Session, make_server
from twinbench.cli import app

HOSTILE = '<img src=x onerror="alert(1)">'
YES = {"item_unanswerable": "yes", "twin_answerable": "no"}


def _wait(condition: Callable[[], bool], timeout: float = 10.0) -> bool:
    """Poll `condition` until it holds (True) or `timeout` seconds pass (False)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.02)
    return False


def _answered(package: Path, count: int, timeout: float = 10.0) -> bool:
    """Wait (up to `timeout`) until `count` pass-one verdicts are in ann's verdict file."""

    def enough() -> bool:
        rows = read_rows(package / "verdicts" / "ann_pass1.jsonl")
        return sum(r["answers"]["item_unanswerable"] == "yes" for r in rows) >= count

    return _wait(enough, timeout)


@pytest.fixture
def package(tmp_path: Path, runner: CliRunner) -> Path:
    bench = tmp_path / "bench"
    assert runner.invoke(app, ["build", "--out", str(bench), "--per-generator", "2"]).exit_code == 0
    sample = tmp_path / "sample.jsonl"
    assert (
        runner.invoke(
            app, ["audit", "sample", str(bench / "items.jsonl"), "--n", "5", "--out", str(sample)]
        ).exit_code
        == 0
    )
    out = tmp_path / "package"
    assert (
        runner.invoke(
            app, ["audit", "package", str(sample), "--annotators", "ann,bob", "--out", str(out)]
        ).exit_code
        == 0
    )
    return out


def _synthetic(out: Path, count: int, text: str = "Which team?") -> Path:
    """A package of `count` made-up items (by the real `audit package` code); `text` is every
    item text and the `why` question."""
    rows, twins = [], {}
    for i in range(count):
        question = {"type": "choice", "instructions": text, "options": [text, "sales"]}
        twin = {"id": f"t-{i}", "state": f"{text} twin {i}", "question": question}
        twins[twin["id"]] = twin
        row = {
            "id": f"u-{i}",
            "twin_id": twin["id"],
            "family": "underspecified_state",
            "state": f"{text} state {i}",
            "question": {"type": "score", "instructions": text, "legend": {text: text, "b": 2}},
        }
        rows.append({"stratum": {"family": "x"}, "stratum_share": 1.0, "row": row})
    why = {"id": "why", "type": "text", "pass1": text, "pass2": text}
    write_package(rows, twins, ["ann"], out, seed=0, rubric=[*RUBRIC[:2], why])
    return out


def _verdicts(folder: Path, number: int = 1) -> list[dict[str, Any]]:
    return read_rows(folder / "verdicts" / f"ann_pass{number}.jsonl")


def _token(html: str) -> str:
    """The hidden form token of a page (every form carries it)."""
    match = re.search(r'name="token" value="([^"]+)"', html)
    assert match, "the page's form has no token field"
    return match.group(1)


@contextmanager
def _served(folder: Path) -> Iterator[str]:
    """A real server for ann on 127.0.0.1 (port picked by the OS), in a thread; its URL."""
    server = make_server(Session(folder, "ann"))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@contextmanager
def _cli_server(folder: Path) -> Iterator[tuple[subprocess.Popen[str], str]]:
    """`twinbench audit serve FOLDER --annotator ann` (default port) as a subprocess; its URL."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "twinbench", "audit", "serve", str(folder), "--annotator", "ann"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        preexec_fn=interruptible,  # it is stopped with Ctrl-C
    )
    try:
        assert proc.stdout is not None
        printed, deadline = "", time.monotonic() + 120  # a bound for a hang, not a timing
        while not (match := re.search(r"http://127\.0\.0\.1:(\d+)/", printed)):
            assert time.monotonic() < deadline, f"no URL printed: {printed!r}"
            if select.select([proc.stdout], [], [], 0.2)[0]:
                line = proc.stdout.readline()
                assert line, f"server exited: {printed!r}"
                printed += line
        yield proc, match.group(0).rstrip("/")
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()


def _post(url: str, fields: dict[str, str], **headers: str) -> httpx.Response:
    return httpx.post(url + "/verdict", data=fields, headers=headers, timeout=10)


def _raw_post(
    url: str, headers: dict[str, str], body: bytes = b"", half_close: bool = False
) -> tuple[int, str]:
    """POST with exactly these headers (http.client, so bad ones go out as they are); with
    `half_close` the client sends no more after `body`, as if the body were cut short."""
    port = int(url.rsplit(":", 1)[1])
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.putrequest("POST", "/verdict", skip_host=True, skip_accept_encoding=True)
        for name, value in {"Host": f"127.0.0.1:{port}", **headers}.items():
            conn.putheader(name, value)
        conn.endheaders(body or None)
        if half_close:
            assert conn.sock is not None
            conn.sock.shutdown(socket.SHUT_WR)
        response = conn.getresponse()
        return response.status, response.read().decode("utf-8")
    finally:
        conn.close()


def test_pass_one_in_the_browser(package: Path) -> None:
    session = Session(package, "ann")
    server = make_server(session)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    options = webdriver.ChromeOptions()
    options.binary_location = system_tool("chromium")
    for flag in (
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
    ):
        options.add_argument(flag)
    driver = webdriver.Chrome(options=options, service=Service(system_tool("chromedriver")))
    try:
        total = len(read_rows(package / "verdicts" / "ann_pass1.jsonl"))
        # pass two is refused while pass one is unfinished, in the page and on a direct POST
        driver.get(url + "/?pass=2")
        assert "Pass two is locked" in driver.page_source
        refused = _post(url, {"token": session.token, "pass": "2", "blind_id": "x", **YES})
        assert refused.status_code == 409
        for done in range(total):
            driver.get(url + "/?pass=1")
            assert "Item" in driver.title or "Audit" in driver.title
            assert "construction" not in driver.page_source.lower()  # blind pass
            # the page says what to do, so an annotator needs no docs
            intro = driver.find_element(By.CLASS_NAME, "intro").text
            assert "from this text alone" in intro and "Save and next" in intro
            for question in ("item_unanswerable", "twin_answerable"):
                driver.find_element(
                    By.CSS_SELECTOR, f'input[name="{question}"][value="yes"]'
                ).click()
            driver.find_element(By.NAME, "why").send_keys("support sentence missing")
            driver.find_element(By.ID, "save").click()
            # saved the moment it was given: the file holds it once the form post returns
            assert _answered(package, done + 1)
        assert "Pass 1 complete" in driver.page_source
        assert "read-only" in driver.page_source
        driver.get(url + "/?pass=2")
        assert "How it was built" in driver.page_source
    finally:
        driver.quit()
        server.shutdown()
        server.server_close()
    why = {r["answers"]["why"] for r in read_rows(package / "verdicts" / "ann_pass1.jsonl")}
    assert why == {"support sentence missing"}
    # the other annotator's file is untouched
    bob = read_rows(package / "verdicts" / "bob_pass1.jsonl")
    assert all(v is None for r in bob for v in r["answers"].values())
    assert json.loads((package / "KEY.json").read_text())["annotators"] == ["ann", "bob"]


def test_cross_site_requests_are_refused(tmp_path: Path) -> None:
    folder = _synthetic(tmp_path / "p", 3)
    first = _verdicts(folder)[0]["blind_id"]
    with _served(folder) as url:
        port = url.rsplit(":", 1)[1]
        # a page reached under another name (DNS rebinding) is not served
        assert httpx.get(url, headers={"Host": f"evil.example:{port}"}).status_code == 403
        page = httpx.get(url)
        assert page.status_code == 200
        token = _token(page.text)
        assert len(token) >= 32
        assert "default-src 'none'" in page.headers["content-security-policy"]
        assert page.headers["x-frame-options"] == "DENY"
        form = {"token": token, "pass": "1", "blind_id": first, **YES}
        for headers in (
            {"Origin": "http://evil.example"},
            {"Origin": "null"},
            {"Origin": f"http://127.0.0.1:{int(port) + 1}"},
            {"Referer": "http://evil.example/form.html"},
            {"Host": f"evil.example:{port}"},
        ):
            refused = _post(url, form, **headers)
            assert refused.status_code == 403, headers
        for bad in ({**form, "token": "guess"}, {k: v for k, v in form.items() if k != "token"}):
            refused = _post(url, bad)
            assert refused.status_code == 403 and "token" in refused.text
        assert all(v is None for r in _verdicts(folder) for v in r["answers"].values())
        # the page's own post (same origin, its token) is saved
        saved = _post(url, form, Origin=url, Referer=url + "/?pass=1")
        assert saved.status_code == 303 and saved.headers["location"] == "/?pass=1"
        assert _verdicts(folder)[0]["answers"] == {**YES, "why": None}
    # a new server, a new token: the old one is refused
    with _served(folder) as url:
        assert _token(httpx.get(url).text) != token
        assert _post(url, form).status_code == 403


def test_two_servers_for_one_annotator_keep_every_verdict(tmp_path: Path) -> None:
    folder = _synthetic(tmp_path / "p", 40)
    blinds = [r["blind_id"] for r in _verdicts(folder)]
    with _cli_server(folder) as (_, one), _cli_server(folder) as (_, two):
        assert one != two  # the default port is one the OS picks, so both could start
        tokens = {url: _token(httpx.get(url).text) for url in (one, two)}
        statuses: list[int] = []

        def annotate(mine: list[str]) -> None:
            for n, blind in enumerate(mine):
                url = (one, two)[n % 2]
                form = {"token": tokens[url], "pass": "1", "blind_id": blind, "why": blind}
                statuses.append(_post(url, {**form, **YES}).status_code)

        workers = [threading.Thread(target=annotate, args=(blinds[k::4],)) for k in range(4)]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()
    assert statuses == [303] * 40
    rows = _verdicts(folder)
    assert [r["blind_id"] for r in rows] == blinds  # each row once, in the package's order
    assert [r["answers"] for r in rows] == [{**YES, "why": b} for b in blinds]


def test_unknown_or_missing_blind_id_is_refused(tmp_path: Path) -> None:
    folder = _synthetic(tmp_path / "p", 2)
    before = _verdicts(folder)
    with _served(folder) as url:
        token = _token(httpx.get(url).text)
        unknown = _post(url, {"token": token, "pass": "1", "blind_id": "b-nope", **YES})
        assert unknown.status_code == 404 and "b-nope" in unknown.text
        for blind in ({}, {"blind_id": ""}):
            missing = _post(url, {"token": token, "pass": "1", **blind, **YES})
            assert missing.status_code == 400 and "blind_id" in missing.text
    assert _verdicts(folder) == before


def test_values_outside_the_allowed_ones_are_refused(tmp_path: Path) -> None:
    folder = _synthetic(tmp_path / "p", 2)
    before = _verdicts(folder)
    blind = before[0]["blind_id"]
    with _served(folder) as url:
        token = _token(httpx.get(url).text)
        form = {"token": token, "pass": "1", "blind_id": blind, **YES}
        for bad, word in (
            ({**form, "item_unanswerable": "maybe"}, "item_unanswerable"),
            ({**form, "twin_answerable": HOSTILE}, "twin_answerable"),
            ({k: v for k, v in form.items() if k != "twin_answerable"}, "twin_answerable"),
            ({**form, "admin": "1"}, "admin"),
            ({**form, "pass": "3"}, "pass"),
            ({**form, "pass": ""}, "pass"),
        ):
            refused = _post(url, bad)
            assert refused.status_code == 400 and word in refused.text, bad
            assert HOSTILE not in refused.text
        body = str(httpx.QueryParams(form).add("item_unanswerable", "no")).encode()
        length = {"Content-Length": str(len(body))}
        twice = _raw_post(
            url, {**length, "Content-Type": "application/x-www-form-urlencoded"}, body
        )
        assert twice[0] == 400 and "twice" in twice[1]
        latin1 = _raw_post(url, {"Content-Length": "4"}, b"a=\xff\xfe")
        assert latin1[0] == 400
    assert _verdicts(folder) == before


def test_a_huge_body_is_refused_before_it_is_read(tmp_path: Path) -> None:
    folder = _synthetic(tmp_path / "p", 1)
    before = _verdicts(folder)
    with _served(folder) as url:
        token = _token(httpx.get(url).text)
        form = {"token": token, "pass": "1", "blind_id": before[0]["blind_id"], **YES}
        # 30 MB announced and never sent: the reply comes from the header alone
        status, text = _raw_post(url, {"Content-Length": str(30_000_000)})
        assert status == 413 and str(MAX_BODY) in text
        # 30 MB sent: refused, nothing saved, and the client still gets the reply
        huge = _post(url, {**form, "why": "x" * 30_000_000})
        assert huge.status_code == 413
        # just under the limit is read
        fits = _post(url, {**form, "why": "x" * (MAX_BODY - 400)})
        assert fits.status_code == 303
    assert len(_verdicts(folder)[0]["answers"]["why"]) == MAX_BODY - 400


def test_bad_content_length_gets_a_reply(tmp_path: Path) -> None:
    folder = _synthetic(tmp_path / "p", 1)
    with _served(folder) as url:
        for value in ("abc", "-5", "1e3", "", "0x10", "\u00b2", "6, 6"):
            status, text = _raw_post(url, {"Content-Length": value}, b"pass=1")
            assert status == 400 and "Content-Length" in text, value
        status, text = _raw_post(url, {"Content-Length": "60"}, b"pass=1", half_close=True)
        assert status == 400 and "shorter" in text
        assert _raw_post(url, {})[0] == 411
        status, _ = _raw_post(url, {"Transfer-Encoding": "chunked"}, b"0\r\n\r\n")
        assert status == 411
        assert httpx.get(url + "/?pass=1").status_code == 200  # still serving


def test_pass_one_is_read_only_once_pass_two_opens(tmp_path: Path) -> None:
    folder = _synthetic(tmp_path / "p", 2)
    blinds = [r["blind_id"] for r in _verdicts(folder)]
    with _served(folder) as url:
        token = _token(httpx.get(url).text)
        for blind in blinds:
            form = {"token": token, "pass": "1", "blind_id": blind, **YES}
            assert _post(url, form).status_code == 303
        done = _verdicts(folder)
        again = {"token": token, "pass": "1", "blind_id": blinds[0], "item_unanswerable": "no"}
        refused = _post(url, {**again, "twin_answerable": "yes"})
        assert refused.status_code == 403 and "read-only" in refused.text
        page = httpx.get(url + "/?pass=1").text
        assert "read-only" in page and "<form" not in page
        two = _post(url, {"token": token, "pass": "2", "blind_id": blinds[0], **YES})
        assert two.status_code == 303
    assert _verdicts(folder) == done
    assert _verdicts(folder, 2)[0]["blind_id"] in blinds


def test_item_and_legend_text_is_escaped(tmp_path: Path) -> None:
    folder = _synthetic(tmp_path / "p", 1, text=HOSTILE)
    with _served(folder) as url:
        pages = [httpx.get(url + "/?pass=1").text]
        token = _token(pages[0])
        blind = _verdicts(folder)[0]["blind_id"]
        assert _post(url, {"token": token, "pass": "1", "blind_id": blind, **YES}).is_redirect
        pages.append(httpx.get(url + "/?pass=2").text)
    for page in pages:
        assert "<img" not in page
        # the item's state, instructions, legend key and value; the twin's state, instructions,
        # option; the why question: 8 places, each escaped
        assert page.count("&lt;img src=x onerror=&quot;alert(1)&quot;&gt;") == 8


def _annotate_in_order(
    url: str, token: str, todo: list[str], attempted: list[str], acknowledged: list[str]
) -> None:
    """Post a verdict (why = its blind id) for each of `todo` in turn until one fails."""
    for blind in todo:
        attempted.append(blind)
        form = {"token": token, "pass": "1", "blind_id": blind, "why": blind, **YES}
        try:
            if _post(url, form).status_code != 303:
                return
        except httpx.TransportError:
            return
        acknowledged.append(blind)


def test_kill_minus_nine_leaves_a_whole_verdict_file(tmp_path: Path) -> None:
    folder = _synthetic(tmp_path / "p", 60)
    blinds = [r["blind_id"] for r in _verdicts(folder)]
    for kill_after in (1, 4, 9):
        saved = {r["blind_id"] for r in _verdicts(folder) if r["answers"]["why"]}
        attempted: list[str] = []
        acknowledged: list[str] = []
        with _cli_server(folder) as (proc, url):
            token = _token(httpx.get(url).text)
            todo = [b for b in blinds if b not in saved]
            args = (url, token, todo, attempted, acknowledged)
            worker = threading.Thread(target=_annotate_in_order, args=args)
            worker.start()
            assert _wait(lambda: len(acknowledged) >= kill_after)  # noqa: B023 (waited on here)
            os.kill(proc.pid, signal.SIGKILL)
            worker.join()
        rows = _verdicts(folder)  # parses: no torn line
        assert [r["blind_id"] for r in rows] == blinds
        # saved is what was posted, in posting order: a prefix (the post in flight at the
        # kill saved or not), each verdict whole
        fresh = [r["blind_id"] for r in rows if r["answers"]["why"] and r["blind_id"] not in saved]
        assert fresh in (attempted[: len(acknowledged)], attempted[: len(acknowledged) + 1])
        answered = [r for r in rows if r["answers"]["why"]]
        assert all(r["answers"] == {**YES, "why": r["blind_id"]} for r in answered)
        assert len(answered) >= kill_after
