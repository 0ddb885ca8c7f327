"""`twinbench report` and `twinbench compare` write self-contained HTML that really renders.

The pages are opened in headless Chromium (Debian's `chromium`, installed by .ci/run): the
test fails on any console message from the page, and checks every figure is drawn (an
inline <svg> with path elements) in the DOM Chromium built.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import system_tool
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
