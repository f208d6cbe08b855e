#!/usr/bin/env bash
# The Python benchmarks of docs/performance.md, in one run on a GPU machine:
#   bash bench/python/run.sh BUILD_DIR [RUNS]
# BUILD_DIR holds bench/kreg_prewarm_all_bench and bench/kreg_custom_bench; kreg must be
# importable (pip install ., or PYTHONPATH=BUILD_DIR/python).
set -euo pipefail
build="$1"
runs="${2:-9}"
here="$(cd "$(dirname "$0")" && pwd)"
median() { sort -n | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }

echo "== host time per call (1024 floats)"
python3 "$here/call_overhead.py" 200
echo "== the parts of the call, each form alone"
python3 "$here/call_breakdown.py"
if [[ -x "$build/bench/kreg_custom_bench" ]]; then
  echo "== the same kernel from C++ (apply + eval), same run"
  "$build/bench/kreg_custom_bench" overhead
fi

echo "== first call of a new custom kernel, fresh process, empty disk cache (median of $runs)"
for mode in kreg cupy; do
  python3 -c "import $([[ $mode == kreg ]] && echo kreg || echo cupy)" 2>/dev/null || continue
  values=$(for _ in $(seq "$runs"); do
             dir=$(mktemp -d)
             KREG_CACHE_DIR="$dir" CUPY_CACHE_DIR="$dir" python3 "$here/first_call.py" "$mode" |
               awk '{print $2}'
             rm -rf "$dir"
           done)
  echo "$mode first call: median $(echo "$values" | median) ms of: $(echo $values)"
done

if [[ -x "$build/bench/kreg_custom_bench" ]]; then
  values=$(for _ in $(seq "$runs"); do
             dir=$(mktemp -d)
             KREG_CACHE_DIR="$dir" "$build/bench/kreg_custom_bench" first-call 0 | awk '{print $2}'
             rm -rf "$dir"
           done)
  echo "C++ first call (kreg_custom_bench first-call 0): median $(echo "$values" | median) ms of: $(echo $values)"
fi
dir=$(mktemp -d)
KREG_CACHE_DIR="$dir" python3 "$here/first_call.py" kreg
rm -rf "$dir"

echo "== prewarm_all, fresh process, warm disk cache (median of $runs, alternating)"
dir=$(mktemp -d)
KREG_CACHE_DIR="$dir" "$build/bench/kreg_prewarm_all_bench" >/dev/null  # fill the cache
py=(); cpp=()
for _ in $(seq "$runs"); do
  cpp+=("$(KREG_CACHE_DIR="$dir" "$build/bench/kreg_prewarm_all_bench" | awk '{print $2}')")
  py+=("$(KREG_CACHE_DIR="$dir" python3 "$here/prewarm_all.py" | awk '{print $2}')")
done
KREG_CACHE_DIR="$dir" "$build/bench/kreg_prewarm_all_bench"
KREG_CACHE_DIR="$dir" python3 "$here/prewarm_all.py"
echo "C++ prewarm_all: median $(printf '%s\n' "${cpp[@]}" | median) ms of: ${cpp[*]}"
echo "Python prewarm_all: median $(printf '%s\n' "${py[@]}" | median) ms of: ${py[*]}"
rm -rf "$dir"
