#!/usr/bin/env bash
# Heavy-header compiles with NVRTC's precompiled headers (KREG_PCH=1) against without
# (KREG_PCH=0), in fresh processes that take turns, on the same machine in the same run.
# Usage: bench/pch.sh BUILD_DIR [ROUNDS] [SEQUENCE] [PREWARM]
#   SEQUENCE distinct sources compiled one after another (default 6), of each kind;
#   PREWARM distinct cub sources in one prewarm (default 64; 0 skips it).
set -euo pipefail
bin="$1/bench/kreg_pch_bench"
rounds="${2:-3}"
sequence="${3:-6}"
prewarm="${4:-64}"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
median() { sort -n | awk '{v[NR]=$1} END {if (NR) print v[int((NR+1)/2)]; else print "-"}'; }

for kind in half cub; do
  for r in $(seq "$rounds"); do
    for pch in 0 1; do
      KREG_PCH=$pch "$bin" sequence "$kind" "$sequence" >"$out/$kind.$pch.$r"
    done
  done
  for pch in 0 1; do
    first=$(cat "$out/$kind.$pch".* | awk '$1 == "compile" && $2 == 0 {print $3}' | median)
    second=$(cat "$out/$kind.$pch".* | awk '$1 == "compile" && $2 == 1 {print $3}' | median)
    later=$(cat "$out/$kind.$pch".* | awk '$1 == "compile" && $2 >= 2 {print $3}' | median)
    printf '%-5s KREG_PCH=%s  first %8s ms  second %8s ms  later (median) %8s ms\n' \
      "$kind" "$pch" "$first" "$second" "$later"
  done
done

# The peer, where CuPy is installed: RawModule on the same sources, in the same run.
if python3 -c "import cupy" 2>/dev/null; then
  for kind in half cub; do
    for r in $(seq "$rounds"); do
      CUPY_CACHE_DIR="$out/cupy.$kind.$r" python3 "$(dirname "$0")/pch_peer.py" "$kind" "$sequence" \
        >"$out/cupy.$kind.out.$r"
    done
    first=$(cat "$out/cupy.$kind.out".* | awk '$1 == "compile" && $2 == 0 {print $3}' | median)
    later=$(cat "$out/cupy.$kind.out".* | awk '$1 == "compile" && $2 >= 1 {print $3}' | median)
    printf '%-5s CuPy RawModule  first %8s ms  later (median) %8s ms\n' "$kind" "$first" "$later"
  done
fi

if [[ "$prewarm" -gt 0 ]]; then
  for r in $(seq "$rounds"); do
    for pch in 0 1; do
      KREG_PCH=$pch "$bin" prewarm cub "$prewarm" >"$out/prewarm.$pch.$r"
    done
  done
  for pch in 0 1; do
    wall=$(cat "$out/prewarm.$pch".* | awk '$1 == "prewarm" {print $2}' | median)
    stats=$(grep -h '^stats' "$out/prewarm.$pch.1" | cut -d' ' -f2-)
    printf 'prewarm of %s cub sources, KREG_PCH=%s: %s ms (median of %s; %s)\n' \
      "$prewarm" "$pch" "$wall" "$rounds" "$stats"
  done
fi
