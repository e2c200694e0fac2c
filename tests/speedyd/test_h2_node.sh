#!/bin/bash
# test_h2_node.sh — node's built-in http2 client (tests/speedyd/h2_node_client.js) →
# speedyd: h2 over TLS (ALPN) and h2c; 0 B, 1 KiB, 3 MiB and the page by sha256, a POST
# upload echoed, the six pushes of /, and with push disabled a 103 with the page's Link.
source "$(dirname "$0")/lib.sh" "$@"
need node sha256sum timeout
make_certs
make_site "$WORK/site"
SITE=$WORK/site
: >"$SITE/empty.bin"
head -c 1024 /dev/urandom >"$SITE/kib.bin"
head -c 300000 /dev/urandom >"$WORK/upload.bin"
start_server main --listen 127.0.0.1:0 --listen 127.0.0.1:0,tls --docroot "$SITE" \
  --manifest "$SITE/push.manifest" --push --upload-path /upload \
  --cert "$WORK/certs/server.pem" --key "$WORK/certs/server.key"

for mode in h2c tls; do
  if [ $mode = tls ]; then
    conn=("https://localhost:$PORT2_main" "$WORK/upload.bin" "$WORK/certs/ca.pem")
    want_alpn=h2
  else
    conn=("http://127.0.0.1:$PORT_main" "$WORK/upload.bin")
    want_alpn=h2c
  fi
  out=$WORK/node-$mode.json
  timeout 30 node "$TESTS/h2_node_client.js" "${conn[@]}" >"$out"
  check "$mode node: protocol" "$(json "$out" r.alpn)" $want_alpn
  for f in index.html empty.bin kib.bin large.bin; do
    p=/$f
    [ $f = index.html ] && p=/
    check "$mode node: GET $p 200" "$(json "$out" "r.responses['$p'].status")" 200
    check "$mode node: GET $p sha256" "$(json "$out" "r.responses['$p'].sha256")" "$(sha "$SITE/$f")"
  done
  check "$mode node: POST upload echoed intact" "$(json "$out" r.upload.sha256)" "$(sha "$WORK/upload.bin")"
  check "$mode node: six pushes" "$(json "$out" 'Object.keys(r.pushes).length')" 6
  check "$mode node: pushed /js/app.js intact" "$(json "$out" "r.pushes['/js/app.js'].sha256")" \
    "$(sha "$SITE/js/app.js")"
  check "$mode node: no 103 while pushing" "$(json "$out" 'r.informational.length')" 0
  out=$WORK/node-$mode-nopush.json
  timeout 30 node "$TESTS/h2_node_client.js" "${conn[@]}" --no-push >"$out"
  check "$mode node --no-push: no pushes" "$(json "$out" 'Object.keys(r.pushes).length')" 0
  check "$mode node --no-push: one 103" "$(json "$out" "r.informational.map((h) => h[':status']).join()")" 103
  check "$mode node --no-push: the 103's Link is the 200's" \
    "$(json "$out" "r.informational[0].link === r.responses['/'].link && r.responses['/'].link.includes('</css/site.css>; rel=preload')")" true
done
stop_server main
check "server exits 0 on SIGTERM" "$STOP_STATUS" 0
finish
