#!/usr/bin/env bash
# Runs kreg_first_call in fresh processes and prints the median of each mode.
# Usage: bench/first_call.sh BUILD_DIR [RUNS] [--gpu]
set -euo pipefail
bin="$1/bench/kreg_first_call"
runs="${2:-9}"
median() { sort -n | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
run_mode() {
  local label="$1"; shift
  local values
  values=$(for _ in $(seq "$runs"); do "$bin" "$@" | awk '{print $2}'; done | median)
  printf '%-28s %8s ms  (median of %s fresh processes)\n' "$label" "$values" "$runs"
}
run_mode "raw NVRTC -minimal"            raw
run_mode "raw NVRTC -minimal -std=c++17"  raw-std
run_mode "kreg, no warm-up"               kreg 0
run_mode "kreg, warm-up, 0ms"             kreg-warm 0
for gap in 100 300 1000; do
  run_mode "kreg, no warm-up, ${gap}ms"   kreg "$gap"
  run_mode "kreg, warm-up, ${gap}ms"      kreg-warm "$gap"
done
if [[ "${3:-}" == "--gpu" ]]; then
  run_mode "first get+launch (GPU)" first-launch
  dir=$(mktemp -d)
  "$bin" disk "$dir" >/dev/null  # fills the cache
  run_mode "prewarm_all from disk (GPU)" disk "$dir"
  "$bin" disk "$dir"
  rm -rf "$dir"
  run_mode "prewarm_all precompiled (GPU)" precompiled
  run_mode "one get, precompiled (GPU)" precompiled-get
  "$bin" precompiled
fi
