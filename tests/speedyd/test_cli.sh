#!/bin/bash
# test_cli.sh — speedyd's command line: --help lists every option with its default,
# --version, exit codes 0/1/2 with one-line errors, --port-file, and --user dropping
# privileges (when run as root and the user "nobody" exists).
source "$(dirname "$0")/lib.sh" "$@"
mkdir -p "$WORK/site"
echo hi >"$WORK/site/index.html"
"$SPEEDYD" --help >"$WORK/help"
check "--help exits 0" "$?" 0
for opt in listen cert key docroot push hint manifest upload-path upload-mode upload-max user \
           protocols plaintext-v3 handshake-timeout header-timeout idle-timeout shutdown-timeout \
           max-connections max-streams max-header-bytes data-frame-size header-compression \
           access-log error-log \
           allow-symlinks no-gzip port-file help version; do
  check_grep "--help lists --$opt" "--$opt" "$WORK/help"
done
check "--help states defaults" "$(grep -c 'default' "$WORK/help" | awk '{print ($1 >= 20)}')" 1
check "--version" "$("$SPEEDYD" --version | grep -c '^speedyd [0-9]')" 1
"$SPEEDYD" --bogus 2>"$WORK/e1"; check "an unknown option exits 2" "$?" 2
check "one-line message names it" "$(cat "$WORK/e1")" \
  "speedyd: unknown option '--bogus' (try 'speedyd --help')"
"$SPEEDYD" --listen 1 2>/dev/null; check "no --docroot exits 2" "$?" 2
"$SPEEDYD" --docroot "$WORK/site" --listen nope 2>"$WORK/e7"; check "a bad --listen exits 2" "$?" 2
check "its message, in the one style of option errors" "$(cat "$WORK/e7")" \
  "speedyd: bad --listen 'nope': expected [ADDR:]PORT[,tls][,proxy] (try 'speedyd --help')"
"$SPEEDYD" --docroot "$WORK/site" --protocols spdy/3,spdy/4 2>"$WORK/e8"
check "a bad --protocols exits 2" "$?" 2
check "its message shows the whole value" "$(cat "$WORK/e8")" \
  "speedyd: bad --protocols 'spdy/3,spdy/4': expected up to 5 of h2, spdy/3.1, spdy/3, spdy/2, http/1.1, comma-separated (try 'speedyd --help')"
"$SPEEDYD" --docroot "$WORK/site" --idle-timeout 1s 2>"$WORK/e9"
check "a bad timeout's message" "$(cat "$WORK/e9")" \
  "speedyd: bad --idle-timeout '1s': expected milliseconds, 0 to 86400000 (try 'speedyd --help')"
"$SPEEDYD" --docroot "$WORK/site" --listen 2>"$WORK/e10"
check "a missing value exits 2" "$?" 2
check "its message" "$(cat "$WORK/e10")" "speedyd: option '--listen' needs a value (try 'speedyd --help')"
"$SPEEDYD" --docroot "$WORK/site" --listen 127.0.0.1:0,tls 2>/dev/null
check "TLS without --cert exits 2" "$?" 2
"$SPEEDYD" --docroot "$WORK/site" --listen 127.0.0.1:0,tls --cert "$WORK/missing.pem" --key k 2>"$WORK/e2"
check "a missing --cert exits 1" "$?" 1
check "the message says which file and why" "$(cat "$WORK/e2")" \
  "speedyd: cannot open --cert $WORK/missing.pem: No such file or directory"
"$SPEEDYD" --docroot "$WORK/site" --header-compression 10 2>"$WORK/e6"
check "--header-compression 10 exits 2" "$?" 2
check "its message" "$(cat "$WORK/e6")" \
  "speedyd: bad --header-compression '10': expected a zlib level, 0 to 9 (try 'speedyd --help')"
# The level reaches the engine: level 0 stores the SYN_REPLY's block, 9 compresses it.
speedy="${SPEEDYD%/*}/../speedy"
# The lengths of the SYN_REPLYs `speedy get -v` received ("<< SYN_REPLY ... length=N", or
# "recv SYN_REPLY frame <length=N, ...>"), one a line.
syn_reply_lengths() {
  sed -n -e 's/.*<< SYN_REPLY .*length=\([0-9]*\).*/\1/p' \
    -e 's/.*recv SYN_REPLY frame <length=\([0-9]*\).*/\1/p' "$1"
}
if [ -x "$speedy" ]; then
  for level in 0 9; do
    start_server "z$level" --listen 127.0.0.1:0 --docroot "$WORK/site" --header-compression $level
    port_var="PORT_z$level"
    "$speedy" get -v -o /dev/null "http://127.0.0.1:${!port_var}/index.html" 2>"$WORK/v$level"
    reply_len[level]=$(syn_reply_lengths "$WORK/v$level" | head -1)
    stop_server "z$level"
  done
  check "level 0 sends a longer SYN_REPLY than level 9 (${reply_len[0]} > ${reply_len[9]})" \
    "$(( ${reply_len[0]:-0} > ${reply_len[9]:-0} + 50 ))" 1
  # The default is level 3 (SPEEDYD_HEADER_COMPRESSION): over eight answers on one
  # connection its SYN_REPLYs add up like level 3's, not like level 6's (the Date value
  # may move a byte or two between runs; 3 and 6 differ by more).
  head -c 3000 /dev/urandom >"$WORK/site/b.bin"
  declare -A replies_sum
  for level in default 3 6; do
    args=(--listen 127.0.0.1:0 --docroot "$WORK/site")
    [ "$level" = default ] || args+=(--header-compression "$level")
    start_server "d$level" "${args[@]}"
    port_var="PORT_d$level"
    u="http://127.0.0.1:${!port_var}"
    "$speedy" get -v "$u/index.html" "$u/b.bin" "$u/nope" "$u/index.html" "$u/b.bin" \
      "$u/index.html" "$u/nope" "$u/b.bin" >/dev/null 2>"$WORK/d$level"
    replies_sum[$level]=$(syn_reply_lengths "$WORK/d$level" |
      awk '{ n++; t += $1 } END { print (n == 8 ? t : -1) }')
    stop_server "d$level"
  done
  d=${replies_sum[default]} three=${replies_sum[3]} six=${replies_sum[6]}
  check "eight SYN_REPLYs at each level (default $d, 3: $three, 6: $six bytes)" \
    "$(( d > 0 && three > 0 && six > 0 ))" 1
  check "levels 3 and 6 differ enough to tell apart" "$(( three - six > 8 ))" 1
  close_to_3=$(( (d > three ? d - three : three - d) < (d > six ? d - six : six - d) ))
  check "the default compresses like level 3" "$close_to_3" 1
else
  echo "note: speedy (the client) is not built: the --header-compression effect is not checked"
fi
# Descriptors: the soft limit is raised to twice --max-connections (up to the hard limit),
# with a warning when even the hard limit is short.
if command -v prlimit >/dev/null; then
  real_speedyd=$SPEEDYD
  printf '#!/bin/sh\nexec prlimit --nofile=1024:4096 "%s" "$@"\n' "$real_speedyd" >"$WORK/limited"
  chmod +x "$WORK/limited"
  SPEEDYD=$WORK/limited
  start_server fd1 --listen 127.0.0.1:0 --docroot "$WORK/site" --max-connections 1500
  check "soft limit raised to 2 x --max-connections" \
    "$(awk '/^Max open files/ {print $4}' "/proc/$PID_fd1/limits")" 3000
  check "no descriptor warning when it fits" "$(grep -c 'file descriptors' "$WORK/fd1.stderr")" 0
  stop_server fd1
  start_server fd2 --listen 127.0.0.1:0 --docroot "$WORK/site" --max-connections 3000
  check "soft limit raised to the hard limit" \
    "$(awk '/^Max open files/ {print $4}' "/proc/$PID_fd2/limits")" 4096
  check_grep "a warning when the hard limit is short" \
    "4096 file descriptors (ulimit -n) for --max-connections 3000" "$WORK/fd2.stderr"
  stop_server fd2
  SPEEDYD=$real_speedyd
else
  echo "note: no prlimit: the descriptor limit checks are skipped"
fi
"$SPEEDYD" --docroot "$WORK/nodir" --listen 127.0.0.1:0 2>"$WORK/e3"
check "a missing --docroot exits 1" "$?" 1
check_grep "its message" "cannot open --docroot" "$WORK/e3"
start_server a --listen 127.0.0.1:0 --listen 127.0.0.1:0 --docroot "$WORK/site"
check "--port-file lists both listeners" "$(wc -l <"$WORK/a.ports")" 2
# Port 0 is useful only if the chosen port is told: one line on stderr names them all.
check "the listening line names the chosen ports" "$(grep 'listening' "$WORK/a.stderr")" \
  "speedyd: listening on 127.0.0.1:$PORT_a (plaintext), 127.0.0.1:$PORT2_a (plaintext)"
make_certs
tls_at=127.0.0.1 # IPv6 literals are shown in brackets, where the loopback has ::1
grep -qi '^0\{31\}1 ' /proc/net/if_inet6 2>/dev/null && tls_at='[::1]'
start_server w --listen "$tls_at:0,tls" --listen 127.0.0.1:0 --cert "$WORK/certs/server.pem" \
  --key "$WORK/certs/server.key" --docroot "$WORK/site" --workers 2
check "with workers, the master tells once" "$(grep 'listening' "$WORK/w.stderr")" \
  "speedyd: listening on $tls_at:$PORT_w (TLS), 127.0.0.1:$PORT2_w (plaintext)"
stop_server w
"$SPEEDYD" --docroot "$WORK/site" --listen "127.0.0.1:$PORT_a" 2>"$WORK/e4"
check "a port in use exits 1" "$?" 1
check_grep "its message" "cannot listen on 127.0.0.1:$PORT_a" "$WORK/e4"
stop_server a
check "exit 0 on SIGTERM" "$STOP_STATUS" 0

if [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1 && command -v curl >/dev/null; then
  chmod 755 "$WORK" "$WORK/site"
  chmod 644 "$WORK/site/index.html"
  echo secret >"$WORK/site/root-only.txt"
  chmod 600 "$WORK/site/root-only.txt"
  start_server u --listen 127.0.0.1:0 --docroot "$WORK/site" --user nobody
  check "--user: runs as nobody" "$(awk '/^Uid:/ {print $2}' "/proc/$PID_u/status")" "$(id -u nobody)"
  check "--user: groups dropped" "$(awk '/^Gid:/ {print $2}' "/proc/$PID_u/status")" "$(id -g nobody)"
  code() { curl -sS --max-time 10 -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PORT_u$1"; }
  check "--user: a readable file is served" "$(code /index.html)" 200
  check "--user: a root-only file is 403" "$(code /root-only.txt)" 403
  stop_server u
  check "--user: exit 0 on SIGTERM" "$STOP_STATUS" 0
else
  echo "note: --user checks need root, curl and the user nobody; skipped"
fi
"$SPEEDYD" --docroot "$WORK/site" --listen 127.0.0.1:0 --user no-such-user-here 2>"$WORK/e5"
check "an unknown --user exits 1" "$?" 1
finish
