"""RRF parity with ranx's `rrf` on seeded random runs (distinct scores, so ranks agree)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from ranx import Run, fuse

from twinbench.rag.fusion import fuse_runs


def random_runs(seed: int, count: int) -> list[dict[str, list[tuple[str, float]]]]:
    """`count` runs over the same 20 queries, each ranking a random subset of 40 passages."""
    rng = np.random.default_rng(seed)
    runs = []
    for _ in range(count):
        run = {}
        for q in range(20):
            picked = rng.choice(40, size=int(rng.integers(1, 30)), replace=False)
            scores = rng.permutation(picked.size).astype(float)  # distinct within a query
            run[f"q{q:02d}"] = [(f"p{i:02d}", s) for i, s in zip(picked, scores, strict=True)]
        runs.append(run)
    return runs


@pytest.mark.parametrize(("seed", "count", "offset"), [(0, 2, 60), (1, 3, 60), (2, 4, 10)])
def test_scores_match_ranx_rrf(seed: int, count: int, offset: int) -> None:
    runs = random_runs(seed, count)
    ours = fuse_runs(runs, offset)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # numba's type-safety notes on ranx's kernels
        references = [Run.from_dict({q: dict(hits) for q, hits in run.items()}) for run in runs]
        theirs = fuse(references, method="rrf", params={"k": offset}).to_dict()
    assert set(ours) == set(theirs)
    for qid, fused in ours.items():
        assert dict(fused) == pytest.approx(theirs[qid], abs=1e-12)
