"""The similarity audit catches a planted leak and passes a clean generator."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from twinbench.audit.shortcuts import RULES
from twinbench.audit.similarity import audit_similarity
from twinbench.builder import build
from twinbench.records import Item

#: a generator the default build keeps under the bound on every probe, between and within pairs
CLEAN = "reference_ambiguity"


def _variant(items: list[Item], name: str, edit: Callable[[str], str]) -> list[Item]:
    """CLEAN's pairs as generator `name`@0.0.1, with `edit` applied to every item's state."""
    out = []
    for item in items:
        if item.generator.name != CLEAN:
            continue
        generator = item.generator.model_copy(update={"name": name, "version": "0.0.1"})
        state = item.state if item.answerable else edit(item.state)
        out.append(item.model_copy(update={"generator": generator, "state": state}))
    return out


def _planted(items: list[Item]) -> list[Item]:
    """A leaky variant of CLEAN: every unanswerable item ends with a marker sentence."""
    return _variant(items, "leaky", lambda state: state + " Note: please review.")


def test_planted_marker_is_caught_and_clean_version_passes(tmp_path: Path) -> None:
    items = build(tmp_path, per_generator=40).public
    report = audit_similarity([*_planted(items), *(i for i in items if i.generator.name == CLEAN)])
    leaky = report["generators"]["leaky@0.0.1"]
    assert leaky["auc"]["ngrams"]["auc"] >= 0.95
    assert {"ngrams", "within:ngrams"} <= set(leaky["over_bound"]) and not leaky["passes"]
    (clean,) = (g for k, g in report["generators"].items() if k.startswith(f"{CLEAN}@"))
    assert all(a["auc"] <= 0.65 for a in clean["auc"].values()), clean["auc"]
    assert all(a["auc"] <= 0.65 for a in clean["within_pair"].values()), clean["within_pair"]
    assert clean["passes"]
    low, high = clean["auc"]["ngrams"]["low"], clean["auc"]["ngrams"]["high"]
    assert low <= clean["auc"]["ngrams"]["auc"] <= high


def test_strict_build_check_refuses_a_leaky_version(tmp_path: Path) -> None:
    import pytest

    from twinbench.builder import refuse_leaky
    from twinbench.jsonl import InputError

    items = build(tmp_path, per_generator=40).public
    clean = [i for i in items if i.generator.name == CLEAN]
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


def test_within_pair_share_by_hand() -> None:
    import numpy as np

    from twinbench.audit.similarity import within_pair_interval

    # pair by pair: 3>1 wins, 1<2 loses, 2=2 one half, 2>0 wins -> 2.5 of 4
    result = within_pair_interval(np.array([3.0, 1.0, 2.0, 2.0]), np.array([1.0, 2.0, 2.0, 0.0]), 0)
    assert result["auc"] == 0.625
    assert 0.0 <= result["low"] <= 0.625 <= result["high"] <= 1.0
    # scores that overlap across pairs but always rank the item above its own twin
    overlap = within_pair_interval(np.array([0.2, 0.5, 0.9]), np.array([0.1, 0.4, 0.8]), 0)
    assert (overlap["auc"], overlap["low"], overlap["high"]) == (1.0, 1.0, 1.0)


def _exclaimed(items: list[Item]) -> list[Item]:
    """A leak no written rule reads: unanswerable items end with "!" where twins end with "."."""
    return _variant(items, "exclaim", lambda state: state.rstrip(".") + "!")


def test_the_trained_probe_catches_a_leak_no_written_rule_reads(tmp_path: Path) -> None:
    items = build(tmp_path, per_generator=40).public
    report = audit_similarity(_exclaimed(items))["generators"]["exclaim@0.0.1"]
    written = {"length", "ngrams", *RULES}
    # word n-grams drop punctuation and every rule counts the same sentences: all blind
    assert all(report["auc"][p]["auc"] <= 0.65 for p in written), report["auc"]
    assert report["auc"]["trained"]["auc"] >= 0.95
    assert report["within_pair"]["trained"]["auc"] >= 0.95
    assert {"trained", "within:trained"} <= set(report["over_bound"])
