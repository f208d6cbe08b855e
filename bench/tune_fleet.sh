#!/usr/bin/env bash
# A fleet sharing one tuning through Redis: one member runs `kreg tune SHAPES` on an empty
# disk cache against an empty redis-server of its own (a Unix socket in a temporary folder),
# then N-1 members at once, each on an empty disk cache of its own, run the same command.
# Prints each member's wall time and how many candidates it timed (0 for all but the first
# when the records are shared).
# Usage: bench/tune_fleet.sh KREG_CLI SHAPES.json [MEMBERS=16] [REDIS_SERVER=redis-server]
set -euo pipefail
kreg="$1"
shapes="$2"
members="${3:-16}"
server="${4:-redis-server}"
dir=$(mktemp -d)
trap 'kill "$(cat "$dir/redis.pid" 2>/dev/null)" 2>/dev/null || true; rm -rf "$dir"' EXIT
"$server" --port 0 --unixsocket "$dir/redis.sock" --save '' --appendonly no \
  --daemonize yes --pidfile "$dir/redis.pid" --logfile "$dir/redis.log"
for _ in $(seq 50); do [[ -S "$dir/redis.sock" ]] && break; sleep 0.1; done
export KREG_REMOTE_CACHE="unix://$dir/redis.sock"

member() {  # member INDEX: runs kreg tune, writes "INDEX seconds timed"
  local start end
  start=$(date +%s.%N)
  KREG_CACHE_DIR="$dir/cache$1" "$kreg" tune "$shapes" --json >"$dir/out$1.json"
  end=$(date +%s.%N)
  python3 - "$1" "$start" "$end" "$dir/out$1.json" <<'PY'
import json, sys
index, start, end, path = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
timed = sum(t["timed"] for t in json.load(open(path)))
print(f"member {index}: {end - start:.2f} s, {timed} candidates timed")
PY
}

member 0
for i in $(seq 1 $((members - 1))); do member "$i" >"$dir/line$i" & done
wait
cat "$dir"/line*
