#!/usr/bin/env bash
# First call of a trivial custom kernel with an empty disk cache, in fresh processes;
# prints the median of each mode. Usage: bench/custom_first_call.sh BUILD_DIR [RUNS]
set -euo pipefail
bin="$1/bench/kreg_custom_bench"
runs="${2:-9}"
median() { sort -n | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
run_mode() {
  local label="$1"; shift
  local values
  values=$(for _ in $(seq "$runs"); do
             dir=$(mktemp -d)
             if [[ "$1" == second-kernel-nodisk ]]; then
               KREG_DISK_CACHE=0 KREG_CACHE_DIR="$dir" "$bin" second-kernel | awk '{print $2}'
             else
               KREG_CACHE_DIR="$dir" "$bin" "$@" | awk '{print $2}'
             fi
             rm -rf "$dir"
           done | median)
  printf '%-44s %8s ms  (median of %s fresh processes)\n' "$label" "$values" "$runs"
}
run_mode "first call, NVRTC started with the kernel" first-call 0
run_mode "first call, 300 ms after creating the kernel" first-call 300
run_mode "a second new kernel (NVRTC already running)" second-kernel
run_mode "the same, disk cache off (no store)" second-kernel-nodisk
run_mode "the same by hand: NVRTC default options + load" raw-second-kernel
if python3 -c "import cupy" 2>/dev/null; then
  run_peer() {
    local label="$1"; shift
    local values
    values=$(for _ in $(seq "$runs"); do
               dir=$(mktemp -d)
               CUPY_CACHE_DIR="$dir" python3 "$(dirname "$0")/peer_custom.py" "$@" | awk '{print $2}'
               rm -rf "$dir"
             done | median)
    printf '%-44s %8s ms  (median of %s fresh processes)\n' "$label" "$values" "$runs"
  }
  run_peer "CuPy RawKernel, first call" first-call
  run_peer "CuPy RawKernel, a second new kernel" second-kernel
fi
