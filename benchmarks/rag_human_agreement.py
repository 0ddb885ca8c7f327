"""Claim labellers against two people on the course notes (issue 26, item 3).

Usage: python benchmarks/rag_human_agreement.py [--study docs/data/rag-human-study]

The study folder holds 206 answers from two generators (SmolLM2-135M through transformers,
and the same model's Q4_1 GGUF through llama.cpp's OpenAI-compatible server; `rag ablate
--variants fused --sample 0` on all 103 cases), the blind package `rag package --seed 26
--sample 130` drew from them (130 answers, 178 claims) and two annotators' labels, made
independently and blind through that package. It prints, first, the annotators' agreement
with each other (raw, Cohen's kappa), then each labeller's agreement with the adjudicated
labels: the claims both annotators label alike (the claims they split on are left out and
counted), raw and kappa with 95 % bootstrap intervals over answers, and per-label recall.

Labellers: the answers' own labels (rules:lexical/1, as `rag ablate` set them) and, when the
installed twinbench has it, every labeller `twinbench.rag.support.LABELLERS` names, run here
on each answer's prompt passages.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from sklearn.metrics import cohen_kappa_score

ROOT = Path(__file__).resolve().parents[1]
LABELS = ("supported", "contradicted", "insufficient")
RESAMPLES = 2000


def _rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]


def _kappa(a: list[str], b: list[str]) -> float:
    return float(cohen_kappa_score(a, b, labels=list(LABELS)))


def _interval(pairs: list[tuple[int, str, str]], stat: Callable[[list[str], list[str]], float],
              seed: int = 0) -> tuple[float, float]:  # fmt: skip
    """A 95 % percentile interval of `stat`, resampling answers (claims of one answer together)."""
    answers = sorted({n for n, _, _ in pairs})
    by_answer: dict[int, list[tuple[str, str]]] = {n: [] for n in answers}
    for n, x, y in pairs:
        by_answer[n].append((x, y))
    rng = np.random.default_rng(seed)
    values = []
    for _ in range(RESAMPLES):
        drawn = rng.choice(len(answers), size=len(answers), replace=True)
        xs = [x for i in drawn for x, _ in by_answer[answers[i]]]
        ys = [y for i in drawn for _, y in by_answer[answers[i]]]
        values.append(stat(xs, ys))
    low, high = np.nanpercentile(values, [2.5, 97.5])
    return float(low), float(high)


def _raw(a: list[str], b: list[str]) -> float:
    return sum(x == y for x, y in zip(a, b, strict=True)) / len(a)


def _labellers() -> dict[str, Callable[[dict[str, Any], list[dict[str, Any]]], list[str]]]:
    """name -> labels(answer row, prompt passages) for the labellers this install has."""
    found: dict[str, Callable[[dict[str, Any], list[dict[str, Any]]], list[str]]] = {
        "rules:lexical/1 (as rag ablate labelled)": lambda answer, _: [
            c["support_label"] for c in answer["claims"]
        ]
    }
    try:
        from twinbench.rag import support
    except ImportError:
        return found
    for name, label in getattr(support, "LABELLERS", {}).items():
        found[name] = lambda answer, passages, label=label: [
            label(claim["text"], [p["text"] for p in passages]) for claim in answer["claims"]
        ]
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--study", type=Path, default=ROOT / "docs/data/rag-human-study")
    study = parser.parse_args().study
    key = json.loads((study / "key.json").read_text())["items"]
    items = {row["blind_id"]: row for row in _rows(study / "items.jsonl")}
    answers = {(r["case_id"], r["variant"], r["trial"]): r for r in _rows(study / "answers.jsonl")}
    first, second = (
        {row["blind_id"]: row for row in _rows(path)}
        for path in sorted((study / "labels").glob("*.jsonl"))
    )
    people: list[tuple[int, str, str]] = []  # (answer number, label a, label b)
    claims: list[tuple[int, str, dict[str, Any], list[dict[str, Any]], int]] = []
    for n, blind in enumerate(sorted(items)):
        k = key[blind]
        answer = answers[(k["case_id"], k["variant"], k["trial"])]
        for index, (a, b) in enumerate(
            zip(first[blind]["claims"], second[blind]["claims"], strict=True)
        ):
            people.append((n, a["support_label"], b["support_label"]))
            if a["support_label"] == b["support_label"]:
                claims.append((n, a["support_label"], answer, items[blind]["passages"], index))
    a_labels, b_labels = [x for _, x, _ in people], [y for _, _, y in people]
    print(f"{len(items)} answers, {len(people)} claims, generators: "
          f"{dict(Counter(k['variant'] for k in key.values()))}")  # fmt: skip
    low, high = _interval(people, _kappa)
    print(f"annotators: raw {_raw(a_labels, b_labels):.3f}, Cohen's kappa "
          f"{_kappa(a_labels, b_labels):.3f} [{low:.3f}, {high:.3f}]")  # fmt: skip
    print(f"adjudicated: the {len(claims)} claims both label alike "
          f"({len(people) - len(claims)} split, left out): "
          f"{dict(Counter(label for _, label, *_ in claims))}")  # fmt: skip
    print()
    print("| labeller | raw | kappa [95 % CI] | recall supported / contradicted / insufficient |")
    print("|---|---:|---:|---|")
    for name, label in _labellers().items():
        cache: dict[int, list[str]] = {}
        pairs = []
        for n, gold, answer, passages, index in claims:
            if n not in cache:
                cache[n] = label(answer, passages)
            pairs.append((n, gold, cache[n][index]))
        gold_labels, got = [g for _, g, _ in pairs], [x for _, _, x in pairs]
        low, high = _interval(pairs, _kappa)
        recall = []
        for wanted in LABELS:
            hits = [x == g for g, x in zip(gold_labels, got, strict=True) if g == wanted]
            recall.append(f"{sum(hits) / len(hits):.2f} ({sum(hits)}/{len(hits)})")
        print(f"| {name} | {_raw(gold_labels, got):.3f} | {_kappa(gold_labels, got):.3f} "
              f"[{low:.3f}, {high:.3f}] | {' / '.join(recall)} |")  # fmt: skip


if __name__ == "__main__":
    main()
