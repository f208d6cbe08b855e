#!/usr/bin/env bash
# Runs kreg_first_call in fresh processes and prints the median of each mode. The modes take
# turns within every round, so that a host that speeds up or slows down during the run (page
# cache, clocks, other tenants) weighs on all of them alike.
# Usage: bench/first_call.sh BUILD_DIR [RUNS] [--gpu]
set -euo pipefail
bin="$1/bench/kreg_first_call"
runs="${2:-9}"
gpu="${3:-}"

labels=() modes=()
add() { labels+=("$1"); shift; modes+=("$*"); }
add "raw NVRTC -minimal"           raw
add "raw NVRTC -minimal -std=c++17" raw-std
add "kreg, no warm-up"             kreg 0
add "kreg, warm-up, 0ms"           kreg-warm 0
for gap in 100 300 1000; do
  add "kreg, no warm-up, ${gap}ms" kreg "$gap"
  add "kreg, warm-up, ${gap}ms"    kreg-warm "$gap"
done
if [[ "$gpu" == "--gpu" ]]; then
  add "driver first, then NVRTC (GPU)" driver-first
  add "first get+launch (GPU)"         first-launch
  dir=$(mktemp -d)
  trap 'rm -rf "$dir"' EXIT
  "$bin" disk "$dir" >/dev/null  # fills the cache
  add "prewarm_all from disk (GPU)"    disk "$dir"
  add "prewarm_all precompiled (GPU)"  precompiled
  add "one get, precompiled (GPU)"     precompiled-get
  "$bin" image "$dir/axpy.cubin"
  add "the same image by hand (GPU)"   raw-load "$dir/axpy.cubin"
fi

results=$(mktemp)
for _ in $(seq "$runs"); do
  for i in "${!modes[@]}"; do
    # shellcheck disable=SC2086  # a mode is its words
    printf '%s %s\n' "$i" "$("$bin" ${modes[$i]} | awk '{print $2}')" >>"$results"
  done
done
for i in "${!modes[@]}"; do
  value=$(awk -v m="$i" '$1 == m {print $2}' "$results" | sort -n |
          awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}')
  printf '%-32s %8s ms  (median of %s fresh processes)\n' "${labels[$i]}" "$value" "$runs"
done
rm -f "$results"
