#!/bin/bash
# test_h2_python.sh — python-h2 (tests/speedyd/h2_client.py, strict header validation) →
# speedyd over h2c: downloads, 100 concurrent streams, upload, HEAD, Range, 304; push; 103
# Early Hints for a client that disabled push; echoed uploads held within the memory
# budget (503 beyond it); graceful stop (GOAWAY, then the in-flight response completes;
# frames by hand, see h2_client.py).
source "$(dirname "$0")/lib.sh" "$@"
PY=/usr/bin/python3 # Debian's python3-h2 loads only under the system interpreter
[ -x $PY ] || skip "$PY is not installed"
$PY -c 'import h2, hpack, hyperframe' 2>/dev/null || skip "python3-h2 is not installed (apt-get install python3-h2)"
need sha256sum timeout
make_site "$WORK/site"
SITE=$WORK/site
: >"$SITE/empty.bin"
head -c 1024 /dev/urandom >"$SITE/kib.bin"
start_server main --listen 127.0.0.1:0 --docroot "$SITE" --manifest "$SITE/push.manifest" \
  --push --upload-path /upload --access-log "$WORK/access.log" --workers 1

client() {
  local status=0
  timeout 30 $PY "$TESTS/h2_client.py" "$PORT_main" "$SITE" "$@" >"$WORK/py-$1.out" 2>&1 || status=$?
  cat "$WORK/py-$1.out"
  check "python-h2 $1: every check passed" "$status" 0
}
client fetch
client push
client hints
# Echoed uploads count against the memory budget (one connection: 1 MiB here).
start_server up --listen 127.0.0.1:0 --docroot "$SITE" --upload-path /upload \
  --upload-max 700000 --max-connection-memory 1048576 --workers 1
PORT_main_saved=$PORT_main
PORT_main=$PORT_up
client uploads
PORT_main=$PORT_main_saved
stop_server up
check_grep "access log: h2 requests" '"GET /kib.bin HTTP/2.0" 200 1024 .* h2 ' "$WORK/access.log"
check_grep "access log: the upload over h2" '"POST /upload HTTP/2.0" 200 200000 .* h2 ' "$WORK/access.log"
client cut
sleep 0.3
check_grep "access log: a download cut by the connection's end has its line (what was sent)" \
  '"GET /large.bin HTTP/2.0" 200 [0-9]\{1,6\} .* h2 ' "$WORK/access.log"
client shutdown "$PID_main"
for _ in $(seq 1 100); do
  kill -0 "$PID_main" 2>/dev/null || break
  sleep 0.1
done
if kill -0 "$PID_main" 2>/dev/null; then
  check "server exits after the graceful stop" running exited
else
  wait "$PID_main"
  check "server exits 0 after the graceful stop" "$?" 0
fi
check_grep "access log: the in-flight response was logged whole" \
  '"GET /large.bin HTTP/2.0" 200 3145728 .* h2 1 ' "$WORK/access.log"
finish
