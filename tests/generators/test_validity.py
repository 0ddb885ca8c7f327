"""Each generator's validity check accepts its real output and rejects a broken one."""

from __future__ import annotations

from typing import Any

import pytest

from twinbench.corpus import Corpus, load_corpus
from twinbench.generators import Generator, Pair, generator_classes
from twinbench.generators.base import item_seed
from twinbench.generators.scripts import script_problem, script_share
from twinbench.normalize import normalize_option
from twinbench.partition import partition
from twinbench.records import ChoiceQuestion

ALL = [
    "redaction",
    "rematch",
    "reference_ambiguity",
    "exact_duplicate",
    "state_contradiction",
    "false_premise",
    "translation",
]


@pytest.fixture(scope="module")
def corpus() -> Corpus:
    return load_corpus()


def _generator(name: str, corpus: Corpus) -> Generator[Any]:
    """The generator with the pools it gets in a seed-0 build of every registered generator."""
    classes = generator_classes(ALL, "test")
    return next(cls for cls in classes if cls.name == name)(partition(corpus, 0, classes)[name])


def _first_pair(name: str, corpus: Corpus) -> Pair:
    generator = _generator(name, corpus)
    source = generator.sources()[0]
    return generator.generate(source, item_seed(0, name, generator.source_key(source)))


def _edit(pair: Pair, which: str, **update: Any) -> Pair:
    item = getattr(pair, which).model_copy(update=update)
    return Pair(item, pair.twin) if which == "item" else Pair(pair.item, item)


def test_redaction_replaces_only_the_support_sentence(corpus: Corpus) -> None:
    gen = _generator("redaction", corpus)
    pair = _first_pair("redaction", corpus)
    prov = pair.item.provenance
    source = next(s for s in corpus.scenarios if s.id == prov["source_id"])
    assert gen.validity(pair) == []
    assert prov["neutral"] == source.neutral
    assert pair.twin.state.replace(prov["removed"], prov["neutral"]) == pair.item.state
    # a neutral sentence that still carries the answer is caught
    leaked = {**prov, "neutral": prov["removed"]}
    assert gen.validity(_edit(pair, "item", provenance=leaked))
    # so is one that leaves a length scar
    short = {**prov, "neutral": prov["neutral"][: len(prov["removed"]) // 2] + "."}
    assert "the neutral sentence is not 90%-110% of the support's length" in gen.validity(
        _edit(pair, "item", provenance=short)
    )
    # and one that names an option or legend label
    named = {**prov, "neutral": f"{prov['blocked'][-1]} {prov['neutral']}"}
    assert f"the neutral sentence mentions {prov['blocked'][-1]!r}" in gen.validity(
        _edit(pair, "item", provenance=named)
    )


def test_redaction_rejects_a_remaining_alias(corpus: Corpus) -> None:
    gen = _generator("redaction", corpus)
    pair = _first_pair("redaction", corpus)
    prov = dict(pair.item.provenance)
    alias = prov["revealing"][0]
    prov["sentences"] = [*prov["sentences"], f"Someone mentioned {alias} earlier."]
    state = pair.item.state + f" Someone mentioned {alias} earlier."
    problems = gen.validity(_edit(pair, "item", provenance=prov, state=state))
    assert f"an item sentence still mentions {alias!r}" in problems


def test_rematch_records_band_and_rejects_a_leaking_donor(corpus: Corpus) -> None:
    gen = _generator("rematch", corpus)
    pair = _first_pair("rematch", corpus)
    prov = pair.item.provenance
    assert gen.validity(pair) == []
    assert prov["band"][0] <= prov["similarity"] <= prov["band"][1]
    assert prov["topics"][0] != prov["topics"][1]
    leak = pair.item.state + f" Note: {prov['blocked'][0]}."
    assert gen.validity(_edit(pair, "item", state=leak))


def test_exact_duplicate_collides_on_both_sides_but_only_the_item_on_the_answer(
    corpus: Corpus,
) -> None:
    gen = _generator("exact_duplicate", corpus)
    pair = _first_pair("exact_duplicate", corpus)
    assert gen.validity(pair) == []
    item_q, twin_q = pair.item.question, pair.twin.question
    assert isinstance(item_q, ChoiceQuestion) and isinstance(twin_q, ChoiceQuestion)
    answer = normalize_option(str(pair.twin.expected.answer))
    item_norm = [normalize_option(o) for o in item_q.options]
    twin_norm = [normalize_option(o) for o in twin_q.options]
    # one colliding pair on each side: on the answer (item), on a distractor (twin)
    assert len(set(item_norm)) == len(item_norm) - 1 == len(set(twin_norm)) == len(twin_norm) - 1
    assert item_norm.count(answer) == 2 and twin_norm.count(answer) == 1
    assert sum(a != b for a, b in zip(item_q.options, twin_q.options, strict=True)) == 1
    prov = pair.item.provenance
    assert prov["variant"] in prov["edit"]
    assert gen.validity(_edit(pair, "item", provenance={**prov, "duplicate": "something else"}))
    leaky = {**prov, "twin_duplicate_of": prov["duplicate_of"]}
    assert gen.validity(_edit(pair, "item", provenance=leaky))


def test_state_contradiction_shows_only_denied_options(corpus: Corpus) -> None:
    gen = _generator("state_contradiction", corpus)
    pair = _first_pair("state_contradiction", corpus)
    assert gen.validity(pair) == []
    twin_q = pair.twin.question
    assert isinstance(twin_q, ChoiceQuestion)
    assert gen.validity(_edit(pair, "item", question=twin_q))  # shows the entailed option


def test_false_premise_twin_is_the_revised_question(corpus: Corpus) -> None:
    gen = _generator("false_premise", corpus)
    pair = _first_pair("false_premise", corpus)
    assert gen.validity(pair) == []
    assert pair.item.question.instructions != pair.twin.question.instructions
    assert gen.validity(_edit(pair, "item", question=pair.twin.question))


def test_reference_ambiguity_readings_support_different_options(corpus: Corpus) -> None:
    gen = _generator("reference_ambiguity", corpus)
    pair = _first_pair("reference_ambiguity", corpus)
    assert gen.validity(pair) == []
    readings = pair.item.provenance["readings"]
    assert readings[0]["option"] != readings[1]["option"]
    same = {**pair.item.provenance, "readings": [readings[0], readings[0]]}
    assert gen.validity(_edit(pair, "item", provenance=same))


def test_script_check_rejects_a_mislabelled_item(corpus: Corpus) -> None:
    gen = _generator("translation", corpus)
    pair = next(gen.generate(s, 1) for s in gen.sources() if s.language == "ru")
    assert gen.validity(pair) == []
    # the Russian text labelled as Hindi, and an English state labelled as Russian
    mislabelled = _edit(pair, "item", language="hi")
    assert any("Devanagari" in p for p in gen.validity(mislabelled))
    english = _edit(pair, "item", state=pair.twin.state)
    assert any("Cyrillic" in p for p in gen.validity(english))


def test_script_share_by_hand() -> None:
    # 4 letters: 3 Cyrillic (д, а, н) and 1 Latin (x); digits and spaces are not letters
    assert script_share("дан x 42", "CYRILLIC") == 0.75
    assert script_problem("Hello", "en") is None
    assert script_problem("Hello", "km") == "only 0% of letters are Khmer for language 'km'"


def test_every_untranslated_scenario_has_a_usable_neutral_sentence(corpus: Corpus) -> None:
    """Redaction can take any scenario the partition deals it (translated ones go elsewhere)."""
    translated = {t.scenario_id for t in corpus.translations}
    gen = _generator("redaction", corpus)
    untranslated = [s for s in corpus.scenarios if s.id not in translated]
    assert len(untranslated) == 216
    for scenario in untranslated:
        assert scenario.neutral is not None, scenario.id
        pair = gen.generate(scenario, item_seed(0, "redaction", scenario.id))
        assert gen.validity(pair) == [], scenario.id
