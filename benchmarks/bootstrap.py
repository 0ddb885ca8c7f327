"""Cluster bootstrap: 10,000 resamples over 10,000 clusters (target <= 2 s, >= 100x a loop).

Usage: python benchmarks/bootstrap.py [--clusters C] [--resamples R] [--loop-resamples L]

Times twinbench's vectorised `resample_ratios` (one ratio statistic, seeded) on per-cluster
tallies (numerator <= denominator, small integers: per-question counts of trials and
conditions, so the profile kernel applies) against a plain Python per-resample loop on the
same data, and also times the general kernel on continuous values. The loop: for each resample, draw C cluster indices and sum
the numerators and denominators cluster by cluster. The loop runs L resamples (default 100)
and its time is scaled to R, since running all R would take minutes; both are printed.
"""

from __future__ import annotations

import argparse
import platform
import random
import time

import numpy as np

from twinbench.stats.bootstrap import resample_ratios


def python_loop(num: list[float], den: list[float], resamples: int, seed: int) -> list[float]:
    """The per-resample loop a straightforward implementation would write."""
    rng = random.Random(seed)
    clusters = len(num)
    out = []
    for _ in range(resamples):
        top = bottom = 0.0
        for _ in range(clusters):
            c = rng.randrange(clusters)
            top += num[c]
            bottom += den[c]
        out.append(top / bottom)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clusters", type=int, default=10_000)
    parser.add_argument("--resamples", type=int, default=10_000)
    parser.add_argument("--loop-resamples", type=int, default=100)
    args = parser.parse_args()
    data = np.random.default_rng(0)
    den = data.integers(1, 7, args.clusters).astype(np.float64)  # trials x conditions
    num = np.floor(den * data.random(args.clusters))
    start = time.perf_counter()
    draws = resample_ratios(num, den, args.resamples, np.random.default_rng(1))
    vectorised = time.perf_counter() - start
    # the general kernel, on continuous values where every cluster profile is distinct
    start = time.perf_counter()
    resample_ratios(
        num + data.random(args.clusters) * 1e-3, den, args.resamples, np.random.default_rng(1)
    )
    general = time.perf_counter() - start
    start = time.perf_counter()
    python_loop(num.tolist(), den.tolist(), args.loop_resamples, 1)
    loop = (time.perf_counter() - start) * args.resamples / args.loop_resamples
    print(
        f"machine: {platform.machine()}, CPython {platform.python_version()}, "
        f"numpy {np.__version__}"
    )
    print(f"clusters: {args.clusters:,}, resamples: {args.resamples:,}")
    print(
        f"vectorised: {vectorised:.2f} s (target <= 2 s: "
        f"{'met' if vectorised <= 2 else 'MISSED'}); interval "
        f"[{np.percentile(draws, 2.5):.4f}, {np.percentile(draws, 97.5):.4f}]"
    )
    print(f"python loop: {loop:.1f} s (measured on {args.loop_resamples} resamples, scaled)")
    print(f"speed-up: {loop / vectorised:.0f}x (target >= 100x)")
    print(
        f"general kernel (all {args.clusters:,} cluster profiles distinct): {general:.2f} s, "
        f"{loop / general:.0f}x the loop"
    )


if __name__ == "__main__":
    main()
