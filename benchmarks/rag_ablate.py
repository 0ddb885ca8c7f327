"""Seconds per case per variant of `twinbench rag ablate` with the embedded SmolLM2.

Usage: python benchmarks/rag_ablate.py [--sample N] [--out DIR]

Runs every variant (lexical, dense, fused, fused+rerank, instruction-only, verifier) over the
embedded course-notes cases (all 103 by default) with the default budget (3 passages, 220
words, 48 new tokens, greedy) in one ablation, as `twinbench rag ablate --sample 0` does.
Each variant's wall time covers its retrieval (the first variant of a retriever builds the
index; later ones reuse its ranking), generation, verification and rule labelling. Prints one
Markdown row per variant: wall seconds, seconds per case, and the mean / p95 elapsed_ms the
answers record (each case's share of batched generation). The model load is timed apart. The
ablation's files (answers, ablation.md/json/html) are written to --out.
"""

from __future__ import annotations

import argparse
import os
import platform
import time
from pathlib import Path

from twinbench.rag.ablation import run_ablation
from twinbench.rag.corpus import COURSE_NOTES
from twinbench.rag.generation import SmolLM2Generator
from twinbench.systems.local_model import load_smollm2


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--sample", type=int, default=0, help="cases (0: all)")
    parser.add_argument("--out", type=Path, default=Path("twinbench-ablate-bench"))
    args = parser.parse_args()
    began = time.perf_counter()
    load_smollm2()
    print(f"model load: {time.perf_counter() - began:.1f} s")
    began = time.perf_counter()
    doc = run_ablation(
        COURSE_NOTES,
        args.out,
        generator=SmolLM2Generator(),
        sample=args.sample,
        on_step=lambda line: print(f"  {line}", flush=True),
    )
    cpus = os.cpu_count()
    print(f"machine: {platform.machine()}, {cpus} CPUs, python {platform.python_version()}")
    print(f"all variants, {doc['cases']['total']} cases: {time.perf_counter() - began:.0f} s")
    print("| variant | cases | wall s | s per case | mean elapsed_ms | p95 elapsed_ms |")
    print("|---|---:|---:|---:|---:|---:|")
    for row in doc["variants"]:
        print(
            f"| {row['variant']} | {row['answers']} | {row['seconds']:.1f} | "
            f"{row['seconds_per_case']:.2f} | {row['latency_ms']['mean']:.0f} | "
            f"{row['latency_ms']['p95']:.0f} |"
        )


if __name__ == "__main__":
    main()
