#!/bin/bash
# test_spdy.sh — node's spdy-transport → speedyd: SPDY/2, /3 and /3.1 over plaintext and
# TLS (ALPN): many files at once, a large file (sha256 equal), a POST upload, pushes
# received (and none for a client announcing MAX_CONCURRENT_STREAMS 0).
source "$(dirname "$0")/lib.sh" "$@"
need_node_modules
need openssl sha256sum
make_certs
make_site "$WORK/site"
SITE=$WORK/site
head -c 300000 /dev/urandom >"$WORK/upload.bin"
common=(--docroot "$SITE" --manifest "$SITE/push.manifest" --push --upload-path /upload
        --cert "$WORK/certs/server.pem" --key "$WORK/certs/server.key"
        --access-log "$WORK/access.log")
# Plaintext version-3 clients are told apart by their flow control (--plaintext-v3 auto,
# the default): SPDY/3 and /3.1 clients use the same port, as users' clients do.
start_server main --listen 127.0.0.1:0 --listen 127.0.0.1:0,tls "${common[@]}"

paths=(/ /index.html /css/site.css /css/print.css /js/app.js /img/logo.png /img/dot-red.png
       /img/dot-green.png /img/dot-blue.png /large.bin)
files=(index.html index.html css/site.css css/print.css js/app.js img/logo.png img/dot-red.png
       img/dot-green.png img/dot-blue.png large.bin)
path_args=()
for p in "${paths[@]}"; do path_args+=(--path "$p"); done

client() { node "$TESTS/spdy_client.js" --timeout-ms 30000 "$@"; }

for v in 2 3 3.1; do
  for mode in plain tls; do
    if [ $mode = tls ]; then
      conn=(--port "$PORT2_main" --tls --ca "$WORK/certs/ca.pem" --version $v)
    else
      conn=(--port "$PORT_main" --version $v)
    fi
    tag="spdy/$v $mode"
    out=$WORK/get-$v-$mode.json
    client "${conn[@]}" --scenario get "${path_args[@]}" >"$out"
    check "$tag: many files at once" "$(json "$out" r.ok)" true
    for i in "${!paths[@]}"; do
      check "$tag: ${paths[$i]} sha256" "$(json "$out" "r.responses['${paths[$i]}'].sha256")" \
        "$(sha "$SITE/${files[$i]}")"
    done
    out=$WORK/post-$v-$mode.json
    client "${conn[@]}" --scenario post --upload "$WORK/upload.bin" >"$out"
    check "$tag: POST upload answered 200" "$(json "$out" r.status)" 200
    check "$tag: POST upload echoed intact" "$(json "$out" r.sha256)" "$(sha "$WORK/upload.bin")"
    out=$WORK/push-$v-$mode.json
    client "${conn[@]}" --scenario push --path / >"$out"
    check "$tag: six pushes received" "$(json "$out" 'Object.keys(r.pushes).length')" 6
    check "$tag: pushed /css/site.css intact" \
      "$(json "$out" "Object.entries(r.pushes).filter(([k]) => k.endsWith('/css/site.css')).map(([k, x]) => x.sha256)[0]")" \
      "$(sha "$SITE/css/site.css")"
    check "$tag: pushes started before the page ended" \
      "$(json "$out" 'Object.values(r.pushes).every((x) => x.before_page_end)')" true
  done
done

# A page requested twice on one session is followed by its pushes once: the server
# remembers what it pushed on a connection (the access log counts pushed answers).
speedy="$(dirname "$SPEEDYD")/../speedy"
if [ -x "$speedy" ]; then
  before=$(grep -c 'GET /js/app.js' "$WORK/access.log")
  "$speedy" get -s "http://127.0.0.1:$PORT_main/" "http://127.0.0.1:$PORT_main/" >/dev/null 2>&1
  sleep 0.3
  after=$(grep -c 'GET /js/app.js' "$WORK/access.log")
  check "a page requested twice on one session is pushed once" "$((after - before))" 1
fi

out=$WORK/nopush.json
client --port "$PORT_main" --version 3.1 --scenario push --path / --max-streams 0 >"$out"
check "no push to a client with MAX_CONCURRENT_STREAMS 0" "$(json "$out" 'Object.keys(r.pushes).length')" 0
check "its page still answered" "$(json "$out" r.page.status)" 200

out=$WORK/mismatch.json
client --port "$PORT_main" --version 3.1 --scenario post --upload "$WORK/upload.bin" --claim-length 300010 >"$out"
check "a Content-Length above the DATA received is a 400 reply" "$(json "$out" r.status)" 400
client --port "$PORT_main" --version 3 --tls --ca "$WORK/certs/ca.pem" --port "$PORT2_main" \
  --scenario post --upload "$WORK/upload.bin" --claim-length 1000 >"$out"
check "a Content-Length below the DATA received is a 400 reply" "$(json "$out" r.status)" 400

check_grep "access log: SPDY stream with protocol and stream id" '"GET /css/site.css HTTP/1.1" 200 629 .* spdy/3.1 [0-9]' "$WORK/access.log"
# A client that leaves (half-close) while a stream waits for its window or its upload:
# speedyd closes at once instead of sitting in CLOSE-WAIT until --idle-timeout.
if [ -x /usr/bin/python3 ]; then
  for what in download upload; do
    status=0
    /usr/bin/python3 "$TESTS/dead_peer.py" "$PORT_main" $what || status=$?
    check "a client gone mid-$what is let go at once" "$status" 0
  done
fi
stop_server main
check "server exits 0 on SIGTERM" "$STOP_STATUS" 0
finish
