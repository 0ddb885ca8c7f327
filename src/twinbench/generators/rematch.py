"""underspecified_state / rematch: the question paired with a same-domain state lacking the fact.

After AGent: the donor state comes from another scenario of the same domain with a different
topic, chosen by TF-IDF cosine similarity inside a recorded band so the pair stays topically
coherent without carrying the answer.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cached_property

import numpy as np

from twinbench.corpus import Scenario
from twinbench.generators.base import (
    CorpusPool,
    Generator,
    Pair,
    Reads,
    join,
    mentions,
    ordered_question,
    revealing_phrases,
)
from twinbench.generators.registry import register
from twinbench.records import ChoiceQuestion, ReasonCode

#: the recorded similarity band (TF-IDF cosine between source and donor states)
BAND = (0.02, 0.60)


@register
class Rematch(Generator[Scenario]):
    """Item = the question over a donor's state; twin = the question over its own state.

    Validity: donor and source share the domain but not the topic, the similarity lies inside
    the band, and the donor state mentions neither the answer, an alias nor any option.
    """

    name = "rematch"
    version = "1.0.0"
    family = ReasonCode.UNDERSPECIFIED_STATE
    #: an even split of the base scenarios (with redaction: alternately, per domain)
    inputs = (Reads(CorpusPool.SCENARIOS),)
    retired = (
        "a borrowed state shares few of the question's words (question-state overlap probe AUC "
        "0.81), and 3 of 20 items read were answerable by common sense; docs/audit.md"
    )

    def sources(self) -> Sequence[Scenario]:
        return [s for s in self.pool.scenarios if self._donor(s) is not None]

    @cached_property
    def _similarity(self) -> np.ndarray:
        from sklearn.feature_extraction.text import TfidfVectorizer

        texts = [join(s.state) for s in self.pool.scenarios]
        matrix = TfidfVectorizer(sublinear_tf=True).fit_transform(texts)
        return np.asarray((matrix @ matrix.T).todense())

    def _blocked(self, source: Scenario) -> list[str]:
        phrases = revealing_phrases(source)
        if isinstance(source.question, ChoiceQuestion):
            phrases += source.question.options
        return phrases

    def _donor(self, source: Scenario) -> tuple[Scenario, float] | None:
        """The most similar eligible donor inside the band (ties: earliest in corpus order)."""
        scenarios = self.pool.scenarios
        i = scenarios.index(source)
        blocked = self._blocked(source)
        best: tuple[Scenario, float] | None = None
        for j, donor in enumerate(scenarios):
            sim = float(self._similarity[i, j])
            if (
                donor.domain != source.domain
                or donor.topic == source.topic
                or not BAND[0] <= sim <= BAND[1]
                or any(mentions(s, p) for s in donor.state for p in blocked)
            ):
                continue
            if best is None or sim > best[1]:
                best = (donor, sim)
        return best

    def generate(self, source: Scenario, seed: int) -> Pair:
        found = self._donor(source)
        if found is None:
            raise ValueError(f"{source.id}: no donor state inside the band")
        donor, sim = found
        question = ordered_question(source, seed) or source.question
        return self.pair(
            source.id,
            seed,
            item={"state": join(donor.state), "question": question},
            twin={"state": join(source.state), "question": question},
            answer=source.answer,
            provenance={
                "source_id": source.id,
                "donor_id": donor.id,
                "edit": "state replaced by donor",
                "similarity": round(sim, 4),
                "band": list(BAND),
                "domain": source.domain,
                "topics": [source.topic, donor.topic],
                "blocked": self._blocked(source),
            },
        )

    def validity(self, pair: Pair) -> list[str]:
        prov = pair.item.provenance
        problems = []
        if prov["topics"][0] == prov["topics"][1]:
            problems.append("donor has the same topic as the source")
        if not prov["band"][0] <= prov["similarity"] <= prov["band"][1]:
            problems.append(f"similarity {prov['similarity']} outside the band {prov['band']}")
        problems += [
            f"donor state mentions {phrase!r}"
            for phrase in prov["blocked"]
            if mentions(pair.item.state, phrase)
        ]
        return problems
