"""Issue 11's findings, each reproduced: every printed number rests on valid rows only.

Bad response rows, resuming with another system, benchmarks that are not what their manifest
says, requests that leak the label, option permutations that drop fields, the declared-language
rule, and output-path problems: each is an exit 2 with one `FILE:LINE: problem` line.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from conftest import EXAMPLES, read_rows, write_rows
from twinbench.builder import build
from twinbench.cli import app
from twinbench.records import ChoiceQuestion, Item
from twinbench.runner import request_for
from twinbench.systems.base import Request

ITEMS = EXAMPLES / "items.jsonl"


def _one_line_error(result: Any, where: str) -> str:
    """The single error line of a failed command; checks exit 2, no traceback, the location."""
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("error: ")]
    assert len(errors) == 1, result.output
    assert where in errors[0], errors[0]
    return errors[0]


def _responses_with(tmp_path: Path, line: int, change: dict[str, Any] | None) -> Path:
    """The example responses with row `line` (1-based) updated by `change` (None: repeated)."""
    rows = read_rows(EXAMPLES / "responses.jsonl")
    if change is None:
        rows.insert(line, dict(rows[line - 1]))
    else:
        rows[line - 1] = {k: v for k, v in (rows[line - 1] | change).items() if v is not ...}
    path = tmp_path / "responses.jsonl"
    write_rows(path, rows)
    return path


# (row to change, the change, a phrase of the error); rows: 1 us-001 choice abstains,
# 2 tw-001 choice answers, 7 co-004 noul abstains, 12 tw-006 noul answers P(yes) 0.3
BAD_ROWS = [
    pytest.param(1, None, "second response for item 'us-001'", id="duplicated-row"),
    pytest.param(2, {"confidence": 1.5}, "confidence", id="confidence-1.5"),
    pytest.param(2, {"confidence": -3}, "confidence", id="confidence-negative"),
    pytest.param(12, {"answer": 1.5}, "P(yes), a number in [0, 1]", id="p-yes-1.5"),
    pytest.param(12, {"answer": -7}, "P(yes), a number in [0, 1]", id="p-yes-negative"),
    pytest.param(12, {"answer": True}, "P(yes), a number in [0, 1]", id="p-yes-bool"),
    pytest.param(1, {"reason": "tired"}, "reason", id="unknown-reason"),
    pytest.param(1, {"reason": ["underspecified_state"]}, "reason", id="reason-list"),
    pytest.param(1, {"status": ["ok"]}, "status", id="status-list"),
    pytest.param(1, {"trial": True}, "trial", id="trial-true"),
    pytest.param(1, {"trial": -1}, "trial", id="trial-negative"),
    pytest.param(1, {"permutation": 1.0}, "permutation", id="permutation-float"),
    pytest.param(2, {"answer": {"text": "Billing"}}, "answer", id="dict-answer"),
    pytest.param(2, {"answer": 3}, "a choice answer is the option text", id="number-for-choice"),
    pytest.param(
        1, {"status": "error", "error": "boom"}, "never an abstention", id="error-abstains"
    ),
    pytest.param(1, {"answer": "Billing"}, "an abstention carries no answer", id="abstain-answer"),
    pytest.param(2, {"reason": "underspecified_state"}, "carries no reason", id="answer-reason"),
    pytest.param(2, {"system": "another"}, "in a file of 'example-mixed'", id="two-systems"),
    pytest.param(2, {"item_id": "nope"}, "unknown item 'nope'", id="unknown-item"),
    pytest.param(2, {"latency_ms": -1}, "latency_ms", id="negative-latency"),
]


@pytest.mark.parametrize(("line", "change", "phrase"), BAD_ROWS)
def test_grade_and_validate_refuse_rows_outside_the_contract(
    tmp_path: Path, runner: CliRunner, line: int, change: dict[str, Any] | None, phrase: str
) -> None:
    path = _responses_with(tmp_path, line, change)
    bad_line = line + 1 if change is None else line
    where = f"{path}:{bad_line}:"
    graded = runner.invoke(app, ["grade", "-i", str(ITEMS), "-r", str(path), "--out", "m"])
    assert phrase in _one_line_error(graded, where)
    assert not Path("m").exists()
    checked = runner.invoke(app, ["validate", str(ITEMS), "--responses", str(path)])
    assert checked.exit_code == 1 or checked.exit_code == 2, checked.output
    assert where in checked.output and phrase in checked.output


def test_a_repeated_json_key_is_refused_everywhere(tmp_path: Path, runner: CliRunner) -> None:
    lines = (EXAMPLES / "responses.jsonl").read_bytes().splitlines(keepends=True)
    # orjson would keep the last copy silently: abstain false, answer ... an ambiguous row
    lines[2] = lines[2].replace(b'"status": "ok"', b'"status": "ok", "status": "error"')
    path = tmp_path / "responses.jsonl"
    path.write_bytes(b"".join(lines))
    graded = runner.invoke(app, ["grade", "-i", str(ITEMS), "-r", str(path)])
    assert "duplicate key 'status'" in _one_line_error(graded, f"{path}:3:")
    items = tmp_path / "items.jsonl"
    rows = ITEMS.read_bytes().splitlines(keepends=True)
    rows[4] = rows[4].replace(b'"answerable": false', b'"answerable": false, "answerable": true')
    items.write_bytes(b"".join(rows))
    checked = runner.invoke(app, ["validate", str(items)])
    assert f"{items}:5: duplicate key 'answerable'" in checked.output


@pytest.mark.parametrize(
    ("change", "phrase"),
    [
        ({"answerable": "no"}, "answerable"),
        ({"state": "   "}, "state"),
        ({"seed": "7"}, "seed"),
    ],
)
def test_loose_item_values_are_refused(
    tmp_path: Path, runner: CliRunner, change: dict[str, Any], phrase: str
) -> None:
    rows = read_rows(ITEMS)
    rows[0] |= change
    path = tmp_path / "items.jsonl"
    write_rows(path, rows)
    checked = runner.invoke(app, ["validate", str(path)])
    assert checked.exit_code != 0
    assert f"{path}:1: {phrase}" in checked.output


def test_blank_instructions_and_options_are_refused(tmp_path: Path, runner: CliRunner) -> None:
    rows = read_rows(ITEMS)
    rows[0]["question"] = rows[0]["question"] | {"instructions": " \t"}
    rows[2]["question"] = dict(rows[1]["question"]) | {"options": ["a", ""]}
    path = tmp_path / "items.jsonl"
    write_rows(path, rows)
    checked = runner.invoke(app, ["validate", str(path)])
    assert f"{path}:1: question.instructions" in checked.output
    assert f"{path}:3: question.options.1" in checked.output


def test_a_byte_order_mark_is_read_as_utf8_not_called_csv(
    tmp_path: Path, runner: CliRunner
) -> None:
    path = tmp_path / "responses.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + (EXAMPLES / "responses.jsonl").read_bytes())
    plain = runner.invoke(
        app, ["grade", "-i", str(ITEMS), "-r", str(EXAMPLES / "responses.jsonl"), "--json"]
    )
    with_bom = runner.invoke(app, ["grade", "-i", str(ITEMS), "-r", str(path), "--json"])
    assert with_bom.exit_code == 0, with_bom.output
    assert json.loads(with_bom.stdout) == json.loads(plain.stdout)


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("bench")
    build(out, per_generator=2)
    return out


def _run(runner: CliRunner, bench: Path, out: Path, spec: str, *extra: str) -> Any:
    return runner.invoke(app, ["run", "-b", str(bench), "-s", spec, "-o", str(out), *extra])


def test_resuming_with_another_system_or_plan_is_refused(
    bench: Path, tmp_path: Path, runner: CliRunner
) -> None:
    out = tmp_path / "run"
    first = _run(runner, bench, out, "always-answer:first", "--limit", "10")
    assert first.exit_code == 0, first.output
    before = (out / "responses.jsonl").read_bytes()
    other = _run(runner, bench, out, "always-abstain")
    message = _one_line_error(other, f"{out / 'run.json'}: resuming needs the same system card")
    assert "always-answer:first" in message and "always-abstain:underspecified_state" in message
    trials = _run(runner, bench, out, "always-answer:first", "--limit", "10", "--trials", "2")
    assert "--trials" in _one_line_error(trials, "resuming needs the same --trials")
    # fewer items than the run has is not an extension (more is: tests/test_report_folders.py)
    items = _run(runner, bench, out, "always-answer:first", "--limit", "8")
    _one_line_error(items, "resuming needs the same benchmark items")
    assert (out / "responses.jsonl").read_bytes() == before
    assert json.loads((out / "run.json").read_text())["system"]["name"] == "always-answer:first"
    again = _run(runner, bench, out, "always-answer:first", "--limit", "10")
    assert again.exit_code == 0 and (out / "responses.jsonl").read_bytes() == before


def test_resume_refuses_rows_of_another_system(
    bench: Path, tmp_path: Path, runner: CliRunner
) -> None:
    out = tmp_path / "run"
    assert _run(runner, bench, out, "always-abstain", "--limit", "4").exit_code == 0
    rows = read_rows(out / "responses.jsonl")
    rows[1]["system"] = "smuggled"
    write_rows(out / "responses.jsonl", rows)
    again = _run(runner, bench, out, "always-abstain", "--limit", "4")
    assert "a response of 'smuggled'" in _one_line_error(again, f"{out / 'responses.jsonl'}:2:")


def test_a_benchmark_that_differs_from_its_manifest_is_refused(
    bench: Path, tmp_path: Path, runner: CliRunner
) -> None:
    copy = tmp_path / "bench"
    copy.mkdir()
    for name in ("items.jsonl", "items.index.jsonl", "manifest.json"):
        (copy / name).write_bytes((bench / name).read_bytes())
    (copy / "holdout").mkdir()
    (copy / "holdout" / "items.jsonl").write_bytes((bench / "holdout" / "items.jsonl").read_bytes())
    rows = read_rows(copy / "items.jsonl")
    write_rows(copy / "items.jsonl", rows[:-2])  # a pair gone, the manifest unchanged
    result = _run(runner, copy, tmp_path / "run", "always-abstain")
    assert "sha256 differs from" in _one_line_error(result, f"{copy / 'items.jsonl'}:")
    (copy / "manifest.json").unlink()
    result = _run(runner, copy, tmp_path / "run", "always-abstain")
    _one_line_error(result, f"{copy / 'manifest.json'}: no manifest")


def test_requests_carry_no_label_and_permutations_keep_every_field(bench: Path) -> None:
    fields = {f.name for f in dataclasses.fields(Request)}
    assert fields == {"item_id", "state", "question", "trial", "permutation", "extra"}
    item = Item.model_validate(read_rows(ITEMS)[0])
    question = item.question
    assert isinstance(question, ChoiceQuestion)
    paired = item.model_copy(
        update={"question": question.model_copy(update={"abstain_option": "I abstain"})}
    )
    seen = [request_for(paired, 0, k, paired.id).question for k in range(4)]
    assert all(isinstance(q, ChoiceQuestion) and q.abstain_option == "I abstain" for q in seen)
    orders = {tuple(q.options) for q in seen if isinstance(q, ChoiceQuestion)}
    assert len(orders) > 1 and all(sorted(o) == sorted(question.options) for o in orders)


def _run_json_languages(tmp_path: Path, languages: Any) -> Path:
    folder = tmp_path / "run"
    folder.mkdir(exist_ok=True)
    (folder / "responses.jsonl").write_bytes((EXAMPLES / "responses.jsonl").read_bytes())
    card = {"name": "example-mixed", "languages": languages}
    record = {"schema": "twinbench.run/1", "system": card, "status": "imported"}
    (folder / "run.json").write_text(json.dumps(record))
    return folder


def test_grade_reads_the_declared_languages_from_the_run(tmp_path: Path, runner: CliRunner) -> None:
    folder = _run_json_languages(tmp_path, ["en", "es"])
    args = ["grade", "-i", str(ITEMS), "-r", str(folder / "responses.jsonl"), "--json"]
    from_card = json.loads(runner.invoke(app, args).stdout)
    assert from_card["languages"] == ["en", "es"]
    overridden = json.loads(runner.invoke(app, [*args, "--languages", "en"]).stdout)
    assert overridden["languages"] == ["en"]
    # ol-005 (Spanish, answered "facturación") is answerable once es is declared
    assert from_card != overridden
    for bad in ("en", 5, [], ["en", 3]):
        folder = _run_json_languages(tmp_path, bad)
        result = runner.invoke(app, args)
        message = _one_line_error(result, f"{folder / 'run.json'}: system")
        assert "languages" in message


@pytest.mark.parametrize("command", ["grade", "build", "run"])
def test_an_output_path_under_a_file_is_exit_2(
    bench: Path, tmp_path: Path, runner: CliRunner, command: str
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    out = blocker / "out"
    args = {
        "grade": [
            "grade",
            "-i",
            str(ITEMS),
            "-r",
            str(EXAMPLES / "responses.jsonl"),
            "--out",
            str(out),
        ],
        "build": ["build", "--out", str(out), "--per-generator", "1"],
        "run": ["run", "-b", str(bench), "-s", "always-abstain", "-o", str(out), "--limit", "2"],
    }[command]
    result = runner.invoke(app, args)
    _one_line_error(result, str(blocker))
    assert blocker.read_text() == "not a folder"
