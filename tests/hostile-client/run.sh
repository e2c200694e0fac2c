#!/bin/bash
# run.sh CASE — one test of `speedy get` against tests/hostile-client/hostile_server.c on
# 127.0.0.1 port 0. Every run of speedy is bounded by `timeout 20` (a hang fails the test),
# its peak RSS is measured by /usr/bin/time and must stay under HOSTILE_CLIENT_MAX_RSS_KB,
# and a sanitizer report fails the test. A failing fetch must end with exit status 1 and
# exactly one line on stderr (with -s): "speedy get: URL: reason". Everything lives in a
# temporary directory removed at exit; the server is stopped by its PID.
set -u
case=${1:?usage: run.sh CASE}
src=${SPEEDY_SOURCE_DIR:?}
speedy=${SPEEDY_BUILD_DIR:?}/src/speedy
server=${HOSTILE_SERVER:?}
max_rss=${HOSTILE_CLIENT_MAX_RSS_KB:-65536}
[ -x /usr/bin/time ] || { echo "SKIP: /usr/bin/time missing"; exit 77; }

work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  rm -rf "$work"
}
trap cleanup EXIT
cd "$work" || exit 1
fail() {
  echo "FAIL ($case): $*"
  for f in err server.err; do [ -f "$f" ] && { echo "--- $f"; head -c 4000 "$f"; echo; }; done
  exit 1
}

# start_server CASE ARGS... — sets PORT and URL (the base URL of the server)
start_server() {
  mkfifo server.in
  "$server" "$@" < server.in > server.port 2> server.err &
  pids+=($!)
  exec {fd}> server.in # holds the server's stdin open until we exit
  for _ in $(seq 100); do
    PORT=$(sed -n 's/^port \([0-9]*\)$/\1/p' server.port)
    [ -n "$PORT" ] && break
    sleep 0.05
  done
  [ -n "$PORT" ] || fail "server did not start"
  URL=http://127.0.0.1:$PORT
}
tls_server() {
  sh "$src/tests/io/gencerts.sh" certs || fail "gencerts"
  start_server "$@" --tls certs/server.pem certs/server.key
  URL=https://localhost:$PORT
}

# get ARGS... — runs speedy get (silent: no summary) under timeout and /usr/bin/time;
# stderr in ./err, exit status in $rc, peak RSS in $rss (KiB)
get() {
  timeout -k 5 20 /usr/bin/time -o rss -f %M "$speedy" get -s "$@" 2> err
  rc=$?
  [ $rc = 124 ] || [ $rc = 137 ] && fail "speedy get hung (killed by timeout)"
  grep -qE "ERROR: (Address|Leak)Sanitizer|runtime error:" err && fail "sanitizer report"
  rss=$(tail -n 1 rss)
  [ "$rss" -le "$max_rss" ] || fail "peak RSS ${rss} KiB over ${max_rss} KiB"
  echo "speedy get exit $rc, peak RSS $rss KiB"
}
# expect_failure URL REGEX — exit 1 and exactly one line "speedy get: URL: ..." matching
expect_failure() {
  [ "$rc" = 1 ] || fail "exit status $rc, expected 1"
  [ "$(wc -l < err)" = 1 ] || fail "expected exactly one line on stderr"
  grep -qF "speedy get: $1: " err || fail "stderr does not name $1"
  grep -qE -- "$2" err || fail "stderr does not say why (want /$2/)"
  echo "error line: $(cat err)"
}
# server_stat NAME — the last value of NAME=N on the server's stats lines
server_stat() { sed -n "s/^stats .*\b$1=\([0-9]*\).*/\1/p" server.err | tail -n 1; }

case $case in
push_flood) # endless pushes: at most --max-pushes accepted, the rest reset, the page arrives
  # (the sanitizers are ten times slower: fewer pushes there, and their RSS bound is loose)
  count=200000; [ -n "${HOSTILE_CLIENT_SANITIZED:-}" ] && count=20000
  [ -z "${HOSTILE_CLIENT_SANITIZED:-}" ] && max_rss=16384 # ~5-8 MiB measured; 36 MiB unpaced
  start_server push-flood --count $count; mkdir out
  get -d out --max-pushes 20 "$URL/page"
  [ $rc = 0 ] || fail "exit status $rc, the main request should complete"
  [ "$(cat out/page)" = "main body" ] || fail "main body not saved"
  n=$(ls out | wc -l); [ "$n" -le 21 ] || fail "$n files saved, --max-pushes 20 allows 20 + page"
  sleep 0.2; refused=$(server_stat refused); cancel=$(server_stat cancel)
  [ $((refused + cancel)) -ge $((count - 100)) ] ||
    fail "only $refused REFUSED_STREAM + $cancel CANCEL resets of $count pushes seen"
  grep -qE "^speedy get: $URL: [0-9]+ pushes refused \(over --max-pushes 20\)$" err ||
    fail "refused pushes not counted on stderr" ;;
push_other_origin) # refused with REFUSED_STREAM and named on stderr; the page itself is fine
  start_server push-other-origin; mkdir out
  get -d out "$URL/page"
  [ $rc = 0 ] || fail "exit status $rc"
  [ "$(cat out/page)" = ok ] || fail "page not saved"
  [ -e out/evil.js ] || [ -e out/other-scheme.js ] && fail "a push for another origin was saved"
  grep -qF "http://evil.example/evil.js" err || fail "the refused push is not named"
  grep -qF "https://127.0.0.1:$PORT/other-scheme.js" err || fail "the other-scheme push is not named"
  sleep 0.2; [ "$(server_stat refused)" -ge 2 ] || fail "pushes not reset with REFUSED_STREAM" ;;
push_names_stay_in_dir) # nothing lands outside -d DIR, no hidden or control-byte names
  start_server push-names; mkdir -p deep/er/out1 deep/er/out2; touch marker; sleep 1.1
  (cd deep/er && get -d out1 "$URL/..%2f..%2fmain1") || fail "exit status $rc"
  (cd deep/er && get -d out2 "$URL/x/..%2F..%2F%2e%2e%2fmain2") || fail "exit status $rc"
  outside=$(find . -newer marker -type f ! -path './deep/er/out[12]/*' ! -name err ! -name rss \
    ! -name 'server.*')
  [ -z "$outside" ] || fail "written outside the directory: $outside"
  find / -xdev -maxdepth 3 -name '*escape-*' -newer marker 2>/dev/null | grep -q . &&
    fail "an escape-* file exists outside the test directory"
  for d in deep/er/out1 deep/er/out2; do
    ls -A $d | grep -qE '^\.|[^A-Za-z0-9._-]' && fail "unsafe name saved in $d: $(ls -A $d)"
    ls $d | grep -q 'escape-pct$' || fail "the pushes were not saved in $d"
  done
  ls deep/er/out1 | grep -q 'main1$' || fail "the page was not saved under a safe base name"
  echo "saved: $(ls -A deep/er/out1 | tr '\n' ' ')" ;;
endless_body_max_filesize)
  start_server endless-body
  get -o body --max-filesize 5000000 "$URL/endless"
  expect_failure "$URL/endless" "max-filesize"
  size=$(stat -c %s body); [ "$size" -le 5000000 ] || fail "$size bytes written, over --max-filesize" ;;
endless_body_http1_max_filesize) # chunked, over TLS with ALPN http/1.1
  tls_server endless-body-http1
  get -o body --cacert certs/ca.pem --max-filesize 5M "$URL/endless"
  expect_failure "$URL/endless" "max-filesize 5242880"
  size=$(stat -c %s body); [ "$size" -le 5242880 ] || fail "$size bytes written, over --max-filesize" ;;
endless_body_http1_content_length_over_max)
  start_server endless-body-http1 --content-length 999999999999
  get -o body --http1 --max-filesize 1000000 "$URL/huge"
  expect_failure "$URL/huge" "content-length 999999999999 exceeds --max-filesize"
  size=$(stat -c %s body 2>/dev/null || echo 0); [ "$size" = 0 ] || fail "$size bytes written" ;;
endless_body_max_time)
  start_server endless-body
  get -o /dev/null --max-time 2 "$URL/endless"
  expect_failure "$URL/endless" "timed out \(--max-time\)" ;;
endless_body_content_length_over_max) # refused on the announced length, before the body
  start_server endless-body --content-length 999999999999
  get -o body --max-filesize 1000000 "$URL/huge"
  expect_failure "$URL/huge" "max-filesize"
  size=$(stat -c %s body 2>/dev/null || echo 0); [ "$size" = 0 ] || fail "$size bytes written" ;;
no_status)
  start_server no-status
  get -o body "$URL/nostatus"
  expect_failure "$URL/nostatus" ":status" ;;
zlib_bomb) # 16 MiB of header inflated from ~16 KiB: a session error, memory bounded
  start_server zlib-bomb
  get -o body "$URL/bomb"
  expect_failure "$URL/bomb" "session error: .*header block" ;;
goaway_at_once)
  start_server goaway
  get -o body "$URL/page"
  expect_failure "$URL/page" "GOAWAY" ;;
silent_server)
  start_server silent
  get -o body --max-time 2 "$URL/page"
  expect_failure "$URL/page" "timed out \(--max-time\)" ;;
tls_truncated_http1) # cut without close_notify after 5,000 of 100,000 bytes
  tls_server truncate-http1
  get -o body --cacert certs/ca.pem "$URL/truncated"
  expect_failure "$URL/truncated" "closed before the response ended" ;;
tls_truncated_http1_close_delimited) # no Content-Length: only close_notify says the body ended
  tls_server truncate-http1 --no-length
  get -o body --cacert certs/ca.pem "$URL/truncated"
  expect_failure "$URL/truncated" "close_notify" ;;
tls_truncated_spdy)
  tls_server truncate
  get -o body --cacert certs/ca.pem "$URL/truncated"
  expect_failure "$URL/truncated" "closed before the response ended" ;;
*) echo "unknown case $case"; exit 2 ;;
esac
echo "PASS $case"
