#!/bin/bash
# dns_rtt_e2e.sh SPEEDY SPEEDYD — `speedy lab run --dns-rtt` end to end through emulated
# links: the example corpus's smallest page on cable without loss, TLS off, three
# configurations (HTTP/1.1 and SPDY multi-domain, SPDY single-domain), once without
# lookups and once with --dns-rtt 300, into one results file. Each line is valid and
# records its lookups (key, settings, the loader's command line); the lower bound grows by
# exactly one lookup, every page load time by at least one, single-domain's by one only.
# Skips (77) when not root, without /dev/net/tun or ip, or without the replay server.
set -euo pipefail
speedy=$1
speedyd=$2
. "$(dirname "$0")/common.sh"
lab_need_links "$speedy" "$speedyd"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$speedy" lab synth "$tmp/corpus" >/dev/null
run() {
  "$speedy" lab run -o "$tmp/results.jsonl" -l cable --loss 0 --tls off \
    -c http1-fcfs,spdy-multi,spdy-single -n 1 --seed 5 --speedyd "$speedyd" --timeout 60 "$@" \
    "$tmp/corpus/synth-tiny.har"
}
run 2>"$tmp/run0.err" || { cat "$tmp/run0.err"; exit 1; }
run --dns-rtt 300 2>"$tmp/run1.err" || { cat "$tmp/run1.err"; exit 1; }
python3 - "$tmp/results.jsonl" <<'PY'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
# One matrix line per run: lookups make another matrix.
assert sum(d["format"] == "speedy-lab-matrix/1" for d in lines) == 2, lines
lines = [d for d in lines if d["format"] == "speedy-lab-result/1"]
assert len(lines) == 6, f"6 loads expected, got {len(lines)}"
by = {}
for d in lines:
    dns = d["settings"]["dns_rtt_ms"]
    assert dns in (0, 300), d["settings"]
    assert d["valid"], f"{d['key']}: invalid: {d['invalid_reason']}"
    assert d["plt_ms"] >= d["lower_bound_ms"] > 0, d["key"]
    assert ("|dns=300|" in d["key"]) == (dns == 300), d["key"]
    assert "dns" not in d["key"] or dns, d["key"]
    assert ("--dns-rtt 300" in d["settings"]["loader"]) == (dns == 300), d["settings"]["loader"]
    by[(d["config"], dns)] = d
for config in ("http1-fcfs", "spdy-multi", "spdy-single"):
    a, b = by[(config, 0)], by[(config, 300)]
    bound_delta = b["lower_bound_ms"] - a["lower_bound_ms"]
    assert abs(bound_delta - 300) <= 0.11, f"{config}: the bound grew by {bound_delta}, want 300"
    # one lookup at least: the origin's comes before anything else (20 ms for the link's
    # and the machine's noise between two loads)
    plt_delta = b["plt_ms"] - a["plt_ms"]
    assert plt_delta >= 280, f"{config}: page load time grew by {plt_delta:.1f} ms, want >= 300"
    # single-domain: the origin's name is the only one looked up
    assert config != "spdy-single" or plt_delta <= 400, \
        f"{config}: page load time grew by {plt_delta:.1f} ms, want one lookup (300)"
    print(f"  {config:11} {a['plt_ms']:7.1f} -> {b['plt_ms']:7.1f} ms (+{plt_delta:.1f}); "
          f"bound {a['lower_bound_ms']:.1f} -> {b['lower_bound_ms']:.1f}")
PY
# Resumed with lookups: nothing left to run.
run --dns-rtt 300 2>"$tmp/run2.err"
grep -q "0 loads (3 already in" "$tmp/run2.err" || { cat "$tmp/run2.err"; exit 1; }
echo "end to end: 3 loads without and 3 with --dns-rtt 300"
