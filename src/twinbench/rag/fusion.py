"""Reciprocal rank fusion: combine rankings by rank, not by their incomparable scores.

Each passage gets RRF(p) = Σ_lists 1 / (offset + rank_list(p)), ranks from 1, offset 60 by
default; a passage a list does not hold gets nothing from it; a repeated id within one list
votes once (at its first place, later ids moving up, as `dict.fromkeys` keeps them); the fused
ranking is by RRF descending, ties by passage id.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from math import fsum

from twinbench.rag.trec import Run, rank, ranked_ids

DEFAULT_OFFSET = 60


def reciprocal_rank_fusion(
    rankings: Sequence[Sequence[str]], offset: int = DEFAULT_OFFSET
) -> list[tuple[str, float]]:
    """(passage id, Σ 1 / (offset + rank)) over `rankings`, best first, ties by passage id.

    The sum is `math.fsum` (correctly rounded), so a passage's score does not depend on the
    order of the lists, and two passages at mirrored ranks tie exactly.
    """
    if offset < 0:
        raise ValueError(f"offset must be >= 0, got {offset}")
    votes: dict[str, list[float]] = {}
    for ranking in rankings:
        for position, pid in enumerate(dict.fromkeys(ranking), start=1):
            votes.setdefault(pid, []).append(1.0 / (offset + position))
    return rank([(pid, fsum(parts)) for pid, parts in votes.items()])


def fuse_runs(
    runs: Sequence[Mapping[str, Sequence[tuple[str, float]]]], offset: int = DEFAULT_OFFSET
) -> Run:
    """Fuse runs query by query (each ranked by score, ties by passage id) with RRF."""
    queries = sorted({qid for run in runs for qid in run})
    return {
        qid: reciprocal_rank_fusion([ranked_ids(run.get(qid, [])) for run in runs], offset)
        for qid in queries
    }
