"""`twinbench import` on bad input: exit 2, one `FILE:LINE: problem` line, nothing written.

Each case writes a small file in the dataset's official format with one thing wrong and runs
the real command line. LINE is the file's line for JSON Lines and text errors, the CSV row
number (the header is row 1) for CSV and TSV files; a JSON document (SQuAD) names the record
by its path instead (`data[0].paragraphs[1]`). Rows that are well-formed but would make an
empty state, option or instructions are skipped (squad2, mnli, xnli, falseqa: the importers
skip a source they cannot pair) or refused (arcticqa, whose responses name every item).
"""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from twinbench.cli import app
from twinbench.importers import IMPORTERS
from twinbench.records import ChoiceQuestion

SOURCES = Path(__file__).parent / "data" / "sources"


def refused(runner: CliRunner, args: list[str], out: Path, message: str) -> str:
    """Run the CLI; check exit 2, one stderr line matching `message`, and nothing written."""
    result = runner.invoke(app, args)
    assert result.exit_code == 2, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert "Traceback" not in result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert re.search(message, lines[0]), lines[0]
    assert not out.exists(), sorted(out.rglob("*"))
    return lines[0]


def _import(runner: CliRunner, kind: str, path: Path, message: str) -> str:
    out = path.parent / "out"
    return refused(runner, ["import", kind, str(path), "--out", str(out)], out, message)


def _lines(path: Path) -> list[str]:
    return path.read_text("utf-8").splitlines()


def _write(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n", "utf-8")
    return path


def _check_items(pairs: list[Any]) -> None:
    """No state, option or instructions of any imported item is blank."""
    assert pairs
    for pair in pairs:
        for item in (pair.item, pair.twin):
            assert item.state.strip(), item.id
            assert isinstance(item.question, ChoiceQuestion)
            assert item.question.instructions.strip(), item.id
            assert all(option.strip() for option in item.question.options), item.id


# --- squad2: one JSON document --------------------------------------------------------------


def _squad() -> dict[str, Any]:
    data: dict[str, Any] = json.loads((SOURCES / "squad2-dev-mini.json").read_text("utf-8"))
    return data


def _squad_file(tmp_path: Path, data: Any) -> Path:
    path = tmp_path / "squad.json"
    path.write_text(json.dumps(data, indent=1), "utf-8")
    return path


def _qa(data: dict[str, Any], at: int = 1) -> dict[str, Any]:
    qa: dict[str, Any] = data["data"][0]["paragraphs"][0]["qas"][at]
    return qa


def test_squad2_invalid_utf8_names_the_line(tmp_path: Path, runner: CliRunner) -> None:
    path = _squad_file(tmp_path, _squad())
    lines = path.read_bytes().split(b"\n")
    lines[4] = lines[4].replace(b'"', b'"\xff', 1)
    path.write_bytes(b"\n".join(lines))
    _import(runner, "squad2", path, r"squad\.json:5: not UTF-8 text \(byte 0xff\)$")


def test_squad2_invalid_json_names_the_line(tmp_path: Path, runner: CliRunner) -> None:
    path = _squad_file(tmp_path, _squad())
    lines = _lines(path)
    lines[4] = lines[4] + " nope"
    _write(path, lines)
    _import(runner, "squad2", path, r"squad\.json:5: invalid JSON \(")


def _squad_cases() -> list[tuple[str, Any, str]]:
    no_context = _squad()
    del no_context["data"][0]["paragraphs"][1]["context"]
    no_question = _squad()
    del _qa(no_question, 2)["question"]
    number_question = _squad()
    _qa(number_question)["question"] = 7
    answers_text = _squad()
    _qa(answers_text, 0)["answers"] = ["1888"]
    no_id = _squad()
    del _qa(no_id, 3)["id"]
    impossible = _squad()
    _qa(impossible)["is_impossible"] = "no"
    qas_dict = _squad()
    qas_dict["data"][0]["paragraphs"][0]["qas"] = {}
    return [
        ("list", [1, 2], r"expected an object with a 'data' list"),
        ("no-data", {"version": "v2.0"}, r"missing key 'data'"),
        ("context", no_context, r"data\[0\]\.paragraphs\[1\]: missing key 'context'"),
        ("question", no_question, r"data\[0\]\.paragraphs\[0\]\.qas\[2\]: missing key 'question'"),
        ("type", number_question, r"qas\[1\]: 'question' must be a string, got int"),
        ("answers", answers_text, r"qas\[0\]\.answers\[0\]: expected an object, got str"),
        ("id", no_id, r"qas\[3\]: missing key 'id'"),
        ("impossible", impossible, r"qas\[1\]: 'is_impossible' must be true or false, got str"),
        ("qas", qas_dict, r"paragraphs\[0\]: 'qas' must be a list, got dict"),
    ]


@pytest.mark.parametrize(("case", "data", "message"), _squad_cases(), ids=lambda c: str(c)[:10])
def test_squad2_missing_keys_and_wrong_types_name_the_record(
    case: str, data: Any, message: str, tmp_path: Path, runner: CliRunner
) -> None:
    path = _squad_file(tmp_path, data)
    _import(runner, "squad2", path, rf"squad\.json: not a SQuAD 2\.0 JSON file \(.*{message}")


def test_squad2_skips_blank_questions_and_contexts(tmp_path: Path) -> None:
    data = _squad()
    first = data["data"][0]["paragraphs"][0]
    unanswerable = next(qa for qa in first["qas"] if qa.get("is_impossible"))
    unanswerable["question"] = " \t "
    blank = unanswerable["id"]
    data["data"][0]["paragraphs"][1]["context"] = "   "
    pairs = IMPORTERS["squad2"](_squad_file(tmp_path, data), 0)
    _check_items(pairs)
    full = IMPORTERS["squad2"](SOURCES / "squad2-dev-mini.json", 0)
    kept = {p.item.provenance["source_id"] for p in pairs}
    assert blank not in kept and len(pairs) < len(full)


# --- mnli: JSON Lines -----------------------------------------------------------------------


def _mnli(tmp_path: Path, edit: Any = None, line: int = 0) -> Path:
    rows = [json.loads(x) for x in _lines(SOURCES / "multinli-dev-mini.jsonl")]
    if edit is not None:
        edit(rows[line])
    return _write(tmp_path / "mnli.jsonl", [json.dumps(r) for r in rows])


def test_mnli_bad_json_names_its_own_line(tmp_path: Path, runner: CliRunner) -> None:
    path = _mnli(tmp_path)
    lines = _lines(path)
    lines[2] = lines[2][:-1]  # line 3 loses its closing brace
    _write(path, lines)
    _import(runner, "mnli", path, r"mnli\.jsonl:3: invalid JSON")


def test_mnli_invalid_utf8_names_its_line(tmp_path: Path, runner: CliRunner) -> None:
    path = _mnli(tmp_path)
    lines = path.read_bytes().split(b"\n")
    lines[1] = lines[1].replace(b"museum", b"mus\xe9um", 1)
    path.write_bytes(b"\n".join(lines))
    _import(runner, "mnli", path, r"mnli\.jsonl:2: ")


@pytest.mark.parametrize(
    ("line", "edit", "message"),
    [
        (1, lambda r: r.pop("sentence1"), r"mnli\.jsonl:2: missing key 'sentence1'"),
        (
            0,
            lambda r: r.update(sentence2=5),
            r"mnli\.jsonl:1: 'sentence2' must be a string, got int",
        ),
        (3, lambda r: r.pop("gold_label"), r"mnli\.jsonl:4: missing key 'gold_label'"),
        (2, lambda r: r.update(gold_label=None), r"mnli\.jsonl:3: 'gold_label' must be a string"),
        (
            4,
            lambda r: (r.pop("promptID"), r.pop("pairID")),
            r"mnli\.jsonl:5: missing key 'promptID' \(or 'pairID'\)",
        ),
    ],
    ids=["sentence1", "sentence2", "gold_label", "label-type", "prompt"],
)
def test_mnli_missing_keys_and_wrong_types_name_the_line(
    line: int, edit: Any, message: str, tmp_path: Path, runner: CliRunner
) -> None:
    _import(runner, "mnli", _mnli(tmp_path, edit, line), message)


def test_mnli_skips_a_blank_premise(tmp_path: Path) -> None:
    rows = [json.loads(x) for x in _lines(SOURCES / "multinli-dev-mini.jsonl")]
    first = rows[0]["promptID"]
    for row in rows:
        if row["promptID"] == first:
            row["sentence1"] = "  "
    path = _write(tmp_path / "mnli.jsonl", [json.dumps(r) for r in rows])
    pairs = IMPORTERS["mnli"](path, 0)
    _check_items(pairs)
    assert [p.item.provenance["source_id"] for p in pairs] == ["102", "104"]


# --- mnli: tab-separated (MultiNLI's .txt, GLUE's dev_matched.tsv) ---------------------------


def _mnli_tsv(tmp_path: Path, name: str, edit: Any) -> Path:
    rows = [line.split("\t") for line in _lines(SOURCES / name)]
    edit(rows)
    return _write(tmp_path / name, ["\t".join(r) for r in rows])


@pytest.mark.parametrize(
    ("name", "edit", "message"),
    [
        (
            "multinli-dev-mini.txt",
            lambda rows: rows.__setitem__(3, rows[3][:9]),
            r"multinli-dev-mini\.txt:4: 9 fields, the header has 15$",
        ),
        (
            "multinli-dev-mini.txt",
            lambda rows: rows[0].__setitem__(rows[0].index("sentence1"), "premise"),
            r"multinli-dev-mini\.txt:1: expected MultiNLI columns gold_label, sentence1, "
            r"sentence2, promptID \(missing: sentence1\)$",
        ),
        (  # GLUE's test_matched.tsv has no gold_label column: nothing to pair
            "glue-mnli-dev_matched-mini.tsv",
            lambda rows: [row.pop() for row in rows],
            r"dev_matched-mini\.tsv:1: expected MultiNLI columns .* \(missing: gold_label\)$",
        ),
        (
            "glue-mnli-dev_matched-mini.tsv",
            lambda rows: rows[5].append("extra"),
            r"dev_matched-mini\.tsv:6: 17 fields, the header has 16$",
        ),
    ],
    ids=["short-row", "column", "no-gold-label", "long-row"],
)
def test_mnli_tsv_bad_rows_name_their_row(
    name: str, edit: Any, message: str, tmp_path: Path, runner: CliRunner
) -> None:
    _import(runner, "mnli", _mnli_tsv(tmp_path, name, edit), message)


def test_mnli_tsv_invalid_utf8_names_its_line(tmp_path: Path, runner: CliRunner) -> None:
    path = _mnli_tsv(tmp_path, "multinli-dev-mini.txt", lambda rows: None)
    path.write_bytes(path.read_bytes().replace(b"council", b"c\xf6uncil", 1))
    _import(runner, "mnli", path, r"multinli-dev-mini\.txt:5: not UTF-8 text \(byte 0xf6\)$")


# --- xnli: TSV ------------------------------------------------------------------------------


def _xnli_rows() -> list[list[str]]:
    text = (SOURCES / "xnli-test-mini.tsv").read_text("utf-8")
    return [line.split("\t") for line in text.splitlines()]


def _tsv(tmp_path: Path, rows: list[list[str]]) -> Path:
    return _write(tmp_path / "xnli.tsv", ["\t".join(r) for r in rows])


def test_xnli_invalid_utf8_names_the_line(tmp_path: Path, runner: CliRunner) -> None:
    path = _tsv(tmp_path, _xnli_rows())
    lines = path.read_bytes().split(b"\n")
    lines[2] = lines[2].replace(b"shop", b"sh\xc3p", 1)
    path.write_bytes(b"\n".join(lines))
    _import(runner, "xnli", path, r"xnli\.tsv:3: not UTF-8 text \(byte 0xc3\)$")


def test_xnli_missing_column_is_named(tmp_path: Path, runner: CliRunner) -> None:
    rows = _xnli_rows()
    rows[0][rows[0].index("sentence2")] = "hypothesis"
    message = r"xnli\.tsv:1: expected XNLI columns .* \(missing: sentence2\)$"
    _import(runner, "xnli", _tsv(tmp_path, rows), message)


def test_xnli_short_row_names_its_row(tmp_path: Path, runner: CliRunner) -> None:
    rows = _xnli_rows()
    rows[3] = rows[3][:5]
    message = rf"xnli\.tsv:4: 5 fields, the header has {len(rows[0])}$"
    _import(runner, "xnli", _tsv(tmp_path, rows), message)


def test_xnli_skips_a_blank_translated_premise(tmp_path: Path) -> None:
    rows = _xnli_rows()
    premise = rows[0].index("sentence1")
    for row in rows[1:]:
        if row[0] == "es":
            row[premise] = " "
    pairs = IMPORTERS["xnli"](_tsv(tmp_path, rows), 0)
    _check_items(pairs)
    assert [p.item.id for p in pairs] == [f"xnli_import:7.{x}:u" for x in ("ru", "zh")]


# --- xnli: JSON Lines (xnli.test.jsonl) ----------------------------------------------------


def _xnli_jsonl(tmp_path: Path, edit: Any, line: int) -> Path:
    rows = [json.loads(x) for x in _lines(SOURCES / "xnli-test-mini.jsonl")]
    edit(rows[line])
    return _write(tmp_path / "xnli.jsonl", [json.dumps(r) for r in rows])


@pytest.mark.parametrize(
    ("line", "edit", "message"),
    [
        (4, lambda r: r.pop("language"), r"xnli\.jsonl:5: missing key 'language'$"),
        (6, lambda r: r.update(language=["ru"]), r"xnli\.jsonl:7: 'language' must be a string"),
        (2, lambda r: r.pop("sentence2"), r"xnli\.jsonl:3: missing key 'sentence2'$"),
    ],
    ids=["language", "language-type", "sentence2"],
)
def test_xnli_jsonl_missing_keys_name_the_line(
    line: int, edit: Any, message: str, tmp_path: Path, runner: CliRunner
) -> None:
    _import(runner, "xnli", _xnli_jsonl(tmp_path, edit, line), message)


def test_xnli_jsonl_bad_json_names_its_line(tmp_path: Path, runner: CliRunner) -> None:
    path = _xnli_jsonl(tmp_path, lambda r: None, 0)
    lines = _lines(path)
    lines[1] = lines[1].replace('"gold_label":', '"gold_label"', 1)
    _write(path, lines)
    _import(runner, "xnli", path, r"xnli\.jsonl:2: invalid JSON")


# --- falseqa: CSV ---------------------------------------------------------------------------


def _falseqa_rows() -> list[list[str]]:
    with (SOURCES / "falseqa-test-mini.csv").open(encoding="utf-8", newline="") as handle:
        return list(csv.reader(handle))


def _csv(path: Path, rows: list[list[str]]) -> Path:
    text = io.StringIO()
    csv.writer(text, lineterminator="\n").writerows(rows)
    path.write_text(text.getvalue(), "utf-8")
    return path


def test_falseqa_invalid_utf8_names_the_line(tmp_path: Path, runner: CliRunner) -> None:
    path = _csv(tmp_path / "falseqa.csv", _falseqa_rows())
    path.write_bytes(path.read_bytes().replace(b"tree have", b"tree h\x80ve", 1))
    _import(runner, "falseqa", path, r"falseqa\.csv:2: not UTF-8 text \(byte 0x80\)$")


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (
            lambda rows: rows[0].__setitem__(2, "is_false"),
            r"falseqa\.csv:1: expected FalseQA columns question, answer, label \(missing: label\)$",
        ),
        (lambda rows: rows[2].pop(), r"falseqa\.csv:3: 2 fields, the header has 3$"),
        (
            lambda rows: rows[1].__setitem__(2, "yes"),
            r"falseqa\.csv:2: label must be 0 or 1, got 'yes'$",
        ),
    ],
    ids=["column", "short-row", "label"],
)
def test_falseqa_bad_rows_name_their_row(
    edit: Any, message: str, tmp_path: Path, runner: CliRunner
) -> None:
    rows = _falseqa_rows()
    edit(rows)
    _import(runner, "falseqa", _csv(tmp_path / "falseqa.csv", rows), message)


def test_falseqa_rows_count_csv_rows_not_physical_lines(tmp_path: Path, runner: CliRunner) -> None:
    rows = _falseqa_rows()
    rows[1][1] = "['Trees have\nno eyes.']"  # a quoted field over two lines
    rows[3][2] = "2"
    _import(runner, "falseqa", _csv(tmp_path / "falseqa.csv", rows), r"falseqa\.csv:4: label")


def test_falseqa_skips_a_blank_question(tmp_path: Path) -> None:
    rows = _falseqa_rows()
    rows[2][0] = "  "
    pairs = IMPORTERS["falseqa"](_csv(tmp_path / "falseqa.csv", rows), 0)
    _check_items(pairs)
    assert [p.item.provenance["source_rows"][0] for p in pairs] == [0, 2, 3, 4, 5]


# --- arcticqa: a release folder (items.jsonl, conditions.jsonl, responses.csv) --------------

QUESTIONS = [
    ("aqa-1", "Which lichen grows on the north slope?", "A survey of two slopes.", "Cladonia"),
    ("aqa-2", "How deep is the lake in metres?", "", "12"),
]
RESPONSE_COLUMNS = [
    "trial_id", "item_id", "model", "condition", "trial", "option_A", "option_B", "option_C",
    "raw_response_text", "chosen_letter", "chosen_kind", "valid", "invalid_cause",
]  # fmt: skip


def _release(tmp_path: Path) -> Path:
    folder = tmp_path / "release"
    folder.mkdir()
    items = [
        {"item_id": i, "question": q, "question_context": c, "gold_answer": g,
         "language_script": "latin", "paper": {"doi": "10.1/x"}}
        for i, q, c, g in QUESTIONS
    ]  # fmt: skip
    _write(folder / "items.jsonl", [json.dumps(r) for r in items])
    conditions = []
    for item_id, _, _, gold in QUESTIONS:
        for condition, first in (("answer_present", gold), ("answer_absent", "Usnea")):
            options = [
                {"kind": "gold" if first == gold else "distractor", "text": first},
                {"kind": "distractor", "text": "Peltigera"},
                {"kind": "abstain", "text": "I abstain from answering"},
            ]
            conditions.append({"item_id": item_id, "condition": condition, "options": options})
    _write(folder / "conditions.jsonl", [json.dumps(r) for r in conditions])
    responses = [
        RESPONSE_COLUMNS,
        ["t1", "aqa-1", "m", "answer_present", "1", "Cladonia", "Peltigera",
         "I abstain from answering", "A", "A", "gold", "True", ""],
        ["t2", "aqa-1", "m", "answer_absent", "1", "Usnea", "Peltigera",
         "I abstain from answering", "C", "C", "abstain", "True", ""],
        ["t3", "aqa-2", "m", "answer_absent", "1", "Usnea", "Peltigera",
         "I abstain from answering", "", "", "", "False", "model_format_violation"],
    ]  # fmt: skip
    _csv(folder / "responses.csv", responses)
    return folder


def test_the_small_release_imports(tmp_path: Path, runner: CliRunner) -> None:
    out = tmp_path / "out"
    result = runner.invoke(app, ["import", "arcticqa", str(_release(tmp_path)), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert len(_lines(out / "benchmark" / "items.jsonl")) == 4
    assert len(_lines(out / "runs" / "m" / "responses.jsonl")) == 3


def _edit_jsonl(path: Path, line: int, edit: Any) -> None:
    rows = [json.loads(x) for x in _lines(path)]
    edit(rows[line - 1])
    _write(path, [json.dumps(r) for r in rows])


def _arctic(runner: CliRunner, folder: Path, message: str) -> str:
    out = folder.parent / "out"
    return refused(runner, ["import", "arcticqa", str(folder), "--out", str(out)], out, message)


def _no_abstain(row: dict[str, Any]) -> None:
    row["options"] = row["options"][:2]


def _blank_option(row: dict[str, Any]) -> None:
    row["options"][1]["text"] = " "


@pytest.mark.parametrize(
    ("name", "line", "edit", "message"),
    [
        ("items", 1, lambda r: r.pop("gold_answer"), r"items\.jsonl:1: missing key 'gold_answer'"),
        (
            "items",
            2,
            lambda r: r.update(question=["a"]),
            r"items\.jsonl:2: 'question' must be a string, got list",
        ),
        ("items", 1, lambda r: r.update(question="  "), r"items\.jsonl:1: 'question' is blank"),
        (
            "items",
            2,
            lambda r: r.update(paper="none"),
            r"items\.jsonl:2: 'paper' must be an object, got str",
        ),
        (
            "conditions",
            2,
            lambda r: r["options"][1].pop("kind"),
            r"conditions\.jsonl:2: options\[1\]: missing key 'kind'",
        ),
        (
            "conditions",
            1,
            _no_abstain,
            r"conditions\.jsonl:1: expected one non-blank option of kind 'abstain'",
        ),
        (
            "conditions",
            3,
            _blank_option,
            r"conditions\.jsonl:3: fewer than 2 distinct non-blank options",
        ),
        (
            "conditions",
            4,
            lambda r: r.update(item_id="aqa-9"),
            r"conditions\.jsonl:4: item_id 'aqa-9' is not in items\.jsonl",
        ),
        (
            "conditions",
            2,
            lambda r: r.update(condition="present"),
            r"conditions\.jsonl:2: condition must be answer_present or .*, got 'present'",
        ),
        (
            "conditions",
            1,
            lambda r: r.update(options={}),
            r"conditions\.jsonl:1: 'options' must be a list, got dict",
        ),
    ],
    ids=[
        "gold",
        "question-type",
        "blank-question",
        "paper",
        "kind",
        "abstain",
        "blank-option",
        "unknown-item",
        "condition",
        "options",
    ],
)
def test_arcticqa_bad_jsonl_rows_name_their_line(
    name: str, line: int, edit: Any, message: str, tmp_path: Path, runner: CliRunner
) -> None:
    folder = _release(tmp_path)
    _edit_jsonl(folder / f"{name}.jsonl", line, edit)
    _arctic(runner, folder, message)


def test_arcticqa_bad_json_and_utf8_name_their_line(tmp_path: Path, runner: CliRunner) -> None:
    folder = _release(tmp_path)
    lines = _lines(folder / "conditions.jsonl")
    lines[2] = lines[2][:-1]
    _write(folder / "conditions.jsonl", lines)
    _arctic(runner, folder, r"conditions\.jsonl:3: invalid JSON")
    (tmp_path / "utf8").mkdir()
    folder = _release(tmp_path / "utf8")
    path = folder / "items.jsonl"
    path.write_bytes(path.read_bytes().replace(b"lake", b"l\xffke"))
    _arctic(runner, folder, r"items\.jsonl:2: ")


def _responses(folder: Path) -> list[list[str]]:
    with (folder / "responses.csv").open(encoding="utf-8", newline="") as handle:
        return list(csv.reader(handle))


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (
            lambda rows: rows[0].__setitem__(4, "try"),
            r"responses\.csv:1: expected ArcticAbstain responses columns .* \(missing: trial\)$",
        ),
        (
            lambda rows: rows[2].__setitem__(4, "one"),
            r"responses\.csv:3: trial must be a whole number from 1, got 'one'$",
        ),
        (
            lambda rows: rows[1].__setitem__(4, "0"),
            r"responses\.csv:2: trial must be a whole number from 1, got '0'$",
        ),
        (
            lambda rows: rows[1].__setitem__(9, "Z"),
            r"responses\.csv:2: chosen_letter 'Z' names no option column$",
        ),
        (
            lambda rows: rows[3].__setitem__(11, "yes"),
            r"responses\.csv:4: valid must be True or False, got 'yes'$",
        ),
        (
            lambda rows: rows[1].__setitem__(3, "absent"),
            r"responses\.csv:2: condition must be answer_present or answer_absent, got 'absent'$",
        ),
        (
            lambda rows: rows[2].__setitem__(2, ""),
            r"responses\.csv:3: system: String should have at least 1 character$",
        ),
        (lambda rows: rows[3].pop(), r"responses\.csv:4: 12 fields, the header has 13$"),
    ],
    ids=["column", "trial", "trial-0", "letter", "valid", "condition", "model", "short"],
)
def test_arcticqa_bad_response_rows_name_their_row(
    edit: Any, message: str, tmp_path: Path, runner: CliRunner
) -> None:
    folder = _release(tmp_path)
    rows = _responses(folder)
    edit(rows)
    _csv(folder / "responses.csv", rows)
    _arctic(runner, folder, message)


def test_arcticqa_invalid_utf8_in_responses(tmp_path: Path, runner: CliRunner) -> None:
    folder = _release(tmp_path)
    path = folder / "responses.csv"
    path.write_bytes(path.read_bytes().replace(b"t3", b"t\xfe3"))
    _arctic(runner, folder, r"responses\.csv:4: not UTF-8 text \(byte 0xfe\)$")


def test_arcticqa_missing_file_is_named(tmp_path: Path, runner: CliRunner) -> None:
    folder = _release(tmp_path)
    (folder / "conditions.jsonl").unlink()
    _arctic(runner, folder, r"conditions\.jsonl: no such file \(expected the ArcticAbstain v1")


# --- hf: folders with a column missing ------------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "rows", "message"),
    [
        ("falseqa", [{"question": "q?", "label": 1}], r": row 0: missing key 'answer'$"),
        ("mnli", [{"premise": "P.", "label": 0}], r": row 0: missing key 'hypothesis'$"),
        ("squad2", [{"id": "a", "question": "q?", "context": "C."}], r": row 0: missing key 'ans"),
    ],
)
def test_hf_rows_without_a_column_name_the_row(
    kind: str,
    rows: list[dict[str, Any]],
    message: str,
    tmp_path: Path,
    runner: CliRunner,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    datasets = pytest.importorskip("datasets", reason="hf: paths need Hugging Face `datasets`")
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", str(tmp_path / "hf-cache"))
    folder = tmp_path / "hub"
    datasets.Dataset.from_list(rows).save_to_disk(str(folder))
    out = tmp_path / "out"
    refused(runner, ["import", kind, f"hf:{folder}", "--out", str(out)], out, message)
