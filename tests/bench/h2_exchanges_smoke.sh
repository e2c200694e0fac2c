#!/usr/bin/env bash
# h2_exchanges_smoke.sh BENCH_H2_EXCHANGES — runs bench/engine's bench_h2_exchanges in its
# shortest mode and checks that every figure line is printed (the figures themselves are
# not judged: they depend on the machine). Exit 77 (skip) when the HAR corpus is missing.
set -euo pipefail
bench=$1
out=$(mktemp)
trap 'rm -f "$out"' EXIT

status=0
"$bench" --quick --trials 1 --seconds 0.05 --memory-exchanges 50 --open-streams 10 >"$out" ||
  status=$?
cat "$out"
if ((status == 77)); then
  exit 77
fi
if ((status != 0)); then
  echo "h2_exchanges_smoke: bench_h2_exchanges exited with $status" >&2
  exit 1
fi

number='[0-9]+(\.[0-9]+)?'
expect=(
  "^HTTP/2 engine on the HAR corpus .*: [0-9]+ files, [0-9]+ exchanges"
  "^exchanges per second per core: "
  "^  speedy h2 +$number +$number +$number +$number +$number$"
  "^  nghttp2 h2 +$number +$number +$number +$number +$number$"
  "^  speedy spdy/3\.1 +$number +$number +$number +$number +$number$"
  "^  ratio speedy-h2/nghttp2: +best $number, median $number$"
  "^  ratio speedy-h2/speedy-spdy3\.1: +best $number, median $number$"
  "^memory: live bytes through the allocator hook"
  "^  speedy h2 +[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+ +-?$number +-?$number$"
  "^  nghttp2 h2 +[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+ +-?$number +-?$number$"
  "^  speedy spdy/3\.1 +[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+ +-?$number +-?$number$"
)
failed=0
for pattern in "${expect[@]}"; do
  if ! grep -Eq -- "$pattern" "$out"; then
    echo "h2_exchanges_smoke: no line matches: $pattern" >&2
    failed=1
  fi
done
if grep -q "failed" "$out"; then
  echo "h2_exchanges_smoke: a pair failed" >&2
  failed=1
fi
exit $failed
