#!/bin/bash
# agree.sh SPEEDY SPEEDYD [canned|runs] — `speedy lab agree`, the lab's repeatability check.
#  1. On the canned results (no network): a run agrees with itself; a configuration 8 %
#     slower disagrees and 3 % slower agrees (loss-free: 5 % tolerance); with loss the
#     confidence intervals decide; bad usage is exit 2.
#  2. With root and network namespaces: two identical loss-free runs of a small matrix
#     (two synthetic pages, cable with a queue that drops nothing, http1-fcfs and
#     spdy-multi, two repetitions) agree. Part 2 is skipped (with a message) otherwise.
# "canned" runs part 1 only, "runs" part 2 only; without it, both.
set -euo pipefail
speedy=$1
speedyd=$2
part=${3:-both}
src=${SPEEDY_SOURCE_DIR:?}
command -v python3 >/dev/null || { echo "SKIP: python3 not found"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
canned=$src/tests/lab/data/results-canned.jsonl

# variant OUT CONFIG FACTOR LOSS: the canned results with CONFIG's page load times scaled
# by FACTOR and every link's loss set to LOSS.
variant() {
  python3 - "$canned" "$1" "$2" "$3" "$4" <<'PY'
import json, sys
src, out, config, factor, loss = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4]), float(sys.argv[5])
with open(out, "w") as f:
    for line in open(src):
        d = json.loads(line)
        if d.get("config") == config:
            d["plt_ms"] *= factor
            d["plt_cutoff_ms"] *= factor
        if "link" in d:
            d["link"]["loss"] = loss
        f.write(json.dumps(d) + "\n")
PY
}
expect() { # expect STATUS ARGS...: speedy lab agree must exit with STATUS
  local want=$1 rc=0
  shift
  "$speedy" lab agree "$@" >"$tmp/out" 2>&1 || rc=$?
  if [[ $rc != "$want" ]]; then
    cat "$tmp/out"
    echo "FAIL: speedy lab agree $* exited $rc, expected $want"
    exit 1
  fi
}
if [[ $part != runs ]]; then
expect 0 "$canned" "$canned"
variant "$tmp/slower8.jsonl" spdy-multi 1.08 0
expect 1 "$canned" "$tmp/slower8.jsonl"
grep -q "spdy-multi.*DIFFER" "$tmp/out"
grep -q "http1-fcfs.*agree" "$tmp/out"
variant "$tmp/slower3.jsonl" spdy-multi 1.03 0
expect 0 "$canned" "$tmp/slower3.jsonl"
expect 0 --tolerance 2.5 "$canned" "$canned"
expect 1 --tolerance 2.5 "$canned" "$tmp/slower3.jsonl"
# With loss: 8 % apart is well inside the intervals; 10x is not.
variant "$tmp/lossy.jsonl" spdy-multi 1 0.01
variant "$tmp/lossy8.jsonl" spdy-multi 1.08 0.01
variant "$tmp/lossy10x.jsonl" spdy-multi 10 0.01
expect 0 "$tmp/lossy.jsonl" "$tmp/lossy8.jsonl"
grep -q "CIs agree" "$tmp/out"
expect 1 "$tmp/lossy.jsonl" "$tmp/lossy10x.jsonl"
# Bad usage and bad input.
expect 2 "$canned"
expect 2 --tolerance 0 "$canned" "$canned"
expect 2 --bogus "$canned" "$canned"
expect 1 "$canned" "$tmp/missing.jsonl"
echo "agree: canned results ok"
fi
[[ $part != canned ]] || exit 0

# 2. Two identical real runs.
skip() { echo "SKIP (two real runs): $*"; [[ $part == runs ]] && exit 77; exit 0; }
[[ $(id -u) == 0 ]] || skip "needs root (network namespaces)"
[[ -c /dev/net/tun ]] || skip "no /dev/net/tun"
command -v ip >/dev/null || skip "no ip (iproute2)"
[[ -x $speedyd ]] || skip "the replay server ($speedyd) is not built"
"$speedy" lab synth "$tmp/corpus" >/dev/null
for run in 1 2; do
  "$speedy" lab run -o "$tmp/run$run.jsonl" -l cable --loss 0 --tls off --queue 1M \
    -c http1-fcfs,spdy-multi -n 2 --seed "$run" --speedyd "$speedyd" --timeout 60 \
    "$tmp/corpus/synth-tiny.har" "$tmp/corpus/synth-small.har" 2>"$tmp/run$run.err" ||
    { cat "$tmp/run$run.err"; exit 1; }
done
expect 0 "$tmp/run1.jsonl" "$tmp/run2.jsonl"
cat "$tmp/out"
echo "agree: two identical loss-free runs agree"
