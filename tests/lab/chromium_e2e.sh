#!/bin/bash
# chromium_e2e.sh SPEEDY SPEEDYD SOURCE_DIR — `speedy lab run --client chromium` end to end:
# headless Chromium in the client namespace loads pages through one emulated link (cable,
# no loss) against the replay's page bodies, both HTTP/1.1 configurations, TLS off and on
# (the lab CA's leaf trusted by its SPKI hash). Pages: the synthetic corpus's smallest and,
# with $SPEEDY_SHARED_DIR, the recording mnot-craigslist.org.har (a redirect, style sheet,
# scripts). Every line is valid, marked "client": "chromium", has PLT and FCP above 0,
# HTTP/1.1 on every request, fetched nearly every resource of the plan, and reports its
# renderer's work up to the load event (browser_work).
# Then the browser's HTTP/2 (TLS on): h2-multi, h2-single, h2-coalesced and h2-hint, h2 on
# every request, HPACK header bytes from its net log above 0, and Chromium's own
# coalescing: craigslist's two hosts, recorded at one address, share one connection in
# h2-coalesced and take two in h2-multi (two addresses). The single configurations' page
# bodies name one host: every request goes to it, over one connection (HTTP/2) or at most
# six (HTTP/1.1).
# Skips (77) without root, /dev/net/tun, ip, the replay server, chromium, node or the
# project's node_modules (scripts/install-deps).
set -euo pipefail
speedy=$1
speedyd=$2
src=$3
. "$(dirname "$0")/common.sh"
lab_need_links "$speedy" "$speedyd"
[[ -x /usr/bin/chromium ]] || skip "no /usr/bin/chromium"
command -v node >/dev/null || skip "no node"
[[ -d $src/node_modules/chrome-remote-interface ]] ||
  skip "no node_modules/chrome-remote-interface (run scripts/install-deps)"
command -v openssl >/dev/null || skip "no openssl"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$speedy" lab synth "$tmp/corpus" >/dev/null
pages=("$tmp/corpus/synth-tiny.har")
har=${SPEEDY_SHARED_DIR:-}/corpus/har/mnot-craigslist.org.har
[[ -n ${SPEEDY_SHARED_DIR:-} && -f $har ]] && pages+=("$har")
# Refused: SPDY with the browser, and an unknown client.
if "$speedy" lab run --client chromium -c spdy-multi --dry-run "${pages[0]}" 2>"$tmp/err"; then
  echo "spdy-multi with --client chromium was accepted"; exit 1
fi
grep -q "bad --configs 'spdy-multi': expected http1-fcfs, http1-single, h2-multi, h2-single, h2-coalesced or h2-hint with --client chromium" "$tmp/err" || { cat "$tmp/err"; exit 1; }
if "$speedy" lab run --client firefox --dry-run "${pages[0]}" 2>"$tmp/err"; then
  echo "--client firefox was accepted"; exit 1
fi
grep -q "speedy or chromium" "$tmp/err" || { cat "$tmp/err"; exit 1; }
mkdir "$tmp/netlog"
SPEEDY_CHROMIUM_NETLOG=$tmp/netlog \
  "$speedy" lab run --client chromium -o "$tmp/results.jsonl" -l cable --loss 0 --tls off,on \
  -n 1 --seed 5 -j 1 --speedyd "$speedyd" --timeout 60 "${pages[@]}" 2>"$tmp/run.err" ||
  { cat "$tmp/run.err"; exit 1; }
# $SPEEDY_CHROMIUM_NETLOG: one net log per load, each with the sockets to the replay.
python3 - "$tmp/netlog" "${#pages[@]}" <<'PY'
import json, os, sys
files = sorted(os.listdir(sys.argv[1]))
assert len(files) == 4 * int(sys.argv[2]), files
for f in files:
    d = json.load(open(os.path.join(sys.argv[1], f)))
    types = {v: k for k, v in d["constants"]["logEventTypes"].items()}
    connects = [e for e in d["events"] if types[e["type"]] == "TCP_CONNECT_ATTEMPT"
                and e.get("params", {}).get("address", "").startswith("198.")]
    assert connects, f"{f}: no socket to the replay"
print(f"{len(files)} net logs kept")
PY
# The plans the run replayed, by page id, for the resource counts.
python3 - "$tmp/results.jsonl" "${#pages[@]}" <<'PY'
import json, sys
from urllib.parse import urlparse
lines = [json.loads(l) for l in open(sys.argv[1])]
matrix = [d for d in lines if d["format"] == "speedy-lab-matrix/1"]
assert len(matrix) == 1 and matrix[0]["settings"]["client"] == "chromium", matrix
loads = [d for d in lines if d["format"] == "speedy-lab-result/1"]
expected = 4 * int(sys.argv[2])
assert len(loads) == expected, f"{expected} loads expected, got {len(loads)}"
for d in loads:
    k = d["key"]
    assert d["client"] == "chromium" and "|client=chromium|" in k, k
    assert d["valid"], f"{k}: invalid: {d['invalid_reason']}"
    assert d["plt_ms"] > 0 and d["fcp_ms"] > 0, (k, d["plt_ms"], d["fcp_ms"])
    assert d["last_byte_ms"] >= d["lower_bound_ms"] > 0, k
    assert d["config"] in ("http1-fcfs", "http1-single"), k
    assert d["connections"] >= 1 and d["bytes_down"] > 0, k
    # Sockets opened across the link (DevTools' loopback one not counted), used or not.
    assert d["tcp_connects"] >= d["connections"], (k, d["tcp_connects"], d["connections"])
    assert all(r["protocol"] == "http/1.1" for r in d["resources"]), k
    n, fetched = d["plan_resources"], d["plan_resources_fetched"]
    assert fetched >= max(1, n - max(1, n // 10)), f"{k}: fetched {fetched} of {n} resources"
    assert d["resources"][0]["id"] == 0, k
    # http1-single: the page bodies name one host (docs/lab-replay.md, "One host"), so the
    # browser keeps to one host's six sockets, as the loader's http1-single does.
    if d["config"] == "http1-single":
        names = {urlparse(r["url"]).hostname for r in d["resources"]}
        assert len(names) == 1 and d["connections"] <= 6, (k, names, d["connections"])
    # The renderer's own work up to the load event: some tasks, script and layout in them.
    w = d["browser_work"]
    assert w["tasks_ms"] > 0 and w["layout_ms"] > 0, (k, w)
    assert w["script_ms"] + w["style_ms"] + w["layout_ms"] <= w["tasks_ms"], (k, w)
print(f"{len(loads)} chromium loads valid")
PY
# The report keeps the browser's loads apart from the loader's.
"$speedy" lab report "$tmp/results.jsonl" >"$tmp/report.txt"
grep -q "^chromium-fcfs " "$tmp/report.txt" || { cat "$tmp/report.txt"; exit 1; }
grep -q "^chromium-single " "$tmp/report.txt" || { cat "$tmp/report.txt"; exit 1; }

"$speedy" lab run --client chromium -o "$tmp/h2.jsonl" -l cable --loss 0 --tls on \
  -c h2-multi,h2-single,h2-coalesced,h2-hint -n 1 --seed 5 -j 1 --speedyd "$speedyd" \
  --timeout 60 "${pages[@]}" 2>"$tmp/h2.err" || { cat "$tmp/h2.err"; exit 1; }
python3 - "$tmp/h2.jsonl" "${#pages[@]}" <<'PY'
import json, sys
from urllib.parse import urlparse
loads = [json.loads(l) for l in open(sys.argv[1])]
loads = [d for d in loads if d["format"] == "speedy-lab-result/1"]
expected = 4 * int(sys.argv[2])
assert len(loads) == expected, f"{expected} loads expected, got {len(loads)}"
by = {}
for d in loads:
    k = d["key"]
    by[(d["page"].split("#")[0], d["config"])] = d
    assert d["client"] == "chromium" and d["valid"], f"{k}: invalid: {d['invalid_reason']}"
    assert d["protocol"] == "h2", k
    assert all(r["protocol"] == "h2" for r in d["resources"]), k
    assert d["request_header_bytes"] > 0 and d["response_header_bytes"] > 0, k
    assert d["last_byte_ms"] >= d["lower_bound_ms"] > 0, k
    n, fetched = d["plan_resources"], d["plan_resources_fetched"]
    assert fetched >= max(1, n - max(1, n // 10)), f"{k}: fetched {fetched} of {n} resources"
    if d["config"] in ("h2-single", "h2-hint"):  # one host name: one connection
        names = {urlparse(r["url"]).hostname for r in d["resources"]}
        assert len(names) == 1 and d["connections"] == 1, (k, names, d["connections"])
    print(f"  {d['page'][:34]:34} {d['config']:12} {d['plt_ms']:7.1f} ms, {d['connections']} conn,"
          f" HPACK {d['request_header_bytes']} up {d['response_header_bytes']} down")
if int(sys.argv[2]) > 1:
    cl = lambda c: by[("mnot-craigslist.org.har", c)]["connections"]
    assert cl("h2-multi") == 2 and cl("h2-coalesced") == 1 and cl("h2-single") == 1, \
        (cl("h2-multi"), cl("h2-coalesced"), cl("h2-single"))
print(f"{len(loads)} chromium HTTP/2 loads valid")
PY
"$speedy" lab report "$tmp/h2.jsonl" >"$tmp/h2-report.txt"
grep -Eq "^chromium-h2-coalesced +HPACK +[1-9]" "$tmp/h2-report.txt" || { cat "$tmp/h2-report.txt"; exit 1; }

# Recordings that begin without the page (with $SPEEDY_SHARED_DIR): qq.com's first answer
# is a 302 to a page never recorded, and 84 resources have no known parent; the page
# stands in for the redirect and names them, so the browser fetches what the loader does.
# facebook.com's first resource is an image: no page to open, said so.
qq=${SPEEDY_SHARED_DIR:-}/corpus/har/mnot-qq.com.har
fb=${SPEEDY_SHARED_DIR:-}/corpus/har/mnot-facebook.com.har
if [[ -n ${SPEEDY_SHARED_DIR:-} && -f $qq && -f $fb ]]; then
  "$speedy" lab run --client chromium -o "$tmp/missing.jsonl" -l cable --loss 0 --tls on \
    -c h2-multi -n 1 --seed 5 -j 1 --speedyd "$speedyd" --timeout 60 "$qq" "$fb" \
    2>"$tmp/missing.err" || { cat "$tmp/missing.err"; exit 1; }
  python3 - "$tmp/missing.jsonl" <<'PY'
import json, sys
loads = {d["page"].split("#")[0]: d for d in map(json.loads, open(sys.argv[1]))
         if d["format"] == "speedy-lab-result/1"}
qq, fb = loads["mnot-qq.com.har"], loads["mnot-facebook.com.har"]
assert qq["valid"], f"qq.com: invalid: {qq['invalid_reason']}"
n, fetched = qq["plan_resources"], qq["plan_resources_fetched"]
assert fetched >= n - max(1, n // 10), f"qq.com: fetched {fetched} of {n} resources"
assert not fb["valid"] and "lacks the page's document" in fb["invalid_reason"], fb["invalid_reason"]
print(f"qq.com: {fetched} of {n} resources; facebook.com: {fb['invalid_reason']}")
PY
else
  echo "skipped the recordings without their page: no \$SPEEDY_SHARED_DIR"
fi
