#!/bin/bash
# test_sendfile.sh — plaintext HTTP/1.1 file bodies sent with sendfile(2): byte-exact
# (large and small, pipelined behind each other), HEAD and Range still right, and a file
# truncated while it is being sent closes the connection instead of hanging, and a close
# after the answer waits while its bytes still move.
source "$(dirname "$0")/lib.sh" "$@"
need python3 curl sha256sum
make_site "$WORK/site"
head -c 9000000 /dev/urandom >"$WORK/site/nine.bin"
start_server s --listen 127.0.0.1:0 --docroot "$WORK/site" --workers 1
url=http://127.0.0.1:$PORT_s

curl -sS --max-time 30 -o "$WORK/nine.got" "$url/nine.bin"
check "a 9 MB file over HTTP/1.1 is byte-exact" "$(sha "$WORK/nine.got")" "$(sha "$WORK/site/nine.bin")"
curl -sS --max-time 30 --limit-rate 2M -o "$WORK/large.got" "$url/large.bin"
check "a slow reader gets the exact bytes too" "$(sha "$WORK/large.got")" "$(sha "$WORK/site/large.bin")"

curl -sS --max-time 10 -I "$url/nine.bin" >"$WORK/head" 2>&1
check_grep "HEAD: Content-Length of the whole file" "content-length: 9000000" "$WORK/head"
check "HEAD: no body" "$(curl -sS --max-time 10 --head -o /dev/null -w '%{size_download}' "$url/nine.bin")" 0

curl -sS --max-time 10 -r 100000-299999 -o "$WORK/range.got" -w '%{http_code}' "$url/nine.bin" >"$WORK/range.code"
check "Range: 206" "$(cat "$WORK/range.code")" 206
dd if="$WORK/site/nine.bin" of="$WORK/range.want" bs=100000 skip=1 count=2 status=none
check "Range: the requested bytes" "$(sha "$WORK/range.got")" "$(sha "$WORK/range.want")"

# Pipelined: a large body (sendfile), a small one (copied), a large one, on one connection.
python3 - "$PORT_s" "$WORK" <<'PY'
import socket, sys
port, work = int(sys.argv[1]), sys.argv[2]
s = socket.create_connection(("127.0.0.1", port), timeout=20)
paths = ["/nine.bin", "/index.html", "/large.bin"]
s.sendall(b"".join(b"GET %s HTTP/1.1\r\nHost: x\r\n\r\n" % p.encode() for p in paths))
buf = b""
f = s.makefile("rb")
for i, p in enumerate(paths):
    length = None
    while True:
        line = f.readline()
        if line in (b"\r\n", b""):
            break
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":")[1])
    body = f.read(length)
    open("%s/pipe.%d" % (work, i), "wb").write(body)
PY
check "pipelined: large body 1 exact" "$(sha "$WORK/pipe.0")" "$(sha "$WORK/site/nine.bin")"
check "pipelined: small body 2 exact" "$(sha "$WORK/pipe.1")" "$(sha "$WORK/site/index.html")"
check "pipelined: large body 3 exact" "$(sha "$WORK/pipe.2")" "$(sha "$WORK/site/large.bin")"

# A file that shrinks while it is sent: the connection ends (no hang until a timeout).
head -c 67108864 /dev/zero >"$WORK/site/shrink.bin"
start=$(date +%s%N)
curl -sS --max-time 25 --limit-rate 4M -o "$WORK/shrink.got" "$url/shrink.bin" 2>"$WORK/shrink.err" &
curl_pid=$!
sleep 1
truncate -s 1048576 "$WORK/site/shrink.bin"
wait "$curl_pid"
status=$?
elapsed=$((($(date +%s%N) - start) / 1000000))
check "a truncated file: the transfer fails (curl exit 18, partial)" "$status" 18
check "a truncated file: the connection closes at once (under 10 s)" "$((elapsed < 10000))" 1
check "the server still answers afterwards" \
  "$(curl -sS --max-time 10 -o /dev/null -w '%{http_code}' "$url/index.html")" 200

stop_server s
check "exit 0 on SIGTERM" "$STOP_STATUS" 0

# Connection: close with a body still being sent: the close waits while bytes move, not a
# fixed time (a reader slower than --idle-timeout for the whole body still gets it).
# The reader takes at most 64 KiB every 20 ms through a 64 KiB receive buffer (about
# 3 MB/s, steadily: curl's --limit-rate pauses for longer than a second at times), so
# the server's sending lasts well past the 1 s idle timeout.
start_server idle --listen 127.0.0.1:0 --docroot "$WORK/site" --workers 1 --idle-timeout 1000
python3 - "$PORT_idle" "$WORK/slow.got" <<'PY'
import socket, sys, time
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)
s.connect(("127.0.0.1", int(sys.argv[1])))
s.sendall(b"GET /nine.bin HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
s.setblocking(False)
got, deadline = bytearray(), time.monotonic() + 30
while time.monotonic() < deadline:
    try:
        data = s.recv(65536)
        if not data:
            break
        got += data
    except BlockingIOError:
        pass
    except ConnectionResetError:
        break
    time.sleep(0.02)
body = bytes(got).split(b"\r\n\r\n", 1)[-1]
open(sys.argv[2], "wb").write(body)
PY
check "Connection: close, 9 MB read in 64 KiB steps with a 1 s idle timeout: byte-exact" \
  "$(sha "$WORK/slow.got")" "$(sha "$WORK/site/nine.bin")"
stop_server idle
check "no sanitizer report from any speedyd process" \
  "$(cat "$WORK"/*.stderr | grep -c 'Sanitizer\|runtime error')" 0
finish
