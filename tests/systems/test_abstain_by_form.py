"""abstain-by-form: the reference that reads only the question type and the script."""

from __future__ import annotations

from pathlib import Path

import pytest

from twinbench import api
from twinbench.builder import build
from twinbench.evaluation import eval_slice
from twinbench.fitted import form_codes, latin_script
from twinbench.systems import SystemOptions, make_system


def test_the_script_check() -> None:
    assert latin_script("The March invoice charged the annual plan twice.")
    assert latin_script("La factura de marzo cobró dos veces el plan anual.")
    assert not latin_script("三月的发票两次收取了年度计划的费用。")
    assert not latin_script("Счёт за март дважды списал годовой тариф.")


def test_fitted_to_the_default_build_it_wins_recall_but_no_pair(tmp_path: Path) -> None:
    built = build(tmp_path / "bench", seed=0)
    items = eval_slice(built, 20)
    codes = form_codes(items)
    # every family holds the same question types (issue 22), so per type the two English
    # families tie and the rule takes the first in FAMILIES order: the form names no family
    kinds = {i.question.type for i in items}
    assert codes == dict.fromkeys(sorted(kinds), "underspecified_state")
    system = make_system("abstain-by-form", SystemOptions(form_codes=codes))
    api.run(system, items, tmp_path / "run")
    metrics = api.grade(items, tmp_path / "run")
    assert metrics.overall.ideal_pair_rate == 0.0  # it never tells an item from its twin
    assert metrics.overall.twin_accuracy == 0.0
    assert metrics.overall.pair_score is not None and metrics.overall.pair_score <= 0.0
    assert metrics.overall.abstention_recall == 1.0
    # recall 1 on underspecified_state, 0 on contradictory_options, and on out_of_language
    # the share of its items in a non-Latin script: what the script alone gives away
    foreign = [i for i in items if not i.answerable and i.family.value == "out_of_language"]
    script = sum(not latin_script(i.state) for i in foreign) / len(foreign)
    assert metrics.macro["recall"] == pytest.approx((1.0 + 0.0 + script) / 3, abs=1e-12)


def test_eval_runs_both_references_beside_the_system(tmp_path: Path) -> None:
    done = api.evaluate(tmp_path / "out", "always-answer", per_family=4)
    runs = sorted(p.name for p in (tmp_path / "out" / "runs").iterdir())
    assert runs == ["abstain-by-form", "always-answer_first", "shortcut"]
    assert set(done.report.systems) == set(runs)
