#!/bin/sh
# record-corpus.sh — regenerates tests/interop/corpus/: what node's spdy-transport writes
# as client and as server in each scenario of peer.js (small bodies), for every SPDY
# version, the two ends talking to each other in memory. test_interop_corpus decodes
# every file with speedy's engine; the fuzzers start from them.
# Usage: tests/interop/record-corpus.sh   (needs node and `npm ci` at the repo root)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out="$here/corpus"
mkdir -p "$out"
for version in 2 3 3.1; do
  for scenario in get post push settings ping goaway_client goaway_server; do
    if ! node "$here/peer.js" --role pair --version "$version" --scenario "$scenario" \
        --small --record-dir "$out" >/dev/null; then
      echo "record-corpus.sh: scenario $scenario (SPDY/$version) failed between two node ends" >&2
      exit 1
    fi
  done
done
ls -l "$out"
