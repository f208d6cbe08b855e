#!/usr/bin/env bash
# What the CLI says about bad input: one JSON document per command, a reason for every
# failure, and no setting ignored without a word. Usage: messages_test.sh PATH/TO/kreg
set -uo pipefail
kreg="$1"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
export KREG_CACHE_DIR="$dir/cache"
source "$(dirname "$0")/expect.sh"

# One JSON document, whatever the command.
timeout 120 "$kreg" selfcheck --json > "$dir/selfcheck.json" || fail "selfcheck --json failed"
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert 'kernels' in d and 'ok' in d" \
  "$dir/selfcheck.json" || fail "selfcheck --json is not one JSON document"

# Every failure says why, in text and in JSON.
expect 1 "nosuch: no registered source declares kernel 'nosuch'" \
  "$kreg" prewarm --arch sm_90 nosuch "powi_f32|300:i2"
expect 1 "is int but was given as bool" "$kreg" prewarm --arch sm_90 "powi_f32|300:b1"
"$kreg" prewarm --arch sm_90 --json nosuch > "$dir/prewarm.json"
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert 'no registered source' in d['kernels'][0]['error']" \
  "$dir/prewarm.json" || fail "prewarm --json gives no reason"
cat > "$dir/unknown.json" <<'JSON'
{"format": "kreg-manifest", "version": 1, "kernels": [{"name": "not_a_kernel"}]}
JSON
# build-cache builds the manifest's kernels first and stops at one it cannot build, before
# the built-ins (minutes of compiling) and the bundle.
expect 1 "not_a_kernel: no registered source declares kernel 'not_a_kernel'" \
  "$kreg" build-cache --arch sm_90 --out "$dir/built" --manifest "$dir/unknown.json"
expect 1 "the built-ins were not built, nor the bundle" "$kreg" build-cache --arch sm_90 \
  --out "$dir/built" --manifest "$dir/unknown.json" --bundle "$dir/unknown.kbundle"
[[ ! -e "$dir/unknown.kbundle" ]] || fail "build-cache bundled a folder that lacks the manifest's kernels"
"$kreg" build-cache --arch sm_90 --out "$dir/built" --manifest "$dir/unknown.json" --json \
  > "$dir/unknown_build.json"
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert d['builtins_skipped'] and \
d['builtin_ready'] == 0 and d['failures'][0]['kernel'] == 'not_a_kernel' and 'bundle' not in d" \
  "$dir/unknown_build.json" || fail "build-cache --json does not say it stopped: $(cat "$dir/unknown_build.json")"

# kreg is named once a line: by the error line, by a log line, never again by the message.
twice='(kreg: |kreg \[).*(kreg: |kreg \[)'
expect 1 "kreg: InvalidArgument: NVRTC " "$kreg" prewarm --arch sm_999 --all
out=$("$kreg" doctor --arch sm_999 2>&1)
grep -qE "cannot target sm_999" <<<"$out" || fail "doctor --arch sm_999 did not say why: $out"
! grep -qE "$twice" <<<"$out" || fail "an error named kreg twice: $out"
out=$(KREG_LOG=debug "$kreg" prewarm --arch sm_90 nosuch "powi_f32|300:b1" 2>&1)
grep -qF "kreg [debug] prewarm of 'powi_f32' failed" <<<"$out" || fail "no debug line: $out"
! grep -qE "$twice" <<<"$out" || fail "a log line or report named kreg twice: $out"

# Manifests: only regular files, of bounded size; a FIFO must not hang.
mkfifo "$dir/fifo.json"
expect 1 "is a FIFO, not a regular file" "$kreg" prewarm --arch sm_90 --manifest "$dir/fifo.json"
expect 1 "is a device, not a regular file" "$kreg" prewarm --arch sm_90 --manifest /dev/zero
expect 1 "is a folder, not a regular file" "$kreg" prewarm --arch sm_90 --manifest "$dir"

# Commands and arguments.
expect 2 "unknown command 'bogus'" "$kreg" bogus
expect 2 "nothing to prewarm" "$kreg" prewarm --arch sm_90
expect 2 "'-1' is not a size" "$kreg" cache trim --target-bytes -1
expect 0 "removed" "$kreg" cache trim --target-bytes 512M

# Settings that are not what they look like are named, never silently taken.
expect 0 "KREG_CACHE_MAX_BYTES=' -1' is not a size" env KREG_CACHE_MAX_BYTES=" -1" "$kreg" doctor
[[ $(KREG_CACHE_MAX_BYTES=lots "$kreg" doctor 2>&1 | grep -c "is not a size") -eq 1 ]] ||
  fail "a bad KREG_CACHE_MAX_BYTES is not reported exactly once"
expect 0 "KREG_LOG='verbose' is not a level" env KREG_LOG=verbose "$kreg" list
expect 0 "KREG_CACHE_DIR='relative/cache' is not an absolute path; ignored" \
  env KREG_CACHE_DIR=relative/cache "$kreg" doctor
[[ ! -e relative ]] || fail "a relative KREG_CACHE_DIR made a folder here"
# (16 binaries to build: enough for prewarm to look for workers)
powers=()
for n in $(seq 1 16); do powers+=("powi_f32|300:i$n"); done
expect 0 "KREG_COMPILE_WORKER='$dir/none' is not an executable" \
  env KREG_COMPILE_WORKER="$dir/none" KREG_PRECOMPILED=0 "$kreg" prewarm --arch sm_90 "${powers[@]}"

# verify counts a huge sparse entry as bad instead of dying, and removes it.
KREG_PRECOMPILED=0 "$kreg" prewarm --arch sm_90 --cache-dir "$dir/v" "axpy_f32" > /dev/null ||
  fail "prewarm into $dir/v failed"
entry=$(find "$dir/v" -name '*.kbin' | head -n 1)
[[ -n "$entry" ]] || fail "no entry was written"
truncate -s 1T "$entry"
expect 1 '"bad": 1' "$kreg" cache verify --cache-dir "$dir/v" --json
expect 0 '"removed": 1' "$kreg" cache verify --cache-dir "$dir/v" --remove-bad --json
[[ ! -e "$entry" ]] || fail "verify --remove-bad left the sparse entry"
# kreg tune: a bad shapes file says which shape and why, before any GPU work.
echo '[{"op": "matmul", "m": 16, "k": 64}]' > "$dir/tune_n.json"
expect 1 'tune file, shape 0: "n" is missing' "$kreg" tune "$dir/tune_n.json"
echo '[{"op": "matmul", "m": 1, "n": 8, "k": 8}, {"op": "conv"}]' > "$dir/tune_op.json"
expect 1 'shape 1: unknown op "conv" (matmul, quantized_matmul, moe or attention)' "$kreg" tune "$dir/tune_op.json"
echo '[{"op": "moe", "tokens": 0, "experts": 8, "hidden": 64, "ffn": 64}]' > "$dir/tune_zero.json"
expect 1 '"tokens" must be a positive integer' "$kreg" tune "$dir/tune_zero.json"
echo '{}' > "$dir/tune_object.json"
expect 1 "must be a non-empty JSON array of shapes" "$kreg" tune "$dir/tune_object.json"
expect 1 "cannot read tune file" "$kreg" tune "$dir/no_such.json"
# kreg cache tuning: nothing to list in a folder without records.
expect 0 "no tuning records" "$kreg" cache tuning --cache-dir "$dir/v"
[[ "$("$kreg" cache tuning --cache-dir "$dir/v" --json)" == "[]" ]] ||
  fail "cache tuning --json of a folder without records is not []"
echo "every message named its cause"
