#!/usr/bin/env bash
# `kreg cache remote`, `export` and `import` against a redis-server of the test's own (on a
# Unix socket in a temp folder). Usage: remote_cli_test.sh PATH/TO/kreg [PATH/TO/redis-server]
# Exits 77 (skipped) without redis-server.
set -euo pipefail
kreg="$1"
server="${2:-$(command -v redis-server || true)}"
if [[ -z "$server" || ! -x "$server" ]]; then echo "redis-server is not installed: skipped"; exit 77; fi
dir=$(mktemp -d)
pid=""
cleanup() { [[ -n "$pid" ]] && kill -9 "$pid" 2>/dev/null; rm -rf "$dir"; }
trap cleanup EXIT
fail() { echo "$1"; shift; for f in "$@"; do cat "$f"; done; exit 1; }
"$server" --port 0 --unixsocket "$dir/redis.sock" --unixsocketperm 700 --save "" \
  --appendonly no --dir "$dir" --logfile "$dir/redis.log" &
pid=$!
url="unix://$dir/redis.sock"
for _ in $(seq 200); do [[ -S "$dir/redis.sock" ]] && break; sleep 0.05; done
"$kreg" cache remote ping --remote "$url" > "$dir/ping.txt" || fail "ping failed" "$dir/ping.txt"
grep -q "unsigned" "$dir/ping.txt" || fail "ping does not say how entries travel" "$dir/ping.txt"

# Two built-ins compiled into one folder, and written through to Redis.
KREG_REMOTE_CACHE="$url" KREG_PRECOMPILED=0 "$kreg" prewarm --arch sm_90 --cache-dir "$dir/a" \
  --json axpy_f32 elementwise_add_f32 > "$dir/prewarm.json"
grep -q '"remote_misses": 2' "$dir/prewarm.json" || fail "prewarm did not ask Redis" "$dir/prewarm.json"
"$kreg" cache remote stats --count-keys --remote "$url" --json > "$dir/stats.json"
grep -q '"keys": 2' "$dir/stats.json" || fail "Redis does not hold the two entries" "$dir/stats.json"

# A second folder is served from Redis, and so is a pull by manifest.
KREG_REMOTE_CACHE="$url" KREG_PRECOMPILED=0 "$kreg" prewarm --arch sm_90 --cache-dir "$dir/b" \
  --json axpy_f32 elementwise_add_f32 > "$dir/served.json"
grep -q '"compiles": 0,' "$dir/served.json" || fail "the second process compiled" "$dir/served.json"
grep -q '"remote_hits": 2' "$dir/served.json" || fail "no remote hits" "$dir/served.json"
cat > "$dir/manifest.json" <<'JSON'
{"format": "kreg-manifest", "version": 1,
 "kernels": [{"name": "axpy_f32", "constants": ""}, {"name": "elementwise_add_f32", "constants": ""}]}
JSON
"$kreg" cache remote pull --manifest "$dir/manifest.json" --arch sm_90 --remote "$url" \
  --cache-dir "$dir/c" > "$dir/pull.txt" || fail "pull failed" "$dir/pull.txt"
grep -q "pulled 2 entries" "$dir/pull.txt" || fail "pull did not fetch both" "$dir/pull.txt"
KREG_PRECOMPILED=0 "$kreg" prewarm --arch sm_90 --cache-dir "$dir/c" --json axpy_f32 elementwise_add_f32 > "$dir/pulled.json"
grep -q '"compiles": 0,' "$dir/pulled.json" || fail "the pulled folder did not serve" "$dir/pulled.json"

# Push puts back what was lost.
"$kreg" cache remote push --all --remote "$url" --cache-dir "$dir/a" > "$dir/push.txt" || fail "push failed" "$dir/push.txt"
grep -q "pushed 2 entries" "$dir/push.txt" || fail "push did not send both" "$dir/push.txt"

# Export and import; a damaged bundle is refused entry by entry.
"$kreg" cache export --out "$dir/k.kbundle" --manifest "$dir/manifest.json" --arch sm_90 \
  --cache-dir "$dir/a" > "$dir/export.txt" || fail "export failed" "$dir/export.txt"
"$kreg" cache import "$dir/k.kbundle" --cache-dir "$dir/d" > "$dir/import.txt" || fail "import failed" "$dir/import.txt"
grep -q "imported 2 entries" "$dir/import.txt" || fail "import did not add both" "$dir/import.txt"
size=$(stat -c %s "$dir/k.kbundle")
printf '\xff' | dd of="$dir/k.kbundle" bs=1 seek=$((size - 50)) conv=notrunc status=none
if "$kreg" cache import "$dir/k.kbundle" --cache-dir "$dir/e" > "$dir/bad.txt" 2>&1; then
  fail "a damaged bundle imported cleanly" "$dir/bad.txt"
fi
grep -q "imported 1 entries (1 refused" "$dir/bad.txt" || fail "the good entry was not kept" "$dir/bad.txt"

# A malformed URL is an error that names it; a dead server is reported, not fatal.
if KREG_REMOTE_CACHE="redis:/nowhere" "$kreg" cache remote ping > "$dir/url.txt" 2>&1; then
  fail "a malformed URL was accepted" "$dir/url.txt"
fi
grep -q "redis:/nowhere" "$dir/url.txt" || fail "the error does not name the URL" "$dir/url.txt"
kill -9 "$pid"; wait "$pid" 2>/dev/null || true; pid=""
if "$kreg" cache remote ping --remote "$url" > "$dir/dead.txt" 2>&1; then fail "ping of a dead server passed" "$dir/dead.txt"; fi
grep -q "unreachable" "$dir/dead.txt" || fail "ping does not say unreachable" "$dir/dead.txt"
KREG_REMOTE_CACHE="$url" KREG_PRECOMPILED=0 "$kreg" prewarm --arch sm_90 --cache-dir "$dir/f" \
  --json axpy_f32 > "$dir/dead_prewarm.json" 2> /dev/null || fail "prewarm failed with Redis dead" "$dir/dead_prewarm.json"
echo "remote cache CLI: ping, stats, push, pull, export, import and their failures work"
