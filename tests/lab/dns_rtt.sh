#!/bin/bash
# dns_rtt.sh SPEEDY PLAN — `speedy lab run --dns-rtt` without a network (--dry-run): the
# loads' keys are unchanged without lookups (0 or no option), so results files written
# before --dns-rtt existed keep resuming; with lookups every key names them, so such a
# run resumes only its own loads; bad values are usage errors (exit 2) that name the option.
set -euo pipefail
speedy=$1
plan=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
keys() { # keys OPTION... — the dry run's keys, sorted
  "$speedy" lab run --dry-run -o "$tmp/results.jsonl" -l cable --loss 0 --tls off \
    -c http1-fcfs,spdy-single -n 2 --seed 7 "$@" "$plan" 2>"$tmp/err" | sort
}
keys >"$tmp/none"
keys --dns-rtt 0 >"$tmp/zero"
keys --dns-rtt 250 >"$tmp/dns"
[[ $(wc -l <"$tmp/none") == 4 ]] || fail "want 4 loads: $(cat "$tmp/none")"
cmp -s "$tmp/none" "$tmp/zero" || fail "--dns-rtt 0 changed the keys: $(diff "$tmp/none" "$tmp/zero")"
grep -q "dns" "$tmp/none" && fail "a key without lookups mentions dns: $(cat "$tmp/none")"
sed 's/|tls=off|/|tls=off|dns=250|/' "$tmp/none" | sort | cmp -s - "$tmp/dns" ||
  fail "with --dns-rtt 250 want '|dns=250' after the TLS field: $(cat "$tmp/dns")"
# Resuming: a results file of loads without lookups...
python3 -c 'import json, sys
for k in open(sys.argv[1]): print(json.dumps({"key": k.rstrip("\n")}))' "$tmp/none" >"$tmp/results.jsonl"
keys >/dev/null
grep -q "0 loads to run, 4 already in" "$tmp/err" || fail "no lookups: $(cat "$tmp/err")"
# ...does not hold the loads with lookups
keys --dns-rtt 250 >/dev/null
grep -q "4 loads to run, 0 already in" "$tmp/err" || fail "--dns-rtt 250: $(cat "$tmp/err")"
# Bad values
for bad in -5 abc 10001 1.5 "" 20ms " 7"; do
  rc=0
  "$speedy" lab run --dry-run -o "$tmp/results.jsonl" --dns-rtt "$bad" "$plan" \
    >/dev/null 2>"$tmp/err" || rc=$?
  [[ $rc == 2 ]] || fail "--dns-rtt '$bad': exit $rc, want 2"
  grep -qF "speedy lab run: bad --dns-rtt '$bad': expected whole ms from 0 to 10000" "$tmp/err" ||
    fail "--dns-rtt '$bad': $(cat "$tmp/err")"
done
"$speedy" lab run --help | grep -q -- "--dns-rtt MS" || fail "--help lacks --dns-rtt"
echo "PASS: keys unchanged without lookups, named with them; bad values refused"
