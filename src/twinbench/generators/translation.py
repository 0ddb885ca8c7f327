"""out_of_language / translation: the scenario translated out of the declared language."""

from __future__ import annotations

from collections.abc import Sequence

from twinbench.corpus import Scenario, Translation
from twinbench.generators.base import (
    CorpusPool,
    Generator,
    Pair,
    Reads,
    join,
    permute_options,
    with_options,
)
from twinbench.generators.registry import register
from twinbench.generators.scripts import LANGUAGE_SCRIPTS, script_name, script_problem
from twinbench.records import ChoiceQuestion, ReasonCode

#: scenario offset between consecutive languages in the stratified source order
STRIDE = 10
#: languages each English scenario is translated into in the build (1.0.0 used all eight,
#: so 60 % of a build was translation and pooled figures measured language identification)
LANGUAGES_PER_SCENARIO = 3
#: scenario k goes into languages k, k + LANGUAGE_STEP, k + 2 * LANGUAGE_STEP (mod 8)
LANGUAGE_STEP = 3


@register
class TranslationGenerator(Generator[Translation]):
    """Item = a translation of a scenario, tagged with its language; twin = the English original.

    The label comes from the generator's language tag plus a Unicode script check (never from a
    detector). Options keep one seeded order on both sides, so translated option i is English
    option i. Validity: the script check passes and the translated answer is the option at the
    English answer's position.
    """

    name = "translation"
    version = "1.1.0"
    family = ReasonCode.OUT_OF_LANGUAGE
    inputs = (Reads(CorpusPool.TRANSLATIONS),)
    shuffle_sources = False

    def sources(self) -> Sequence[Translation]:
        # Stratified: languages interleave, so any prefix mixes same- and different-script
        # ones; language j starts STRIDE * j scenarios further on, so a prefix also spans
        # different scenarios instead of one scenario in every language.
        # 1.1.0: scenario k (in id order) goes into LANGUAGES_PER_SCENARIO languages (mod the
        # language count), so each language gets the same number of scenarios
        records = self.pool.translations
        languages = sorted({r.language for r in records})
        scenarios = {s: k for k, s in enumerate(sorted({r.scenario_id for r in records}))}

        def chosen(record: Translation) -> bool:
            k = scenarios[record.scenario_id]
            picks = {
                (k + LANGUAGE_STEP * j) % len(languages) for j in range(LANGUAGES_PER_SCENARIO)
            }
            return languages.index(record.language) in picks

        by_language: dict[str, list[Translation]] = {}
        for record in filter(chosen, records):
            by_language.setdefault(record.language, []).append(record)
        groups = [by_language[lang] for lang in sorted(by_language)]
        longest = max((len(g) for g in groups), default=0)
        return [
            g[(i + STRIDE * j) % len(g)]
            for i in range(longest)
            for j, g in enumerate(groups)
            if i < len(g)
        ]

    def source_key(self, source: Translation) -> str:
        return f"{source.scenario_id}.{source.language}"

    def _original(self, source: Translation) -> Scenario:
        return self.pool.corpus.by_id[source.scenario_id]

    def generate(self, source: Translation, seed: int) -> Pair:
        original = self._original(source)
        item_q, twin_q = source.question, original.question
        if isinstance(item_q, ChoiceQuestion) and isinstance(twin_q, ChoiceQuestion):
            translated, english = permute_options(item_q.options, seed, twin_q.options)
            item_q, twin_q = with_options(item_q, translated), with_options(twin_q, english)
        script = LANGUAGE_SCRIPTS.get(source.language, "?")
        return self.pair(
            self.source_key(source),
            seed,
            item={
                "state": join(source.state, source.language),
                "question": item_q,
                "language": source.language,
                "answer_if_supported": source.answer,
            },
            twin={"state": join(original.state), "question": twin_q, "language": "en"},
            answer=original.answer,
            provenance={
                "source_id": original.id,
                "language": source.language,
                "script": script_name(script),
                "same_script_as_english": script == LANGUAGE_SCRIPTS["en"],
                "edit": f"translated into {source.language}",
            },
        )

    def validity(self, pair: Pair) -> list[str]:
        item, twin = pair.item, pair.twin
        problems = []
        if item.language == twin.language:
            problems.append("the item must be in another language than its twin")
        problem = script_problem(item.state, item.language)
        if problem:
            problems.append(problem)
        item_q, twin_q = item.question, twin.question
        if isinstance(item_q, ChoiceQuestion) and isinstance(twin_q, ChoiceQuestion):
            if item.answer_if_supported not in item_q.options:
                problems.append("answer_if_supported is not a translated option")
            elif item_q.options.index(str(item.answer_if_supported)) != twin_q.options.index(
                str(twin.expected.answer)
            ):
                problems.append("the translated answer is not at the English answer's position")
        elif item.answer_if_supported != twin.expected.answer:
            problems.append("answer_if_supported differs from the English answer")
        return problems
