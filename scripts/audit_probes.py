"""The similarity-audit figures in docs/audit.md that the `audit similarity` table does not give.

Usage: python scripts/audit_probes.py

For the default build at seeds 0, 1 and 2 it prints, per generator that is not exempt, the
audit's own n-gram probe AUC and two probes nobody wrote the corpus against: character
3-5-gram TF-IDF with logistic regression, and a word-count multinomial naive Bayes. Both use the
audit's folds (5-fold GroupKFold by pair) and the text the audit probes see.
"""

from __future__ import annotations

import numpy as np
from sklearn.feature_extraction.text import CountVectorizer, TfidfVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import GroupKFold
from sklearn.naive_bayes import MultinomialNB

from twinbench.audit.similarity import FOLDS, audit_similarity, item_text
from twinbench.builder import generate_all
from twinbench.corpus import load_corpus
from twinbench.records import ReasonCode

HELD_OUT = {
    "char 3-5-gram LR": (
        lambda: TfidfVectorizer(analyzer="char_wb", ngram_range=(3, 5), sublinear_tf=True),
        lambda: LogisticRegression(max_iter=2000),
    ),
    "word NB": (lambda: CountVectorizer(), lambda: MultinomialNB()),
}


def held_out_auc(texts: list[str], labels: np.ndarray, groups: np.ndarray, probe: str) -> float:
    make_vectorizer, make_model = HELD_OUT[probe]
    scores = np.zeros(len(labels))
    for train, test in GroupKFold(FOLDS).split(texts, labels, groups):
        vectorizer = make_vectorizer()
        model = make_model().fit(vectorizer.fit_transform([texts[i] for i in train]), labels[train])
        scores[test] = model.predict_proba(vectorizer.transform([texts[i] for i in test]))[:, 1]
    return float(roc_auc_score(labels, scores))


def main() -> None:
    corpus = load_corpus()
    print("| seed | generator | n-gram (audit) | " + " | ".join(HELD_OUT) + " |")
    print("|---:|---|---:|" + "---:|" * len(HELD_OUT))
    for seed in (0, 1, 2):
        result = generate_all(corpus, seed, None)
        for name, pairs in result.pairs.items():
            if not pairs or pairs[0].item.family == ReasonCode.OUT_OF_LANGUAGE:
                continue
            flat = [x for p in pairs for x in (p.item, p.twin)]
            labels = np.array([0 if x.answerable else 1 for x in flat])
            groups = np.repeat(np.arange(len(pairs)), 2)
            texts = [item_text(x) for x in flat]
            (audit,) = audit_similarity(flat, seed=seed)["generators"].values()
            cells = [f"{audit['auc']['ngrams']['auc']:.3f}"]
            cells += [f"{held_out_auc(texts, labels, groups, p):.3f}" for p in HELD_OUT]
            print(f"| {seed} | {name} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
