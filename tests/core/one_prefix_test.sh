#!/usr/bin/env bash
# kreg::Error adds the "kreg: " prefix (src/core/error.cpp), so no message text in the
# library or the Python extension starts with it: a message built with one would not be
# doubled by the constructor, but would be by any error or log line that quotes it.
# Usage: one_prefix_test.sh PATH/TO/SOURCE/TREE
set -uo pipefail
cd "$1" || exit 1
found=$(grep -rnE '"(\\n)?kreg: ' src python/src include/kreg \
          --include='*.cpp' --include='*.hpp' --include='*.cuh' |
        grep -v '^src/core/error\.cpp:' |
        grep -vE '^[^:]+:[0-9]+:[[:space:]]*//' |
        grep -v 'std::cout')  # verbose output is no error: it names kreg once itself
if [[ -n "$found" ]]; then
  echo "FAIL: message text that starts with kreg's prefix (kreg::Error adds it):"
  echo "$found"
  exit 1
fi
echo "no message carries the prefix itself"
