"""smollm2 one-pass letter decisions vs lm-eval-style per-option log-likelihood (target >= 4x).

Usage: python benchmarks/local_decisions.py [--items N] [--seed S]

Both read the same model (the embedded SmolLM2-135M-Instruct, fp32, CPU) on the same items (a
seeded sample of the default build, every generator) with the same lettered prompt:

* one-pass (twinbench's `smollm2`): one forward pass per item; argmax of the next-token logits
  over the answer letters and the abstain letters X/Y/Z;
* per-option (lm-evaluation-harness `loglikelihood` style): one request per option, each a
  full forward pass over prompt + option text, scored by the summed log-probability of the
  option's tokens; argmax over options (abstain options included).

Prints items/s for both, the speed ratio, and how often the two pick the same option.
"""

from __future__ import annotations

import argparse
import platform
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

from twinbench.builder import build
from twinbench.runner import request_for
from twinbench.systems.local_model import load_smollm2
from twinbench.systems.prompt import lettered
from twinbench.systems.smollm2 import SmolLM2System, chat_prompt


def per_option_choice(model: object, tokenizer: object, prompt: str, options: list[str]) -> int:
    """Index of the option whose text is most likely after `prompt` (one pass per option)."""
    context = tokenizer.encode(prompt, add_special_tokens=False)  # type: ignore[attr-defined]
    scores = []
    for text in options:
        cont = tokenizer.encode(" " + text, add_special_tokens=False)  # type: ignore[attr-defined]
        ids = torch.tensor([context + cont])
        with torch.inference_mode():
            logprobs = torch.log_softmax(model(input_ids=ids).logits[0], -1)  # type: ignore[operator]
        positions = range(len(context) - 1, len(context) + len(cont) - 1)
        scores.append(sum(float(logprobs[p, t]) for p, t in zip(positions, cont, strict=True)))
    return int(np.argmax(scores))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=48)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        items = build(Path(tmp)).public
    rng = np.random.default_rng(args.seed)
    sample = [items[i] for i in sorted(rng.choice(len(items), args.items, replace=False))]
    requests = [request_for(item, 0, 0, item.id) for item in sample]
    model, tokenizer = load_smollm2()
    system = SmolLM2System(precision="fp32")
    system.respond(requests[:2])  # warm up (prefix cache, kernels)

    start = time.perf_counter()
    one_pass = system.respond(requests)
    one_pass_s = time.perf_counter() - start

    start = time.perf_counter()
    per_option = []
    for req in requests:
        choices = lettered(req.question)
        prompt = chat_prompt(tokenizer, req, choices)
        per_option.append(
            choices[per_option_choice(model, tokenizer, prompt, [c.text for c in choices])].letter
        )
    per_option_s = time.perf_counter() - start

    agree = sum(r.raw == letter for r, letter in zip(one_pass, per_option, strict=True))
    passes = sum(len(lettered(r.question)) for r in requests)
    print(
        f"machine: {platform.machine()}, {torch.get_num_threads()} torch threads, "
        f"torch {torch.__version__}"
    )
    print(f"items: {len(requests)} (seed {args.seed}); per-option forward passes: {passes}")
    print(f"one-pass:   {len(requests) / one_pass_s:6.2f} items/s ({one_pass_s:.1f} s)")
    print(f"per-option: {len(requests) / per_option_s:6.2f} items/s ({per_option_s:.1f} s)")
    print(f"speed-up:   {per_option_s / one_pass_s:.1f}x (target >= 4x)")
    print(f"agreement:  {agree}/{len(requests)} = {agree / len(requests):.2f}")


if __name__ == "__main__":
    main()
