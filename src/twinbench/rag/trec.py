"""TREC interchange, as trec_eval, ranx and ir_measures read it.

qrels: `QID 0 DOCID GRADE` per line. runs: `QID Q0 DOCID RANK SCORE TAG` per line; a ranking is
ordered by score descending, ties by DOCID ascending (the RANK column is not trusted). A
ranking that repeats a DOCID is an input error, never extra gain. Grades are integers >= 0
(0 judged irrelevant, 1 helpful, 3 directly sufficient).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path

from twinbench.jsonl import InputError, atomic_write, read_text

Qrels = dict[str, dict[str, int]]
#: a run: per query, (docid, score) in ranked order
Run = dict[str, list[tuple[str, float]]]


def read_qrels(path: Path) -> Qrels:
    """`QID 0 DOCID GRADE` lines (a 3-column `QID DOCID GRADE` is accepted too)."""
    qrels: Qrels = {}
    for lineno, line in enumerate(read_text(path).splitlines(), start=1):
        parts = line.split()
        if not parts:
            continue
        if len(parts) == 3:
            qid, docid, grade_text = parts
        elif len(parts) == 4:
            qid, _, docid, grade_text = parts
        else:
            raise InputError(
                f"{path}:{lineno}: expected QID 0 DOCID GRADE, got {len(parts)} fields"
            )
        try:
            grade = int(grade_text)
        except ValueError:
            raise InputError(f"{path}:{lineno}: grade {grade_text!r} is not an integer") from None
        if grade < 0:
            raise InputError(
                f"{path}:{lineno}: grade {grade} is negative (grades are >= 0: 0 irrelevant, "
                "1 helpful, 3 directly sufficient)"
            )
        judged = qrels.setdefault(qid, {})
        if docid in judged:
            raise InputError(f"{path}:{lineno}: {docid!r} judged twice for query {qid!r}")
        judged[docid] = grade
    if not qrels:
        raise InputError(f"{path}: no judgments")
    return qrels


def rank(scored: Sequence[tuple[str, float]]) -> list[tuple[str, float]]:
    """Order (docid, score) by score descending, ties by docid ascending."""
    return sorted(scored, key=lambda hit: (-hit[1], hit[0]))


def read_run(path: Path) -> Run:
    """`QID Q0 DOCID RANK SCORE TAG` lines, each query ranked by score then docid."""
    hits: dict[str, list[tuple[str, float]]] = {}
    seen: dict[tuple[str, str], int] = {}
    for lineno, line in enumerate(read_text(path).splitlines(), start=1):
        parts = line.split()
        if not parts:
            continue
        if len(parts) != 6:
            raise InputError(
                f"{path}:{lineno}: expected QID Q0 DOCID RANK SCORE TAG, got {len(parts)} fields"
            )
        qid, _, docid, _, score_text, _ = parts
        try:
            score = float(score_text)
        except ValueError:
            raise InputError(f"{path}:{lineno}: score {score_text!r} is not a number") from None
        if not math.isfinite(score):
            raise InputError(f"{path}:{lineno}: score {score_text!r} is not a finite number")
        first = seen.setdefault((qid, docid), lineno)
        if first != lineno:
            raise InputError(
                f"{path}:{lineno}: {docid!r} ranked twice for query {qid!r} (first on line "
                f"{first}); a repeated passage is an input error, not extra gain"
            )
        hits.setdefault(qid, []).append((docid, score))
    if not hits:
        raise InputError(f"{path}: no ranked passages")
    return {qid: rank(scored) for qid, scored in hits.items()}


def ranked_ids(ranking: Sequence[tuple[str, float]] | Sequence[str]) -> list[str]:
    """The passage ids of a ranking, best first: (docid, score) pairs are ranked (`rank`),
    a plain id list is taken in the order given."""
    pairs = [hit for hit in ranking if not isinstance(hit, str)]
    if not pairs:
        return [hit for hit in ranking if isinstance(hit, str)]
    if len(pairs) != len(ranking):
        raise TypeError("a ranking mixes passage ids and (passage id, score) pairs")
    return [docid for docid, _ in rank(pairs)]


def check_ranking(qid: str, ranking: Sequence[tuple[str, float]] | Sequence[str]) -> None:
    """Refuse a ranking that repeats a passage id."""
    ids = [hit if isinstance(hit, str) else hit[0] for hit in ranking]
    if len(set(ids)) != len(ids):
        repeated = next(i for n, i in enumerate(ids) if i in ids[:n])
        raise InputError(f"query {qid!r}: passage {repeated!r} ranked twice")


def write_run(
    path: Path,
    run: Mapping[str, Sequence[tuple[str, float]]],
    tag: str,
    score_format: str = ".6f",
) -> None:
    """Write a run atomically, each query ranked (score descending, ties by docid).

    `score_format` formats the SCORE column; `".17g"` writes scores that read back exactly
    (use it when scores can differ by less than the default's 1e-6, as fused scores can,
    since a reader re-ranks by the written score).
    """
    for qid, ranking in run.items():
        check_ranking(qid, ranking)
        for docid, score in ranking:  # before anything is written: a fused nan is refused
            if not math.isfinite(score):
                raise InputError(f"query {qid!r}: passage {docid!r} has score {score}")
    with atomic_write(path) as handle:
        for qid in sorted(run):
            for position, (docid, score) in enumerate(rank(run[qid]), start=1):
                handle.write(f"{qid} Q0 {docid} {position} {score:{score_format}} {tag}\n")


def write_qrels(path: Path, qrels: Mapping[str, Mapping[str, int]]) -> None:
    """Write qrels atomically, queries and documents in sorted order."""
    with atomic_write(path) as handle:
        for qid in sorted(qrels):
            for docid in sorted(qrels[qid]):
                handle.write(f"{qid} 0 {docid} {qrels[qid][docid]}\n")
