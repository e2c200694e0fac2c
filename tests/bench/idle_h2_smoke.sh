#!/bin/bash
# idle_h2_smoke.sh RUN SPEEDYD WORK — bench/idle-h2/run with 200 connections, h2c and TLS
# h2: it exits 0 and prints one line of figures per mode in the documented format (the
# figures themselves are not judged: 200 connections say little about 10,000).
set -u
RUN=$1 SPEEDYD=$2 WORK=$3
source "$(dirname "$0")/../checks.sh"
FAILS=0
bash "$RUN" --connections 200 --speedyd "$SPEEDYD" --work "$WORK" >"$WORK.out" 2>"$WORK.err"
rc=$?
[ $rc = 77 ] && { cat "$WORK.out"; exit 77; }
cat "$WORK.out" "$WORK.err"
check "exit status" "$rc" 0
num='[0-9]+\.[0-9]'
for mode in h2c h2; do
  check "$mode: one line of figures" "$(grep -c -E "^$mode: 200 idle connections: speedyd VmRSS $num MiB before, $num MiB after: -?$num MiB in all, -?$num KiB per connection; 10,000 at that rate: -?$num MiB \(target 256 MiB\): (met|NOT met) \(set up in [0-9]+ s\)$" "$WORK.out")" 1
done
check "usage error for a bad count" "$(bash "$RUN" --connections many >/dev/null 2>&1; echo $?)" 2
[ "$FAILS" -eq 0 ] || { echo "$FAILS check(s) failed"; exit 1; }
echo "all checks passed"
