"""Grade 1,000,000 responses from a file: stream, then vectorised metrics. Target <= 20 s.

Usage: python benchmarks/grade_throughput.py [--responses N] [--pairs P]
Writes a synthetic benchmark (P pairs over the three families, choice/score/noul questions) and
N seeded responses (each item once per trial, N / 2P trials) to a temp folder, then times reading the items, grading the response file
and computing every metric, exactly as `twinbench grade` does.
"""

from __future__ import annotations

import argparse
import platform
import tempfile
import time
from pathlib import Path

import numpy as np
import orjson

from twinbench.grader import expected_table, grade_file
from twinbench.jsonl import load_models
from twinbench.metrics.cost import load_cost_table
from twinbench.metrics.summary import summarize
from twinbench.records import FAMILIES, Item


def _question(kind: int) -> tuple[dict[str, object], object]:
    if kind == 0:
        return {
            "type": "choice",
            "instructions": "Which team?",
            "options": ["billing", "technical support", "sales"],
        }, "sales"
    if kind == 1:
        return {
            "type": "score",
            "instructions": "How urgent?",
            "legend": {"low": 1, "medium": 2, "high": 3},
        }, 2
    return {"type": "noul", "instructions": "Refund due?"}, True


def write_benchmark(folder: Path, pairs: int, responses: int, seed: int) -> tuple[Path, Path]:
    """Write items.jsonl and responses.jsonl; return their paths."""
    rng = np.random.default_rng(seed)
    items_path, responses_path = folder / "items.jsonl", folder / "responses.jsonl"
    with items_path.open("wb") as out:
        for p in range(pairs):
            family = FAMILIES[p % 3]
            question, answer = _question(p % 5 % 3)
            base = {
                "schema": "twinbench.item/1",
                "pair_id": f"p{p}",
                "family": family,
                "generator": {"name": "synthetic", "version": "1"},
                "seed": p,
                "state": "A state.",
                "question": question,
            }
            item = {
                **base,
                "id": f"u{p}",
                "answerable": False,
                "twin_id": f"t{p}",
                "expected": {"abstain": True, "reason": family},
            }
            if family == "out_of_language":
                item |= {"language": "sw", "answer_if_supported": answer}
            twin = {
                **base,
                "id": f"t{p}",
                "answerable": True,
                "twin_id": f"u{p}",
                "expected": {"abstain": False, "answer": answer},
            }
            out.write(orjson.dumps(item) + b"\n" + orjson.dumps(twin) + b"\n")
    with responses_path.open("wb") as out:
        # every item answered once per trial: a valid run has one row per (item, trial)
        ids = np.arange(responses) % (2 * pairs)
        trials = np.arange(responses) // (2 * pairs)
        abstain = rng.random(responses) < 0.4
        codes = rng.integers(0, 3, responses)
        conf = np.round(rng.random(responses), 3)
        status = rng.random(responses)
        for n in range(responses):
            i = int(ids[n])
            row: dict[str, object] = {
                "item_id": f"{'ut'[i % 2]}{i // 2}",
                "system": "bench",
                "trial": int(trials[n]),
                "status": "ok",
                "confidence": float(conf[n]),
            }
            if status[n] < 0.01:
                row |= {"status": "invalid", "confidence": None}
            elif abstain[n]:
                row |= {"abstain": True, "reason": FAMILIES[int(codes[n])]}
            else:
                row |= {"abstain": False, "answer": ["sales", 2, 0.7][(i // 2) % 5 % 3]}
            out.write(orjson.dumps(row) + b"\n")
    return items_path, responses_path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--responses", type=int, default=1_000_000)
    parser.add_argument("--pairs", type=int, default=5_000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        items_path, responses_path = write_benchmark(
            Path(tmp), args.pairs, args.responses, args.seed
        )
        size_mb = responses_path.stat().st_size / 1e6
        start = time.perf_counter()
        items = [item for _, item in load_models(items_path, Item)]
        table = expected_table(items, ("en",))
        loaded = time.perf_counter()
        graded = grade_file(responses_path, table)
        graded_at = time.perf_counter()
        summary = summarize(graded, load_cost_table(), table.languages)
        done = time.perf_counter()
    print(
        f"machine: {platform.machine()}, {platform.python_implementation()} "
        f"{platform.python_version()}"
    )
    print(f"responses: {len(graded):,} ({size_mb:.0f} MB), items: {len(items):,}")
    print(
        f"load items: {loaded - start:.2f} s, grade: {graded_at - loaded:.2f} s, "
        f"metrics: {done - graded_at:.2f} s, total: {done - start:.2f} s "
        f"({len(graded) / (done - start):,.0f} responses/s)"
    )
    print(
        f"coverage {summary['overall']['coverage']:.3f}, target <= 20 s: "
        f"{'met' if done - start <= 20 else 'MISSED'}"
    )


if __name__ == "__main__":
    main()
