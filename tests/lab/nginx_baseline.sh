#!/bin/bash
# nginx_baseline.sh SPEEDY SPEEDYD SOURCE_DIR — the lab's HTTP/1.1 baseline against an
# independent server: one synthetic page (synth-small), http1-fcfs, TLS off, 5 loads
# replayed by speedyd and 5 by nginx serving the same bytes as plain files (`speedy lab
# run --write-site` + --server-cmd docs/examples/lab-nginx.sh). Every load must be valid
# (the loader checks every status and body size against the plan) and loss-free (no drop
# on the link), and the median page load time through speedyd must be within 10% of
# nginx's.
#
# The link: lte (12 Mbit/s, 70 ms) with a 1 MB queue. Not cable with its default queue of
# one BDP: there, http1-fcfs's 18 connections overflow the 24 KB queue (~135 drops and 4-8
# RTO timeouts per load) and the load time is bimodal for both servers alike (about 950
# or 1180 ms, depending on which connection meets a tail loss), so medians of 5 differ by
# more than 10% in about 45% of runs. A queue that holds the whole page makes the loads
# loss-free; lte rather than cable because cable's 4 Mbit/s makes this page
# bandwidth-bound, where a server that closes every connection (nginx with
# keepalive_timeout 0) loads as fast as one that keeps them; on lte it is ~19% slower.
#
# Skips (77) when not root, without /dev/net/tun, ip, python3 or nginx, or when the replay
# server or the loader is not built.
set -euo pipefail
speedy=$1
speedyd=$2
source_dir=$3
. "$(dirname "$0")/common.sh"
lab_need_links "$speedy" "$speedyd"
command -v python3 >/dev/null || skip "no python3"
nginx=$(PATH=$PATH:/usr/sbin:/usr/local/sbin command -v nginx) || skip "nginx is not installed"
help=$("$speedy" lab run --help 2>/dev/null || true)
[[ $help == *--write-site* ]] || skip "speedy lab run has no --write-site"
export NGINX=$nginx
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$speedy" lab synth "$tmp/corpus" >/dev/null
page=$tmp/corpus/synth-small.har
common=(-l lte --queue 1M --loss 0 --tls off -c http1-fcfs -j 1 --seed 1 --timeout 60)
# Interleaved, one repetition of each server at a time (a run resumes from its results
# file: -n R runs only repetition R), so that drift of a shared machine meets both.
for r in 1 2 3 4 5; do
  "$speedy" lab run -o "$tmp/speedyd.jsonl" "${common[@]}" -n "$r" --speedyd "$speedyd" \
    "$page" 2>>"$tmp/speedyd.err" || { cat "$tmp/speedyd.err"; exit 1; }
  "$speedy" lab run -o "$tmp/nginx.jsonl" "${common[@]}" -n "$r" --write-site "$tmp/site" \
    --server-cmd "exec sh '$source_dir/docs/examples/lab-nginx.sh' \"\$@\"" \
    "$page" 2>>"$tmp/nginx.err" || { cat "$tmp/nginx.err"; exit 1; }
done
# The site: one directory per page, one per host below it, and the map.
[[ -f $tmp/site/synth-small.har-p1-estimated/replay-site.map ]]
[[ -f $tmp/site/synth-small.har-p1-estimated/www.small.example/index.html ]]
python3 - "$tmp/speedyd.jsonl" "$tmp/nginx.jsonl" <<'PY'
import json, statistics, sys
medians = {}
for name, file in zip(("speedyd", "nginx"), sys.argv[1:]):
    lines = [json.loads(l) for l in open(file)]
    lines = [d for d in lines if d["format"] == "speedy-lab-result/1"]
    assert len(lines) == 5, f"{name}: 5 loads expected, got {len(lines)}"
    for d in lines:
        assert d["valid"], f"{name}: {d['key']}: invalid: {d.get('invalid_reason')}"
        n = d["netem"]
        assert n["queue_drops"] == 0 and n["random_losses"] == 0, \
            f"{name}: {d['key']}: not loss-free: {n['queue_drops']} queue drops, " \
            f"{n['random_losses']} random losses"
    plts = sorted(d["plt_ms"] for d in lines)
    medians[name] = statistics.median(plts)
    print(f"  {name:8} median {medians[name]:7.1f} ms   loads {' '.join(f'{p:.1f}' for p in plts)}"
          f"   (TCP retransmits {sum(d['tcp_retransmits'] for d in lines)})")
ratio = medians["speedyd"] / medians["nginx"]
print(f"  speedyd / nginx = {ratio:.3f}")
assert abs(ratio - 1) <= 0.10, \
    f"speedyd's median {medians['speedyd']:.1f} ms is more than 10% away from nginx's " \
    f"{medians['nginx']:.1f} ms"
PY
echo "nginx baseline: speedyd's HTTP/1.1 median within 10% of nginx's"
