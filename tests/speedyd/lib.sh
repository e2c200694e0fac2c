# lib.sh — shared shell for speedyd's integration tests (sourced, bash).
#
#   source lib.sh SPEEDYD_BINARY WORK_DIR
#   need node curl ...        skip (exit 77) with a message when a tool is missing
#   start_server NAME ARGS... start speedyd with --port-file; sets PID_<NAME>, PORTS_<NAME>
#   check WHAT GOT EXPECTED   compare, print, count failures
#   finish                    exit 0, or 1 when any check failed
# Every server started here is killed on exit, whatever happens (trap), and every wait
# is bounded.
set -u
SPEEDYD=$1
WORK=$2
SRC=${SPEEDY_SOURCE_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
TESTS=$SRC/tests/speedyd
FAILS=0
SERVER_PIDS=()
rm -rf "$WORK"
mkdir -p "$WORK"

cleanup() {
  for pid in "${SERVER_PIDS[@]}"; do kill -KILL "$pid" 2>/dev/null; done
  wait 2>/dev/null
}
trap cleanup EXIT
trap 'echo "interrupted"; exit 1' INT TERM

skip() {
  echo "SKIP: $*"
  exit 77
}

need() {
  for tool in "$@"; do
    command -v "$tool" >/dev/null 2>&1 || skip "$tool is not installed"
  done
}

need_node_modules() {
  need node
  [ -d "$SRC/node_modules/spdy-transport" ] ||
    skip "node_modules/spdy-transport is missing (run npm ci at the repository root)"
}

# start_server NAME ARGS...: speedyd ARGS --port-file ..., waits up to 10 s for the port
# file. Sets PID_NAME and PORT_NAME (first listener), PORT2_NAME (second, if any).
start_server() {
  local name=$1
  shift
  local pf=$WORK/$name.ports
  rm -f "$pf"
  "$SPEEDYD" "$@" --port-file "$pf" --error-log "$WORK/$name.error.log" \
    >"$WORK/$name.stdout" 2>"$WORK/$name.stderr" &
  local pid=$!
  SERVER_PIDS+=("$pid")
  eval "PID_$name=$pid"
  for _ in $(seq 1 100); do
    [ -s "$pf" ] && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  if [ ! -s "$pf" ]; then
    echo "FAIL: speedyd ($name) did not start:"
    cat "$WORK/$name.stderr"
    exit 1
  fi
  eval "PORT_$name=$(sed -n 1p "$pf")"
  eval "PORT2_$name=$(sed -n 2p "$pf")"
}

# stop_server NAME: SIGTERM, wait up to 15 s; sets STOP_STATUS to the exit status (or
# "timeout"). Not in a subshell: only this shell can wait for its children.
stop_server() {
  local pid
  eval "pid=\$PID_$1"
  kill -TERM "$pid" 2>/dev/null
  for _ in $(seq 1 150); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  if kill -0 "$pid" 2>/dev/null; then
    STOP_STATUS=timeout
    return
  fi
  wait "$pid"
  STOP_STATUS=$?
}

source "$(dirname "${BASH_SOURCE[0]}")/../checks.sh"

sha() { sha256sum "$1" | cut -d' ' -f1; }

# json FILE EXPRESSION: evaluates a JavaScript expression over the JSON in FILE (as r).
json() {
  node -e 'const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")); const v = eval(process.argv[2]); console.log(typeof v === "object" ? JSON.stringify(v) : String(v))' "$1" "$2"
}

# make_site DIR: the example site plus generated large files.
make_site() {
  mkdir -p "$1"
  cp -R "$SRC/examples/site/." "$1/"
  head -c 3145728 /dev/urandom >"$1/large.bin"
}

make_certs() {
  sh "$SRC/tests/io/gencerts.sh" "$WORK/certs" || { echo "FAIL: could not make certificates"; exit 1; }
}

finish() {
  # A sanitizer report from a server fails the test (ctest sees only our output).
  for f in "$WORK"/*.stderr; do
    if [ -f "$f" ] && grep -q -E 'ERROR: (Address|Leak)Sanitizer|runtime error:|SUMMARY: UndefinedBehaviorSanitizer' "$f"; then
      echo "FAIL: sanitizer report in $f:"
      head -60 "$f"
      FAILS=$((FAILS + 1))
    fi
  done
  if [ "$FAILS" -ne 0 ]; then
    echo "$FAILS check(s) failed"
    for f in "$WORK"/*.error.log; do [ -s "$f" ] && { echo "--- $f"; tail -20 "$f"; }; done
    exit 1
  fi
  echo "all checks passed"
  exit 0
}
