#!/bin/bash
# test_file_cache.sh — --file-cache: cached answers are the file's bytes, a changed file
# (same size, new mtime; new size; removed) is noticed at once, HEAD / Range /
# If-None-Match still get their own answers, a cached file is not opened again, and
# HTTP/1.1 answers of 16 KiB or more are left to sendfile while SPDY's come from the cache,
# and SPDY and HTTP/2 answers from the cache carry the fields of the first answer (with
# the Date of when they are sent: the prepared head is made again each second), and
# Accept-Encoding sent on two lines is read as one list.
source "$(dirname "$0")/lib.sh" "$@"
need python3 curl sha256sum
mkdir -p "$WORK/site"
head -c 3000 /dev/urandom >"$WORK/site/small.bin"
head -c 2000000 /dev/urandom >"$WORK/site/big.bin"
head -c 65536 /dev/urandom >"$WORK/site/mid.bin" # >= 16 KiB, within an entry (1 MiB / 8)
SPEEDY=$(dirname "$SPEEDYD")/../speedy
start_server c --listen 127.0.0.1:0 --docroot "$WORK/site" --workers 1 --file-cache 1048576
url=http://127.0.0.1:$PORT_c
get() { curl -sS --max-time 10 -o "$WORK/got" "$url$1"; sha "$WORK/got"; }

check "first answer: the file" "$(get /small.bin)" "$(sha "$WORK/site/small.bin")"
check "second answer (cached): the file" "$(get /small.bin)" "$(sha "$WORK/site/small.bin")"

if command -v strace >/dev/null 2>&1; then
  strace -f -e trace=open,openat,openat2 -o "$WORK/strace" -p "$PID_c" 2>/dev/null &
  tracer=$!
  sleep 0.5
  for i in 1 2 3; do get /small.bin >/dev/null; done
  # A query, or another spelling of the path, is the same file: the same entry.
  for q in '?a' '?b' '?c'; do get "/small.bin$q" >/dev/null; done
  get /sm%61ll.bin >/dev/null
  kill -INT "$tracer" 2>/dev/null
  wait "$tracer" 2>/dev/null
  check "a cached file is not opened again (queries and spellings included)" \
    "$(grep -c 'small.bin' "$WORK/strace")" 0

  # 64 KiB over HTTP/1.1: sendfile beats a copy from memory, so it is opened every time;
  # over SPDY the body is copied anyway: cached, opened once at most.
  strace -f -e trace=open,openat,openat2 -o "$WORK/strace2" -p "$PID_c" 2>/dev/null &
  tracer=$!
  sleep 0.5
  for i in 1 2 3; do check "HTTP/1.1 $i: 64 KiB file" "$(get /mid.bin)" "$(sha "$WORK/site/mid.bin")"; done
  if [ -x "$SPEEDY" ]; then
    for i in 1 2 3; do
      "$SPEEDY" get -s -o "$WORK/got" "$url/mid.bin"
      check "SPDY $i: 64 KiB file" "$(sha "$WORK/got")" "$(sha "$WORK/site/mid.bin")"
    done
  fi
  kill -INT "$tracer" 2>/dev/null
  wait "$tracer" 2>/dev/null
  opens=$(grep -c 'mid.bin' "$WORK/strace2")
  [ -x "$SPEEDY" ] || opens=$((opens + 1)) # no client: as if SPDY had opened it once
  check "64 KiB: opened for each HTTP/1.1 request, at most once for SPDY" \
    "$([ "$opens" -ge 3 ] && [ "$opens" -le 4 ] && echo yes || echo "no ($opens opens)")" yes
fi

# Cached bodies go from the cache into the connection without the engine's copy (DATA
# frames of 4 KiB or more, zero-copy): twenty at once on one connection arrive intact
# over every protocol, a body that ends in a partial frame (50,001 bytes) included.
head -c 50001 /dev/urandom >"$WORK/site/odd.bin"
make_certs
start_server t --listen 127.0.0.1:0 --listen 127.0.0.1:0,tls --docroot "$WORK/site" --workers 1 \
  --file-cache 1048576 --cert "$WORK/certs/server.pem" --key "$WORK/certs/server.key"
# many LABEL OPTION... URL...: twenty cached copies of $f fetched by speedy get on one
# connection arrive intact
many() {
  local label=$1
  shift
  "$SPEEDY" get -s "$@" >"$WORK/many" 2>"$WORK/many.err"
  check "$label: 20 cached $f at once, one connection" "$(sha "$WORK/many")" \
    "$(sha "$WORK/expected-$f")"
}
for f in mid.bin odd.bin; do
  for i in $(seq 1 20); do cat "$WORK/site/$f"; done >"$WORK/expected-$f"
  urls=() tls_urls=()
  for i in $(seq 1 20); do
    urls+=("$url/$f?n=$i")
    tls_urls+=("https://localhost:$PORT2_t/$f?n=$i")
  done
  if [ -x "$SPEEDY" ]; then
    for proto in h2c spdy/3.1 spdy/2; do many "$proto" --proto "$proto" "${urls[@]}"; done
    # Over TLS each frame of 4 KiB or more is encrypted where it lies in the cache, its
    # header placed in the octets before it for the moment (io_conn_write_framed).
    for proto in h2 spdy/3.1; do
      many "$proto over TLS" --proto "$proto" --cacert "$WORK/certs/ca.pem" "${tls_urls[@]}"
    done
  fi
  # curl (libnghttp2) multiplexes --parallel transfers over TLS; its 7.88 fails them
  # with prior knowledge against any server (nghttpd too), so not over h2c.
  rm -f "$WORK"/par-*
  curl -sS --http2 --cacert "$WORK/certs/ca.pem" --parallel --parallel-max 20 --max-time 20 \
    "https://localhost:$PORT2_t/$f?n=[1-20]" -o "$WORK/par-#1"
  for i in $(seq 1 20); do cat "$WORK/par-$i"; done >"$WORK/many"
  check "curl h2 --parallel: 20 cached $f" "$(sha "$WORK/many")" "$(sha "$WORK/expected-$f")"
done
stop_server t

# Same size, new bytes and a new mtime: noticed.
python3 - "$WORK/site/small.bin" <<'PY'
import os, sys
path = sys.argv[1]
st = os.stat(path)
with open(path, "r+b") as f:
    f.write(os.urandom(st.st_size))
os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 5 * 10**9))
PY
check "a rewritten file (same size) is served new" "$(get /small.bin)" "$(sha "$WORK/site/small.bin")"
head -c 4100 /dev/urandom >"$WORK/site/small.bin"
check "a file of a new size is served new" "$(get /small.bin)" "$(sha "$WORK/site/small.bin")"
check "cached again: still the new bytes" "$(get /small.bin)" "$(sha "$WORK/site/small.bin")"

check "HEAD of a cached file: no body" \
  "$(curl -sS --max-time 10 --head -o /dev/null -w '%{size_download}' "$url/small.bin")" 0
check_grep "HEAD of a cached file: its length" "content-length: 4100" \
  <(curl -sS --max-time 10 -I "$url/small.bin")
curl -sS --max-time 10 -r 10-19 -o "$WORK/range" -w '%{http_code}' "$url/small.bin" >"$WORK/code"
check "Range on a cached file: 206" "$(cat "$WORK/code")" 206
check "Range on a cached file: the bytes" "$(sha "$WORK/range")" \
  "$(dd if="$WORK/site/small.bin" bs=1 skip=10 count=10 status=none | sha256sum | cut -d' ' -f1)"
etag=$(curl -sS --max-time 10 -I "$url/small.bin" | awk -F': ' 'tolower($1) == "etag" {print $2}' | tr -d '\r')
check "If-None-Match on a cached file: 304" \
  "$(curl -sS --max-time 10 -o /dev/null -w '%{http_code}' -H "If-None-Match: $etag" "$url/small.bin")" 304

# SPDY and HTTP/2 answers from the cache come with their head laid out once: the same
# fields, in the same order, as the first (uncached) answer gave; Date aside.
head -c 3000 /dev/urandom >"$WORK/site/h2.bin"
head -c 3000 /dev/urandom >"$WORK/site/spdy.bin"
fields() { grep -v -i '^date:' "$1" | tr -d '\r'; }
for i in 1 2 3; do
  curl -sS --max-time 10 --http2-prior-knowledge -D "$WORK/h2.head$i" -o "$WORK/got" "$url/h2.bin"
  check "h2c $i: the file" "$(sha "$WORK/got")" "$(sha "$WORK/site/h2.bin")"
done
check_grep "h2c: the first answer over HTTP/2" "^HTTP/2 200" "$WORK/h2.head1"
check "h2c: a cached answer has the first answer's fields" "$(fields "$WORK/h2.head2")" \
  "$(fields "$WORK/h2.head1")"
check "h2c: and the next" "$(fields "$WORK/h2.head3")" "$(fields "$WORK/h2.head1")"
check_grep "h2c: Date on a cached answer" "^date: " "$WORK/h2.head3"
check_grep "h2c: Server on a cached answer" "^server: speedyd/" "$WORK/h2.head3"
# The cached head is prepared once a second: a later answer carries the time it was sent.
date_of() { date -u -d "$(sed -n 's/^date: //p' "$1" | tr -d '\r')" +%s; }
sleep 1.2
curl -sS --max-time 10 --http2-prior-knowledge -D "$WORK/h2.head4" -o /dev/null "$url/h2.bin"
now=$(date -u +%s)
d3=$(date_of "$WORK/h2.head3") d4=$(date_of "$WORK/h2.head4")
check "h2c: a cached answer a second later has a later Date" "$((d4 > d3))" 1
check "h2c: its Date is now (within 2 s)" "$((now - d4 <= 2 && d4 - now <= 2))" 1
check "h2c: otherwise the same fields" "$(fields "$WORK/h2.head4")" "$(fields "$WORK/h2.head1")"
check "h2c HEAD of a cached file: no body" "$(curl -sS --max-time 10 --http2-prior-knowledge \
  -I -o /dev/null -w '%{size_download}' "$url/h2.bin")" 0
check_grep "h2c HEAD of a cached file: its length" "content-length: 3000" \
  <(curl -sS --max-time 10 --http2-prior-knowledge -I "$url/h2.bin")
if [ -x "$SPEEDY" ]; then
  for i in 1 2; do
    "$SPEEDY" get -s -i --spdy=3.1 -o "$WORK/spdy.out$i" "$url/spdy.bin"
    sed -n '1,/^\r*$/p' "$WORK/spdy.out$i" >"$WORK/spdy.head$i"
  done
  check_grep "SPDY: the first answer's status" "^SPDY/3.1 200 OK" "$WORK/spdy.head1"
  check "SPDY: a cached answer has the first answer's fields" "$(fields "$WORK/spdy.head2")" \
    "$(fields "$WORK/spdy.head1")"
fi

# Accept-Encoding on two lines is one list (RFC 9110 5.3): gzip, from the first answer on
# (the cache leaves such a request to http_static).
for i in 1 2 3; do printf 'body { color: red; } /* %04d */\n' $i; done >"$WORK/site/a.css"
for i in 1 2; do
  check "Accept-Encoding on two lines, request $i: gzip" \
    "$(curl -sS --max-time 10 -o /dev/null -D - -H 'Accept-Encoding: br' -H 'Accept-Encoding: gzip' \
      "$url/a.css" | tr -d '\r' | grep -ci '^content-encoding: gzip')" 1
done

rm "$WORK/site/small.bin"
check "a removed file is 404, not the cached copy" \
  "$(curl -sS --max-time 10 -o /dev/null -w '%{http_code}' "$url/small.bin")" 404
check "a file larger than an entry is served whole" "$(get /big.bin)" "$(sha "$WORK/site/big.bin")"
check "and again" "$(get /big.bin)" "$(sha "$WORK/site/big.bin")"
stop_server c
check "exit 0 on SIGTERM" "$STOP_STATUS" 0

# --file-cache-valid: a check stands that long (nginx's open_file_cache_valid): a file
# rewritten within it is still served as cached, and checked again once it is over.
head -c 3000 /dev/urandom >"$WORK/site/valid.bin"
cp "$WORK/site/valid.bin" "$WORK/valid.old"
start_server v --listen 127.0.0.1:0 --docroot "$WORK/site" --workers 1 --file-cache 1048576 \
  --file-cache-valid 3000
url=http://127.0.0.1:$PORT_v
check "valid: first answer" "$(get /valid.bin)" "$(sha "$WORK/valid.old")"
head -c 3000 /dev/urandom >"$WORK/site/valid.bin"
touch -d '+5 seconds' "$WORK/site/valid.bin"
check "valid: rewritten within the period, served as cached" "$(get /valid.bin)" \
  "$(sha "$WORK/valid.old")"
sleep 3.2
check "valid: after the period, the new file" "$(get /valid.bin)" "$(sha "$WORK/site/valid.bin")"
check "bad --file-cache-valid: usage error" \
  "$("$SPEEDYD" --file-cache-valid soon --docroot "$WORK/site" >/dev/null 2>&1; echo $?)" 2
stop_server v
check "no sanitizer report from any speedyd process" \
  "$(cat "$WORK"/*.stderr | grep -c 'Sanitizer\|runtime error')" 0
finish
