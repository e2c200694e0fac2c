#!/bin/bash
# run.sh CASE — one integration test of `speedy load` against tests/load/server.js (a
# stand-in replay server: node's spdy-transport or http) serving tests/load/plan.json on
# 127.0.0.1. Checks the result line, the HAR, and the server's log of connections,
# requests and body chunks (discovery order, connection counts, dispatch order, pushes).
# Exit 0 pass, 1 fail, 77 skip (no node, node_modules or python3). Everything lives in a
# temporary directory removed at exit; the server is stopped by its PID.
set -u
case=${1:?usage: run.sh CASE}
src=${SPEEDY_SOURCE_DIR:?}
speedy=${SPEEDY_BUILD_DIR:?}/src/speedy
here=$src/tests/load
command -v node >/dev/null 2>&1 || { echo "SKIP: node not found"; exit 77; }
command -v python3 >/dev/null 2>&1 || { echo "SKIP: python3 not found"; exit 77; }
[ -d "$src/node_modules/spdy-transport" ] || {
  echo "SKIP: $src/node_modules/spdy-transport missing (run npm ci)"; exit 77; }
export NODE_PATH=$src/node_modules

work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  rm -rf "$work"
}
trap cleanup EXIT
cd "$work" || exit 1
plan=$here/plan.json
fail() { echo "FAIL ($case): $*"; for f in err server.err; do [ -s $f ] && { echo "--- $f"; tail -20 $f; }; done; exit 1; }

# start_server ARGS... — sets PORTS (one per host, or one with --single)
# ports_of FILE — waits up to 10 s for {"ports":[...]} in FILE and prints the ports
ports_of() {
  local ports
  for _ in $(seq 200); do
    ports=$(python3 -c 'import json,sys; print(" ".join(map(str, json.load(open(sys.argv[1]))["ports"])))' "$1" 2>/dev/null)
    [ -n "$ports" ] && { echo "$ports"; return 0; }
    sleep 0.05
  done
  return 1
}

start_server() {
  mkfifo s.in
  node "$here/server.js" --plan "$plan" --log log.jsonl "$@" < s.in > s.ports 2> server.err &
  pids+=($!)
  exec {fd}> s.in # holds the server's stdin open until we exit
  PORTS=$(ports_of s.ports) || fail "server did not start"
}

# addrs_of PORT... — --host-addr I=127.0.0.1:PORT for host I, in order
addrs_of() { local i=0; for p in "$@"; do printf -- '--host-addr %d=127.0.0.1:%d ' $i "$p"; i=$((i+1)); done; }
multi_addrs() { addrs_of $PORTS; }

certs() {
  q() { "$@" >/dev/null 2>&1 || fail "openssl: $*"; }
  q openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
    -subj "/CN=speedy load test CA" -keyout ca.key -out ca.pem \
    -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign
  q openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=www.example.test" \
    -keyout server.key -out server.csr
  printf 'subjectAltName=DNS:www.example.test,DNS:cdn.example.test\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n' > ext.cnf
  q openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 \
    -extfile ext.cnf -out server.pem
}

# load ARGS... — runs the loader (result in result.jsonl, HAR in har.json, stderr in err);
# a sanitizer report fails the test. Returns the loader's exit status.
load() {
  "$speedy" load "$plan" --timeout 30 --result result.jsonl --har-out har.json "$@" 2> err
  local rc=$?
  grep -qE "ERROR: (Address|Leak)Sanitizer|runtime error:" err && { cat err; fail "sanitizer report"; }
  return $rc
}

# check KIND... — python checks over result.jsonl, har.json, log.jsonl and the plan
check() { python3 "$here/check.py" "$plan" "$@" || fail "check $*"; }

# batch_check SETTING VALUE HOW — the last result's settings have SETTING = VALUE, and the
# references found at one moment (the largest such batch, four or more) start as HOW says:
# spaced (the k-th no earlier than k times VALUE ms after the moment), together (two within
# 5 ms of each other) or spread (none before the moment, over more than 10 ms).
batch_check() {
  python3 - "$@" <<'PY'
import json, sys
setting, value, how = sys.argv[1], int(sys.argv[2]), sys.argv[3]
d = json.loads(open("result.jsonl").read().splitlines()[-1])
assert d["valid"], d["invalid_reason"]
assert d["settings"][setting] == value, d["settings"]
found = {}
for x in d["resources"]:
    if x["id"] != 0:
        found.setdefault(x["discovered_ms"], []).append(x["start_ms"])
when, batch = max(found.items(), key=lambda kv: len(kv[1]))
batch.sort()
assert len(batch) >= 4, found
if how == "spaced":
    for k, start in enumerate(batch):
        assert start >= when + k * value - 1, (k, start, when, batch)
elif how == "together":
    assert min(b - a for a, b in zip(batch, batch[1:])) < 5, batch
else:
    assert min(batch) >= when - 1, (when, batch)
    assert max(batch) - min(batch) > 10, ("all at one moment", when, batch)
PY
}

case $case in
http1_fcfs)
  start_server --http1
  load --http1 $(multi_addrs) || fail "exit $?"
  check valid discovery once "conns-per-port<=6" "conns-on-port0>=2" fields har \
    protocol=http/1.1 dispatch=fcfs headers-sent
  # --delayable-limit 2: never more than two images and scripts between request and end
  mv result.jsonl unlimited.jsonl; : > log.jsonl
  load --http1 --delayable-limit 2 $(multi_addrs) || fail "exit $?"
  check valid discovery once "conns-per-port<=6" protocol=http/1.1
  python3 - "$plan" unlimited.jsonl result.jsonl <<'EOF2' || fail "--delayable-limit 2 not kept"
import json, sys
types = [r["type"] for r in json.load(open(sys.argv[1]))["resources"]]
def most_in_flight(path):
    line = json.loads(open(path).read().splitlines()[-1])
    events = []
    for r in line["resources"]:
        if types[r["id"]] in ("image", "script"):
            events += [(r["start_ms"], 1), (r["end_ms"], -1)]
    now = most = 0
    for _, step in sorted(events, key=lambda e: (e[0], e[1])):
        now += step
        most = max(most, now)
    return most
unlimited, limited = most_in_flight(sys.argv[2]), most_in_flight(sys.argv[3])
if limited > 2 or unlimited <= 2:
    sys.exit("at most %d in flight with the limit, %d without" % (limited, unlimited))
EOF2
  ;;
http1_priority)
  start_server --http1
  load --http1 --connections 1 --dispatch priority $(multi_addrs) || fail "exit $?"
  check valid discovery once "conns-per-port<=1" "before:10:11" dispatch=priority
  # the control: FCFS asks for the images first (discovered before /pushed.js)
  : > log.jsonl; rm -f result.jsonl
  load --http1 --connections 1 $(multi_addrs) || fail "exit $?"
  check valid "before:11:10" ;;
http1_pipeline)
  start_server --http1
  load --http1 --connections 1 --pipeline $(multi_addrs) || fail "exit $?"
  check valid discovery once "conns-per-port<=1" ;;
http1_single)
  start_server --http1 --single
  load --http1 --single "127.0.0.1:$PORTS" || fail "exit $?"
  check valid discovery once "conns-per-port<=6" mode=single-domain hosts-named ;;
spdy_multi)
  start_server
  load $(multi_addrs) || fail "exit $?"
  check valid discovery once "conns-per-port==1" connections=2 protocol=spdy/3.1 fields har \
    priorities headers-sent ;;
spdy_single)
  start_server --single
  load --single "127.0.0.1:$PORTS" || fail "exit $?"
  check valid discovery once connections=1 mode=single-domain hosts-named ;;
spdy_v3)
  start_server --version 3
  load --spdy 3 $(multi_addrs) || fail "exit $?"
  check valid discovery once "conns-per-port==1" protocol=spdy/3 ;;
spdy_v2)
  start_server --version 2
  load --spdy 2 $(multi_addrs) || fail "exit $?"
  check valid discovery once "conns-per-port==1" protocol=spdy/2 ;;
push_used)
  start_server --single --push 10
  load --single "127.0.0.1:$PORTS" || fail "exit $?"
  check valid pushed=10 once ;;
h2_coalesced)
  # node's http2 on one port: both hosts at one address, a certificate naming both
  certs
  start_server --h2 --single --tls server.pem server.key
  load --proto h2 --tls --cacert ca.pem --coalesce \
    --host-addr "0=127.0.0.1:$PORTS" --host-addr "1=127.0.0.1:$PORTS" || fail "exit $?"
  check valid discovery once connections=1 "conns-per-port==1" protocol=h2 mode=coalesced
  python3 -c 'import json,sys; d=json.load(open("result.jsonl")); sys.exit(d["uncoalesced_hosts"] != 0)' ||
    fail "uncoalesced_hosts should be 0"
  # without --coalesce: a connection per host, the same address or not
  rm -f result.jsonl
  load --proto h2 --tls --cacert ca.pem \
    --host-addr "0=127.0.0.1:$PORTS" --host-addr "1=127.0.0.1:$PORTS" || fail "exit $?"
  check valid connections=2 mode=multi-domain ;;
h2_uncoalesced)
  # The default certificate names www only: cdn leaves for a connection of its own, whose
  # SNI gets a certificate naming cdn.
  certs
  q() { "$@" >/dev/null 2>&1 || fail "openssl: $*"; }
  for name in www cdn; do
    q openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=$name.example.test" \
      -keyout $name.key -out $name.csr
    printf 'subjectAltName=DNS:%s.example.test\nextendedKeyUsage=serverAuth\n' $name > $name.cnf
    q openssl x509 -req -in $name.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 \
      -extfile $name.cnf -out $name.pem
  done
  start_server --h2 --single --tls www.pem www.key --sni cdn.example.test cdn.pem cdn.key
  load --proto h2 --tls --cacert ca.pem --coalesce -v \
    --host-addr "0=127.0.0.1:$PORTS" --host-addr "1=127.0.0.1:$PORTS" || fail "exit $?"
  check valid once connections=2 protocol=h2 mode=coalesced
  grep -q "the certificate of www.example.test does not name cdn.example.test: not coalesced" err ||
    fail "no message for the host left out"
  python3 -c 'import json,sys; d=json.load(open("result.jsonl")); sys.exit(d["uncoalesced_hosts"] != 1)' ||
    fail "uncoalesced_hosts should be 1"
  python3 - <<'PY' || fail "cdn's requests went to www's connection"
import json
log = [json.loads(l) for l in open("log.jsonl")]
sni = {e["conn"]: e["sni"] for e in log if e["ev"] == "conn"}
for e in log:
    if e["ev"] == "req":
        assert sni[e["conn"]] == e["host"], (e, sni)
PY
  ;;
h2_early_hints)
  # 103 Early Hints with Link rel=preload (no X-Subresources) from node's http2, h2c
  start_server --h2 --hint 9
  load --proto h2c $(multi_addrs) || fail "exit $?"
  check valid hinted=9 once protocol=h2 ;;
chromium_headers)
  # --chromium-headers over HTTP/1.1 and h2c (node's http and http2 parse them): the
  # recording's headers (a user agent of 2011, cookies) give way to what Chromium sends for
  # each way the page asks: the navigation, elements, a style sheet's url() and @font-face,
  # fetch(), a redirect as its source. www and cdn.example.test are one site.
  for proto in http1 h2c; do
    if [ $proto = http1 ]; then start_server --http1; else start_server --h2; fi
    args=(--http1); [ $proto = h2c ] && args=(--proto h2c)
    load "${args[@]}" --chromium-headers $(multi_addrs) || fail "$proto: exit $?"
    check valid once
    python3 - "$plan" $proto <<'PY' || fail "$proto: not Chromium's headers"
import json, sys
log = [json.loads(l) for l in open("log.jsonl")]
sent = {e["id"]: e["headers"] for e in log if e["ev"] == "req"}
www, css = "http://www.example.test/", "http://www.example.test/style.css"
want = {  # id: site, mode, dest, referer, origin
    0: ("none", "navigate", "document", None, None),
    1: ("same-origin", "no-cors", "style", www, None),
    2: ("same-site", "no-cors", "script", www, None),
    3: ("same-site", "no-cors", "image", www, None),
    4: ("same-origin", "cors", "font", css, None),
    5: ("same-site", "no-cors", "image", www, None),
    6: ("same-origin", "no-cors", "image", www, None),
    7: ("same-origin", "no-cors", "image", www, None),
    8: ("same-site", "cors", "empty", www, "http://www.example.test"),
    9: ("same-origin", "cors", "empty", www, None),
}
for i, (site, mode, dest, referer, origin) in want.items():
    h = sent[i]
    got = (h.get("sec-fetch-site"), h.get("sec-fetch-mode"), h.get("sec-fetch-dest"),
           h.get("referer"), h.get("origin"))
    assert got == (site, mode, dest, referer, origin), (i, got)
for i, h in sent.items():
    assert "HeadlessChrome/156" in h["user-agent"], (i, h["user-agent"])
    assert "cookie" not in h and h.get("pragma") == "no-cache", (i, h)
    assert h["accept-encoding"] == "gzip, deflate, br, zstd", (i, h)
assert sent[0]["sec-fetch-user"] == "?1" and "sec-fetch-user" not in sent[1]
d = json.loads(open("result.jsonl").read().splitlines()[-1])
assert d["settings"]["request_headers"] == "chromium", d["settings"]
# HTTP/2's priority field as Chromium's (none over HTTP/1.1): the page u=0 incremental, a
# style sheet and its font u=0, an async script none (u=3), a document's first images
# u=2 incremental, a style sheet's image "i" (u=3 incremental), fetch() u=1 incremental.
prio = {0: "u=0, i", 1: "u=0", 2: None, 3: "u=2, i", 4: "u=0", 5: "i", 8: "u=1, i",
        9: "u=1, i"}
for i, want in prio.items():
    got = sent[i].get("priority")
    assert got == (want if sys.argv[2] == "h2c" else None), (i, got, want)
PY
    kill "${pids[@]}" 2>/dev/null; pids=(); rm -f s.in s.ports result.jsonl; : > log.jsonl
  done
  # without the option: the recorded ones
  start_server --http1
  load --http1 $(multi_addrs) || fail "exit $?"
  python3 -c '
import json
log = [json.loads(l) for l in open("log.jsonl")]
for e in log:
    if e["ev"] == "req":
        assert "Chrome/12.0" in e["ua"] and "sec-fetch-dest" not in e["headers"], e
d = json.loads(open("result.jsonl").read().splitlines()[-1])
assert d["settings"]["request_headers"] == "recorded", d["settings"]
' || fail "the recorded headers were not sent" ;;
blocking_css)
  # --blocking-css over HTTP/1.1: the style sheet's font and image (4, 5) are asked for when
  # the elements that use them exist, once the document has arrived and its style sheet has
  # loaded (Chromium's parser waits for the sheet), not when the sheet alone has.
  start_server --http1
  load --http1 --blocking-css $(multi_addrs) || fail "exit $?"
  check valid discovery once
  python3 - <<'PY' || fail "a style sheet's children found before the parser reached them"
import json
d = json.loads(open("result.jsonl").read().splitlines()[-1])
assert d["settings"]["blocking_css"] is True, d["settings"]
r = {x["id"]: x for x in d["resources"]}
for i in (4, 5):
    assert r[i]["discovered_ms"] >= max(r[0]["end_ms"], r[1]["end_ms"]), (i, r[i], r[0], r[1])
PY
  load --http1 $(multi_addrs) || fail "exit $?"
  python3 -c '
import json
d = json.loads(open("result.jsonl").read().splitlines()[-1])
assert d["settings"]["blocking_css"] is False, d["settings"]
' || fail "blocking_css set without the option" ;;
document_delay)
  # --document-delay 150: the document's references (all but 4, 5, 7, 9) are found with
  # its bytes but none is asked for before 150 ms after its first byte; without the option
  # the first ones go at once; a style sheet's (4, 5) are not held beyond the sheet.
  start_server --http1
  load --http1 --document-delay 150 $(multi_addrs) || fail "exit $?"
  check valid discovery once
  python3 - <<'PY' || fail "a document's references asked for before the delay"
import json
d = json.loads(open("result.jsonl").read().splitlines()[-1])
assert d["settings"]["document_delay_ms"] == 150, d["settings"]
r = {x["id"]: x for x in d["resources"]}
kids = [i for i in r if i not in (0, 4, 5, 7, 9)]
parser = r[0]["ttfb_ms"] + 150
for i in kids:
    assert r[i]["start_ms"] >= parser - 1, (i, r[i], r[0])
assert any(r[i]["discovered_ms"] < parser - 50 for i in kids), "none found before: not held"
PY
  load --http1 $(multi_addrs) || fail "exit $?"
  python3 - <<'PY' || fail "references held without the option"
import json
d = json.loads(open("result.jsonl").read().splitlines()[-1])
assert d["settings"]["document_delay_ms"] == 0, d["settings"]
r = {x["id"]: x for x in d["resources"]}
assert r[1]["start_ms"] < r[0]["ttfb_ms"] + 100, (r[0], r[1])
PY
  ;;
frame_delay)
  # --frame-delay 150: with image 11 made a frame (a document the page names at 10,000, as
  # images 12-18 are), the frame is asked for 150 ms after them; without the option with them.
  python3 - "$plan" <<'PY' > frame-plan.json || fail "cannot make the plan"
import json, sys
p = json.load(open(sys.argv[1]))
p["resources"][11]["type"] = "document"
json.dump(p, sys.stdout)
PY
  plan=$work/frame-plan.json
  start_server --http1
  for delay in 150 0; do
    load --http1 --frame-delay $delay $(multi_addrs) || fail "exit $?"
    python3 - $delay <<'PY' || fail "--frame-delay $delay: the frame's request out of place"
import json, sys
delay = int(sys.argv[1])
d = json.loads(open("result.jsonl").read().splitlines()[-1])
assert d["valid"], d["invalid_reason"]
assert d["settings"]["frame_delay_ms"] == delay, d["settings"]
r = {x["id"]: x for x in d["resources"]}
others = min(r[i]["discovered_ms"] for i in range(12, 19))
assert r[11]["discovered_ms"] == others, (r[11], others)
if delay:
    assert r[11]["start_ms"] >= others + delay - 1, (r[11], others)
else:
    assert r[11]["start_ms"] < others + 100, (r[11], others)
PY
  done ;;
request_spacing)
  # --request-spacing 40: of the references found at one moment, the k-th to go starts
  # no earlier than k times 40 ms after it (a connection may delay it more); without the
  # option several go in the same instant.
  start_server --http1
  load --http1 --request-spacing 40 $(multi_addrs) || fail "exit $?"
  batch_check request_spacing_ms 40 spaced || fail "--request-spacing 40: requests out of step"
  load --http1 --request-spacing 0 $(multi_addrs) || fail "exit $?"
  batch_check request_spacing_ms 0 together || fail "--request-spacing 0: requests spaced"
  ;;
jitter)
  # --jitter 150: the references found at one moment start up to 150 ms after it, each at
  # a moment of its own (a connection may delay it more); the result's settings say so.
  start_server --http1
  load --http1 --jitter 150 --repetition 3 $(multi_addrs) || fail "exit $?"
  batch_check jitter_ms 150 spread || fail "--jitter 150: requests not spread"
  ;;
load_event)
  # --load-event: the page load time ends at the last of the resources Chromium's load
  # event waits for, not at the fetch()es (the plan's "other" 8, a beacon asked for 50 ms
  # late, and 9, a script's); last_byte_ms and the HAR's onLoad say which is which.
  start_server --http1
  for mode in all event; do
    : > log.jsonl
    if [[ $mode == event ]]; then load --http1 --load-event $(multi_addrs) || fail "exit $?"
    else load --http1 $(multi_addrs) || fail "exit $?"; fi
    python3 - "$mode" <<'PY' || fail "--load-event ($mode): times wrong"
import json, sys
mode = sys.argv[1]
d = json.loads(open("result.jsonl").read().splitlines()[-1])
assert d["valid"], d["invalid_reason"]
assert d["settings"]["load_event"] == (mode == "event"), d["settings"]
ends = {x["id"]: x["end_ms"] for x in d["resources"]}
last = max(ends.values())
waited = max(e for i, e in ends.items() if mode == "all" or i not in (8, 9))
assert abs(d["last_byte_ms"] - last) < 0.11, (d["last_byte_ms"], last)
assert abs(d["plt_ms"] - waited) < 0.11, (mode, d["plt_ms"], waited, ends)
onload = json.load(open("har.json"))["log"]["pages"][0]["pageTimings"]["onLoad"]
assert abs(onload - d["plt_ms"]) < 0.11, (onload, d["plt_ms"])
if mode == "event" and max(ends[8], ends[9]) > waited:
    assert d["plt_ms"] < d["last_byte_ms"], d
PY
  done
  ;;
chromium_sockets)
  # --chromium-sockets over node's http2 (TLS), behind slow_relay.py: every TLS handshake
  # takes 500 ms more, TCP's none. The page's host gets the navigation's two sockets; cdn,
  # whose first requests wait for a connection, an attempt per waiting request, the ones
  # still connecting given up when the first opens. Without the option: one per host.
  certs
  start_server --h2 --tls server.pem server.key
  relay() {
    mkfifo r.in.$1
    python3 "$here/slow_relay.py" --delay 500 --log relay-$1.jsonl $PORTS < r.in.$1 > r.ports.$1 2>> server.err &
    pids+=($!)
    exec {rfd}> r.in.$1
    RPORTS=$(ports_of r.ports.$1) || fail "relay did not start"
  }
  relay_addrs() { addrs_of $RPORTS; }
  accepted() { # accepted() RUN PORT_INDEX: connections the relay took on that port
    python3 -c 'import json,sys; print(sum(1 for l in open(sys.argv[1]) if json.loads(l)["port_index"] == int(sys.argv[2])))' relay-$1.jsonl $2
  }
  relay plain
  load --proto h2 --tls --cacert ca.pem $(relay_addrs) || fail "exit $?"
  check valid once protocol=h2 connections=2
  mv result.jsonl plain.jsonl; : > log.jsonl
  relay model
  load --proto h2 --tls --cacert ca.pem --chromium-sockets -v $(relay_addrs) || fail "exit $?"
  check valid once protocol=h2 connections=2
  sleep 0.5 # the relay logs a connection when it ends
  [ "$(accepted plain 0) $(accepted plain 1)" = "1 1" ] ||
    fail "without --chromium-sockets: $(accepted plain 0) and $(accepted plain 1) connections, want 1 and 1"
  [ "$(accepted model 0)" = 2 ] || fail "page host: $(accepted model 0) connections, want 2"
  [ "$(accepted model 1)" -ge 2 ] || fail "cdn: $(accepted model 1) connections, want 2 or more"
  grep -q "to cdn.example.test given up" err || fail "no attempt to cdn given up"
  python3 - result.jsonl $(( $(accepted model 0) + $(accepted model 1) )) <<'PY' || fail "connections_opened"
import json, sys
d = json.loads(open(sys.argv[1]).read().splitlines()[-1])
assert d["connections_opened"] == int(sys.argv[2]), (d["connections_opened"], sys.argv[2])
assert d["settings"]["chromium_sockets"] is True
PY
  # The backup attempt: the page's host is a listener whose accept queue is full, so the
  # loader's SYNs go unanswered; 250 ms into the request's attempt one more starts (with the
  # navigation's second socket: three), none without the option.
  python3 -c '
import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(0)
filler = socket.create_connection(s.getsockname())
open("full.port", "w").write(str(s.getsockname()[1]))
time.sleep(30)
' &
  pids+=($!)
  for _ in $(seq 100); do [ -s full.port ] && break; sleep 0.05; done
  rm -f result.jsonl
  load --proto h2 --tls --cacert ca.pem --timeout 1 --single "127.0.0.1:$(cat full.port)"
  python3 -c 'import json,sys; d=json.load(open("result.jsonl")); sys.exit(d["connections_opened"] != 1)' ||
    fail "stalled connect without --chromium-sockets: want one connection"
  rm -f result.jsonl
  load --proto h2 --tls --cacert ca.pem --timeout 1 --chromium-sockets -v --single "127.0.0.1:$(cat full.port)"
  python3 -c 'import json,sys; d=json.load(open("result.jsonl")); sys.exit(d["connections_opened"] != 3)' ||
    fail "stalled connect with --chromium-sockets: want three connections ($(grep -c backup err) backup)" ;;
network_partitions)
  # --chromium-sockets keeps the requests of a frame of another site apart from the page's
  # (Chromium's network partitions): a page on www.example.test, an image from
  # ads.other.test, and a frame on ads.other.test that asks for an image of each host. Over
  # h2c: two used connections without the option (one per host), four with it — and one
  # more opened to ads.other.test and left idle: the cross-site frame's preconnect, made in
  # another privacy mode than its requests.
  python3 - "$plan" partitions.json <<'PY' || fail "plan"
import json, sys
p = json.load(open(sys.argv[1]))
p["hosts"] = [{"name": "www.example.test", "port": 80}, {"name": "ads.other.test", "port": 80}]
def res(i, host, typ, parent, offset, size):
    r = dict(p["resources"][0], id=i, host=host, type=typ, parent=parent, path="/r%d" % i,
             discover_offset=offset, body_size=size, status=200, redirect_to=-1)
    return r
p["resources"] = [res(0, 0, "document", -1, 0, 4000), res(1, 1, "image", 0, 1000, 3000),
                  res(2, 1, "document", 0, 2000, 2000), res(3, 1, "image", 2, 100, 1000),
                  res(4, 0, "image", 2, 200, 1000)]
json.dump(p, open(sys.argv[2], "w"))
PY
  plan=$work/partitions.json
  start_server --h2
  load --proto h2c $(multi_addrs) || fail "exit $?"
  check valid once protocol=h2 connections=2
  rm -f result.jsonl; : > log.jsonl
  load --proto h2c --chromium-sockets -v $(multi_addrs) || fail "exit $?"
  check valid once protocol=h2 connections=4
  [[ $(grep -c "a cross-site frame's preconnect" err) == 1 ]] || { cat err; fail "frame preconnects"; }
  grep -q "to ads.other.test: a cross-site frame's preconnect" err || { cat err; fail "preconnect's host"; }
  # without a frame: no such preconnect, one connection fewer opened
  python3 - "$plan" noframe.json <<'PY' || fail "plan"
import json, sys
p = json.load(open(sys.argv[1]))
p["resources"][2]["type"] = "script"
json.dump(p, open(sys.argv[2], "w"))
PY
  plan=$work/noframe.json
  rm -f result.jsonl; : > log.jsonl
  load --proto h2c --chromium-sockets -v $(multi_addrs) || fail "exit $?"
  ! grep -q "a cross-site frame's preconnect" err || { cat err; fail "a preconnect without a frame"; }
  plan=$work/partitions.json
  python3 -c 'import json,sys; d=json.load(open("result.jsonl")); sys.exit(d["settings"]["network_partitions"] is not True)' ||
    fail "settings.network_partitions is not true"
  # --single: every resource is the origin's, no frame of another site: one connection,
  # no preconnect, no partitions.
  rm -f s.in s.ports # a second server (the first stops at exit)
  start_server --h2 --single
  rm -f result.jsonl; : > log.jsonl
  load --proto h2c --chromium-sockets -v --single "127.0.0.1:$PORTS" || fail "exit $?"
  check valid once protocol=h2 connections=1
  ! grep -q "a cross-site frame's preconnect" err || { cat err; fail "a preconnect with --single"; }
  python3 -c 'import json,sys; d=json.load(open("result.jsonl")); sys.exit(d["settings"]["network_partitions"] is not False)' ||
    fail "settings.network_partitions is not false with --single" ;;
hint_requested)
  start_server --hint 9
  load $(multi_addrs) || fail "exit $?"
  check valid hinted=9 once ;;
tls_spdy)
  certs
  start_server --tls server.pem server.key
  load --tls --cacert ca.pem $(multi_addrs) || fail "exit $?"
  check valid discovery once "conns-per-port==1" protocol=spdy/3.1 tls
  # without the CA the certificate does not verify: every resource fails, exit 0 (not --strict)
  rm -f result.jsonl
  load --tls $(multi_addrs) || fail "exit $? without --strict"
  check invalid=cannot ;;
close_delimited_tls)
  # RFC 9112 6.3: a body without Content-Length ends with the connection, over TLS only
  # with close_notify (RFC 8446 6.1). tests/bench/liar.py: "eof" ends each answer so,
  # "eof-cut" sends half the body and a bare FIN — a truncation, not the end.
  certs
  python3 - "$plan" one.json <<'PY' || fail "plan"
import json, sys
p = json.load(open(sys.argv[1]))
p["hosts"] = [{"name": "www.example.test", "port": 443}]
p["resources"] = [dict(p["resources"][0], body_size=1024, response_headers=[])]
json.dump(p, open(sys.argv[2], "w"))
PY
  plan=$work/one.json
  for mode in eof eof-cut; do
    rm -f liar.port result.jsonl
    python3 "$src/tests/bench/liar.py" $mode liar.port server.pem server.key 2>liar.err &
    pids+=($!)
    for _ in $(seq 100); do [ -s liar.port ] && break; sleep 0.05; done
    [ -s liar.port ] || fail "liar.py $mode did not start"
    load --http1 --tls --cacert ca.pem --single "127.0.0.1:$(cat liar.port)" || true
    if [ $mode = eof ]; then check valid; else check "invalid=without TLS close_notify"; fi
  done ;;
tls_http1)
  certs
  start_server --http1 --tls server.pem server.key
  load --http1 --tls --cacert ca.pem --single "127.0.0.1:${PORTS%% *}" || true
  # single-domain over host 0's server: host 1's resources are 404 there — invalid
  check invalid=404
  : > log.jsonl; rm -f result.jsonl
  load --http1 --tls --cacert ca.pem $(multi_addrs) || fail "exit $?"
  check valid discovery once "conns-per-port<=6" protocol=http/1.1 tls
  # --hello-padding: node's TLS ignores the extension, and the first flight of a
  # connection (the ClientHello record, read by a listener that then hangs up) is exactly
  # that much heavier
  : > log.jsonl; rm -f result.jsonl
  load --http1 --tls --cacert ca.pem --hello-padding 1700 $(multi_addrs) || fail "exit $?"
  check valid discovery once "conns-per-port<=6" protocol=http/1.1 tls
  hello() {
    rm -f h.port h.size
    python3 -c '
import socket, sys
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(1); s.settimeout(20)
open("h.port", "w").write(str(s.getsockname()[1]))
c, _ = s.accept(); c.settimeout(10); head = b""
while len(head) < 5: head += c.recv(5 - len(head))
open("h.size", "w").write(str(5 + int.from_bytes(head[3:5], "big")) if head[0] == 22 else "not a handshake")
' &
    local listener=$!
    for _ in $(seq 100); do [ -s h.port ] && break; sleep 0.05; done
    "$speedy" load "$plan" --http1 --tls -k --timeout 5 --result /dev/null --single "127.0.0.1:$(cat h.port)" "$@" 2>/dev/null
    wait $listener
    cat h.size
  }
  plain=$(hello) padded=$(hello --hello-padding 1700)
  [ -n "$plain" ] && [ "$padded" = $((plain + 1700)) ] ||
    fail "ClientHello of $plain octets, $padded with --hello-padding 1700"
  ;;
tls_npn)
  # --npn: the protocol offered by NPN alone (TLS 1.2), for servers that speak SPDY only
  # there; speedyd replays the plan (node's TLS has no NPN).
  certs
  speedyd=${SPEEDY_BUILD_DIR}/src/speedyd/speedyd
  "$speedyd" --replay "$plan" --listen 127.0.0.1:0,tls --cert server.pem --key server.key \
    --port-file d.port --workers 1 2> server.err &
  pids+=($!)
  for _ in $(seq 100); do [ -s d.port ] && break; sleep 0.05; done
  [ -s d.port ] || fail "speedyd did not start"
  load -v --tls --npn --cacert ca.pem --single "127.0.0.1:$(cat d.port)" || fail "exit $?"
  check valid connections=1 protocol=spdy/3.1 tls
  grep -q "connection 0 to www.example.test: spdy/3.1, TLSv1.2" err ||
    fail "not SPDY/3.1 over TLS 1.2: $(grep connection err)" ;;
wrong_size_invalid)
  start_server --wrong-size 3
  load $(multi_addrs) || fail "exit $?"
  check "invalid=#3 /logo.png: 19999 body bytes, planned 20000" ;;
missing_resource_invalid)
  start_server --http1 --missing 5
  load --http1 $(multi_addrs) || fail "exit $?"
  check "invalid=#5 /bg.png: status 404, planned 200" ;;
strict_exit)
  start_server --missing 5
  load --strict $(multi_addrs); rc=$?
  [ $rc -eq 1 ] || fail "exit $rc with --strict on an invalid load, want 1"
  check invalid=404 ;;
timeout_bounded)
  start_server --stall 3
  start=$(date +%s)
  load --timeout 2 $(multi_addrs) ; rc=$?
  [ $rc -eq 0 ] || fail "exit $rc"
  [ $(( $(date +%s) - start )) -le 10 ] || fail "took more than 10 s with --timeout 2"
  check "invalid=timed out" ;;
usage)
  "$speedy" load --help | grep -q -- "--addr-base" || fail "--help lacks --addr-base"
  "$speedy" load "$plan" > /dev/null 2>&1; [ $? -eq 2 ] || fail "no address option: want exit 2"
  "$speedy" load "$plan" --single 127.0.0.1:1 --host-addr 0=127.0.0.1:1 2>/dev/null; [ $? -eq 2 ] || fail "two address options: want 2"
  "$speedy" load "$plan" --host-addr 0=127.0.0.1:1 2> err; [ $? -eq 2 ] || fail "host 1 without address: want 2"
  grep -q "no --host-addr for host 1 (cdn.example.test)" err || fail "missing host not named"
  "$speedy" load "$plan" --single 127.0.0.1:1 --pipeline 2>/dev/null; [ $? -eq 2 ] || fail "--pipeline with SPDY: want 2"
  "$speedy" load "$plan" --single 127.0.0.1:1 --http1 --spdy 3 2>/dev/null; [ $? -eq 2 ] || fail "--http1 with --spdy: want 2"
  # bad values in the one style of every program, one line
  "$speedy" load "$plan" --single 127.0.0.1:1 --http1 --connections 0 2> err; [ $? -eq 2 ] || fail "--connections 0: want 2"
  [ "$(cat err)" = "speedy load: bad --connections '0': expected 1 to 32 (try 'speedy load --help')" ] ||
    fail "--connections 0: $(cat err)"
  "$speedy" load "$plan" --single nowhere 2> err; [ $? -eq 2 ] || fail "--single nowhere: want 2"
  [ "$(cat err)" = "speedy load: bad --single 'nowhere': expected ADDR:PORT (try 'speedy load --help')" ] ||
    fail "--single nowhere: $(cat err)"
  "$speedy" load "$plan" --single 127.0.0.1:1 --bogus 2> err; [ $? -eq 2 ] || fail "--bogus: want 2"
  [ "$(cat err)" = "speedy load: unknown option '--bogus' (try 'speedy load --help')" ] ||
    fail "--bogus: $(cat err)"
  "$speedy" load "$plan" --single 127.0.0.1:1 --npn 2>/dev/null; [ $? -eq 2 ] || fail "--npn without --tls: want 2"
  "$speedy" load "$plan" --single 127.0.0.1:1 --boost-images 2> err; [ $? -eq 2 ] ||
    fail "--boost-images without --delayable-limit: want 2"
  grep -qF "speedy load: --boost-images goes with --delayable-limit" err || fail "--boost-images: $(cat err)"
  # every protocol (SPDY and HTTP/2 until the server is known): nothing listens, exit 0
  "$speedy" load "$plan" --single 127.0.0.1:1 --delayable-limit 10 --timeout 1 --result r.jsonl \
    2> err || fail "--delayable-limit without --http1 refused: $(cat err)"
  for bad in 0 1001 x; do
    "$speedy" load "$plan" --single 127.0.0.1:1 --http1 --delayable-limit "$bad" 2> err
    [ $? -eq 2 ] || fail "--delayable-limit '$bad': want 2"
    grep -qF "speedy load: bad --delayable-limit '$bad': expected requests, 1 to 1000" err ||
      fail "--delayable-limit '$bad': $(cat err)"
  done
  "$speedy" load "$plan" --single 127.0.0.1:1 --hello-padding 100 2>/dev/null; [ $? -eq 2 ] ||
    fail "--hello-padding without --tls: want 2"
  for bad in 3 8193 x -1; do
    "$speedy" load "$plan" --single 127.0.0.1:1 --tls --hello-padding "$bad" 2> err; [ $? -eq 2 ] ||
      fail "--hello-padding '$bad': want 2"
    grep -qF "speedy load: bad --hello-padding '$bad': expected bytes, 4 to 8192" err ||
      fail "--hello-padding '$bad': $(cat err)"
  done
  printf '{"format": "speedy-lab-plan/1",\n "hosts": [}' > bad.json
  "$speedy" load bad.json --single 127.0.0.1:1 2> err; [ $? -eq 1 ] || fail "bad plan: want 1"
  grep -q "bad.json: line 2" err || fail "bad plan error lacks file and line: $(cat err)"
  # --addr-base maps host i to base + i with the recorded port; nothing listens there, so
  # the load is invalid but bounded and names the address it tried
  "$speedy" load "$plan" --addr-base 127.0.0.1 --port 1 --timeout 5 --result r.jsonl 2> err
  [ $? -eq 0 ] || fail "--addr-base load: want exit 0"
  grep -q "cannot connect to www.example.test" r.jsonl || fail "connect failure not reported" ;;
dns_rtt_spdy)
  # The page: the document on www; cdn's resources are discovered in the document's first
  # bytes, so cdn's lookup can start only after www's lookup and the document's first
  # bytes — the two lookups are in sequence (--chunk-ms 0: the document itself is quick).
  start_server --chunk-ms 0
  load $(multi_addrs) || fail "exit $?" # warms the server up (node's first requests are slow)
  rm result.jsonl
  for _ in 1 2 3; do load -v $(multi_addrs) || fail "exit $?"; done
  check valid dns=0
  mv result.jsonl base.jsonl; : > log.jsonl
  load -v --dns-rtt 200 $(multi_addrs) || fail "exit $?"
  # at least www's lookup, at most both (150 ms for a busy machine)
  check valid discovery once "conns-per-port==1" dns=200 "plt>=400" \
    "plt-delta=base.jsonl:180:550" ;;
dns_rtt_http1)
  # As dns_rtt_spdy over HTTP/1.1: several connections per host, one lookup per host (the
  # cdn's first connections wait for the same lookup, www's later ones pay nothing).
  start_server --http1 --chunk-ms 0
  load --http1 $(multi_addrs) || fail "exit $?" # warm-up
  rm result.jsonl
  for _ in 1 2 3; do load --http1 $(multi_addrs) || fail "exit $?"; done
  mv result.jsonl base.jsonl; : > log.jsonl
  load -v --http1 --dns-rtt 200 $(multi_addrs) || fail "exit $?"
  check valid discovery once "conns-per-port<=6" "conns-on-port0>=2" dns=200 \
    "conns-spread<=100" "plt>=400" "plt-delta=base.jsonl:180:550"
  python3 - <<'PY' || fail "cdn: want two or more connections, all after the one lookup"
import json
conns = {}
for e in map(json.loads, open("log.jsonl")):
    if e["ev"] == "conn":
        conns.setdefault(e["port"], []).append(e["t"])
assert all(len(t) >= 2 for t in conns.values()), conns
PY
  ;;
dns_rtt_single)
  # Single-domain: only the origin's name is looked up, once.
  start_server --single --chunk-ms 0
  load --single "127.0.0.1:$PORTS" || fail "exit $?" # warm-up
  rm result.jsonl
  for _ in 1 2 3; do load --single "127.0.0.1:$PORTS" || fail "exit $?"; done
  mv result.jsonl base.jsonl; : > log.jsonl
  load -v --dns-rtt 200 --single "127.0.0.1:$PORTS" || fail "exit $?"
  # one lookup: at least 200 ms more, and less than a second lookup would add
  check valid discovery once connections=1 mode=single-domain dns=200 "plt>=200" \
    "plt-delta=base.jsonl:180:350" ;;
dns_rtt_usage)
  for bad in -1 abc 10001 1.5 "" 20ms; do
    "$speedy" load "$plan" --single 127.0.0.1:1 --dns-rtt "$bad" 2> err; rc=$?
    [ $rc -eq 2 ] || fail "--dns-rtt '$bad': exit $rc, want 2"
    grep -qF "speedy load: bad --dns-rtt '$bad': expected whole ms, 0 to 10000 (try 'speedy load --help')" err ||
      fail "--dns-rtt '$bad': $(cat err)"
  done
  "$speedy" load --help | grep -q -- "--dns-rtt MS" || fail "--help lacks --dns-rtt"
  # the bounds themselves are accepted (nothing listens: the load is invalid, exit 0)
  for good in 0 10000; do
    "$speedy" load "$plan" --single 127.0.0.1:1 --dns-rtt $good --timeout 1 --result r.jsonl \
      2>/dev/null || fail "--dns-rtt $good refused"
  done ;;
*) fail "unknown case" ;;
esac
echo "PASS ($case)"
