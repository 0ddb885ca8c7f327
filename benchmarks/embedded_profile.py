"""Where `twinbench eval`'s model time goes, and what each smollm2 precision costs and agrees.

Usage: python benchmarks/embedded_profile.py [--per-family 120] [--seed 0]

On the items `twinbench eval` sends (the default build, --per-family pairs per family) it
prints, per family and generator: items, prompt tokens (each item's own, after the shared
87-token prefix), the padding share of the batches the old runner made (plan-order chunks of
16, sorted inside) and of the length-ordered batches it makes now, and, for each precision
(fp32, bf16, mixed), seconds and items/s with length-ordered batches of 8. For bf16 and mixed:
how many decisions (abstain or not, reason, answer; a noul answer as P(yes) >= 0.5) equal
fp32's, per family, and how many items mixed redid in fp32. Last, what sets CHECK_MARGIN: how
far the difference between fp32's best letter and each other letter (log-odds, from the
recorded probabilities) moves in bf16, and the largest bf16 margin among the items whose bf16
letter differs from fp32's.
"""

from __future__ import annotations

import argparse
import math
import platform
import tempfile
import time
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from twinbench.builder import build
from twinbench.evaluation import eval_slice
from twinbench.records import Response
from twinbench.runner import request_for
from twinbench.systems.smollm2 import CHECK_MARGIN, PRECISIONS, SmolLM2System


def padding_share(lengths: Sequence[int], chunk: int | None, batch: int = 8) -> float:
    """Share of padded positions: `chunk` plan-order chunks each sorted (None: all sorted)."""
    chunks = (
        [sorted(lengths)]
        if chunk is None
        else [sorted(lengths[i : i + chunk]) for i in range(0, len(lengths), chunk)]
    )
    padded = sum(
        max(c[i : i + batch]) * len(c[i : i + batch])
        for c in chunks
        for i in range(0, len(c), batch)
    )
    return 1 - sum(lengths) / padded


def decision(r: Response) -> tuple[Any, ...]:
    answer = r.answer >= 0.5 if isinstance(r.answer, float) else r.answer
    return (r.status, r.abstain, r.reason, answer)


def log_odds(r: Response) -> list[float]:
    """Each letter's log-probability (softmax keeps the logits' differences)."""
    return [math.log(max(p, 1e-12)) for p in (r.probabilities or {}).values()]


def margin_report(fp32: list[Response], bf16: list[Response]) -> str:
    """How far bf16 moves fp32's letter differences, and the widest bf16 margin of a flip."""
    moves, flips = [], []
    for exact, fast in zip(fp32, bf16, strict=True):
        a, b = log_odds(exact), log_odds(fast)
        best = max(range(len(a)), key=a.__getitem__)
        moves += [abs((a[best] - a[j]) - (b[best] - b[j])) for j in range(len(a)) if j != best]
        if exact.raw != fast.raw:
            top = sorted(b, reverse=True)
            flips.append(top[0] - top[1])
    moves.sort()
    return (
        f"letter differences moved by bf16: median {moves[len(moves) // 2]:.3f}, "
        f"99th percentile {moves[int(0.99 * len(moves))]:.3f}, max {moves[-1]:.3f}; "
        f"{len(flips)} letters flipped, widest bf16 margin among them "
        f"{max(flips, default=0.0):.3f}"
    )


def main() -> None:
    # imported after twinbench, which sets the OpenMP spin before torch loads libgomp
    import torch

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-family", type=int, default=120)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        items = eval_slice(build(Path(tmp), seed=args.seed), args.per_family)
    requests = [request_for(item, 0, 0, item.id) for item in items]
    groups: dict[str, list[int]] = defaultdict(list)
    for n, item in enumerate(items):
        groups[f"{item.family.value} / {item.generator.name}"].append(n)
    sizer = SmolLM2System(precision="fp32")
    lengths = [sizer.sort_key(r) for r in requests]
    print(
        f"machine: {platform.machine()}, {torch.get_num_threads()} torch threads, "
        f"torch {torch.__version__}; {len(items)} items, CHECK_MARGIN {CHECK_MARGIN}"
    )
    print(
        f"padding share: old plan-order chunks {padding_share(lengths, 16):.3f}, "
        f"length-ordered {padding_share(lengths, None):.3f}"
    )
    results: dict[str, dict[str, tuple[float, list[Response]]]] = defaultdict(dict)
    redone: dict[str, int] = {}
    for precision in PRECISIONS:
        system = SmolLM2System(precision=precision)
        system.respond(requests[:8])  # load, prefix caches, kernels
        system.checked = {"bf16": 0, "fp32": 0}
        for group, members in groups.items():
            batch = [requests[n] for n in members]
            started = time.perf_counter()
            out = system.respond(batch)
            results[group][precision] = (time.perf_counter() - started, out)
        redone[precision] = system.checked["fp32"]
    header = f"{'family / generator':45} {'items':>5} {'tokens':>7} {'pad old':>7}"
    for precision in PRECISIONS:
        header += f" {precision + ' s':>9}"
    print(header + f" {'bf16 agree':>10} {'mixed agree':>11}")
    totals: dict[str, float] = defaultdict(float)
    agree: dict[str, int] = defaultdict(int)
    for group, members in sorted(groups.items()):
        own = [lengths[n] for n in members]
        line = f"{group:45} {len(members):5} {sum(own):7} {padding_share(own, 16):7.3f}"
        base = [decision(r) for r in results[group]["fp32"][1]]
        for precision in PRECISIONS:
            seconds, _ = results[group][precision]
            totals[precision] += seconds
            line += f" {seconds:9.1f}"
        for precision in ("bf16", "mixed"):
            same = sum(
                a == decision(b) for a, b in zip(base, results[group][precision][1], strict=True)
            )
            agree[precision] += same
            line += f" {same:>5}/{len(members):<5}"
        print(line)
    n = len(items)
    for precision in PRECISIONS:
        share = (
            ""
            if precision == "fp32"
            else f", agrees with fp32 on {agree[precision]}/{n} = {agree[precision] / n:.3f}"
        )
        extra = f", {redone[precision]} redone in fp32" if precision == "mixed" else ""
        rate = n / totals[precision]
        print(f"{precision:5}: {totals[precision]:6.1f} s, {rate:5.2f} items/s{share}{extra}")
    fp32 = [r for group in sorted(groups) for r in results[group]["fp32"][1]]
    bf16 = [r for group in sorted(groups) for r in results[group]["bf16"][1]]
    print(margin_report(fp32, bf16))


if __name__ == "__main__":
    main()
