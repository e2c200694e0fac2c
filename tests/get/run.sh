#!/bin/bash
# run.sh CASE — one integration test of `speedy get`: against node's spdy-transport (or
# node's http for --http1) in tests/get/server.js, or against speedyd for the curl-like
# options (HEAD, ranges, gzip, POST echo); some cases compare with curl. Servers listen on
# 127.0.0.1 port 0; the test runs `speedy get`, checks files, digests, the summary and
# the exit status. Exit 0 pass, 1 fail, 77 skip (node, node_modules, curl or script
# missing where the case needs them). Everything lives in a temporary directory removed
# at exit; servers are stopped by their PIDs.
set -u
case=${1:?usage: run.sh CASE}
src=${SPEEDY_SOURCE_DIR:?}
speedy=${SPEEDY_BUILD_DIR:?}/src/speedy
speedyd=$SPEEDY_BUILD_DIR/src/speedyd/speedyd
export NODE_PATH=$src/node_modules
need_node() {
  command -v node >/dev/null 2>&1 || { echo "SKIP: node not found"; exit 77; }
  [ -d "$src/node_modules/spdy-transport" ] || {
    echo "SKIP: $src/node_modules/spdy-transport missing (run npm ci)"; exit 77; }
}
need() { command -v "$1" >/dev/null 2>&1 || { echo "SKIP: $1 not found"; exit 77; }; }

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

# start_server NAME ARGS... — tests/get/server.js; sets PORT
start_server() {
  need_node
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

# start_speedyd [tls] ARGS... — speedyd serving ./site (examples/site) with POST /upload
# echoed and an access log in ./access.log; sets PORT (and certs for tls)
start_speedyd() {
  local listen=127.0.0.1:0 tls=()
  if [ "${1:-}" = tls ]; then
    shift; sh "$src/tests/io/gencerts.sh" "$certs" >/dev/null 2>&1 || fail "gencerts"
    listen=127.0.0.1:0,tls; tls=(--cert "$certs/server.pem" --key "$certs/server.key")
  fi
  mkdir -p site && cp -R "$src/examples/site/." site/ || fail "no examples/site"
  "$speedyd" --listen "$listen" "${tls[@]}" --workers 1 --docroot site --upload-path /upload \
    --access-log access.log --error-log speedyd.err --port-file speedyd.port "$@" \
    > speedyd.out 2>&1 &
  pids+=($!)
  for _ in $(seq 100); do
    PORT=$(sed -n 1p speedyd.port 2>/dev/null)
    [ -n "$PORT" ] && return 0
    sleep 0.05
  done
  cat speedyd.out speedyd.err 2>/dev/null; fail "speedyd did not start"
}
# logged REGEX — waits (up to 5 s) for a line of speedyd's access log to match
logged() {
  for _ in $(seq 100); do grep -qE -- "$1" access.log 2>/dev/null && return 0; sleep 0.05; done
  echo "--- access.log"; cat access.log 2>/dev/null; fail "access log lacks '$1'"
}
# same A B WHAT — files A and B are byte for byte the same
same() { cmp -s "$1" "$2" || fail "$3: $1 and $2 differ"; }

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
  grep -A2 "send RST_STREAM frame <length=8, flags=0x00, stream_id=3>" err | grep -q "(status_code=CANCEL)" ||
    fail "no RST_STREAM CANCEL of stream 3 in the trace" ;;
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
  get --cacert "$certs/ca.pem" -o answer --data-binary @body "https://localhost:$PORT/upload" || fail "exit $?"
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
http1_interim_and_no_body) # RFC 9110 15.2, RFC 9112 6.3: 1xx skipped, 304 ends at its head
  cat > h1.py <<'PY'
import socket, sys, time
answers = {b"/a": [b"HTTP/1.1 103 Early Hints\r\nLink: </x.css>; rel=preload\r\n\r\n",
                   b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello"],
           b"/b": [b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 102 Processing\r\n\r\n"
                   b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nworld"],
           b"/c": [b"HTTP/1.1 304 Not Modified\r\nETag: \"x\"\r\nContent-Length: 1234\r\n\r\n"],
           b"/d": [b"HTTP/1.1 204 No Content\r\nContent-Length: 10\r\n\r\n"],
           b"/e": [b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nend"]}
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(1)
print(s.getsockname()[1], flush=True)
c, _ = s.accept(); c.settimeout(10); buf = b""
while True:
    while b"\r\n\r\n" not in buf:
        data = c.recv(4096)
        if not data: sys.exit(0)
        buf += data
    head, buf = buf.split(b"\r\n\r\n", 1)
    for i, part in enumerate(answers[head.split(b" ")[1]]):
        if i: time.sleep(0.05)
        c.sendall(part)
PY
  python3 h1.py > h1.port 2> h1.err & pids+=($!)
  for _ in $(seq 100); do PORT=$(cat h1.port); [ -n "$PORT" ] && break; sleep 0.05; done
  get --http1 --http1-connections 1 --max-time 5 -o a -o b -o c -o d -o e \
    "http://localhost:$PORT/a" "http://localhost:$PORT/b" "http://localhost:$PORT/c" \
    "http://localhost:$PORT/d" "http://localhost:$PORT/e" || fail "exit $?"
  [ "$(cat a)" = hello ] || fail "a: '$(cat a)' (the 103 taken as the answer?)"
  [ "$(cat b)" = world ] || fail "b: '$(cat b)'"
  [ -f c ] && [ ! -s c ] || fail "c: the 304 has a body"
  [ -f d ] && [ ! -s d ] || fail "d: the 204 has a body"
  [ "$(cat e)" = end ] || fail "e: '$(cat e)' (the connection lost its place)" ;;
http1_retry_only_reused) # as curl: a request is sent again only when a kept-alive connection
  # closed before any byte of its answer (RFC 9110 9.2.2), never after a fresh one did
  cat > drop.py <<'PY'
import socket, sys, threading
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(8)
print(s.getsockname()[1], flush=True)
count = 0
def serve(c):
    global count
    c.settimeout(10); buf = b""; here = 0
    while True:
        while b"\r\n\r\n" not in buf:
            data = c.recv(4096)
            if not data: return c.close()
            buf += data
        head, buf = buf.split(b"\r\n\r\n", 1)
        length = [l for l in head.split(b"\r\n") if l.lower().startswith(b"content-length:")]
        if length: buf = buf[int(length[0].split(b":")[1]):]
        count += 1; here += 1
        sys.stderr.write("request %d %s\n" % (count, head.split(b" ")[1].decode())); sys.stderr.flush()
        if b"/drop" in head or b"/half" in head:
            if b"/half" in head: c.sendall(b"HTTP/1.1 200 OK\r\nX-A: 1\r\n")
            return c.close()
        if b"/keep-then-drop" in head and here > 1:
            return c.close()
        c.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
while True:
    threading.Thread(target=serve, args=(s.accept()[0],), daemon=True).start()
PY
  python3 drop.py > drop.port 2> drop.log & pids+=($!)
  for _ in $(seq 100); do PORT=$(cat drop.port); [ -n "$PORT" ] && break; sleep 0.05; done
  get --http1 --data x -o /dev/null "http://localhost:$PORT/drop"; rc=$?
  [ $rc = 1 ] || fail "a POST dropped on a fresh connection: exit $rc"
  get --http1 -o /dev/null "http://localhost:$PORT/half"; rc=$?
  [ $rc = 1 ] || fail "half an answer: exit $rc"
  [ "$(grep -c 'request' drop.log)" = 2 ] || fail "sent again: $(cat drop.log)"
  get --http1 --http1-connections 1 -o a -o b "http://localhost:$PORT/keep-then-drop" \
    "http://localhost:$PORT/keep-then-drop" || fail "a kept-alive connection closed: exit $?"
  [ "$(cat a)$(cat b)" = okok ] || fail "the retried request's answer" ;;
http1_tls)
  sh "$src/tests/io/gencerts.sh" "$certs"; start_server s --http1 --tls "$certs/server.pem" "$certs/server.key"
  get --http1 --cacert "$certs/ca.pem" -o x "https://localhost:$PORT/bytes/5000" || fail "exit $?"
  expect_file x 5000; expect_summary "http/1.1 negotiated by ALPN" ;;
failures_named) # with --fail a 404 is a failure, named; the other URL is still fetched
  start_server s; get --fail -o a -o b "http://localhost:$PORT/nope" "http://localhost:$PORT/bytes/5"; rc=$?
  [ $rc = 1 ] || fail "exit $rc"; expect_summary "speedy get: http://localhost:$PORT/nope: HTTP status 404 (--fail)"
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
  grep -qx "speedy get: unknown option '--bogus' (try 'speedy get --help')" err || fail "unknown option message: $(cat err)"
  "$speedy" get 2>err; [ $? = 2 ] || fail "no URL: exit not 2"
  "$speedy" get --help > help || fail "--help exit"
  # every option, and a default for each that takes a value or changes a default
  for o in --spdy --http1 --npn --http1-connections --priority --no-push --max-pushes --window \
           --session-window --request --header --data --data-binary --range --compressed \
           --output --remote-name --dir --output-dir --include --head --fail --verbose \
           --silent --insecure --cacert --resolve --connect-timeout --max-time --max-filesize \
           --help --version; do
    grep -q -- "$o\b" help || fail "--help does not list $o"
  done
  for o in -X -H -r -o -O -d -i -I -f -v -s -k -h -V; do
    grep -qE -- "^  $o, --" help || fail "--help does not list $o"
  done
  # every option's entry (its lines up to the next option or heading) says its default
  awk '/^  (-., )?--[a-z]/ || /^[A-Z]/ { if (entry != "" && entry !~ /default/) print entry; entry = "" }
       /^  (-., )?--[a-z]/ && !/--(help|version)/ { entry = $0; next }
       entry != "" { entry = entry " " $0 }
       END { if (entry != "" && entry !~ /default/) print entry }' help > nodefault
  [ -s nodefault ] && fail "options without a default in --help: $(cat nodefault)"
  true ;;
option_errors) # bad values in the one style: command, option, value, what is accepted, help
  expect_usage() { # EXPECTED-LINE ARGS...
    local want=$1; shift
    "$speedy" get "$@" http://127.0.0.1:1/ > out 2> err; local rc=$?
    [ $rc = 2 ] || fail "speedy get $*: exit $rc, expected 2"
    [ "$(cat err)" = "$want" ] || fail "speedy get $*: said '$(cat err)', expected '$want'"
  }
  hint="(try 'speedy get --help')"
  expect_usage "speedy get: bad --range 'x': expected A-B, A- or -N, or several joined by commas $hint" -r x
  expect_usage "speedy get: bad --range '9-3': expected A-B, A- or -N, or several joined by commas $hint" --range 9-3
  expect_usage "speedy get: bad --request 'GE T': expected a method name such as GET, PUT or DELETE $hint" -X 'GE T'
  expect_usage "speedy get: bad --spdy '4': expected 3.1, 3 or 2 $hint" --spdy=4
  expect_usage "speedy get: bad --priority '8': expected 0 to 7 $hint" --priority 8
  expect_usage "speedy get: bad --http1-connections '0': expected 1 to 16 $hint" --http1-connections 0
  expect_usage "speedy get: bad --max-pushes '-1': expected 0 to 1000 $hint" --max-pushes -1
  expect_usage "speedy get: bad --window '5': expected 65536 to 2147483647 $hint" --window 5
  expect_usage "speedy get: bad --session-window 'x': expected 65536 to 2147483647 $hint" --session-window x
  expect_usage "speedy get: bad --header 'nocolon': expected 'Name: value' $hint" -H nocolon
  expect_usage "speedy get: bad --data '@': expected TEXT, @FILE or @- $hint" --data @
  expect_usage "speedy get: bad --resolve 'a:b': expected HOST:PORT:ADDR $hint" --resolve a:b
  expect_usage "speedy get: bad --connect-timeout '0': expected 1 to 3600 (seconds) $hint" --connect-timeout 0
  expect_usage "speedy get: bad --max-time '1s': expected 1 to 86400 (seconds) $hint" --max-time 1s
  expect_usage "speedy get: bad --max-filesize '1X': expected BYTES, or with K, M or G $hint" --max-filesize 1X
  expect_usage "speedy get: bad --header 'a: b\\x0a.': expected 'Name: value' $hint" -H "$(printf 'a: b\n.')"
  expect_usage "speedy get: -I (HEAD) and --data (a body) exclude each other $hint" -I --data x
  "$speedy" get http://127.0.0.1:1/ -r 2> err; [ $? = 2 ] || fail "-r without a value: exit not 2"
  [ "$(cat err)" = "speedy get: option '-r' needs a value $hint" ] || fail "-r without a value said '$(cat err)'" ;;
head_http1|head_spdy) # -I: HEAD on the wire, the head on stdout (as curl -I), no body
  need curl; start_speedyd; opts=(); [ $case = head_http1 ] && opts=(--http1)
  get "${opts[@]}" -I "http://127.0.0.1:$PORT/index.html" > head || fail "exit $?"
  logged '"HEAD /index.html HTTP/1.1" 200'
  size=$(stat -c %s site/index.html)
  tr -d '\r' < head | grep -qx "content-length: $size" || fail "no content-length: $size in the head"
  [ "$(tail -c 4 head | od -An -c | tr -d ' ')" = '\r\n\r\n' ] || fail "the head does not end with an empty line"
  grep -q '<html' head && fail "-I wrote a body"
  expect_summary " 200 .* 0 B"
  # the same lines as curl -I, but for the status line's protocol and the date
  curl -sI "http://127.0.0.1:$PORT/index.html" | grep -v '^date:' | sed 1d > curl.head
  grep -v '^date:' head | sed 1d > ours.head; same curl.head ours.head "head lines"
  if [ $case = head_http1 ]; then
    [ "$(head -1 head)" = "$(printf 'HTTP/1.1 200 OK\r')" ] || fail "status line '$(head -1 head)'"
  else
    [ "$(head -1 head)" = "$(printf 'SPDY/3.1 200 OK\r')" ] || fail "status line '$(head -1 head)'"
  fi ;;
include_and_method) # -i: the head, then the body; -X: the method, on both protocols
  start_speedyd
  for p in --http1 --spdy=3.1 --spdy=2; do
    get $p -i "http://127.0.0.1:$PORT/index.html" > out || fail "$p: exit $?"
    head -c 17 out | grep -qE '^(HTTP/1.1|SPDY/3.1|SPDY/2) 200 OK' || fail "$p: starts '$(head -1 out)'"
    size=$(stat -c %s site/index.html)
    tail -c "$size" out > body; same body site/index.html "$p -i body"
    grep -q $'^\r$' out || fail "$p: no empty line after the head"
    get $p -s -X DELETE "http://127.0.0.1:$PORT/index.html" > /dev/null || fail "$p -X: exit $?"
    get $p -s -X OPTIONS -I "http://127.0.0.1:$PORT/index.html" > /dev/null || fail "$p -X -I: exit $?"
  done
  logged '"DELETE /index.html HTTP/1.1" 405 .* http/1.1'; logged '"DELETE /index.html HTTP/1.1" 405 .* spdy/3.1'
  logged '"DELETE /index.html HTTP/1.1" 405 .* spdy/2'; logged '"OPTIONS /index.html HTTP/1.1"' ;;
data_post) # --data as curl: TEXT, @FILE without CR/LF, joined with '&'; --data-binary kept
  need curl; start_speedyd
  printf 'a=1\r\nb=2\nc' > form; head -c 100000 /dev/urandom > blob
  # (plaintext SPDY/3 would need speedyd --plaintext-v3 3: version 3 is 3.1 there)
  for p in --http1 --spdy=3.1 --spdy=2; do
    u="http://127.0.0.1:$PORT/upload"
    get $p -s -o one --data 'x=1' --data @form "$u" || fail "$p: exit $?"
    curl -s -o one.curl --data 'x=1' --data @form "$u"; same one one.curl "$p --data"
    [ "$(cat one)" = 'x=1&a=1b=2c' ] || fail "$p: echoed '$(cat one)'"
    get $p -s -o two --data-binary @blob "$u" || fail "$p: exit $?"; same two blob "$p --data-binary"
    get $p -s -i --data-binary @form "$u" > three || fail "$p: exit $?"
    tr -d '\r' < three | grep -qx 'content-type: application/x-www-form-urlencoded' || fail "$p: content type"
    printf 'from stdin' | get $p -s -o four --data @- "$u" || fail "$p: exit $?"
    [ "$(cat four)" = 'from stdin' ] || fail "$p: --data @- echoed '$(cat four)'"
    get $p -s -X PUT --data x "$u" > /dev/null || fail "$p -X PUT: exit $?"
  done
  logged '"POST /upload HTTP/1.1" 200 .* spdy/2'; logged '"PUT /upload HTTP/1.1" 405 .* spdy/3.1'
  logged '"PUT /upload HTTP/1.1" 405 .* http/1.1' ;;
compressed) # --compressed: Accept-Encoding sent, gzip decoded; without it the bytes as sent
  start_speedyd; u="http://127.0.0.1:$PORT/index.html"
  for p in --http1 --spdy=3.1 --spdy=2; do
    get $p --compressed -i -o with "$u" || fail "$p: exit $?"
    tr -d '\r' < with | grep -qx 'content-encoding: gzip' || fail "$p: the response was not gzip"
    get $p --compressed -o body "$u" || fail "$p: exit $?"; same body site/index.html "$p decoded"
    get $p -o plain "$u" || fail "$p: exit $?"; same plain site/index.html "$p identity"
    get $p -H 'Accept-Encoding: gzip' -o raw "$u" || fail "$p: exit $?"
    gzip -dc < raw > unzipped || fail "$p: without --compressed the body was not left as gzip"
    same unzipped site/index.html "$p raw gzip"
  done ;;
compressed_deflate) # deflate with and without the zlib wrapper; a gzip body cut short fails
  start_server s
  for path in deflate deflate-raw; do
    get --compressed -o $path "http://localhost:$PORT/$path" || fail "$path: exit $?"
    expect_file $path 100000
  done
  get --compressed -o cut "http://localhost:$PORT/gzip-cut"; rc=$?
  [ $rc = 1 ] || fail "gzip-cut: exit $rc"; expect_summary "gzip body ended before its compressed stream did" ;;
range) # -r: Range sent, the part written, as curl
  need curl; start_speedyd; u="http://127.0.0.1:$PORT/index.html"
  for p in --http1 --spdy=3.1; do
    for r in 0-9 100- -25 5-5; do
      get $p -s -r $r -o part "$u" || fail "$p -r $r: exit $?"
      curl -s -r $r -o part.curl "$u"; same part part.curl "$p -r $r"
    done
    get $p -s -i -r 0-9 "$u" | tr -d '\r' > head
    grep -q ' 206 Partial Content$' head || fail "$p: not 206: $(head -1 head)"
    grep -qx "content-range: bytes 0-9/$(stat -c %s site/index.html)" head || fail "$p: content-range"
  done
  head -c 10 site/index.html > first10; get -r 0-9 -o part "$u"; same part first10 "-r 0-9" ;;
fail_as_curl) # 4xx: exit 0 and the body written, as curl; --fail: exit 1, one line, nothing written
  need curl; start_speedyd; u="http://127.0.0.1:$PORT/nope"
  for p in --http1 --spdy=3.1; do
    get $p -o body "$u"; rc=$?; curl -s -o body.curl "$u"; crc=$?
    [ $rc = 0 ] && [ $crc = 0 ] || fail "$p: without --fail exit $rc (curl $crc), expected 0"
    same body body.curl "$p 404 body"; expect_summary "ok .*404"
    rm -f failed; get $p -s --fail -o failed "$u" "http://127.0.0.1:$PORT/index.html" > /dev/null; rc=$?
    [ $rc = 1 ] || fail "$p --fail: exit $rc, expected 1"
    [ "$(cat err)" = "speedy get: $u: HTTP status 404 (--fail)" ] || fail "$p --fail said: $(cat err)"
    [ -e failed ] && fail "$p --fail: the 404's body was written"
    get $p -s -f -i "$u" > head; [ $? = 1 ] || fail "$p -fi: exit not 1"
    head -1 head | grep -q ' 404 ' || fail "$p -fi: no head written (curl -fi writes it)"
    grep -q 'Not Found</h1>' head && fail "$p -fi: the body was written"
  done
  # the dropped body is read: the keep-alive connection serves the next URL
  get --http1 --http1-connections 1 --fail "$u" "http://127.0.0.1:$PORT/index.html" > /dev/null
  expect_summary "1 connection$"
  get --http1 "$u" "http://127.0.0.1:$PORT/index.html" > /dev/null; expect_summary "2 connections$" ;;
progress_meter) # on a terminal only: shown on stderr, not with -s, not when stderr is a file
  need script; start_speedyd; head -c 20000000 /dev/urandom > site/big.bin
  u="http://127.0.0.1:$PORT/big.bin"
  script -qec "$speedy get -o /dev/null $u" /dev/null > tty.out 2>&1 || fail "script: exit $?"
  grep -qE $'\r''0/1 URLs  .* B/s  0:00:0' tty.out || { cat -A tty.out | head; fail "no progress meter on a terminal"; }
  grep -q 'ok .*200' tty.out || fail "no summary on the terminal"
  script -qec "$speedy get -s -o /dev/null $u" /dev/null > tty.out 2>&1 || fail "script -s: exit $?"
  [ -s tty.out ] && { cat -A tty.out | head; fail "-s: something was written: $(cat tty.out)"; }
  script -qec "$speedy get -o /dev/null $u 2> err.file" /dev/null > tty.out 2>&1
  grep -q URLs err.file && fail "a meter in a file"
  grep -q 'ok .*200' err.file || fail "no summary in the file"
  script -qec "$speedy get $u > /dev/null" /dev/null > tty.out 2>&1
  grep -q URLs tty.out || fail "no meter when the body goes to a file via stdout"
  script -qec "$speedy get http://127.0.0.1:$PORT/index.html" /dev/null > tty.out 2>&1
  grep -q URLs tty.out && fail "a meter over a body on the terminal"
  true ;;
dir_created) # -d DIR: made if missing, parents too; a file in the way is a clear failure
  start_speedyd
  get -d new/sub "http://127.0.0.1:$PORT/index.html" "http://127.0.0.1:$PORT/css/site.css" || fail "exit $?"
  same new/sub/index.html site/index.html "-d new/sub"; same new/sub/site.css site/css/site.css "-d site.css"
  get --output-dir new/sub/again "http://127.0.0.1:$PORT/index.html" || fail "--output-dir: exit $?"
  [ -f new/sub/again/index.html ] || fail "--output-dir did not save"
  touch afile; get -d afile/x "http://127.0.0.1:$PORT/index.html"; rc=$?
  [ $rc = 1 ] || fail "-d over a file: exit $rc"
  [ "$(cat err)" = "speedy get: cannot create --dir afile/x: Not a directory" ] || fail "said: $(cat err)" ;;
verbose_spdy) # -v: timestamps, frame names, flags and settings by name, fields decoded, no repeats
  start_speedyd; get -v -o /dev/null "http://127.0.0.1:$PORT/index.html" || fail "exit $?"
  bad=$(grep -vE '^(\[ *[0-9]+\.[0-9]{3}\] |          |http://|  ok )' err) && fail "lines without a timestamp: $bad"
  grep -q '^\[  0\.[0-9]\{3\}\] send SETTINGS frame <length=20, flags=0x00, stream_id=0>$' err || fail "no SETTINGS sent"
  grep -qx '          \[SETTINGS_MAX_CONCURRENT_STREAMS(0x04):32\]' err || fail "our MAX_CONCURRENT_STREAMS not named"
  grep -qx '          \[SETTINGS_INITIAL_WINDOW_SIZE(0x07):2097152\]' err || fail "our INITIAL_WINDOW_SIZE not named"
  grep -qx '          \[SETTINGS_MAX_CONCURRENT_STREAMS(0x04):100\]' err || fail "speedyd's settings not shown"
  grep -A1 'send SYN_STREAM frame <length=[0-9]*, flags=0x01, stream_id=1>' err | grep -qx '          ; FIN' || fail "flags not named"
  grep -qx '          (associated_stream_id=0, priority=3)' err || fail "SYN_STREAM fields"
  grep -qx '          :path: /index.html' err || fail "request fields not shown"
  grep -q 'recv SYN_REPLY frame <length=[0-9]*, flags=0x00, stream_id=1>' err || fail "no SYN_REPLY"
  grep -qx '          :status: 200' err || fail "response fields not decoded" # as libspeedy hands them over
  grep -A1 'recv DATA frame .*, stream_id=1>' err | grep -qx '          ; FIN' || fail "DATA FIN"
  grep -qx '          (last_good_stream_id=0, status_code=OK(0))' err || fail "GOAWAY fields"
  grep -qE 'stream.*stream' err && fail "a field repeated: $(grep -E 'stream.*stream' err)"
  grep -q 'connection 1: spdy/3.1 negotiated by plaintext' err || fail "negotiation not shown"
  true ;;
verbose_http1) # -v over HTTP/1.1: the request line and headers, the status line and headers
  start_speedyd; get -v --http1 -o /dev/null "http://127.0.0.1:$PORT/index.html" || fail "exit $?"
  bad=$(grep -vE '^(\[ *[0-9]+\.[0-9]{3}\] |          |http://|  ok )' err) && fail "lines without a timestamp: $bad"
  grep -A2 '\] send request (connection 1)$' err | grep -qx '          GET /index.html HTTP/1.1' || fail "no request line"
  grep -qx "          Host: 127.0.0.1:$PORT" err || fail "no Host"
  grep -A1 '\] recv response head (connection 1)$' err | grep -qx '          HTTP/1.1 200 OK' || fail "no status line"
  grep -qx "          content-length: $(stat -c %s site/index.html)" err || fail "no response headers"
  grep -q "recv end of response (connection 1): $(stat -c %s site/index.html) body bytes" err || fail "no end"
  true ;;
npn) # --npn: SPDY offered by NPN only (TLS 1.2), as speedy bench --npn
  start_speedyd tls
  get --npn --cacert "$certs/ca.pem" -o page "https://localhost:$PORT/index.html" || fail "exit $?"
  same page site/index.html "--npn body"; expect_summary "spdy/3.1 negotiated by NPN over TLSv1.2"
  get --cacert "$certs/ca.pem" -o page "https://localhost:$PORT/index.html" || fail "exit $?"
  expect_summary "h2 negotiated by ALPN over TLSv1.3" # ALPN offers h2 first, and speedyd too
  get --proto spdy/3.1 --cacert "$certs/ca.pem" -o page "https://localhost:$PORT/index.html" || fail "exit $?"
  expect_summary "spdy/3.1 negotiated by ALPN over TLSv1.3" ;;
no_protocol_suggests_npn) # TLS chose no protocol and the server speaks only SPDY: say so, suggest --npn
  tls_server --no-alpn; get --cacert "$certs/ca.pem" -o x "https://localhost:$PORT/bytes/10"; rc=$?
  [ $rc = 1 ] || fail "exit $rc, expected 1"
  expect_summary "the server chose no protocol by ALPN or NPN; it may speak SPDY only over NPN: try --npn" ;;
man_page) # docs/speedy-get.1 documents every option --help lists, and formats cleanly
  "$speedy" get --help > help || fail "--help exit"
  man=$src/docs/speedy-get.1; [ -f "$man" ] || fail "no $man"
  sed 's/\\-/-/g' "$man" > man.txt
  for o in $(grep -oE -- '--[a-z0-9][a-z0-9-]+' help | sort -u); do
    grep -qE -- "$o([^a-z0-9-]|$)" man.txt || fail "the man page lacks $o"
  done
  if command -v groff > /dev/null; then
    groff -man -Tutf8 -ww -z "$man" 2> groff.err; [ -s groff.err ] && fail "groff: $(cat groff.err)"
  fi
  true ;;
*) echo "unknown case $case"; exit 2 ;;
esac
echo "PASS $case"
