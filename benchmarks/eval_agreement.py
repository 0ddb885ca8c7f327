"""How often two runs of one benchmark make the same decision, per family.

Usage: python benchmarks/eval_agreement.py BENCHMARK RUN_A RUN_B

A decision is (status, abstain, reason, answer), with a yes/no answer read as P(yes) >= 0.5;
rows are matched by (item, trial, permutation). Prints each run's system card version and, per
family and overall, the matched rows that agree.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from twinbench.runner import load_benchmark


def decisions(run: Path) -> dict[tuple[str, int, int], tuple[Any, ...]]:
    out = {}
    for line in (run / "responses.jsonl").read_text().splitlines():
        row = json.loads(line)
        answer = row.get("answer")
        if isinstance(answer, float):
            answer = answer >= 0.5
        key = (row["item_id"], row["trial"], row["permutation"])
        out[key] = (row["status"], row.get("abstain"), row.get("reason"), answer)
    return out


def main() -> None:
    bench, run_a, run_b = map(Path, sys.argv[1:4])
    family = {item.id: item.family.value for item in load_benchmark(bench)}
    a, b = decisions(run_a), decisions(run_b)
    for run in (run_a, run_b):
        card = json.loads((run / "run.json").read_text())["system"]
        print(f"{run}: {card['name']} — {card.get('version')}")
    agree, total = Counter[str](), Counter[str]()
    for key in sorted(a.keys() & b.keys()):
        total[family[key[0]]] += 1
        agree[family[key[0]]] += a[key] == b[key]
    for name in sorted(total):
        print(f"{name:24} {agree[name]:4}/{total[name]:<4} = {agree[name] / total[name]:.3f}")
    n, same = sum(total.values()), sum(agree.values())
    print(
        f"{'overall':24} {same:4}/{n:<4} = {same / n:.3f} (rows only in one run: "
        f"{len(a.keys() ^ b.keys())})"
    )


if __name__ == "__main__":
    main()
