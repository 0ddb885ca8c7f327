"""underspecified_state / redaction: swap the single supporting sentence for a neutral one.

The similarity audit (docs/audit.md) drove the versions. 1.0.0 deleted the sentence and left
a scar: items were a third shorter than their twins (length-probe AUC 0.99). 1.1.0 put a
context sentence of another same-domain scenario in its place; that halved the length gap but
the fillers were shorter and plainer than support sentences, and a few were reused often, so
the probes still told items from twins (length 0.74, n-grams 0.81). 1.2.0 swaps in the
scenario's own hand-written `neutral` sentence: about the same people, in the support
sentence's shape and 90-110% of its length, stating a definite fact that does not bear on the
question. Every other sentence stays byte-identical. 1.3.0 reads rewritten support and neutral
sentences: twins no longer name the answer's label ("as SEV3"; label-mention probe AUC 0.83 on
1.2.0) but state the deciding fact, and neutrals share the question's words about as often as
supports do (question-overlap AUC 0.65 -> 0.55).

1.4.0 closes what a reader who sees both members of a pair could still use. On 1.3.0 every
between-pair probe was <= 0.61 but within pairs (seed 0) the trained probe picked the twin in
74% of pairs, n-grams and length in 66%, state_echo in 67%: the neutrals were plainer
background facts than the supports. Numbers leaked most plainly (the support carried more
number tokens than its neutral in 21% of pairs, the reverse in 8%); the neutral also had the
shorter words (lower mean word length in 68% of pairs), more commas, fewer of the question's
words (the item lacked one the twin had in 36 of 216 pairs, the reverse in 9) and less of its
wording, and none of the scale, threshold and time vocabulary ("puts", "ranks", "hours",
"days", "only", "still", "below") that the supports share within a question family. 211 of the
216 neutrals were rewritten (five were kept) in their support's register: the same kind of fact
about another attribute of the same thing (a number where the support has one, a dollar sign
beside a dollar quote, the family's own vocabulary used for something that does not decide the
answer), matched word length and punctuation, and the question's words where the support has
them. Within pairs the probes now read 0.57-0.61 (trained), 0.61 (n-grams), 0.52-0.54 (length),
0.54-0.56 (state_echo), between pairs <= 0.57 at seeds 0-2. A support that names the answer's
own label (a weekday, a housing material, "room 2A") still gives its pair away; nothing in the
neutral can match that.
"""

from __future__ import annotations

from collections.abc import Sequence

from twinbench.corpus import Scenario
from twinbench.generators.base import (
    CorpusPool,
    Generator,
    Pair,
    Reads,
    blocked_phrases,
    join,
    mentions,
    ordered_question,
    revealing_phrases,
)
from twinbench.generators.registry import register
from twinbench.records import ReasonCode

#: the neutral sentence's length over the support sentence's, in characters
LENGTH_BAND = (0.9, 1.1)


@register
class Redaction(Generator[Scenario]):
    """Item = the state with its support sentence swapped for its neutral one; twin = the state.

    Validity: the item's sentences are the twin's with exactly the support sentence replaced;
    the neutral sentence is 90-110% of the support's length and mentions no option or legend
    label; no item sentence mentions the answer (choice) or an alias.
    """

    name = "redaction"
    version = "1.4.0"
    family = ReasonCode.UNDERSPECIFIED_STATE
    #: an even split of the base scenarios the fixed shares leave
    inputs = (Reads(CorpusPool.SCENARIOS),)

    @classmethod
    def accepts(cls, source: Scenario) -> bool:
        """Scenarios with a hand-written neutral sentence."""
        return source.neutral is not None

    def sources(self) -> Sequence[Scenario]:
        return [s for s in self.pool.scenarios if self.accepts(s)]

    def generate(self, source: Scenario, seed: int) -> Pair:
        assert source.neutral is not None
        question = ordered_question(source, seed) or source.question
        sentences = list(source.state)
        sentences[source.support] = source.neutral
        return self.pair(
            source.id,
            seed,
            item={"state": join(sentences), "question": question},
            twin={"state": join(source.state), "question": question},
            answer=source.answer,
            provenance={
                "source_id": source.id,
                "edit": f"replaced sentence {source.support} with its neutral sentence",
                "support": source.support,
                "removed": source.state[source.support],
                "neutral": source.neutral,
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
        if prov["neutral"] in restored:
            problems.append("the neutral sentence repeats a sentence of the state")
        low, high = LENGTH_BAND
        if not low <= len(prov["neutral"]) / len(prov["removed"]) <= high:
            problems.append(
                f"the neutral sentence is not {low:.0%}-{high:.0%} of the support's length"
            )
        for sentence in sentences:
            for phrase in prov["revealing"]:
                if mentions(sentence, phrase):
                    problems.append(f"an item sentence still mentions {phrase!r}")
        problems += [
            f"the neutral sentence mentions {phrase!r}"
            for phrase in prov["blocked"]
            if mentions(prov["neutral"], phrase)
        ]
        return problems
