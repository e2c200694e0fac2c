#!/bin/bash
# run_options.sh SPEEDY STRESS_CORPUS — `speedy lab run` checks its values before it starts,
# with --dry-run too and without root: a bad value of an option is a usage error (exit 2)
# in the one style, naming the option, the value and the valid values; an input that cannot
# be read stops the run (exit 1) before anything is written; a page that cannot be
# replayed is skipped with its reason and the next page is the first.
set -euo pipefail
speedy=$1
corpus=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
good="$corpus/stress-01-ipv4.har"
[[ -f $good ]] || { echo "SKIP: no stress corpus at $corpus"; exit 77; }

dry() { "$speedy" lab run --dry-run -o "$tmp/results.jsonl" "$@"; }

# bad OPTION VALUE SHOWN ACCEPTED: exit 2 and the one-line message
bad() {
  local option=$1 value=$2 shown=$3 accepted=$4 rc=0
  dry "--$option" "$value" "$good" >/dev/null 2>"$tmp/err" || rc=$?
  [[ $rc == 2 ]] || fail "--$option '$value': exit $rc, want 2: $(cat "$tmp/err")"
  local want="speedy lab run: bad --$option '$shown': expected $accepted (try 'speedy lab run --help')"
  [[ $(cat "$tmp/err") == "$want" ]] || fail "--$option '$value': got '$(cat "$tmp/err")', want '$want'"
}
bad links dsl,fibre fibre "dsl, cable, 3g, lte, comma-separated"
bad links "" "" "dsl, cable, 3g, lte, comma-separated"
bad links dsl,,cable "" "dsl, cable, 3g, lte, comma-separated"
bad loss 0,x x "loss in percent from 0 to 50, comma-separated (at most 16)"
bad loss 60 60 "loss in percent from 0 to 50, comma-separated (at most 16)"
bad loss -1 -1 "loss in percent from 0 to 50, comma-separated (at most 16)"
bad loss nan nan "loss in percent from 0 to 50, comma-separated (at most 16)"
bad rtt 20,fast fast "round-trip times in ms from 0 to 10000, comma-separated (at most 16)"
bad configs http1-fcfs,x x \
  "http1-fcfs, http1-prio, http1-single, spdy-multi, spdy-single, spdy-push, spdy-hint, h2-multi, h2-single, h2-coalesced, h2-push, h2-hint or all, comma-separated"
bad configs spdy spdy \
  "http1-fcfs, http1-prio, http1-single, spdy-multi, spdy-single, spdy-push, spdy-hint, h2-multi, h2-single, h2-coalesced, h2-push, h2-hint or all, comma-separated"
bad tls on,maybe maybe "off or on, comma-separated"
bad repetitions -1 -1 "a whole number from 0 to 1000"
bad repetitions 2x 2x "a whole number from 0 to 1000"
bad jobs 0 0 "a whole number from 1 to 1000"
bad graph both,flat both,flat "estimated, flat or both"
bad tcp 2012 2012 "modern or 2009"
bad tls-version 1.1 1.1 "1.2 or 1.3"
bad queue 10 10 "bytes from 1500 to 1073741824, with an optional suffix k or M"
bad timeout 0 0 "seconds above 0, at most 86400"
bad seed -3 -3 "a whole number from 0 to 18446744073709551615"
bad dns-rtt 1.5 1.5 "whole ms from 0 to 10000"
bad hello-padding 3 3 "octets from 4 to 8192"
bad delayable-limit 0 0 "requests from 1 to 1000"
bad document-delay 10001 10001 "whole ms from 0 to 10000"
bad frame-delay -1 -1 "whole ms from 0 to 10000"
bad request-spacing 1001 1001 "whole ms from 0 to 1000"
bad jitter 1001 1001 "whole ms from 0 to 1000"
rc=0
dry --client chromium --delayable-limit 10 --tls on "$good" >/dev/null 2>"$tmp/err" || rc=$?
[[ $rc == 2 ]] || fail "--delayable-limit with --client chromium: exit $rc, want 2"
grep -qF -- "--delayable-limit is the loader's" "$tmp/err" ||
  fail "--delayable-limit with --client chromium: got '$(cat "$tmp/err")'"
bad hello-padding 8193 8193 "octets from 4 to 8192"
dry --hello-padding 1700 --tls on -l cable --loss 0 -n 1 "$good" >/dev/null 2>"$tmp/err" ||
  fail "--hello-padding 1700 was refused: $(cat "$tmp/err")"
rc=0
dry --client chromium --hello-padding 1700 --tls on "$good" >/dev/null 2>"$tmp/err" || rc=$?
[[ $rc == 2 ]] || fail "--hello-padding with --client chromium: exit $rc, want 2"
grep -qF -- "--hello-padding is the loader's" "$tmp/err" ||
  fail "--hello-padding with --client chromium: got '$(cat "$tmp/err")'"
rc=0
dry --client chromium --chromium-sockets --tls on "$good" >/dev/null 2>"$tmp/err" || rc=$?
[[ $rc == 2 ]] || fail "--chromium-sockets with --client chromium: exit $rc, want 2"
grep -qF -- "--chromium-sockets is the loader's" "$tmp/err" ||
  fail "--chromium-sockets with --client chromium: got '$(cat "$tmp/err")'"
rc=0
dry --client chromium --chromium-headers --tls on "$good" >/dev/null 2>"$tmp/err" || rc=$?
[[ $rc == 2 ]] || fail "--chromium-headers with --client chromium: exit $rc, want 2"
grep -qF -- "--chromium-headers is the loader's" "$tmp/err" ||
  fail "--chromium-headers with --client chromium: got '$(cat "$tmp/err")'"
rc=0
dry --client chromium --blocking-css --tls on "$good" >/dev/null 2>"$tmp/err" || rc=$?
[[ $rc == 2 ]] || fail "--blocking-css with --client chromium: exit $rc, want 2"
grep -qF -- "--blocking-css is the loader's" "$tmp/err" ||
  fail "--blocking-css with --client chromium: got '$(cat "$tmp/err")'"
rc=0
dry --client chromium --document-delay 20 --tls on "$good" >/dev/null 2>"$tmp/err" || rc=$?
[[ $rc == 2 ]] || fail "--document-delay with --client chromium: exit $rc, want 2"
grep -qF -- "--document-delay is the loader's" "$tmp/err" ||
  fail "--document-delay with --client chromium: got '$(cat "$tmp/err")'"
rc=0
dry --client chromium --frame-delay 15 --tls on "$good" >/dev/null 2>"$tmp/err" || rc=$?
[[ $rc == 2 ]] || fail "--frame-delay with --client chromium: exit $rc, want 2"
grep -qF -- "--frame-delay is the loader's" "$tmp/err" ||
  fail "--frame-delay with --client chromium: got '$(cat "$tmp/err")'"
rc=0
dry --client chromium --request-spacing 1 --tls on "$good" >/dev/null 2>"$tmp/err" || rc=$?
[[ $rc == 2 ]] || fail "--request-spacing with --client chromium: exit $rc, want 2"
grep -qF -- "--request-spacing is the loader's" "$tmp/err" ||
  fail "--request-spacing with --client chromium: got '$(cat "$tmp/err")'"
rc=0
dry --client chromium --load-event --tls on "$good" >/dev/null 2>"$tmp/err" || rc=$?
[[ $rc == 2 ]] || fail "--load-event with --client chromium: exit $rc, want 2"
grep -qF -- "--load-event is the loader's" "$tmp/err" ||
  fail "--load-event with --client chromium: got '$(cat "$tmp/err")'"
rc=0
dry --client chromium --jitter 10 --tls on "$good" >/dev/null 2>"$tmp/err" || rc=$?
[[ $rc == 2 ]] || fail "--jitter with --client chromium: exit $rc, want 2"
grep -qF -- "--jitter is the loader's" "$tmp/err" ||
  fail "--jitter with --client chromium: got '$(cat "$tmp/err")'"
rc=0
dry --client chromium --delayable-limit 10 --boost-images --tls on "$good" >/dev/null 2>"$tmp/err" ||
  rc=$?
[[ $rc == 2 ]] || fail "--boost-images with --client chromium: exit $rc, want 2"
rc=0
dry --boost-images --tls on "$good" >/dev/null 2>"$tmp/err" || rc=$?
[[ $rc == 2 ]] || fail "--boost-images without --delayable-limit: exit $rc, want 2"
grep -qF -- "--boost-images goes with --delayable-limit" "$tmp/err" ||
  fail "--boost-images without --delayable-limit: got '$(cat "$tmp/err")'"
# --client chromium: no SPDY and no push in today's browser; HTTP/2 over TLS only.
chromium_refused() {
  local want=$1 rc=0
  shift
  dry --client chromium "$@" "$good" >/dev/null 2>"$tmp/err" || rc=$?
  [[ $rc == 2 ]] || fail "--client chromium $*: exit $rc, want 2"
  [[ $(cat "$tmp/err") == "speedy lab run: bad $want (try 'speedy lab run --help')" ]] ||
    fail "--client chromium $*: got '$(cat "$tmp/err")'"
}
chromium_accepted="http1-fcfs, http1-single, h2-multi, h2-single, h2-coalesced or h2-hint with --client chromium (the browser has no SPDY and no push)"
chromium_refused "--configs 'spdy-multi': expected $chromium_accepted" -c spdy-multi
chromium_refused "--configs 'h2-push': expected $chromium_accepted" -c h2-multi,h2-push --tls on
chromium_refused "--tls 'off': expected on for HTTP/2 configurations with --client chromium (the browser speaks HTTP/2 over TLS only)" -c h2-single --tls off,on
dry --client chromium -c h2-multi,h2-single,h2-coalesced,h2-hint,http1-fcfs --tls on -l cable --loss 0 -n 1 "$good" >"$tmp/keys" 2>"$tmp/err" ||
  fail "chromium with the HTTP/2 configurations and TLS on was refused: $(cat "$tmp/err")"
[[ $(grep -c '|client=chromium' "$tmp/keys") == 5 ]] || fail "want 5 chromium loads: $(cat "$tmp/keys")"

# A control byte in the value is escaped, not written to the terminal.
bad links $'dsl\x1b[2J' 'dsl\x1b[2J' "dsl, cable, 3g, lte, comma-separated"

# Values are checked before the inputs are read: a bad value and a bad HAR give the usage error.
printf '{"log": {"entries": [' >"$tmp/truncated.har"
rc=0
dry -l fibre "$tmp/truncated.har" >/dev/null 2>"$tmp/err" || rc=$?
[[ $rc == 2 ]] || fail "bad value and bad HAR: exit $rc, want 2"

# An input that cannot be read: exit 1 before any load, with the file's error; nothing
# written. Good inputs beside it do not make it run.
rc=0
dry -l cable --loss 0 --tls on -c http1-fcfs "$good" "$tmp/truncated.har" >"$tmp/out" 2>"$tmp/err" || rc=$?
[[ $rc == 1 ]] || fail "a truncated HAR: exit $rc, want 1: $(cat "$tmp/err")"
grep -q "truncated.har:1:" "$tmp/err" || fail "the HAR's error names it: $(cat "$tmp/err")"
grep -q "1 input could not be used; nothing run" "$tmp/err" || fail "$(cat "$tmp/err")"
[[ ! -s $tmp/out ]] || fail "loads listed although the run did not start: $(cat "$tmp/out")"
rc=0
dry "$tmp/no-such.har" >/dev/null 2>"$tmp/err" || rc=$?
[[ $rc == 1 ]] || fail "a missing HAR: exit $rc, want 1"
echo '{"format": "speedy-lab-plan/2"}' >"$tmp/other.json"
rc=0
dry "$tmp/other.json" >/dev/null 2>"$tmp/err" || rc=$?
[[ $rc == 1 ]] || fail "a plan of another format: exit $rc, want 1"
[[ ! -e $tmp/results.jsonl ]] || fail "a dry run wrote results"

# A leftover first page: skipped with its reason, the next page is the first.
dry -l cable --loss 0 --tls on -c http1-fcfs,spdy-single -n 1 \
  "$corpus/stress-14-leftover-beacon.har" >"$tmp/keys" 2>"$tmp/err"
grep -q "stress-14-leftover-beacon.har: page 1 skipped: no document" "$tmp/err" ||
  fail "no skip line: $(cat "$tmp/err")"
[[ $(grep -c "stress-14-leftover-beacon.har#page 2 (estimated)|cable|" "$tmp/keys") == 2 ]] ||
  fail "page 2 is the first page: $(cat "$tmp/keys")"
echo "PASS: option values and inputs checked before the run; leftover pages skipped"
