#!/bin/bash
# test_docroot.sh — the docroot wall end to end (HTTP/1.1 through curl --path-as-is, and
# SPDY for one case): "..", percent-encoded traversal, NUL, symlinks out (refused unless
# --allow-symlinks), dotfiles hidden, a FIFO refused without hanging.
source "$(dirname "$0")/lib.sh" "$@"
need curl mkfifo
mkdir -p "$WORK/site/sub" "$WORK/outside"
echo inside >"$WORK/site/sub/file.txt"
echo secret >"$WORK/outside/secret.txt"
echo hidden >"$WORK/site/.hidden"
ln -s "$WORK/outside/secret.txt" "$WORK/site/out-link.txt"
ln -s sub/file.txt "$WORK/site/in-link.txt"
mkfifo "$WORK/site/fifo.txt"
start_server main --listen 127.0.0.1:0 --docroot "$WORK/site"
start_server open --listen 127.0.0.1:0 --docroot "$WORK/site" --allow-symlinks
code() { curl -sS --max-time 10 --path-as-is -o /dev/null -w '%{http_code}' "http://127.0.0.1:$1$2"; }
check "a file inside is served" "$(code "$PORT_main" /sub/file.txt)" 200
check "'..' is refused" "$(code "$PORT_main" /sub/../../outside/secret.txt)" 400
check "'%2e%2e' is refused" "$(code "$PORT_main" /sub/%2e%2e/%2e%2e/outside/secret.txt)" 400
check "'%2f' inside a segment is refused" "$(code "$PORT_main" /..%2f..%2foutside/secret.txt)" 400
check "a NUL byte (%00) is refused" "$(code "$PORT_main" /sub/file.txt%00.html)" 400
check "a symlink leaving the docroot is refused" "$(code "$PORT_main" /out-link.txt)" 403
check "a symlink staying inside is followed" "$(code "$PORT_main" /in-link.txt)" 200
check "a dotfile is hidden" "$(code "$PORT_main" /.hidden)" 404
check "a FIFO is refused at once" "$(code "$PORT_main" /fifo.txt)" 403
check "--allow-symlinks follows a symlink out" "$(code "$PORT_open" /out-link.txt)" 200
if command -v node >/dev/null && [ -d "$SRC/node_modules/spdy-transport" ]; then
  node "$TESTS/spdy_client.js" --port "$PORT_main" --version 3.1 --scenario get \
    --path /sub/%2e%2e/%2e%2e/outside/secret.txt --path /out-link.txt >"$WORK/spdy.json"
  check "SPDY: '%2e%2e' is a 400 reply" "$(json "$WORK/spdy.json" "r.responses['/sub/%2e%2e/%2e%2e/outside/secret.txt'].status")" 400
  check "SPDY: a symlink out is a 403 reply" "$(json "$WORK/spdy.json" "r.responses['/out-link.txt'].status")" 403
fi
stop_server main
check "server exits 0 on SIGTERM" "$STOP_STATUS" 0
finish
