"""Agreement of two labellings of the same answers (two annotators, or a judge and a human).

Claims are matched by number within each answer both sides labelled. Over the matched claims:
raw agreement p_o (the share with equal support labels), Cohen's kappa
(p_o - p_e) / (1 - p_e) with p_e = sum over labels of the product of the two sides' label
shares (scikit-learn's `cohen_kappa_score`; None when p_e is 1), and the 3x3 confusion table
(rows: side a, columns: side b). Answer level: answers with claims whose every claim label
is equal. Relevance: equal 0/1/2 (and its kappa); abstentions: an equal "appropriate" verdict.

Answers only one side labelled are counted apart (`only_a`, `only_b`). A judge's side is a
list of `Judgement`s: an ok one is a labelling; a judge_invalid, judge_timeout or judge_error
one is counted as "judge failed" by status, never as an agreement or a disagreement.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any, Final

from twinbench.rag.annotation import AnswerKey
from twinbench.rag.answers import Judgement, JudgeStatus, SupportLabel
from twinbench.rag.labels import ItemLabels

LABELS: Final = tuple(s.value for s in SupportLabel)
Labelling = Mapping[AnswerKey, ItemLabels] | Sequence[Judgement]


def _side(labelling: Labelling) -> tuple[dict[AnswerKey, ItemLabels], dict[AnswerKey, str]]:
    """(labels, failed judgements' statuses) of one side."""
    if isinstance(labelling, Mapping):
        return dict(labelling), {}
    labels, failed = {}, {}
    for j in labelling:
        key = (j.case_id, j.variant, j.trial)
        if j.status == JudgeStatus.OK:
            labels[key] = ItemLabels(tuple(j.labels), j.relevance, None, j.judge)
        else:
            failed[key] = j.status.value
    return labels, failed


def cohen_kappa(first: Sequence[Any], second: Sequence[Any], labels: Sequence[Any]) -> float | None:
    """Cohen's kappa (p_o - p_e) / (1 - p_e); None with no pairs or when p_e is 1 (0/0)."""
    from sklearn.metrics import cohen_kappa_score

    if not first or len(set(first) | set(second)) < 2:
        return None
    kappa = float(cohen_kappa_score(list(first), list(second), labels=list(labels)))
    return None if math.isnan(kappa) else kappa


def _share(agree: int, total: int) -> dict[str, Any]:
    return {"answers": total, "agree": agree, "rate": agree / total if total else None}


def agreement(a: Labelling, b: Labelling) -> dict[str, Any]:
    """Claim-, answer- and relevance-level agreement of two labellings of the same answers."""
    labels_a, failed_a = _side(a)
    labels_b, failed_b = _side(b)
    failed = {**failed_a, **failed_b}
    both = sorted(labels_a.keys() & labels_b.keys())
    first: list[str] = []
    second: list[str] = []
    unmatched = answers_agree = answers_compared = 0
    for key in both:
        ca = {c.claim: c.support_label.value for c in labels_a[key].claims}
        cb = {c.claim: c.support_label.value for c in labels_b[key].claims}
        unmatched += len(ca.keys() ^ cb.keys())
        for n in sorted(ca.keys() & cb.keys()):
            first.append(ca[n])
            second.append(cb[n])
        if ca or cb:
            answers_compared += 1
            answers_agree += ca == cb
    names = list(LABELS)
    table = [[0] * len(names) for _ in names]
    for x, y in zip(first, second, strict=True):
        table[names.index(x)][names.index(y)] += 1
    relevance = [
        (labels_a[k].relevance, labels_b[k].relevance)
        for k in both
        if labels_a[k].relevance is not None and labels_b[k].relevance is not None
    ]
    abstention = [
        (labels_a[k].abstention_appropriate, labels_b[k].abstention_appropriate)
        for k in both
        if labels_a[k].abstention_appropriate is not None
        and labels_b[k].abstention_appropriate is not None
    ]
    same = sum(x == y for x, y in zip(first, second, strict=True))
    return {
        "answers": {
            "both": len(both),
            "only_a": len(labels_a.keys() - labels_b.keys() - failed.keys()),
            "only_b": len(labels_b.keys() - labels_a.keys() - failed.keys()),
            "judge_failed": dict(sorted(Counter(failed.values()).items())),
        },
        "claims": {
            "matched": len(first),
            "unmatched": unmatched,
            "agreement": same / len(first) if first else None,
            "kappa": cohen_kappa(first, second, names),
            "confusion": {"labels": names, "rows": "a", "columns": "b", "table": table},
        },
        "answer_level": _share(answers_agree, answers_compared),
        "relevance": {
            **_share(sum(x == y for x, y in relevance), len(relevance)),
            "kappa": cohen_kappa([x for x, _ in relevance], [y for _, y in relevance], [0, 1, 2]),
        },
        "abstention_appropriate": _share(sum(x == y for x, y in abstention), len(abstention)),
    }
