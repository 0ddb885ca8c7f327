"""underspecified_state / redaction: delete the single supporting sentence."""

from __future__ import annotations

from collections.abc import Sequence

from twinbench.corpus import Scenario
from twinbench.generators.base import (
    Generator,
    Pair,
    join,
    mentions,
    permute_options,
    register,
    revealing_phrases,
    with_options,
)
from twinbench.records import ChoiceQuestion, ReasonCode


def ordered_question(scenario: Scenario, seed: int) -> ChoiceQuestion | None:
    """The scenario's choice question with its options in the seeded order (None otherwise)."""
    if not isinstance(scenario.question, ChoiceQuestion):
        return None
    (options,) = permute_options(scenario.question.options, seed)
    return with_options(scenario.question, options)


@register
class Redaction(Generator[Scenario]):
    """Item = the state without its support sentence, all else byte-identical; twin = the state.

    Validity: the item's sentences are the twin's minus exactly the support sentence, and no
    remaining sentence mentions the answer (choice) or any alias after normalisation.
    """

    name = "redaction"
    version = "1.0.0"
    family = ReasonCode.UNDERSPECIFIED_STATE

    def sources(self) -> Sequence[Scenario]:
        return self.pool.scenarios

    def source_key(self, source: Scenario) -> str:
        return source.id

    def generate(self, source: Scenario, seed: int) -> Pair:
        question = ordered_question(source, seed) or source.question
        kept = [s for i, s in enumerate(source.state) if i != source.support]
        return self.pair(
            source.id,
            seed,
            item={"state": join(kept), "question": question},
            twin={"state": join(source.state), "question": question},
            answer=source.answer,
            provenance={
                "source_id": source.id,
                "edit": f"deleted sentence {source.support}",
                "support": source.support,
                "removed": source.state[source.support],
                "sentences": kept,
                "revealing": revealing_phrases(source),
            },
        )

    def validity(self, pair: Pair) -> list[str]:
        prov = pair.item.provenance
        kept: list[str] = prov["sentences"]
        problems = []
        restored = [*kept[: prov["support"]], prov["removed"], *kept[prov["support"] :]]
        if join(kept) != pair.item.state or join(restored) != pair.twin.state:
            problems.append("item state is not exactly the twin state minus the support sentence")
        for sentence in kept:
            for phrase in prov["revealing"]:
                if mentions(sentence, phrase):
                    problems.append(f"remaining sentence still mentions {phrase!r}")
        return problems
