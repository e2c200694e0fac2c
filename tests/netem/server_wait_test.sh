#!/usr/bin/env bash
# server_wait_test.sh — `speedy netem --server CMD -- CLIENT`: a server command that exits
# before it listens is reported with its exit status (or signal) and the client is not run;
# waiting for a slow server costs next to no CPU (it sleeps between looks at the socket
# tables instead of polling them); SIGTERM during that wait stops the link at once. Before
# those, which need root: bad option values are refused in the one style of cli.h.
#
# Usage: server_wait_test.sh SPEEDY   (exit 0 pass, 1 fail, 77 skipped)
set -u
speedy="$1"
work="$(mktemp -d)"
background=()
failures=0

cleanup() {
  local pid
  for pid in "${background[@]+"${background[@]}"}"; do
    kill -KILL "$pid" 2>/dev/null
    ip netns list 2>/dev/null | awk '{print $1}' | grep "^spnm-$pid-" | while read -r ns; do
      ip netns delete "$ns"
    done
  done
  rm -rf "$work"
}
trap cleanup EXIT

fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}

# run WANT DESCRIPTION COMMAND...: runs with a timeout, checks the exit status.
run() {
  local want="$1" what="$2" got
  shift 2
  timeout 30 "$@" >"$work/out" 2>"$work/err"
  got=$?
  if [[ "$got" != "$want" ]]; then
    fail "$what: exit status $got, want $want; stderr: $(head -c 400 "$work/err")"
  else
    echo "ok: $what (exit $got)"
  fi
}

# expect_err REGEX DESCRIPTION: stderr of the last run has one line matching REGEX.
expect_err() {
  grep -Eq -- "$1" "$work/err" || fail "$2: stderr does not match '$1': $(head -c 400 "$work/err")"
}

# ---- option errors in the one style (no root needed) ----
run 2 "bad --down" "$speedy" netem --down fast -- true
expect_err "^speedy netem: bad --down 'fast': expected .+ \(try 'speedy netem --help'\)$" "bad --down"
[[ "$(wc -l <"$work/err")" == 1 ]] || fail "bad --down: more than one line on stderr"
run 2 "bad --loss" "$speedy" netem --loss 101 -- true
expect_err "^speedy netem: bad --loss '101': expected a percentage from 0 to 100 \(try" "bad --loss"
run 2 "bad --profile" "$speedy" netem --profile dialup -- true
expect_err "^speedy netem: bad --profile 'dialup': expected .*dsl.*cable" "bad --profile"
run 2 "unknown option" "$speedy" netem --bogus -- true
expect_err "^speedy netem: unknown option '--bogus' \(try 'speedy netem --help'\)$" "unknown option"
[[ "$(wc -l <"$work/err")" == 1 ]] || fail "unknown option: more than one line on stderr"

if [[ "$(id -u)" != 0 ]]; then
  echo "SKIP: the rest needs root (network namespaces and TUN devices); CI runs as root"
  exit $((failures > 0 ? 1 : 77))
fi
if [[ ! -c /dev/net/tun ]] || ! ip netns list >/dev/null 2>&1; then
  echo "SKIP: /dev/net/tun or 'ip netns' is not available"
  exit $((failures > 0 ? 1 : 77))
fi

# ---- a server that exits at once: its status, and no client ----
run 1 "server exits with status 7" "$speedy" netem -q --server 'exit 7' -- touch "$work/client-ran"
expect_err "the server command exited with status 7 before it opened a socket; the client was not run" \
  "server exits with status 7"
[[ -e "$work/client-ran" ]] && fail "the client ran although the server had exited"
rm -f "$work/client-ran"

run 1 "server killed by a signal" "$speedy" netem -q --server 'kill -KILL $$' -- \
  touch "$work/client-ran"
expect_err "the server command was killed by signal 9 .* the client was not run" \
  "server killed by a signal"
[[ -e "$work/client-ran" ]] && fail "the client ran although the server was killed"

# ---- waiting for a server that never listens costs next to no CPU ----
# 3 s of waiting; the old 2 ms polling of /proc/net/tcp took about a third of a core.
TIMEFORMAT='%U %S'
cpu="$({ time "$speedy" netem -q --server 'exec sleep 20' --server-wait 3 -- true \
  >/dev/null 2>&1; } 2>&1)"
seconds="$(awk '{ printf "%.2f", $1 + $2 }' <<<"$cpu")"
if awk -v s="$seconds" 'BEGIN { exit !(s < 0.3) }'; then
  echo "ok: 3 s of waiting for the server took $seconds s of CPU"
else
  fail "3 s of waiting for the server took $seconds s of CPU (user, system: $cpu), want < 0.3"
fi

# ---- SIGTERM while waiting for the server stops the link at once ----
"$speedy" netem -q --server 'exec sleep 60' --server-wait 60 -- true >"$work/out" 2>"$work/err" &
pid=$!
background+=("$pid")
for _ in $(seq 100); do
  [[ "$(ip netns list | grep -c "^spnm-$pid-")" == 2 ]] && break
  sleep 0.05
done
sleep 0.2 # into the wait
before=$failures
start=$(date +%s%N)
kill -TERM "$pid"
status=0
for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$pid" 2>/dev/null; then
  fail "SIGTERM during the server wait: still running 5 s later"
  kill -KILL "$pid"
fi
wait "$pid" || status=$?
took=$((($(date +%s%N) - start) / 1000000))
[[ "$status" == 1 ]] || fail "SIGTERM during the server wait: exit status $status, want 1"
grep -q "stopping the link" "$work/err" || fail "SIGTERM during the server wait: no message"
left="$(ip netns list | grep -c "^spnm-$pid-")"
[[ "$left" == 0 ]] || fail "SIGTERM during the server wait: $left namespaces left behind"
((failures == before)) && echo "ok: SIGTERM during the server wait stopped the link in $took ms"

if ((failures > 0)); then
  echo "$failures failure(s)"
  exit 1
fi
echo "all server-wait checks passed"
