#!/usr/bin/env python3
"""report_chromium.py — helper of report_chromium.sh (python3 standard library only).

  input CANNED OUT        the canned results plus a third configuration (spdy-push), a
                          second link group (dsl) and a loss sweep on cable (1% and 2%):
                          13 charts, 11 bars, 7 CDF lines, a sweep chart with 2 lines
  probe REPORT OUT        a copy of REPORT whose script writes each <svg>'s namespace and
                          page box into document.title (read back from --dump-dom)
  check REPORT DOM PNG    compares Chromium's screenshot with what REPORT's charts say
                          should be drawn; one line per failure, exit 1 if any

The expectations come from the report's tags as written (html.parser, which does not care
how they nest); what was drawn comes from the pixels. So a chart the browser cannot draw
(a <rect> left open swallows the next one, a chart hidden inside a <title>, a CSS fill
that does not apply) fails here even where the markup still reads well.
"""
import collections
import html.parser
import json
import math
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
    with open(out, "w", encoding="utf-8") as f:
        for line in lines + extra:
            f.write(json.dumps(line) + "\n")


PROBE = """<script>
document.title = JSON.stringify({height: document.documentElement.scrollHeight,
  svgs: Array.from(document.querySelectorAll("svg"), s => { const b = s.getBoundingClientRect();
    return [s.namespaceURI, b.left + scrollX, b.top + scrollY, b.width, b.height]; })});
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
        classes = (attrs.get("class") or "").split()
        for sel in ["." + ".".join(classes)] + ["." + c for c in reversed(classes)]:
            if value is None and prop in self.css.get(sel, {}):
                value = self.css[sel][prop]
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
        for tag, attrs, text in chart.elements:
            cls = (attrs.get("class") or "").split()
            try:
                if tag == "rect" and self.rect(name, attrs, at):
                    drawn[cls[0] if cls else "rect"] += 1
                if tag == "rect" and "bar" in cls:
                    x0, y0 = at(attrs["x"], attrs["y"])
                    x1, y1 = at(float(attrs["x"]) + float(attrs["width"]),
                                float(attrs["y"]) + float(attrs["height"]))
                    bars.append((x0, y0, x1, y1))
                # Grid lines are too light to tell from the background.
                if tag in ("line", "polyline") and cls in (["ci"], ["cdf-line"], ["sweep-line"]):
                    drawn[cls[0]] += self.line(name, tag, attrs, at, bars)
                if tag == "circle":
                    drawn["point"] += self.circle(name, attrs, at)
                if tag == "text" and text.strip():
                    drawn["text"] += self.text(name, attrs, text.strip(), at)
            except (KeyError, ValueError, IndexError) as e:
                self.fail(f"{name}: <{tag} class={' '.join(cls)!r}> unreadable: {e!r}")
        return drawn


def check(report, dom, png):
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
              "sweep": ("sweep-line", "point", "text"), "waterfall": ("recv", "wait", "text")}
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
