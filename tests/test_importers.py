"""Importers read small fixture files written in each dataset's official format."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from twinbench.cli import app
from twinbench.importers import IMPORTERS
from twinbench.records import ChoiceQuestion
from twinbench.validate import validate_files

SOURCES = Path(__file__).parent / "data" / "sources"


def _options(question: object) -> list[str]:
    assert isinstance(question, ChoiceQuestion)
    return question.options


def test_squad2_pairs_unanswerable_with_answerable_questions() -> None:
    pairs = IMPORTERS["squad2"](SOURCES / "squad2-dev-mini.json", 0)
    assert [p.item.id for p in pairs] == ["squad2_import:sq-u1:u", "squad2_import:sq-u2:u"]
    first = pairs[0]
    assert first.twin.expected.answer == "1888"
    assert first.item.state == first.twin.state  # the same paragraph
    assert sorted(_options(first.twin.question)) == ["1888", "1971", "Kelport", "Marrow Point"]
    assert _options(first.item.question) == _options(first.twin.question)
    assert first.item.family == "underspecified_state"


def test_mnli_swaps_the_contradiction_for_the_entailment() -> None:
    pairs = IMPORTERS["mnli"](SOURCES / "multinli-dev-mini.jsonl", 0)
    assert len(pairs) == 2  # promptID 103 has no gold label and only one hypothesis
    museum = pairs[0]
    assert sorted(_options(museum.item.question)) == [
        "The museum has a large sculpture garden.",
        "The museum opens at noon on Mondays.",
    ]
    assert museum.twin.expected.answer == "The museum is closed on Mondays."
    assert museum.item.family == "contradictory_options"


def test_xnli_makes_out_of_language_items_with_english_twins() -> None:
    pairs = IMPORTERS["xnli"](SOURCES / "xnli-test-mini.tsv", 0)
    assert sorted(p.item.language for p in pairs) == ["es", "ru", "zh"]
    for pair in pairs:
        assert pair.twin.language == "en"
        assert pair.twin.expected.answer == "The shop is open before six on weekdays."
        index = _options(pair.twin.question).index("The shop is open before six on weekdays.")
        assert _options(pair.item.question)[index] == pair.item.answer_if_supported


def test_falseqa_pairs_adjacent_false_and_true_premise_rows() -> None:
    pairs = IMPORTERS["falseqa"](SOURCES / "falseqa-test-mini.csv", 0)
    assert len(pairs) == 2  # the trailing false-premise row has no true-premise partner
    trees = pairs[0]
    assert trees.item.question.instructions == "How many eyes does a tree have?"
    assert trees.twin.question.instructions == "How do trees sense light?"
    assert trees.twin.expected.answer == (
        "Trees sense light through photoreceptor proteins in their leaves."
    )


@pytest.mark.parametrize(
    ("kind", "file"),
    [
        ("squad2", "squad2-dev-mini.json"),
        ("mnli", "multinli-dev-mini.jsonl"),
        ("xnli", "xnli-test-mini.tsv"),
        ("falseqa", "falseqa-test-mini.csv"),
    ],
)
def test_import_cli_writes_a_valid_benchmark(
    kind: str, file: str, tmp_path: Path, runner: CliRunner
) -> None:
    result = runner.invoke(app, ["import", kind, str(SOURCES / file), "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert validate_files(tmp_path / "items.jsonl") == []
    assert (tmp_path / "manifest.json").is_file()


def test_import_cli_rejects_wrong_format(tmp_path: Path, runner: CliRunner) -> None:
    result = runner.invoke(
        app, ["import", "falseqa", str(SOURCES / "squad2-dev-mini.json"), "--out", str(tmp_path)]
    )
    assert result.exit_code == 2
    assert "expected FalseQA columns question, answer, label" in result.stderr
