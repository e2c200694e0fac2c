# common.sh — helpers shared by bench/compare/compare and bench/compare/compare-h2
# (sourced, not run): processes started and stopped by id, free loopback ports, JSON
# fields of `speedy bench --json`, the best or median of a row's runs, nginx's
# configuration from nginx.conf.in, and a line describing the machine.
#
# The sourcing script sets PROG (its name in messages) and HERE (this directory) first.

say() { echo "$PROG: $*" >&2; }

# Every process a script starts goes into PIDS; cleanup ends them (by id only) on exit.
PIDS=()
cleanup() {
  for pid in "${PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null; done
  sleep 0.2
  for pid in "${PIDS[@]}"; do kill -KILL "$pid" 2>/dev/null; done
  wait 2>/dev/null
}

# stop_pid PID...: SIGTERM, up to 10 s to go, then SIGKILL
stop_pid() {
  local pid
  for pid in "$@"; do [ -n "$pid" ] && kill -TERM "$pid" 2>/dev/null; done
  for pid in "$@"; do
    [ -n "$pid" ] || continue
    for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
  done
}

# pick_figure best|median FIGURE...: the highest, or the middle one (the two middle ones'
# average, rounded) of the figures
pick_figure() {
  local stat=$1
  shift
  printf '%s\n' "$@" | sort -n | awk -v stat="$stat" '{ v[NR] = $1 }
    END { if (stat == "best") print v[NR]
          else if (NR % 2) print v[(NR + 1) / 2]
          else printf "%.0f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# ratio_to_fastest SPEEDYD OTHER...: SPEEDYD over the highest of the others that are
# figures, two decimals; – when speedyd's or every other figure is missing (err, –, empty)
ratio_to_fastest() {
  awk -v a="$1" 'BEGIN { for (i = 2; i < ARGC; i++) if (ARGV[i] ~ /^[0-9]+$/ && ARGV[i] + 0 > b) b = ARGV[i] + 0
    if (a ~ /^[0-9]+$/ && a + 0 > 0 && b > 0) printf "%.2f\n", a / b; else print "–" }' "$@"
}

# ratio_range RATIO...: "lowest–highest" of the ratios that are numbers, – when none is
ratio_range() {
  printf '%s\n' "$@" | awk '/^[0-9.]+$/ { v = $1 + 0; if (!n++ || v < lo) lo = v; if (n == 1 || v > hi) hi = v }
    END { if (n) printf "%.2f–%.2f\n", lo, hi; else print "–" }'
}

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# wait_port PORT PID: 0 once 127.0.0.1:PORT accepts (within 10 s, while PID lives)
wait_port() {
  local ok
  for _ in $(seq 1 100); do
    ok=$( (exec 3<>/dev/tcp/127.0.0.1/"$1") 2>/dev/null && echo yes)
    [ "$ok" = yes ] && return 0
    kill -0 "$2" 2>/dev/null || return 1
    sleep 0.1
  done
  return 1
}

# jget FILE EXPR: EXPR over the JSON object r in FILE, or "-"
jget() {
  python3 -c 'import json,sys
try: r=json.load(open(sys.argv[1]))
except Exception: print("-"); sys.exit(0)
print(eval(sys.argv[2]))' "$1" "$2" 2>/dev/null || echo -
}

# nginx_conf OUT WORKERS PREFIX PORT TLS_PORT DOCROOT CERT KEY FILE_CACHE LISTEN_OPTIONS:
# nginx.conf.in filled in (LISTEN_OPTIONS: "" for HTTP/1.1, "http2 " for HTTP/2)
nginx_conf() {
  local user_line=""
  [ "$(id -u)" = 0 ] && user_line="user root $(id -gn);"
  sed -e "s|@USER_LINE@|$user_line|" -e "s|@WORKERS@|$2|" -e "s|@PREFIX@|$3|g" \
    -e "s|@PORT@|$4|" -e "s|@TLS_PORT@|$5|" -e "s|@DOCROOT@|$6|" \
    -e "s|@CERT@|$7|" -e "s|@KEY@|$8|" -e "s|@FILE_CACHE@|$9|" -e "s|@LISTEN@|${10}|g" \
    "$HERE/nginx.conf.in" >"$1"
}

# machine_line: CPUs, CPU model, kernel, date (one line)
machine_line() {
  local model
  model=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
  echo "$(nproc) CPUs ($(nproc --all) in all), ${model:-unknown CPU}, Linux $(uname -r)," \
    "$(date -u '+%Y-%m-%d %H:%M UTC')"
}
