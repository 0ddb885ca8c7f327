"""An annotator does pass one in the audit page, driven in headless Chromium (Selenium)."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import httpx
import pytest
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from typer.testing import CliRunner

from conftest import read_rows, system_tool
from twinbench.audit.serve import Session, make_server
from twinbench.cli import app


def _answered(package: Path, count: int, timeout: float = 10.0) -> bool:
    """Wait (up to `timeout`) until `count` pass-one verdicts are in ann's verdict file."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        rows = read_rows(package / "verdicts" / "ann_pass1.jsonl")
        if sum(r["answers"]["item_unanswerable"] == "yes" for r in rows) >= count:
            return True
        time.sleep(0.05)
    return False


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
        refused = httpx.post(url + "/verdict", data={"pass": "2", "blind_id": "x"})
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
        driver.get(url + "/?pass=2")
        assert "How it was built" in driver.page_source
    finally:
        driver.quit()
        server.shutdown()
    why = {r["answers"]["why"] for r in read_rows(package / "verdicts" / "ann_pass1.jsonl")}
    assert why == {"support sentence missing"}
    # the other annotator's file is untouched
    bob = read_rows(package / "verdicts" / "bob_pass1.jsonl")
    assert all(v is None for r in bob for v in r["answers"].values())
    assert json.loads((package / "KEY.json").read_text())["annotators"] == ["ann", "bob"]
