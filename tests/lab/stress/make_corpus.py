#!/usr/bin/python3
"""make_corpus.py OUTDIR [--seed N] — the lab's stress corpus: synthetic browser HARs with
every shape that real collections hold and that broke replays (issue 16, section 2).

Each file is one case, in the flavour of the browser that would write it:

  webinspector  Chrome's Web Inspector export of 2012 (HTTP/1.1, capitalised names, pages)
  firebug       Firebug's NetExport of 2012 (pages "page_0", cache objects)
  chrome        Chrome's DevTools export of the HTTP/2 era (":authority"-style pseudo-headers
                in the request and response headers, lower-case names, _initiator,
                _resourceType, _fromCache, _transferSize, serverIPAddress)
  firefox       Firefox's export of the HTTP/2 era (bodySize -1 for cached answers,
                redirectURL filled in, websockets as https entries with status 101)

The shapes: IPv4 and IPv6 literal hosts (with and without ports), explicit ports, one
host name under two schemes, upper-case and trailing-dot hosts, IDN hosts (Unicode and
punycode), 301/302/303/307/308 with and without Location, body and recorded target, a
redirect to the same URL, a leftover first page (an aborted beacon of the page before),
pages without a document or with a failed one, pseudo-headers, _fromCache, data: and
blob: URLs, websockets, status 0, 204, 304 with and without a recorded copy, duplicate
URLs with different answers, HEAD/OPTIONS/POST, many hosts with long names, pages
without pagerefs.

Every address is from the documentation ranges (RFC 5737, RFC 3849) and every name is
under .test (RFC 6761): the lab never connects to a recorded host anyway.

OUTDIR/expect.txt (JSON; not .json, which `speedy lab run DIR` would take for a plan) says, per file, which page `speedy lab run` must replay as the first
page ("page": 1-based index in log.pages order) and which earlier pages it must report as
skipped, with a word of the reason; the end-to-end test (stress_e2e.sh) checks it.
Deterministic: the same seed writes the same bytes.
"""
import json
import os
import random
import sys
from datetime import datetime, timedelta, timezone

UA_2012 = ("Mozilla/5.0 (Macintosh; Intel Mac OS X 10_7_4) AppleWebKit/536.11 (KHTML, like "
           "Gecko) Chrome/20.0.1132.47 Safari/536.11")
UA_FIREBUG = "Mozilla/5.0 (Windows NT 6.1; WOW64; rv:13.0) Gecko/20100101 Firefox/13.0.1"
UA_CHROME = ("Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) "
             "Chrome/120.0.0.0 Safari/537.36")
UA_FIREFOX = "Mozilla/5.0 (X11; Linux x86_64; rv:121.0) Gecko/20100101 Firefox/121.0"

ACCEPT = {
    "document": "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8",
    "stylesheet": "text/css,*/*;q=0.1",
    "script": "*/*",
    "image": "image/webp,image/apng,image/*,*/*;q=0.8",
    "font": "application/font-woff2;q=1.0,application/font-woff;q=0.9,*/*;q=0.8",
    "xhr": "application/json, text/javascript, */*; q=0.01",
    "other": "*/*",
}
MIME = {
    "document": "text/html",
    "stylesheet": "text/css",
    "script": "application/javascript",
    "image": "image/png",
    "font": "font/woff2",
    "xhr": "application/json",
    "other": "text/plain",
}
FLAVOURS = {
    "webinspector": {"creator": {"name": "WebInspector", "version": "536.11"}, "ua": UA_2012,
                     "year": 2012, "h2": False},
    "firebug": {"creator": {"name": "Firebug", "version": "1.10"}, "ua": UA_FIREBUG,
                "year": 2012, "h2": False},
    "chrome": {"creator": {"name": "WebInspector", "version": "537.36"}, "ua": UA_CHROME,
               "year": 2023, "h2": True},
    "firefox": {"creator": {"name": "Firefox", "version": "121.0"}, "ua": UA_FIREFOX,
                "year": 2023, "h2": True},
}


def split_url(url):
    """scheme, authority, path of an absolute URL (enough for the generator's own URLs)."""
    scheme, rest = url.split("://", 1)
    cut = min([i for i in (rest.find("/"), rest.find("?")) if i >= 0] or [len(rest)])
    path = rest[cut:] or "/"
    if path.startswith("?"):
        path = "/" + path
    return scheme.lower(), rest[:cut], path


class Har:
    """One recording in one browser's flavour; entries are added in start order."""

    def __init__(self, flavour, rng):
        self.flavour = flavour
        self.f = FLAVOURS[flavour]
        self.rng = rng
        self.t0 = datetime(self.f["year"], 6, 12, 10, 0, 0, tzinfo=timezone.utc)
        self.pages = []
        self.entries = []
        self.connection = 1000

    def stamp(self, ms):
        t = self.t0 + timedelta(milliseconds=ms)
        return t.strftime("%Y-%m-%dT%H:%M:%S.") + "%03dZ" % (t.microsecond // 1000)

    def page(self, title, at_ms):
        first = 0 if self.flavour == "firebug" else 1
        page_id = "page_%d" % (len(self.pages) + first)
        self.pages.append({"startedDateTime": self.stamp(at_ms), "id": page_id, "title": title,
                           "pageTimings": {"onContentLoad": 400, "onLoad": 900}})
        return page_id

    def name(self, n):
        """A header name as this browser writes it: lower case over HTTP/2."""
        return n.lower() if self.f["h2"] else n

    def entry(self, url, at_ms, kind="image", status=200, size=2000, page=None, referer=None,
              method="GET", location=None, redirect_url=None, time_ms=None, from_cache=None,
              content_length=True, extra_response=(), extra_request=(), initiator=None,
              version=None, resource_type=None, body_size=None, post=None, cached_copy=False):
        f = self.f
        scheme, authority, path = split_url(url) if "://" in url else ("", "", url)
        h2 = f["h2"] and scheme == "https"
        version = version or ("h2" if h2 and self.flavour == "chrome" else
                              "HTTP/2" if h2 else "HTTP/1.1")
        req = []
        if h2 and self.flavour == "chrome":
            req += [(":method", method), (":authority", authority), (":scheme", scheme),
                    (":path", path)]
        elif authority:
            req.append((self.name("Host"), authority))
        if not h2:
            req.append((self.name("Connection"), "keep-alive"))
        req += [(self.name("User-Agent"), f["ua"]), (self.name("Accept"), ACCEPT.get(kind, "*/*")),
                (self.name("Accept-Encoding"), "gzip, deflate, br" if h2 else "gzip,deflate,sdch"),
                (self.name("Accept-Language"), "en-US,en;q=0.8")]
        if referer:
            req.append((self.name("Referer"), referer))
        if kind == "xhr":
            req.append((self.name("X-Requested-With"), "XMLHttpRequest"))
        req += list(extra_request)
        resp = []
        if h2 and self.flavour == "chrome":
            resp.append((":status", str(status)))
        resp += [(self.name("Date"), "Tue, 12 Jun %d 10:00:00 GMT" % f["year"]),
                 (self.name("Server"), "Apache/2.2.22" if f["year"] < 2020 else "nginx")]
        body = 0 if status in (204, 304) or method == "HEAD" else size
        if status not in (204, 304) and kind in MIME:
            resp.append((self.name("Content-Type"), MIME[kind] +
                         ("; charset=utf-8" if kind == "document" else "")))
        if content_length and status not in (204, 304) and status != 0 and status != 101:
            resp.append((self.name("Content-Length"), str(size)))
        if location is not None:
            resp.append((self.name("Location"), location))
        if status == 200 and kind in ("image", "stylesheet", "script", "font"):
            resp.append((self.name("Cache-Control"), "max-age=86400"))
            resp.append((self.name("ETag"), '"%08x"' % self.rng.getrandbits(32)))
        resp += list(extra_response)
        if time_ms is None:
            time_ms = 20 + self.rng.randint(10, 60) + size / 500.0
        if status == 0:
            version = "" if self.flavour == "chrome" else version
        self.connection += 1 if self.rng.random() < 0.3 else 0
        e = {
            "startedDateTime": self.stamp(at_ms),
            "time": round(time_ms, 3),
            "request": {"method": method, "url": url, "httpVersion": version,
                        "headers": [{"name": n, "value": v} for n, v in req],
                        "queryString": [], "cookies": [], "headersSize": -1 if h2 else 420,
                        "bodySize": len(post) if post else 0},
            "response": {"status": status, "statusText": {0: "", 200: "OK", 204: "No Content",
                                                          301: "Moved Permanently",
                                                          302: "Found", 304: "Not Modified",
                                                          404: "Not Found"}.get(status, ""),
                         "httpVersion": version,
                         "headers": [{"name": n, "value": v} for n, v in resp],
                         "cookies": [],
                         "content": {"size": size if status not in (204, 304, 0) else 0,
                                     "mimeType": MIME.get(kind, "") if status else ""},
                         "redirectURL": redirect_url or "",
                         "headersSize": -1 if h2 else 300,
                         "bodySize": body if body_size is None else body_size},
            "cache": {},
            "timings": {"blocked": 1, "dns": -1, "connect": -1, "send": 0,
                        "wait": round(time_ms * 0.7, 3), "receive": round(time_ms * 0.3, 3),
                        "ssl": -1},
        }
        if post is not None:
            e["request"]["postData"] = {"mimeType": "application/x-www-form-urlencoded",
                                        "text": post}
        if page is not None:
            e["pageref"] = page
        if self.flavour != "firebug":
            e["connection"] = str(self.connection)
        if self.flavour in ("chrome", "firefox") and status != 0:
            e["serverIPAddress"] = "[2001:db8::80]" if self.flavour == "chrome" else "192.0.2.80"
        if self.flavour == "chrome":
            e["_resourceType"] = resource_type or {"stylesheet": "stylesheet",
                                                   "document": "document"}.get(kind, kind)
            e["_priority"] = "VeryHigh" if kind == "document" else "Low"
            e["_transferSize"] = 0 if from_cache else body + 300
            if initiator:
                e["_initiator"] = {"type": "parser", "url": initiator, "lineNumber": 12}
            else:
                e["_initiator"] = {"type": "other"}
            if from_cache:
                e["_fromCache"] = from_cache
                e["response"]["bodySize"] = 0
                e["time"] = 0.5
            if status == 0:
                e["_error"] = "net::ERR_ABORTED"
        if self.flavour == "firefox" and from_cache:
            e["response"]["bodySize"] = -1
            e["cache"] = {"afterRequest": None}
        self.entries.append(e)
        return e

    def write(self, path):
        log = {"version": "1.2", "creator": self.f["creator"], "pages": self.pages,
               "entries": self.entries}
        if self.flavour == "firefox":
            log["browser"] = {"name": "Firefox", "version": "121.0"}
        with open(path, "w", encoding="utf-8") as out:
            json.dump({"log": log}, out, indent=1, ensure_ascii=False)
            out.write("\n")


def simple_page(har, page, doc, resources, at=0, referer_doc=True):
    """The document at doc and resources (url, kind, size) after it, parsed from it."""
    har.entry(doc, at, "document", size=har.rng.randint(6000, 16000), page=page)
    t = at + 120
    for url, kind, size in resources:
        har.entry(url, t, kind, size=size, page=page, referer=doc if referer_doc else None,
                  initiator=doc)
        t += har.rng.randint(5, 40)
    return t


def sizes(rng, n, kind="image"):
    return [rng.randint(800, 24000) if kind == "image" else rng.randint(2000, 30000)
            for _ in range(n)]


# ---- the cases ---------------------------------------------------------------------------
# Each returns (flavour-built Har, expectation). The expectation names the page the lab
# must replay first (1-based) and the pages before it that it must report as skipped.

def case_ipv4(rng):
    har = Har("webinspector", rng)
    p = har.page("http://www.ipv4.test/", 0)
    doc = "http://www.ipv4.test/"
    simple_page(har, p, doc, [
        ("http://192.0.2.10/thumbs/a.jpg", "image", 9000),
        ("http://192.0.2.10/thumbs/b.jpg", "image", 7000),
        ("https://198.51.100.7/cgi-bin/count.pl?p=1", "script", 3000),
        ("https://203.0.113.5:8443/api/frame.css", "stylesheet", 4000),
        ("http://www.ipv4.test/logo.png", "image", 5000),
    ])
    return har, {"page": 1}


def case_ipv4_document(rng):
    har = Har("firebug", rng)
    p = har.page("http://192.0.2.44/index.html", 0)
    simple_page(har, p, "http://192.0.2.44/index.html", [
        ("http://192.0.2.44/style.css", "stylesheet", 6000),
        ("http://192.0.2.45:8080/img/1.png", "image", 12000),
        ("http://static.ipdoc.test/app.js", "script", 9000),
    ])
    return har, {"page": 1}


def case_ipv6(rng):
    har = Har("chrome", rng)
    p = har.page("https://www.ipv6.test/", 0)
    doc = "https://www.ipv6.test/"
    simple_page(har, p, doc, [
        ("http://[2001:db8::10]/img.png", "image", 8000),
        ("https://[2001:DB8:0:0::20]:8443/app.js", "script", 11000),
        ("https://[2001:db8::20]/b.css", "stylesheet", 3000),
        ("https://[::ffff:192.0.2.1]/mapped.png", "image", 4000),
    ])
    return har, {"page": 1}


def case_ipv6_document(rng):
    har = Har("firefox", rng)
    p = har.page("https://[2001:db8::44]/", 0)
    simple_page(har, p, "https://[2001:db8::44]/", [
        ("https://[2001:db8::44]/a.css", "stylesheet", 5000),
        ("https://cdn.v6doc.test/b.png", "image", 9000),
    ])
    return har, {"page": 1}


def case_ports(rng):
    har = Har("firefox", rng)
    p = har.page("http://ports.test:8080/", 0)
    simple_page(har, p, "http://ports.test:8080/", [
        ("https://ports.test:8443/a.css", "stylesheet", 5000),
        ("http://ports.test:80/b.js", "script", 7000),
        ("http://ports.test/c.png", "image", 6000),
        ("https://cdn.ports.test:443/d.png", "image", 8000),
        ("http://cdn.ports.test:81/e.png", "image", 3000),
        ("http://cdn.ports.test:8080/f.png", "image", 3500),
    ])
    return har, {"page": 1}


def case_scheme_mix(rng):
    """One host name under http and https: the redirect to https, resources on both."""
    har = Har("webinspector", rng)
    p = har.page("http://mix.test/", 0)
    har.entry("http://mix.test/", 0, "document", status=301, size=0, page=p,
              location="https://mix.test/", time_ms=40)
    doc = "https://mix.test/"
    har.entry(doc, 60, "document", size=14000, page=p)
    t = 200
    for i, (scheme, kind) in enumerate([("https", "stylesheet"), ("http", "image"),
                                        ("https", "script"), ("http", "image"),
                                        ("https", "image")]):
        har.entry("%s://mix.test/r%d" % (scheme, i), t, kind, size=rng.randint(2000, 9000),
                  page=p, referer=doc)
        t += 20
    # The same path under both schemes, with different sizes.
    har.entry("http://mix.test/same.png", t, "image", size=3000, page=p, referer=doc)
    har.entry("https://mix.test/same.png", t + 10, "image", size=5000, page=p, referer=doc)
    return har, {"page": 1}


def case_upper_case(rng):
    har = Har("webinspector", rng)
    p = har.page("http://WWW.Upper.TEST/", 0)
    doc = "http://WWW.Upper.TEST/"
    har.entry(doc, 0, "document", size=9000, page=p)
    ref = "http://www.upper.test/"  # browsers send the normalised URL as Referer
    t = 120
    for url, kind in [("HTTP://CDN.UPPER.test/a.css", "stylesheet"),
                      ("https://Img.Upper.Test/b.png", "image"),
                      ("https://IMG.UPPER.TEST/c.png", "image"),
                      ("http://www.upper.test/d.js", "script")]:
        har.entry(url, t, kind, size=rng.randint(2000, 9000), page=p, referer=ref)
        t += 25
    return har, {"page": 1}


def case_trailing_dot(rng):
    har = Har("chrome", rng)
    p = har.page("https://www.dot.test./", 0)
    simple_page(har, p, "https://www.dot.test./", [
        ("https://cdn.dot.test./a.css", "stylesheet", 4000),
        ("https://cdn.dot.test/b.css", "stylesheet", 4500),
        ("http://img.dot.test.:8080/c.png", "image", 7000),
        ("https://www.dot.test/d.png", "image", 5000),
    ])
    return har, {"page": 1}


def case_both_document(rng):
    """Upper case and a trailing dot on the document's own host."""
    har = Har("webinspector", rng)
    p = har.page("HTTPS://WWW.Both.Test./", 0)
    simple_page(har, p, "HTTPS://WWW.Both.Test./", [
        ("https://www.both.test/a.png", "image", 6000),
        ("https://WWW.BOTH.TEST./b.png", "image", 6000),
    ])
    return har, {"page": 1}


def case_idn(rng):
    har = Har("firefox", rng)
    p = har.page("http://bücher.test/", 0)
    simple_page(har, p, "http://bücher.test/", [
        ("http://xn--caf-dma.test/x.css", "stylesheet", 4000),
        ("https://例え.test/z.js", "script", 6000),
        ("http://bücher.test/katalog.png", "image", 8000),
        ("https://xn--bcher-kva.test/direkt.png", "image", 3000),
    ])
    return har, {"page": 1}


def case_idn_document_punycode(rng):
    har = Har("chrome", rng)
    p = har.page("https://xn--mnchen-3ya.test/", 0)
    simple_page(har, p, "https://xn--mnchen-3ya.test/", [
        ("https://xn--mnchen-3ya.test/a.css", "stylesheet", 4000),
        ("https://münchen.test/b.png", "image", 5000),
    ])
    return har, {"page": 1}


def case_redirects(rng):
    har = Har("webinspector", rng)
    p = har.page("http://r.test/", 0)
    har.entry("http://r.test/", 0, "document", status=301, size=178, page=p,
              location="http://www.r.test/", time_ms=40)
    har.entry("http://www.r.test/", 50, "document", status=302, size=0, page=p,
              location="/home", time_ms=40, content_length=False)
    doc = "http://www.r.test/home"
    har.entry(doc, 100, "document", size=15000, page=p)
    t = 250
    # 307 with a scheme-relative Location to another host.
    har.entry("http://www.r.test/img/a.png", t, "image", status=307, size=0, page=p,
              referer=doc, location="//cdn.r.test/a.png")
    har.entry("http://cdn.r.test/a.png", t + 40, "image", size=9000, page=p, referer=doc)
    # 302 without Location, empty body (a tracking pixel that answers with nothing).
    har.entry("http://www.r.test/track?id=1", t + 10, "image", status=302, size=0, page=p,
              referer=doc, content_length=False)
    # 302 with a body and no Location.
    har.entry("http://www.r.test/track?id=2", t + 15, "image", status=302, size=120, page=p,
              referer=doc)
    # 302 to a target that was never recorded.
    har.entry("http://www.r.test/go", t + 20, "other", status=302, size=0, page=p, referer=doc,
              location="http://elsewhere.test/x")
    # redirectURL filled in, no Location header (a recorder that kept only redirectURL).
    har.entry("http://www.r.test/pic.gif", t + 30, "image", status=302, size=0, page=p,
              referer=doc, redirect_url="http://cdn.r.test/pic2.gif")
    har.entry("http://cdn.r.test/pic2.gif", t + 80, "image", size=2500, page=p, referer=doc)
    # 303 after a POST, then the GET.
    har.entry("http://www.r.test/form", t + 40, "xhr", method="POST", status=303, size=0,
              page=p, referer=doc, location="/thanks", post="a=1&b=2")
    har.entry("http://www.r.test/thanks", t + 90, "xhr", size=400, page=p, referer=doc)
    # 301 with a body and Location, target recorded.
    har.entry("http://www.r.test/old.css", t + 50, "stylesheet", status=301, size=230,
              page=p, referer=doc, location="http://www.r.test/new.css")
    har.entry("http://www.r.test/new.css", t + 100, "stylesheet", size=6000, page=p,
              referer=doc)
    return har, {"page": 1}


def case_redirects_h2(rng):
    har = Har("chrome", rng)
    p = har.page("https://login.rb.test/", 0)
    # A redirect to the same URL (cookie check), then the document.
    har.entry("https://login.rb.test/", 0, "document", status=302, size=0, page=p,
              location="https://login.rb.test/",
              extra_response=[("set-cookie", "check=1; path=/")], time_ms=45)
    doc = "https://login.rb.test/"
    har.entry(doc, 60, "document", size=12000, page=p,
              extra_request=[("cookie", "check=1")])
    t = 200
    # 308 to another host, with a body.
    har.entry("https://login.rb.test/app.js", t, "script", status=308, size=140, page=p,
              referer=doc, location="https://static.rb.test/app.js", initiator=doc)
    har.entry("https://static.rb.test/app.js", t + 50, "script", size=20000, page=p,
              referer=doc, initiator=doc)
    # 307 with Location and no target recorded.
    har.entry("https://login.rb.test/ad", t + 10, "image", status=307, size=0, page=p,
              referer=doc, location="https://ads.elsewhere.test/x.gif")
    # 301 chain of two across hosts.
    har.entry("https://login.rb.test/logo", t + 20, "image", status=301, size=0, page=p,
              referer=doc, location="https://img.rb.test/logo")
    har.entry("https://img.rb.test/logo", t + 60, "image", status=302, size=0, page=p,
              referer=doc, location="/logo.png")
    har.entry("https://img.rb.test/logo.png", t + 100, "image", size=7000, page=p, referer=doc)
    return har, {"page": 1}


def case_leftover_beacon(rng):
    """The first page holds one request: an aborted beacon of the page before."""
    har = Har("webinspector", rng)
    p1 = har.page("http://prev.test/article", 0)
    har.entry("http://prev.test/beacon?unload=1", 0, "other", status=0, size=0, page=p1,
              referer="http://prev.test/article", time_ms=3)
    p2 = har.page("http://www.leftover.test/", 200)
    simple_page(har, p2, "http://www.leftover.test/", [
        ("http://www.leftover.test/a.css", "stylesheet", 5000),
        ("http://cdn.leftover.test/b.png", "image", 9000),
        ("http://cdn.leftover.test/c.png", "image", 4000),
    ], at=200)
    return har, {"page": 2, "skipped": [{"page": 1, "reason": "document"}]}


def case_leftover_xhr(rng):
    """The first page holds a ping (204) and an XHR: no document."""
    har = Har("chrome", rng)
    p1 = har.page("https://prev.test/", 0)
    har.entry("https://prev.test/ping", 0, "other", status=204, size=0, page=p1,
              resource_type="ping", time_ms=30)
    har.entry("https://prev.test/api/state", 5, "xhr", size=300, page=p1, time_ms=30)
    p2 = har.page("https://www.leftover2.test/", 400)
    simple_page(har, p2, "https://www.leftover2.test/", [
        ("https://www.leftover2.test/a.css", "stylesheet", 5000),
        ("https://www.leftover2.test/b.png", "image", 9000),
    ], at=400)
    return har, {"page": 2, "skipped": [{"page": 1, "reason": "document"}]}


def case_failed_documents(rng):
    """A 404 page, a page whose document got no answer (status 0), then a good one."""
    har = Har("firebug", rng)
    p1 = har.page("http://fail.test/missing", 0)
    har.entry("http://fail.test/missing", 0, "document", status=404, size=900, page=p1)
    har.entry("http://fail.test/404.css", 80, "stylesheet", size=800, page=p1,
              referer="http://fail.test/missing")
    p2 = har.page("http://fail.test/slow", 500)
    har.entry("http://fail.test/slow", 500, "document", status=0, size=0, page=p2, time_ms=900)
    p3 = har.page("http://fail.test/", 2000)
    simple_page(har, p3, "http://fail.test/", [
        ("http://fail.test/a.css", "stylesheet", 4000),
        ("http://fail.test/b.png", "image", 7000),
    ], at=2000)
    return har, {"page": 3, "skipped": [{"page": 1, "reason": "404"},
                                        {"page": 2, "reason": "status 0"}]}


def case_chrome_modern(rng):
    har = Har("chrome", rng)
    doc = "https://www.modern.test/"
    p = har.page(doc, 0)
    har.entry(doc, 0, "document", size=30000, page=p, content_length=False)
    t = 150
    # From the memory and the disk cache: no bytes on the wire, but a cold load needs them.
    har.entry("https://www.modern.test/app.css", t, "stylesheet", size=12000, page=p,
              referer=doc, initiator=doc, from_cache="memory", content_length=False)
    har.entry("https://static.modern.test/app.js", t + 5, "script", size=40000, page=p,
              referer=doc, initiator=doc, from_cache="disk")
    har.entry("https://static.modern.test/vendor.js", t + 8, "script", size=25000, page=p,
              referer=doc, initiator=doc, content_length=False)
    # data: and blob: URLs.
    har.entry("data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlE"
              "QVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==", t + 10, "image", size=68, page=p,
              version="data", initiator=doc)
    har.entry("blob:https://www.modern.test/7f3c1d2e-0b1a-4c55-9a1e-2f3b4c5d6e7f", t + 300,
              "image", size=5000, page=p, version="blob", initiator="https://static."
              "modern.test/app.js")
    # A websocket.
    ws = har.entry("wss://rt.modern.test/socket", t + 320, "other", status=101, size=0,
                   page=p, resource_type="websocket", initiator="https://static.modern.test/"
                   "app.js", extra_response=[("upgrade", "websocket"),
                                             ("connection", "Upgrade")])
    ws["_webSocketMessages"] = [{"type": "send", "time": 1.0, "opcode": 1, "data": "hi"}]
    # Blocked by the browser (status 0), a beacon (204), revalidations (304).
    har.entry("https://tracker.modern.test/t.js", t + 20, "script", status=0, size=0, page=p,
              referer=doc, initiator=doc)
    har.entry("https://www.modern.test/beacon", t + 400, "other", status=204, size=0, page=p,
              referer=doc, resource_type="ping")
    har.entry("https://img.modern.test/hero.jpg", t + 30, "image", size=60000, page=p,
              referer=doc, initiator=doc)
    har.entry("https://img.modern.test/hero.jpg", t + 500, "image", status=304, size=0, page=p,
              referer=doc, extra_request=[("if-none-match", '"abc"')])
    har.entry("https://img.modern.test/thumb.jpg", t + 40, "image", status=304, size=0, page=p,
              referer=doc, extra_request=[("if-none-match", '"def"')])
    har.entry("https://fonts.modern.test/inter.woff2", t + 200, "font", size=22000, page=p,
              referer="https://www.modern.test/app.css", initiator="https://www.modern.test/"
              "app.css", content_length=False)
    # HTTP/3 answer.
    har.entry("https://img.modern.test/h3.webp", t + 60, "image", size=8000, page=p,
              referer=doc, version="h3", initiator=doc)
    return har, {"page": 1}


def case_firefox_modern(rng):
    har = Har("firefox", rng)
    doc = "https://www.ffx.test/"
    p = har.page(doc, 0)
    har.entry(doc, 0, "document", size=22000, page=p)
    t = 150
    har.entry("https://www.ffx.test/site.css", t, "stylesheet", size=9000, page=p, referer=doc,
              from_cache="disk")
    har.entry("https://cdn.ffx.test/lib.js", t + 10, "script", size=30000, page=p, referer=doc)
    # A websocket as Firefox records it: an https entry answered 101.
    har.entry("https://rt.ffx.test/ws", t + 300, "other", method="GET", status=101, size=0,
              page=p, referer=doc, extra_request=[("Upgrade", "websocket"),
                                                  ("Sec-WebSocket-Version", "13")],
              extra_response=[("Upgrade", "websocket"), ("Connection", "Upgrade")])
    har.entry("data:image/gif;base64,R0lGODlhAQABAAAAACw=", t + 15, "image", size=14, page=p,
              version="")
    har.entry("https://www.ffx.test/pixel", t + 20, "image", status=0, size=0, page=p,
              referer=doc)
    har.entry("https://www.ffx.test/logo.svg", t + 25, "image", status=304, size=0, page=p,
              referer=doc)
    har.entry("https://www.ffx.test/collect", t + 400, "other", method="POST", status=204,
              size=0, page=p, referer=doc, post="{}")
    har.entry("https://img.ffx.test/a.jpg", t + 30, "image", size=15000, page=p, referer=doc)
    return har, {"page": 1}


def case_duplicates(rng):
    har = Har("webinspector", rng)
    doc = "http://dup.test/"
    p = har.page(doc, 0)
    har.entry(doc, 0, "document", size=10000, page=p)
    t = 150
    har.entry("http://dup.test/a.png", t, "image", size=1000, page=p, referer=doc)
    har.entry("http://dup.test/a.png", t + 300, "image", size=2000, page=p, referer=doc)
    har.entry("http://dup.test/api", t + 10, "xhr", size=500, page=p, referer=doc)
    har.entry("http://dup.test/api", t + 350, "xhr", status=404, size=200, page=p, referer=doc)
    har.entry("http://dup.test/form", t + 20, "xhr", size=300, page=p, referer=doc)
    har.entry("http://dup.test/form", t + 60, "xhr", method="POST", status=200, size=50,
              page=p, referer=doc, post="x=1")
    har.entry("http://dup.test/style.css", t + 30, "stylesheet", size=5000, page=p, referer=doc)
    har.entry("http://dup.test/style.css", t + 400, "stylesheet", status=304, size=0, page=p,
              referer=doc)
    har.entry("http://dup.test/gone", t + 40, "image", status=404, size=300, page=p, referer=doc)
    har.entry("http://dup.test/gone", t + 90, "image", size=4000, page=p, referer=doc)
    return har, {"page": 1}


def case_methods(rng):
    har = Har("chrome", rng)
    doc = "https://www.methods.test/"
    p = har.page(doc, 0)
    har.entry(doc, 0, "document", size=8000, page=p)
    t = 150
    har.entry("https://api.methods.test/v1/items", t, "xhr", method="OPTIONS", status=204,
              size=0, page=p, referer=doc)
    har.entry("https://api.methods.test/v1/items", t + 40, "xhr", method="POST", size=700,
              page=p, referer=doc, post='{"q": 1}')
    har.entry("https://api.methods.test/v1/items", t + 90, "xhr", size=900, page=p,
              referer=doc)
    har.entry("https://www.methods.test/health", t + 10, "other", method="HEAD", size=120,
              page=p, referer=doc)
    har.entry("https://www.methods.test/put", t + 20, "xhr", method="PUT", status=201, size=10,
              page=p, referer=doc)
    return har, {"page": 1}


def case_many_hosts(rng):
    """More hosts than a short certificate names: long names, one image each."""
    har = Har("chrome", rng)
    doc = "https://www.many-hosts.test/"
    p = har.page(doc, 0)
    har.entry(doc, 0, "document", size=20000, page=p)
    t = 120
    for i in range(100):
        host = ("shard-%03d.a-rather-long-content-delivery-network-name.static-assets."
                "many-hosts.test" % i)
        har.entry("https://%s/i/%d.png" % (host, i), t, "image", size=rng.randint(400, 1500),
                  page=p, referer=doc, initiator=doc)
        t += 3
    return har, {"page": 1}


def case_firebug_pages(rng):
    har = Har("firebug", rng)
    at = 0
    for k in range(3):
        doc = "http://fb.test/page%d" % k
        p = har.page(doc, at)
        simple_page(har, p, doc, [("http://fb.test/s%d.css" % k, "stylesheet", 3000),
                                  ("http://img.fb.test/%d.png" % k, "image", 6000)], at=at)
        at += 5000
    return har, {"page": 1}


def case_no_pagerefs(rng):
    """log.pages present, but no entry names a page: the lab finds the page itself."""
    har = Har("webinspector", rng)
    har.page("http://noref.test/", 0)
    simple_page(har, None, "http://noref.test/", [
        ("http://noref.test/a.css", "stylesheet", 3000),
        ("http://static.noref.test/b.png", "image", 5000),
    ])
    return har, {"page": 1}


def case_aborted_navigation(rng):
    """The document's first request got no answer; the browser asked again."""
    har = Har("webinspector", rng)
    doc = "http://retry.test/"
    p = har.page(doc, 0)
    har.entry(doc, 0, "document", status=0, size=0, page=p, time_ms=300)
    har.entry(doc, 320, "document", size=9000, page=p)
    har.entry("http://retry.test/a.png", 450, "image", size=5000, page=p, referer=doc)
    return har, {"page": 1}


def case_port_redirect(rng):
    har = Har("firefox", rng)
    p = har.page("http://p.test/", 0)
    har.entry("http://p.test/", 0, "document", status=302, size=0, page=p,
              location="http://p.test:8080/", redirect_url="http://p.test:8080/", time_ms=40)
    simple_page(har, p, "http://p.test:8080/", [
        ("http://p.test:8080/a.css", "stylesheet", 3000),
        ("http://p.test/b.png", "image", 5000),
    ], at=60)
    return har, {"page": 1}


def case_document_304(rng):
    """The document was revalidated (304); the previous page holds its copy."""
    har = Har("webinspector", rng)
    doc = "http://reval.test/"
    p1 = har.page(doc, 0)
    simple_page(har, p1, doc, [("http://reval.test/a.png", "image", 4000)])
    p2 = har.page(doc, 4000)
    har.entry(doc, 4000, "document", status=304, size=0, page=p2)
    har.entry("http://reval.test/b.png", 4150, "image", size=6000, page=p2, referer=doc)
    return har, {"page": 1}


CASES = [
    ("ipv4", case_ipv4), ("ipv4-document", case_ipv4_document), ("ipv6", case_ipv6),
    ("ipv6-document", case_ipv6_document), ("ports", case_ports),
    ("scheme-mix", case_scheme_mix), ("upper-case", case_upper_case),
    ("trailing-dot", case_trailing_dot), ("upper-dot-document", case_both_document),
    ("idn", case_idn), ("idn-document", case_idn_document_punycode),
    ("redirects", case_redirects), ("redirects-h2", case_redirects_h2),
    ("leftover-beacon", case_leftover_beacon), ("leftover-xhr", case_leftover_xhr),
    ("failed-documents", case_failed_documents), ("chrome-modern", case_chrome_modern),
    ("firefox-modern", case_firefox_modern), ("duplicates", case_duplicates),
    ("methods", case_methods), ("many-hosts", case_many_hosts),
    ("firebug-pages", case_firebug_pages), ("no-pagerefs", case_no_pagerefs),
    ("aborted-navigation", case_aborted_navigation), ("port-redirect", case_port_redirect),
    ("document-304", case_document_304),
]


def main(argv):
    if len(argv) < 2 or argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if len(argv) >= 2 else 2
    out = argv[1]
    seed = 2024
    if len(argv) == 4 and argv[2] == "--seed":
        seed = int(argv[3])
    elif len(argv) != 2:
        print("usage: make_corpus.py OUTDIR [--seed N]", file=sys.stderr)
        return 2
    os.makedirs(out, exist_ok=True)
    expect = {}
    for i, (name, make) in enumerate(CASES):
        har, expectation = make(random.Random("%d-%s" % (seed, name)))
        file = "stress-%02d-%s.har" % (i + 1, name)
        har.write(os.path.join(out, file))
        expectation["flavour"] = har.flavour
        expect[file] = expectation
    with open(os.path.join(out, "expect.txt"), "w") as f:
        json.dump(expect, f, indent=1, sort_keys=True)
        f.write("\n")
    print("make_corpus: %d HAR files in %s" % (len(CASES), out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
