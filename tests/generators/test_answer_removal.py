"""answer_removal: the paired answer-present / answer-absent benchmark."""

from __future__ import annotations

from pathlib import Path

from twinbench.builder import build_paired
from twinbench.generators.answer_removal import ABSTAIN_OPTION
from twinbench.records import ChoiceQuestion, ReasonCode
from twinbench.systems.prompt import lettered
from twinbench.validate import validate_files


def test_paired_build_swaps_only_the_true_option(tmp_path: Path) -> None:
    result = build_paired(tmp_path, per_generator=12)
    pairs = result.pairs["answer_removal"]
    assert len(pairs) == 12 and result.manifest["generators"][0]["dropped"] == {}
    for pair in pairs:
        absent, present = pair.item.question, pair.twin.question
        assert isinstance(absent, ChoiceQuestion) and isinstance(present, ChoiceQuestion)
        assert pair.twin.expected.answer in present.options
        assert pair.twin.expected.answer not in absent.options
        assert len(set(absent.options) ^ set(present.options)) == 2
        assert absent.abstain_option == present.abstain_option == ABSTAIN_OPTION
        assert pair.item.expected.reason == ReasonCode.CONTRADICTORY_OPTIONS
    assert validate_files(tmp_path / "items.jsonl") == []


def test_explicit_abstain_option_is_an_abstain_letter() -> None:
    question = ChoiceQuestion(
        instructions="Which is true?", options=["a", "b", "c"], abstain_option=ABSTAIN_OPTION
    )
    choices = lettered(question)
    assert [c.letter for c in choices] == ["A", "B", "C", "D", "X", "Y", "Z"]
    assert (choices[3].text, choices[3].reason) == (
        ABSTAIN_OPTION,
        ReasonCode.CONTRADICTORY_OPTIONS,
    )
