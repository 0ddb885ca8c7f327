"""contradictory_options / false_premise: the question presupposes what the state denies."""

from __future__ import annotations

from collections.abc import Sequence

from twinbench.corpus import FalsePremiseCase
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
from twinbench.records import ChoiceQuestion, Question, ReasonCode, ScoreQuestion


@register
class FalsePremise(Generator[FalsePremiseCase]):
    """Item = the false-premise question; twin = the revised true-premise question (FalseQA).

    1.1.0 reads the rewritten `false_premise.jsonl`: in 1.0.0 the denial was sentence 1 in 79
    of 80 records, mostly ", and no X", so "the question's words occur only in a negated
    sentence" told items from twins (negation-probe AUC 0.82); denials now vary in position
    and form (explicit and implicit), and yes/no items whose literal "no" was true are fixed.

    1.2.0 reads a rewritten corpus. In 1.1.0 the twin's question copied the wording of the state
    sentence that answers it while the false premise's words stood elsewhere: the twin had more
    character-4-gram overlap with its best state sentence in 70 of 80 pairs (issue 22's
    state_echo probe 0.70 between pairs, 0.87 within; the trained probe, which counts the same
    closeness, 0.70 within). Now the answering sentence paraphrases the question about as
    often as not, and the false premise's words recur in the state (a request, a rumour, the
    denial) as often as the twin's do: the twin is closer in 40 of 80 pairs, the item in 36.
    1.1.0 also had 72 choice questions of 80 while the family's other generators are choice
    only, so the question type told the family. 1.2.0 has none: 36 `score` (one legend for
    both questions) and 44 `noul`. A yes/no item presupposes the denied thing through a
    definite description and asks a property of it ("Did the phone callback to Amara fix the
    login failure?" when the callback was cancelled), so neither yes nor no is supported
    (a bare "Did X happen?" would leave "no" true); the twins answer 22 yes and 22 no.

    Validity: the two questions have the same type and options (or legend) and different
    wording, and the state sentence named as denying the premise exists.
    """

    name = "false_premise"
    version = "1.2.0"
    family = ReasonCode.CONTRADICTORY_OPTIONS
    inputs = (Reads(CorpusPool.FALSE_PREMISE),)

    def sources(self) -> Sequence[FalsePremiseCase]:
        return self.pool.false_premise

    def generate(self, source: FalsePremiseCase, seed: int) -> Pair:
        premise_q: Question = source.premise_question
        true_q: Question = source.true_question
        # choice options are shuffled (one order for both); a score legend is an ordered rubric
        # and a yes/no question has nothing to order, so both are shown as written
        if isinstance(premise_q, ChoiceQuestion) and isinstance(true_q, ChoiceQuestion):
            (order,) = permute_options(list(range(len(premise_q.options))), seed)
            premise_q = with_options(premise_q, [premise_q.options[int(i)] for i in order])
            true_q = with_options(true_q, [true_q.options[int(i)] for i in order])
        return self.pair(
            source.id,
            seed,
            item={"state": join(source.state), "question": premise_q},
            twin={"state": join(source.state), "question": true_q},
            answer=source.answer,
            provenance={
                "source_id": source.id,
                "premise": source.premise,
                "denied_by": source.denied_by,
                "denying_sentence": source.state[source.denied_by],
                "edit": "question revised to a true premise",
            },
        )

    def validity(self, pair: Pair) -> list[str]:
        item_q, twin_q = pair.item.question, pair.twin.question
        problems = []
        if item_q.type != twin_q.type or item_q.instructions == twin_q.instructions:
            problems.append("the questions must share a type and differ in wording")
        if (
            isinstance(item_q, ChoiceQuestion)
            and isinstance(twin_q, ChoiceQuestion)
            and (item_q.options != twin_q.options)
        ):
            problems.append("the questions must show the same options")
        if (
            isinstance(item_q, ScoreQuestion)
            and isinstance(twin_q, ScoreQuestion)
            and list(item_q.legend.items()) != list(twin_q.legend.items())
        ):
            problems.append("the questions must show the same legend")
        if pair.item.provenance["denying_sentence"] not in pair.item.state:
            problems.append("the denying sentence is not in the state")
        return problems
