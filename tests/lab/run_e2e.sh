#!/bin/bash
# run_e2e.sh SPEEDY SPEEDYD — `speedy lab run` end to end: the example corpus's two
# smallest pages, one link (cable, no loss), TLS off, http1-fcfs against spdy-multi, one
# repetition: four loads through real emulated links, each line valid and complete; a
# second invocation resumes (runs nothing); the report and its HTML come out.
# Then HTTP/2: spdy-multi and every h2 configuration, TLS off (h2c) and on (ALPN), on the
# smallest example page and, with $SPEEDY_SHARED_DIR, the recording
# mnot-craigslist.org.har (two hosts the recording saw at one address): every object
# loaded, HTTP/2 spoken, HPACK header bytes above 0, pushes and hints used, one connection
# for the coalesced hosts and two without coalescing; the report's side-by-side table.
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

h2_pages=("$tmp/corpus/synth-tiny.har")
har=${SPEEDY_SHARED_DIR:-}/corpus/har/mnot-craigslist.org.har
if [[ -n ${SPEEDY_SHARED_DIR:-} && -f $har ]]; then
  h2_pages+=("$har")
else
  echo "no HAR corpus at \$SPEEDY_SHARED_DIR/corpus/har: HTTP/2 on the synthetic page only"
fi
"$speedy" lab run -o "$tmp/h2.jsonl" -l cable --loss 0 --tls off,on \
  -c spdy-multi,h2-multi,h2-single,h2-coalesced,h2-push,h2-hint -n 1 --seed 3 \
  --speedyd "$speedyd" --timeout 60 "${h2_pages[@]}" 2>"$tmp/h2.err" || { cat "$tmp/h2.err"; exit 1; }
python3 - "$tmp/h2.jsonl" "${#h2_pages[@]}" <<'PY'
import json, sys
loads = [json.loads(l) for l in open(sys.argv[1])]
loads = [d for d in loads if d["format"] == "speedy-lab-result/1"]
want = 12 * int(sys.argv[2])
assert len(loads) == want, f"{want} loads expected, got {len(loads)}"
by = {}
for d in loads:
    k = d["key"]
    by[(d["page"].split("#")[0], d["config"], d["tls"])] = d
    assert d["valid"], f"{k}: invalid: {d['invalid_reason']}"
    assert all(r["end_ms"] is not None and r["status"] > 0 for r in d["resources"]), k
    assert d["plt_ms"] >= d["lower_bound_ms"] > 0, k
    h2 = d["config"].startswith("h2-")
    assert d["protocol"] == ("h2" if h2 else "spdy/3.1"), (k, d["protocol"])
    assert d["request_header_bytes"] > 0 and d["response_header_bytes"] > 0, k
    if d["config"] == "h2-push":
        assert d["push"] and d["pushed"] > 0, f"{k}: nothing pushed"
    if d["config"] == "h2-hint":
        assert d["hint"] and d["hinted"] > 0, f"{k}: nothing hinted"
    if d["config"] in ("h2-single", "h2-push", "h2-hint"):
        assert d["mode"] == "single-domain" and d["connections"] == 1, k
    # What the loader opened is what crossed the link; it used them all (no --chromium-sockets).
    assert d["tcp_connects"] == d["connections_opened"] == d["connections"], \
        (k, d["tcp_connects"], d["connections_opened"], d["connections"])
    if d["config"] == "h2-coalesced":
        assert d["mode"] == "coalesced" and d["uncoalesced_hosts"] == 0, k
    n = d["netem"]
    assert n["packets_up"] > 0 and n["packets_down"] > 0, (k, n)
    assert 0 <= n["queue_drops_up"] <= n["queue_drops"], (k, n)
    print(f"  {d['page'][:34]:34} {d['config']:12} TLS {'on ' if d['tls'] else 'off'}"
          f" {d['plt_ms']:7.1f} ms, {d['connections']} conn, headers {d['request_header_bytes']}"
          f" up {d['response_header_bytes']} down")
for tls in (False, True):
    # The synthetic page records no server address: every host is its own group.
    tiny = lambda c: by[("synth-tiny.har", c, tls)]
    assert tiny("h2-coalesced")["connections"] == tiny("h2-multi")["connections"] >= 2
    if int(sys.argv[2]) > 1:
        cl = lambda c: by[("mnot-craigslist.org.har", c, tls)]
        assert cl("h2-multi")["connections"] == 2, cl("h2-multi")["connections"]
        assert cl("h2-coalesced")["connections"] == 1, "two hosts at one address: one connection"
PY
"$speedy" lab report "$tmp/h2.jsonl" >"$tmp/h2-table.txt"
grep -q '^SPDY and HTTP/2 side by side' "$tmp/h2-table.txt" || { cat "$tmp/h2-table.txt"; exit 1; }
grep -Eq '^cable, loss 0%, TLS on +spdy-multi +h2-multi +[0-9]+ ' "$tmp/h2-table.txt"
grep -Eq '^h2-coalesced +HPACK +[1-9][0-9]* +[1-9][0-9]* ' "$tmp/h2-table.txt"
grep -Eq '^spdy-multi +zlib +[1-9][0-9]* ' "$tmp/h2-table.txt"
echo "HTTP/2: $((12 * ${#h2_pages[@]})) loads valid, reported beside SPDY"

# --chromium-sockets reaches the loader: the navigation's second socket to the page's host
# crosses the link (tcp_connects, counted by the client namespace) and carries nothing.
# --chromium-headers too: Chromium's HTTP/1.1 requests weigh about 700 bytes each.
"$speedy" lab run -o "$tmp/cs.jsonl" -l cable --loss 0 --tls on -c h2-multi,http1-fcfs -n 1 \
  --seed 3 --chromium-sockets --chromium-headers --speedyd "$speedyd" --timeout 60 \
  "$tmp/corpus/synth-tiny.har" \
  2>"$tmp/cs.err" || { cat "$tmp/cs.err"; exit 1; }
python3 - "$tmp/cs.jsonl" <<'PY'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
assert lines[0]["settings"]["chromium_sockets"] is True, lines[0]["settings"]
assert lines[0]["settings"]["chromium_headers"] is True, lines[0]["settings"]
for d in lines[1:]:
    assert d["valid"], f"{d['key']}: invalid: {d['invalid_reason']}"
    assert d["tcp_connects"] == d["connections_opened"] > d["connections"], \
        (d["key"], d["tcp_connects"], d["connections_opened"], d["connections"])
    if d["protocol"] == "http/1.1":
        per_request = d["request_header_bytes"] / len(d["resources"])
        assert 600 < per_request < 900, (d["key"], per_request)
print(f"--chromium-sockets --chromium-headers: {len(lines) - 1} loads, sockets opened "
      "beyond those used, Chromium's request headers")
PY

# --load-event reaches the loader: the page load time ends at the last resource Chromium's
# load event waits for, last_byte_ms at the last byte of all (synth-tiny's "other"
# resources are fetch()es); the bound is checked against the last byte.
"$speedy" lab run -o "$tmp/le.jsonl" -l cable --loss 0 --tls off -c http1-fcfs -n 1 \
  --seed 3 --load-event --speedyd "$speedyd" --timeout 60 "$tmp/corpus/synth-tiny.har" \
  2>"$tmp/le.err" || { cat "$tmp/le.err"; exit 1; }
python3 - "$tmp/le.jsonl" <<'PY'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
assert lines[0]["settings"]["load_event"] is True, lines[0]["settings"]
for d in lines[1:]:
    assert d["valid"], f"{d['key']}: invalid: {d['invalid_reason']}"
    assert d["settings"]["load_event"] is True and "--load-event" in d["settings"]["loader"]
    assert d["last_byte_ms"] >= d["plt_ms"] > 0 and d["last_byte_ms"] >= d["lower_bound_ms"]
print(f"--load-event: {len(lines) - 1} load, page load time {lines[1]['plt_ms']} ms, "
      f"last byte {lines[1]['last_byte_ms']} ms")
PY
