#!/bin/bash
# test_sigterm.sh — SIGTERM during a SPDY transfer: GOAWAY reaches the client, the
# stream in flight finishes intact, the server exits 0. Also: an idle HTTP/1.1
# keep-alive connection does not hold the shutdown, and --shutdown-timeout bounds a
# client that stops reading.
source "$(dirname "$0")/lib.sh" "$@"
need_node_modules
need sha256sum python3
mkdir -p "$WORK/site"
head -c 8388608 /dev/urandom >"$WORK/site/big.bin"
start_server main --listen 127.0.0.1:0 --docroot "$WORK/site"
node "$TESTS/spdy_client.js" --port "$PORT_main" --version 3.1 --scenario goaway \
  --big /big.bin --signal-pid "$PID_main" >"$WORK/goaway.json"
check "GOAWAY received and the stream finished" "$(json "$WORK/goaway.json" r.ok)" true
check "GOAWAY status OK" "$(json "$WORK/goaway.json" r.facts.goaway.code)" OK
check "the body in flight arrived intact" "$(json "$WORK/goaway.json" r.big.sha256)" "$(sha "$WORK/site/big.bin")"
stop_server main
check "server exited 0" "$STOP_STATUS" 0

# An idle keep-alive connection and a client that never reads.
start_server slow --listen 127.0.0.1:0 --docroot "$WORK/site" --shutdown-timeout 1000
python3 - "$PORT_slow" <<'PY' &
import socket, sys, time
idle = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
idle.sendall(b"GET /nope HTTP/1.1\r\nHost: x\r\n\r\n")
stuck = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
stuck.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
stuck.sendall(b"GET /big.bin HTTP/1.1\r\nHost: x\r\n\r\n")
time.sleep(8)
PY
helper=$!
sleep 0.7
start=$(date +%s%N)
stop_server slow
elapsed=$((($(date +%s%N) - start) / 1000000))
kill "$helper" 2>/dev/null
check "exit 0 with a client that stopped reading" "$STOP_STATUS" 0
check "the shutdown deadline held (under 5 s)" "$((elapsed < 5000))" 1
finish
