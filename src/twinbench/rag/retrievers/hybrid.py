"""`hybrid`: reciprocal rank fusion of several retrievers (BM25 and dense by default).

Each branch ranks its own top `depth` passages (a plain hybrid: at least k); a passage's fused
score is Σ 1 / (offset + rank) over the branches that returned it, ranks from 1, offset 60;
a passage repeated within one branch's list votes once (at its first rank); ties go to the
lower passage id (`twinbench.rag.fusion.reciprocal_rank_fusion`). Raw BM25 and cosine scores
never meet: their scales are not comparable.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from twinbench.rag.fusion import DEFAULT_OFFSET, reciprocal_rank_fusion
from twinbench.rag.retrievers.base import Hits, Retriever

RRF_OFFSET = DEFAULT_OFFSET


class HybridRetriever:
    """Reciprocal rank fusion of its branches' top `depth` (at least k, if `grow_to_k`)."""

    def __init__(
        self,
        branches: Sequence[Retriever],
        *,
        depth: int,
        grow_to_k: bool = True,
        offset: int = RRF_OFFSET,
    ) -> None:
        self.branches = list(branches)
        self.depth = depth
        self.grow_to_k = grow_to_k
        self.offset = offset
        self.name = "hybrid"

    def params(self) -> dict[str, Any]:
        """The fusion rule, its offset and depth, and each branch's own parameters."""
        return {
            "fusion": "reciprocal rank fusion: sum of 1/(offset + rank), ranks from 1",
            "offset": self.offset,
            "branch_depth": f"max({self.depth}, k)" if self.grow_to_k else self.depth,
            "branches": {branch.name: branch.params() for branch in self.branches},
        }

    def search(self, queries: Mapping[str, str], k: int) -> Hits:
        """Each branch's top `depth` (or k, when larger and `grow_to_k`) fused; best k kept."""
        depth = max(self.depth, k) if self.grow_to_k else self.depth
        lists = [branch.search(queries, depth) for branch in self.branches]
        return {
            qid: reciprocal_rank_fusion(
                [[pid for pid, _ in hits[qid]] for hits in lists], self.offset
            )[: max(k, 0)]
            for qid in queries
        }
