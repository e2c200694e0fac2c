#!/bin/bash
# test_scale_out.sh SPEEDYD WORK SPEEDY — two speedyd instances behind HAProxy (mode tcp,
# send-proxy-v2), in network namespaces with addresses from 198.18.0.0/15; one instance
# is stopped gracefully in the middle of the load (docs/scale-out.md):
#
#   h2 clients   198.18.1.2 ─┐                 ┌─ 198.18.2.2  speedyd s1 (stopped mid-load)
#                             ├─ HAProxy ───────┤
#   SPDY clients 198.18.4.2 ─┘  198.18.1.1,     └─ 198.18.2.3  speedyd s2
#                               198.18.4.1 / 198.18.2.1
#
# Load (open loop, a few seconds): `speedy bench --proto h2c`, `--proto h2` over TLS
# (end to end through the balancer) and h2load --rps from the h2 clients' namespace,
# `speedy bench --proto spdy/3.1` from the SPDY clients' one. In the middle, s1 is
# drained in HAProxy (runtime API: no new connections) and gets SIGTERM: GOAWAY to its
# clients (two-phase for h2), in-flight streams finish, it exits 0; clients send what
# was refused again on new connections, which reach s2. Checks: every request answered
# 200 for speedy bench (h2load, which does not reconnect after GOAWAY, sends fewer: each
# response it got is a 200), the access logs name the client namespaces' addresses
# (PROXY v2), never the balancer's, and their lines add up to what the clients report.
# Needs root, `ip netns`, haproxy and h2load; skips (77) without them.
source "$(dirname "$0")/lib.sh" "$@"
SPEEDY=${3:?usage: test_scale_out.sh SPEEDYD WORK SPEEDY}
[ "$(id -u)" = 0 ] || skip "needs root (network namespaces)"
need ip openssl h2load
HAPROXY=$(command -v haproxy || { [ -x /usr/sbin/haproxy ] && echo /usr/sbin/haproxy; })
[ -n "$HAPROXY" ] || skip "haproxy is not installed (Debian package haproxy)"
[ -x /usr/bin/python3 ] || skip "/usr/bin/python3 is not installed (HAProxy's runtime API)"
NS=spso-$$
ip netns add "$NS-probe" 2>/dev/null || skip "'ip netns add' does not work here"
ip netns delete "$NS-probe"

cleanup_namespaces() {
  cleanup
  for ns in c2 cs lb sv; do ip netns delete "$NS-$ns" 2>/dev/null; done
}
trap cleanup_namespaces EXIT

# ---- the network ----------------------------------------------------------------------
in_ns() { local ns=$1; shift; ip netns exec "$NS-$ns" "$@"; }
for ns in c2 cs lb sv; do
  ip netns add "$NS-$ns" || { echo "FAIL: cannot create namespace $NS-$ns"; exit 1; }
  in_ns $ns ip link set lo up
done
# veth names are per namespace pair: the balancer has one towards each neighbour
ip link add "a$$c2" type veth peer name "b$$c2" && ip link set "a$$c2" netns "$NS-c2" &&
  ip link set "b$$c2" netns "$NS-lb" || { echo "FAIL: veth"; exit 1; }
ip link add "a$$cs" type veth peer name "b$$cs" && ip link set "a$$cs" netns "$NS-cs" &&
  ip link set "b$$cs" netns "$NS-lb" || { echo "FAIL: veth"; exit 1; }
ip link add "a$$sv" type veth peer name "b$$sv" && ip link set "a$$sv" netns "$NS-sv" &&
  ip link set "b$$sv" netns "$NS-lb" || { echo "FAIL: veth"; exit 1; }
addr() { in_ns "$1" ip addr add "$3/24" dev "$2" && in_ns "$1" ip link set "$2" up; }
addr c2 "a$$c2" 198.18.1.2
addr lb "b$$c2" 198.18.1.1
addr cs "a$$cs" 198.18.4.2
addr lb "b$$cs" 198.18.4.1
addr lb "b$$sv" 198.18.2.1
addr sv "a$$sv" 198.18.2.2
in_ns sv ip addr add 198.18.2.3/24 dev "a$$sv"
# the veths' addresses may take a moment (DAD is off for IPv4, but be sure)
for _ in $(seq 1 50); do
  in_ns c2 ping -c1 -W1 198.18.1.1 >/dev/null 2>&1 && in_ns lb ping -c1 -W1 198.18.2.3 >/dev/null 2>&1 && break
  sleep 0.1
done

# ---- two speedyd instances --------------------------------------------------------------
make_certs
SITE=$WORK/site
mkdir -p "$SITE"
head -c 1024 /dev/urandom >"$SITE/1k.bin"
# start_instance NAME ADDR
start_instance() {
  local name=$1 address=$2
  # not through in_ns: $! must be speedyd itself (ip netns exec execs it), not a subshell
  ip netns exec "$NS-sv" "$SPEEDYD" --listen "$address:80,proxy" --listen "$address:443,tls,proxy" \
    --cert "$WORK/certs/server.pem" --key "$WORK/certs/server.key" --docroot "$SITE" \
    --workers 1 --access-log "$WORK/$name.access.log" --error-log "$WORK/$name.error.log" \
    --port-file "$WORK/$name.ports" >"$WORK/$name.stdout" 2>"$WORK/$name.stderr" &
  local pid=$!
  SERVER_PIDS+=("$pid")
  eval "PID_$name=$pid"
  for _ in $(seq 1 100); do
    [ -s "$WORK/$name.ports" ] && return
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  echo "FAIL: speedyd $name did not start:"
  cat "$WORK/$name.stderr" "$WORK/$name.error.log" 2>/dev/null
  exit 1
}
start_instance s1 198.18.2.2
start_instance s2 198.18.2.3

# ---- HAProxy ----------------------------------------------------------------------------
# The configuration docs/scale-out.md shows: TCP only (TLS goes through to speedyd), the
# client's address to speedyd by PROXY protocol v2, health checks that send the header
# too, and a connection that fails to reach one server tried again on the other.
cat >"$WORK/haproxy.cfg" <<EOF
global
  maxconn 2000
  stats socket $WORK/haproxy.sock mode 600 level admin
defaults
  mode tcp
  timeout connect 2s
  timeout client 30s
  timeout server 30s
  retries 3
  option redispatch
frontend h2_plain
  bind 198.18.1.1:80
  bind 198.18.4.1:80
  default_backend speedyd_plain
frontend h2_tls
  bind 198.18.1.1:443
  default_backend speedyd_tls
backend speedyd_plain
  balance roundrobin
  server s1 198.18.2.2:80 send-proxy-v2 check check-send-proxy inter 500ms
  server s2 198.18.2.3:80 send-proxy-v2 check check-send-proxy inter 500ms
backend speedyd_tls
  balance roundrobin
  server s1 198.18.2.2:443 send-proxy-v2 check check-send-proxy inter 500ms
  server s2 198.18.2.3:443 send-proxy-v2 check check-send-proxy inter 500ms
EOF
ip netns exec "$NS-lb" "$HAPROXY" -f "$WORK/haproxy.cfg" -db >"$WORK/haproxy.stdout" 2>"$WORK/haproxy.stderr" &
SERVER_PIDS+=($!)
haproxy_cmd() { # COMMAND: one command on HAProxy's runtime API; prints the answer
  /usr/bin/python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.settimeout(5)
s.connect(sys.argv[1])
s.sendall(sys.argv[2].encode() + b"\n")
out = b""
while True:
    chunk = s.recv(65536)
    if not chunk:
        break
    out += chunk
sys.stdout.write(out.decode())' "$WORK/haproxy.sock" "$1"
}
for _ in $(seq 1 50); do
  [ -S "$WORK/haproxy.sock" ] && in_ns c2 /usr/bin/python3 -c \
    "import socket; socket.create_connection(('198.18.1.1', 443), 1).close()" 2>/dev/null && break
  sleep 0.1
done
check "HAProxy started" "$(haproxy_cmd 'show servers state' 2>/dev/null | grep -c ' s[12] ')" 4

# ---- the load, and a graceful stop in the middle -------------------------------------
# Open loop: each client sends at a constant rate, so the load is still running when s1
# stops (~2 s in) and the counts are exact: 1,000 + 600 + 800 + 600 requests in ~4 s.
CA=(--cacert "$WORK/certs/ca.pem")
bench_in() { # NS NAME ARGS...: speedy bench --json in namespace NS, in the background
  local ns=$1 name=$2
  shift 2
  ip netns exec "$NS-$ns" timeout 40 "$SPEEDY" bench -q --json --max-time 30 "$@" \
    >"$WORK/$name.json" 2>"$WORK/$name.stderr" &
  CLIENT_PIDS+=($!)
}
CLIENT_PIDS=()
bench_in c2 h2c --proto h2c -c 8 -m 4 -n 1000 --rate 250 "http://198.18.1.1/1k.bin"
bench_in c2 h2tls --proto h2 -c 4 -m 4 -n 600 --rate 150 "${CA[@]}" \
  --resolve localhost:443:198.18.1.1 "https://localhost/1k.bin"
bench_in cs spdy --proto spdy/3.1 -c 8 -m 4 -n 800 --rate 200 "http://198.18.4.1/1k.bin"
# h2load paced too (--rps per connection): 4 connections x 50/s, 600 requests in ~3 s.
ip netns exec "$NS-c2" timeout 30 h2load -c 4 -m 4 --rps 50 -n 600 "http://198.18.1.1/1k.bin" \
  >"$WORK/h2load.out" 2>&1 &
CLIENT_PIDS+=($!)

sleep 1.5
haproxy_cmd "set server speedyd_plain/s1 state drain" >"$WORK/drain.out"
haproxy_cmd "set server speedyd_tls/s1 state drain" >>"$WORK/drain.out"
sleep 0.3
in_flight_at_stop=$(grep -c . "$WORK/s1.access.log" 2>/dev/null)
STOP_START=$(date +%s%N)
stop_server s1
STOP_MS=$((($(date +%s%N) - STOP_START) / 1000000))
check "s1 stopped on SIGTERM in the middle of the load (exit status; ${STOP_MS} ms)" "$STOP_STATUS" 0
check_grep "s1 logged its SIGTERM" "SIGTERM: shutting down" "$WORK/s1.error.log"
for pid in "${CLIENT_PIDS[@]}"; do wait "$pid"; done

# ---- what the clients report ----------------------------------------------------------
total=0
reconnected=0
for name in h2c h2tls spdy; do
  requests=$(json "$WORK/$name.json" r.requests)
  check "$name: every request answered and verified" \
    "$(json "$WORK/$name.json" '[r.ok === r.requests, r.errors_total, r.status_classes["2xx"] === r.requests].join(" ")')" \
    "true 0 true"
  echo "   $name: $requests requests, $(json "$WORK/$name.json" r.reconnects) reconnects, $(json "$WORK/$name.json" r.retried) retried"
  total=$((total + $(json "$WORK/$name.json" r.ok)))
  reconnected=$((reconnected + ($(json "$WORK/$name.json" r.reconnects) > 0)))
done
check "each speedy bench had connections on s1 and replaced them" "$reconnected" 3
check "h2c and SPDY clients: the planned counts" \
  "$(json "$WORK/h2c.json" r.requests) $(json "$WORK/h2tls.json" r.requests) $(json "$WORK/spdy.json" r.requests)" \
  "1000 600 800"
check "the protocols spoken (h2c is HTTP/2 too)" \
  "$(json "$WORK/h2c.json" r.protocol) $(json "$WORK/h2tls.json" r.protocol) $(json "$WORK/spdy.json" r.protocol)" \
  "h2 h2 spdy/3.1"
# h2load neither opens a new connection after GOAWAY nor sends a refused stream again:
# the requests it had planned for a connection to s1 are never sent ("started" < total,
# reported failed), and one it had queued in nghttp2 when the first GOAWAY arrived ends
# without a response (nghttp2 no longer sends it). So h2load is held to this: every
# response it got is a 200, and the logs count exactly its successes (nothing else was
# served for it); speedy bench above is the client held to "no request lost".
read -r h2l_total h2l_started h2l_done h2l_ok < <(sed -n \
  's/^requests: \([0-9]*\) total, \([0-9]*\) started, \([0-9]*\) done, \([0-9]*\) succeeded.*/\1 \2 \3 \4/p' \
  "$WORK/h2load.out")
check "h2load: every response a 200 (600 planned)" \
  "${h2l_total:-none} $((${h2l_ok:-0} > 0 && ${h2l_done:-0} - ${h2l_ok:-0} <= 8)) $(grep -c '^status codes: [0-9]* 2xx, 0 3xx, 0 4xx, 0 5xx' "$WORK/h2load.out")" \
  "600 1 1"
echo "   h2load: ${h2l_started:-?} of ${h2l_total:-?} started (the rest were planned for connections that got GOAWAY), ${h2l_done:-?} done, ${h2l_ok:-?} succeeded"
total=$((total + ${h2l_ok:-0}))
clients_ok=$((1000 + 600 + 800 + ${h2l_ok:-0}))

# ---- what the servers logged ------------------------------------------------------------
stop_server s2
check "s2 stopped cleanly at the end" "$STOP_STATUS" 0
s1_lines=$(grep -c . "$WORK/s1.access.log")
s2_lines=$(grep -c . "$WORK/s2.access.log")
echo "   s1 answered $s1_lines requests ($in_flight_at_stop when it was drained), s2 $s2_lines"
check "the access logs add up to what the clients report" "$((s1_lines + s2_lines)) $total" \
  "$clients_ok $clients_ok"
check "both instances served before the stop" "$((s1_lines > 0 && s2_lines > 0))" 1
check "every logged request was answered 200" \
  "$(cat "$WORK/s1.access.log" "$WORK/s2.access.log" | awk '$9 != 200' | wc -l)" 0
# The client address is the one in the PROXY v2 header: the h2 clients' namespace for
# HTTP/2, the SPDY clients' for SPDY; never HAProxy's own 198.18.2.1.
for s in s1 s2; do
  log=$WORK/$s.access.log
  check "$s: HTTP/2 requests logged as from 198.18.1.2" \
    "$(grep -E ' h2c? ' "$log" | cut -d' ' -f1 | sort -u | tr '\n' ' ')" "198.18.1.2 "
  check "$s: SPDY requests logged as from 198.18.4.2" \
    "$(grep ' spdy/3.1 ' "$log" | cut -d' ' -f1 | sort -u | tr '\n' ' ')" "198.18.4.2 "
  check "$s: nothing logged as from the balancer" "$(grep -c '^198\.18\.2\.1 ' "$log")" 0
done
finish
