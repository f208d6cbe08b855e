# Helpers the CLI tests source.
fail() { echo "FAIL: $*"; exit 1; }
# expect CODE PATTERN COMMAND...: the exit code, and a pattern in stdout and stderr together.
# The command is stopped after EXPECT_SECONDS (60 unless the caller sets it for a slow one).
expect() {
  local code="$1" pattern="$2"
  shift 2
  local out status
  out=$(timeout "${EXPECT_SECONDS:-60}" "$@" 2>&1)
  status=$?
  [[ $status -eq $code ]] || fail "'$*' exited $status, not $code: $out"
  grep -qF -- "$pattern" <<<"$out" || fail "'$*' did not say '$pattern': $out"
}
