"""underspecified_state / reference_ambiguity: two referents, each supporting another option.

Version 1.1.0 reads the rebalanced `ambiguity.jsonl`. In 1.0.0 the edits ran one way (item
"she said", "the manager", "their"; twin a name, "his", "the second ..."), and the n-gram probe
learnt the direction (AUC 0.68, docs/audit.md). Now each kind of referring expression (pronoun,
name, role noun, qualified noun phrase) appears about as often on either side of the edit, with
changed phrases of about the same length.
"""

from __future__ import annotations

from collections.abc import Sequence

from twinbench.corpus import AmbiguityCase
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
from twinbench.records import ChoiceQuestion, ReasonCode


@register
class ReferenceAmbiguity(Generator[AmbiguityCase]):
    """Item = the state with two plausible referents; twin = the one-sentence unique-referent edit.

    Validity: the two readings support two different options, both shown; the answer is one of
    them; the states differ in exactly one sentence.
    """

    name = "reference_ambiguity"
    version = "1.1.0"
    family = ReasonCode.UNDERSPECIFIED_STATE
    inputs = (Reads(CorpusPool.AMBIGUITY),)

    def sources(self) -> Sequence[AmbiguityCase]:
        return self.pool.ambiguity

    def generate(self, source: AmbiguityCase, seed: int) -> Pair:
        assert isinstance(source.question, ChoiceQuestion)
        (options,) = permute_options(source.question.options, seed)
        question = with_options(source.question, options)
        changed = [
            i
            for i, (a, b) in enumerate(zip(source.ambiguous_state, source.twin_state, strict=True))
            if a != b
        ]
        return self.pair(
            source.id,
            seed,
            item={"state": join(source.ambiguous_state), "question": question},
            twin={"state": join(source.twin_state), "question": question},
            answer=source.answer,
            provenance={
                "source_id": source.id,
                "edit": source.edit,
                "changed_sentences": changed,
                "readings": [r.model_dump() for r in source.readings],
            },
        )

    def validity(self, pair: Pair) -> list[str]:
        prov = pair.item.provenance
        question = pair.item.question
        assert isinstance(question, ChoiceQuestion)
        supported = [r["option"] for r in prov["readings"]]
        problems = []
        if len(set(supported)) != 2 or not set(supported) <= set(question.options):
            problems.append("the readings must support two different shown options")
        if pair.twin.expected.answer not in supported:
            problems.append("the twin's answer is not one of the readings' options")
        if len(prov["changed_sentences"]) != 1:
            problems.append("item and twin states must differ in exactly one sentence")
        return problems
