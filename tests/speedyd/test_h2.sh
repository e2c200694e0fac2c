#!/bin/bash
# test_h2.sh — speedyd over HTTP/2, checked by nghttp2's and curl's clients: h2 over TLS
# (ALPN) and h2c with prior knowledge. Downloads of 0 B, 1 KiB and 3 MiB (sha256), HEAD,
# Range, 304, a POST upload, push (nghttp), 103 Early Hints for clients that refuse push
# (curl, nghttp --no-push), gzip, 100 streams on one connection, h2load without a
# failure (two workers, the file cache on), the access log, the ALPN order, TLS 1.2 with
# a CBC suite refused (RFC 9113 9.2.2), and curl's h2c upgrade ignored (HTTP/1.1 goes on).
source "$(dirname "$0")/lib.sh" "$@"
need curl nghttp h2load openssl sha256sum timeout
make_certs
make_site "$WORK/site"
SITE=$WORK/site
: >"$SITE/empty.bin"
head -c 1024 /dev/urandom >"$SITE/kib.bin"
head -c 300000 /dev/urandom >"$WORK/upload.bin"
CA=$WORK/certs/ca.pem
start_server main --listen 127.0.0.1:0 --listen 127.0.0.1:0,tls --docroot "$SITE" \
  --manifest "$SITE/push.manifest" --push --upload-path /upload \
  --cert "$WORK/certs/server.pem" --key "$WORK/certs/server.key" --access-log "$WORK/access.log" \
  --workers 2 --file-cache 1048576

for mode in h2c tls; do
  if [ $mode = tls ]; then
    base=https://localhost:$PORT2_main
    curl_h2=(curl -s --http2 --cacert "$CA" --max-time 20)
  else
    base=http://127.0.0.1:$PORT_main
    curl_h2=(curl -s --http2-prior-knowledge --max-time 20)
  fi
  for f in empty.bin kib.bin large.bin; do
    got=$("${curl_h2[@]}" -o "$WORK/$mode-$f" -w '%{http_version} %{http_code}' "$base/$f")
    check "$mode curl: GET /$f over HTTP/2" "$got" "2 200"
    check "$mode curl: /$f sha256" "$(sha "$WORK/$mode-$f")" "$(sha "$SITE/$f")"
  done
  got=$("${curl_h2[@]}" --compressed -o "$WORK/$mode-css" -D "$WORK/$mode-css.head" -w '%{http_code}' "$base/css/site.css")
  check "$mode curl: gzip answer" "$got $(tr -d '\r' <"$WORK/$mode-css.head" | grep -c '^content-encoding: gzip')" "200 1"
  check "$mode curl: gzip body inflates to the file" "$(sha "$WORK/$mode-css")" "$(sha "$SITE/css/site.css")"
  got=$("${curl_h2[@]}" -I -o "$WORK/$mode-head" -w '%{http_version} %{http_code} %{size_download}' "$base/kib.bin")
  check "$mode curl: HEAD answered without a body" "$got" "2 200 0"
  check_grep "$mode curl: HEAD has the Content-Length" '^content-length: 1024' "$WORK/$mode-head"
  got=$("${curl_h2[@]}" -r 100-1123 -o "$WORK/$mode-range" -w '%{http_code}' "$base/large.bin")
  check "$mode curl: Range answered 206" "$got" 206
  check "$mode curl: Range body" "$(sha "$WORK/$mode-range")" \
    "$(tail -c +101 "$SITE/large.bin" | head -c 1024 | sha256sum | cut -d' ' -f1)"
  etag=$("${curl_h2[@]}" -o /dev/null -D - "$base/kib.bin" | tr -d '\r' | sed -n 's/^etag: //p')
  got=$("${curl_h2[@]}" -o /dev/null -w '%{http_code}' -H "If-None-Match: $etag" "$base/kib.bin")
  check "$mode curl: If-None-Match answered 304" "$got" 304
  "${curl_h2[@]}" -o "$WORK/$mode-upload" --data-binary @"$WORK/upload.bin" "$base/upload"
  check "$mode curl: POST upload echoed intact" "$(sha "$WORK/$mode-upload")" "$(sha "$WORK/upload.bin")"
  # curl refuses push (SETTINGS_ENABLE_PUSH 0): the page's resources come as hints.
  "${curl_h2[@]}" -v -o /dev/null "$base/" 2>"$WORK/$mode-hints" || true
  check_grep "$mode curl: a 103 before the page" '^< HTTP/2 103' "$WORK/$mode-hints"
  check "$mode curl: Link in the 103 and in the 200" \
    "$(grep -c '^< link: </css/site.css>; rel=preload; as=style' "$WORK/$mode-hints")" 2
  check_grep "$mode curl: then the 200" '^< HTTP/2 200' "$WORK/$mode-hints"

  # nghttp takes pushes: six PUSH_PROMISEs for /, the pushed bodies whole, no 103.
  timeout 20 nghttp -nv "$base/" >"$WORK/$mode-nghttp-push" 2>&1
  check "$mode nghttp: six PUSH_PROMISEs for /" \
    "$(grep -c 'recv PUSH_PROMISE frame' "$WORK/$mode-nghttp-push")" 6
  check "$mode nghttp: no 103 to a client taking pushes" \
    "$(grep -c ':status: 103' "$WORK/$mode-nghttp-push")" 0
  timeout 20 nghttp -n -s "$base/" >"$WORK/$mode-nghttp-stat" 2>&1
  check "$mode nghttp: six pushed streams answered 200" \
    "$(grep -cE '^ +[0-9]+ .+\* .* 200 ' "$WORK/$mode-nghttp-stat")" 6
  timeout 20 nghttp -v -n --no-push "$base/" >"$WORK/$mode-nghttp-nopush" 2>&1
  check "$mode nghttp --no-push: a 103 instead" "$(grep -c ':status: 103' "$WORK/$mode-nghttp-nopush")" 1
  check "$mode nghttp --no-push: no PUSH_PROMISE" \
    "$(grep -c 'recv PUSH_PROMISE' "$WORK/$mode-nghttp-nopush")" 0
  # -m 100: the same URI 100 times on one connection, as concurrent streams.
  timeout 20 nghttp -n -s -m 100 "$base/kib.bin" >"$WORK/$mode-nghttp-100" 2>&1
  check "$mode nghttp: 100 concurrent streams answered 200" \
    "$(grep -cE ' 200 +1K /kib.bin$' "$WORK/$mode-nghttp-100")" 100
  timeout 30 h2load -n 1000 -c 10 -m 100 "$base/kib.bin" >"$WORK/$mode-h2load" 2>&1
  check_grep "$mode h2load: 1000 requests, none failed or errored" \
    '^requests: 1000 total, 1000 started, 1000 done, 1000 succeeded, 0 failed, 0 errored, 0 timeout' \
    "$WORK/$mode-h2load"
  check_grep "$mode h2load: all 2xx" '^status codes: 1000 2xx' "$WORK/$mode-h2load"
done

# The default ALPN order puts h2 first; a client offering SPDY first still gets h2.
alpn() { echo | timeout 5 openssl s_client -connect "127.0.0.1:$1" "${@:2}" 2>&1 | sed -n 's/^ALPN protocol: //p'; }
check "ALPN: h2 chosen over spdy/3.1 and http/1.1" "$(alpn "$PORT2_main" -alpn spdy/3.1,http/1.1,h2)" h2
check "ALPN: SPDY clients still get SPDY" "$(alpn "$PORT2_main" -alpn spdy/3.1,http/1.1)" spdy/3.1
# RFC 9113 9.2: TLS 1.2 with an ephemeral AEAD suite is h2; a CBC suite is refused at the
# handshake (the server offers none), so there is never an h2 session to end with
# INADEQUATE_SECURITY.
check "TLS 1.2 with ECDHE and AES-GCM negotiates h2" \
  "$(alpn "$PORT2_main" -tls1_2 -cipher ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256 -alpn h2)" h2
echo | timeout 5 openssl s_client -connect "127.0.0.1:$PORT2_main" -tls1_2 -alpn h2 \
  -cipher ECDHE-ECDSA-AES128-SHA:ECDHE-RSA-AES128-SHA:AES128-SHA >"$WORK/cbc" 2>&1
check_grep "TLS 1.2 with only CBC suites is refused" 'alert handshake failure' "$WORK/cbc"

# --protocols still sets the order: without h2 a client offering it falls back.
start_server noh2 --listen 127.0.0.1:0,tls --docroot "$SITE" --protocols spdy/3.1,http/1.1 \
  --cert "$WORK/certs/server.pem" --key "$WORK/certs/server.key"
check "--protocols without h2: an h2 client gets http/1.1" "$(alpn "$PORT_noh2" -alpn h2,http/1.1)" http/1.1
got=$(curl -s --http2 --cacert "$CA" --max-time 10 -o /dev/null -w '%{http_version}' "https://localhost:$PORT_noh2/kib.bin")
check "--protocols without h2: curl --http2 uses HTTP/1.1" "$got" 1.1

# HEAD gets no content whoever makes the answer (the upload path's 405 has a small page):
# nghttp resets a stream whose HEAD response carries DATA.
timeout 10 nghttp -v -H ':method: HEAD' "http://127.0.0.1:$PORT_main/upload" >"$WORK/head405" 2>&1
check_grep "HEAD /upload over h2: 405" ':status: 405' "$WORK/head405"
check "HEAD /upload over h2: no DATA, no reset" \
  "$(grep -c 'recv DATA frame\|send RST_STREAM' "$WORK/head405")" 0

# curl --http2 over http:// asks to upgrade to h2c: speedyd ignores it (h2c comes by prior
# knowledge) and both requests are answered over one HTTP/1.1 connection.
got=$(curl -s --http2 --max-time 10 -o /dev/null -o /dev/null -w '%{http_version} %{http_code} %{num_connects};' \
  "http://127.0.0.1:$PORT_main/kib.bin" "http://127.0.0.1:$PORT_main/empty.bin")
check "curl --http2 over http://: the upgrade ignored, both answered on one connection" \
  "$got" "1.1 200 1;1.1 200 0;"

sleep 0.3
check_grep "access log: HTTP/2 request with protocol h2 and stream id" \
  '"GET /kib.bin HTTP/2.0" 200 1024 .* h2 [0-9][0-9]* ' "$WORK/access.log"
check_grep "access log: a pushed resource over h2" '"GET /css/site.css HTTP/2.0" 200 .* h2 [0-9]*[02468] ' \
  "$WORK/access.log"
stop_server noh2
stop_server main
check "server exits 0 on SIGTERM" "$STOP_STATUS" 0
finish
