#!/bin/bash
# test_h1_overflow.sh — HTTP/1.1 lengths at the 64-bit boundaries, over the wire to speedyd:
# Content-Length of UINT64_MAX, UINT64_MAX + 1, INT64_MAX and with a sign; chunk sizes of
# 2^64 - 1, 2^64 and more, or signed; Range numbers past UINT64_MAX. Each request must get
# its 4xx (or the range its 206/416) and the connection closed after an error; the server
# must stay up and keep no sanitizer report. The numbers themselves are unit-tested in
# tests/http/test_http_overflow.c; this checks llhttp and speedyd_h1.c around them.
source "$(dirname "$0")/lib.sh" "$@"
need timeout head cut tr
mkdir -p "$WORK/site"
head -c 1000 /dev/zero | tr '\0' x >"$WORK/site/f.txt"
start_server main --listen 127.0.0.1:0 --docroot "$WORK/site" --upload-path /upload \
  --upload-max 1000 --upload-mode discard
P=$PORT_main
N=0

# exchange REQUEST: sends REQUEST (printf %b escapes) on a new connection and reads the
# answer until the server closes (10 s at most); prints the answer's file.
exchange() {
  N=$((N + 1))
  local out=$WORK/answer.$N
  : >"$out"
  if exec 3<>"/dev/tcp/127.0.0.1/$P"; then
    printf '%b' "$1" >&3
    timeout 10 cat <&3 >"$out"
    exec 3<&-
  fi
  echo "$out"
}

status_of() { head -n1 "$1" | tr -d '\r' | cut -d' ' -f2; }

# expect WHAT STATUS REQUEST: the status, and "connection: close" after a 400 or 413 (the
# request's framing cannot be trusted: the connection must end).
expect() {
  local answer
  answer=$(exchange "$3")
  check "$1: status" "$(status_of "$answer")" "$2"
  if [ "$2" = 400 ] || [ "$2" = 413 ]; then
    check "$1: connection closed" "$(grep -c -i '^connection: close' "$answer")" 1
  fi
}

POST='POST /upload HTTP/1.1\r\nHost: x\r\n'
CHUNKED="${POST}Transfer-Encoding: chunked\r\n\r\n"

expect "Content-Length 2^64-1" 400 "${POST}Content-Length: 18446744073709551615\r\n\r\n"
expect "Content-Length 2^64" 400 "${POST}Content-Length: 18446744073709551616\r\n\r\n"
expect "Content-Length 2^63-1 (19 digits)" 400 "${POST}Content-Length: 9223372036854775807\r\n\r\n"
expect "Content-Length with +" 400 "${POST}Content-Length: +5\r\n\r\nhello"
expect "Content-Length with -" 400 "${POST}Content-Length: -1\r\n\r\n"
expect "Content-Length in hex" 400 "${POST}Content-Length: 0x5\r\n\r\nhello"
expect "Content-Length after spaces" 200 \
  "${POST}Content-Length:    5\r\nConnection: close\r\n\r\nhello"
expect "Content-Length of 18 nines over --upload-max, no body sent" 413 \
  "${POST}Content-Length: 999999999999999999\r\n\r\n"

expect "chunk size 2^64 (17 hex digits)" 400 "${CHUNKED}10000000000000000\r\nx\r\n0\r\n\r\n"
expect "chunk size of 18 f" 400 "${CHUNKED}ffffffffffffffffff\r\nx\r\n0\r\n\r\n"
expect "chunk size with a sign" 400 "${CHUNKED}-1\r\nx\r\n0\r\n\r\n"
expect "chunk size with a plus" 400 "${CHUNKED}+5\r\nhello\r\n0\r\n\r\n"
# 2^64 - 1 fits: the bytes then run into --upload-max.
body=$(head -c 1100 /dev/zero | tr '\0' b)
expect "chunk size 2^64-1 stops at --upload-max" 413 "${CHUNKED}ffffffffffffffff\r\n${body}"
# Many chunks whose sizes add up past the limit.
chunks=""
for _ in $(seq 1 11); do chunks+="64\r\n$(head -c 100 /dev/zero | tr '\0' c)\r\n"; done
expect "chunks adding up past --upload-max" 413 "${CHUNKED}${chunks}0\r\n\r\n"

GET='GET /f.txt HTTP/1.1\r\nHost: x\r\nConnection: close\r\n'
answer=$(exchange "${GET}Range: bytes=0-18446744073709551615\r\n\r\n")
check "range to 2^64-1: 206" "$(status_of "$answer")" 206
check_grep "range to 2^64-1: the whole file" "content-range: bytes 0-999/1000" "$answer"
answer=$(exchange "${GET}Range: bytes=10-99999999999999999999999\r\n\r\n")
check "range past 2^64: 206 to the end" "$(status_of "$answer")" 206
check_grep "range past 2^64: bytes 10-999" "content-range: bytes 10-999/1000" "$answer"
expect "range from 2^64-1" 416 "${GET}Range: bytes=18446744073709551615-\r\n\r\n"
expect "range from 2^64" 416 "${GET}Range: bytes=18446744073709551616-\r\n\r\n"
answer=$(exchange "${GET}Range: bytes=-18446744073709551616\r\n\r\n")
check "suffix range of 2^64: 206" "$(status_of "$answer")" 206
check_grep "suffix range of 2^64: the whole file" "content-range: bytes 0-999/1000" "$answer"

expect "the server still answers" 200 "${GET}\r\n"
kill -0 "$PID_main" 2>/dev/null
check "speedyd still running" $? 0
finish
