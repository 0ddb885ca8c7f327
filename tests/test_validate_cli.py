"""`twinbench validate`: every kind of bad input is one `FILE:LINE:` line and exit code 2."""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from conftest import EXAMPLES, write_rows
from twinbench.cli import app

Rows = list[dict[str, Any]]


def _set(line: int, path: str, value: Any) -> Callable[[Rows], Rows]:
    def mutate(rows: Rows) -> Rows:
        target = rows[line - 1]
        *parents, leaf = path.split(".")
        for key in parents:
            target = target[key]
        target[leaf] = value
        return rows

    return mutate


CASES: dict[str, tuple[Callable[[Rows], Rows], int, str]] = {
    "wrong field type": (_set(1, "seed", "forty-two"), 1, "seed: Input should be a valid integer"),
    "unknown reason code": (_set(1, "expected.reason", "too_hard"), 1, "expected.reason"),
    "missing twin": (lambda rows: [rows[0], *rows[2:]], 1, "twin 'tw-001' of 'us-001' is missing"),
    "broken twin link": (_set(2, "twin_id", "us-002"), 2, "already paired with 'tw-002'"),
    "duplicate id": (lambda rows: [*rows, copy.deepcopy(rows[0])], 13, "duplicate id 'us-001'"),
    "256 options": (
        _set(1, "question.options", [f"option {i}" for i in range(256)]),
        1,
        "question.options: List should have at most 255 items",
    ),
    "answer not among options": (_set(2, "expected.answer", "legal"), 2, "not one of the options"),
    "code/family mismatch": (
        _set(1, "expected.reason", "contradictory_options"),
        1,
        "does not match family",
    ),
    "the answer duplicated on a twin": (
        _set(2, "question.options", ["billing", "Billing!", "sales"]),
        2,
        "collide after normalisation",
    ),
    "duplicate options outside contradictory_options (unanswerable)": (
        _set(1, "question.options", ["billing", "Billing!", "sales"]),
        1,
        "only contradictory_options items and answerable items (on a distractor)",
    ),
    "score answer not in legend": (
        _set(4, "expected.answer", 7),
        4,
        "not one of the legend values",
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_items_give_one_line(
    case: str, tmp_path: Path, example_items: Rows, runner: CliRunner
) -> None:
    mutate, line, message = CASES[case]
    path = write_rows(tmp_path / "items.jsonl", mutate(example_items))
    result = runner.invoke(app, ["validate", str(path)])
    assert result.exit_code == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith(f"{path}:{line}: ")
    assert message in lines[0]


def test_truncated_json(tmp_path: Path, runner: CliRunner) -> None:
    text = (EXAMPLES / "items.jsonl").read_text("utf-8")
    path = tmp_path / "items.jsonl"
    path.write_text(text[: len(text) - 40], "utf-8")
    result = runner.invoke(app, ["validate", str(path)])
    assert result.exit_code == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith(f"{path}:12: invalid JSON (unexpected end of data")


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "{path}: no such file"),
        ("", "{path}: file is empty (expected one JSON object per line)"),
        ("\n\n", "{path}: file is empty (expected one JSON object per line)"),
        (
            "id,family,answerable\nus-1,underspecified_state,false\n",
            "{path}:1: looks like CSV, not JSON Lines (one JSON object per line)",
        ),
    ],
)
def test_missing_empty_and_csv_files(
    content: str | None, message: str, tmp_path: Path, runner: CliRunner
) -> None:
    path = tmp_path / "items.jsonl"
    if content is not None:
        path.write_text(content)
    result = runner.invoke(app, ["validate", str(path)])
    assert result.exit_code == 2
    assert result.stderr.strip() == message.format(path=path)


def test_response_for_unknown_item(tmp_path: Path, runner: CliRunner) -> None:
    responses = write_rows(
        tmp_path / "responses.jsonl",
        [
            {
                "item_id": "us-001",
                "system": "s",
                "status": "ok",
                "abstain": True,
                "reason": "underspecified_state",
            },
            {
                "item_id": "nope",
                "system": "s",
                "status": "ok",
                "abstain": True,
                "reason": "underspecified_state",
            },
        ],
    )
    result = runner.invoke(
        app, ["validate", str(EXAMPLES / "items.jsonl"), "--responses", str(responses)]
    )
    assert result.exit_code == 2
    assert result.stderr.strip() == f"{responses}:2: response for unknown item 'nope'"


def test_clean_files_exit_zero(runner: CliRunner) -> None:
    result = runner.invoke(
        app,
        ["validate", str(EXAMPLES / "items.jsonl"), "-r", str(EXAMPLES / "responses.jsonl")],
    )
    assert result.exit_code == 0, result.output


def test_many_problems_are_capped(tmp_path: Path, example_items: Rows, runner: CliRunner) -> None:
    rows = [copy.deepcopy(example_items[0]) for _ in range(30)]
    path = write_rows(tmp_path / "items.jsonl", rows)
    result = runner.invoke(app, ["validate", str(path)])
    assert result.exit_code == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 21
    assert lines[-1] == "... 10 more (30 problems in all)"
