"""Can a probe tell items from their twins? Cross-validated AUC per generator and feature set.

For each generator version, items (label 1) and twins (label 0) are scored by a logistic
regression on one feature set, with 5-fold cross-validation that keeps both sides of a pair in
the same fold (GroupKFold by pair). The AUC of the out-of-fold scores gets a bootstrap
interval over pairs. Feature sets:

* `length` — characters and whitespace tokens of the state + question + answer choices;
* `ngrams` — TF-IDF of word 1-2-grams of the same text (template n-grams);
* `perplexity` — optional (`--perplexity`): mean token negative log-likelihood of the state
  under the embedded SmolLM2;
* `trained` — a probe that learns rules nobody wrote: TF-IDF of character 2-4-grams of the
  shown text beside simple counts (digits, punctuation, capitals, option count and lengths,
  how much of the question and of the best option the state repeats, character overlap of the
  question with its closest state sentence), one logistic regression, the same GroupKFold;
* every relational rule of `twinbench.audit.shortcuts`.

Each probe is also read **within pairs**: the share of pairs whose item scores above its own
twin (ties one half), from the same out-of-fold scores, with a pair-bootstrap interval. That is
what a system that sees both members of a pair (one batch, one conversation) can exploit even
when the scores overlap across pairs.

A version whose AUC (point estimate) exceeds the published bound (default 0.65) on any feature
set, between or within pairs, is marked (`within:PROBE` for the latter). `out_of_language`
generators are reported but exempt: their items differ from their twins by language on purpose
(the label is the language tag plus the script check).
"""

from __future__ import annotations

import string
from collections import defaultdict
from collections.abc import Callable, Sequence
from difflib import SequenceMatcher
from typing import Any

import numpy as np

from twinbench.audit.shortcuts import RULES, content_words, option_scores, sentences
from twinbench.records import Item, ReasonCode
from twinbench.systems.prompt import answer_choices

BOUND = 0.65
FOLDS = 5
#: probes that detect the language itself, from which out_of_language generators are exempt:
#: length, n-grams, the trained probe and perplexity by design; the two overlap rules because
#: they split words at spaces and drop *English* stop words, so on a translation they count
#: Spanish function words as content words and see a whole Chinese or Khmer clause as one word
LANGUAGE_PROBES = frozenset(
    {
        "length",
        "ngrams",
        "perplexity",
        "trained",
        "question_overlap",
        "option_overlap",
        "state_echo",
        "repeated_phrase",
    }
)


def item_text(item: Item) -> str:
    """What a probe sees of an item: what a model is shown (state, question, answer choices).

    The choices are the options (choice), the legend labels (score) or yes/no (noul), as the
    prompt lists them.
    """
    choices = [c.text for c in answer_choices(item.question)]
    return " ".join([item.state, item.question.instructions, *choices])


def _length_features(items: Sequence[Item]) -> np.ndarray:
    texts = [item_text(i) for i in items]
    return np.array([[len(t), len(t.split())] for t in texts], dtype=np.float64)


def _cv_scores(features: Any, labels: np.ndarray, groups: np.ndarray, seed: int) -> np.ndarray:
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import GroupKFold
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    scores = np.zeros(len(labels))
    folds = GroupKFold(n_splits=min(FOLDS, len(set(groups.tolist()))))
    for train, test in folds.split(features, labels, groups):
        dense = not hasattr(features, "tocsr")
        model = (
            make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000))
            if dense
            else LogisticRegression(max_iter=1000, random_state=seed)
        )
        model.fit(features[train], labels[train])
        scores[test] = model.predict_proba(features[test])[:, 1]
    return scores


def _ngram_scores(
    items: Sequence[Item], labels: np.ndarray, groups: np.ndarray, seed: int
) -> np.ndarray:
    from sklearn.feature_extraction.text import TfidfVectorizer

    texts = [item_text(i) for i in items]
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import GroupKFold

    scores = np.zeros(len(labels))
    folds = GroupKFold(n_splits=min(FOLDS, len(set(groups.tolist()))))
    for train, test in folds.split(texts, labels, groups):
        vectorizer = TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True)
        train_x = vectorizer.fit_transform([texts[i] for i in train])
        model = LogisticRegression(max_iter=1000, random_state=seed)
        model.fit(train_x, labels[train])
        scores[test] = model.predict_proba(vectorizer.transform([texts[i] for i in test]))[:, 1]
    return scores


def _counts(item: Item) -> list[float]:
    """Simple counts of what a model is shown (the dense half of the trained probe): digits,
    punctuation (all, and each ASCII mark), capitals, options and their lengths, overlaps."""
    text = item_text(item)
    choices = [c.text for c in answer_choices(item.question)] or [""]
    asked = content_words(item.question.instructions)
    closest = max(
        (
            SequenceMatcher(None, item.question.instructions.lower(), s.lower()).ratio()
            for s in sentences(item.state)
        ),
        default=0.0,
    )
    return [
        sum(ch.isdigit() for ch in text),
        sum(ch.isdigit() for ch in item.state),
        sum(not ch.isalnum() and not ch.isspace() for ch in text),
        *(text.count(mark) for mark in string.punctuation),
        sum(ch.isupper() for ch in text),
        len(choices),
        float(np.mean([len(c) for c in choices])),
        float(max(len(c) for c in choices)),
        len(asked & content_words(item.state)) / max(1, len(asked)),
        max(option_scores(item), default=0.0),
        closest,
    ]


def _trained_scores(
    items: Sequence[Item], labels: np.ndarray, groups: np.ndarray, seed: int
) -> np.ndarray:
    """Out-of-fold scores of the trained probe (character n-grams + counts)."""
    from scipy.sparse import csr_matrix, hstack
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import GroupKFold
    from sklearn.preprocessing import StandardScaler

    texts = [item_text(i) for i in items]
    counts = np.array([_counts(i) for i in items], dtype=np.float64)
    scores = np.zeros(len(labels))
    folds = GroupKFold(n_splits=min(FOLDS, len(set(groups.tolist()))))
    for train, test in folds.split(texts, labels, groups):
        vectorizer = TfidfVectorizer(analyzer="char_wb", ngram_range=(2, 4), sublinear_tf=True)
        vectorizer.fit([texts[i] for i in train])
        scaler = StandardScaler().fit(counts[train])
        train_x, test_x = (
            hstack(
                [
                    vectorizer.transform([texts[i] for i in rows]),
                    csr_matrix(scaler.transform(counts[rows])),
                ]
            ).tocsr()
            for rows in (train, test)
        )
        model = LogisticRegression(max_iter=2000, random_state=seed)
        model.fit(train_x, labels[train])
        scores[test] = model.predict_proba(test_x)[:, 1]
    return scores


def within_pair_interval(
    item_scores: np.ndarray, twin_scores: np.ndarray, seed: int, resamples: int = 500
) -> dict[str, Any]:
    """Share of pairs whose item scores above its twin (ties count one half), with a
    pair-bootstrap percentile interval: how well a probe tells the two members of one pair
    apart when it sees both."""
    wins = (item_scores > twin_scores) + 0.5 * (item_scores == twin_scores)
    rows = np.random.default_rng(seed).integers(len(wins), size=(resamples, len(wins)))
    low, high = np.percentile(wins[rows].mean(axis=1), [2.5, 97.5])
    return {
        "auc": float(wins.mean()),
        "low": float(low),
        "high": float(high),
        "resamples": resamples,
        "seed": seed,
        "method": "share of pairs, item above twin; pair bootstrap, percentile",
    }


def paired_auc_interval(
    item_scores: np.ndarray, twin_scores: np.ndarray, seed: int, resamples: int = 500
) -> dict[str, Any]:
    """ROC AUC of items (positives) against twins (negatives), with a pair-bootstrap interval.

    The AUC is the Mann-Whitney statistic U / (n_items * n_twins), ties counting one half (the
    same number as sklearn's roc_auc_score). The interval resamples pairs, and scipy's
    `mannwhitneyu` scores every resample in one vectorised call: called once per resample,
    sklearn's roc_auc_score spent 95% of the audit's time validating its input.
    """
    from scipy.stats import mannwhitneyu

    def auc(items: np.ndarray, twins: np.ndarray) -> np.ndarray:
        u = mannwhitneyu(items, twins, axis=-1, method="asymptotic").statistic
        return np.asarray(u, dtype=np.float64) / float(items.shape[-1] * twins.shape[-1])

    rows = np.random.default_rng(seed).integers(
        len(item_scores), size=(resamples, len(item_scores))
    )
    low, high = np.percentile(auc(item_scores[rows], twin_scores[rows]), [2.5, 97.5])
    return {
        "auc": float(auc(item_scores, twin_scores)),
        "low": float(low),
        "high": float(high),
        "resamples": resamples,
        "seed": seed,
        "method": "pair bootstrap of out-of-fold scores, percentile",
    }


def probe_auc(generator: dict[str, Any], probe: str) -> float:
    """The AUC behind a name in `over_bound`: `PROBE` between pairs, `within:PROBE` within."""
    if probe.startswith("within:"):
        return float(generator["within_pair"][probe.removeprefix("within:")]["auc"])
    return float(generator["auc"][probe]["auc"])


def distributions(items: Sequence[Item], twins: Sequence[Item]) -> dict[str, Any]:
    """Item/twin length ratio and token overlap (Jaccard) quantiles over pairs."""
    ratios, overlaps = [], []
    for item, twin in zip(items, twins, strict=True):
        a, b = item_text(item), item_text(twin)
        ratios.append(len(a) / max(1, len(b)))
        ta, tb = set(a.lower().split()), set(b.lower().split())
        overlaps.append(len(ta & tb) / max(1, len(ta | tb)))
    q = [5, 25, 50, 75, 95]
    return {
        "length_ratio": dict(
            zip(map(str, q), np.percentile(ratios, q).round(4).tolist(), strict=True)
        ),
        "token_overlap": dict(
            zip(map(str, q), np.percentile(overlaps, q).round(4).tolist(), strict=True)
        ),
    }


PerplexityFn = Callable[[Sequence[Item]], np.ndarray]


def shortcut_scores(pairs: Sequence[tuple[Item, Item]], seed: int) -> dict[str, Any]:
    """What the `shortcut` system gets on these pairs, graded by the exact rule.

    Ideal-pair rate (item abstained on with its family's code and twin answered right) with a
    95% pair-bootstrap interval (2,000 resamples), plus item recall and twin accuracy.
    """
    from twinbench.grader import Outcome, expected_table, grade_rows
    from twinbench.stats.bootstrap import ratio_interval
    from twinbench.systems.base import Request
    from twinbench.systems.shortcut import Shortcut

    flat = [x for pair in pairs for x in pair]
    responses = Shortcut().respond([Request(x.id, x.state, x.question) for x in flat])
    rows = (("shortcut", n, r.model_dump(mode="json")) for n, r in enumerate(responses, 1))
    graded = grade_rows(rows, expected_table(flat, ("en",)))
    item_ok = graded.outcome[0::2] == Outcome.CORRECT_ABSTAIN
    twin_ok = graded.outcome[1::2] == Outcome.CORRECT_ANSWER
    ideal = (item_ok & twin_ok).astype(np.float64)
    interval = ratio_interval(ideal, np.ones_like(ideal), 2_000, np.random.default_rng(seed), seed)
    return {
        "ideal_pair_rate": interval.as_dict(),
        "item_recall": float(item_ok.mean()),
        "twin_accuracy": float(twin_ok.mean()),
    }


def audit_similarity(
    items: Sequence[Item],
    *,
    bound: float = BOUND,
    seed: int = 0,
    perplexity: PerplexityFn | None = None,
    skip_exempt: bool = False,
) -> dict[str, Any]:
    """Per generator version: AUC per feature set with intervals, distributions, verdict."""
    by_generator: dict[tuple[str, str], dict[str, Item]] = defaultdict(dict)
    family: dict[tuple[str, str], ReasonCode] = {}
    for item in items:
        key = (item.generator.name, item.generator.version)
        by_generator[key][item.id] = item
        family[key] = item.family
    out: dict[str, Any] = {}
    for (name, version), members in sorted(by_generator.items()):
        pairs = [
            (i, members[i.twin_id])
            for i in members.values()
            if not i.answerable and i.twin_id in members
        ]
        exempt = family[(name, version)] == ReasonCode.OUT_OF_LANGUAGE
        if len(pairs) < FOLDS:
            continue
        flat = [x for pair in pairs for x in pair]
        labels = np.array([0 if x.answerable else 1 for x in flat])
        groups = np.repeat(np.arange(len(pairs)), 2)
        probes: dict[str, np.ndarray] = {}
        if not (exempt and skip_exempt):
            probes["length"] = _cv_scores(_length_features(flat), labels, groups, seed)
            probes["ngrams"] = _ngram_scores(flat, labels, groups, seed)
            probes["trained"] = _trained_scores(flat, labels, groups, seed)
            if perplexity is not None:
                probes["perplexity"] = _cv_scores(perplexity(flat)[:, None], labels, groups, seed)
        for probe, rule in RULES.items():
            features = np.array([rule(x) for x in flat], dtype=np.float64)
            probes[probe] = _cv_scores(features, labels, groups, seed)
        aucs = {
            probe: paired_auc_interval(scores[0::2], scores[1::2], seed)
            for probe, scores in probes.items()
        }
        within = {
            probe: within_pair_interval(scores[0::2], scores[1::2], seed)
            for probe, scores in probes.items()
        }
        over = [
            prefix + p
            for prefix, read in (("", aucs), ("within:", within))
            for p, a in read.items()
            if a["auc"] > bound and not (exempt and p in LANGUAGE_PROBES)
        ]
        out[f"{name}@{version}"] = {
            "generator": name,
            "version": version,
            "family": family[(name, version)].value,
            "pairs": len(pairs),
            "auc": aucs,
            "within_pair": within,
            **distributions([p[0] for p in pairs], [p[1] for p in pairs]),
            "shortcut": shortcut_scores(pairs, seed),
            "over_bound": over,
            "exempt": sorted(LANGUAGE_PROBES) if exempt else [],
            "passes": not over,
        }
    return {
        "schema": "twinbench.similarity/1",
        "bound": bound,
        "seed": seed,
        "folds": FOLDS,
        "generators": out,
    }


def smollm2_perplexity(items: Sequence[Item], batch_size: int = 16) -> np.ndarray:
    """Mean token negative log-likelihood of each item's state under the embedded SmolLM2."""
    import torch

    from twinbench.systems.local_model import load_smollm2

    model, tokenizer = load_smollm2()
    encoded = [tokenizer.encode(item.state, add_special_tokens=False)[:512] for item in items]
    order = sorted(range(len(items)), key=lambda i: len(encoded[i]))
    out = np.zeros(len(items))
    for start in range(0, len(order), batch_size):
        rows = order[start : start + batch_size]
        width = max(len(encoded[i]) for i in rows)
        ids = torch.tensor([encoded[i] + [0] * (width - len(encoded[i])) for i in rows])
        mask = torch.tensor([[1] * len(encoded[i]) + [0] * (width - len(encoded[i])) for i in rows])
        with torch.inference_mode():
            logits = model(input_ids=ids, attention_mask=mask).logits[:, :-1]
        logprobs = torch.log_softmax(logits.float(), -1).gather(-1, ids[:, 1:, None])[..., 0]
        real = mask[:, 1:].float()
        nll = -(logprobs * real).sum(1) / real.sum(1).clamp(min=1)
        out[rows] = nll.numpy()
    return out
