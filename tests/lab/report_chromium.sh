#!/bin/bash
# report_chromium.sh SPEEDY — the HTML report as a browser draws it: `speedy lab report
# --html` on synthetic results (the canned file of report_svg.sh plus a third
# configuration, a second link group and a loss sweep: bars with confidence intervals,
# CDFs, a sweep chart, waterfalls), rendered by headless Chromium (Debian's `chromium`)
# offline into a PNG screenshot and a DOM dump. report_chromium.py decodes the PNG and
# checks that every bar and waterfall rectangle has its fill colour, every CDF and sweep
# line, whisker and waterfall marker its stroke, every sweep point its fill, every label
# its ink, and that the DOM holds every chart as SVG at its written size. From the boxes
# Chromium laid out: no text of any chart is cut off by its chart or the window or drawn
# over other text, and every waterfall row carries its URL, host and protocol (the
# results name page plans written beside them), with an axis in ms, the page load time
# and the lower bound marked and a legend.
#
# Skips (77) without chromium or python3, except under CI (CI set), where it fails:
# scripts/install-deps installs both.
set -euo pipefail
speedy=$1
src=${SPEEDY_SOURCE_DIR:?}
here=$src/tests/lab

missing() {
  if [[ -n "${CI:-}" ]]; then
    echo "FAIL: $1 not found, and CI is set (scripts/install-deps installs it)"
    exit 1
  fi
  echo "SKIP: $1 not found (Debian package $2; scripts/install-deps installs it)"
  exit 77
}
command -v python3 >/dev/null || missing python3 python3
chromium=$(command -v chromium) || missing chromium chromium

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 "$here/report_chromium.py" input "$here/data/results-canned.jsonl" "$tmp/results.jsonl"
"$speedy" lab report --html "$tmp/report.html" "$tmp/results.jsonl" >/dev/null
python3 "$here/report_chromium.py" probe "$tmp/report.html" "$tmp/probe.html"

# One run gives both the screenshot and the DOM after load, so the layout the probe reads
# is that of the pixels. Offline: no component, sync or background fetches, and every host
# name fails to resolve. Its own HOME and profile, removed with $tmp.
status=0
HOME=$tmp timeout -k 5 120 "$chromium" --headless --no-sandbox --disable-gpu --disable-quic \
  --user-data-dir="$tmp/profile" --no-first-run --no-default-browser-check \
  --disable-background-networking --disable-component-update --disable-sync \
  --disable-extensions --disable-default-apps --disable-domain-reliability \
  --metrics-recording-only --host-resolver-rules='MAP * ~NOTFOUND' \
  --hide-scrollbars --force-device-scale-factor=1 --force-color-profile=srgb \
  --window-size=1024,6000 --screenshot="$tmp/shot.png" --dump-dom \
  "file://$tmp/probe.html" >"$tmp/dom.html" 2>"$tmp/chromium.log" || status=$?
if ((status != 0)) || [[ ! -s "$tmp/shot.png" ]]; then
  echo "FAIL: chromium exited with status $status (124: timed out); its last words:"
  tail -n 20 "$tmp/chromium.log"
  exit 1
fi
python3 "$here/report_chromium.py" check "$tmp/report.html" "$tmp/dom.html" "$tmp/shot.png" \
  "$tmp/results.jsonl" || status=$?
# SPEEDY_KEEP_SCREENSHOT=FILE keeps the screenshot to look at (also when the check fails).
if [[ -n "${SPEEDY_KEEP_SCREENSHOT:-}" ]]; then
  cp "$tmp/shot.png" "$SPEEDY_KEEP_SCREENSHOT"
  echo "screenshot: $SPEEDY_KEEP_SCREENSHOT"
fi
exit "$status"
