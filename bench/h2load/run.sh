#!/bin/bash
# bench/h2load/run.sh [SPEEDY] — h2load and `speedy bench` with the same -c/-m/-n against
# one nghttpd (h2c, 1 KiB file, server pinned to core 0, load generators to core 1), three
# rounds each; prints both results and the ratio of their req/s. A measurement, not a test.
#   C=100 M=100 N=200000 bench/h2load/run.sh build/src/speedy
set -u
SPEEDY=${1:-build/src/speedy}
C=${C:-100} M=${M:-100} N=${N:-200000}
for tool in nghttpd h2load taskset; do
  command -v $tool >/dev/null || { echo "$tool is not installed"; exit 1; }
done
WORK=$(mktemp -d)
trap 'kill $SERVER 2>/dev/null; wait 2>/dev/null; rm -rf "$WORK"' EXIT
mkdir -p "$WORK/www"
head -c 1024 /dev/urandom >"$WORK/www/1k"
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
taskset -c 0 nghttpd --no-tls -d "$WORK/www" "$PORT" >/dev/null 2>&1 &
SERVER=$!
sleep 0.5
URL=http://127.0.0.1:$PORT/1k
for round in 1 2 3; do
  h2=$(taskset -c 1 h2load -c "$C" -m "$M" -n "$N" "$URL" | sed -n 's/^finished in .*, \([0-9.]*\) req\/s.*/\1/p')
  sp=$(taskset -c 1 "$SPEEDY" bench --proto h2c -q -c "$C" -m "$M" -n "$N" --json "$URL" |
    sed -n 's/.*"requests_per_s": \([0-9.]*\).*/\1/p')
  printf 'round %d: h2load %.0f req/s, speedy bench %.0f req/s, ratio speedy/h2load %.2f\n' \
    "$round" "$h2" "$sp" "$(echo "$sp / $h2" | bc -l)"
done
