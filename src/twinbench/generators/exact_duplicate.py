"""contradictory_options / exact_duplicate: an option equal to the answer after normalisation."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from twinbench.corpus import Scenario
from twinbench.generators.base import Generator, Pair, join, permute_options, register, with_options
from twinbench.normalize import normalize_option
from twinbench.records import ChoiceQuestion, ReasonCode

#: surface variants that the published normalisation undoes (case, punctuation, spacing)
VARIANTS = ("upper_first", "title", "upper", "period", "double_space", "exclamation")


def variant(text: str, kind: str) -> str:
    """A surface variant of `text` that normalises to the same string."""
    if kind == "upper_first":
        return text[:1].upper() + text[1:]
    if kind == "title":
        return text.title()
    if kind == "upper":
        return text.upper()
    if kind == "period":
        return text + "."
    if kind == "double_space":
        return text.replace(" ", "  ") if " " in text else text + "."
    return text + "!"


@register
class ExactDuplicate(Generator[Scenario]):
    """Item = a wrong option swapped for a surface variant of the answer; twin = the options.

    Both show the scenario's extra option too, the same number of options in the same seeded
    order (the duplicate takes the swapped option's slot). Validity: the duplicate equals the
    answer after normalisation but not before; the twin's options are all distinct.
    """

    name = "exact_duplicate"
    version = "1.1.0"
    family = ReasonCode.CONTRADICTORY_OPTIONS

    def sources(self) -> Sequence[Scenario]:
        return [
            s
            for s in self.pool.scenarios
            if isinstance(s.question, ChoiceQuestion) and s.extra_option
        ]

    def source_key(self, source: Scenario) -> str:
        return source.id

    def generate(self, source: Scenario, seed: int) -> Pair:
        assert isinstance(source.question, ChoiceQuestion) and source.extra_option
        answer = str(source.answer)
        rng = np.random.default_rng(seed)
        kinds = [k for k in VARIANTS if variant(answer, k) != answer]
        kind = kinds[int(rng.integers(len(kinds)))]
        duplicate = variant(answer, kind)
        # v1.1.0: both sides show the extra option (v1.0.0 showed it on twins only, and its
        # topic-constant words gave twins away: n-gram probe AUC 0.97); the item swaps one
        # wrong option, chosen with the seed, for the duplicate of the answer
        wrong = [i for i, o in enumerate(source.question.options) if o != answer]
        swapped = wrong[int(rng.integers(len(wrong)))]
        item_base = [
            duplicate if i == swapped else o for i, o in enumerate(source.question.options)
        ]
        item_options, twin_options = permute_options(
            [*item_base, source.extra_option],
            seed,
            [*source.question.options, source.extra_option],
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
                "edit": f"replaced {source.question.options[swapped]!r} with a {kind} "
                "duplicate of the answer",
                "duplicate": duplicate,
                "duplicate_of": answer,
                "twin_option": source.extra_option,
            },
        )

    def validity(self, pair: Pair) -> list[str]:
        prov = pair.item.provenance
        twin_q = pair.twin.question
        assert isinstance(twin_q, ChoiceQuestion)
        problems = []
        if normalize_option(prov["duplicate"]) != normalize_option(prov["duplicate_of"]):
            problems.append("the duplicate does not equal the answer after normalisation")
        if prov["duplicate"] == prov["duplicate_of"]:
            problems.append("the duplicate is byte-identical (it must differ before normalising)")
        if len({normalize_option(o) for o in twin_q.options}) != len(twin_q.options):
            problems.append("the twin's options collide after normalisation")
        return problems
