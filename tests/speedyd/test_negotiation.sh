#!/bin/bash
# test_negotiation.sh — openssl s_client shows what speedyd negotiates: ALPN for each
# SPDY version and http/1.1, NPN with TLS 1.2, and the --protocols preference order.
source "$(dirname "$0")/lib.sh" "$@"
need openssl timeout
make_certs
mkdir -p "$WORK/site"
echo hi >"$WORK/site/index.html"
tlsargs=(--cert "$WORK/certs/server.pem" --key "$WORK/certs/server.key" --docroot "$WORK/site")
start_server main --listen 127.0.0.1:0,tls "${tlsargs[@]}"
start_server pref --listen 127.0.0.1:0,tls "${tlsargs[@]}" --protocols http/1.1,spdy/3

sc() { # sc PORT ARGS...: the handshake summary of openssl s_client
  echo | timeout 10 openssl s_client -connect "127.0.0.1:$1" -servername localhost \
    -CAfile "$WORK/certs/ca.pem" "${@:2}" 2>&1
}
for p in spdy/3.1 spdy/3 spdy/2 http/1.1; do
  check "ALPN $p" "$(sc "$PORT_main" -alpn "$p" | grep -a -o 'ALPN protocol: .*')" "ALPN protocol: $p"
done
check "ALPN picks the server's first choice" \
  "$(sc "$PORT_main" -alpn http/1.1,spdy/2,spdy/3.1 | grep -a -o 'ALPN protocol: .*')" "ALPN protocol: spdy/3.1"
check "NPN over TLS 1.2" \
  "$(sc "$PORT_main" -tls1_2 -nextprotoneg spdy/3 | grep -a -o 'Next protocol: .*')" "Next protocol: (1) spdy/3"
check "NPN spdy/3.1 over TLS 1.2" \
  "$(sc "$PORT_main" -tls1_2 -nextprotoneg spdy/3.1 | grep -a -o 'Next protocol: .*')" "Next protocol: (1) spdy/3.1"
check "--protocols order is honoured" \
  "$(sc "$PORT_pref" -alpn spdy/3,http/1.1 | grep -a -o 'ALPN protocol: .*')" "ALPN protocol: http/1.1"
check "a protocol left out of --protocols is not chosen" \
  "$(sc "$PORT_pref" -alpn spdy/3.1 | grep -a -c 'ALPN protocol: spdy/3.1')" 0
stop_server main
check "server exits 0 on SIGTERM" "$STOP_STATUS" 0
finish
