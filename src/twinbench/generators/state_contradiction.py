"""contradictory_options / state_contradiction: the state denies what every option asserts."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

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
from twinbench.generators.registry import register
from twinbench.records import ChoiceQuestion, ReasonCode


@register
class StateContradiction(Generator[ContradictionCase]):
    """Item = only options the state explicitly denies; twin = one swapped for the entailed one.

    After MultiNLI contradiction pairs: the denying sentence is the premise, the option the
    hypothesis. 1.1.0 reads the reworded `contradiction.jsonl`: in 1.0.0 the entailed option
    copied a state sentence word for word, so "pick the option that copies a sentence" told
    twins from items (option-overlap AUC 0.72); now it is a paraphrase and denied options
    share about as many words with their denying sentences.

    1.2.0 reads a rewritten file: in 1.1.0 the entailed option copied a number from the state
    while denied options changed it (21 of 80 entailed options had only numbers the state
    states, 1 a number it lacks; of 240 denied options 7 and 70), so "pick the option whose
    number occurs in the state" (rule `option_numbers`) scored 0.64-0.67 between pairs and
    0.69-0.72 within. Now the four options of each record share one number class: all
    without digits (22 records), all with digits the state states (39: denied options keep
    the state's number and change another attribute, "The 49 euros will come as store credit",
    or the state states both numbers, "280 nanometres, not 260"), or all with a digit the
    state lacks (19: the entailed option derives it, "The Tuesday clinic is 4 hours long"
    from 8:30-12:30, while denied options change a stated one). The entailed options were
    also reworded so that they share the denied ones' modal and present-tense wording ("may
    be", "can", "is", "no"), state words and state phrases about as often (in 1.1.0 they
    were past-tense paraphrases).

    Validity: every item option has a denying sentence in the state; the twin differs from the
    item in exactly one option, the entailed one.
    """

    name = "state_contradiction"
    version = "1.2.0"
    family = ReasonCode.CONTRADICTORY_OPTIONS
    inputs = (Reads(CorpusPool.CONTRADICTION),)

    def sources(self) -> Sequence[ContradictionCase]:
        return self.pool.contradiction

    def generate(self, source: ContradictionCase, seed: int) -> Pair:
        denied = [c.option for c in source.contradicted_options]
        # the denied option closest in length to the entailed one is swapped (ties: a seeded
        # order), so within a pair the options' lengths barely change: with a random swap
        # the length probe read 0.66 within the 44 pairs of the default build (seed 0)
        order = np.random.default_rng(seed).permutation(len(denied))
        swap = int(min(order, key=lambda i: abs(len(denied[i]) - len(source.true_option))))
        twin_options = [source.true_option if i == swap else o for i, o in enumerate(denied)]
        item_options, twin_options = permute_options(denied, seed, twin_options)
        instructions = source.question.instructions
        return self.pair(
            source.id,
            seed,
            item={
                "state": join(source.state),
                "question": ChoiceQuestion(instructions=instructions, options=item_options),
            },
            twin={
                "state": join(source.state),
                "question": ChoiceQuestion(instructions=instructions, options=twin_options),
            },
            answer=source.true_option,
            provenance={
                "source_id": source.id,
                "edit": f"swapped {denied[swap]!r} for the entailed option",
                "denied_by": {c.option: c.denied_by for c in source.contradicted_options},
                "sentences": len(source.state),
            },
        )

    def validity(self, pair: Pair) -> list[str]:
        prov = pair.item.provenance
        item_q, twin_q = pair.item.question, pair.twin.question
        assert isinstance(item_q, ChoiceQuestion) and isinstance(twin_q, ChoiceQuestion)
        problems = [f"option {o!r} has no denying sentence" for o in undenied(item_q.options, prov)]
        if sum(a != b for a, b in zip(item_q.options, twin_q.options, strict=True)) != 1:
            problems.append("item and twin must differ in exactly one option")
        if pair.twin.expected.answer in item_q.options:
            problems.append("the entailed option is shown on the item")
        return problems
