"""underspecified_state / reference_ambiguity: two referents, each supporting another option.

Version 1.2.0 reads the rewritten `ambiguity.jsonl` (issue 22). In 1.1.0 the twin's edit
reused a phrase the state already had ("the 9:50 train", "the office router", "Kari Dahl") and
the item's was a category phrase found nowhere else ("the morning train"): of 80 pairs, 51 had
only the twin's edited sentence repeat a word 2-3-gram of the other state sentences, 3 only the
item's; a probe of the last sentence's repeated n-grams scored AUC 0.78 between pairs and 0.80
within (the issue measured 0.67 and 0.80). The twins repeated whole phrases ("the hiring
meeting": 3 words or more in 33 twins, 1 item), the items one bigram. Now 40 records are
rewritten both ways: items repeat the category the state gives both referents ("each is a
morning train" ... "the morning train", "Two containers for Arbor Furniture" ... "the container
for Arbor Furniture"), twins name their referent in words the state does not use ("the later
train", "the router in her office", "Ms. Dahl", "the frozen sample"), and shared sentences word
the referents' labels apart from the twin's phrase ("Her hiring meeting starts at 14:00"). Only
the item's edit repeats in 29 pairs, only the twin's in 27; the longest repeated run is longer
on the item's side in 30, on the twin's in 27 (tests/generators/test_reference_ambiguity.py).
Digits, hyphens and titles ("Ms.") are spread over both sides.

In 1.0.0 the edits ran one way (item "she said", "the manager", "their"; twin a name, "his",
"the second ..."), and the n-gram probe learnt the direction (AUC 0.68, docs/audit.md); 1.1.0
used each kind of referring expression (pronoun, name, role noun, qualified noun phrase) about
as often on either side of the edit, with changed phrases of about the same length.
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
    version = "1.2.0"
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
