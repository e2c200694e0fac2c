#!/bin/bash
# test_pipeline.sh — HTTP/1.1 pipelining over a raw socket: several requests in one
# write, answered in order, each byte for byte, then the connection closes.
source "$(dirname "$0")/lib.sh" "$@"
need python3 sha256sum
make_site "$WORK/site"
SITE=$WORK/site
start_server main --listen 127.0.0.1:0 --docroot "$SITE"
python3 "$TESTS/pipeline.py" "$PORT_main" /large.bin /css/site.css /nope /js/app.js /img/logo.png \
  >"$WORK/out" 2>"$WORK/err"
check "pipelined requests all answered" "$?:$(wc -l <"$WORK/out")" "0:5"
expect() { echo "$1 $(stat -c %s "$SITE/$2") $(sha "$SITE/$2")"; }
check "answer 1: large.bin" "$(sed -n 1p "$WORK/out")" "$(expect 200 large.bin)"
check "answer 2: site.css" "$(sed -n 2p "$WORK/out")" "$(expect 200 css/site.css)"
check "answer 3: 404" "$(sed -n 3p "$WORK/out" | cut -d' ' -f1)" 404
check "answer 4: app.js" "$(sed -n 4p "$WORK/out")" "$(expect 200 js/app.js)"
check "answer 5: logo.png" "$(sed -n 5p "$WORK/out")" "$(expect 200 img/logo.png)"
stop_server main
check "server exits 0 on SIGTERM" "$STOP_STATUS" 0
finish
