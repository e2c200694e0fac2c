#!/bin/bash
# test_replay.sh — speedyd --replay end to end on loopback: a synthetic plan, every
# resource fetched with `speedy get` over SPDY and HTTP/1.1 and with curl over HTTP/2 (h2c)
# (sizes equal body_size, the
# same bytes both ways and as the generator's, statuses and headers as planned, Location
# on redirects, 404 for what the plan lacks), --replay-host-index, plan errors, the
# plain-file site through speedyd --docroot and (when installed) nginx, and TLS 1.2 with
# the generated chain and no resumption.
#
#   test_replay.sh SPEEDYD WORK_DIR SPEEDY REPLAY_TOOL
SRC=${SPEEDY_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
SPEEDY=$3
TOOL=$4
source "$SRC/tests/speedyd/lib.sh" "$1" "$2"
WORK=$(cd "$WORK" && pwd) # nginx wants absolute paths
need sha256sum

PLAN=$WORK/plan.json
cat >"$PLAN" <<'JSON'
{
  "format": "speedy-lab-plan/1", "source": "synthetic", "page": "first page", "seed": 11,
  "hosts": [{"name": "www.example.test", "port": 80}, {"name": "cdn.example.test", "port": 443}],
  "resources": [
    {"id": 0, "host": 0, "method": "GET", "path": "/", "type": "document", "parent": -1,
     "discover_offset": 0, "start_delay": 0.0, "request_headers": [["user-agent", "lab"]],
     "status": 200, "response_headers": [["content-type", "text/html"], ["x-test", "yes"],
     ["connection", "close"], ["content-encoding", "gzip"], ["content-length", "5"]],
     "body_size": 100000, "redirect_to": -1, "after_cutoff": false},
    {"id": 1, "host": 0, "method": "GET", "path": "/old", "status": 301,
     "response_headers": [], "body_size": 0, "redirect_to": 2},
    {"id": 2, "host": 1, "method": "GET", "path": "/img/a.png?v=1", "status": 200,
     "response_headers": [["content-type", "image/png"]], "body_size": 12345},
    {"id": 3, "host": 0, "method": "GET", "path": "/css/site.css", "status": 200,
     "response_headers": [["content-type", "text/css"]], "body_size": 4000},
    {"id": 4, "host": 0, "method": "GET", "path": "/js/app.js", "status": 200,
     "response_headers": [], "body_size": 1},
    {"id": 5, "host": 0, "method": "GET", "path": "/missing.gif", "status": 404,
     "response_headers": [], "body_size": 43},
    {"id": 6, "host": 1, "method": "GET", "path": "/big.bin", "status": 200,
     "response_headers": [], "body_size": 3000000},
    {"id": 7, "host": 0, "method": "GET", "path": "/a%20b.txt", "status": 200,
     "response_headers": [], "body_size": 77},
    {"id": 8, "host": 0, "method": "GET", "path": "/beacon", "status": 204,
     "response_headers": [], "body_size": 0}
  ]
}
JSON
# id host path status body_size, one a line
RESOURCES="0 www.example.test / 200 100000
1 www.example.test /old 301 0
2 cdn.example.test /img/a.png?v=1 200 12345
3 www.example.test /css/site.css 200 4000
4 www.example.test /js/app.js 200 1
5 www.example.test /missing.gif 404 43
6 cdn.example.test /big.bin 200 3000000
7 www.example.test /a%20b.txt 200 77
8 www.example.test /beacon 204 0"

for id in $(seq 0 8); do "$TOOL" body "$PLAN" "$id" >"$WORK/expected.$id" || exit 1; done

# fetch NAME PORT HOST PATH [speedy get options]: body in $WORK/NAME.body, summary and -v
# output in $WORK/NAME.err; prints the status of the summary line.
fetch() {
  local name=$1 port=$2 host=$3 path=$4
  shift 4
  timeout 20 "$SPEEDY" get -v --max-time 15 --resolve "$host:$port:127.0.0.1" "$@" \
    -o "$WORK/$name.body" "http://$host:$port$path" 2>"$WORK/$name.err" >/dev/null
  awk '$1 == "ok" || $1 == "FAILED" { print $2 }' "$WORK/$name.err" | tail -1
}

start_server replay --listen 127.0.0.1:0 --replay "$PLAN"
P=$PORT_replay
while read -r id host path status size; do
  for proto in spdy http1; do
    opt=""
    [ $proto = http1 ] && opt=--http1
    got=$(fetch "$proto.$id" "$P" "$host" "$path" $opt)
    check "$proto: $host$path status" "$got" "$status"
    check "$proto: $host$path size" "$(stat -c %s "$WORK/$proto.$id.body")" "$size"
    check "$proto: $host$path bytes are the generator's" "$(sha "$WORK/$proto.$id.body")" \
      "$(sha "$WORK/expected.$id")"
  done
done <<<"$RESOURCES"

# Headers: recorded ones kept, hop-by-hop / length / coding replaced, Location added.
# `speedy get -v` prints each received header on a line of its own, indented, after
# "recv SYN_REPLY" (SPDY) or "recv response head" (HTTP/1.1).
received() { # received FILE: the header lines of the responses in FILE
  awk '/ recv (SYN_REPLY|response head)/ {on = 1; next} /^\[/ {on = 0} on' "$1"
}
for proto in spdy http1; do
  received "$WORK/$proto.0.err" >"$WORK/$proto.0.head"
  received "$WORK/$proto.1.err" >"$WORK/$proto.1.head"
  check_grep "$proto: recorded header kept" "^ *x-test: yes$" "$WORK/$proto.0.head"
  check_grep "$proto: content-length is body_size" "^ *content-length: 100000$" \
    "$WORK/$proto.0.head"
  check "$proto: no recorded content-encoding" "$(grep -ci 'content-encoding' "$WORK/$proto.0.head")" 0
  check "$proto: one content-length" "$(grep -ci '^ *content-length' "$WORK/$proto.0.head")" 1
  check_grep "$proto: redirect carries Location" \
    "^ *location: http://cdn.example.test/img/a.png?v=1$" "$WORK/$proto.1.head"
done

# HTTP/2 (h2c by its preface, the SPDY path's answers): curl, an independent client, gets
# every resource with its status, size and bytes, the headers as over SPDY, :authority
# picking the host.
if command -v curl >/dev/null; then
  while read -r id host path status size; do
    got=$(timeout 20 curl -s --max-time 15 --http2-prior-knowledge --resolve "$host:$P:127.0.0.1" \
      -D "$WORK/h2.$id.head" -o "$WORK/h2.$id.body" -w '%{http_code} %{http_version}' \
      "http://$host:$P$path")
    check "h2: $host$path status and version" "$got" "$status 2"
    check "h2: $host$path size" "$(stat -c %s "$WORK/h2.$id.body")" "$size"
    check "h2: $host$path bytes are the generator's" "$(sha "$WORK/h2.$id.body")" \
      "$(sha "$WORK/expected.$id")"
  done <<<"$RESOURCES"
  check_grep "h2: recorded header kept" "^x-test: yes" "$WORK/h2.0.head"
  check_grep "h2: content-length is body_size" "^content-length: 100000" "$WORK/h2.0.head"
  check "h2: no recorded content-encoding" "$(grep -ci 'content-encoding' "$WORK/h2.0.head")" 0
  check_grep "h2: redirect carries Location" "^location: http://cdn.example.test/img/a.png?v=1" \
    "$WORK/h2.1.head"
else
  echo "skipped: HTTP/2 through curl (no curl)"
fi

check "unknown path is 404 (spdy)" "$(fetch nope "$P" www.example.test /nope)" 404
check "unknown path is 404 (http1)" "$(fetch nope1 "$P" www.example.test /nope --http1)" 404
check "a path of another host is 404" "$(fetch other "$P" www.example.test /big.bin)" 404
check "unknown host is 404" "$(fetch host "$P" other.example.test /)" 404

start_server one --listen 127.0.0.1:0 --replay "$PLAN" --replay-host-index 1
check "--replay-host-index 1 serves host 1 whatever the authority" \
  "$(fetch index "$PORT_one" www.example.test '/img/a.png?v=1')" 200
check "--replay-host-index: the same bytes" "$(sha "$WORK/index.body")" "$(sha "$WORK/expected.2")"

# Plan errors: one line naming the file and the field, exit 1.
bad() {
  printf '%s' "$2" >"$WORK/bad.json"
  "$SPEEDYD" --listen 127.0.0.1:0 --replay "$WORK/bad.json" >/dev/null 2>"$WORK/bad.err"
  check "$1: exit 1" "$?" 1
  check_grep "$1: message" "$3" "$WORK/bad.err"
}
bad "other format version" '{"format": "speedy-lab-plan/9"}' \
  "speedyd: bad --replay: $WORK/bad.json: format is \"speedy-lab-plan/9\", this program reads \"speedy-lab-plan/1\""
bad "status as a string" \
  '{"format":"speedy-lab-plan/1","seed":1,"hosts":[{"name":"a","port":80}],"resources":[{"id":0,"host":0,"method":"GET","path":"/","status":"200","response_headers":[],"body_size":1}]}' \
  "resources\[0\].status: expected an integer from 200 to 599, got a string"
bad "JSON syntax" '{"format": ' "bad.json: line 1, column"
"$SPEEDYD" --replay "$PLAN" --docroot "$WORK" >/dev/null 2>"$WORK/both.err"
check "--replay with --docroot is a usage error" "$?" 2
check_grep "--replay with --docroot: message" "exclude each other" "$WORK/both.err"
"$SPEEDYD" --listen 127.0.0.1:0 --replay "$PLAN" --replay-host-index 2 >/dev/null 2>"$WORK/idx.err"
check "--replay-host-index beyond the plan: exit 1" "$?" 1

# The plain-file site: speedyd --docroot on each host directory gives the same bytes.
SITE=$WORK/site
"$TOOL" site "$PLAN" "$SITE" || { echo "FAIL: write-site"; exit 1; }
start_server www --listen 127.0.0.1:0 --docroot "$SITE/www.example.test" --no-gzip
start_server cdn --listen 127.0.0.1:0 --docroot "$SITE/cdn.example.test" --no-gzip
site_check() { # NAME PORT HOST FILE_PATH ID
  local got
  got=$(fetch "site.$1" "$2" "$3" "$4" --http1)
  check "site: $3$4 is served" "$got" 200
  check "site: $3$4 has resource $5's bytes" "$(sha "$WORK/site.$1.body")" "$(sha "$WORK/expected.$5")"
}
site_check root "$PORT_www" www.example.test / 0
site_check css "$PORT_www" www.example.test /css/site.css 3
site_check js "$PORT_www" www.example.test /js/app.js 4
site_check space "$PORT_www" www.example.test /_replay/7 7
site_check query "$PORT_cdn" cdn.example.test /_replay/2 2
site_check big "$PORT_cdn" cdn.example.test /big.bin 6
check_grep "site map lists the query string" \
  '"cdn.example.test/img/a.png?v=1" "/cdn.example.test/_replay/2";' "$SITE/replay-site.map"
check_grep "site map lists the escaped path" \
  '"www.example.test/a%20b.txt" "/www.example.test/_replay/7";' "$SITE/replay-site.map"

# nginx serving the same site through the map (docs/lab-replay.md's configuration).
if command -v nginx >/dev/null 2>&1; then
  NPORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  mkdir -p "$WORK/nginx"
  cat >"$WORK/nginx/nginx.conf" <<CONF
daemon off;
master_process off;
worker_processes 1;
pid $WORK/nginx/nginx.pid;
error_log $WORK/nginx/error.log;
events { worker_connections 64; }
http {
  access_log off;
  client_body_temp_path $WORK/nginx;
  proxy_temp_path $WORK/nginx;
  fastcgi_temp_path $WORK/nginx;
  uwsgi_temp_path $WORK/nginx;
  scgi_temp_path $WORK/nginx;
  default_type application/octet-stream;
  map_hash_bucket_size 256;
  map "\$host\$request_uri" \$replay_file {
    default "/\$host\$uri";
    include $SITE/replay-site.map;
  }
  server {
    listen 127.0.0.1:$NPORT;
    root $SITE;
    location / { try_files \$replay_file =404; }
  }
}
CONF
  nginx -c "$WORK/nginx/nginx.conf" -p "$WORK/nginx" >"$WORK/nginx.stdout" 2>"$WORK/nginx.log" &
  SERVER_PIDS+=($!)
  for _ in $(seq 1 50); do
    (exec 3<>"/dev/tcp/127.0.0.1/$NPORT") 2>/dev/null && break
    sleep 0.1
  done
  while read -r id host path status size; do
    [ "$status" = 200 ] || continue
    got=$(fetch "nginx.$id" "$NPORT" "$host" "$path" --http1)
    check "nginx: $host$path is served" "$got" 200
    check "nginx: $host$path has the replayed bytes" "$(sha "$WORK/nginx.$id.body")" \
      "$(sha "$WORK/expected.$id")"
  done <<<"$RESOURCES"
else
  echo "note: nginx is not installed; the nginx check is skipped"
fi

# TLS: the generated chain, TLS 1.2 only, no resumption.
if command -v openssl >/dev/null 2>&1; then
  sh "$SRC/src/replay/gen-chain.sh" "$WORK/certs" www.example.test cdn.example.test >"$WORK/chain.txt" ||
    { echo "FAIL: gen-chain.sh"; exit 1; }
  der=$(sed -n 's/.* = \([0-9]*\) bytes DER/\1/p' "$WORK/chain.txt")
  check "chain (leaf + intermediate) is at least 3 KB" "$([ "${der:-0}" -ge 3072 ] && echo yes)" yes
  start_server tls --listen 127.0.0.1:0,tls --cert "$WORK/certs/chain.pem" --key "$WORK/certs/key.pem" \
    --replay "$PLAN" --tls-max 1.2 --no-tls-resumption
  start_server resume --listen 127.0.0.1:0,tls --cert "$WORK/certs/chain.pem" \
    --key "$WORK/certs/key.pem" --replay "$PLAN" --tls-max 1.2
  for proto in spdy http1; do
    opt=""
    [ $proto = http1 ] && opt=--http1
    timeout 20 "$SPEEDY" get --max-time 15 --cacert "$WORK/certs/root.pem" $opt \
      --resolve "cdn.example.test:$PORT_tls:127.0.0.1" -o "$WORK/tls.$proto.body" \
      "https://cdn.example.test:$PORT_tls/big.bin" 2>"$WORK/tls.$proto.err" >/dev/null
    check "tls $proto: verified chain, the same bytes" "$(sha "$WORK/tls.$proto.body")" "$(sha "$WORK/expected.6")"
  done
  # Every host form a client checks: upper case, a trailing dot, a port, IP literals.
  sh "$SRC/src/replay/gen-chain.sh" "$WORK/forms" WWW.Example.TEST. cdn.example.test:8443 \
    '[2001:DB8::1]:443' 2001:db8::2 192.0.2.1 >/dev/null || { echo "FAIL: gen-chain.sh"; exit 1; }
  for form in "host www.example.test" "host www.example.test." "host cdn.example.test" \
    "ip 2001:db8::1" "ip 2001:db8::2" "ip 192.0.2.1"; do
    set -- $form
    check "gen-chain covers $2" \
      "$(openssl x509 -in "$WORK/forms/leaf.pem" -noout "-check$1" "$2" | grep -c ' does match')" 1
  done
  s_client() { # PORT ARGS...: one handshake, session saved or reused
    local port=$1
    shift
    timeout 10 openssl s_client -connect "127.0.0.1:$port" -servername www.example.test \
      -CAfile "$WORK/certs/root.pem" "$@" </dev/null 2>&1
  }
  s_client "$PORT_tls" -sess_out "$WORK/sess" >"$WORK/s1.txt"
  check_grep "tls: TLS 1.2 although the client offers 1.3" "Protocol *: TLSv1.2" "$WORK/s1.txt"
  check_grep "tls: the chain verifies" "Verify return code: 0 (ok)" "$WORK/s1.txt"
  check "tls: the server sends leaf and intermediate" "$(grep -c '^ *[0-9] s:' "$WORK/s1.txt")" 2
  # No session ID and no ticket: nothing to resume (s_client then saves no session).
  if [ -s "$WORK/sess" ]; then
    s_client "$PORT_tls" -sess_in "$WORK/sess" >"$WORK/s2.txt"
    check_grep "tls: --no-tls-resumption makes a full handshake again" "^New, " "$WORK/s2.txt"
  fi
  check "tls: --no-tls-resumption offers no ticket" "$(grep -c 'TLS session ticket:' "$WORK/s1.txt")" 0
  check "tls: --no-tls-resumption offers no session ID" \
    "$(grep -E '^ *Session-ID: *[0-9A-F]+' "$WORK/s1.txt" | wc -l)" 0
  s_client "$PORT_resume" -sess_out "$WORK/sess2" >/dev/null
  s_client "$PORT_resume" -sess_in "$WORK/sess2" >"$WORK/s3.txt"
  check_grep "tls: without it the session is resumed (the check above can fail)" "^Reused, " "$WORK/s3.txt"
fi

stop_server replay
check "server exits 0 on SIGTERM" "$STOP_STATUS" 0
finish
