#!/usr/bin/python3
"""record_site.py SPEEDYD OUTDIR [SITE] — HARs of a real browser: headless Chromium loads
the example site (examples/site, served by `speedyd --docroot` on loopback) and the
DevTools protocol's network events are written as HAR 1.2 in Chrome's layout (pages,
_initiator, _resourceType, _fromCache, serverIPAddress, connection), one file per load:

  chrome-site-ip.har     a cold load of http://127.0.0.1:PORT/ (an IP literal, a port)
  chrome-site-warm.har   the same page again: what the browser's cache answered
  chrome-site-named.har  http://WWW.Speedy-Site.TEST:PORT/ (upper case; a resolver rule
                         maps the name to 127.0.0.1)

Everything runs in a network namespace of its own with only loopback up (unshare -n), so
neither the browser nor the server can reach anything else; that needs root. Exits 77
(skipped) without root, unshare, ip or chromium. When OUTDIR/expect.txt exists (the
stress corpus's), the files are added to it with their first page, 1.
"""
import json
import os
import select
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone

SKIP = 77


def skip(why):
    print("SKIP: " + why)
    sys.exit(SKIP)


class Browser:
    """Chromium driven over --remote-debugging-pipe (fd 3 in, fd 4 out, NUL-separated)."""

    def __init__(self, profile, resolver_rules):
        to_browser_r, self.to_browser = os.pipe()
        self.from_browser, from_browser_w = os.pipe()

        def fds():
            a, b = os.dup(to_browser_r), os.dup(from_browser_w)
            os.dup2(a, 3)
            os.dup2(b, 4)
            os.set_inheritable(3, True)
            os.set_inheritable(4, True)

        self.proc = subprocess.Popen(
            [shutil.which("chromium"), "--headless=new", "--no-sandbox", "--disable-gpu",
             "--remote-debugging-pipe", "--user-data-dir=" + profile, "--no-first-run",
             "--no-default-browser-check", "--disable-background-networking",
             "--disable-component-update", "--disable-sync", "--disable-default-apps",
             "--disable-extensions", "--host-resolver-rules=" + resolver_rules],
            close_fds=False, preexec_fn=fds, stdout=subprocess.DEVNULL,
            stderr=open(os.path.join(profile, "chromium.log"), "w"))
        os.close(to_browser_r)
        os.close(from_browser_w)
        self.buffer = b""
        self.next_id = 1
        self.events = []
        self.session = None

    def send(self, method, params=None, session=True):
        message = {"id": self.next_id, "method": method, "params": params or {}}
        if session and self.session:
            message["sessionId"] = self.session
        self.next_id += 1
        os.write(self.to_browser, json.dumps(message).encode() + b"\0")
        while True:
            reply = self.receive(30)
            if reply is None:
                raise RuntimeError("no answer to " + method)
            if reply.get("id") == message["id"]:
                if "error" in reply:
                    raise RuntimeError(method + ": " + json.dumps(reply["error"]))
                return reply.get("result", {})

    def receive(self, timeout):
        """The next message; events are kept in self.events. None when time is up."""
        end = time.time() + timeout
        while b"\0" not in self.buffer:
            ready, _, _ = select.select([self.from_browser], [], [], max(0, end - time.time()))
            if not ready:
                return None
            chunk = os.read(self.from_browser, 1 << 20)
            if not chunk:
                raise RuntimeError("chromium closed the pipe")
            self.buffer += chunk
        text, self.buffer = self.buffer.split(b"\0", 1)
        message = json.loads(text)
        if "method" in message:
            self.events.append((time.time(), message))
        return message

    def close(self):
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def load(browser, url, idle=1.0, limit=20):
    """Navigates and waits for the load event and then `idle` seconds without a request in
    flight. Returns the network events of this load."""
    first = len(browser.events)
    browser.send("Page.navigate", {"url": url})
    loaded, pending, quiet_since, end = False, set(), None, time.time() + limit
    while time.time() < end:
        browser.receive(0.1)
        pending.clear()
        for _, event in browser.events[first:]:
            method, params = event["method"], event.get("params", {})
            if method == "Page.loadEventFired":
                loaded = True
            elif method == "Network.requestWillBeSent":
                pending.add(params["requestId"])
            elif method in ("Network.loadingFinished", "Network.loadingFailed"):
                pending.discard(params["requestId"])
        if loaded and not pending:
            quiet_since = quiet_since or time.time()
            if time.time() - quiet_since >= idle:
                break
        else:
            quiet_since = None
    return [event for _, event in browser.events[first:]]


def iso(wall):
    t = datetime.fromtimestamp(wall, tz=timezone.utc)
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + "%03dZ" % (t.microsecond // 1000)


def headers_list(headers):
    out = []
    for name, value in (headers or {}).items():
        for line in str(value).split("\n"):  # Chrome joins repeated fields with newlines
            out.append({"name": name, "value": line})
    return out


def har_of(events, page_id, title):
    """HAR 1.2 entries of one load, as Chrome's exporter lays them out."""
    requests, order = {}, []
    for event in events:
        method, p = event["method"], event.get("params", {})
        rid = p.get("requestId")
        if method == "Network.requestWillBeSent":
            if "redirectResponse" in p and rid in requests:
                # The redirect's own entry ends here; the request goes on under a new entry.
                old = requests.pop(rid)
                old["response"] = p["redirectResponse"]
                old["end"] = p["timestamp"]
                old["encoded"] = old.get("encoded", 0)
                order.append(old)
            requests[rid] = {"sent": p, "start": p["timestamp"], "wall": p["wallTime"]}
        elif rid in requests:
            r = requests[rid]
            if method == "Network.requestWillBeSentExtraInfo":
                r["extra_request"] = p.get("headers")
            elif method == "Network.responseReceived":
                r["response"] = p["response"]
                r["type"] = p.get("type", "Other")
            elif method == "Network.requestServedFromCache":
                r["from_cache"] = "memory"
            elif method == "Network.dataReceived":
                r["data"] = r.get("data", 0) + p.get("dataLength", 0)
            elif method == "Network.loadingFinished":
                r["end"] = p["timestamp"]
                r["encoded"] = p.get("encodedDataLength", 0)
                order.append(requests.pop(rid))
            elif method == "Network.loadingFailed":
                r["end"] = p["timestamp"]
                r["failed"] = p.get("errorText", "failed")
                order.append(requests.pop(rid))
    entries = []
    for r in order:
        sent, response = r["sent"], r.get("response", {})
        request = sent["request"]
        if not request["url"].startswith("http"):
            continue
        status = 0 if r.get("failed") else response.get("status", 0)
        from_cache = r.get("from_cache") or ("disk" if response.get("fromDiskCache") else None)
        if from_cache is None and response.get("fromPrefetchCache"):
            from_cache = "memory"
        timing = response.get("timing") or {}
        total = max(0.0, (r.get("end", r["start"]) - r["start"]) * 1000)
        wait = max(0.0, timing.get("receiveHeadersEnd", 0) - timing.get("sendEnd", 0))
        encoded = r.get("encoded", 0)
        head = response.get("encodedDataLength", 0) if "headersText" in response else 0
        initiator = sent.get("initiator", {})
        entry = {
            "pageref": page_id,
            "startedDateTime": iso(r["wall"]),
            "time": round(total, 3),
            "request": {"method": request["method"], "url": request["url"],
                        "httpVersion": response.get("protocol", "http/1.1"),
                        "headers": headers_list(r.get("extra_request") or request.get("headers")),
                        "queryString": [], "cookies": [], "headersSize": -1,
                        "bodySize": len(request.get("postData", ""))},
            "response": {"status": status, "statusText": response.get("statusText", ""),
                         "httpVersion": response.get("protocol", ""),
                         "headers": headers_list(response.get("headers")), "cookies": [],
                         "content": {"size": r.get("data", 0),
                                     "mimeType": response.get("mimeType", "")},
                         "redirectURL": "", "headersSize": -1,
                         "bodySize": 0 if from_cache else max(0, encoded - head),
                         "_transferSize": 0 if from_cache else encoded},
            "cache": {},
            "timings": {"blocked": max(0.0, timing.get("dnsStart", 0)), "dns": -1,
                        "connect": -1, "send": 0, "wait": round(wait, 3),
                        "receive": round(max(0.0, total - wait), 3), "ssl": -1},
            "serverIPAddress": response.get("remoteIPAddress", ""),
            "connection": str(response.get("connectionId", "")),
            "_initiator": {"type": initiator.get("type", "other"),
                           **({"url": initiator["url"]} if initiator.get("url") else {})},
            "_resourceType": r.get("type", sent.get("type", "Other")).lower(),
        }
        if from_cache:
            entry["_fromCache"] = from_cache
        if r.get("failed"):
            entry["_error"] = r["failed"]
        entries.append(entry)
    entries.sort(key=lambda e: e["startedDateTime"])
    started = entries[0]["startedDateTime"] if entries else iso(time.time())
    return {"log": {"version": "1.2",
                    "creator": {"name": "WebInspector", "version": "537.36"},
                    "pages": [{"startedDateTime": started, "id": page_id, "title": title,
                               "pageTimings": {"onContentLoad": -1, "onLoad": -1}}],
                    "entries": entries}}


def record(speedyd, out, site):
    work = tempfile.mkdtemp(prefix="speedy-record-")
    server = None
    browser = None
    try:
        port_file = os.path.join(work, "port")
        server = subprocess.Popen([speedyd, "--listen", "127.0.0.1:0", "--docroot", site,
                                   "--port-file", port_file], stderr=open(
                                       os.path.join(work, "speedyd.log"), "w"))
        for _ in range(100):
            if os.path.exists(port_file) and os.path.getsize(port_file) > 0:
                break
            time.sleep(0.05)
        port = open(port_file).read().split()[0].rsplit(":", 1)[-1]
        profile = os.path.join(work, "profile")
        os.mkdir(profile)
        browser = Browser(profile, "MAP *.test 127.0.0.1")
        target = browser.send("Target.createTarget", {"url": "about:blank"}, session=False)
        browser.session = browser.send("Target.attachToTarget",
                                       {"targetId": target["targetId"], "flatten": True},
                                       session=False)["sessionId"]
        browser.send("Network.enable")
        browser.send("Page.enable")
        loads = [("chrome-site-ip.har", "http://127.0.0.1:%s/" % port),
                 ("chrome-site-warm.har", "http://127.0.0.1:%s/" % port),
                 ("chrome-site-named.har", "http://WWW.Speedy-Site.TEST:%s/" % port)]
        written = []
        for name, url in loads:
            events = load(browser, url)
            har = har_of(events, "page_1", url)
            if not har["log"]["entries"]:
                raise RuntimeError("nothing recorded for " + url)
            with open(os.path.join(out, name), "w") as f:
                json.dump(har, f, indent=1)
                f.write("\n")
            written.append((name, len(har["log"]["entries"]),
                            sum(1 for e in har["log"]["entries"] if "_fromCache" in e)))
        return written
    finally:
        if browser:
            browser.close()
        if server:
            server.terminate()
            server.wait()
        shutil.rmtree(work, ignore_errors=True)


def main(argv):
    if len(argv) not in (3, 4):
        print("usage: record_site.py SPEEDYD OUTDIR [SITE]", file=sys.stderr)
        return 2
    speedyd, out = os.path.abspath(argv[1]), os.path.abspath(argv[2])
    here = os.path.dirname(os.path.abspath(__file__))
    site = os.path.abspath(argv[3]) if len(argv) == 4 else os.path.join(here, "../../../examples/site")
    if os.environ.get("SPEEDY_RECORD_ISOLATED") != "1":
        if os.geteuid() != 0:
            skip("needs root for a network namespace of its own")
        for tool in ("unshare", "ip", "chromium"):
            if shutil.which(tool) is None:
                skip("no " + tool)
        env = dict(os.environ, SPEEDY_RECORD_ISOLATED="1")
        return subprocess.call(["unshare", "--net", "sh", "-c", 'ip link set lo up && exec "$@"',
                                "sh", sys.executable] + argv, env=env)
    os.makedirs(out, exist_ok=True)
    written = record(speedyd, out, site)
    expect_file = os.path.join(out, "expect.txt")
    if os.path.exists(expect_file):
        expect = json.load(open(expect_file))
        for name, _, _ in written:
            expect[name] = {"page": 1, "flavour": "chromium"}
        with open(expect_file, "w") as f:
            json.dump(expect, f, indent=1, sort_keys=True)
            f.write("\n")
    for name, n, cached in written:
        print("record_site: %s: %d entries, %d from the cache" % (name, n, cached))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
