#!/bin/bash
# run.sh SPEEDY WORK CASE — speedy get, bench and load over HTTP/2 against servers this
# project did not write, on loopback:
#
#   <peer>_tls, <peer>_h2c   peer: nghttpd, h2o, nginx, node (its http2 module), python
#                            (python3-h2, tests/h2clients/h2_server.py). Over TLS (a test
#                            CA, ALPN: the default offer, h2 first) and h2c (prior
#                            knowledge, --proto h2c):
#                            - speedy get of 0 B, 1 KiB and 3 MiB, checked by sha256, with
#                              -v showing the HTTP/2 frames;
#                            - 100 URLs on one connection (100 concurrent streams);
#                            - speedy bench -c 1 -m 100;
#                            - speedy load --proto h2 of a small page plan;
#                            - node and python: an upload (--data-binary @FILE), its sha256
#                              echoed by the server.
#   python_goaway            the server answers 5 requests, then sends GOAWAY: 8 URLs all
#                            arrive, the 3 it did not process retried on a new connection.
#   python_reset             the server resets one stream: that URL fails with the reset
#                            named, the others arrive, exit 1, no hang.
#   bench_vs_h2load          h2load and speedy bench, same -c/-m/-n against one nghttpd,
#                            both results printed (no timing asserted).
#
# Every process started here is killed on exit; every wait is bounded. Exit 0 pass, 1 fail,
# 77 skip (the peer, openssl or python3-h2 missing).
set -u
SPEEDY=$1
WORK=$2
CASE=$3
SRC=${SPEEDY_SOURCE_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
source "$SRC/tests/checks.sh"
HERE=$SRC/tests/h2clients
PIDS=()
rm -rf "$WORK"
mkdir -p "$WORK/www" "$WORK/out"
cd "$WORK" || exit 1
cleanup() {
  for pid in "${PIDS[@]}"; do kill -KILL "$pid" 2>/dev/null; done
  wait 2>/dev/null
}
trap cleanup EXIT
trap 'echo "interrupted"; exit 1' INT TERM
skip() { echo "SKIP: $*"; exit 77; }
need() { command -v "$1" >/dev/null 2>&1 || skip "$1 is not installed"; }

PEER=${CASE%_*}
MODE=${CASE##*_}
case $CASE in python_goaway | python_reset) PEER=python MODE=h2c ;; bench_vs_h2load) PEER=nghttpd MODE=h2c ;; esac
need openssl
case $PEER in
nghttpd) need nghttpd ;;
h2o) need h2o ;;
nginx) need nginx ;;
node) need node ;;
python) /usr/bin/python3 -c 'import h2' 2>/dev/null || skip "python3-h2 is not installed (/usr/bin/python3)" ;;
esac
[ "$CASE" = bench_vs_h2load ] && need h2load

# The files served: 0 B, 1 KiB, 3 MiB, an upload, and the small page of the load plan.
: >www/empty
head -c 1024 /dev/urandom >www/1k
head -c $((3 << 20)) /dev/urandom >www/3m
head -c 200000 /dev/urandom >upload.bin
for i in 0 1 2 3 4 5; do head -c $((1000 * (i + 1))) /dev/urandom >"www/r$i"; done
sh "$SRC/tests/io/gencerts.sh" certs >/dev/null 2>&1 || { echo "FAIL: could not make certificates"; exit 1; }

free_port() { /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
wait_file() {
  for _ in $(seq 1 100); do [ -s "$1" ] && return 0; sleep 0.05; done
  return 1
}
# wait_port PORT PID: 0 once PORT accepts, 2 if PID exited first (the port may have been
# taken between free_port and the bind: the caller retries), 1 after 10 s.
wait_port() {
  for _ in $(seq 1 200); do
    (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
    kill -0 "$2" 2>/dev/null || return 2
    sleep 0.05
  done
  return 1
}
# started NAME LOG...: after a peer was started in the background on $PORT, waits for it;
# returns 2 (start again) if it exited before listening, exits the test if it hangs.
started() {
  local name=$1 rc
  shift
  PIDS+=($!)
  wait_port "$PORT" "$!"
  rc=$?
  ((rc == 0)) && return 0
  echo "$name did not start on port $PORT ($( ((rc == 2)) && echo exited || echo timeout))"
  cat "$@"
  ((rc == 2)) && return 2
  echo "FAIL: $name did not start"
  exit 1
}

TLS=0
[ "$MODE" = tls ] && TLS=1
start_peer() {
  local rc
  for _ in 1 2 3; do
    start_peer_once "$@"
    rc=$?
    ((rc == 0)) && break
  done
  ((rc == 0)) || { echo "FAIL: $PEER did not start in 3 attempts"; exit 1; }
  if ((TLS)); then
    BASE=https://localhost:$PORT
    PROTO=(--cacert certs/ca.pem) # the default offer: h2 first by ALPN
  else
    BASE=http://127.0.0.1:$PORT
    PROTO=(--proto h2c)
  fi
}
start_peer_once() {
  local extra=("$@")
  case $PEER in
  nghttpd)
    PORT=$(free_port)
    if ((TLS)); then
      nghttpd -d www "$PORT" certs/server.key certs/server.pem >nghttpd.log 2>&1 &
    else
      nghttpd --no-tls -d www "$PORT" >nghttpd.log 2>&1 &
    fi
    started nghttpd nghttpd.log || return 2 ;;
  h2o)
    PORT=$(free_port)
    {
      echo "listen:"
      echo "  port: $PORT"
      echo "  host: 127.0.0.1"
      ((TLS)) && echo "  ssl: {certificate-file: $WORK/certs/server.pem, key-file: $WORK/certs/server.key}"
      echo "num-threads: 1"
      echo "user: root"
      echo "access-log: /dev/null"
      echo "hosts: {\"default\": {paths: {\"/\": {file.dir: $WORK/www}}}}"
    } >h2o.yaml
    h2o -c h2o.yaml >h2o.log 2>&1 &
    started h2o h2o.log || return 2 ;;
  nginx)
    PORT=$(free_port)
    mkdir -p nginx/tmp nginx/logs
    local listen="listen 127.0.0.1:$PORT http2;"
    ((TLS)) && listen="listen 127.0.0.1:$PORT ssl http2; ssl_certificate $WORK/certs/server.pem; ssl_certificate_key $WORK/certs/server.key;"
    cat >nginx/nginx.conf <<CONF
daemon off;
master_process off;
worker_processes 1;
pid $WORK/nginx/nginx.pid;
error_log $WORK/nginx/logs/error.log;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path $WORK/nginx/tmp/body;
  proxy_temp_path $WORK/nginx/tmp/proxy;
  fastcgi_temp_path $WORK/nginx/tmp/fastcgi;
  uwsgi_temp_path $WORK/nginx/tmp/uwsgi;
  scgi_temp_path $WORK/nginx/tmp/scgi;
  server { $listen root $WORK/www; }
}
CONF
    nginx -p "$WORK/nginx" -c "$WORK/nginx/nginx.conf" -e "$WORK/nginx/logs/error.log" >nginx.log 2>&1 &
    started nginx nginx.log nginx/logs/error.log || return 2 ;;
  node)
    local certs=()
    ((TLS)) && certs=(certs/server.pem certs/server.key)
    node "$HERE/server.js" www port "${certs[@]}" >node.log 2>&1 &
    PIDS+=($!)
    wait_file port || { echo "FAIL: node server did not start"; cat node.log; exit 1; }
    PORT=$(cat port) ;;
  python)
    local tls=()
    ((TLS)) && tls=(--tls certs/server.pem certs/server.key)
    /usr/bin/python3 "$HERE/h2_server.py" www port "${tls[@]}" "${extra[@]}" >python.log 2>&1 &
    PIDS+=($!)
    wait_file port || { echo "FAIL: h2_server.py did not start"; cat python.log; exit 1; }
    PORT=$(cat port) ;;
  esac
}

# speedy NAME ARGS...: bounded by 30 s; stdout and stderr in NAME.out / NAME.err; sets RC.
speedy() {
  local name=$1
  shift
  timeout 30 "$SPEEDY" "$@" >"$name.out" 2>"$name.err"
  RC=$?
  grep -qE "ERROR: (Address|Leak)Sanitizer|runtime error:" "$name.err" && { cat "$name.err"; check "$name: no sanitizer report" yes no; }
}
sha() { sha256sum "$1" | cut -d' ' -f1; }

downloads() {
  speedy get get -v "${PROTO[@]}" -o out/empty -o out/1k -o out/3m \
    "$BASE/empty" "$BASE/1k" "$BASE/3m"
  check "get 0 B, 1 KiB, 3 MiB: exit status" "$RC" 0
  for f in empty 1k 3m; do check "get $f: sha256" "$(sha out/$f)" "$(sha www/$f)"; done
  check_grep "get: h2 spoken" "h2 negotiated by $( ((TLS)) && echo ALPN || echo plaintext)" get.err
  check_grep "get -v: our HEADERS frame" "send HEADERS frame <length=[0-9]*, flags=0x05, stream_id=1>" get.err
  check_grep "get -v: :authority sent" "^          :authority: " get.err
  check_grep "get -v: the peer's SETTINGS by name" "^          \[SETTINGS_[A-Z_]*(0x0[0-9]):[0-9]*\]" get.err
  check_grep "get -v: a response's :status" "^          :status: 200$" get.err
  check_grep "get -v: END_STREAM named" "; END_STREAM" get.err
}

many_streams() {
  local urls=()
  for i in $(seq 1 100); do urls+=("$BASE/1k?n=$i"); done
  speedy many get "${PROTO[@]}" --max-time 20 "${urls[@]}"
  check "get 100 URLs: exit status" "$RC" 0
  for i in $(seq 1 100); do cat www/1k; done >expected-many
  check "get 100 URLs: the bodies in order" "$(sha many.out)" "$(sha expected-many)"
  check_grep "get 100 URLs: one connection" "1 connection$" many.err
  check "get 100 URLs: all ok" "$(grep -c '^  ok ' many.err)" 100
  speedy bench bench "${PROTO[@]}" -c 1 -m 100 -n 500 --max-time 20 "$BASE/1k"
  check "bench -m 100: exit status" "$RC" 0
  check_grep "bench: h2" " — h2 (" bench.out
  check_grep "bench: 500 ok" "requests:  500 ok, 0 failed" bench.out
  check_grep "bench: header bytes counted" "traffic: .* headers (space savings" bench.out
}

load_page() {
  /usr/bin/python3 - "$PORT" >plan.json <<'PY'
import json, sys
resources = [{"id": i, "host": 0, "method": "GET", "path": "/r%d" % i,
              "type": "document" if i == 0 else "image", "parent": -1 if i == 0 else 0,
              "discover_offset": 0 if i == 0 else 100, "start_delay": 0.0,
              "request_headers": [["accept", "*/*"]], "status": 200, "response_headers": [],
              "body_size": 1000 * (i + 1), "redirect_to": -1, "after_cutoff": False}
             for i in range(6)]
print(json.dumps({"format": "speedy-lab-plan/1", "source": "h2clients", "page": "page",
                  "seed": 1, "hosts": [{"name": "localhost", "port": int(sys.argv[1])}],
                  "resources": resources}))
PY
  local tls=()
  ((TLS)) && tls=(--tls --cacert certs/ca.pem)
  speedy load load plan.json --single "127.0.0.1:$PORT" --proto h2 "${tls[@]}" --timeout 20 --result result.jsonl
  check "load --proto h2: exit status" "$RC" 0
  check_grep "load: spoke h2" '"protocol": *"h2"' result.jsonl
  check_grep "load: valid" '"valid": *true' result.jsonl
}

upload() {
  speedy upload get "${PROTO[@]}" --data-binary @upload.bin -o out/upload "$BASE/upload"
  check "upload: exit status" "$RC" 0
  check "upload: the server's sha256 of the body" "$(cat out/upload)" "$(sha upload.bin)"
}

case $CASE in
*_tls | *_h2c)
  start_peer
  downloads
  many_streams
  load_page
  case $PEER in node | python) upload ;; esac ;;
python_goaway)
  start_peer --goaway-after 5
  urls=()
  for i in $(seq 1 8); do urls+=("$BASE/1k?n=$i"); done
  speedy goaway get -v "${PROTO[@]}" --max-time 20 "${urls[@]}"
  check "goaway: exit status" "$RC" 0
  check "goaway: 8 bodies" "$(stat -c %s goaway.out)" 8192
  check "goaway: all 8 arrived" "$(grep -c '^  ok ' goaway.err)" 8
  check_grep "goaway: GOAWAY traced" "recv GOAWAY frame" goaway.err
  check_grep "goaway: GOAWAY noted with its error" "GOAWAY: last good stream [0-9]*, NO_ERROR" goaway.err
  check_grep "goaway: retried on a new connection" "connection 2: connecting" goaway.err ;;
python_reset)
  start_peer
  speedy reset get "${PROTO[@]}" -O -d out/reset --max-time 20 "$BASE/1k" "$BASE/reset" "$BASE/3m"
  check "reset: exit status 1" "$RC" 1
  check_grep "reset: the reset named" "reset: INTERNAL_ERROR" reset.err
  check "reset: the others arrived" "$(grep -c '^  ok ' reset.err)" 2
  check "reset: 3 MiB intact" "$(sha out/reset/3m)" "$(sha www/3m)" ;;
bench_vs_h2load)
  start_peer
  echo "== h2load -c 4 -m 10 -n 2000 $BASE/1k"
  timeout 30 h2load -c 4 -m 10 -n 2000 "$BASE/1k" >h2load.out 2>&1
  check "h2load: exit status" "$?" 0
  grep -E "^(finished|requests|status codes|traffic|time for request):" h2load.out
  speedy bench bench --proto h2c -c 4 -m 10 -n 2000 "$BASE/1k"
  echo "== speedy bench --proto h2c -c 4 -m 10 -n 2000 $BASE/1k"
  cat bench.out
  check "speedy bench: exit status" "$RC" 0
  check_grep "h2load: 2000 succeeded" "2000 succeeded, 0 failed" h2load.out
  check_grep "speedy bench: 2000 ok" "requests:  2000 ok, 0 failed" bench.out
  # DATA bytes counted as h2load counts them (header and total bytes are printed, not
  # compared: the Date field's encoding depends on when the second turns)
  traffic() { sed -n 's/^traffic: .*(\([0-9]*\)) data$/\1/p' "$1"; }
  check "data bytes as h2load counts them" "$(traffic bench.out)" "$(traffic h2load.out)"
  check "2000 KiB of data" "$(traffic bench.out)" 2048000 ;;
*) echo "unknown case $CASE"; exit 2 ;;
esac
echo "$FAILS failure(s)"
[ "$FAILS" -eq 0 ]
