#!/usr/bin/env bash
# What `kreg doctor` and `kreg cache stats` say about a cache folder: one that does not exist
# yet or holds nothing is an empty cache that will be created; "unusable" only where kreg
# cannot use the folder, always with the reason. Usage: cache_folder_test.sh PATH/TO/kreg
set -uo pipefail
kreg="$1"
dir=$(mktemp -d)
shared=$(mktemp -d)  # for the cases run as another user
trap 'chmod -R u+rwx "$dir" "$shared" 2> /dev/null; rm -rf "$dir" "$shared"' EXIT
export KREG_CACHE_DIR="$dir/default"
source "$(dirname "$0")/expect.sh"
# doctor_says PATH TEXT [COMMAND PREFIX...]: doctor's cache line for PATH is exactly TEXT.
doctor_says() {
  local path="$1" text="$2"
  shift 2
  local out
  out=$(timeout 60 "$@" "$kreg" doctor --cache-dir "$path" 2>&1) || fail "doctor failed: $out"
  grep -qxF -- "cache         $text" <<<"$out" || fail "doctor did not say 'cache $text': $out"
}

# Not there yet: it will be created, stats is an empty cache, and neither creates it.
doctor_says "$dir/new" "$dir/new (does not exist yet; kreg will create it)"
doctor_says "$dir/a/b/c" "$dir/a/b/c (does not exist yet; kreg will create it)"
expect 0 '"state": "will_be_created"' "$kreg" cache stats --cache-dir "$dir/new" --json
expect 0 "entries: 0" "$kreg" cache stats --cache-dir "$dir/new"
[[ ! -e "$dir/new" && ! -e "$dir/a" ]] || fail "inspecting created a folder"
# The default folder is judged the same way.
expect 0 "$dir/default (does not exist yet; kreg will create it)" "$kreg" doctor
# An empty folder of ours, as `mktemp -d` makes: kreg's entries will be created in it.
fresh=$(mktemp -d -p "$dir")
doctor_says "$fresh" "$fresh (holds no entries yet; kreg will create them)"
expect 0 "holds no entries yet" env KREG_CACHE_DIR="$fresh" "$kreg" doctor
expect 0 '"entries": 0' "$kreg" cache stats --cache-dir "$fresh" --json
for action in verify clear trim; do
  expect 0 "" "$kreg" cache "$action" --cache-dir "$dir/new"
done

# A registry then fills it, and doctor has nothing more to say.
KREG_PRECOMPILED=0 "$kreg" prewarm --arch sm_90 --cache-dir "$dir/new" axpy_f32 > /dev/null ||
  fail "prewarm into $dir/new failed"
doctor_says "$dir/new" "$dir/new"
expect 0 '"state": "ready"' "$kreg" cache stats --cache-dir "$dir/new" --json
expect 0 '"entries": 1' "$kreg" cache stats --cache-dir "$dir/new" --json
format=$(basename "$(find "$dir/new" -mindepth 1 -maxdepth 1 -name 'v*')")
[[ -n "$format" ]] || fail "no format folder in $dir/new"

# unusable PATH WHY: doctor calls it unusable and says why; stats fails on an error line
# that says why.
unusable() {
  local path="$1" why="$2"
  doctor_says "$path" "$path (unusable: $why)"
  expect 1 "error: \"unusable cache folder: $why\"" "$kreg" cache stats --cache-dir "$path"
  expect 1 "\"state\": \"unusable\"" "$kreg" cache stats --cache-dir "$path" --json
}
mkdir "$dir/open" && chmod 0777 "$dir/open"
unusable "$dir/open" "$dir/open is writable by others (mode 0777)"
mkdir "$dir/tmpish" && chmod 1777 "$dir/tmpish"
unusable "$dir/tmpish" "$dir/tmpish is writable by others (mode 1777)"
mkdir "$dir/group" && chmod 0770 "$dir/group"
unusable "$dir/group" "$dir/group is writable by its group (mode 0770)"
echo x > "$dir/file"
unusable "$dir/file" "$dir/file is a file, not a folder"
unusable "$dir/file/cache" "cannot create $dir/file/cache: $dir/file is a file, not a folder"
mkfifo "$dir/fifo"
unusable "$dir/fifo" "$dir/fifo is a FIFO, not a folder"
ln -s "$dir/new" "$dir/link"
unusable "$dir/link" "$dir/link is a symbolic link"
# kreg's own folders inside are judged too.
mkdir -m 0700 "$dir/inner" && echo x > "$dir/inner/$format"
unusable "$dir/inner" "$dir/inner/$format is a file, not a folder"
cp -r "$dir/new" "$dir/inner_open" && chmod 0777 "$dir/inner_open/$format"
unusable "$dir/inner_open" "$dir/inner_open/$format is writable by others (mode 0777)"

# Another owner, and permissions: root may give folders away, and runs the permission cases
# as another user (root itself may write anywhere).
as_user=()
if [[ $(id -u) -eq 0 ]]; then
  mkdir -m 0700 "$dir/theirs" && chown 65534:65534 "$dir/theirs"
  unusable "$dir/theirs" "$dir/theirs is owned by another user (uid 65534)"
  if setpriv --reuid=65534 --regid=65534 --clear-groups "$kreg" --version > /dev/null 2>&1; then
    as_user=(setpriv --reuid=65534 --regid=65534 --clear-groups)
    chmod 0755 "$shared" && chown -R 65534:65534 "$shared"
  else
    echo "skipped: the permission cases (root, and cannot run kreg as uid 65534)"
  fi
fi
if [[ $(id -u) -ne 0 || ${#as_user[@]} -gt 0 ]]; then
  run() { "${as_user[@]}" "$@"; }
  run mkdir -m 0500 "$shared/locked"
  out=$(run "$kreg" doctor --cache-dir "$shared/locked/cache" 2>&1)
  grep -qxF "cache         $shared/locked/cache (unusable: cannot create $shared/locked/cache: $shared/locked is not writable by this user (mode 0500))" <<<"$out" ||
    fail "a folder that cannot be made in a read-only parent: $out"
  run mkdir -m 0700 "$shared/kept" && run mkdir -m 0700 "$shared/kept/$format" &&
    run mkdir -m 0700 "$shared/kept/$format/tmp" && run chmod 0500 "$shared/kept"
  doctor_says "$shared/kept" \
    "$shared/kept (read-only: $shared/kept is not writable by this user (mode 0500); entries are loaded, none are stored)" \
    "${as_user[@]}"
  out=$(run "$kreg" cache stats --cache-dir "$shared/kept" --json 2>&1) ||
    fail "stats of a read-only cache failed: $out"
  grep -qF '"state": "read_only"' <<<"$out" || fail "stats did not say read-only: $out"
  run mkdir -m 0300 "$shared/blind"
  out=$(run "$kreg" doctor --cache-dir "$shared/blind" 2>&1)
  grep -qF "(unusable: $shared/blind is not readable by this user (mode 0300))" <<<"$out" ||
    fail "an unreadable folder: $out"
fi
echo "every cache folder was judged with its reason"
