#!/bin/bash
# hdr_reference.sh SPEEDY — `speedy lab hdr` on the HAR corpus: at zlib 9,15,8 over every
# entry the figures are within 0.5 points of the corpus README's reference (requests 81.9%,
# responses 78.5% smaller); a malformed file among good ones gets one error line naming
# file:line:column, the others are still measured, and the exit status is 1. HTTP/2's
# HPACK columns (4,096-byte tables, independent of --zlib) stay at what was measured when
# they were added, within 0.5 points: requests 74.21%, responses 71.38% smaller.
set -u
speedy=$1
corpus=${SPEEDY_SHARED_DIR:-}/corpus/har
if [ -z "${SPEEDY_SHARED_DIR:-}" ] || [ ! -d "$corpus" ]; then
  echo "skipped: no HAR corpus (set SPEEDY_SHARED_DIR to the directory holding corpus/har)"
  exit 77
fi
fail() { echo "FAIL: $*"; exit 1; }

out=$(timeout 100 "$speedy" lab hdr --all-entries --zlib 9,15,8 "$corpus"/*.har) || fail "exit status $?"
total=$(echo "$out" | awk '$1 == "total"')
echo "$out" | head -1
echo "$total"
req=$(echo "$total" | awk '{sub("%", "", $6); print $6}')
resp=$(echo "$total" | awk '{sub("%", "", $9); print $9}')
awk -v r="$req" 'BEGIN { exit !(r >= 81.4 && r <= 82.4) }' || fail "requests $req% smaller, want 81.9 +- 0.5"
awk -v r="$resp" 'BEGIN { exit !(r >= 78.0 && r <= 79.0) }' || fail "responses $resp% smaller, want 78.5 +- 0.5"
hreq=$(echo "$total" | awk '{sub("%", "", $11); print $11}')
hresp=$(echo "$total" | awk '{sub("%", "", $13); print $13}')
awk -v r="$hreq" 'BEGIN { exit !(r >= 73.71 && r <= 74.71) }' || fail "HPACK requests $hreq% smaller, want 74.21 +- 0.5"
awk -v r="$hresp" 'BEGIN { exit !(r >= 70.88 && r <= 71.88) }' || fail "HPACK responses $hresp% smaller, want 71.38 +- 0.5"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf '{"log": {"entries": [\n  {"x": 1,}\n]}}\n' > "$tmp/broken.har"
"$speedy" lab hdr "$tmp/broken.har" "$corpus/mnot-craigslist.org.har" > "$tmp/out" 2> "$tmp/err"
status=$?
[ "$status" -eq 1 ] || fail "a malformed file should give exit status 1, got $status"
grep -q "^speedy lab: $tmp/broken.har:2:11: " "$tmp/err" || fail "error names file:line:col: $(cat "$tmp/err")"
[ "$(wc -l < "$tmp/err")" -eq 1 ] || fail "one error line: $(cat "$tmp/err")"
grep -q "^mnot-craigslist.org.har" "$tmp/out" || fail "the good file is still measured"
"$speedy" lab hdr --json "$corpus/mnot-craigslist.org.har" | grep -q '"reduction"' || fail "--json"
"$speedy" lab hdr --json "$corpus/mnot-craigslist.org.har" | grep -Eq '"hpack": \{"skipped": 0, "request": \{"http1": [1-9][0-9]*, "h2": [1-9]' || fail "--json: hpack"
echo "ok: requests $req%, responses $resp% smaller at 9,15,8; HPACK $hreq%, $hresp%"
