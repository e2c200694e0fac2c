#!/bin/bash
# validate_script.sh SOURCE_DIR — scripts/lab-validate before it runs anything (no root):
# --help, usage errors (exit 2), a missing build, and no corpus (a message, exit 0, no
# OUT_DIR made). The run itself needs root and Chromium: docs/lab.md shows the one-page
# check.
set -euo pipefail
script=$1/scripts/lab-validate
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

"$script" --help | grep -q "Usage: scripts/lab-validate" || fail "--help prints no usage"
status=0
"$script" -n 0 2>"$tmp/err" || status=$?
((status == 2)) || fail "-n 0: exit $status, want 2"
grep -q "bad -n '0'" "$tmp/err" || fail "-n 0: $(cat "$tmp/err")"
status=0
"$script" --bogus 2>"$tmp/err" || status=$?
((status == 2)) || fail "--bogus: exit $status, want 2"
status=0
SPEEDY_SHARED_DIR=$tmp/none "$script" --build "$tmp" "$tmp/out" 2>"$tmp/err" || status=$?
((status == 0)) || fail "no corpus: exit $status, want 0"
grep -q "no corpus at $tmp/none/corpus/har" "$tmp/err" || fail "no corpus: $(cat "$tmp/err")"
[[ ! -e $tmp/out ]] || fail "no corpus: OUT_DIR was made"
status=0
"$script" --build "$tmp" "$tmp/out" "$tmp/page.har" 2>"$tmp/err" || status=$?
((status == 1)) || fail "no build: exit $status, want 1"
grep -q "was not built" "$tmp/err" || fail "no build: $(cat "$tmp/err")"
echo "ok"
