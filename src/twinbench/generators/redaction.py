"""underspecified_state / redaction: take out the single supporting sentence.

Version 1.0.0 deleted the sentence, and the similarity audit caught the scar: items were a
third shorter than their twins (length-probe AUC 0.99, docs/audit.md). Version 1.1.0 puts a
neutral sentence of similar length in its place: a context (non-support) sentence of another
scenario of the same domain (same question topic first, whose context sentences are written
not to bear on that question), mentioning no answer, alias or option of this one. Every other
sentence stays byte-identical.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

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
from twinbench.generators.prompts_safe import blocked_phrases
from twinbench.records import ChoiceQuestion, ReasonCode


def ordered_question(scenario: Scenario, seed: int) -> ChoiceQuestion | None:
    """The scenario's choice question with its options in the seeded order (None otherwise)."""
    if not isinstance(scenario.question, ChoiceQuestion):
        return None
    (options,) = permute_options(scenario.question.options, seed)
    return with_options(scenario.question, options)


@register
class Redaction(Generator[Scenario]):
    """Item = the state with its support sentence swapped for a neutral filler; twin = the state.

    Validity: the item's sentences are the twin's with exactly the support sentence replaced,
    the filler comes from another scenario, and no item sentence mentions the answer (choice),
    an alias or (the filler) any option or legend label.
    """

    name = "redaction"
    version = "1.1.0"
    family = ReasonCode.UNDERSPECIFIED_STATE

    def sources(self) -> Sequence[Scenario]:
        return [s for s in self.pool.scenarios if self._fillers(s)]

    def source_key(self, source: Scenario) -> str:
        return source.id

    def _fillers(self, source: Scenario) -> list[tuple[int, int, str, str]]:
        """Candidate fillers as (same-topic rank, length gap, text, donor id), best first."""
        blocked = blocked_phrases(source)
        removed = source.state[source.support]
        # a filler opening like a sentence already there ("The request concerns ...") would
        # restate that slot of the story with another value: skip those
        openings = {" ".join(s.lower().split()[:3]) for s in source.state}
        found = []
        for donor in self.pool.corpus.scenarios:
            if donor.id == source.id or donor.domain != source.domain:
                continue
            for i, sentence in enumerate(donor.state):
                if i == donor.support or sentence in source.state:
                    continue
                if " ".join(sentence.lower().split()[:3]) in openings:
                    continue
                if any(mentions(sentence, phrase) for phrase in blocked):
                    continue
                rank = 0 if donor.topic == source.topic else 1
                found.append((rank, abs(len(sentence) - len(removed)), sentence, donor.id))
        return sorted(found)

    def generate(self, source: Scenario, seed: int) -> Pair:
        question = ordered_question(source, seed) or source.question
        candidates = self._fillers(source)
        best = [c for c in candidates if c[:2] == candidates[0][:2]]
        _, _, filler, donor = best[int(np.random.default_rng(seed).integers(len(best)))]
        sentences = list(source.state)
        sentences[source.support] = filler
        return self.pair(
            source.id,
            seed,
            item={"state": join(sentences), "question": question},
            twin={"state": join(source.state), "question": question},
            answer=source.answer,
            provenance={
                "source_id": source.id,
                "edit": f"replaced sentence {source.support} with a neutral filler",
                "support": source.support,
                "removed": source.state[source.support],
                "filler": filler,
                "filler_from": donor,
                "sentences": sentences,
                "revealing": revealing_phrases(source),
                "blocked": blocked_phrases(source),
            },
        )

    def validity(self, pair: Pair) -> list[str]:
        prov = pair.item.provenance
        sentences: list[str] = prov["sentences"]
        problems = []
        restored = list(sentences)
        restored[prov["support"]] = prov["removed"]
        if join(sentences) != pair.item.state or join(restored) != pair.twin.state:
            problems.append("item state is not the twin state with the support sentence replaced")
        if prov["filler_from"] == prov["source_id"] or prov["filler"] in restored:
            problems.append("the filler must come from another scenario")
        for sentence in sentences:
            for phrase in prov["revealing"]:
                if mentions(sentence, phrase):
                    problems.append(f"an item sentence still mentions {phrase!r}")
        problems += [
            f"the filler mentions {phrase!r}"
            for phrase in prov["blocked"]
            if mentions(prov["filler"], phrase)
        ]
        return problems
