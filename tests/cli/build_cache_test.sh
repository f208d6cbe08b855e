#!/usr/bin/env bash
# `kreg build-cache` fills a folder without a GPU; a later process served from it compiles
# nothing. Usage: build_cache_test.sh PATH/TO/kreg
set -euo pipefail
kreg="$1"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$kreg" build-cache --arch sm_90 --out "$dir/cache" --bundle "$dir/kernels.kbundle" --json > "$dir/build.json"
grep -q '"compiles": [1-9]' "$dir/build.json" || { echo "build-cache compiled nothing"; cat "$dir/build.json"; exit 1; }
KREG_PRECOMPILED=0 "$kreg" prewarm --all --arch sm_90 --cache-dir "$dir/cache" --json > "$dir/later.json"
grep -q '"compiles": 0,' "$dir/later.json" || { echo "the later process compiled"; cat "$dir/later.json"; exit 1; }
grep -q '"disk_hits": [1-9]' "$dir/later.json" || { echo "no disk hits"; cat "$dir/later.json"; exit 1; }
# The bundle it wrote fills another folder that serves a process with zero compiles too.
"$kreg" cache import "$dir/kernels.kbundle" --cache-dir "$dir/imported" --json > "$dir/import.json"
grep -q '"refused": 0' "$dir/import.json" || { echo "the import refused entries"; cat "$dir/import.json"; exit 1; }
KREG_PRECOMPILED=0 "$kreg" prewarm --all --arch sm_90 --cache-dir "$dir/imported" --json > "$dir/from_bundle.json"
grep -q '"compiles": 0,' "$dir/from_bundle.json" || { echo "the bundle's process compiled"; cat "$dir/from_bundle.json"; exit 1; }
# Output is captured before it is searched: under pipefail, `grep -q` leaving early would
# fail the writer with SIGPIPE.
verify=$("$kreg" cache verify --cache-dir "$dir/cache" --json)
grep -q '"bad": 0' <<< "$verify" || { echo "verify found bad entries: $verify"; exit 1; }
# The same NVRTC copied to another folder (another path, another mtime) is the same compiler:
# a process that loads the copy is served what the original built.
nvrtc=$(ldd "$kreg" | awk '/libnvrtc\.so/ { print $3 }')
if [[ -n "$nvrtc" && -f "$nvrtc" ]]; then
  mkdir -p "$dir/lib"
  cp "$nvrtc" "$dir/lib/"
  cp "$(dirname "$nvrtc")"/libnvrtc-builtins.so.* "$dir/lib/" 2>/dev/null || true
  LD_LIBRARY_PATH="$dir/lib" KREG_PRECOMPILED=0 "$kreg" prewarm --all --arch sm_90 --cache-dir "$dir/cache" --json > "$dir/copy.json"
  libs=$(LD_LIBRARY_PATH="$dir/lib" ldd "$kreg")
  grep -q "$dir/lib/libnvrtc" <<< "$libs" || { echo "the copy of NVRTC was not loaded"; exit 1; }
  grep -q '"compiles": 0,' "$dir/copy.json" || { echo "a copy of the same NVRTC compiled again"; cat "$dir/copy.json"; exit 1; }
fi
# Without a usable disk cache, build-cache must fail rather than ship nothing.
if KREG_DISK_CACHE=0 "$kreg" build-cache --arch sm_90 --out "$dir/off" > /dev/null 2>&1; then
  echo "build-cache succeeded with the disk cache off"; exit 1
fi
# Inspecting a folder that does not exist reports an empty cache, and does not create it.
"$kreg" cache stats --cache-dir "$dir/typo" > "$dir/typo.txt" ||
  { echo "stats of a missing folder failed: $(cat "$dir/typo.txt")"; exit 1; }
grep -q 'does not exist yet' "$dir/typo.txt" || { echo "stats did not say the folder is missing"; exit 1; }
[[ ! -e "$dir/typo" ]] || { echo "cache stats created the folder"; exit 1; }
echo "build-cache output served a later process with zero compiles"
