#!/bin/bash
# run_e2e.sh SPEEDY SPEEDYD — `speedy lab run` end to end: the example corpus's two
# smallest pages, one link (cable, no loss), TLS off, http1-fcfs against spdy-multi, one
# repetition: four loads through real emulated links, each line valid and complete; a
# second invocation resumes (runs nothing); the report and its HTML come out.
# Skips (77) when not root, without /dev/net/tun or ip, or when the replay server or the
# loader is not built.
set -euo pipefail
speedy=$1
speedyd=$2
. "$(dirname "$0")/common.sh"
lab_need_links "$speedy" "$speedyd"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$speedy" lab synth "$tmp/corpus"
run() {
  "$speedy" lab run -o "$tmp/results.jsonl" -l cable --loss 0 --tls off \
    -c http1-fcfs,spdy-multi -n 1 --seed 3 --speedyd "$speedyd" --timeout 60 \
    "$tmp/corpus/synth-tiny.har" "$tmp/corpus/synth-small.har"
}
run 2>"$tmp/run1.err" || { cat "$tmp/run1.err"; exit 1; }
cat "$tmp/run1.err"
"$speedy" lab run --dry-run -o "$tmp/none.jsonl" -l cable --loss 0 --tls off \
  -c http1-fcfs,spdy-multi -n 1 "$tmp/corpus/synth-tiny.har" "$tmp/corpus/synth-small.har" \
  >"$tmp/keys" 2>/dev/null
python3 - "$tmp/results.jsonl" "$tmp/keys" <<'PY'
import json, sys
every = [json.loads(l) for l in open(sys.argv[1])]
# The matrix line first, then the loads in the matrix's order (the dry run's), whatever
# order they ended in.
assert every[0]["format"] == "speedy-lab-matrix/1" and every[0]["loads"] == 4, every[0]
lines = every[1:]
assert [d["key"] for d in lines] == open(sys.argv[2]).read().split("\n")[:-1], "order"
assert len(lines) == 4, f"4 loads expected, got {len(lines)}"
seen = set()
for d in lines:
    seen.add((d["page"].split("#")[0], d["config"]))
    assert d["valid"], f"{d['key']}: invalid: {d['invalid_reason']}"
    assert d["plt_ms"] >= d["lower_bound_ms"] > 0, d["key"]
    assert d["bytes_counted_by"] == "link emulator"
    assert d["bytes_down"] >= d["app_bytes_down"] > 0, "wire bytes include the headers"
    assert d["link"]["profile"] == "cable" and d["link"]["rtt_ms"] == 28
    assert d["settings"]["congestion_control"] == "cubic" and d["settings"]["order_seed"] == 3
    assert d["netem"]["tun_drops"] == 0 and d["netem"]["overflow_drops"] == 0
    assert all(r["end_ms"] is not None for r in d["resources"])
    print(f"  {d['page'][:40]:40} {d['config']:11} {d['plt_ms']:8.1f} ms (bound {d['lower_bound_ms']:.1f})")
assert seen == {(p, c) for p in ("synth-tiny.har", "synth-small.har") for c in ("http1-fcfs", "spdy-multi")}, seen
PY
# Resumed: nothing left to run, nothing appended.
run 2>"$tmp/run2.err"
grep -q "0 loads (4 already in" "$tmp/run2.err" || { cat "$tmp/run2.err"; exit 1; }
[[ $(wc -l <"$tmp/results.jsonl") == 5 ]] # and the matrix line
"$speedy" lab report --html "$tmp/report.html" "$tmp/results.jsonl" | tee "$tmp/table.txt"
grep -q '^spdy-multi' "$tmp/table.txt"
grep -q '<svg class="chart waterfall"' "$tmp/report.html"
echo "end to end: 4 loads, resumed, reported"
