"""`twinbench report` and `twinbench compare` write self-contained HTML that really renders.

The pages are opened in headless Chromium (Debian's `chromium`, installed by .ci/run): the
test fails on any console message from the page, and checks every figure is drawn (an
inline <svg> with path elements) in the DOM Chromium built. The report page is also opened
through ChromeDriver in a 1280 px wide window, where the tests read what a reader sees: no
horizontal scroll, titled and labelled charts, the system cards and the benchmark's provenance
(checked against run.json and manifest.json), intervals in the tables (against metrics.json),
the gallery of errors (against items.jsonl and responses.jsonl) and the broken-run banner.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from conftest import read_rows, system_tool, write_rows
from twinbench.builder import build
from twinbench.cli import app

CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--enable-logging=stderr",
    "--v=0",
]


def render(page: Path, profile: Path) -> tuple[str, list[str]]:
    """(DOM after rendering, console lines) from headless Chromium."""
    chromium = system_tool("chromium")
    done = subprocess.run(
        [
            chromium,
            *CHROMIUM_FLAGS,
            f"--user-data-dir={profile}",
            "--dump-dom",
            page.resolve().as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    console = [line for line in done.stderr.splitlines() if ":CONSOLE" in line]
    return done.stdout, console


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("report")
    build(root / "benchmark", per_generator=4)
    runner = CliRunner()
    for spec, extra in (("minilm", ["--permutations", "2"]), ("always-answer:random", [])):
        name = spec.split(":")[0]
        result = runner.invoke(
            app,
            [
                "run",
                "-b",
                str(root / "benchmark"),
                "-s",
                spec,
                "-o",
                str(root / "runs" / name),
                *extra,
            ],
        )
        assert result.exit_code == 0, result.output
    return root


def test_report_html_renders_every_plot(folder: Path, tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["report", str(folder)])
    assert result.exit_code == 0, result.output
    page = folder / "report.html"
    text = page.read_text()
    # self-contained: nothing to fetch (xmlns URIs in the SVGs are names, not requests)
    assert not re.search(r'(src|href)="(https?:)?//', text) and "<script" not in text
    dom, console = render(page, tmp_path / "profile")
    assert console == []
    figures = re.findall(r'<figure class="plot">(.*?)</figure>', dom, flags=re.S)
    # per-family recall and precision, twin vs recall, risk-coverage, permutation, shift,
    # calibration (minilm gives confidences and ran two option orders)
    assert len(figures) == 7
    for figure in figures:
        assert "<svg" in figure and figure.count("<path") >= 3
    metrics = json.loads((folder / "metrics.json").read_text())
    assert set(metrics["systems"]) == {"minilm", "always-answer"}
    # family balance keeps 4 pairs per family (the smallest family's count), so 4 pairs x 2
    # items of underspecified_state, each seen under 2 option orders: 8 groups
    assert metrics["systems"]["minilm"]["permutation"]["underspecified_state"]["groups"] == 8


def test_compare_prints_a_table_and_writes_html(folder: Path, tmp_path: Path) -> None:
    out = tmp_path / "cmp"
    result = CliRunner().invoke(
        app,
        [
            "compare",
            str(folder / "runs" / "minilm"),
            str(folder / "runs" / "always-answer"),
            "--out",
            str(out),
        ],
    )
    assert result.exit_code == 0, result.output
    data = json.loads((out / "compare.json").read_text())
    # one pair of systems: the pair metrics over all families and per family (2 + 3 x 2),
    # then recall and twin accuracy per family (3 x 2); the headline first
    assert len(data["comparisons"]) == 14
    assert [(r["family"], r["metric"]) for r in data["comparisons"][:2]] == [
        ("all", "ideal_pair_rate"),
        ("all", "pair_score"),
    ]
    assert data["settings"]["correction"] == "Holm across 14 comparisons"
    holm = [row["test"]["holm_p"] for row in data["comparisons"]]
    raw = [row["test"]["p_value"] for row in data["comparisons"]]
    assert all(h >= p for h, p in zip(holm, raw, strict=True))
    dom, console = render(out / "compare.html", tmp_path / "profile")
    assert console == [] and dom.count("<svg") == 1


# -- the report page as a reader sees it (ChromeDriver, a 1280 px wide window) --------------

WIDTH = 1280


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = system_tool("chromium")
    for flag in (*CHROMIUM_FLAGS, f"--window-size={WIDTH},900", "--hide-scrollbars"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(options=options, service=Service(system_tool("chromedriver")))
    try:
        yield driver
    finally:
        driver.quit()


def _open(driver: Any, page: Path) -> list[Any]:
    """Load `page`; the console messages it logged."""
    driver.get_log("browser")  # drop what an earlier page logged
    driver.get(page.resolve().as_uri())
    return list(driver.get_log("browser"))


def _scroll_width(driver: Any) -> int:
    """The page's width with every <details> opened (as a reader reading the gallery has)."""
    driver.execute_script("document.querySelectorAll('details').forEach(d => d.open = true)")
    return int(driver.execute_script("return document.documentElement.scrollWidth"))


def _section(driver: Any, heading: str) -> str:
    """The text of the section under the h2 `heading` (closed <details> included)."""
    text = driver.execute_script(
        "for (const s of document.querySelectorAll('section')) {"
        "  if (s.querySelector('h2').textContent === arguments[0]) return s.textContent; }"
        "return null;",
        heading,
    )
    assert text is not None, f"no section {heading!r}"
    return str(text)


@pytest.fixture(scope="module")
def reported(folder: Path) -> Path:
    """report.html of `folder`, written once for the module."""
    result = CliRunner().invoke(app, ["report", str(folder)])
    assert result.exit_code == 0, result.output
    return folder / "report.html"


@pytest.fixture
def page(reported: Path, browser: Any) -> Any:
    """The browser showing the report of `folder`, which logged nothing to its console."""
    assert _open(browser, reported) == []
    return browser


def test_report_page_fits_1280_px_and_every_chart_is_labelled(page: Any) -> None:
    assert page.execute_script("return window.innerWidth") == WIDTH
    assert _scroll_width(page) <= WIDTH
    labels = page.execute_script(
        "return Array.from(document.querySelectorAll('figure.plot')).map(f =>"
        "  ['title', 'xlabel', 'ylabel'].map(k => {"
        "    const e = f.querySelector(`[id$='-${k}']`); return e ? e.textContent.trim() : ''; }));"
    )
    assert len(labels) == 7 and all(all(parts) for parts in labels), labels
    assert labels[0] == ["Abstention recall", "family", "abstention recall (95% interval)"]
    precision = page.execute_script(
        "return document.querySelectorAll('figure.plot')[1].textContent"
    )
    # always-answer never abstains: its precision is undefined in all three families, drawn
    # as such (not as a zero bar)
    assert precision.count("undefined") >= 3


def test_report_page_shows_cards_and_provenance(folder: Path, page: Any) -> None:
    systems = _section(page, "Systems")
    for run in ("minilm", "always-answer"):
        card = json.loads((folder / "runs" / run / "run.json").read_text())["system"]
        for field in ("name", "version", "notes"):
            assert f"{field}{card[field]}" in systems, (run, field)
        assert f"languages{', '.join(card['languages'])}" in systems
    assert "minilm@0.05" in systems and "1 trial(s) x 2 option order(s)" in systems
    assert "24 (24 valid, 0 invalid, 0 rejected, 0 error)" in systems  # always-answer
    bench = folder / "benchmark"
    manifest = json.loads((bench / "manifest.json").read_text())
    provenance = _section(page, "Benchmark")
    sha = hashlib.sha256((bench / "manifest.json").read_bytes()).hexdigest()
    assert f"manifest.json sha256{sha}" in provenance
    assert f"seed{manifest['seed']}" in provenance
    assert f"built bytwinbench {manifest['twinbench_version']}" in provenance
    items = len(read_rows(bench / "items.jsonl"))
    assert f"items{items} (items.jsonl sha256 {manifest['files']['items.jsonl']})" in provenance
    for g in manifest["generators"]:
        assert f"{g['name']}@{g['version']} ({g['family']}" in provenance


def _cells(driver: Any, heading: str) -> list[list[str]]:
    """The body cells of the first table under `heading`, as text ('value[low, high]')."""
    rows = driver.execute_script(
        "for (const s of document.querySelectorAll('section')) {"
        "  if (s.querySelector('h2').textContent !== arguments[0]) continue;"
        "  return Array.from(s.querySelectorAll('table tbody tr')).map(r =>"
        "    Array.from(r.cells).map(c => c.textContent)); }",
        heading,
    )
    return [list(map(str, row)) for row in rows]


def test_report_tables_show_the_intervals(folder: Path, page: Any) -> None:
    metrics = json.loads((folder / "metrics.json").read_text())
    rows = {(r[0], r[1]): r for r in _cells(page, "Per family, macro mean first")}
    # items, twins, ideal pairs, pair score, recall, ...: recall is the 5th figure
    block = metrics["family_intervals"]["minilm"]["underspecified_state"]["recall"]
    recall = rows["minilm", "underspecified_state"][6]
    assert recall == f"{block['estimate']:.3f}[{block['low']:.3f}, {block['high']:.3f}]"
    # always-answer never abstains: recall 0 with the interval [0, 0], precision undefined
    assert rows["always-answer", "contradictory_options"][6] == "0.000[0.000, 0.000]"
    assert rows["always-answer", "contradictory_options"][7] == "-"
    pooled = {r[0]: r for r in _cells(page, "Pooled over all items")}
    ideal = metrics["overall_intervals"]["minilm"]["ideal_pair_rate"]
    assert (
        pooled["minilm"][1] == f"{ideal['estimate']:.3f}[{ideal['low']:.3f}, {ideal['high']:.3f}]"
    )
    # the shift table keeps report.md's interval: always-answer never abstains, +0.00 [0, 0]
    shifts = {r[0]: r for r in _cells(page, "Paired present / absent shift")}
    assert shifts["always-answer"][1:4] == ["0.0%[0.0, 0.0]", "0.0%[0.0, 0.0]", "+0.00[0.0, 0.0]"]
    shift = metrics["paired"]["systems"]["minilm"]["conditions"]["shift"]
    assert shifts["minilm"][3] == (
        f"{100 * shift['estimate']:+.2f}[{100 * shift['low']:.1f}, {100 * shift['high']:.1f}]"
    )
    assert "+0.00 [0.0, 0.0]" in (folder / "report.md").read_text()


def test_gallery_shows_always_answers_false_commits(folder: Path, page: Any) -> None:
    """always-answer answers every item: per family, its 4 items are 4 false commits, and the
    gallery shows 3 of them, the pairs first in sha256 order of their pair ids."""
    items = {r["id"]: r for r in read_rows(folder / "benchmark" / "items.jsonl")}
    answers = {
        r["item_id"]: r["answer"] for r in read_rows(folder / "runs/always-answer/responses.jsonl")
    }
    html_text = page.execute_script(
        "const h = Array.from(document.querySelectorAll('h3'))"
        "  .filter(e => e.textContent === 'always-answer').pop();"  # the gallery's, the last
        "let out = ''; for (let e = h.nextElementSibling; e && e.tagName !== 'H3';"
        "  e = e.nextElementSibling) out += e.textContent + '\\n'; return out;"
    )
    families = html_text.strip().split("\n")
    assert len(families) == 3
    for family, text in zip(
        ("underspecified_state", "contradictory_options", "out_of_language"), families, strict=True
    ):
        pairs = sorted(
            {i["pair_id"] for i in items.values() if i["family"] == family},
            key=lambda p: hashlib.sha256(p.encode()).hexdigest(),
        )
        assert len(pairs) == 4
        assert text.startswith(f"{family}: false commit 4")
        head = "false commit (answered an item it should have abstained on): 4 rows, 3 shown"
        assert head in text
        block = text.split(head)[1].split("wrong answer (")[0]  # the false commits only
        for pair in pairs:
            item = next(i for i in items.values() if i["pair_id"] == pair and not i["answerable"])
            if pair not in pairs[:3]:  # the fourth pair is not shown
                assert item["id"] not in block
                continue
            assert item["id"] in block and item["state"] in block
            answer = answers[item["id"]]
            noul = item["question"]["type"] == "noul"
            assert f"answered: {f'P(yes) = {answer}' if noul else answer}" in block
            assert "outcomefalse commit" in block


# -- broken runs: a banner, not results --------------------------------------------------------


def _failed_copy(source: Path, out: Path, failed: int, name: str) -> None:
    """A copy of run `source` whose first `failed` rows became invalid replies."""
    out.mkdir(parents=True)
    rows = read_rows(source / "responses.jsonl")
    for row in rows[:failed]:
        for key in ("abstain", "answer", "reason", "confidence"):
            row.pop(key, None)
        # a long unbroken reply: cut at 2,000 characters, wrapped inside the page's width
        raw = "<b>Sure!</b> " + "x" * 2_500
        row.update(status="invalid", error="no JSON object in the reply", raw=raw)
    system = f"openai:{name}"
    write_rows(out / "responses.jsonl", [{**r, "system": system} for r in rows])
    record = json.loads((source / "run.json").read_text())
    record["system"]["name"] = system
    (out / "run.json").write_text(json.dumps(record))


def test_banner_for_a_run_of_invalid_rows_only(folder: Path, tmp_path: Path, browser: Any) -> None:
    root = tmp_path / "broken"
    shutil.copytree(folder / "benchmark", root / "benchmark")
    good = folder / "runs" / "always-answer"
    shutil.copytree(good, root / "runs" / "always-answer")
    # 24 rows each: all invalid, 2 invalid (8.3% > 5%), 1 invalid (4.2%: still results)
    for name, failed in (("all-invalid", 24), ("two-invalid", 2), ("one-invalid", 1)):
        _failed_copy(good, root / "runs" / name, failed, name)
    result = CliRunner().invoke(app, ["report", str(root)])
    assert result.exit_code == 0, result.output
    assert _open(browser, root / "report.html") == []
    banners = browser.execute_script(
        "return Array.from(document.querySelectorAll('.banner')).map(b => b.textContent)"
    )
    fix = "Fix the run (see its responses' error field) before reading its rows below."
    assert banners == [
        "all-invalid (openai:all-invalid): these figures are not results. 24 responses: "
        f"0 valid, 24 invalid, 0 rejected, 0 error (100% invalid or error). {fix}",
        "two-invalid (openai:two-invalid): these figures are not results. 24 responses: "
        f"22 valid, 2 invalid, 0 rejected, 0 error (8% invalid or error). {fix}",
    ]
    # the banners come first, before any figure
    assert browser.execute_script(
        "return document.querySelector('.banner').compareDocumentPosition("
        "document.querySelector('section')) === Node.DOCUMENT_POSITION_FOLLOWING"
    )
    assert "all-invalid (openai:all-invalid): not results." in (root / "report.md").read_text()
    # the gallery shows the invalid replies, escaped: the raw text, no <b> element
    gallery = _section(browser, "Examples of errors")
    assert "invalid (the reply could not be read as a response): 8 rows, 3 shown" in gallery
    assert "<b>Sure!</b>" in gallery and "invalid: no JSON object in the reply" in gallery
    assert "x… (513 more characters)" in gallery  # 13 + 2,500 characters, 2,000 shown
    assert _scroll_width(browser) <= WIDTH
    assert browser.execute_script("return document.querySelectorAll('pre b').length") == 0


def test_no_banner_for_good_runs(page: Any) -> None:
    assert page.execute_script("return document.querySelectorAll('.banner').length") == 0


def test_two_reports_write_the_same_bytes(folder: Path) -> None:
    runner = CliRunner()
    files = ("report.html", "report.md", "metrics.json")
    assert runner.invoke(app, ["report", str(folder)]).exit_code == 0
    first = {name: (folder / name).read_bytes() for name in files}
    assert runner.invoke(app, ["report", str(folder)]).exit_code == 0
    assert {name: (folder / name).read_bytes() for name in files} == first


def test_card_fields_in_order_without_credentials() -> None:
    from twinbench.provenance import shown_fields

    card = {
        "notes": "n",
        "name": "srv",
        "api_key_env": "SRV_KEY",
        "languages": ["en"],
        "base_url": "http://user:pw@127.0.0.1:8080/v1?key=abc",
        "precision": "bf16",
        "auth_token": "t",
    }
    assert shown_fields(card) == [
        ("name", "srv"),
        ("base_url", "http://127.0.0.1:8080/v1"),
        ("precision", "bf16"),
        ("languages", ["en"]),
        ("notes", "n"),
    ]
