# common.sh — sourced by the lab's end-to-end tests: skip() and the checks every test
# that runs real emulated links makes before it starts.

# skip MESSAGE: CTest's "skipped" (77), with the reason.
skip() {
  echo "SKIP: $*"
  exit 77
}

# lab_need_links SPEEDY SPEEDYD: skips unless this can run `speedy lab run` through real
# links — root (network namespaces), /dev/net/tun, ip (iproute2), the replay server
# (speedyd --replay) and the loader (speedy load).
lab_need_links() {
  local speedy=$1 speedyd=$2 help
  [[ $(id -u) == 0 ]] || skip "needs root (network namespaces)"
  [[ -c /dev/net/tun ]] || skip "no /dev/net/tun"
  command -v ip >/dev/null || skip "no ip (iproute2)"
  [[ -x $speedyd ]] || skip "the replay server ($speedyd) is not built"
  "$speedy" load --help >/dev/null 2>&1 || skip "the loader (speedy load) is not built"
  help=$("$speedyd" --help 2>/dev/null || true)
  [[ $help == *--replay* ]] || skip "speedyd has no --replay"
}
