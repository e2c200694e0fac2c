#!/bin/bash
# test_priority.sh — priorities survive below the engine, on loopback: a 20 MiB response
# at the lowest priority starts first; once 64 KiB of it have arrived the client asks
# for a small file at the highest priority. The small one must complete while most of
# the big one is still outstanding (here: less than half of it received).
source "$(dirname "$0")/lib.sh" "$@"
need_node_modules
need sha256sum
mkdir -p "$WORK/site"
head -c 20971520 /dev/urandom >"$WORK/site/big.bin"
head -c 2000 /dev/urandom >"$WORK/site/small.bin"
start_server main --listen 127.0.0.1:0 --docroot "$WORK/site"
for v in 3.1 2; do
  out=$WORK/prio-$v.json
  node "$TESTS/spdy_client.js" --port "$PORT_main" --version $v --scenario priority \
    --big /big.bin --small /small.bin --timeout-ms 60000 >"$out"
  check "spdy/$v: both answered, small first" "$(json "$out" r.ok)" true
  check "spdy/$v: the small file intact" "$(json "$out" r.small.sha256)" "$(sha "$WORK/site/small.bin")"
  check "spdy/$v: the big file intact" "$(json "$out" r.big.sha256)" "$(sha "$WORK/site/big.bin")"
  got=$(json "$out" r.big_bytes_when_small_done)
  echo "spdy/$v: big bytes received when the small one completed: $got of 20971520"
  check "spdy/$v: the small one overtook (big < 50% done)" "$(json "$out" 'r.big_bytes_when_small_done < 10485760')" true
done
stop_server main
check "server exits 0 on SIGTERM" "$STOP_STATUS" 0
finish
