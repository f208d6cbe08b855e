#!/usr/bin/env bash
# The CLI installed at a prefix other than the configured one finds the worker installed
# beside it (<prefix>/libexec/kreg), not the build tree's. Usage: installed_cli_test.sh PREFIX
set -euo pipefail
prefix=$(cd "$1" && pwd)
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
[[ -x "$prefix/libexec/kreg/kreg-nvrtc-worker" ]] || { echo "no worker installed in $prefix"; exit 1; }
# Enough binaries to build (nothing precompiled) that prewarm starts workers: it does from 16
# (src/registry/compile_workers.cpp), here 16 specializations of a small built-in.
kernels=()
for i in $(seq 1 16); do kernels+=("powi_f32|300:i$i"); done
KREG_LOG=debug KREG_PRECOMPILED=0 "$prefix/bin/kreg" prewarm --arch sm_90 \
  --cache-dir "$dir/cache" --json "${kernels[@]}" > "$dir/out.json" 2> "$dir/log.txt"
grep -q "worker processes of '$prefix/libexec/kreg/kreg-nvrtc-worker'" "$dir/log.txt" || {
  echo "the installed kreg did not use its own worker:"; grep -i worker "$dir/log.txt" || true; exit 1; }
grep -q '"ready": 16,' "$dir/out.json" || { echo "not all 16 were prewarmed"; cat "$dir/out.json"; exit 1; }
echo "the kreg installed in $prefix runs the worker installed beside it"
