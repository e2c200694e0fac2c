#!/bin/bash
# interrupt.sh SPEEDY SPEEDYD — `speedy lab run` stopped in the middle (docs/lab.md,
# "Interrupted"): four loads of the example corpus through slow emulated links (RTT
# 400 ms, -j 2), interrupted while loads are in progress. Netem names a link's two
# namespaces spnm-PID-N-c and -s (its TUN devices live inside them, so they go with them).
#   SIGTERM after the first line: exit 143 within 5 s, the loads in progress aborted and
#     not recorded, nothing of the run left (its namespaces spnm-PID-*, host devices,
#     processes), every line a complete result, the summary line's count = the lines;
#     the same command again runs the other loads only.
#   SIGINT while the first loads run: the same with 130.
#   SIGTERM twice: exit 143 at once (or after the cleanup, if it was quicker than the
#     second signal); every line whole; the next run removes what was left and finishes.
#   SIGKILL: the links stay (nothing can clean up); the next run removes them at its start.
# Skips (77) when not root, without /dev/net/tun or ip, or when the replay server or the
# loader is not built.
set -euo pipefail
speedy=$1
speedyd=$2
. "$(dirname "$0")/common.sh"
lab_need_links "$speedy" "$speedyd"

tmp=$(mktemp -d)
pid=
cleanup() {
  if [[ -n $pid ]] && kill -0 "$pid" 2>/dev/null; then kill -KILL "$pid" 2>/dev/null || true; fi
  # What a failed check may have left: this test's namespaces and processes only.
  for p in $(ps -eo pid=,args= | grep -F -- "$tmp/" | grep -v grep | awk '{print $1}'); do
    kill -KILL "$p" 2>/dev/null || true
  done
  for ns in $(ip netns list | awk '{print $1}'); do
    for owner in "${owners[@]}"; do
      [[ $ns == spnm-$owner-* ]] && ip netns delete "$ns" 2>/dev/null || true
    done
  done
  rm -rf "$tmp"
}
owners=()
trap cleanup EXIT
fail() { echo "FAIL: $*"; exit 1; }

"$speedy" lab synth "$tmp/corpus" >/dev/null
ip -o link show | awk -F': ' '{print $2}' | sort >"$tmp/links.before"

# The run; `env --default-signal`: a background job of a script starts with SIGINT
# ignored, which the run keeps ignoring (as it should).
start() { # results-file: starts the run in the background, sets pid
  env --default-signal "$speedy" lab run -o "$1" -l cable --rtt 400 --loss 0 --tls off \
    -c http1-fcfs,spdy-multi -n 1 -j 2 --seed 7 --speedyd "$speedyd" --timeout 60 \
    "$tmp/corpus/synth-tiny.har" "$tmp/corpus/synth-small.har" 2>"$1.err" &
  pid=$!
  owners+=("$pid")
}

wait_until() { # seconds condition...: polls every 50 ms
  local deadline=$((SECONDS + $1))
  shift
  until "$@"; do
    ((SECONDS < deadline)) || return 1
    sleep 0.05
  done
}
has_line() { grep -qF '"format":"speedy-lab-result/1"' "$1" 2>/dev/null; }
# A third link is up: a worker went on after its first load (links are numbered from 0).
third_load_started() { ip netns list | grep -qE "^spnm-$pid-([2-9]|[1-9][0-9]+)-"; }
# A loader runs: its log is made when it starts (the load's directory is the key's).
loader_started() { compgen -G "$results.d/loads/*/loader.log" >/dev/null; }
gone() { ! kill -0 "$pid" 2>/dev/null; }

# Sends the signal(s), waits for the run to end; sets status and elapsed (ms).
stop_run() { # signal [signal...]
  local t0 first=1
  t0=$(date +%s%N)
  for sig in "$@"; do
    ((first)) || sleep 0.05
    first=0
    kill "-$sig" "$pid"
  done
  wait_until 20 gone || { kill -KILL "$pid"; fail "still running 20 s after SIG$1"; }
  status=0
  wait "$pid" 2>/dev/null || status=$?
  elapsed=$((($(date +%s%N) - t0) / 1000000))
}

# Nothing of run $1 left: namespaces, host devices, live processes. Processes are the
# run's when their command line names a file of this test (servers, loaders, speedyd's
# workers); a zombie adopted by init (pid 1) is init's to reap and only reported.
check_nothing_left() { # pid
  local ns
  ns=$(ip netns list | awk '{print $1}' | grep "^spnm-$1-" || true)
  [[ -z $ns ]] || fail "namespaces of run $1 left: $ns"
  ip -o link show | awk -F': ' '{print $2}' | sort >"$tmp/links.after"
  local added
  added=$(comm -13 "$tmp/links.before" "$tmp/links.after" | grep -E 'netem|spnm|tun' || true)
  [[ -z $added ]] || fail "host devices left: $added"
  local left=
  wait_until 3 no_live_process || left=1
  if [[ -n $left ]]; then
    ps -eo pid=,ppid=,stat=,args= | grep -F -- "$tmp/" | grep -v grep
    fail "processes of run $1 left"
  fi
  ps -eo pid=,ppid=,stat=,args= | grep -F -- "$tmp/" | grep -v grep |
    awk '{print "  note: zombie adopted by init:", $0}' || true
}
no_live_process() {
  ! ps -eo pid=,ppid=,stat=,args= | grep -F -- "$tmp/" | grep -v grep |
    awk '$3 !~ /^Z/ || $2 != 1 {found=1} END {exit !found}'
}

# Every line whole and a complete result (besides the one matrix line, written first); the
# keys unique; prints the count of results.
check_lines() { # results
  python3 - "$1" <<'PY'
import json, sys
data = open(sys.argv[1], "rb").read() if __import__("os").path.exists(sys.argv[1]) else b""
assert data == b"" or data.endswith(b"\n"), "the last line is not whole"
keys = set()
for n, raw in enumerate(data.splitlines(), 1):
    d = json.loads(raw)
    assert isinstance(d, dict), f"line {n} is not an object"
    if d.get("format") == "speedy-lab-matrix/1":
        assert n == 1, f"line {n}: the matrix line is not first"
        continue
    for field in ("key", "plt_ms", "valid", "lower_bound_ms", "netem", "settings", "resources"):
        assert field in d, f"line {n}: no {field}"
    assert d["valid"], f"line {n}: invalid: {d.get('invalid_reason')}"
    assert d["key"] not in keys, f"line {n}: {d['key']} twice"
    keys.add(d["key"])
print(len(keys))
PY
}

# The summary line: "SIG: stopped after N of M loads (A aborted ...); L left: run the
# same command again to resume". Prints N.
check_summary() { # results signal-name
  local line
  line=$(grep "speedy lab run: $2: stopped after" "$1.err") || {
    cat "$1.err"
    fail "no summary line for $2"
  }
  [[ $line == *"run the same command again to resume"* ]] || fail "summary: $line"
  echo "$line" | sed -E 's/.*stopped after ([0-9]+) of.*/\1/'
}

# The same command again: runs only what is left, and everything is there after it.
resume_and_check() { # results done-before
  start "$1"
  wait "$pid" || { cat "$1.err"; fail "the resumed run failed"; }
  grep -q "speedy lab run: $((4 - $2)) loads ($2 already in" "$1.err" || {
    cat "$1.err"
    fail "the resumed run did not skip the $2 recorded loads"
  }
  [[ $(check_lines "$1") == 4 ]] || fail "4 loads expected after resuming"
  check_nothing_left "$pid"
}

# ---- SIGTERM after the first recorded load ----
results=$tmp/term.jsonl
start "$results"
wait_until 90 has_line "$results" || { cat "$results.err"; fail "no load finished"; }
wait_until 30 third_load_started || { cat "$results.err"; fail "no third load"; }
stop_run TERM
[[ $status == 143 ]] || { cat "$results.err"; fail "SIGTERM: exit $status, 143 expected"; }
((elapsed <= 5000)) || fail "SIGTERM: $elapsed ms to exit"
check_nothing_left "$pid"
n=$(check_lines "$results")
[[ $n -ge 1 && $n -lt 4 ]] || fail "SIGTERM: $n lines"
[[ $(check_summary "$results" SIGTERM) == "$n" ]] || fail "the summary does not count $n lines"
grep -q "[1-9][0-9]* aborted and not recorded" "$results.err" || fail "no load was aborted"
echo "SIGTERM: exit 143 after $elapsed ms, $n of 4 loads recorded, nothing left"
resume_and_check "$results" "$n"
echo "SIGTERM: resumed, 4 loads"

# ---- SIGINT while the first loads run ----
results=$tmp/int.jsonl
start "$results"
wait_until 60 loader_started || { cat "$results.err"; fail "no load started"; }
sleep 0.3
stop_run INT
[[ $status == 130 ]] || { cat "$results.err"; fail "SIGINT: exit $status, 130 expected"; }
((elapsed <= 5000)) || fail "SIGINT: $elapsed ms to exit"
check_nothing_left "$pid"
n=$(check_lines "$results")
[[ $(check_summary "$results" SIGINT) == "$n" ]] || fail "the summary does not count $n lines"
grep -q "[1-9][0-9]* aborted and not recorded" "$results.err" || fail "no load was aborted"
# A loader ran (its log exists) for more loads than were recorded: one was cut short.
loaders=$(find "$results.d/loads" -name loader.log | wc -l)
((loaders > n)) || fail "SIGINT: no loader was running ($loaders loaders, $n lines)"
echo "SIGINT: exit 130 after $elapsed ms, $n of 4 loads recorded, nothing left"
resume_and_check "$results" "$n"
echo "SIGINT: resumed, 4 loads"

# ---- SIGTERM twice: out at once ----
results=$tmp/twice.jsonl
start "$results"
wait_until 60 loader_started || { cat "$results.err"; fail "no load started"; }
sleep 0.3
stopped=$pid
stop_run TERM TERM
[[ $status == 143 ]] || { cat "$results.err"; fail "SIGTERM twice: exit $status, 143 expected"; }
((elapsed <= 5000)) || fail "SIGTERM twice: $elapsed ms to exit"
n=$(check_lines "$results")
if grep -q "SIGTERM again: exiting at once" "$results.err"; then
  echo "SIGTERM twice: exit 143 at once after $elapsed ms, $n lines, all whole"
else
  echo "SIGTERM twice: the cleanup ended before the second signal ($elapsed ms)"
fi
resume_and_check "$results" "$n"
check_nothing_left "$stopped"
echo "SIGTERM twice: the next run removed what was left and finished"

# ---- SIGKILL: only the next start can clean ----
results=$tmp/kill.jsonl
start "$results"
wait_until 60 loader_started || { cat "$results.err"; fail "no load started"; }
sleep 0.3
killed=$pid
stop_run KILL 2>/dev/null # (no "Killed" notice from bash)
[[ $status == 137 ]] || fail "SIGKILL: exit $status"
# (Another run starting meanwhile on this machine may have removed them already.)
left=$(ip netns list | grep -c "^spnm-$killed-" || true)
((left > 0)) || echo "  note: no namespace of the killed run left"
n=$(check_lines "$results")
resume_and_check "$results" "$n"
check_nothing_left "$killed"
if ((left > 0)); then
  grep -q "removed [0-9]* network namespaces\? left by a run that was killed" "$results.err" ||
    fail "the next run did not say it removed $left namespaces"
fi
echo "SIGKILL: the next run removed the links left and finished"
echo "interrupt: SIGTERM, SIGINT, SIGTERM twice and SIGKILL: nothing left, resumed"
