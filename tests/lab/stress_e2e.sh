#!/bin/bash
# stress_e2e.sh SPEEDY SPEEDYD SOURCE_DIR — `speedy lab run` over the stress corpus
# (tests/lab/stress/make_corpus.py: browser HARs of every shape that broke replays, and
# record_site.py: examples/site loaded by headless Chromium, when there is one) with
# the matrix of issue 16's report: dsl and cable, no loss, TLS on, http1-fcfs, spdy-multi
# and spdy-single, one repetition. At least 98% of the loads must be valid, every invalid
# load and every page not replayed must carry its reason, the pages skipped and replayed
# must be those expect.txt names, and the report must count every exclusion.
# Skips (77) when not root, without /dev/net/tun or ip, python3, or the replay server and
# the loader. About two and a half minutes here (174 loads, two links at once).
set -euo pipefail
speedy=$1
speedyd=$2
source_dir=$3
. "$(dirname "$0")/common.sh"
lab_need_links "$speedy" "$speedyd"
[[ -x /usr/bin/python3 ]] || skip "no /usr/bin/python3 for the corpus generator"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
/usr/bin/python3 "$source_dir/tests/lab/stress/make_corpus.py" "$tmp/corpus"
# Three loads of examples/site by headless Chromium, recorded to HAR beside them (skipped
# without chromium: the synthetic corpus alone is still run).
rc=0
/usr/bin/python3 "$source_dir/tests/lab/stress/record_site.py" "$speedyd" "$tmp/corpus" \
  "$source_dir/examples/site" || rc=$?
[[ $rc == 0 || $rc == 77 ]] || { echo "recording the example site failed ($rc)"; exit 1; }
start=$(date +%s)
"$speedy" lab run -o "$tmp/results.jsonl" -l dsl,cable --loss 0 --tls on \
  -c http1-fcfs,spdy-multi,spdy-single -n 1 --seed 16 --speedyd "$speedyd" --timeout 60 \
  "$tmp/corpus" 2>"$tmp/run.err" || { cat "$tmp/run.err"; exit 1; }
echo "run: $(($(date +%s) - start)) s"
"$speedy" lab report "$tmp/results.jsonl" >"$tmp/report.txt"
/usr/bin/python3 - "$tmp/results.jsonl" "$tmp/corpus/expect.txt" "$tmp/report.txt" <<'PY'
import json, re, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
expect = json.load(open(sys.argv[2]))
report = open(sys.argv[3]).read()
loads = [d for d in lines if d["format"] == "speedy-lab-result/1"]
skips = [d for d in lines if d["format"] == "speedy-lab-skip/1"]
valid = [d for d in loads if d["valid"]]
share = 100.0 * len(valid) / len(loads)
print(f"valid loads: {len(valid)} of {len(loads)} ({share:.1f}%)")
for d in loads:
    if not d["valid"]:
        print(f"  invalid: {d['key']}: {d['invalid_reason']}")
        assert d["invalid_reason"], f"{d['key']}: invalid without a reason"
assert share >= 98.0, f"{share:.1f}% of the loads valid, want at least 98%"
# Every file contributes the page expect.txt names, in every configuration and link.
want_loads = len(expect) * 2 * 3
assert len(loads) == want_loads, f"{len(loads)} loads, want {want_loads}"
for har, want in expect.items():
    page = "first page" if want["page"] == 1 else f"page {want['page']}"
    mine = [d for d in loads if d["page"] == f"{har}#{page} (estimated)"]
    assert len(mine) == 6, f"{har}: {len(mine)} loads of {page}, want 6"
    for skipped in want.get("skipped", []):
        key = f"{har}#page {skipped['page']}|skipped"
        found = [s for s in skips if s["key"] == key]
        assert len(found) == 1, f"{key}: {len(found)} skip lines"
        assert skipped["reason"] in found[0]["reason"], f"{key}: reason {found[0]['reason']!r}"
n_skipped = sum(len(w.get("skipped", [])) for w in expect.values())
assert len(skips) == n_skipped, f"{len(skips)} skip lines, want {n_skipped}"
# The report counts each exclusion with its reason.
assert f"invalid loads: {len(loads) - len(valid)} of {len(loads)}" in report, report
assert f"pages not replayed: {n_skipped}" in report, report
left = sum(sum(d.get("left_out", {}).values()) for d in loads if d["config"] == "http1-fcfs"
           and d["link"]["profile"] == "cable")
assert f"left out of every replay: {left}" in report, report
for name in ("data: URL", "websocket", "no answer (status 0)", "redirect to the same request"):
    assert name in report, f"left-out reason {name!r} not in the report"
PY
sed -n '/^Left out of the figures/,/^$/p' "$tmp/report.txt"
echo "stress corpus end to end: done"
