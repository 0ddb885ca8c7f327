"""Issue 22's reference_ambiguity probe, read from one item at a time.

Usage: python scripts/ambiguity_repeats.py

Per item (no twin needed): the word 2-6-grams of the state's last sentence (where every edit
sits) that the earlier sentences, or the earlier sentences with the question and options,
repeat; their number, whether there is one and the longest, over all words and over content
words. Scored like the audit's rules (logistic regression, 5-fold GroupKFold by pair) between
and within pairs, at seeds 0, 1 and 2. reference_ambiguity 1.1.0: 0.78 between, 0.80 within;
1.2.0: 0.40-0.51 and 0.42-0.51.
"""

from __future__ import annotations

import numpy as np

from twinbench.audit.shortcuts import STOPWORDS, Shown, choice_labels, sentences, words
from twinbench.audit.similarity import _cv_scores, paired_auc_interval, within_pair_interval
from twinbench.builder import generate_all
from twinbench.corpus import load_corpus


def _grams(tokens: list[str]) -> set[tuple[str, ...]]:
    return {tuple(tokens[i : i + n]) for n in range(2, 7) for i in range(len(tokens) - n + 1)}


def features(item: Shown) -> list[float]:
    """[count, any, longest] of the last sentence's n-grams found earlier, per reading."""
    parts = sentences(item.state)
    last, rest = parts[-1], " ".join(parts[:-1])
    shown = " ".join([rest, item.question.instructions, *choice_labels(item)])
    out: list[float] = []
    for content_only in (False, True):

        def tokens(text: str, content_only: bool = content_only) -> list[str]:
            return [w for w in words(text) if not (content_only and w in STOPWORDS)]

        for context in (rest, shown):
            found = _grams(tokens(last)) & _grams(tokens(context))
            out += [len(found), float(bool(found)), float(max(map(len, found), default=0))]
    return out


def main() -> None:
    corpus = load_corpus()
    for seed in (0, 1, 2):
        pairs = generate_all(corpus, seed, None).pairs["reference_ambiguity"]
        flat = [x for p in pairs for x in (p.item, p.twin)]
        labels = np.array([0 if x.answerable else 1 for x in flat])
        groups = np.repeat(np.arange(len(pairs)), 2)
        scores = _cv_scores(np.array([features(x) for x in flat]), labels, groups, seed)
        between = paired_auc_interval(scores[0::2], scores[1::2], seed)
        within = within_pair_interval(scores[0::2], scores[1::2], seed)
        print(
            f"seed {seed} {flat[0].generator.version}: "
            f"between {between['auc']:.2f} [{between['low']:.2f}, {between['high']:.2f}], "
            f"within {within['auc']:.2f} [{within['low']:.2f}, {within['high']:.2f}]"
        )


if __name__ == "__main__":
    main()
