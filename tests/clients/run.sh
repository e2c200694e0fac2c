#!/bin/bash
# run.sh SPEEDY SPEEDYD WORK CASE — how the client commands (speedy get, bench, load) end
# when the server is not what the URL says, on loopback:
#
#   <cmd>_no_protocol_closes  a TLS 1.3 server that chooses no protocol by ALPN or NPN and
#                             closes at once (no_protocol_server.py): the command is not
#                             killed by SIGPIPE (status 141), exits non-zero, and says why
#                             in one line on stderr, with what to try ("try --npn")
#   <cmd>_plaintext_to_tls    a plaintext URL (or no --tls) aimed at speedyd's TLS port:
#                             the command fails within 2 s with "the server answered with
#                             TLS: use https:// (or --tls)" instead of hanging 10 s
#
# Every process started here is killed on exit; every wait is bounded. Exit 0 pass, 1 fail,
# 77 skip (no python3 with ssl, or no openssl for the certificates).
set -u
SPEEDY=$1
SPEEDYD=$2
WORK=$3
CASE=$4
SRC=${SPEEDY_SOURCE_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
source "$SRC/tests/checks.sh"
HERE=$SRC/tests/clients
PLAN=$SRC/tests/load/plan.json
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
PYTHON=$(command -v python3) || skip "python3 is not installed"
"$PYTHON" -c 'import ssl; assert ssl.HAS_TLSv1_3' 2>/dev/null || skip "python3 has no TLS 1.3"
command -v openssl >/dev/null 2>&1 || skip "openssl is not installed (certificates)"

wait_file() {
  for _ in $(seq 1 100); do [ -s "$1" ] && return 0; sleep 0.1; done
  return 1
}

certs() {
  sh "$SRC/tests/io/gencerts.sh" "$WORK/certs" >/dev/null 2>&1 || {
    echo "FAIL: could not make certificates"
    exit 1
  }
}

start_no_protocol_server() {
  certs
  "$PYTHON" "$HERE/no_protocol_server.py" "$WORK/certs/server.pem" "$WORK/certs/server.key" \
    "$WORK/port" >"$WORK/server.log" 2>&1 &
  PIDS+=($!)
  wait_file "$WORK/port" || { echo "FAIL: no_protocol_server.py did not start"; cat "$WORK/server.log"; exit 1; }
  PORT=$(cat "$WORK/port")
}

start_speedyd_tls() {
  certs
  echo hello >"$WORK/www/index.html"
  "$SPEEDYD" --listen 127.0.0.1:0,tls --cert "$WORK/certs/server.pem" --key "$WORK/certs/server.key" \
    --docroot "$WORK/www" --port-file "$WORK/port" --workers 1 --error-log "$WORK/speedyd.log" \
    >"$WORK/speedyd.stdout" 2>"$WORK/speedyd.stderr" &
  PIDS+=($!)
  wait_file "$WORK/port" || { echo "FAIL: speedyd did not start"; cat "$WORK/speedyd.stderr"; exit 1; }
  PORT=$(cat "$WORK/port")
}

# run NAME ARGS...: speedy ARGS (bounded by 30 s), stderr in $WORK/NAME.stderr; sets RC and
# MS (how long it took).
run() {
  local name=$1
  shift
  local t0
  t0=$(date +%s%N)
  timeout 30 "$SPEEDY" "$@" >"$WORK/$name.stdout" 2>"$WORK/$name.stderr"
  RC=$?
  MS=$((($(date +%s%N) - t0) / 1000000))
  echo "  speedy $* -> exit $RC in $MS ms; stderr:"
  sed 's/^/    /' "$WORK/$name.stderr"
}

# ended_in_one_line NAME COMMAND: not killed by a signal, exit 1, one line on stderr that
# names the command.
ended_in_one_line() {
  check "$2: not killed by SIGPIPE (141)" "$([ "$RC" -ne 141 ] && echo yes)" yes
  check "$2: exit 1" "$RC" 1
  check "$2: one line on stderr" "$(wc -l <"$WORK/$1.stderr" | tr -d ' ')" 1
  check_grep_fixed "$2: the line names the command" "speedy $2: " "$WORK/$1.stderr"
}

TLS_LINE="the server answered with TLS: use https:// (or --tls)"
NPN_LINE="the server chose no protocol by ALPN or NPN; it may speak SPDY only over NPN: try --npn"

case $CASE in
get_no_protocol_closes)
  start_no_protocol_server
  # no ALPN answer: HTTP/1.1 by default, written to a closed connection
  run get get -s -k -o /dev/null "https://127.0.0.1:$PORT/"
  ended_in_one_line get get
  check_grep_fixed "get: says what to try" "$NPN_LINE" "$WORK/get.stderr"
  ;;
bench_no_protocol_closes)
  start_no_protocol_server
  run bench bench -k -n 5 "https://127.0.0.1:$PORT/"
  ended_in_one_line bench bench
  check_grep_fixed "bench: says what to try" "$NPN_LINE" "$WORK/bench.stderr"
  ;;
load_no_protocol_closes)
  start_no_protocol_server
  # SPDY wanted: the negotiation's outcome is the reason
  run load load "$PLAN" --single "127.0.0.1:$PORT" --tls -k --strict --timeout 10 --result "$WORK/r"
  ended_in_one_line load load
  check_grep_fixed "load: says what to try" "$NPN_LINE" "$WORK/load.stderr"
  # HTTP/1.1 wanted (no ALPN answer is HTTP/1.1): the request meets the closed connection
  run load1 load "$PLAN" --single "127.0.0.1:$PORT" --tls -k --http1 --strict --timeout 10 \
    --result "$WORK/r"
  ended_in_one_line load1 load
  ;;
get_plaintext_to_tls)
  start_speedyd_tls
  run get get -s -o /dev/null "http://127.0.0.1:$PORT/index.html"
  check "get: exit 1" "$RC" 1
  check "get: within 2 s (took $MS ms)" "$([ "$MS" -lt 2000 ] && echo yes)" yes
  check_grep_fixed "get: says the server speaks TLS" "$TLS_LINE" "$WORK/get.stderr"
  ;;
bench_plaintext_to_tls)
  start_speedyd_tls
  run bench bench -n 5 -c 2 "http://127.0.0.1:$PORT/index.html"
  ended_in_one_line bench bench
  check "bench: within 2 s (took $MS ms)" "$([ "$MS" -lt 2000 ] && echo yes)" yes
  check_grep_fixed "bench: says the server speaks TLS" "$TLS_LINE" "$WORK/bench.stderr"
  ;;
load_plaintext_to_tls)
  start_speedyd_tls
  run load load "$PLAN" --single "127.0.0.1:$PORT" --strict --timeout 10 --result "$WORK/r"
  ended_in_one_line load load
  check "load: within 2 s (took $MS ms)" "$([ "$MS" -lt 2000 ] && echo yes)" yes
  check_grep_fixed "load: says the server speaks TLS" "$TLS_LINE" "$WORK/load.stderr"
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
  exit 1
fi
echo "all checks passed"
