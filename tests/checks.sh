# checks.sh — the assertions the shell tests share (sourced). Each prints "ok: WHAT" or
# "FAIL: WHAT: ..." and counts failures in FAILS; the test ends with exit status by FAILS.
#
#   check WHAT GOT EXPECTED          GOT and EXPECTED equal as strings
#   check_grep WHAT PATTERN FILE     a line of FILE matches the grep PATTERN
#   check_grep_fixed WHAT TEXT FILE  FILE contains TEXT literally
FAILS=${FAILS:-0}

check() {
  if [ "$2" == "$3" ]; then
    echo "ok: $1"
  else
    echo "FAIL: $1: got '$2', expected '$3'"
    FAILS=$((FAILS + 1))
  fi
}

# _check_grep_with GREP_FLAG WHAT PATTERN FILE
_check_grep_with() {
  if grep -q "$1" -- "$3" "$4"; then
    echo "ok: $2"
  else
    echo "FAIL: $2: '$3' not found in $4:"
    head -c 2000 "$4"
    FAILS=$((FAILS + 1))
  fi
}

check_grep() { _check_grep_with -G "$@"; }
check_grep_fixed() { _check_grep_with -F "$@"; }
