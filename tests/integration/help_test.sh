#!/usr/bin/env bash
# help_test.sh — `speedy --help` lists every command of the dispatcher's table
# (src/speedy/main.c) with its one-line summary, and points to the manual pages: speedy(1),
# speedy-COMMAND(1) for each command, speedyd(8). Whether those pages exist and install is
# run-install-test.sh's part.
#
# Usage: help_test.sh SPEEDY SOURCE_DIR   (exit 0 pass, 1 fail)
set -euo pipefail
speedy=$1
src=$2
failures=0
fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}

# The table's rows: {"name", entry_point, "summary"}, however clang-format wrapped them.
rows=$(tr '\n' ' ' <"$src/src/speedy/main.c" |
  grep -oE '\{"[a-z0-9-]+", *[a-z_0-9]+, *"[^"]*"\}' || true)
[[ -n "$rows" ]] || { echo "FAIL: no command table found in src/speedy/main.c"; exit 1; }
help=$("$speedy" --help)
flat=$(tr '\n' ' ' <<<"$help")
count=0
while IFS= read -r row; do
  name=$(sed -E 's/^\{"([^"]+)".*/\1/' <<<"$row")
  summary=$(sed -E 's/.*, *"([^"]*)"\}$/\1/' <<<"$row")
  count=$((count + 1))
  grep -qxF "  $(printf '%-8s' "$name") $summary" <<<"$help" ||
    fail "speedy --help has no line '  $name  $summary'"
  [[ "$flat" == *"speedy-$name(1)"* ]] || fail "speedy --help does not name the page speedy-$name(1)"
done <<<"$rows"
for page in 'speedy(1)' 'speedyd(8)' "'man speedy-COMMAND'"; do
  [[ "$flat" == *"$page"* ]] || fail "speedy --help does not mention $page"
done
long=$(awk 'length > 80' <<<"$help")
[[ -z "$long" ]] || fail "speedy --help has lines over 80 columns: $long"

if ((failures > 0)); then
  echo "$failures failure(s); speedy --help was:"
  echo "$help"
  exit 1
fi
echo "speedy --help: $count commands with their summaries, and the manual pages"
