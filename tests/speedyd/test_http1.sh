#!/bin/bash
# test_http1.sh — curl → speedyd over HTTP/1.1, plaintext and TLS: keep-alive, ranges,
# conditional requests, gzip, HEAD, uploads (Content-Length and chunked), the limits
# (413, 431), Expect: 100-continue, bodies no upload takes (1 MiB) and the same bytes as
# on disk.
source "$(dirname "$0")/lib.sh" "$@"
need curl openssl sha256sum gzip
make_certs
make_site "$WORK/site"
SITE=$WORK/site
start_server main --listen 127.0.0.1:0 --listen 127.0.0.1:0,tls --docroot "$SITE" \
  --cert "$WORK/certs/server.pem" --key "$WORK/certs/server.key" --upload-path /upload \
  --upload-max 200000 --manifest "$SITE/push.manifest" --hint --access-log "$WORK/access.log"
P=$PORT_main
C=(curl -sS --max-time 20)
U=http://127.0.0.1:$P

for scheme in http https; do
  if [ $scheme = https ]; then
    base=https://localhost:$PORT2_main
    tlsopt=(--cacert "$WORK/certs/ca.pem" --resolve "localhost:$PORT2_main:127.0.0.1" --http1.1)
  else
    base=$U
    tlsopt=(--http1.1)
  fi
  cc=("${C[@]}" "${tlsopt[@]}")
  # Keep-alive: two URLs in one curl run share one connection.
  "${cc[@]}" -v -o "$WORK/a" -o "$WORK/b" "$base/large.bin" "$base/css/site.css" 2>"$WORK/ka.$scheme"
  check "$scheme: keep-alive: second request reuses the connection" \
    "$(grep -c -i 're-using existing connection\|reusing existing connection' "$WORK/ka.$scheme")" 1
  check "$scheme: large file byte for byte" "$(sha "$WORK/a")" "$(sha "$SITE/large.bin")"
  check "$scheme: css byte for byte" "$(sha "$WORK/b")" "$(sha "$SITE/css/site.css")"
  # Range.
  "${cc[@]}" -o "$WORK/r" -w '%{http_code}' -r 100-1099 "$base/large.bin" >"$WORK/code"
  check "$scheme: range answered 206" "$(cat "$WORK/code")" 206
  check "$scheme: range bytes" "$(sha "$WORK/r")" "$(tail -c +101 "$SITE/large.bin" | head -c 1000 | sha256sum | cut -d' ' -f1)"
  check "$scheme: unsatisfiable range is 416" \
    "$("${cc[@]}" -o /dev/null -w '%{http_code}' -r 99999999- "$base/large.bin")" 416
  # Conditional requests.
  etag=$("${cc[@]}" -D - -o /dev/null "$base/js/app.js" | tr -d '\r' | sed -n 's/^etag: //Ip')
  lm=$("${cc[@]}" -D - -o /dev/null "$base/js/app.js" | tr -d '\r' | sed -n 's/^last-modified: //Ip')
  check "$scheme: If-None-Match gives 304" \
    "$("${cc[@]}" -o /dev/null -w '%{http_code}' -H "If-None-Match: $etag" "$base/js/app.js")" 304
  check "$scheme: If-Modified-Since gives 304" \
    "$("${cc[@]}" -o /dev/null -w '%{http_code}' -H "If-Modified-Since: $lm" "$base/js/app.js")" 304
  check "$scheme: a stale If-None-Match gives 200" \
    "$("${cc[@]}" -o /dev/null -w '%{http_code}' -H 'If-None-Match: "nope"' "$base/js/app.js")" 200
  # gzip.
  "${cc[@]}" -D "$WORK/gz.h" -o "$WORK/gz" -H 'Accept-Encoding: gzip' "$base/css/site.css"
  check_grep "$scheme: gzip Content-Encoding" "content-encoding: gzip" "$WORK/gz.h"
  check "$scheme: gzip body inflates to the file" "$(gzip -dc <"$WORK/gz" | sha256sum | cut -d' ' -f1)" \
    "$(sha "$SITE/css/site.css")"
  # HEAD: headers, no body.
  "${cc[@]}" -I -o "$WORK/head" "$base/large.bin"
  check_grep "$scheme: HEAD has Content-Length" "content-length: 3145728" "$WORK/head"
  # Hints on the page.
  "${cc[@]}" -D "$WORK/hint.h" -o /dev/null "$base/"
  check_grep "$scheme: hint: X-Subresources" "x-subresources: /css/site.css" "$WORK/hint.h"
  check_grep "$scheme: hint: Link rel=preload" "link: </css/site.css>; rel=preload" "$WORK/hint.h"
  # Uploads.
  head -c 100000 /dev/urandom >"$WORK/up"
  "${cc[@]}" -o "$WORK/echo" --data-binary "@$WORK/up" -H 'Content-Type: application/octet-stream' "$base/upload"
  check "$scheme: POST echoed" "$(sha "$WORK/echo")" "$(sha "$WORK/up")"
  "${cc[@]}" -o "$WORK/echo2" --data-binary "@$WORK/up" -H 'Transfer-Encoding: chunked' "$base/upload"
  check "$scheme: chunked POST echoed" "$(sha "$WORK/echo2")" "$(sha "$WORK/up")"
done

head -c 300000 /dev/urandom >"$WORK/toobig"
check "an upload above --upload-max is 413" \
  "$("${C[@]}" -o /dev/null -w '%{http_code}' --data-binary "@$WORK/toobig" "$U/upload")" 413
check "GET on the upload path is 405" "$("${C[@]}" -o /dev/null -w '%{http_code}' "$U/upload")" 405
check "POST to a file is 405" "$("${C[@]}" -o /dev/null -w '%{http_code}' -d x "$U/js/app.js")" 405
# Expect: 100-continue (RFC 9110 10.1.1): the content is asked for at once wherever it
# goes (an upload or a file, which answers 405 after it), never for HTTP/1.0.
head -c 5000 /dev/urandom >"$WORK/5k"
for target in upload js/app.js; do
  "${C[@]}" -v -o /dev/null -H 'Expect: 100-continue' --expect100-timeout 30 \
    --data-binary "@$WORK/5k" "$U/$target" 2>"$WORK/expect.err"
  check_grep "Expect: 100-continue to /$target: a 100 at once" '^< HTTP/1.1 100 Continue' \
    "$WORK/expect.err"
done
"${C[@]}" -v --http1.0 -o /dev/null -H 'Expect: 100-continue' --data-binary "@$WORK/5k" \
  "$U/upload" 2>"$WORK/expect10.err"
check "HTTP/1.0: Expect: 100-continue ignored" "$(grep -c '^< HTTP/1.1 100' "$WORK/expect10.err")" 0
head -c 1100000 /dev/urandom >"$WORK/1m"
check "a body above 1 MiB to a file is 413" \
  "$("${C[@]}" -o /dev/null -w '%{http_code}' --data-binary "@$WORK/1m" "$U/js/app.js")" 413
check "so is a chunked one" "$("${C[@]}" -o /dev/null -w '%{http_code}' \
  -H 'Transfer-Encoding: chunked' --data-binary "@$WORK/1m" "$U/js/app.js")" 413
check "an absolute-form target is served (RFC 9112 3.2.2)" "$("${C[@]}" -o "$WORK/abs" -w '%{http_code}' \
  --request-target "http://localhost:$P/css/site.css" "$U/") $(sha "$WORK/abs")" \
  "200 $(sha "$SITE/css/site.css")"
check "a missing file is 404" "$("${C[@]}" -o /dev/null -w '%{http_code}' "$U/nope.html")" 404
big=$(head -c 40000 /dev/zero | tr '\0' a)
check "headers above the limit are 431" \
  "$("${C[@]}" -o /dev/null -w '%{http_code}' -H "X-Big: $big" "$U/")" 431
long=$(head -c 9000 /dev/zero | tr '\0' a)
check "a request target above the limit is 414" \
  "$("${C[@]}" -o /dev/null -w '%{http_code}' "$U/$long")" 414
check "a directory without slash redirects" "$("${C[@]}" -o /dev/null -w '%{http_code}' "$U/css")" 301
check_grep "access log: combined format + protocol" '"GET /css/site.css HTTP/1.1" 200 629 "-" "curl/[^"]*" http/1.1 [0-9]' "$WORK/access.log"
stop_server main
check "server exits 0 on SIGTERM" "$STOP_STATUS" 0

# An echoed upload is held in memory: it counts against --max-memory (503 beyond it).
start_server small --listen 127.0.0.1:0 --docroot "$SITE" --upload-path /upload \
  --upload-max 2000000 --max-memory 1048576
check "an echoed upload above --max-memory is 503" "$("${C[@]}" -o /dev/null -w '%{http_code}' \
  --data-binary "@$WORK/1m" "http://127.0.0.1:$PORT_small/upload")" 503
check "a smaller one is echoed" "$("${C[@]}" -o "$WORK/echo3" -w '%{http_code}' \
  --data-binary "@$WORK/up" "http://127.0.0.1:$PORT_small/upload") $(sha "$WORK/echo3")" \
  "200 $(sha "$WORK/up")"
stop_server small
finish
