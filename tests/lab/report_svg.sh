#!/bin/bash
# report_svg.sh SPEEDY — `speedy lab report --html` on the canned results: the report is
# self-contained (no external URL is loaded), and every SVG chart is well-formed XML with
# the expected elements (python3's xml.etree). Then on the sweep results
# (tests/lab/data/results-sweeps.jsonl, see test_lab_report.c): one line chart per swept
# variable, each with its points where the values put them. Skips (77) without python3.
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
assert "sweep" not in kinds and "Sweeps" not in html, "no sweep in the canned results"
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

"$speedy" lab report --html "$tmp/sweeps.html" "$src/tests/lab/data/results-sweeps.jsonl" >"$tmp/sweeps.txt"
test "$(grep -c '^Sweep of ' "$tmp/sweeps.txt")" = 3
python3 - "$tmp/sweeps.html" <<'PY'
import math, re, sys, xml.etree.ElementTree as ET
html = open(sys.argv[1], encoding="utf-8").read()
ns = "{http://www.w3.org/2000/svg}"
charts = [ET.fromstring(t) for t in re.findall(r"<svg\b.*?</svg>", html, re.S)]
sweeps = [c for c in charts if c.get("class") == "chart sweep"]
# Variable, x values (as the table prints them), spdy-multi's ratio at each, x scale.
want = [("loss", ["0%", "1%", "2%"], [0.5, 0.6, 0.7], [0, 1, 2]),
        ("RTT", ["20 ms", "28 ms", "100 ms"], [0.45, 0.5, 0.4], [20, 28, 100]),
        ("queue", ["24 kB (one BDP)", "64 kB", "1 MB"], [0.5, 0.7, 0.8],
         [math.log(24000), math.log(64000), math.log(1e6)])]
assert len(sweeps) == len(want), f"one chart per swept variable, got {len(sweeps)}"

def affine(xs, ys):
    """ys = a + b xs for every pair (within rounding to 0.1 px); returns (a, b)."""
    (x0, y0), (x1, y1) = min(zip(xs, ys)), max(zip(xs, ys))  # the widest pair: least rounding
    b = (y1 - y0) / (x1 - x0)
    a = y0 - b * x0
    for x, y in zip(xs, ys):
        assert abs(a + b * x - y) < 0.3, f"point ({x}, {y}) off the scale {a} + {b} x"
    return a, b

for chart, (variable, labels, ratios, xs) in zip(sweeps, want):
    title = chart.find(ns + "title").text
    assert title.startswith(f"Sweep of {variable},") and "cable, TLS off" in title, title
    lines = chart.findall(f"{ns}polyline")
    points = chart.findall(f"{ns}circle")
    assert len(lines) == 1, f"{variable}: one line (spdy-multi; http1-fcfs is the line at 1)"
    assert len(points) == len(labels), f"{variable}: {len(points)} points, want {len(labels)}"
    assert lines[0].get("class") == "sweep-line" and "stroke:" in lines[0].get("style"), variable
    colour = re.search(r"stroke:(#[0-9a-f]{6})", lines[0].get("style")).group(1)
    cx = [float(p.get("cx")) for p in points]
    cy = [float(p.get("cy")) for p in points]
    for p, label, ratio in zip(points, labels, ratios):
        text = p.find(ns + "title").text
        assert text == f"spdy-multi at {label}: {ratio:.3f}, 2 pages", text
        assert p.get("style") == f"fill:{colour}", "points in their line's colour"
    # The line goes through its points; x grows with the value, y falls with the ratio.
    line_points = [tuple(map(float, xy.split(","))) for xy in lines[0].get("points").split()]
    assert line_points == list(zip(cx, cy)), f"{variable}: line {line_points}, points {cx} {cy}"
    assert affine(xs, cx)[1] > 0, f"{variable}: x must grow with the value"
    one = [float(l.get("y1")) for l in chart.findall(f"{ns}line") if l.get("class") == "one"]
    assert len(one) == 1, f"{variable}: one line at ratio 1"
    # The points and the line at 1 on one scale.
    assert affine(ratios + [1], cy + one)[1] < 0, f"{variable}: y must fall as the ratio grows"
    legend = [t for t in chart.findall(f"{ns}text") if t.get("class") == "label"]
    assert [t.text for t in legend] == ["spdy-multi"] and legend[0].get("style") == f"fill:{colour}"
    ticks = [t for t in chart.findall(f"{ns}text") if t.get("class") == "tick"]
    assert len(ticks) >= 5, f"{variable}: axis ticks and the axis label"
print("sweep SVG: %d charts, points where their values put them" % len(sweeps))
PY
