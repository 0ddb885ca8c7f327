"""Pairs made from one source are one cluster: the unit intervals and paired tests resample."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import numpy as np

from twinbench.builder import build
from twinbench.grader import cluster_key, expected_table


def test_translation_pairs_of_one_english_scenario_share_a_cluster(tmp_path: Path) -> None:
    items = build(tmp_path, per_generator=30).public
    table = expected_table(items)
    by_cluster: dict[int, set[str]] = defaultdict(set)
    for item, cluster in zip(items, table.cluster.tolist(), strict=True):
        by_cluster[cluster].add(item.pair_id)
    translation = [i for i in items if i.generator.name == "translation"]
    sources = {i.provenance["source_id"] for i in translation}
    pairs = {i.pair_id for i in translation}
    # three languages of one English scenario: fewer clusters than pairs, and each cluster
    # holds the pairs of exactly one source
    assert len(sources) < len(pairs)
    translated = {c for i, c in zip(items, table.cluster.tolist(), strict=True) if i in translation}
    assert len(translated) == len(sources)
    for item in translation:
        twin = next(i for i in translation if i.id == item.twin_id) if item.twin_id else None
        if twin is not None:
            assert (
                cluster_key(item)
                == cluster_key(twin)
                == ("translation", item.provenance["source_id"])
            )
    # the other generators make one pair per source: a cluster is a pair
    others = [i for i in items if i.generator.name != "translation"]
    assert len({cluster_key(i) for i in others}) == len({i.pair_id for i in others})
    assert all(len(p) >= 1 for p in by_cluster.values())
    assert np.array_equal(np.unique(table.cluster), np.arange(len(by_cluster)))


def test_an_item_without_a_source_is_its_own_pairs_cluster(tmp_path: Path) -> None:
    item = build(tmp_path, per_generator=2).public[0]
    bare = item.model_copy(update={"provenance": {}})
    assert cluster_key(bare) == (item.generator.name, f"pair:{item.pair_id}")
