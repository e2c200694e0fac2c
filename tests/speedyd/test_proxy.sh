#!/bin/bash
# test_proxy.sh — the PROXY protocol on a ,proxy listener (issue 18). A raw-socket client
# written from HAProxy's proxy-protocol.txt sends v1 and v2 headers, whole and a byte at a
# time, then HTTP/1.1 (plaintext and TLS): the access log must show the client named in
# the header, not 127.0.0.1, and the per-address connection limit must count that client.
# Malformed, missing, oversized and slow headers are refused with a log line; a plain
# listener answers a PROXY header as the bad HTTP it is there. Then HAProxy itself (when
# installed) relays SPDY and HTTP/1.1 with send-proxy-v2, its client address rewritten to
# one that loopback cannot have, and node's spdy-transport talks SPDY through it.
source "$(dirname "$0")/lib.sh" "$@"
[ -x /usr/bin/python3 ] || skip "/usr/bin/python3 is not installed"
need openssl
make_certs
SITE=$WORK/site
mkdir -p "$SITE"
echo "hello through a balancer" >"$SITE/index.html"

# The CLI: ,proxy in either order with ,tls, each flag once.
"$SPEEDYD" --docroot "$SITE" --listen 0,proxy,proxy 2>"$WORK/e1"
check "a repeated ,proxy is a usage error" "$?" 2
"$SPEEDYD" --docroot "$SITE" --listen 0,proxy, 2>/dev/null
check "an empty flag is a usage error" "$?" 2
"$SPEEDYD" --docroot "$SITE" --listen 0,prox 2>/dev/null
check "an unknown flag is a usage error" "$?" 2
"$SPEEDYD" --docroot "$SITE" --listen 0,proxy,tls 2>"$WORK/e2"
check "proxy,tls still needs --cert and --key" "$?" 2
check_grep "... and says so" "needs --cert FILE and --key FILE" "$WORK/e2"
"$SPEEDYD" --help >"$WORK/help"
check_grep "--help documents ,proxy" "PORT\[,tls\]\[,proxy\]" "$WORK/help"

start_server main --listen 127.0.0.1:0,proxy --listen 127.0.0.1:0 \
  --listen 127.0.0.1:0,tls,proxy --listen 127.0.0.1:0,proxy,tls \
  --cert "$WORK/certs/server.pem" --key "$WORK/certs/server.key" \
  --docroot "$SITE" --access-log "$WORK/access.log" --workers 1 \
  --handshake-timeout 1500 --max-connections-per-address 2
PROXIED=$PORT_main
PLAIN=$PORT2_main
PORTS=()
mapfile -t PORTS <"$WORK/main.ports"
TLS_PROXIED=${PORTS[2]}
check_grep "the listening line says which ports expect the header" \
  "127.0.0.1:$PROXIED (plaintext, PROXY protocol), 127.0.0.1:$PLAIN (plaintext), 127.0.0.1:${PORTS[2]} (TLS, PROXY protocol)" \
  "$WORK/main.stderr"

cat >"$WORK/client.py" <<'EOF'
# client.py PORT CASE [CA_FILE]: one case of test_proxy.sh; prints what happened: the
# HTTP status, "closed" (the server ended the connection without answering), or for the
# limit case "third=... fourth=...".
import socket, ssl, struct, sys, time

port, case = int(sys.argv[1]), sys.argv[2]
SIG = b"\r\n\r\n\x00\r\nQUIT\n"

def v1(proto, src="", dst="", sport=0, dport=0):
    if proto == "UNKNOWN":
        return b"PROXY UNKNOWN\r\n"
    return f"PROXY {proto} {src} {dst} {sport} {dport}\r\n".encode()

def v2(command, fam, block):
    return SIG + bytes([0x20 | command, fam]) + struct.pack(">H", len(block)) + block

def v2_tcp4(src, dst, sport, dport, tlvs=b""):
    block = socket.inet_pton(socket.AF_INET, src) + socket.inet_pton(socket.AF_INET, dst)
    return v2(1, 0x11, block + struct.pack(">HH", sport, dport) + tlvs)

def v2_tcp6(src, dst, sport, dport):
    block = socket.inet_pton(socket.AF_INET6, src) + socket.inet_pton(socket.AF_INET6, dst)
    return v2(1, 0x21, block + struct.pack(">HH", sport, dport))

def request(name):
    return (f"GET /index.html?case={name} HTTP/1.1\r\nHost: localhost\r\n"
            "Connection: close\r\n\r\n").encode()

def connect():
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    s.settimeout(10)
    return s

def answer(s):
    """The status of the HTTP answer, or "closed" when the server ends without one."""
    data = b""
    try:
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    except (ConnectionResetError, BrokenPipeError):
        pass
    except socket.timeout:
        return "timeout"
    finally:
        s.close()
    if not data:
        return "closed"
    line = data.split(b"\r\n", 1)[0].decode("latin-1")
    return line.split(" ")[1] if line.startswith("HTTP/1.1 ") else "garbage: " + line[:40]

def send_all(s, data, one_byte_at_a_time=False):
    try:
        if not one_byte_at_a_time:
            s.sendall(data)
            return
        for i in range(len(data)):
            s.sendall(data[i:i + 1])
            time.sleep(0.003)
    except (ConnectionResetError, BrokenPipeError):
        pass

def get(header, split=False):
    s = connect()
    send_all(s, header + request(case), split)
    return answer(s)

def refused(header, then_end=False):
    s = connect()
    send_all(s, header)
    if then_end:
        s.shutdown(socket.SHUT_WR)
    return answer(s)

tlvs = bytes([0x01, 0, 2]) + b"h2" + bytes([0x04, 0, 0]) + bytes([0x05, 0, 4]) + b"abcd"
cases = {
    "v1_tcp4": lambda: get(v1("TCP4", "203.0.113.7", "127.0.0.1", 40001, port)),
    "v1_tcp6": lambda: get(v1("TCP6", "2001:db8::7", "::1", 40002, port)),
    "v1_bytewise": lambda: get(v1("TCP4", "198.51.100.9", "127.0.0.1", 40003, port), True),
    "v1_unknown": lambda: get(v1("UNKNOWN")),
    "v2_tcp4_tlvs": lambda: get(v2_tcp4("192.0.2.44", "127.0.0.1", 40004, port, tlvs)),
    "v2_tcp6": lambda: get(v2_tcp6("2001:db8::44", "::1", 40005, port)),
    "v2_bytewise": lambda: get(v2_tcp4("192.0.2.45", "127.0.0.1", 40006, port), True),
    "v2_local": lambda: get(v2(0, 0x00, b"")),
    "bad_v1_port": lambda: refused(v1("TCP4", "192.0.2.1", "127.0.0.1", "040007", port)),
    "bad_v2_command": lambda: refused(v2(2, 0x11, bytes(12))),
    "bad_v2_block": lambda: refused(v2(1, 0x21, bytes(12))),
    "missing": lambda: refused(request("missing")),
    "oversized_v1": lambda: refused(b"PROXY UNKNOWN " + b"x" * 120 + b"\r\n"),
    "oversized_v2": lambda: refused(SIG + bytes([0x21, 0x11, 0xff, 0xff])),
    "cut": lambda: refused(b"PROXY TCP4 192.0.2.1", then_end=True),
    "haproxy_h1": lambda: get(b""),
    "plain_listener": lambda: get(v1("TCP4", "203.0.113.99", "127.0.0.1", 40008, port)),
}

def slow():
    s = connect()
    s.sendall(b"PROXY TCP4 ")
    start = time.monotonic()
    result = answer(s)
    elapsed = time.monotonic() - start
    if result == "closed" and 1.2 <= elapsed <= 6:
        return "closed at the timeout"
    return f"{result} after {elapsed:.1f}s"

def limit():
    # --max-connections-per-address 2: two held connections from 192.0.2.200, a third
    # from it is refused, one from 192.0.2.201 is served; all come from 127.0.0.1.
    held = []
    for i in range(2):
        s = connect()
        s.sendall(v1("TCP4", "192.0.2.200", "127.0.0.1", 41000 + i, port) +
                  b"GET /index.html?case=held HTTP/1.1\r\n")
        held.append(s)
    time.sleep(0.3)
    s = connect()
    send_all(s, v1("TCP4", "192.0.2.200", "127.0.0.1", 41002, port) + request("third"))
    third = answer(s)
    s = connect()
    send_all(s, v1("TCP4", "192.0.2.201", "127.0.0.1", 41003, port) + request("fourth"))
    fourth = answer(s)
    for s in held:
        s.close()
    return f"third={third} fourth={fourth}"

def tls_get():
    s = connect()
    s.sendall(v2_tcp4("192.0.2.55", "127.0.0.1", 40009, port))
    context = ssl.create_default_context(cafile=sys.argv[3])
    context.set_alpn_protocols(["http/1.1"])
    t = context.wrap_socket(s, server_hostname="localhost")
    t.sendall(request(case))
    return answer(t)

if case == "slow":
    print(slow())
elif case == "limit":
    print(limit())
elif case.startswith("tls"):
    print(tls_get())
else:
    print(cases[case]())
EOF
client() { timeout 30 /usr/bin/python3 "$WORK/client.py" "$@"; }

# Valid headers: answered, and logged under the client they name.
for case in v1_tcp4 v1_tcp6 v1_bytewise v1_unknown v2_tcp4_tlvs v2_tcp6 v2_bytewise v2_local; do
  check "$case: answered" "$(client "$PROXIED" $case)" 200
done
client "$TLS_PROXIED" tls_v2 "$WORK/certs/ca.pem" >"$WORK/tls.out"
check "v2 header, then TLS: answered" "$(cat "$WORK/tls.out")" 200
client "${PORTS[3]}" tls_flags_reversed "$WORK/certs/ca.pem" >"$WORK/tls2.out"
check ",proxy,tls is the same as ,tls,proxy" "$(cat "$WORK/tls2.out")" 200

# Bad headers: closed without an answer, with a line in the error log.
for case in bad_v1_port bad_v2_command bad_v2_block missing oversized_v1 oversized_v2 cut; do
  check "$case: refused" "$(client "$PROXIED" $case)" closed
done
check "a slow header ends at the handshake timeout (1.5 s)" "$(client "$PROXIED" slow)" \
  "closed at the timeout"
check "the per-address limit counts the client in the header" "$(client "$PROXIED" limit)" \
  "third=closed fourth=200"
check "a plain listener takes a PROXY header for bad HTTP" "$(client "$PLAIN" plain_listener)" 400

# HAProxy relays with send-proxy-v2 (plaintext SPDY, TLS SPDY, HTTP/1.1), with the client
# address it sends set to 198.51.100.77 (loopback clients cannot have it).
haproxy_bin=$(command -v haproxy || { [ -x /usr/sbin/haproxy ] && echo /usr/sbin/haproxy; })
if [ -z "$haproxy_bin" ]; then
  echo "SKIP part: haproxy is not installed (scripts/install-deps installs it): no SPDY through a real balancer"
elif ! command -v node >/dev/null || [ ! -d "$SRC/node_modules/spdy-transport" ]; then
  echo "SKIP part: node or node_modules/spdy-transport is missing (npm ci): no SPDY through HAProxy"
else
  read -r HP1 HP2 < <(/usr/bin/python3 -c '
import socket
ss = [socket.socket() for _ in range(2)]
for s in ss: s.bind(("127.0.0.1", 0))
print(*[s.getsockname()[1] for s in ss])')
  cat >"$WORK/haproxy.cfg" <<EOF
defaults
  mode tcp
  timeout connect 5s
  timeout client 30s
  timeout server 30s
frontend plain
  bind 127.0.0.1:$HP1
  tcp-request connection set-src ipv4(198.51.100.77)
  default_backend speedyd_plain
frontend tls
  bind 127.0.0.1:$HP2
  tcp-request connection set-src ipv4(198.51.100.78)
  default_backend speedyd_tls
backend speedyd_plain
  server s1 127.0.0.1:$PROXIED send-proxy-v2
backend speedyd_tls
  server s1 127.0.0.1:$TLS_PROXIED send-proxy-v2
EOF
  "$haproxy_bin" -f "$WORK/haproxy.cfg" -db >"$WORK/haproxy.stdout" 2>"$WORK/haproxy.stderr" &
  SERVER_PIDS+=($!)
  for _ in $(seq 1 50); do
    /usr/bin/python3 -c "import socket; socket.create_connection(('127.0.0.1', $HP2), 1).close()" \
      2>/dev/null && break
    sleep 0.1
  done
  spdy() { timeout 60 node "$TESTS/spdy_client.js" --timeout-ms 30000 --scenario get "$@"; }
  spdy --port "$HP1" --version 3.1 --path "/index.html?case=haproxy_spdy" >"$WORK/hp1.json"
  check "SPDY/3.1 through HAProxy: answered" "$(json "$WORK/hp1.json" r.ok)" true
  spdy --port "$HP2" --tls --ca "$WORK/certs/ca.pem" --version 3 \
    --path "/index.html?case=haproxy_tls_spdy" >"$WORK/hp2.json"
  check "SPDY/3 over TLS through HAProxy: answered" "$(json "$WORK/hp2.json" r.ok)" true
  check "HTTP/1.1 through HAProxy: answered" "$(client "$HP1" haproxy_h1)" 200
fi

stop_server main
check "speedyd stops cleanly" "$STOP_STATUS" 0

# SIGTERM while a connection is inside its header (the default 10 s handshake timeout):
# the closing listener ends it, speedyd does not wait for the timeout.
start_server stop --listen 127.0.0.1:0,proxy --docroot "$SITE" --workers 1
/usr/bin/python3 -c '
import socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.sendall(b"PROXY TCP4 ")
time.sleep(20)' "$PORT_stop" &
SERVER_PIDS+=($!)
sleep 0.5
started=$(date +%s%N)
stop_server stop
elapsed_ms=$((($(date +%s%N) - started) / 1000000))
check "SIGTERM ends a connection waiting for its header at once (${elapsed_ms} ms)" \
  "$STOP_STATUS $((elapsed_ms < 5000))" "0 1"

# The access log names the clients of the headers (the socket peer is always 127.0.0.1).
logged() { grep -F "case=$1 " "$WORK/access.log" | cut -d' ' -f1; }
check "v1 TCP4 logged as its client" "$(logged v1_tcp4)" 203.0.113.7
check "v1 TCP6 logged as its client" "$(logged v1_tcp6)" 2001:db8::7
check "v1 byte by byte logged as its client" "$(logged v1_bytewise)" 198.51.100.9
check "v1 UNKNOWN keeps the socket's address" "$(logged v1_unknown)" 127.0.0.1
check "v2 TCP4 with TLVs logged as its client" "$(logged v2_tcp4_tlvs)" 192.0.2.44
check "v2 TCP6 logged as its client" "$(logged v2_tcp6)" 2001:db8::44
check "v2 byte by byte logged as its client" "$(logged v2_bytewise)" 192.0.2.45
check "v2 LOCAL keeps the socket's address" "$(logged v2_local)" 127.0.0.1
check "v2 then TLS logged as its client" "$(logged tls_v2)" 192.0.2.55
check "the limited client's other address was served" "$(logged fourth)" 192.0.2.201
check "nothing logged for refused headers or the refused third connection" \
  "$(grep -c -E 'case=(missing|third) ' "$WORK/access.log")" 0
check "the plain listener did not believe the header" "$(grep -c 203.0.113.99 "$WORK/access.log")" 0
if [ -n "$haproxy_bin" ] && [ -s "$WORK/hp1.json" ]; then
  check "SPDY through HAProxy logged as its client" "$(logged haproxy_spdy)" 198.51.100.77
  check "SPDY over TLS through HAProxy logged as its client" "$(logged haproxy_tls_spdy)" 198.51.100.78
  check "HTTP/1.1 through HAProxy logged as its client" "$(logged haproxy_h1)" 198.51.100.77
  check_grep "... with the protocol" "case=haproxy_spdy .* spdy/3.1 " "$WORK/access.log"
fi

# One error-log line per refused header, from the balancer's address, saying why.
E=$WORK/main.error.log
check_grep "bad v1 port logged" "127.0.0.1:[0-9]*: connection refused: bad PROXY protocol header: v1: bad port" "$E"
check_grep "unknown v2 command logged" "bad PROXY protocol header: v2: unknown command" "$E"
check_grep "short v2 address block logged" "v2: address block shorter than its family needs" "$E"
check_grep "missing header logged" "bad PROXY protocol header: no PROXY protocol header" "$E"
check_grep "oversized v1 logged" "v1: no CRLF in the first 107 bytes" "$E"
check_grep "oversized v2 logged" "v2: header over 4096 bytes" "$E"
check_grep "cut header logged" "the connection ended inside the header" "$E"
check_grep "slow header logged" "timed out: no complete PROXY protocol header in time" "$E"
finish
