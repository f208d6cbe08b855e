#!/usr/bin/env bash
# `kreg build-cache` fills a folder without a GPU; a later process served from it compiles
# nothing. Usage: build_cache_test.sh PATH/TO/kreg
set -euo pipefail
kreg="$1"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$kreg" build-cache --arch sm_90 --out "$dir/cache" --json > "$dir/build.json"
grep -q '"compiles": [1-9]' "$dir/build.json" || { echo "build-cache compiled nothing"; cat "$dir/build.json"; exit 1; }
KREG_PRECOMPILED=0 "$kreg" prewarm --all --arch sm_90 --cache-dir "$dir/cache" --json > "$dir/later.json"
grep -q '"compiles": 0,' "$dir/later.json" || { echo "the later process compiled"; cat "$dir/later.json"; exit 1; }
grep -q '"disk_hits": [1-9]' "$dir/later.json" || { echo "no disk hits"; cat "$dir/later.json"; exit 1; }
"$kreg" cache verify --cache-dir "$dir/cache" --json | grep -q '"bad": 0'
echo "build-cache output served a later process with zero compiles"
