#!/bin/bash
# shard.sh SPEEDY STRESS_CORPUS — a matrix over several machines without a network
# (docs/lab.md, "A matrix over several machines"):
#  - bad --shard values are usage errors (exit 2) in the one style;
#  - the shards' loads (--dry-run) are the matrix's, each in exactly one shard, the
#    configurations of a repetition together, listed in the results' order, which does not
#    depend on the order of the inputs or of an option's values;
#  - a run whose loads are all in its results file already needs no link: it writes the
#    matrix line and its shard's skipped pages, and puts the file in the matrix's order. So
#    result lines written for every load (a stand-in for the measured ones, which never
#    repeat) make one run's file and two shards' files; `speedy lab merge` joins the shards
#    into the same bytes as the one run's file (cmp), and refuses an existing output and a
#    shard missing, saying which loads.
set -euo pipefail
speedy=$1
corpus=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
[[ -f $corpus/stress-14-leftover-beacon.har ]] || { echo "SKIP: no stress corpus at $corpus"; exit 77; }
command -v python3 >/dev/null || { echo "SKIP: python3 not found"; exit 77; }
# Two pages, one with a leftover first page (a skip line); a lossy link (more repetitions).
inputs=("$corpus/stress-14-leftover-beacon.har" "$corpus/stress-01-ipv4.har")
run() { # RESULTS OPTION...: the matrix, with more options
  local results=$1
  shift
  "$speedy" lab run -o "$results" -l cable,dsl --loss 0,1 --tls off -c http1-fcfs,spdy-multi \
    -n 1 --seed 7 "$@" "${inputs[@]}"
}

# Bad values.
for bad in 0/2 3/2 1/0 2 /2 1/ 1/2/3 x/2 " 1/2" 1/10001 -1/2; do
  rc=0
  run "$tmp/none.jsonl" --dry-run --shard "$bad" >/dev/null 2>"$tmp/err" || rc=$?
  [[ $rc == 2 ]] || fail "--shard '$bad': exit $rc, want 2"
  want="speedy lab run: bad --shard '$bad': expected K/N, shard K of N: whole numbers with 1 <= K <= N <= 10000 (try 'speedy lab run --help')"
  [[ $(cat "$tmp/err") == "$want" ]] || fail "--shard '$bad': $(cat "$tmp/err")"
done

# A page given twice would give two loads one key: refused before anything runs.
rc=0
run "$tmp/none.jsonl" --dry-run "${inputs[1]}" >/dev/null 2>"$tmp/err" || rc=$?
[[ $rc == 1 ]] && grep -q "two inputs give the page 'stress-01-ipv4.har#first page (estimated)'" \
  "$tmp/err" || fail "a page given twice: exit $rc: $(cat "$tmp/err")"

# The loads of each shard.
run "$tmp/none.jsonl" --dry-run >"$tmp/all" 2>/dev/null
run "$tmp/none.jsonl" --dry-run --shard 1/2 >"$tmp/one" 2>"$tmp/err1"
run "$tmp/none.jsonl" --dry-run --shard 2/2 >"$tmp/two" 2>/dev/null
grep -q "shard 1/2 holds $(wc -l <"$tmp/one") of the matrix's 24 loads" "$tmp/err1" ||
  fail "$(cat "$tmp/err1")"
# Inputs and values in another order: the same matrix, listed the same way.
inputs=("${inputs[1]}" "${inputs[0]}")
"$speedy" lab run --dry-run -o "$tmp/none.jsonl" -l dsl,cable --loss 1,0 --tls off \
  -c spdy-multi,http1-fcfs -n 1 --seed 9 --shard 2/2 "${inputs[@]}" >"$tmp/two-again" 2>/dev/null
cmp -s "$tmp/two" "$tmp/two-again" || fail "another order of inputs and values: $(diff "$tmp/two" "$tmp/two-again")"
python3 - "$tmp/all" "$tmp/one" "$tmp/two" <<'PY'
import sys
every, one, two = ([l.rstrip("\n") for l in open(f)] for f in sys.argv[1:])
assert len(every) == 24, f"2 pages x (cable, dsl) x (loss 0: 1 rep, loss 1: 2) x 2 configs: {len(every)}"
assert one and two, "both shards have loads"
assert not set(one) & set(two), f"in both shards: {set(one) & set(two)}"
assert sorted(one + two) == sorted(every), "every load in a shard"
for shard in (one, two):
    assert [k for k in every if k in shard] == shard, "each shard in the matrix's order"
def unit(key):  # the key without its configuration
    parts = key.split("|")
    return "|".join(p for p in parts if p not in ("http1-fcfs", "spdy-multi"))
assert not {unit(k) for k in one} & {unit(k) for k in two}, "a repetition split over shards"
print(f"shards: {len(one)} + {len(two)} of {len(every)} loads")
PY

# Result lines for the loads, in a shuffled order, as stand-ins for measured ones.
fake() { # KEYS OUT
  python3 - "$1" "$2" <<'PY'
import json, random, sys
keys = [l.rstrip("\n") for l in open(sys.argv[1])]
random.Random(len(keys)).shuffle(keys)
with open(sys.argv[2], "w") as f:
    for i, key in enumerate(keys):
        f.write(json.dumps({"format": "speedy-lab-result/1", "key": key, "valid": True,
                            "plt_ms": 1000 + i}, separators=(",", ":")) + "\n")
PY
}
fake "$tmp/all" "$tmp/single.jsonl"
run "$tmp/single.jsonl" 2>"$tmp/err" || fail "$(cat "$tmp/err")"
grep -q "0 loads (24 already in" "$tmp/err" || fail "$(cat "$tmp/err")"
python3 - "$tmp/single.jsonl" "$tmp/all" <<'PY'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
keys = [l.rstrip("\n") for l in open(sys.argv[2])]
assert lines[0]["format"] == "speedy-lab-matrix/1", lines[0]
assert lines[0]["loads"] == 24 and lines[0]["configs"] == ["http1-fcfs", "spdy-multi"], lines[0]
assert lines[1]["format"] == "speedy-lab-skip/1", lines[1]
assert lines[1]["key"] == "stress-14-leftover-beacon.har#page 1|skipped", lines[1]
assert [d["key"] for d in lines[2:]] == keys, "the loads in the matrix's order"
PY
for k in 1 2; do
  keys=$([[ $k == 1 ]] && echo "$tmp/one" || echo "$tmp/two")
  fake "$keys" "$tmp/shard$k.jsonl"
  # Numbered as the single file's: the same lines, as one run would have written them.
  python3 - "$tmp/single.jsonl" "$tmp/shard$k.jsonl" <<'PY'
import json, sys
mine = {json.loads(l).get("key"): l for l in open(sys.argv[1])}
keys = [json.loads(l)["key"] for l in open(sys.argv[2])]
open(sys.argv[2], "w").writelines(mine[k] for k in keys)
PY
  run "$tmp/shard$k.jsonl" --shard "$k/2" 2>"$tmp/err" || fail "$(cat "$tmp/err")"
done
"$speedy" lab merge "$tmp/merged.jsonl" "$tmp/shard2.jsonl" "$tmp/shard1.jsonl" 2>"$tmp/err" ||
  fail "merge: $(cat "$tmp/err")"
cmp "$tmp/merged.jsonl" "$tmp/single.jsonl" || fail "the merged file is not the single run's"
grep -q "merged.jsonl: 24 loads and 1 skipped page from 2 files" "$tmp/err" || fail "$(cat "$tmp/err")"

# Refusals: an existing output; a shard missing (its loads named).
rc=0
"$speedy" lab merge "$tmp/merged.jsonl" "$tmp/shard1.jsonl" "$tmp/shard2.jsonl" 2>"$tmp/err" || rc=$?
[[ $rc == 1 ]] && grep -q "exists" "$tmp/err" || fail "an existing output: exit $rc: $(cat "$tmp/err")"
rc=0
"$speedy" lab merge "$tmp/part.jsonl" "$tmp/shard1.jsonl" 2>"$tmp/err" || rc=$?
[[ $rc == 1 ]] || fail "one shard of two: exit $rc"
missing=$((25 - ($(wc -l <"$tmp/shard1.jsonl") - 1))) # all but shard 1's lines, its matrix line
grep -q "$missing of the matrix's 25 loads and skipped pages are in no input" "$tmp/err" ||
  fail "$(cat "$tmp/err")"
grep -qF "$(head -1 "$tmp/two")" "$tmp/err" || fail "the missing loads are not named: $(cat "$tmp/err")"
[[ ! -e $tmp/part.jsonl ]] || fail "a refused merge wrote its output"
# Usage.
rc=0
"$speedy" lab merge "$tmp/x.jsonl" >/dev/null 2>&1 || rc=$?
[[ $rc == 2 ]] || fail "merge without inputs: exit $rc, want 2"
"$speedy" lab merge --help | grep -q "Usage: speedy lab merge OUT RESULTS" || fail "merge --help"
"$speedy" lab run --help | grep -q -- "--shard K/N" || fail "run --help lacks --shard"
echo "PASS: shards partition the matrix; two shards merge into the single run's bytes"
