"""The similarity audit catches a planted leak and passes a clean generator."""

from __future__ import annotations

from pathlib import Path

from twinbench.audit.similarity import audit_similarity
from twinbench.builder import build
from twinbench.records import Item


def _planted(items: list[Item]) -> list[Item]:
    """A leaky variant of false_premise: every unanswerable item ends with a marker sentence."""
    out = []
    for item in items:
        if item.generator.name != "false_premise":
            continue
        generator = item.generator.model_copy(update={"name": "leaky", "version": "0.0.1"})
        state = item.state if item.answerable else item.state + " Note: please review."
        out.append(item.model_copy(update={"generator": generator, "state": state}))
    return out


def test_planted_marker_is_caught_and_clean_version_passes(tmp_path: Path) -> None:
    items = build(tmp_path, per_generator=40).public
    report = audit_similarity(
        [*_planted(items), *(i for i in items if i.generator.name == "false_premise")]
    )
    leaky = report["generators"]["leaky@0.0.1"]
    assert leaky["auc"]["ngrams"]["auc"] >= 0.95
    assert "ngrams" in leaky["over_bound"] and not leaky["passes"]
    (clean,) = (g for k, g in report["generators"].items() if k.startswith("false_premise@"))
    assert all(a["auc"] <= 0.65 for a in clean["auc"].values()), clean["auc"]
    assert clean["passes"]
    low, high = clean["auc"]["ngrams"]["low"], clean["auc"]["ngrams"]["high"]
    assert low <= clean["auc"]["ngrams"]["auc"] <= high


def test_strict_build_check_refuses_a_leaky_version(tmp_path: Path) -> None:
    import pytest

    from twinbench.builder import refuse_leaky
    from twinbench.jsonl import InputError

    items = build(tmp_path, per_generator=40).public
    clean = [i for i in items if i.generator.name == "false_premise"]
    refuse_leaky(clean, 0.65, 0)  # passes: no exception
    with pytest.raises(InputError, match=r"--strict: .*leaky@0\.0\.1 \(.*ngrams AUC 1\.00"):
        refuse_leaky([*_planted(items), *clean], 0.65, 0)


def test_paired_auc_by_hand_and_its_interval() -> None:
    import numpy as np

    from twinbench.audit.similarity import paired_auc_interval

    # item/twin comparisons: 0.9>0.4, 0.9>0.1, 0.4=0.4 (one half), 0.4>0.1 -> 3.5 of 4
    result = paired_auc_interval(np.array([0.9, 0.4]), np.array([0.4, 0.1]), seed=0)
    assert result["auc"] == 0.875
    assert 0.0 <= result["low"] <= result["high"] <= 1.0
    # items always above twins: every resample gives 1.0
    perfect = paired_auc_interval(np.array([0.9, 0.8, 0.7]), np.array([0.3, 0.2, 0.1]), seed=1)
    assert (perfect["auc"], perfect["low"], perfect["high"]) == (1.0, 1.0, 1.0)


def _label_echo(items: list[Item]) -> list[Item]:
    """A leaky redaction: every twin's state ends by naming its answer's label, items don't."""
    out = []
    for item in items:
        if item.generator.name != "redaction" or item.question.type == "noul":
            continue
        generator = item.generator.model_copy(update={"name": "label-echo", "version": "0.0.1"})
        answer = item.expected.answer
        if item.question.type == "score":
            legend = item.question.legend  # type: ignore[union-attr]
            label = next((k for k, v in legend.items() if v == answer), None)
        else:
            label = str(answer)
        state = item.state + (f" It is filed as {label}." if item.answerable else " It is filed.")
        out.append(item.model_copy(update={"generator": generator, "state": state}))
    return out


def test_strict_refuses_a_version_that_echoes_the_label_in_twins(tmp_path: Path) -> None:
    import pytest

    from twinbench.builder import refuse_leaky
    from twinbench.jsonl import InputError

    items = build(tmp_path, per_generator=60).public
    twins = [i for i in items if i.answerable and i.generator.name == "redaction"]
    leaky = _label_echo([i for i in items if i.generator.name == "redaction"])
    report = audit_similarity(leaky)["generators"]["label-echo@0.0.1"]
    # the twin always names one more label than its item: the rule alone separates them
    assert report["auc"]["label_mention"]["auc"] >= 0.9
    assert "label_mention" in report["over_bound"] and not report["passes"]
    assert len(leaky) == 2 * len({i.pair_id for i in leaky}) <= 2 * len(twins)
    with pytest.raises(InputError, match=r"label-echo@0\.0\.1 \(.*label_mention AUC"):
        refuse_leaky(leaky, 0.65, 0)
