#!/usr/bin/env bash
# cli_test.sh — the `speedy netem` command line: usage and exit codes, a server and a
# client run on the two sides with statistics written as JSON, the client's exit status
# returned, cleanup on SIGTERM and SIGINT, leftovers of killed runs removed, and a clear
# refusal without root.
#
# Usage: cli_test.sh SPEEDY NETEM_CHECK   (exit 0 pass, 1 fail, 77 skipped)
set -u
speedy="$1"
netem_check="$2"
work="$(mktemp -d)"
background=()
failures=0

cleanup() {
  local pid
  for pid in "${background[@]+"${background[@]}"}"; do
    kill -KILL "$pid" 2>/dev/null
  done
  # Namespaces any speedy started by this script left behind (only if it was killed).
  for pid in "${background[@]+"${background[@]}"}"; do
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

expect_status() { # expect_status WANT DESCRIPTION COMMAND...
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

# ---- usage: needs no privileges ----
expect_status 0 "speedy --help" "$speedy" --help
grep -q netem "$work/out" || fail "speedy --help does not list netem"
expect_status 0 "speedy --version" "$speedy" --version
expect_status 2 "speedy with an unknown command" "$speedy" frobnicate
expect_status 2 "speedy with no command" "$speedy"
expect_status 0 "speedy netem --help" "$speedy" netem --help
grep -q -- "--queue-packets" "$work/out" || fail "speedy netem --help lacks --queue-packets"
expect_status 2 "unknown option" "$speedy" netem --bogus -- true
expect_status 2 "unknown profile" "$speedy" netem --profile dialup -- true
expect_status 2 "bad rate" "$speedy" netem --down fast -- true

if [[ "$(id -u)" != 0 ]]; then
  echo "SKIP: the rest needs root (network namespaces and TUN devices); CI runs as root"
  exit $((failures > 0 ? 1 : 77))
fi
if [[ ! -c /dev/net/tun ]] || ! ip netns list >/dev/null 2>&1; then
  echo "SKIP: /dev/net/tun or 'ip netns' is not available"
  exit $((failures > 0 ? 1 : 77))
fi

# ---- without root: a clear error ----
if command -v setpriv >/dev/null; then
  expect_status 1 "not root" setpriv --reuid=65534 --regid=65534 --clear-groups \
    "$speedy" netem --profile dsl -- true
  grep -q "needs root" "$work/err" || fail "the non-root error does not say root is needed"
else
  echo "note: setpriv missing, the non-root refusal is not checked"
fi

# ---- an unavailable congestion control fails clearly ----
expect_status 1 "unknown congestion control" "$speedy" netem --cc nonesuch -- true
grep -q "not available" "$work/err" || fail "the --cc error does not say it is unavailable"

# ---- the client's exit status is returned ----
expect_status 3 "client exit status" "$speedy" netem -q --profile cable -- sh -c 'exit 3'

# ---- server and client on the two sides, statistics as JSON ----
expect_status 0 "echo server and probe over dsl" "$speedy" netem --profile dsl --seed 1 \
  --stats-json "$work/stats.json" --server "exec $netem_check echo-server" -- \
  "$netem_check" probe 10
cat "$work/out"
rtt="$(awk '/rtt_median_ms/ {print $2}' "$work/out")"
# The plumbing, not the precision (netem.rtt_* check that, with the host's own share
# measured): two processes started through sh add their wake-ups on a slow host.
awk -v r="${rtt:-0}" 'BEGIN { exit !(r > 51.0 && r < 55.0) }' ||
  fail "median RTT over dsl was '${rtt}' ms, want 51.5 plus at most a few ms of the host's own"
for key in '"packets_forwarded"' '"lateness"' '"tun_drops": 0' '"congestion_control": "cubic"' \
  '"queue_limit": 24000'; do
  grep -q -- "$key" "$work/stats.json" || fail "stats JSON lacks $key"
done
grep -q "lateness p50" "$work/err" || fail "human statistics lack the lateness line"
grep -q "queue limit 24000 bytes" "$work/err" || fail "the queue limit is not printed at start"

# ---- SIGTERM and SIGINT: namespaces and children are removed ----
for sig in TERM INT; do
  "$speedy" netem -q --profile dsl -- sleep 60 >"$work/out" 2>"$work/err" &
  pid=$!
  background+=("$pid")
  for _ in $(seq 100); do
    [[ "$(ip netns list | grep -c "^spnm-$pid-")" == 2 ]] && pgrep -P "$pid" -x sleep >/dev/null && break
    sleep 0.05
  done
  [[ "$(ip netns list | grep -c "^spnm-$pid-")" == 2 ]] || fail "SIG$sig: the link did not come up"
  client="$(pgrep -P "$pid" -x sleep)"
  kill -"$sig" "$pid"
  status=0
  wait "$pid" || status=$?
  [[ "$status" == 1 ]] || fail "SIG$sig: exit status $status, want 1"
  left="$(ip netns list | grep -c "^spnm-$pid-")"
  [[ "$left" == 0 ]] || fail "SIG$sig: $left namespaces left behind"
  [[ -n "$client" ]] && kill -0 "$client" 2>/dev/null && fail "SIG$sig: the client command survived"
  echo "ok: SIG$sig removes the namespaces and ends the client"
done

# ---- leftovers of a killed run are removed at start ----
ghost="spnm-99999999-0-c"
ip netns add "$ghost"
expect_status 0 "a run after a killed one" "$speedy" netem -q -- true
if ip netns list | grep -q "^$ghost"; then
  ip netns delete "$ghost"
  fail "the leftover namespace $ghost was not removed"
else
  echo "ok: the leftover namespace was removed"
fi

if ((failures > 0)); then
  echo "$failures failure(s)"
  exit 1
fi
echo "all CLI checks passed"
