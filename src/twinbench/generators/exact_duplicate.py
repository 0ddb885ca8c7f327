"""contradictory_options / exact_duplicate: an option equal to the answer after normalisation."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from twinbench.audit.shortcuts import content_words, names, sentences
from twinbench.corpus import Scenario
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
from twinbench.normalize import normalize_option
from twinbench.records import ChoiceQuestion, ReasonCode

#: surface variants that the published normalisation undoes (case, punctuation, spacing)
VARIANTS = ("upper_first", "title", "upper", "period", "double_space", "exclamation")


def variant(text: str, kind: str) -> str | None:
    """A surface variant of `text` that normalises to the same string (None if it cannot)."""
    if kind == "upper_first":
        out = text[:1].upper() + text[1:]
    elif kind == "title":
        out = text.title()
    elif kind == "upper":
        out = text.upper()
    elif kind == "period":
        out = text + "."
    elif kind == "double_space":
        out = text.replace(" ", "  ")
    else:
        out = text + "!"
    return out if out != text else None


def echo(state: str, option: str) -> tuple[float, bool]:
    """How much the state's wording supports `option`: the largest share of its content words
    in one state sentence, and whether the state names it as whole words."""
    own = content_words(option)
    parts = [content_words(s) for s in sentences(state)] or [set()]
    share = max(len(own & p) / len(own) for p in parts) if own else 0.0
    return round(share, 6), names(normalize_option(state), option)


def echo_twins(source: Scenario) -> list[int]:
    """Indexes of the wrong options the state echoes exactly as much as the answer (`echo`):
    the ones a twin may duplicate without the duplicate echoing the state less."""
    assert isinstance(source.question, ChoiceQuestion)
    state, options = join(source.state), source.question.options
    target = echo(state, str(source.answer))
    return [i for i, o in enumerate(options) if o != source.answer and echo(state, o) == target]


@register
class ExactDuplicate(Generator[Scenario]):
    """Item = a wrong option swapped for a surface variant of the answer; twin = the same slot
    swapped for a variant of another wrong option (a duplicated *distractor*).

    Both sides show a colliding pair, the scenario's extra option, the same number of options
    and the same seeded order; only "is the duplicated option the answer?" tells them apart,
    and the twin stays answerable (its answer is the one option equal to the expected one).

    1.3.0: in 1.2.0 the twin copied a random wrong option, while the state supports the answer,
    so the item's colliding pair echoed the state's wording more than the twin's: "the
    duplicated option overlaps the state more than the others" (rule `duplicate_echo`) scored
    0.60-0.64 between pairs and 0.56-0.58 within (issue 22: 0.67 at seed 11, and a decision
    rule on it got 0.32 ideal pairs). Within a pair that rule's difference is the answer's
    overlap minus the copied option's, so now the twin copies a wrong option the state echoes
    exactly as much as the answer (`echo`: same best-sentence word share, named or not), and
    scenarios whose state echoes the answer more than every wrong option (10-12 of the 71
    dealt at seeds 0-2: the state names the answer and no distractor) are not used.

    Validity: the item's duplicate equals the answer after normalisation but not before; the
    twin's duplicate equals a wrong option the state echoes as much as the answer, and the
    answer occurs once on the twin.
    """

    name = "exact_duplicate"
    version = "1.3.0"
    family = ReasonCode.CONTRADICTORY_OPTIONS
    #: a third of the base scenarios, dealt before the generators that split the rest
    inputs = (Reads(CorpusPool.SCENARIOS, share=0.33),)

    @classmethod
    def accepts(cls, source: Scenario) -> bool:
        """Choice scenarios with an extra option and at least two wrong options."""
        return (
            isinstance(source.question, ChoiceQuestion)
            and source.extra_option is not None
            and sum(o != source.answer for o in source.question.options) >= 2
        )

    def sources(self) -> Sequence[Scenario]:
        """The dealt scenarios with a wrong option echoed as much as the answer (`echo_twins`;
        not a condition of `accepts`, so the dealing of the shared pool does not change)."""
        return [s for s in self.pool.scenarios if self.accepts(s) and echo_twins(s)]

    def generate(self, source: Scenario, seed: int) -> Pair:
        assert isinstance(source.question, ChoiceQuestion) and source.extra_option
        answer = str(source.answer)
        options = source.question.options
        rng = np.random.default_rng(seed)
        # 1.0.0 showed the extra option on twins only (n-gram AUC 0.97); 1.1.0 showed it on
        # both sides but only items had a colliding pair ("two options collide" was a perfect
        # shortcut); 1.2.0 gives twins a colliding pair too, on a wrong option; 1.3.0 copies
        # one the state echoes as much as the answer, and swaps out another wrong option
        candidates = echo_twins(source)
        copied = candidates[int(rng.integers(len(candidates)))]
        wrong = [i for i, o in enumerate(options) if o != answer and i != copied]
        swapped = wrong[int(rng.integers(len(wrong)))]
        kinds = [
            k
            for k in VARIANTS
            if variant(answer, k) is not None and variant(options[copied], k) is not None
        ] or list(VARIANTS)
        kind = kinds[int(rng.integers(len(kinds)))]
        item_duplicate = variant(answer, kind) or answer + "."
        twin_duplicate = variant(options[copied], kind) or options[copied] + "."
        item_options, twin_options = permute_options(
            [item_duplicate if i == swapped else o for i, o in enumerate(options)]
            + [source.extra_option],
            seed,
            [twin_duplicate if i == swapped else o for i, o in enumerate(options)]
            + [source.extra_option],
        )
        return self.pair(
            source.id,
            seed,
            item={
                "state": join(source.state),
                "question": with_options(source.question, item_options),
            },
            twin={
                "state": join(source.state),
                "question": with_options(source.question, twin_options),
            },
            answer=answer,
            provenance={
                "source_id": source.id,
                "edit": f"replaced {options[swapped]!r} with a {kind} variant of the answer "
                f"(the twin: with a {kind} variant of {options[copied]!r})",
                "variant": kind,
                "duplicate": item_duplicate,
                "duplicate_of": answer,
                "twin_duplicate": twin_duplicate,
                "twin_duplicate_of": options[copied],
            },
        )

    def validity(self, pair: Pair) -> list[str]:
        prov = pair.item.provenance
        twin_q = pair.twin.question
        assert isinstance(twin_q, ChoiceQuestion)
        problems = []
        for side in ("", "twin_"):
            dup, of = prov[f"{side}duplicate"], prov[f"{side}duplicate_of"]
            if normalize_option(dup) != normalize_option(of):
                problems.append(f"the {side or 'item_'}duplicate does not normalise to {of!r}")
            if dup == of:
                problems.append(f"the {side or 'item_'}duplicate is byte-identical to {of!r}")
        answer = normalize_option(str(pair.twin.expected.answer))
        if [normalize_option(o) for o in twin_q.options].count(answer) != 1:
            problems.append("the twin's answer does not occur exactly once after normalisation")
        if prov["twin_duplicate_of"] == prov["duplicate_of"]:
            problems.append("the twin duplicates the answer")
        state = pair.twin.state
        if echo(state, prov["twin_duplicate_of"]) != echo(state, prov["duplicate_of"]):
            problems.append("the state echoes the twin's duplicated option unlike the answer")
        return problems
