#!/bin/bash
# compare_h2_smoke.sh COMPARE_H2 SPEEDY SPEEDYD WORK — bench/compare/compare-h2 --smoke
# (speedyd and nghttpd when installed, h2c, 1 KiB, 1 x 10, 200 requests a run, two
# rounds): it exits 0 and prints the table in its documented format; the figures are not
# judged; a row's best and median (pick_figure), its ratio and the ratio's spread over
# the rounds are checked on given figures. Skips (77) without h2load.
set -u
RUN=$1 SPEEDY=$2 SPEEDYD=$3 WORK=$4
source "$(dirname "$0")/../checks.sh"
FAILS=0
bash "$RUN" --smoke --speedy "$SPEEDY" --speedyd "$SPEEDYD" --work "$WORK" >"$WORK.out" 2>"$WORK.err"
rc=$?
[ $rc = 77 ] && { cat "$WORK.out"; exit 77; }
cat "$WORK.out" "$WORK.err"
check "exit status" "$rc" 0
check_grep_fixed "the table's header" \
  "| pass | protocol | file | conns × streams | speedyd | speedyd, speedy bench | h2o | nginx | nghttpd | fastest other | speedyd ÷ fastest | ÷ fastest, round by round |" \
  "$WORK.out"
fig='([0-9]+|–)'
check "one row: speedyd measured by both tools, the peers measured or skipped" \
  "$(grep -c -E "^\| pinned \| h2c \| 1k \| 1 × 10 \| [0-9]+ \| [0-9]+ \| $fig \| $fig \| $fig \| (h2o|nginx|nghttpd|–) \| ([0-9]+\.[0-9]{2}|–) \| ([0-9]+\.[0-9]{2}–[0-9]+\.[0-9]{2}|–) \|$" "$WORK.out")" 1
check_grep "the machine and its load" \
  "^Machine: [0-9]* CPUs .*; load average [0-9.]* [0-9.]* [0-9.]* before the run, [0-9.]* [0-9.]* [0-9.]* after" "$WORK.out"
check_grep "the versions" "^Versions: speedyd .*load: h2load" "$WORK.out"
check_grep "no run had errors" "Runs with errors: 0\.$" "$WORK.out"
check "usage error for a bad shape" "$(bash "$RUN" --shapes 100 >/dev/null 2>&1; echo $?)" 2
check "usage error for an unknown --stat" "$(bash "$RUN" --stat mean >/dev/null 2>&1; echo $?)" 2
# the figure a row shows from its runs (common.sh)
PROG=smoke
source "$(dirname "$RUN")/common.sh"
check "best of three" "$(pick_figure best 500 100 300)" 500
check "median of three" "$(pick_figure median 500 100 300)" 300
check "median of four: the two middle ones' average" "$(pick_figure median 40 10 30 20)" 25
check "median of one" "$(pick_figure median 7)" 7
# speedyd's figure over the fastest other's, and the spread of that ratio over the rounds
check "ratio to the fastest" "$(ratio_to_fastest 300 200 err 250 –)" 1.20
check "no ratio without speedyd's figure" "$(ratio_to_fastest err 200 250)" –
check "no ratio without another's figure" "$(ratio_to_fastest 300 err – '')" –
check "lowest and highest of the rounds' ratios" "$(ratio_range 1.02 0.75 – 1.31)" "0.75–1.31"
check "no range without a ratio" "$(ratio_range – –)" –
check "usage error for an unknown server" "$(bash "$RUN" --servers apache >/dev/null 2>&1; echo $?)" 2
[ "$FAILS" -eq 0 ] || { echo "$FAILS check(s) failed"; exit 1; }
echo "all checks passed"
