#!/bin/bash
# run.sh CASE — one integration test of `speedy get` against node's spdy-transport (or
# node's http for --http1): starts tests/get/server.js on 127.0.0.1 port 0, runs
# `speedy get`, checks files, digests, the summary and the exit status. Exit 0 pass,
# 1 fail, 77 skip (no node or no node_modules). Everything lives in a temporary
# directory removed at exit; the server is stopped by its PID.
set -u
case=${1:?usage: run.sh CASE}
src=${SPEEDY_SOURCE_DIR:?}
speedy=${SPEEDY_BUILD_DIR:?}/src/speedy
command -v node >/dev/null 2>&1 || { echo "SKIP: node not found"; exit 77; }
[ -d "$src/node_modules/spdy-transport" ] || {
  echo "SKIP: $src/node_modules/spdy-transport missing (run npm ci)"; exit 77; }
export NODE_PATH=$src/node_modules

work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  rm -rf "$work"
}
trap cleanup EXIT
cd "$work" || exit 1
certs=$work/certs
fail() { echo "FAIL ($case): $*"; [ -f err ] && { echo "--- speedy stderr"; cat err; }; exit 1; }

# start_server NAME ARGS... — sets PORT
start_server() {
  local name=$1; shift
  mkfifo "$name.in"
  node "$src/tests/get/server.js" "$@" < "$name.in" > "$name.port" 2> "$name.err" &
  pids+=($!)
  exec {fd}> "$name.in" # holds the server's stdin open until we exit
  for _ in $(seq 100); do
    PORT=$(sed -n 's/.*"port":\([0-9]*\).*/\1/p' "$name.port")
    [ -n "$PORT" ] && return 0
    sleep 0.05
  done
  cat "$name.err"; fail "server did not start"
}

tls_server() { sh "$src/tests/io/gencerts.sh" "$certs" || fail "gencerts"; start_server s --tls "$certs/server.pem" "$certs/server.key" "$@"; }

# sha256 of the test pattern of n bytes (the server's /bytes/N body)
pattern_sha() {
  node -e 'const n=+process.argv[1];const b=Buffer.alloc(n);for(let i=0;i<n;i++)b[i]=Math.imul(i+n,0x9E3779B1)>>>24;process.stdout.write(require("crypto").createHash("sha256").update(b).digest("hex"))' "$1"
}
sha() { sha256sum "$1" | cut -d' ' -f1; }
expect_file() { # FILE SIZE
  [ -f "$1" ] || fail "$1 not saved"
  [ "$(sha "$1")" = "$(pattern_sha "$2")" ] || fail "$1: sha256 differs from the $2-byte pattern"
}
get() { # runs speedy get with stderr in ./err; a sanitizer report fails the test
  "$speedy" get --max-time 30 "$@" 2> err
  local rc=$?
  grep -qE "ERROR: (Address|Leak)Sanitizer|runtime error:" err && { cat err; fail "sanitizer report"; }
  return $rc
}
expect_summary() { grep -q -- "$1" err || fail "summary lacks '$1'"; }

fetch_three() { # SCHEME OPTIONS... — three sizes on one session, saved with -d
  local scheme=$1; shift
  mkdir -p out
  get -d out "$@" "$scheme://localhost:$PORT/bytes/0" "$scheme://localhost:$PORT/bytes/1024" \
    "$scheme://localhost:$PORT/bytes/3000000" || fail "exit status $?"
  expect_file out/0 0; expect_file out/1024 1024; expect_file out/3000000 3000000
  expect_summary "1 connection$"
}

case $case in
plain_v3.1) start_server s --version 3.1; fetch_three http; expect_summary "spdy/3.1 negotiated by plaintext" ;;
plain_v3) start_server s --version 3; fetch_three http --spdy=3; expect_summary "spdy/3 negotiated by plaintext" ;;
plain_v2) start_server s --version 2; fetch_three http --spdy=2; expect_summary "spdy/2 negotiated by plaintext" ;;
tls_alpn_v3.1) tls_server; fetch_three https --cacert "$certs/ca.pem"; expect_summary "spdy/3.1 negotiated by ALPN" ;;
tls_alpn_v3) tls_server; fetch_three https --cacert "$certs/ca.pem" --spdy=3; expect_summary "spdy/3 negotiated by ALPN" ;;
tls_alpn_v2) tls_server; fetch_three https --cacert "$certs/ca.pem" --spdy=2; expect_summary "spdy/2 negotiated by ALPN" ;;
tls_server_order) # the server prefers spdy/2: ALPN follows the server
  tls_server --protocols spdy/2,spdy/3.1; get -o /dev/null --cacert "$certs/ca.pem" "https://localhost:$PORT/bytes/10" || fail "exit $?"
  expect_summary "spdy/2 negotiated by ALPN" ;;
push_plain|push_tls|push_v2|push_v3|push_status_in_headers_frame)
  opts=(); scheme=http
  case $case in
  push_plain) start_server s ;;
  push_v2) start_server s --version 2; opts=(--spdy=2) ;;
  push_v3) start_server s --version 3; opts=(--spdy=3) ;;
  push_status_in_headers_frame) start_server s --late-status ;;
  push_tls) tls_server; scheme=https; opts=(--cacert "$certs/ca.pem") ;;
  esac
  mkdir out; get "${opts[@]}" -d out "$scheme://localhost:$PORT/index.html" || fail "exit $?"
  expect_file out/index.html 2000; expect_file out/pushed.js 5000
  expect_summary "push ok .*200 .*5000 B.*/pushed.js -> out/pushed.js" ;;
push_raw_spdy_transport_tls) # spdy-transport's pushes as they are (no shim; TLS, so :scheme https is right)
  tls_server --raw-pushes; mkdir out
  get --cacert "$certs/ca.pem" -d out "https://localhost:$PORT/index.html" || fail "exit $?"
  expect_file out/index.html 2000; expect_file out/pushed.js 5000 ;;
push_listed_without_dir)
  start_server s; get -o page "http://localhost:$PORT/index.html" || fail "exit $?"
  expect_file page 2000; [ -e pushed.js ] && fail "push saved without -O/-d"
  expect_summary "push ok .*5000 B.*/pushed.js" ;;
push_cross_origin_refused)
  start_server s; mkdir out; get -v -d out "http://localhost:$PORT/cross.html" || fail "exit $?"
  [ -e out/evil.js ] && fail "a push for another origin was saved"
  expect_summary "push from another origin: reset" ;;
push_adopted_for_a_request)
  start_server s; mkdir out
  get -v -d out "http://localhost:$PORT/index.html" "http://localhost:$PORT/pushed.js" || fail "exit $?"
  expect_file out/pushed.js 5000; expect_summary "push adopted for http://localhost:$PORT/pushed.js"
  expect_summary "RST_STREAM stream=3 .*status=CANCEL" ;;
stdout_in_order)
  start_server s; get "http://localhost:$PORT/bytes/3000000" "http://localhost:$PORT/bytes/10" > both || fail "exit $?"
  head -c 3000000 both > first; tail -c 10 both > second
  expect_file first 3000000; expect_file second 10 ;;
no_push)
  start_server s; mkdir out; get --no-push -d out "http://localhost:$PORT/index.html" || fail "exit $?"
  expect_file out/index.html 2000; [ -e out/pushed.js ] && fail "--no-push still saved a push"
  true ;;
post)
  tls_server; head -c 777777 /dev/urandom > body
  get --cacert "$certs/ca.pem" -o answer --data @body "https://localhost:$PORT/upload" || fail "exit $?"
  [ "$(cat answer)" = "777777 $(sha body)" ] || fail "upload answer '$(cat answer)'" ;;
large_file_tls)
  tls_server; get --cacert "$certs/ca.pem" -o big "https://localhost:$PORT/bytes/33554432" || fail "exit $?"
  expect_file big 33554432 ;;
refused_stream_retried)
  start_server s; get -o ok "http://localhost:$PORT/refuse-once" || fail "exit $?"
  [ "$(cat ok)" = ok ] || fail "body '$(cat ok)'"; expect_summary "2 connections" ;;
goaway_retried)
  start_server s; mkdir out
  get -v -d out "http://localhost:$PORT/goaway-once" "http://localhost:$PORT/bytes/10" "http://localhost:$PORT/bytes/20" || fail "exit $?"
  expect_file out/10 10; expect_file out/20 20; [ "$(cat out/goaway-once)" = ok ] || fail "goaway-once body"
  expect_summary "GOAWAY: last good stream 1"; expect_summary "2 connections" ;;
verify_fails_without_ca)
  tls_server; get -o x "https://localhost:$PORT/bytes/10"; rc=$?
  [ $rc = 1 ] || fail "exit $rc, expected 1"; expect_summary "certificate verify failed" ;;
insecure_and_resolve)
  tls_server; get -k --resolve "www.example.test:$PORT:127.0.0.1" -o x "https://www.example.test:$PORT/bytes/10" || fail "exit $?"
  expect_file x 10 ;;
http1_keepalive)
  start_server s --http1; mkdir out
  urls=(); for i in $(seq 1 20); do urls+=("http://localhost:$PORT/bytes/$((i * 1000))"); done
  get --http1 --http1-connections 2 -d out "${urls[@]}" || fail "exit $?"
  for i in $(seq 1 20); do expect_file "out/$((i * 1000))" $((i * 1000)); done
  expect_summary "http/1.1 negotiated by plaintext.*2 connections" ;;
http1_tls)
  sh "$src/tests/io/gencerts.sh" "$certs"; start_server s --http1 --tls "$certs/server.pem" "$certs/server.key"
  get --http1 --cacert "$certs/ca.pem" -o x "https://localhost:$PORT/bytes/5000" || fail "exit $?"
  expect_file x 5000; expect_summary "http/1.1 negotiated by ALPN" ;;
failures_named)
  start_server s; get -o a -o b "http://localhost:$PORT/nope" "http://localhost:$PORT/bytes/5"; rc=$?
  [ $rc = 1 ] || fail "exit $rc"; expect_summary "speedy get: http://localhost:$PORT/nope: HTTP status 404"
  expect_file b 5 ;;
safe_names_no_overwrite)
  start_server s; mkdir out; echo keep > out/10; ln -s /etc/passwd out/20
  get -d out "http://localhost:$PORT/bytes/10" "http://localhost:$PORT/bytes/20" "http://localhost:$PORT/bytes/..%2F..%2Fx"; rc=$?
  [ $rc = 1 ] || fail "exit $rc"
  [ "$(cat out/10)" = keep ] || fail "out/10 was overwritten"
  [ -L out/20 ] || fail "out/20 symlink replaced"; expect_summary "File exists (not overwriting)"
  ls out | grep -q / && fail "a name with a slash"; true ;;
usage)
  "$speedy" get --bogus 2>err; [ $? = 2 ] || fail "bad option: exit not 2"
  "$speedy" get 2>err; [ $? = 2 ] || fail "no URL: exit not 2"
  "$speedy" get --help > help || fail "--help exit"
  for o in --spdy --http1 --output --remote-name --dir --header --data --priority --verbose \
           --insecure --cacert --resolve --no-push --max-pushes --window --session-window; do
    grep -q -- "$o" help || fail "--help does not list $o"
  done ;;
*) echo "unknown case $case"; exit 2 ;;
esac
echo "PASS $case"
