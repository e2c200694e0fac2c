#!/bin/bash
# shard_e2e.sh SPEEDY SPEEDYD — a matrix in two shards on this machine, through real
# emulated links, against one run of it: the example corpus's two smallest pages, cable
# without loss, TLS off, http1-fcfs, spdy-multi and h2-coalesced, one repetition (6 loads;
# each shard runs one page's three). Measured times never repeat, so:
#  - the shards' merged file has the single run's matrix line byte for byte, then the same
#    keys in the same order (per page, the configurations in the table's order, HTTP/2
#    after SPDY), every load valid;
#  - the single run's file, split by shard and merged again, is its own bytes (cmp).
# Skips (77) when not root, without /dev/net/tun or ip, or without the replay server.
set -euo pipefail
speedy=$1
speedyd=$2
. "$(dirname "$0")/common.sh"
lab_need_links "$speedy" "$speedyd"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$speedy" lab synth "$tmp/corpus" >/dev/null
run() { # RESULTS OPTION...
  local results=$1
  shift
  "$speedy" lab run -o "$results" -l cable --loss 0 --tls off -c h2-coalesced,http1-fcfs,spdy-multi -n 1 \
    --seed 11 --speedyd "$speedyd" --timeout 60 "$@" \
    "$tmp/corpus/synth-tiny.har" "$tmp/corpus/synth-small.har" 2>>"$tmp/err" ||
    { cat "$tmp/err"; exit 1; }
}
run "$tmp/single.jsonl"
run "$tmp/shard1.jsonl" --shard 1/2
run "$tmp/shard2.jsonl" --shard 2/2
"$speedy" lab merge "$tmp/merged.jsonl" "$tmp/shard1.jsonl" "$tmp/shard2.jsonl"
for k in 1 2; do run "$tmp/none.jsonl" --dry-run --shard "$k/2" >"$tmp/keys$k"; done
python3 - "$tmp/single.jsonl" "$tmp/merged.jsonl" "$tmp/keys1" "$tmp/keys2" <<'PY'
import sys
single, merged = ([l for l in open(f)] for f in sys.argv[1:3])
one, two = ([l.rstrip("\n") for l in open(f)] for f in sys.argv[3:5])
assert one and two, f"both shards have loads: {one} {two}"
assert merged[0] == single[0], "the matrix line differs"
import json
keys = lambda lines: [json.loads(l)["key"] for l in lines[1:]]
assert keys(merged) == keys(single), f"{keys(merged)} != {keys(single)}"
assert len(keys(single)) == 6
configs = [json.loads(l)["config"] for l in merged[1:]]
assert configs == ["http1-fcfs", "spdy-multi", "h2-coalesced"] * 2, configs
for l in merged[1:]:
    d = json.loads(l)
    assert d["valid"], f"{d['key']}: {d['invalid_reason']}"
    assert d["settings"]["order_seed"] == 11
    print(f"  {d['page'][:40]:40} {d['config']:12} {d['plt_ms']:7.1f} ms")
# The single run's file split by shard: header to both, each load to its shard's file.
for k, shard in ((1, one), (2, two)):
    with open(f"{sys.argv[1]}.{k}", "w") as f:
        f.write(single[0])
        f.writelines(l for l in reversed(single[1:]) if json.loads(l)["key"] in shard)
PY
"$speedy" lab merge "$tmp/again.jsonl" "$tmp/single.jsonl.2" "$tmp/single.jsonl.1"
cmp "$tmp/again.jsonl" "$tmp/single.jsonl"
"$speedy" lab report "$tmp/merged.jsonl" | grep -q '^spdy-multi'
echo "two shards on this machine: merged into the single run's matrix and order"
