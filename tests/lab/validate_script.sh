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
"$script" --tls-version 1.1 2>"$tmp/err" || status=$?
((status == 2)) || fail "--tls-version 1.1: exit $status, want 2"
grep -q "bad --tls-version '1.1'" "$tmp/err" || fail "--tls-version 1.1: $(cat "$tmp/err")"
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

# A run with a stand-in for speedy (it notes its arguments): the loader, not Chromium, gets
# the ClientHello padding and the delayable limit; the results are kept xz-compressed, and
# a run resumes from the compressed files when the plain ones are gone.
mkdir -p "$tmp/build/src" "$tmp/pages"
: >"$tmp/pages/page.har"
cat >"$tmp/build/src/speedy" <<'EOF2'
#!/bin/bash
# lab run ... -o FILE ...: appends one line naming the client and its options
# lab report --html HTML FILE: copies FILE to HTML
# STAND_IN_BULK=N: also N bytes of noise (xz cannot shrink them); STAND_IN_STOP=1: as if
# interrupted by SIGTERM after the line (exit 143)
if [[ $1 == lab && $2 == run ]]; then
  args="$*" out=
  while (($#)); do [[ $1 == -o ]] && out=$2; shift; done
  echo "$args" >>"$out"
  if [[ -n ${STAND_IN_BULK:-} ]]; then
    head -c "$STAND_IN_BULK" /dev/urandom | base64 -w 0 >>"$out"
    echo >>"$out"
  fi
  [[ -z ${STAND_IN_STOP:-} ]] || exit 143
elif [[ $1 == lab && $2 == report ]]; then
  cp "$5" "$4"
  cat "$5"
fi
EOF2
chmod +x "$tmp/build/src/speedy"
out=$tmp/validation
"$script" --build "$tmp/build" -n 1 -l cable --loss 0 "$out" "$tmp/pages" >/dev/null 2>"$tmp/err" ||
  fail "stand-in run: $(cat "$tmp/err")"
grep -q -- "--client speedy .*--hello-padding 1700 --delayable-limit 10 --chromium-sockets --chromium-headers --boost-images --blocking-css --document-delay 20 --frame-delay 15 --request-spacing 1" "$out/results-speedy.jsonl" ||
  fail "the loader's options: $(cat "$out/results-speedy.jsonl")"
! grep -q -- "--hello-padding\|--delayable-limit\|--chromium-\|--boost-images\|--blocking-css\|--request-spacing" "$out/results-chromium.jsonl" ||
  fail "Chromium got the loader's options: $(cat "$out/results-chromium.jsonl")"
# Both clients' replays at TLS 1.3 unless asked (Chromium's False Start, docs/lab.md).
for client in speedy chromium; do
  grep -q -- "--client $client .*--tls on --tls-version 1.3 " "$out/results-$client.jsonl" ||
    fail "$client: not TLS 1.3: $(cat "$out/results-$client.jsonl")"
done
for client in speedy chromium; do
  cmp -s <(xz -dc "$out/results-$client.jsonl.xz") "$out/results-$client.jsonl" ||
    fail "results-$client.jsonl.xz is not the results file"
done
grep -qx "results-speedy.jsonl" "$out/.gitignore" || fail ".gitignore: $(cat "$out/.gitignore")"
rm "$out/results-speedy.jsonl" "$out/results-chromium.jsonl"
SPEEDY_HELLO_PADDING=0 SPEEDY_CHROMIUM_SOCKETS=0 SPEEDY_CHROMIUM_HEADERS=0 SPEEDY_BOOST_IMAGES=0 \
  SPEEDY_BLOCKING_CSS=0 SPEEDY_REQUEST_SPACING=0 "$script" --build "$tmp/build" -n 1 -l cable --loss 0 --tls-version 1.2 "$out" "$tmp/pages" \
  >/dev/null 2>"$tmp/err" || fail "resumed run: $(cat "$tmp/err")"
[[ $(wc -l <"$out/results-speedy.jsonl") == 2 ]] || fail "not resumed from the .xz file"
tail -n 1 "$out/results-speedy.jsonl" | grep -q -- "--delayable-limit 10" || fail "resumed: no limit"
tail -n 1 "$out/results-chromium.jsonl" | grep -q -- "--tls-version 1.2 " || fail "--tls-version 1.2 not passed"
! tail -n 1 "$out/results-speedy.jsonl" | grep -q -- "--hello-padding" ||
  fail "SPEEDY_HELLO_PADDING=0 still padded"
! tail -n 1 "$out/results-speedy.jsonl" | grep -q -- "--chromium-sockets" ||
  fail "SPEEDY_CHROMIUM_SOCKETS=0 still asked for Chromium's sockets"
! tail -n 1 "$out/results-speedy.jsonl" | grep -q -- "--chromium-headers" ||
  fail "SPEEDY_CHROMIUM_HEADERS=0 still sent Chromium's headers"
! tail -n 1 "$out/results-speedy.jsonl" | grep -q -- "--boost-images" ||
  fail "SPEEDY_BOOST_IMAGES=0 still boosted images"
! tail -n 1 "$out/results-speedy.jsonl" | grep -q -- "--request-spacing" ||
  fail "SPEEDY_REQUEST_SPACING=0 still spaced the requests"
! tail -n 1 "$out/results-speedy.jsonl" | grep -q -- "--blocking-css" ||
  fail "SPEEDY_BLOCKING_CSS=0 still blocked the parser"
! grep -q -- "--jitter" "$out/results-speedy.jsonl" || fail "--jitter without SPEEDY_JITTER"
! grep -q -- "--load-event" "$out/results-speedy.jsonl" || fail "--load-event without SPEEDY_LOAD_EVENT"

# loader_option VAR VALUE BAD COMMAND FLAG README: VAR=VALUE gives the loader's command line
# COMMAND (a pattern) and Chromium's no FLAG, the README lists README; VAR=BAD exits 2.
loader_option() {
  local var=$1 value=$2 bad=$3 command=$4 flag=$5 readme=$6 status=0
  local out=$tmp/$var
  env "$var=$value" "$script" --build "$tmp/build" -n 1 -l cable --loss 0 "$out" "$tmp/pages" \
    >/dev/null 2>"$tmp/err" || fail "$var=$value: $(cat "$tmp/err")"
  grep -q -- "$command" "$out/results-speedy.jsonl" ||
    fail "$var=$value: $(cat "$out/results-speedy.jsonl")"
  ! grep -q -- "$flag" "$out/results-chromium.jsonl" || fail "Chromium got $flag"
  grep -q -- "$readme" "$out/README.md" || fail "README: $(cat "$out/README.md")"
  env "$var=$bad" "$script" --build "$tmp/build" "$out" "$tmp/pages" >/dev/null 2>"$tmp/err" ||
    status=$?
  ((status == 2)) || fail "$var=$bad: exit $status, want 2"
}
# The loader's --jitter and --load-event, not Chromium's.
loader_option SPEEDY_JITTER 7 x "--request-spacing 1 --jitter 7" --jitter "--jitter 7"
loader_option SPEEDY_LOAD_EVENT 1 2 "--client speedy .*--load-event" --load-event --load-event

# -c: the loader runs the list, Chromium the browser's part of it; --loader-jobs.
out=$tmp/matrix
"$script" --build "$tmp/build" -n 1 -l cable --loss 0 -c all --loader-jobs 2 "$out" "$tmp/pages" \
  >/dev/null 2>"$tmp/err" || fail "-c all: $(cat "$tmp/err")"
grep -q -- " -c http1-fcfs,http1-prio,http1-single,spdy-multi,spdy-single,spdy-push,spdy-hint,h2-multi,h2-single,h2-coalesced,h2-push,h2-hint -n 1 -j 2 " \
  "$out/results-speedy.jsonl" || fail "-c all, loader: $(cat "$out/results-speedy.jsonl")"
grep -q -- " -c http1-fcfs,http1-single,h2-multi,h2-single,h2-coalesced,h2-hint -n 1 -j 1 " \
  "$out/results-chromium.jsonl" || fail "-c all, Chromium: $(cat "$out/results-chromium.jsonl")"
grep -q "^# The lab's configurations with the loader and Chromium" "$out/README.md" ||
  fail "-c all: README title: $(head -n 1 "$out/README.md")"
out=$tmp/spdy
"$script" --build "$tmp/build" -n 1 -l cable --loss 0 -c spdy-single,spdy-push "$out" "$tmp/pages" \
  >"$tmp/log" 2>"$tmp/err" || fail "-c spdy-single,spdy-push: $(cat "$tmp/err")"
grep -q "chromium: none of spdy-single,spdy-push is a browser's; not run" "$tmp/log" ||
  fail "SPDY only: $(cat "$tmp/log")"
[[ ! -s $out/results-chromium.jsonl ]] || fail "SPDY only: Chromium ran: $(cat "$out/results-chromium.jsonl")"
status=0
"$script" -c 'h2 multi' 2>"$tmp/err" || status=$?
((status == 2)) && grep -q "bad -c 'h2 multi'" "$tmp/err" || fail "-c 'h2 multi': exit $status, $(cat "$tmp/err")"
status=0
"$script" --loader-jobs 0 2>"$tmp/err" || status=$?
((status == 2)) && grep -q "bad --loader-jobs '0'" "$tmp/err" ||
  fail "--loader-jobs 0: exit $status, $(cat "$tmp/err")"

# Results too large for one file in git are kept in parts, which a run resumes from; an
# interrupted run compresses what it has.
out=$tmp/bulk
status=0
STAND_IN_BULK=3000000 STAND_IN_STOP=1 "$script" --build "$tmp/build" -n 1 -l cable --loss 0 \
  "$out" "$tmp/pages" >/dev/null 2>"$tmp/err" || status=$?
((status == 143)) || fail "interrupted: exit $status, want 143: $(cat "$tmp/err")"
[[ -e $out/results-speedy.jsonl.xz.00 && -e $out/results-speedy.jsonl.xz.01 ]] ||
  fail "interrupted: no parts: $(ls "$out")"
[[ ! -e $out/results-speedy.jsonl.xz ]] || fail "both a whole file and parts"
for part in "$out"/results-speedy.jsonl.xz.*; do
  (($(stat -c %s "$part") <= 1900 * 1024)) || fail "$part: $(stat -c %s "$part") octets"
done
cmp -s <(cat "$out"/results-speedy.jsonl.xz.* | xz -dc) "$out/results-speedy.jsonl" ||
  fail "the parts are not the results file"
mv "$out/results-speedy.jsonl" "$tmp/bulk-before.jsonl"
"$script" --build "$tmp/build" -n 1 -l cable --loss 0 "$out" "$tmp/pages" >/dev/null 2>"$tmp/err" ||
  fail "resumed from parts: $(cat "$tmp/err")"
cmp -s <(head -c "$(stat -c %s "$tmp/bulk-before.jsonl")" "$out/results-speedy.jsonl") \
  "$tmp/bulk-before.jsonl" || fail "not resumed from the parts"
[[ $(wc -l <"$out/results-speedy.jsonl") == 3 ]] || fail "resumed from parts: $(wc -l <"$out/results-speedy.jsonl") lines"
grep -q "in numbered parts" "$out/README.md" || fail "README: no word of the parts"
# A report page over a part's size is kept xz-compressed too, the plain page ignored.
cmp -s <(xz -dc "$out/report.html.xz") "$out/report.html" || fail "report.html.xz: $(ls "$out")"
grep -qx "report.html" "$out/.gitignore" || fail ".gitignore: $(cat "$out/.gitignore")"
grep -q "report.html.xz" "$out/README.md" || fail "README: no word of report.html.xz"
echo "ok"
