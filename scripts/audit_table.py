"""The generator x probe table of docs/audit.md: every probe's AUC at seeds 0, 1, 2.

Usage: python scripts/audit_table.py [--seeds 0,1,2]

Builds the default benchmark at each seed (in memory, family shares applied as `build` does),
runs the similarity audit and prints Markdown: one row per generator@version and seed, one
column per probe (AUC [95% pair-bootstrap CI]; probes a generator is exempt from in brackets),
the largest within-pair share and its probe, the shortcut system's ideal-pair rate with its
interval, and the verdict.
"""

from __future__ import annotations

import argparse

from twinbench.audit.similarity import audit_similarity
from twinbench.builder import balance_families, generate_all
from twinbench.corpus import load_corpus


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", default="0,1,2")
    seeds = [int(s) for s in parser.parse_args().seeds.split(",")]
    corpus = load_corpus()
    rows, probes = [], None
    for seed in seeds:
        pairs = balance_families(generate_all(corpus, seed, None).pairs)
        items = [x for kept in pairs.values() for p in kept for x in (p.item, p.twin)]
        report = audit_similarity(items, seed=seed)
        for name, g in report["generators"].items():
            probes = probes or list(g["auc"])
            cells = []
            for probe in probes:
                a = g["auc"][probe]
                cell = f"{a['auc']:.2f} [{a['low']:.2f}, {a['high']:.2f}]"
                cells.append(f"({cell})" if probe in g["exempt"] else cell)
            top = max(g["within_pair"], key=lambda p: g["within_pair"][p]["auc"])
            w = g["within_pair"][top]
            cell = f"{w['auc']:.2f} [{w['low']:.2f}, {w['high']:.2f}] {top}"
            cells.append(f"({cell})" if top in g["exempt"] else cell)
            rate = g["shortcut"]["ideal_pair_rate"]
            verdict = "ok" if g["passes"] else "**over**: " + ", ".join(g["over_bound"])
            rows.append(
                [f"`{name}`", str(seed), str(g["pairs"]), *cells]
                + [f"{rate['estimate']:.2f} [{rate['low']:.2f}, {rate['high']:.2f}]", verdict]
            )
    assert probes is not None
    header = ["generator", "seed", "pairs", *probes, "within pairs (max)"]
    header += ["shortcut ideal pairs", "verdict"]
    print("| " + " | ".join(header) + " |")
    print("|---|---:|---:|" + "---:|" * (len(probes) + 2) + "---|")
    for row in sorted(rows, key=lambda r: (r[0], r[1])):
        print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()
