"""contradictory_options / answer_removal: the paired answer-present / answer-absent protocol.

From a state-contradiction record (a true option and three options the state explicitly
denies): the answer-present twin shows the true option and two denied ones, the answer-absent
item swaps the true option for the third denied one. Both show the explicit abstain option
"I abstain from answering" (`abstain_option`), and options are shuffled with a seed per item
and condition. It is not part of the default build (it shares its sources with
`state_contradiction`): `twinbench build --paired` builds it on its own.

Family: `contradictory_options`. With the answer removed, every shown option is one the state
denies: the option set contradicts the state, which is what that code means. A fourth code
would split one phenomenon across two codes and their precision/recall (docs/paired.md).
"""

from __future__ import annotations

from collections.abc import Sequence

from twinbench.corpus import ContradictionCase
from twinbench.generators.base import (
    CorpusPool,
    Generator,
    Pair,
    Reads,
    join,
    permute_options,
    undenied,
)
from twinbench.records import ChoiceQuestion, ReasonCode

ABSTAIN_OPTION = "I abstain from answering"


class AnswerRemoval(Generator[ContradictionCase]):
    """Answer-present twin vs answer-absent item, both with an explicit abstain option."""

    name = "answer_removal"
    version = "1.1.0"
    family = ReasonCode.CONTRADICTORY_OPTIONS
    inputs = (Reads(CorpusPool.CONTRADICTION),)

    @classmethod
    def accepts(cls, source: ContradictionCase) -> bool:
        return len(source.contradicted_options) >= 3

    def sources(self) -> Sequence[ContradictionCase]:
        return [c for c in self.pool.contradiction if self.accepts(c)]

    def generate(self, source: ContradictionCase, seed: int) -> Pair:
        denied = [c.option for c in source.contradicted_options[:3]]
        (present,) = permute_options([source.true_option, *denied[:2]], seed)
        (absent,) = permute_options(denied, seed + 1)
        instructions = source.question.instructions

        def question(options: list[str]) -> ChoiceQuestion:
            return ChoiceQuestion(
                instructions=instructions, options=options, abstain_option=ABSTAIN_OPTION
            )

        return self.pair(
            source.id,
            seed,
            item={"state": join(source.state), "question": question(absent)},
            twin={"state": join(source.state), "question": question(present)},
            answer=source.true_option,
            provenance={
                "source_id": source.id,
                "condition": "answer_absent",
                "removed": source.true_option,
                "replacement": denied[2],
                "denied_by": {c.option: c.denied_by for c in source.contradicted_options[:3]},
                "sentences": len(source.state),
            },
        )

    def validity(self, pair: Pair) -> list[str]:
        prov = pair.item.provenance
        item_q, twin_q = pair.item.question, pair.twin.question
        assert isinstance(item_q, ChoiceQuestion) and isinstance(twin_q, ChoiceQuestion)
        problems = [
            f"absent option {o!r} has no denying sentence" for o in undenied(item_q.options, prov)
        ]
        if prov["removed"] in item_q.options or prov["removed"] not in twin_q.options:
            problems.append("the true option must be shown only when the answer is present")
        if len(set(item_q.options) ^ set(twin_q.options)) != 2:
            problems.append("the conditions must differ in exactly one option")
        if item_q.abstain_option != ABSTAIN_OPTION or twin_q.abstain_option != ABSTAIN_OPTION:
            problems.append("both conditions must show the explicit abstain option")
        return problems
