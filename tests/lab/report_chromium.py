#!/usr/bin/env python3
"""report_chromium.py — helper of report_chromium.sh (python3 standard library only).

  input CANNED OUT        the canned results plus a third configuration (spdy-push), a
                          second link group (dsl) and a loss sweep on cable (1% and 2%):
                          13 charts, 11 bars, 7 CDF lines, a sweep chart with 2 lines. Every
                          load gets timings with every phase a waterfall draws (DNS,
                          connect, queued, wait, receive, pushed) and the page plan it names
                          in settings.loader, written beside OUT: long paths and host names,
                          non-ASCII and markup characters in URLs
  probe REPORT OUT        a copy of REPORT whose script writes into document.title (read
                          back from --dump-dom) each <svg>'s namespace and page box, every
                          <text>'s class, content and box, and each waterfall row's <title>
  check REPORT DOM PNG RESULTS
                          compares Chromium's screenshot with what REPORT's charts say
                          should be drawn, and the layout with what a reader needs: no text
                          outside its chart or the window or over other text, waterfall
                          rows labelled with the URL, host and protocol of RESULTS' plans,
                          an axis in ms, the page load time and lower bound at their place,
                          a legend; one line per failure, exit 1 if any

The expectations come from the report's tags as written (html.parser, which does not care
how they nest); what was drawn comes from the pixels and the boxes Chromium laid out. So a
chart the browser cannot draw (a <rect> left open swallows the next one, a chart hidden
inside a <title>, a CSS fill that does not apply) or a label it cuts off fails here even
where the markup still reads well.
"""
import collections
import html.parser
import json
import math
import os
import re
import struct
import sys
import zlib

SVG_NS = "http://www.w3.org/2000/svg"
WHITE = (255, 255, 255)


def make_input(canned, out):
    lines = [json.loads(text) for text in open(canned, encoding="utf-8") if text.strip()]
    extra = []
    for i, line in enumerate(lines):
        if line["config"] == "spdy-multi":
            push = json.loads(json.dumps(line))
            push.update(config="spdy-push", push=True, key=f"push-{i}")
            # Well below spdy-multi, so that the two CDF lines never run over each other.
            push["plt_ms"] = push["plt_cutoff_ms"] = line["plt_ms"] * 0.6
            extra.append(push)
        if line["config"] in ("http1-fcfs", "spdy-multi") and line["valid"]:
            dsl = json.loads(json.dumps(line))
            dsl["link"].update(profile="dsl", down_bps=1500000, up_bps=384000, rtt_ms=50)
            dsl["key"] = f"dsl-{i}"
            dsl["plt_ms"] = dsl["plt_cutoff_ms"] = line["plt_ms"] * (
                1.5 if line["config"] == "http1-fcfs" else 1.2)
            extra.append(dsl)
    # A loss sweep on cable: each configuration slower with loss, HTTP/1.1 the most, so that
    # the two lines of ratios (spdy-multi, spdy-push) stay apart.
    growth = {"http1-fcfs": 30, "spdy-multi": 10, "spdy-push": 5}
    lossless = lines + [e for e in extra if e["config"] == "spdy-push"]
    for loss in (0.01, 0.02):
        for i, line in enumerate(lossless):
            if not line["valid"] or line["link"]["profile"] != "cable":
                continue
            lossy = json.loads(json.dumps(line))
            lossy["link"]["loss"] = loss
            lossy["key"] = f"loss{loss}-{lossy['config']}-{i}"
            lossy["plt_ms"] = lossy["plt_cutoff_ms"] = line["plt_ms"] * (
                1 + growth[line["config"]] * loss)
            extra.append(lossy)
    plans = write_plans(os.path.dirname(os.path.abspath(out)))
    for line in lines + extra:
        add_waterfall_fields(line, plans[line["plan"]])
    with open(out, "w", encoding="utf-8") as f:
        for line in lines + extra:
            f.write(json.dumps(line) + "\n")


# Two page plans (docs/lab-formats.md) of five resources on two hosts, named as the canned
# results name them. URLs long enough to be shortened, with non-ASCII and markup characters.
PLANS = {
    "a.har": (["www.example.com",
               "static.a-rather-long-content-delivery-network-name.example.net"],
              [(0, "/"), (0, "/css/site.css?v=12&theme=<dark>"),
               (1, "/images/\u00fcber-\u65e5\u672c-photo-of-the-day-with-a-long-name.jpg"),
               (0, "/js/app.js"), (1, "/fonts/" + "x" * 200 + ".woff2")]),
    "b.har": (["example.org", "cdn.example.org"],
              [(0, "/index.html"), (1, '/a/"quoted"/style.css'), (1, "/b.js?a=1&b=2"),
               (0, "/img/" + "\u00e9" * 80 + ".png"), (1, "/favicon.ico")]),
}


def write_plans(directory):
    """{"a.har#first page": path}: the plans, written into directory."""
    paths = {}
    for source, (hosts, resources) in PLANS.items():
        plan = {"format": "speedy-lab-plan/1", "source": source, "page": "first page", "seed": 1,
                "hosts": [{"name": h, "port": 80} for h in hosts],
                "resources": [{"id": i, "host": h, "method": "GET", "path": p, "type": "other",
                               "parent": -1 if i == 0 else 0, "discover_offset": -1,
                               "start_delay": 0.0, "request_headers": [], "status": 200,
                               "response_headers": [], "body_size": 1000, "redirect_to": -1,
                               "after_cutoff": False}
                              for i, (h, p) in enumerate(resources)]}
        path = os.path.join(directory, f"plan {source}.json")  # a space, as paths may have
        with open(path, "w", encoding="utf-8") as f:
            json.dump(plan, f)
        paths[f"{source}#first page"] = path
    return paths


def add_waterfall_fields(line, plan_path):
    """Timings that end at the line's page load time with every phase a waterfall draws:
    the document opens connection 0 after a 20 ms lookup, resource 2 opens connection 1 to
    the second host (lookup and connect), HTTP/1.1 opens connection 2 for resource 3 (no
    lookup: its name is known) and queues 1 and 4; SPDY pushes 4."""
    t = line["plt_ms"]
    spdy = line["protocol"].startswith("spdy")
    # (discovered, start, ttfb, end) as shares of the page load time, connection, pushed
    rows = [((0, .12, .2, .3), 0, False),
            ((.2, .2 if spdy else .3, .4, .5), 0, False),
            ((.2, .35, .45, .7), 1, False),
            ((.3, .3 if spdy else .45, .55, .8), 0 if spdy else 2, False),
            ((.5, .5, .6, 1) if spdy else (.5, .7, .8, 1), 1, spdy)]
    line["resources"] = [
        {"id": i, "discovered_ms": round(d * t, 1), "start_ms": round(s * t, 1),
         "ttfb_ms": round(b * t, 1), "end_ms": round(e * t, 1), "bytes": 1000, "status": 200,
         "pushed": pushed, "hinted": False, "connection": c, "error": None}
        for i, ((d, s, b, e), c, pushed) in enumerate(rows)]
    line["connections"] = 2 if spdy else 3
    line["settings"] = {"dns_rtt_ms": 20, "loader": f"/usr/bin/speedy load {plan_path} "
                        "--addr-base 198.19.0.1 --port 80 --result /tmp/r.json"}


PROBE = """<script>
const box = e => { const b = e.getBoundingClientRect();
  return [b.left + scrollX, b.top + scrollY, b.width, b.height]; };
document.title = JSON.stringify({height: document.documentElement.scrollHeight,
  width: document.documentElement.clientWidth,
  svgs: Array.from(document.querySelectorAll("svg"), s => [s.namespaceURI, ...box(s)]),
  texts: Array.from(document.querySelectorAll("svg"), s => Array.from(s.querySelectorAll("text"),
    t => [t.getAttribute("class") || "", t.textContent, ...box(t)])),
  rows: Array.from(document.querySelectorAll("svg"), s => Array.from(s.querySelectorAll("g.row"),
    g => [g.querySelector(":scope > title").textContent,
          ...["num", "url", "host", "proto"].map(c => {
            const t = g.querySelector(":scope > text." + c); return t ? t.textContent : null; })]))});
</script>
"""


def make_probe(report, out):
    with open(out, "w", encoding="utf-8") as f:
        f.write(open(report, encoding="utf-8").read() + PROBE)


def read_png(path):
    """(width, height, rows): rows[y] is a bytes of RGB triples. 8-bit RGB or RGBA only."""
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat = 8, []
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", body)
            assert depth == 8 and colour in (2, 6) and interlace == 0, "unexpected PNG format"
        elif kind == b"IDAT":
            idat.append(body)
    raw = zlib.decompress(b"".join(idat))
    bpp = 3 if colour == 2 else 4
    stride = width * bpp
    prior, rows = bytearray(stride), []
    for y in range(height):
        start = y * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1:start + 1 + stride])
        # PNG 9.2: reconstruct from the byte to the left (a), above (b), above left (c).
        if kind == 1:
            for i in range(bpp, stride):
                line[i] = (line[i] + line[i - bpp]) & 255
        elif kind == 2:
            line = bytearray((x + b) & 255 for x, b in zip(line, prior))
        elif kind == 3:
            for i in range(stride):
                a = line[i - bpp] if i >= bpp else 0
                line[i] = (line[i] + ((a + prior[i]) >> 1)) & 255
        elif kind == 4:
            for i in range(stride):
                a = line[i - bpp] if i >= bpp else 0
                b, c = prior[i], prior[i - bpp] if i >= bpp else 0
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        else:
            assert kind == 0, f"bad filter type {kind}"
        prior = line
        rows.append(bytes(line) if bpp == 3 else bytes(v for i, v in enumerate(line) if i % 4 != 3))
    return width, height, rows


def hex_colour(text):
    text = text.strip()
    if re.fullmatch(r"#[0-9a-fA-F]{3}", text):
        text = "#" + "".join(d + d for d in text[1:])
    if not re.fullmatch(r"#[0-9a-fA-F]{6}", text):
        return None
    return tuple(int(text[i:i + 2], 16) for i in (1, 3, 5))


def parse_css(style):
    """{".class" or ".a.b": {property: value}} for the report's simple class rules."""
    rules = {}
    for selectors, body in re.findall(r"([^{}]+)\{([^{}]*)\}", style):
        decls = dict(d.split(":", 1) for d in body.split(";") if ":" in d)
        for sel in selectors.split(","):
            sel = sel.strip()
            if re.fullmatch(r"(\.[\w-]+)+", sel):
                rules.setdefault(sel, {}).update({k.strip(): v.strip() for k, v in decls.items()})
    return rules


class Chart:
    def __init__(self, attrs):
        self.attrs = attrs
        self.kind = ((attrs.get("class") or "").split() or [""])[-1]
        self.elements = []  # (tag, attrs, text)


class ReportReader(html.parser.HTMLParser):
    """The report's <style> and each <svg> with the drawing elements inside it, flat."""

    def __init__(self):
        super().__init__()
        self.style, self.charts, self.text = "", [], None
        self.in_style = self.in_svg = False

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "style":
            self.in_style = True
        elif tag == "svg":
            self.charts.append(Chart(attrs))
            self.in_svg = True
        elif self.in_svg and tag in ("rect", "line", "polyline", "circle", "text"):
            self.charts[-1].elements.append([tag, attrs, ""])
            self.text = self.charts[-1].elements[-1] if tag == "text" else None

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)
        self.text = None

    def handle_endtag(self, tag):
        self.in_style = self.in_style and tag != "style"
        self.in_svg = self.in_svg and tag != "svg"
        self.text = None

    def handle_data(self, data):
        if self.in_style:
            self.style += data
        elif self.text is not None:
            self.text[2] += data


class Checker:
    """Draws conclusions from the screenshot's rows; collects failures as sentences."""

    def __init__(self, rows, css):
        self.rows, self.css, self.failures = rows, css, []

    def fail(self, message):
        self.failures.append(message)

    def pixel(self, x, y):
        if 0 <= y < len(self.rows) and 0 <= 3 * x < len(self.rows[y]):
            row = self.rows[y]
            return row[3 * x], row[3 * x + 1], row[3 * x + 2]
        return WHITE

    def paint(self, attrs, prop, default):
        """The colour a property resolves to: style attribute, then class rules, then the
        presentation attribute (which every CSS rule overrides), then default."""
        style = dict(d.split(":", 1) for d in (attrs.get("style") or "").split(";") if ":" in d)
        value = {k.strip(): v for k, v in style.items()}.get(prop)
        # The rule naming most of the element's classes (".recv.pushed" over ".recv").
        classes = set((attrs.get("class") or "").split())
        rules = [sel for sel in self.css if set(sel[1:].split(".")) <= classes
                 and prop in self.css[sel]]
        if value is None and rules:
            value = self.css[max(rules, key=lambda sel: sel.count("."))][prop]
        value = value or attrs.get(prop) or default
        return hex_colour(value) if value else None

    @staticmethod
    def same(pixel, colour):
        return all(abs(p - c) <= 8 for p, c in zip(pixel, colour))

    @staticmethod
    def ink(pixel, colour, coverage=0.5):
        """pixel is colour blended over white with at least that coverage (anti-aliasing)."""
        k = min(range(3), key=lambda c: colour[c])
        if colour[k] > 230:
            return False
        a = (255 - pixel[k]) / (255 - colour[k])
        return a >= coverage and all(abs(255 - a * (255 - colour[c]) - pixel[c]) <= 24
                                     for c in range(3))

    def near(self, x, y, test, radius=2):
        return any(test(self.pixel(math.floor(x) + dx, math.floor(y) + dy))
                   for dx in range(-radius, radius + 1) for dy in range(-radius, radius + 1))

    def rect(self, name, attrs, at):
        """Most pixels inside the rectangle, one pixel in from every edge (anti-aliased
        edges, pixel snapping of the <svg>), have its fill. True if checked and drawn."""
        cls = attrs.get("class", "")
        fill = self.paint(attrs, "fill", None)
        if fill is None or min(fill) > 240:  # a missing or misspelt rule draws it black
            self.fail(f"{name}: <rect class={cls!r}> has no visible fill of its own")
            return False
        x0, y0 = at(attrs["x"], attrs["y"])
        x1, y1 = at(float(attrs["x"]) + float(attrs["width"]),
                    float(attrs["y"]) + float(attrs["height"]))
        inner = [(x, y) for y in range(math.ceil(y0) + 1, math.floor(y1) - 1)
                 for x in range(math.ceil(x0) + 1, math.floor(x1) - 1)]
        if not inner:
            return False  # too small to tell
        hits = sum(self.same(self.pixel(x, y), fill) for x, y in inner)
        if hits < 0.5 * len(inner):
            self.fail(f"{name}: <rect class={cls!r}> at ({x0:.0f},{y0:.0f}) should be "
                      f"#{bytes(fill).hex()}: {hits} of {len(inner)} pixels are")
            return False
        return True

    def line(self, name, tag, attrs, at, bars):
        """Points every 3 px along the line (not over a bar, where a whisker is drawn on
        its own bar's colour) have its stroke nearby. True if checked and drawn."""
        cls = attrs.get("class", "")
        stroke = self.paint(attrs, "stroke", None)
        if stroke is None:
            self.fail(f"{name}: <{tag} class={cls!r}> has no stroke colour")
            return False
        if tag == "line":
            points = [(attrs["x1"], attrs["y1"]), (attrs["x2"], attrs["y2"])]
        else:
            points = [p.split(",") for p in attrs["points"].split()]
        points = [at(x, y) for x, y in points]
        samples = []
        for (xa, ya), (xb, yb) in zip(points, points[1:]):
            length = math.hypot(xb - xa, yb - ya)
            for t in range(2, int(length) - 1, 3):
                x, y = xa + (xb - xa) * t / length, ya + (yb - ya) * t / length
                if not any(x0 - 2 <= x <= x1 + 2 and y0 - 2 <= y <= y1 + 2
                           for x0, y0, x1, y1 in bars):
                    samples.append((x, y))
        if not samples:
            return False
        hits = sum(self.near(x, y, lambda p: self.ink(p, stroke)) for x, y in samples)
        if hits < 0.8 * len(samples):
            self.fail(f"{name}: <{tag} class={cls!r}> in #{bytes(stroke).hex()}: "
                      f"{hits} of {len(samples)} points along it drawn")
            return False
        return True

    def circle(self, name, attrs, at):
        """Most pixels of the disc, one pixel in from its edge, have its fill — more than
        the line through it covers, so a point that is not drawn fails. True if drawn."""
        fill = self.paint(attrs, "fill", None)
        if fill is None or min(fill) > 240:
            self.fail(f"{name}: <circle> has no visible fill of its own")
            return False
        x, y = at(attrs["cx"], attrs["cy"])
        r = at(float(attrs["cx"]) + float(attrs["r"]), attrs["cy"])[0] - x - 1
        inner = [(px, py) for py in range(math.floor(y - r), math.ceil(y + r) + 1)
                 for px in range(math.floor(x - r), math.ceil(x + r) + 1)
                 if (px + 0.5 - x) ** 2 + (py + 0.5 - y) ** 2 <= r * r]
        hits = sum(self.same(self.pixel(px, py), fill) for px, py in inner)
        if not inner or hits < 0.8 * len(inner):
            self.fail(f"{name}: point at ({x:.0f},{y:.0f}) should be #{bytes(fill).hex()}: "
                      f"{hits} of {len(inner)} pixels are")
            return False
        return True

    def text(self, name, attrs, text, at):
        """Some pixels of the text's colour around its anchor: a glyph, whatever the font."""
        fill = self.paint(attrs, "fill", "#000000")
        if fill is None:
            self.fail(f"{name}: text {text!r} has no fill colour")
            return False
        x, y = at(attrs["x"], attrs["y"])
        anchor = attrs.get("text-anchor", "start")
        xs = {"start": (x, x + 30), "middle": (x - 15, x + 15), "end": (x - 30, x)}[anchor]
        ink = sum(self.ink(self.pixel(px, py), fill)
                  for py in range(math.floor(y - 9), math.ceil(y + 2))
                  for px in range(math.floor(xs[0]), math.ceil(xs[1])))
        if ink < 8:
            self.fail(f"{name}: text {text!r} in #{bytes(fill).hex()} not drawn at "
                      f"({x:.0f},{y:.0f}): {ink} pixels of its colour")
            return False
        return True

    def chart(self, name, chart, box):
        """Checks one <svg> laid out at box; returns what was seen drawn, by class."""
        ns, left, top, box_w, box_h = box
        if ns != SVG_NS:
            self.fail(f"{name}: namespace {ns!r} in the DOM")
            return {}
        want_w, want_h = float(chart.attrs["width"]), float(chart.attrs["height"])
        if abs(box_w - want_w) > 0.5 or abs(box_h - want_h) > 0.5:
            self.fail(f"{name}: laid out {box_w}x{box_h}, written {want_w:g}x{want_h:g}")
            return {}
        view = [float(v) for v in chart.attrs["viewbox"].split()]

        def at(x, y):  # SVG user units to page pixels
            return (left + (float(x) - view[0]) * box_w / view[2],
                    top + (float(y) - view[1]) * box_h / view[3])

        if chart.kind in ("cdf", "sweep"):
            lines = [self.paint(a, "stroke", None) for t, a, _ in chart.elements
                     if t == "polyline"]
            legend = [self.paint(a, "fill", "#000000") for t, a, _ in chart.elements
                      if t == "text" and a.get("class") == "label"]
            if legend != lines:
                self.fail(f"{name}: legend colours {legend} are not the lines' {lines}")
        bars, drawn = [], collections.Counter()
        # A line under another one drawn later along the same path (a waterfall's page load
        # time where the lower bound is) cannot be seen: not checked.
        paths = [tuple(a.get(k) for k in ("x1", "y1", "x2", "y2")) if t == "line" else None
                 for t, a, _ in chart.elements]
        for i, (tag, attrs, text) in enumerate(chart.elements):
            if tag == "line" and paths[i] in paths[i + 1:]:
                continue
            cls = (attrs.get("class") or "").split()
            try:
                # Row backgrounds are too light to tell from the page (like grid lines).
                if tag == "rect" and "bg" not in cls and self.rect(name, attrs, at):
                    drawn[cls[0] if cls else "rect"] += 1
                if tag == "rect" and "bar" in cls:
                    x0, y0 = at(attrs["x"], attrs["y"])
                    x1, y1 = at(float(attrs["x"]) + float(attrs["width"]),
                                float(attrs["y"]) + float(attrs["height"]))
                    bars.append((x0, y0, x1, y1))
                # Grid lines are too light to tell from the background.
                if tag in ("line", "polyline") and cls in (["ci"], ["cdf-line"], ["sweep-line"],
                                                           ["plt"], ["bound"]):
                    drawn[cls[0]] += self.line(name, tag, attrs, at, bars)
                if tag == "circle":
                    drawn["point"] += self.circle(name, attrs, at)
                if tag == "text" and text.strip():
                    drawn["text"] += self.text(name, attrs, text.strip(), at)
            except (KeyError, ValueError, IndexError) as e:
                self.fail(f"{name}: <{tag} class={' '.join(cls)!r}> unreadable: {e!r}")
        return drawn


def overlap(a, b):
    """Width and height two boxes (x, y, width, height) have in common (<= 0: none)."""
    return (min(a[0] + a[2], b[0] + b[2]) - max(a[0], b[0]),
            min(a[1] + a[3], b[1] + b[3]) - max(a[1], b[1]))


def check_text_layout(c, charts, layout):
    """Every text of every chart lies inside its <svg> and the window, over no other text."""
    for n, (chart, svg, texts) in enumerate(zip(charts, layout["svgs"], layout["texts"])):
        name = f"chart {n + 1} ({chart.kind})"
        _, left, top, width, height = svg
        texts = [t for t in texts if t[1].strip()]
        for cls, text, x, y, w, h in texts:
            if (x < left - 0.5 or x + w > left + width + 0.5 or y < top - 0.5
                    or y + h > top + height + 0.5):
                c.fail(f"{name}: text {text!r} ({cls}) at x {x:.0f}..{x + w:.0f}, y {y:.0f}.."
                       f"{y + h:.0f} is cut off by its chart (x {left:.0f}..{left + width:.0f}, "
                       f"y {top:.0f}..{top + height:.0f})")
            elif x < 0 or x + w > layout["width"] + 0.5:
                c.fail(f"{name}: text {text!r} ({cls}) runs out of the {layout['width']} px "
                       "window")
        for i, a in enumerate(texts):
            for b in texts[i + 1:]:
                w, h = overlap(a[2:], b[2:])
                if w > 0.5 and h > 2:
                    c.fail(f"{name}: text {a[1]!r} ({a[0]}) and {b[1]!r} ({b[0]}) overlap by "
                           f"{w:.0f} x {h:.0f} px")


def plan_urls(results):
    """{plan name: [(URL, host, path)]} from the plans the results' lines name."""
    plans = {}
    for text in open(results, encoding="utf-8"):
        line = json.loads(text)
        path = line["settings"]["loader"].split(" load ", 1)[1].split(" --", 1)[0]
        plan = json.load(open(path, encoding="utf-8"))
        scheme = "https" if line["tls"] else "http"
        plans[line["plan"]] = [(f"{scheme}://{plan['hosts'][r['host']]['name']}{r['path']}",
                                plan["hosts"][r["host"]]["name"], r["path"])
                               for r in plan["resources"]]
    return plans


def shortened(shown, full, least):
    """shown is full, or its start and end around "…" with at least `least` characters."""
    if shown == full:
        return True
    head, sep, tail = shown.partition("\u2026")
    return (sep and full.startswith(head) and full.endswith(tail)
            and len(head) + len(tail) >= min(least, len(full)))


def check_waterfall(c, name, chart, svg, texts, rows, plans):
    """A waterfall a reader can use: each row names its URL (in full in its <title>), host
    and protocol; the axis is in ms and its ticks evenly spaced; the page load time and the
    lower bound are lines where their values put them; every colour drawn is in the legend."""
    urls = [r[0].split("\n", 1)[0].split(". ", 1)[-1] for r in rows]
    plan = next((p for p in plans.values() if sorted(u for u, _, _ in p) == sorted(urls)), None)
    if plan is None:
        c.fail(f"{name}: the rows' URLs {urls} are not those of a page plan")
        return
    by_url = {u: (host, path) for u, host, path in plan}
    for k, (title, num, url, host, proto) in enumerate(rows, 1):
        full = title.split("\n", 1)[0]
        if not full.startswith(f"{k}. ") or num != str(k):
            c.fail(f"{name}: row {k} is numbered {num!r}, its title begins {full!r}")
            continue
        want_host, want_path = by_url[full.split(". ", 1)[1]]
        if not shortened(url or "", want_path, 12):
            c.fail(f"{name}: row {k} shows the URL as {url!r}, not {want_path!r} or a part of it")
        if not shortened(host or "", want_host, 12):
            c.fail(f"{name}: row {k} shows the host as {host!r}, not {want_host!r}")
        if proto not in ("http/1.1", "spdy/3.1", "spdy/3.1 push"):
            c.fail(f"{name}: row {k} shows the protocol as {proto!r}")

    _, left, top, _, _ = svg
    ticks = []
    for cls, text, x, y, w, h in texts:
        if cls == "tick" and re.fullmatch(r"\d+(\.\d+)?", text):
            ticks.append((float(text), x + w / 2))
    # The axis: the bottom row of ticks (each value is also at the top).
    values = sorted(set(v for v, _ in ticks))
    xs = {v: [x for t, x in ticks if t == v] for v in values}
    if len(values) < 3 or any(len(x) != 2 for x in xs.values()):
        c.fail(f"{name}: want at least 3 time ticks, each above and below the rows, got {ticks}")
        return
    slope = (xs[values[-1]][0] - xs[values[0]][0]) / (values[-1] - values[0])
    for v in values:
        for x in xs[v]:
            if abs(xs[values[0]][0] + slope * (v - values[0]) - x) > 1:
                c.fail(f"{name}: tick {v:g} at x {x:.1f} is off the axis")
    if not any("(ms)" in text for cls, text, *_ in texts):
        c.fail(f"{name}: no axis title in ms")
    sub = " ".join(text for cls, text, *_ in texts if cls == "sub")
    for what, cls in (("page load time", "plt"), ("lower bound", "bound")):
        m = re.search(what + r" (\d+) ms", sub)
        if not m:
            c.fail(f"{name}: the line under the title does not give the {what}: {sub!r}")
            continue
        ms = float(m.group(1))
        if not any(text == f"{what} {m.group(1)} ms" for t, text, *_ in texts if t == "label"):
            c.fail(f"{name}: no legend entry for the {what}")
        lines = [a for tag, a, _ in chart.elements if tag == "line" and a.get("class") == cls
                 and a["x1"] == a["x2"]]
        want = xs[values[0]][0] + slope * (ms - values[0])
        if len(lines) != 1 or abs(left + float(lines[0]["x1"]) - want) > 1.5:
            c.fail(f"{name}: the {what} ({ms:g} ms) should be one vertical line at x "
                   f"{want:.1f}: {[left + float(a['x1']) for a in lines]}")
    # Legend labels end before the next item's swatch (18 px before its label).
    labels = sorted((y, x, w, text) for cls, text, x, y, w, h in texts if cls == "label")
    for (y0, x0, w0, t0), (y1, x1, _, t1) in zip(labels, labels[1:]):
        if abs(y0 - y1) < 1 and x0 + w0 > x1 - 18:
            c.fail(f"{name}: legend label {t0!r} runs into the swatch of {t1!r}")
    drawn = {a.get("class") for tag, a, _ in chart.elements if tag == "rect"
             and a.get("class", "").split()[0] in ("dns", "connect", "queued", "wait", "recv")}
    legend = {a["class"].split(" ", 1)[1] for tag, a, _ in chart.elements if tag == "rect"
              and a.get("class", "").startswith("swatch ")}
    if drawn != legend:
        c.fail(f"{name}: phases drawn {sorted(drawn)}, in the legend {sorted(legend)}")
    return drawn


def check(report, dom, png, results):
    reader = ReportReader()
    reader.feed(open(report, encoding="utf-8").read())
    charts = reader.charts
    title = re.search(r"<title>(.*?)</title>", open(dom, encoding="utf-8").read(), re.S)
    try:
        layout = json.loads(html.unescape(title.group(1)))
    except (AttributeError, ValueError):
        print("FAIL: the DOM dump has no layout probe (did the page load?)")
        return 1
    width, height, rows = read_png(png)
    c = Checker(rows, parse_css(reader.style))

    kinds = [chart.kind for chart in charts]
    counts = {k: kinds.count(k) for k in ("bars", "cdf", "sweep", "waterfall")}
    if counts != {"bars": 4, "cdf": 4, "sweep": 1, "waterfall": 4}:
        c.fail("the input should make 4 bar charts, 4 CDFs, 1 sweep and 4 waterfalls, got "
               f"{counts}")
    if len(layout["svgs"]) != len(charts):
        c.fail(f"{len(charts)} <svg> written, {len(layout['svgs'])} in Chromium's DOM")
    if layout["height"] > height:
        c.fail(f"page is {layout['height']} px high, screenshot {height}: raise --window-size")
    non_white = sum(1 for row in rows for r, g, b in zip(row[0::3], row[1::3], row[2::3])
                    if r & g & b != 255)
    if non_white < 0.01 * width * height:
        c.fail(f"the page is blank: {non_white} non-white pixels of {width * height}")

    # What each kind of chart must show at least once: tiny shapes and whiskers hidden by
    # their own bar are not checked, everything else must be drawn.
    needed = {"bars": ("bar", "ci", "text"), "cdf": ("cdf-line", "text"),
              "sweep": ("sweep-line", "point", "text"), "waterfall": ("recv", "wait", "connect", "text")}
    drawn = collections.Counter()
    for n, (chart, box) in enumerate(zip(charts, layout["svgs"])):
        name = f"chart {n + 1} ({chart.kind})"
        try:
            seen = c.chart(name, chart, box)
        except (KeyError, ValueError, IndexError, ZeroDivisionError) as e:
            c.fail(f"{name}: <svg> unreadable: {e!r}")
            continue
        for what in needed.get(chart.kind, ()):
            if seen and not seen[what]:
                c.fail(f"{name}: no {what} drawn that could be checked")
        drawn += seen

    check_text_layout(c, charts, layout)
    plans = plan_urls(results)
    phases = set()
    for n, chart in enumerate(charts):
        if chart.kind == "waterfall":
            phases |= check_waterfall(c, f"chart {n + 1} (waterfall)", chart, layout["svgs"][n],
                                      layout["texts"][n], layout["rows"][n], plans) or set()
    for what in ("plt", "bound"):
        if drawn[what] < 2:  # the markers and the legend
            c.fail(f"no waterfall's {what} line could be checked")
    every = {"dns", "connect", "queued", "wait", "recv", "recv pushed"}
    if phases != every:
        c.fail(f"the waterfalls should draw every phase {sorted(every)}, drew {sorted(phases)}")

    for failure in c.failures[:30]:
        print("FAIL:", failure)
    if len(c.failures) > 30:
        print(f"FAIL: ... and {len(c.failures) - 30} more")
    print(f"{len(charts)} charts, {non_white} non-white pixels; drawn:",
          ", ".join(f"{n} {k}" for k, n in sorted(drawn.items())))
    return 1 if c.failures else 0


if __name__ == "__main__":
    command, args = sys.argv[1], sys.argv[2:]
    if command == "input":
        make_input(*args)
    elif command == "probe":
        make_probe(*args)
    elif command == "check":
        sys.exit(check(*args))
    else:
        sys.exit(f"usage: {sys.argv[0]} input|probe|check ...")
