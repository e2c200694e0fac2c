#!/bin/bash
# report_svg.sh SPEEDY — `speedy lab report --html` on the canned results: the report is
# self-contained (no external URL is loaded), and every SVG chart is well-formed XML with
# the expected elements (python3's xml.etree). Skips (77) without python3.
set -euo pipefail
speedy=$1
src=${SPEEDY_SOURCE_DIR:?}
command -v python3 >/dev/null || { echo "SKIP: python3 not found"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$speedy" lab report --html "$tmp/report.html" "$src/tests/lab/data/results-canned.jsonl" >"$tmp/table.txt"
grep -q 'spdy-multi' "$tmp/table.txt"
python3 - "$tmp/report.html" <<'PY'
import re, sys, xml.etree.ElementTree as ET
html = open(sys.argv[1], encoding="utf-8").read()
ns = "{http://www.w3.org/2000/svg}"
# Nothing is fetched: no src= or href= attributes, no url() in the CSS.
assert not re.search(r'\b(src|href)\s*=', html), "external reference in the report"
assert "url(" not in html, "url() in the report"
svgs = re.findall(r"<svg\b.*?</svg>", html, re.S)
kinds = {}
for text in svgs:
    root = ET.fromstring(text)          # raises on malformed XML
    assert root.tag == ns + "svg", root.tag
    assert root.find(ns + "title") is not None, "every chart has a title"
    kind = root.get("class").split()[1]
    kinds.setdefault(kind, []).append(root)
assert len(kinds.get("bars", [])) == 1, kinds.keys()
bars = kinds["bars"][0].findall(f".//{ns}rect[@class='bar']")
assert len(bars) == 2, f"two bars (http1-fcfs, spdy-multi), got {len(bars)}"
assert len(kinds["bars"][0].findall(f".//{ns}line[@class='ci']")) == 6, "three lines per whisker"
cdf = kinds.get("cdf", [])
assert len(cdf) == 1 and len(cdf[0].findall(f".//{ns}polyline")) == 1, "one CDF line (spdy-multi)"
falls = kinds.get("waterfall", [])
assert len(falls) == 4, f"two pages x HTTP/1.1 and SPDY, got {len(falls)}"
for w in falls:
    assert len(w.findall(f".//{ns}rect[@class='recv']")) == 5, "one bar per resource"
print("report SVG: %d charts well-formed" % len(svgs))
PY
