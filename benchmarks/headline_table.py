"""Issue 22's acceptance table: what systems that read no meaning get on the headline.

Usage: python benchmarks/headline_table.py [--seeds 11,23] [--out DIR] [--no-model]

For each seed, `twinbench.evaluate` builds the default benchmark and runs the embedded SmolLM2
beside its two references (`shortcut`, `abstain-by-form`), then an id reader: a system that
reads every field of every request but the text and abstains when the id ends in `:u` (the
label channel issue 22 closed), else when the request arrived at an even position, with the
code of the generator the id names. Prints one Markdown row per system: macro recall and twin
accuracy, the ideal-pair rate, the pair score and the cost-weighted score, each the mean over
the seeds (per seed in brackets). `--no-model` leaves SmolLM2 out (its references still run).
"""

from __future__ import annotations

import argparse
import re
import tempfile
from collections.abc import Sequence
from pathlib import Path

import twinbench
from twinbench.generators import registered
from twinbench.records import ReasonCode, Response
from twinbench.systems.base import Request, SystemCard, response
from twinbench.systems.prompt import answer_choices

FAMILY_OF = {cls.name: cls.family for cls in registered()}


class IdReader:
    """Guesses the label from the request's id and arrival order, never from its text."""

    card = SystemCard(name="id-reader", languages=("en",))

    def __init__(self) -> None:
        self.arrived = 0

    def respond(self, requests: Sequence[Request]) -> list[Response]:
        out = []
        for request in requests:
            suffix = re.search(r":([ut])$", request.item_id)
            unanswerable = suffix.group(1) == "u" if suffix else self.arrived % 2 == 0
            self.arrived += 1
            if unanswerable:
                code = FAMILY_OF.get(request.item_id.split(":")[0], ReasonCode.UNDERSPECIFIED_STATE)
                out.append(response(request, self.card.name, abstain=True, reason=code))
                continue
            answer = answer_choices(request.question)[0].answer
            value = (1.0 if answer else 0.0) if isinstance(answer, bool) else answer
            out.append(response(request, self.card.name, abstain=False, answer=value))
        return out


def figures(metrics: twinbench.Metrics) -> dict[str, float | None]:
    overall = metrics.overall
    return {
        "recall": metrics.macro.get("recall"),
        "twin acc": metrics.macro.get("twin_accuracy"),
        "ideal pairs": overall.ideal_pair_rate,
        "pair score": overall.pair_score,
        "cost-weighted": overall.cost_weighted_score,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", default="11,23")
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--no-model", action="store_true")
    args = parser.parse_args()
    seeds = [int(s) for s in args.seeds.split(",")]
    root = args.out or Path(tempfile.mkdtemp(prefix="headline-"))
    rows: dict[str, list[dict[str, float | None]]] = {}
    for seed in seeds:
        first = "shortcut" if args.no_model else "smollm2"
        main_run = twinbench.evaluate(root / f"seed{seed}" / first, first, seed=seed)
        for name, metrics in main_run.report.systems.items():
            rows.setdefault(name, []).append(figures(metrics))
        reader = twinbench.evaluate(root / f"seed{seed}" / "id-reader", IdReader(), seed=seed)
        rows.setdefault("id-reader", []).append(figures(reader.report.systems["id-reader"]))
    keys = ["recall", "twin acc", "ideal pairs", "pair score", "cost-weighted"]
    print(f"seeds {', '.join(map(str, seeds))}; figures are means over the seeds [per seed]\n")
    print("| system | " + " | ".join(keys) + " |")
    print("|---|" + "---:|" * len(keys))
    order = sorted(rows, key=lambda n: -(_mean([r["pair score"] for r in rows[n]]) or -9))
    for name in order:
        cells = []
        for key in keys:
            values = [r[key] for r in rows[name]]
            mean = _mean(values)
            each = ", ".join("–" if v is None else f"{v:.3f}" for v in values)
            cells.append("–" if mean is None else f"{mean:.3f} [{each}]")
        print(f"| {name} | " + " | ".join(cells) + " |")


def _mean(values: Sequence[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return sum(known) / len(known) if known else None


if __name__ == "__main__":
    main()
