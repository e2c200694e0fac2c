#!/bin/bash
# test_workers.sh — --workers N: connections of both protocols spread over the workers
# (each has its own SO_REUSEPORT listener), one access log of whole lines, SIGTERM lets
# in-flight transfers finish and every process exit 0, a killed worker is restarted on
# the same sockets, TLS session tickets resume on any worker, and --workers 1 stays a
# single process.
source "$(dirname "$0")/lib.sh" "$@"
need python3 curl sha256sum pgrep
make_site "$WORK/site"
head -c 16777216 /dev/urandom >"$WORK/site/big16.bin"

# workers_of NAME: the worker pids of a server (children of its master), sorted.
workers_of() {
  local pid
  eval "pid=\$PID_$1"
  pgrep -P "$pid" | sort -n | tr '\n' ' '
}

start_server two --listen 127.0.0.1:0 --docroot "$WORK/site" --workers 2 \
  --access-log "$WORK/two.access.log"
workers=$(workers_of two)
check "--workers 2 starts two worker processes" "$(echo $workers | wc -w)" 2

python3 "$TESTS/worker_spread.py" "$PORT_two" $workers >"$WORK/spread" ||
  echo "FAIL: worker_spread.py failed"
cat "$WORK/spread"
# 24 connections each: all on one worker has a chance of 2^-23.
check "HTTP/1.1 connections reach both workers" \
  "$(awk '$1 == "http1" {print ($2 > 0 && $3 > 0 && $2 + $3 == 24)}' "$WORK/spread")" 1
check "SPDY connections reach both workers" \
  "$(awk '$1 == "spdy" {print ($2 > 0 && $3 > 0 && $2 + $3 == 24)}' "$WORK/spread")" 1

# Both protocols give the same bytes, whichever worker answers.
for i in 1 2 3 4; do
  curl -sS --max-time 20 -o "$WORK/h1.$i" "http://127.0.0.1:$PORT_two/large.bin"
done
check "HTTP/1.1 bodies from the workers are byte-exact" \
  "$(sha256sum "$WORK"/h1.* | cut -d' ' -f1 | sort -u | tr -d '\n')" "$(sha "$WORK/site/large.bin")"
if [ -x "${SPEEDYD%/*}/../speedy" ]; then
  speedy_bin="${SPEEDYD%/*}/../speedy"
  for i in 1 2 3 4; do
    timeout 20 "$speedy_bin" get -s --spdy=3.1 -o "$WORK/spdy.$i" "http://127.0.0.1:$PORT_two/large.bin"
  done
  check "SPDY/3.1 bodies from the workers are byte-exact" \
    "$(sha256sum "$WORK"/spdy.* | cut -d' ' -f1 | sort -u | tr -d '\n')" "$(sha "$WORK/site/large.bin")"
fi
lines=$(wc -l <"$WORK/two.access.log")
whole=$(grep -c '^127\.0\.0\.1 .*" [0-9]\{3\} [0-9-]' "$WORK/two.access.log")
check "the shared access log holds whole lines only" "$whole" "$lines"

# A worker killed outright is restarted; the server keeps answering.
sleep 1.2 # older than the crash-loop guard (1 s)
victim=$(echo $workers | cut -d' ' -f1)
kill -KILL "$victim"
for _ in $(seq 1 50); do
  [ "$(echo $(workers_of two) | wc -w)" = 2 ] && ! kill -0 "$victim" 2>/dev/null && break
  sleep 0.1
done
check "a killed worker is replaced" "$(echo $(workers_of two) | wc -w)" 2
check_grep "the death is logged" "killed by signal 9: restarting it" "$WORK/two.error.log"
ok=0
for i in $(seq 1 12); do
  [ "$(curl -sS --max-time 10 -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PORT_two/index.html")" = 200 ] &&
    ok=$((ok + 1))
done
check "every request after the restart is answered" "$ok" 12

# SIGTERM while transfers are in flight on both workers: they finish, all exit 0.
for i in 1 2 3 4; do
  curl -sS --max-time 30 --limit-rate 8M -o "$WORK/slow.$i" "http://127.0.0.1:$PORT_two/big16.bin" &
  eval "curl_$i=\$!"
done
sleep 0.5
workers=$(workers_of two)
stop_server two
check "the master exits 0 after SIGTERM" "$STOP_STATUS" 0
for i in 1 2 3 4; do
  eval "wait \$curl_$i"
  check "in-flight transfer $i finished" "$?" 0
done
check "in-flight bodies are intact" \
  "$(sha256sum "$WORK"/slow.* | cut -d' ' -f1 | sort -u | tr -d '\n')" "$(sha "$WORK/site/big16.bin")"
alive=0
for pid in $workers; do kill -0 "$pid" 2>/dev/null && alive=$((alive + 1)); done
check "no worker outlives the master" "$alive" 0
check "workers exited cleanly (nothing logged as unclean)" \
  "$(grep -c 'exited with status\|killed by signal 15' "$WORK/two.error.log")" 0

# TLS session tickets: the keys are made before the fork, so a ticket from one worker
# resumes on the other (12 resumptions land on both workers but for a chance of 2^-11).
if command -v openssl >/dev/null 2>&1; then
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
    -subj /CN=localhost -keyout "$WORK/key.pem" -out "$WORK/cert.pem" 2>/dev/null
  chmod 600 "$WORK/key.pem"
  start_server tls --listen 127.0.0.1:0,tls --cert "$WORK/cert.pem" --key "$WORK/key.pem" \
    --docroot "$WORK/site" --workers 2
  echo | timeout 10 openssl s_client -connect "127.0.0.1:$PORT_tls" -tls1_2 \
    -sess_out "$WORK/session.pem" >/dev/null 2>&1
  reused=0
  for i in $(seq 1 12); do
    echo | timeout 10 openssl s_client -connect "127.0.0.1:$PORT_tls" -tls1_2 \
      -sess_in "$WORK/session.pem" 2>/dev/null | grep -q '^Reused' && reused=$((reused + 1))
  done
  check "a session ticket resumes on every worker" "$reused" 12
  stop_server tls
  check "TLS server with workers exits 0" "$STOP_STATUS" 0
fi

# --workers 1: today's single process.
start_server one --listen 127.0.0.1:0 --docroot "$WORK/site" --workers 1
check "--workers 1 forks no worker" "$(pgrep -P "$PID_one" | wc -l)" 0
check "--workers 1 serves" \
  "$(curl -sS --max-time 10 -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PORT_one/index.html")" 200
stop_server one
check "--workers 1 exits 0" "$STOP_STATUS" 0
check "no sanitizer report from any speedyd process" \
  "$(cat "$WORK"/*.stderr | grep -c 'Sanitizer\|runtime error')" 0
finish
