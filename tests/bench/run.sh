#!/bin/bash
# run.sh SPEEDY SPEEDYD WORK CASE — one integration test of `speedy bench` against a real
# speedyd (port 0 + --port-file) or a lying python3 server, on loopback. Every process
# started here is killed on exit; every wait is bounded. Exit 0 pass, 1 fail, 77 skip.
set -u
SPEEDY=$1
SPEEDYD=$2
WORK=$3
CASE=$4
SRC=${SPEEDY_SOURCE_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
source "$SRC/tests/checks.sh"
FAILS=0
PIDS=()
rm -rf "$WORK"
mkdir -p "$WORK/www"
cleanup() {
  for pid in "${PIDS[@]}"; do kill -KILL "$pid" 2>/dev/null; done
  wait 2>/dev/null
}
trap cleanup EXIT
trap 'echo "interrupted"; exit 1' INT TERM

skip() { echo "SKIP: $*"; exit 77; }
command -v python3 >/dev/null 2>&1 || skip "python3 is not installed"

# jq-like: json FILE EXPR (python expression over r)
json() { python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"; }

wait_file() {
  for _ in $(seq 1 100); do [ -s "$1" ] && return 0; sleep 0.1; done
  return 1
}

# start_speedyd [tls] EXTRA...: sets PORT
start_speedyd() {
  local listen=127.0.0.1:0
  local extra=()
  if [ "${1:-}" == tls ]; then
    shift
    sh "$SRC/tests/io/gencerts.sh" "$WORK/certs" || { echo "FAIL: no certificates"; exit 1; }
    listen=127.0.0.1:0,tls
    extra=(--cert "$WORK/certs/server.pem" --key "$WORK/certs/server.key")
  fi
  "$SPEEDYD" --listen "$listen" "${extra[@]}" --docroot "$WORK/www" --port-file "$WORK/ports" \
    --access-log "$WORK/access.log" --error-log "$WORK/error.log" "$@" \
    >"$WORK/speedyd.stdout" 2>"$WORK/speedyd.stderr" &
  PIDS+=($!)
  wait_file "$WORK/ports" || { echo "FAIL: speedyd did not start"; cat "$WORK/speedyd.stderr"; exit 1; }
  PORT=$(sed -n 1p "$WORK/ports")
}

start_liar() { # MODE [tls]
  local tls=()
  if [ "${2:-}" == tls ]; then
    sh "$SRC/tests/io/gencerts.sh" "$WORK/certs" || { echo "FAIL: no certificates"; exit 1; }
    tls=("$WORK/certs/server.pem" "$WORK/certs/server.key")
  fi
  python3 "$SRC/tests/bench/liar.py" "$1" "$WORK/liar.port" "${tls[@]}" >"$WORK/liar.log" 2>&1 &
  PIDS+=($!)
  wait_file "$WORK/liar.port" || { echo "FAIL: liar.py did not start"; cat "$WORK/liar.log"; exit 1; }
  PORT=$(cat "$WORK/liar.port")
}

# bench ARGS...: runs speedy bench --json (bounded), output in $WORK/out.json, status in RC
bench() {
  timeout 60 "$SPEEDY" bench --json -q "$@" >"$WORK/out.json" 2>"$WORK/bench.stderr"
  RC=$?
  python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$WORK/out.json" 2>/dev/null
  check "--json output parses" "$?" 0
}

requests_logged() { [ -f "$WORK/access.log" ] && wc -l <"$WORK/access.log" | tr -d ' ' || echo 0; }

# A count check from both ends: the bench's JSON and the server's access log.
exact_count() { # N URL ARGS...
  local n=$1 url=$2
  shift 2
  bench -n "$n" "$@" "$url"
  check "exit status" "$RC" 0
  check "requests" "$(json "$WORK/out.json" 'r["requests"]')" "$n"
  check "ok" "$(json "$WORK/out.json" 'r["ok"]')" "$n"
  check "errors" "$(json "$WORK/out.json" 'r["errors_total"]')" 0
  check "2xx responses" "$(json "$WORK/out.json" 'r["status_classes"]["2xx"]')" "$n"
  for _ in $(seq 1 20); do [ "$(requests_logged)" -ge "$n" ] && break; sleep 0.1; done
  check "requests in the server's access log" "$(requests_logged)" "$n"
}

head -c 1024 /dev/urandom >"$WORK/www/1k.bin"
head -c 102400 /dev/urandom >"$WORK/www/100k.bin"

case $CASE in
spdy31_plain_count_exact)
  start_speedyd
  exact_count 537 "http://127.0.0.1:$PORT/1k.bin" -c 3 -m 7
  check "protocol" "$(json "$WORK/out.json" 'r["protocol"]')" spdy/3.1
  # our request headers at zlib level 0 (stored blocks) and 9: the server reads both
  for level in 0 9; do
    bench -n 50 -c 2 -m 5 --header-compression $level "http://127.0.0.1:$PORT/1k.bin"
    check "level $level: exit status" "$RC" 0
    check "level $level: ok" "$(json "$WORK/out.json" 'r["ok"]')" 50
  done
  ;;
spdy3_and_spdy2_plain)
  # a plaintext version-3 client is SPDY/3.1 to speedyd unless told otherwise
  start_speedyd --plaintext-v3 3
  exact_count 100 "http://127.0.0.1:$PORT/100k.bin" --spdy=3 -c 2 -m 5
  check "protocol" "$(json "$WORK/out.json" 'r["protocol"]')" spdy/3
  bench -n 100 --spdy=2 -c 2 -m 5 "http://127.0.0.1:$PORT/100k.bin"
  check "SPDY/2 exit status" "$RC" 0
  check "SPDY/2 protocol" "$(json "$WORK/out.json" 'r["protocol"]')" spdy/2
  check "SPDY/2 ok" "$(json "$WORK/out.json" 'r["ok"]')" 100
  ;;
http1_plain_count_exact)
  start_speedyd
  exact_count 301 "http://127.0.0.1:$PORT/1k.bin" --http1 -c 4 -m 6
  check "protocol" "$(json "$WORK/out.json" 'r["protocol"]')" http/1.1
  ;;
http1_pipelined_requests_resent_after_connection_close)
  # speedyd ends an HTTP/1.1 connection after 10,000 requests: what was pipelined behind
  # the last answer must go again on a new connection, not count as an error
  start_speedyd
  bench -n 20005 -c 1 -m 4 --http1 "http://127.0.0.1:$PORT/1k.bin"
  check "exit status" "$RC" 0
  check "ok" "$(json "$WORK/out.json" 'r["ok"]')" 20005
  check "reconnected" "$(json "$WORK/out.json" 'r["reconnects"] >= 2')" True
  ;;
goaway_refused_streams_are_retried | reset_refused_streams_are_retried)
  # RFC 9113 8.7: streams above a GOAWAY's last stream id, and streams reset with
  # REFUSED_STREAM, were not processed; they go again (on a new connection after GOAWAY)
  # and every request ends with a 200. The server is python3-h2 (tests/bench/refuser.py).
  [ -x /usr/bin/python3 ] && /usr/bin/python3 -c 'import h2' 2>/dev/null ||
    skip "python3-h2 is not installed (for /usr/bin/python3)"
  mode=${CASE%%_*}
  mode=${mode/reset/refuse}
  /usr/bin/python3 "$SRC/tests/bench/refuser.py" "$mode" "$WORK/refuser.port" \
    "$WORK/answered" >"$WORK/refuser.stderr" 2>&1 &
  PIDS+=($!)
  wait_file "$WORK/refuser.port" || { echo "FAIL: refuser.py did not start"; cat "$WORK/refuser.stderr"; exit 1; }
  PORT=$(cat "$WORK/refuser.port")
  bench -n 60 -c 1 -m 10 --proto h2c "http://127.0.0.1:$PORT/"
  check "exit status" "$RC" 0
  check "ok" "$(json "$WORK/out.json" 'r["ok"]')" 60
  check "errors" "$(json "$WORK/out.json" 'r["errors_total"]')" 0
  check "refused requests were sent again" "$(json "$WORK/out.json" 'r["retried"] >= 9')" True
  check "the server answered each request once" "$(wc -l <"$WORK/answered" | tr -d ' ')" 60
  if [ "$mode" = goaway ]; then
    check "a new connection after GOAWAY" "$(json "$WORK/out.json" 'r["reconnects"]')" 1
  fi
  ;;
spdy_tls_alpn)
  start_speedyd tls
  exact_count 200 "https://localhost:$PORT/1k.bin" --cacert "$WORK/certs/ca.pem" -c 2 -m 10 \
    --proto spdy/3.1
  check "negotiation" "$(json "$WORK/out.json" 'r["negotiation"]')" ALPN
  check "protocol" "$(json "$WORK/out.json" 'r["protocol"]')" spdy/3.1
  # Without --proto, ALPN offers h2 first and speedyd takes it.
  : >"$WORK/access.log" # speedyd appends (O_APPEND): the log now counts this run
  exact_count 200 "https://localhost:$PORT/1k.bin" --cacert "$WORK/certs/ca.pem" -c 2 -m 10
  check "default protocol" "$(json "$WORK/out.json" 'r["protocol"]')" h2
  ;;
spdy_tls_npn)
  start_speedyd tls
  exact_count 100 "https://localhost:$PORT/1k.bin" --cacert "$WORK/certs/ca.pem" --npn --spdy=3
  check "negotiation" "$(json "$WORK/out.json" 'r["negotiation"]')" NPN
  check "protocol" "$(json "$WORK/out.json" 'r["protocol"]')" spdy/3
  ;;
http1_tls)
  start_speedyd tls
  exact_count 150 "https://example.test:$PORT/1k.bin" -k --resolve "example.test:$PORT:127.0.0.1" \
    --http1 -c 3 -m 2 -t 3
  check "protocol" "$(json "$WORK/out.json" 'r["protocol"]')" http/1.1
  ;;
tls_unverified_fails)
  start_speedyd tls
  bench -n 10 "https://localhost:$PORT/1k.bin"
  check "exit status" "$RC" 1
  check "tls errors" "$(json "$WORK/out.json" 'r["errors"]["tls"]')" 10
  ;;
duration_and_warmup)
  start_speedyd
  bench -D 1 --warmup 0.5 -c 2 -m 4 -t 2 "http://127.0.0.1:$PORT/1k.bin"
  check "exit status" "$RC" 0
  check "measured window 1 s" "$(json "$WORK/out.json" 'r["duration_s"]')" 1.0
  # closed loop with -D: the rate counts answers completed inside the window (h2load's
  # count), whether sent in the warm-up or not
  check "rate: answers completed in the window over 1 s" \
    "$(json "$WORK/out.json" 'r["window_ok"] > 0 and abs(r["requests_per_s"] - r["window_ok"]) < 0.01')" True
  check "warm-up requests sent and not measured" "$(json "$WORK/out.json" 'r["warmup_requests"] > 0')" True
  check "errors" "$(json "$WORK/out.json" 'r["errors_total"]')" 0
  ;;
open_loop_rate)
  start_speedyd
  bench --rate 200 -n 300 -c 2 -m 10 "http://127.0.0.1:$PORT/1k.bin"
  check "exit status" "$RC" 0
  check "ok" "$(json "$WORK/out.json" 'r["ok"]')" 300
  check "send rate within 10% of 200/s" "$(json "$WORK/out.json" '180 <= r["send_rate"] <= 220')" True
  check "run took about 1.5 s" "$(json "$WORK/out.json" '1.3 <= r["duration_s"] <= 2.5')" True
  ;;
open_loop_http1)
  start_speedyd
  bench --rate 100 -D 1 -c 1 -m 4 --http1 "http://127.0.0.1:$PORT/1k.bin"
  check "exit status" "$RC" 0
  check "about 100 requests" "$(json "$WORK/out.json" '90 <= r["ok"] <= 110')" True
  ;;
missing_file_is_a_status_error)
  start_speedyd
  bench -n 20 -c 2 "http://127.0.0.1:$PORT/nothing-here"
  check "exit status" "$RC" 1
  check "status errors" "$(json "$WORK/out.json" 'r["errors"]["status"]')" 20
  check "4xx responses" "$(json "$WORK/out.json" 'r["status_classes"]["4xx"]')" 20
  check "no 2xx responses" "$(json "$WORK/out.json" 'r["status_classes"]["2xx"]')" 0
  # The summary names the class, not a count that reads as a status code ("status 20").
  timeout 60 "$SPEEDY" bench -q -n 20 -c 2 "http://127.0.0.1:$PORT/nothing-here" >"$WORK/out.txt"
  check "the errors line names the status class" "$(grep '^errors:' "$WORK/out.txt")" \
    "errors:    HTTP 4xx responses: 20"
  ;;
progress_shows_total)
  # On a terminal, progress against -n shows the total and a percentage (a pty from python3).
  start_speedyd
  TTY_OUT=$WORK/tty.txt timeout 60 python3 -c 'import os, pty, sys
out = bytearray()
def read(fd):
    data = os.read(fd, 4096)
    out.extend(data)
    return data
pty.spawn(sys.argv[1:], read)
open(os.environ["TTY_OUT"], "wb").write(out)' \
    "$SPEEDY" bench -n 300 --rate 150 "http://127.0.0.1:$PORT/1k.bin" </dev/null >/dev/null
  tr '\r' '\n' <"$WORK/tty.txt" >"$WORK/tty.lines"
  check "the run ended with its summary" "$(grep -c '^requests:  300 ok, 0 failed' "$WORK/tty.lines")" 1
  check "a progress line with the total and a percentage" \
    "$(grep -cE '^.*speedy bench: [0-9]+ of 300 requests done \([0-9]+%\)' "$WORK/tty.lines" |
      awk '{print ($1 >= 1)}')" 1
  ;;
connection_refused)
  start_liar size
  kill -KILL "${PIDS[0]}"
  wait "${PIDS[0]}" 2>/dev/null
  bench -n 10 -c 2 --http1 "http://127.0.0.1:$PORT/x"
  check "exit status" "$RC" 1
  check "connect errors" "$(json "$WORK/out.json" 'r["errors"]["connect"]')" 10
  ;;
size_change_caught)
  start_liar size
  bench -n 50 --http1 "http://127.0.0.1:$PORT/x"
  check "exit status" "$RC" 1
  check "size errors" "$(json "$WORK/out.json" 'r["errors"]["size"]')" 25
  ;;
content_change_caught)
  start_liar content
  bench -n 50 --http1 --verify-every 1 "http://127.0.0.1:$PORT/x"
  check "exit status" "$RC" 1
  check "content errors" "$(json "$WORK/out.json" 'r["errors"]["content"]')" 25
  ;;
interim_responses_skipped) # RFC 9110 15.2: a 1xx before each answer, pipelined
  start_liar interim
  bench -n 100 -c 1 -m 4 --http1 "http://127.0.0.1:$PORT/x"
  check "exit status" "$RC" 0
  check "ok" "$(json "$WORK/out.json" 'r["ok"]')" 100
  check "errors" "$(json "$WORK/out.json" 'r["errors_total"]')" 0
  ;;
close_delimited_bodies) # RFC 9112 6.3: no Content-Length, the body ends with the connection
  start_liar eof
  # 40 answers, 40 connections: more than the reconnects bench allows for GOAWAY alone
  bench -n 40 -c 1 -m 4 --http1 "http://127.0.0.1:$PORT/x"
  check "exit status" "$RC" 0
  check "ok" "$(json "$WORK/out.json" 'r["ok"]')" 40
  check "errors" "$(json "$WORK/out.json" 'r["errors_total"]')" 0
  check "reconnects" "$(json "$WORK/out.json" 'r["reconnects"]')" 39
  ;;
close_delimited_bodies_tls) # the end of a close-delimited body over TLS is close_notify
  start_liar eof tls
  bench -n 10 -c 1 --http1 --cacert "$WORK/certs/ca.pem" "https://localhost:$PORT/x"
  check "exit status" "$RC" 0
  check "ok" "$(json "$WORK/out.json" 'r["ok"]')" 10
  kill "${PIDS[-1]}"
  rm -f "$WORK/liar.port"
  start_liar eof-cut tls # a bare FIN may be an attacker cutting the body short
  bench -n 3 -c 1 --http1 --cacert "$WORK/certs/ca.pem" "https://localhost:$PORT/x"
  check "exit status (cut)" "$RC" 1
  check "ok (cut)" "$(json "$WORK/out.json" 'r["ok"]')" 0
  check "closed errors (cut)" "$(json "$WORK/out.json" 'r["errors"]["closed"]')" 3
  ;;
short_body_caught)
  start_liar short
  bench -n 5 --http1 "http://127.0.0.1:$PORT/x"
  check "exit status" "$RC" 1
  check "closed mid-body errors" "$(json "$WORK/out.json" 'r["errors"]["closed"]')" 5
  ;;
hold_writes_ready_file)
  start_speedyd
  timeout 30 "$SPEEDY" bench -q -n 20 -c 20 --hold 2 --ready-file "$WORK/ready" \
    "http://127.0.0.1:$PORT/1k.bin" >"$WORK/out.txt" 2>&1 &
  BENCH_PID=$!
  PIDS+=($BENCH_PID)
  wait_file "$WORK/ready"
  check "ready file written while holding" "$(cat "$WORK/ready" 2>/dev/null)" ready
  check "still running while holding" "$(kill -0 $BENCH_PID 2>/dev/null && echo yes)" yes
  wait $BENCH_PID
  check "exit status after the hold" "$?" 0
  ;;
small_reads) # --read-size: frames and TLS records cut across 1 KiB reads, every body hashed
  start_speedyd tls
  exact_count 60 "https://localhost:$PORT/100k.bin" --cacert "$WORK/certs/ca.pem" -c 2 -m 10 \
    --read-size 1024 --verify-every 1
  check "protocol" "$(json "$WORK/out.json" 'r["protocol"]')" h2
  : >"$WORK/access.log"
  exact_count 60 "https://localhost:$PORT/100k.bin" --cacert "$WORK/certs/ca.pem" -c 2 -m 10 \
    --read-size 1024 --verify-every 1 --proto spdy/3.1
  ;;
usage_errors)
  for args in "" "-n 5 -D 1 http://x/" "--spdy=4 http://x/" "--http1 --spdy=3 http://x/" \
    "-t 4 -c 2 http://x/" "ftp://x/" "http://a/ http://b/" "-m 0 http://x/" "--bogus http://x/" \
    "--rate -5 http://x/" "--header-compression 10 http://x/" "--header-compression z http://x/"; do
    # shellcheck disable=SC2086
    timeout 10 "$SPEEDY" bench $args >/dev/null 2>"$WORK/usage.err"
    check "usage error exits 2: '$args'" "$?" 2
    check "one line: '$args'" "$(wc -l <"$WORK/usage.err" | tr -d ' ')" 1
  done
  # bad values in the one style of every program: option, value, what is accepted
  usage_line() { timeout 10 "$SPEEDY" bench "$@" 2>&1 >/dev/null; }
  check "a bad -c" "$(usage_line -c 0 http://x/)" \
    "speedy bench: bad --connections '0': expected 1 to 100000 (try 'speedy bench --help')"
  check "a bad --spdy" "$(usage_line --spdy=4 http://x/)" \
    "speedy bench: bad --spdy '4': expected 3.1, 3 or 2 (try 'speedy bench --help')"
  check "a bad --rate" "$(usage_line --rate -5 http://x/)" \
    "speedy bench: bad --rate '-5': expected requests per second, 0.001 to 100000000 (try 'speedy bench --help')"
  check "an unknown option" "$(usage_line --bogus http://x/)" \
    "speedy bench: unknown option '--bogus' (try 'speedy bench --help')"
  check "a bad --read-size" "$(usage_line --read-size 100 http://x/)" \
    "speedy bench: bad --read-size '100': expected bytes, 1024 to 262144 (try 'speedy bench --help')"
  check "a missing value" "$(usage_line http://x/ -n)" \
    "speedy bench: option '-n' needs a value (try 'speedy bench --help')"
  timeout 10 "$SPEEDY" bench --help >"$WORK/help.txt"
  check "--help exits 0" "$?" 0
  check "--help lists --rate" "$(grep -c -- '--rate R' "$WORK/help.txt")" 1
  ;;
*)
  echo "unknown case $CASE"
  exit 1
  ;;
esac

for f in "$WORK"/*.stderr; do
  if [ -f "$f" ] && grep -q -E 'ERROR: (Address|Leak)Sanitizer|runtime error:' "$f"; then
    echo "FAIL: sanitizer report in $f"
    head -40 "$f"
    FAILS=$((FAILS + 1))
  fi
done
if [ "$FAILS" -ne 0 ]; then
  echo "$FAILS check(s) failed"
  cat "$WORK/bench.stderr" 2>/dev/null | head -20
  exit 1
fi
echo "all checks passed"
