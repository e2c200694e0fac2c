#!/usr/bin/env python3
"""check.py PLAN CHECK... — checks for tests/load/run.sh over the files of one load in the
current directory: result.jsonl (the loader's result line), har.json (its HAR) and
log.jsonl (tests/load/server.js's log). Prints what failed and exits 1, else exits 0.

Checks:
  valid / invalid=TEXT     the result is valid / invalid with TEXT in its reason
  discovery                no request reached the server before its parent's discovering
                           bytes (or, for -1 and redirects, its gate's last byte) were sent,
                           nor before start_delay after that
  once                     every resource requested at most once; all but pushed ones once
  conns-per-port<=N / ==N  connections the server accepted per listening port
  conns-on-port0>=N        connections to the first port (parallel HTTP/1.1)
  connections=N            the result's connection count
  before:A:B               the server saw resource A's request before B's
  protocol=P mode=M dispatch=D tls   result fields
  pushed=ID / hinted=ID    the resource was pushed (never requested) / hinted
  fields                   every field of speedy-lab-result/1 is present and typed
  har                      har.json is HAR 1.2 with one entry per requested resource
  headers-sent             the recorded User-Agent reached the server
  hosts-named              requests carried the recorded host names (single-domain)
  priorities               SPDY: the server saw urgencies by type (document 0 ... image 4)
  dns=MS                   --dns-rtt MS: settings.dns_rtt_ms is MS; one lookup per host name
                           (single-domain: the origin's only), each logged once by -v in
                           err; the first request under each name started at least MS after
                           the name's first resource was requestable; in the HAR that request
                           alone has timings.dns (about MS), every other entry -1
  conns-spread<=N          on every port with two or more connections, the second was
                           accepted at most N ms after the first (no second lookup)
  plt>=N                   the result's page load time is at least N ms
  plt-delta=FILE:MIN:MAX   the page load time minus the lowest in FILE (result lines of the
                           same page without the option under test) is within [MIN, MAX] ms
"""
import json
import re
import sys

plan = json.load(open(sys.argv[1]))
res = plan["resources"]
errors = []


def err(msg):
    errors.append(msg)


def lines(name):
    try:
        return [json.loads(l) for l in open(name) if l.strip()]
    except FileNotFoundError:
        return []


results = lines("result.jsonl")
result = results[-1] if results else None
log = lines("log.jsonl")
reqs = [e for e in log if e["ev"] == "req"]
ends = {e["id"]: e["t"] for e in log if e["ev"] == "end"}
chunks = [e for e in log if e["ev"] == "chunk"]
gate = {r["id"]: r["parent"] for r in res}
for r in res:
    if r["redirect_to"] >= 0:
        gate[r["redirect_to"]] = -2 - r["id"]  # redirect gate, encoded


def first_req(rid):
    for e in reqs:
        if e["id"] == rid:
            return e
    return None


def check(c):
    if result is None:
        return err("no result line")
    if c == "valid":
        if not result["valid"]:
            err("invalid: " + result["invalid_reason"])
    elif c.startswith("invalid="):
        if result["valid"] or c[8:] not in result["invalid_reason"]:
            err("want invalid with %r, got valid=%s %r" % (c[8:], result["valid"], result["invalid_reason"]))
    elif c == "discovery":
        entries = {r["id"]: r for r in result["resources"]}
        for r in res:
            e = first_req(r["id"])
            if e is None or entries[r["id"]]["pushed"] or entries[r["id"]]["hinted"]:
                continue
            g = gate[r["id"]]
            if g <= -2:  # redirect target: after the redirect's last byte
                g = -2 - g
                need = ends.get(g)
            elif g < 0:
                continue
            elif r["discover_offset"] >= 0 and g == 0:
                need = next((ch["t"] for ch in chunks if ch["bytes"] >= r["discover_offset"]), None)
            else:
                need = ends.get(g)
            if need is None:
                err("#%d requested but its gate never sent the discovering bytes" % r["id"])
            # the server logs a body's end just after writing it: when node is descheduled
            # in between (a busy machine), the log is late by some ms, and a start_delay
            # counted by the loader from the bytes' arrival looks short by as much
            elif e["t"] < need + r["start_delay"] - (5 if r["start_delay"] > 0 else 0):
                err("#%d %s requested at %.1f ms, before its discovery at %.1f (+%.0f) ms" %
                    (r["id"], r["path"], e["t"], need, r["start_delay"]))
    elif c == "once":
        pushed = {x["id"] for x in result["resources"] if x["pushed"]}
        for r in res:
            n = sum(1 for e in reqs if e["id"] == r["id"])
            want = 0 if r["id"] in pushed else 1
            if n != want:
                err("#%d %s requested %d times, want %d" % (r["id"], r["path"], n, want))
        if any(e["id"] < 0 for e in reqs):
            err("requests for unknown resources: %s" % [e["path"] for e in reqs if e["id"] < 0])
    elif c.startswith("conns-per-port") or c.startswith("conns-on-port0"):
        per = {}
        for e in log:
            if e["ev"] == "conn":
                per[e["port"]] = per.get(e["port"], 0) + 1
        if c.startswith("conns-on-port0"):
            first = min(per, key=lambda p: min(e["t"] for e in log if e["ev"] == "conn" and e["port"] == p))
            n = int(c.split(">=")[1])
            if per.get(first, 0) < n:
                err("%d connections to the first port, want >= %d" % (per.get(first, 0), n))
        elif "<=" in c:
            n = int(c.split("<=")[1])
            if not per or max(per.values()) > n:
                err("connections per port %s, want <= %d" % (per, n))
        else:
            n = int(c.split("==")[1])
            if not per or any(v != n for v in per.values()):
                err("connections per port %s, want %d each" % (per, n))
    elif c.startswith("connections="):
        if result["connections"] != int(c[12:]):
            err("result connections %d, want %s" % (result["connections"], c[12:]))
    elif c.startswith("before:"):
        a, b = (int(x) for x in c.split(":")[1:])
        ea, eb = first_req(a), first_req(b)
        if not ea or not eb or reqs.index(ea) > reqs.index(eb):
            err("want #%d requested before #%d; order %s" % (a, b, [e["id"] for e in reqs]))
    elif "=" in c and c.split("=")[0] in ("protocol", "mode", "dispatch"):
        k, v = c.split("=", 1)
        if result[k] != v:
            err("%s is %r, want %r" % (k, result[k], v))
    elif c == "tls":
        if result["tls"] is not True:
            err("tls is not true")
    elif c.startswith("pushed=") or c.startswith("hinted="):
        k, rid = c.split("=")
        entry = result["resources"][int(rid)]
        if entry[k] is not True:
            err("#%s: %s is %r" % (rid, k, entry[k]))
        if k == "pushed" and first_req(int(rid)):
            err("#%s was pushed and requested" % rid)
        if result[k] < 1:
            err("result %s count is %r" % (k, result[k]))
    elif c == "fields":
        types = {"format": str, "plan": str, "protocol": str, "mode": str, "dispatch": str,
                 "tls": bool, "push": bool, "hint": bool, "repetition": int, "seed": int,
                 "valid": bool, "invalid_reason": str, "plt_ms": float, "plt_cutoff_ms": float,
                 "ttfb_ms": float, "bytes_up": int, "bytes_down": int, "connections": int,
                 "request_header_bytes": int, "response_header_bytes": int,
                 "resources": list, "settings": dict}
        for k, t in types.items():
            if not isinstance(result.get(k), t):
                err("field %s: %r is not %s" % (k, result.get(k), t.__name__))
        for k in ("link", "tcp_retransmits", "tcp_timeouts", "lower_bound_ms"):
            if k not in result:
                err("field %s missing" % k)
        if result["format"] != "speedy-lab-result/1":
            err("format %r" % result["format"])
        if not 0 < result["ttfb_ms"] <= result["plt_cutoff_ms"] <= result["plt_ms"]:
            err("want 0 < ttfb <= plt_cutoff <= plt: %s %s %s" % (result["ttfb_ms"], result["plt_cutoff_ms"], result["plt_ms"]))
        # the beacon (after_cutoff) ends after the document: plt > plt_cutoff is possible,
        # and plt is the latest end of all
        ends_ms = [x["end_ms"] for x in result["resources"]]
        if abs(max(ends_ms) - result["plt_ms"]) > 0.11:
            err("plt_ms %s is not the last end %s" % (result["plt_ms"], max(ends_ms)))
        total = sum(r["body_size"] for r in res)
        if result["bytes_down"] < total:
            err("bytes_down %d below the bodies' %d bytes" % (result["bytes_down"], total))
        if result["request_header_bytes"] <= 0 or result["response_header_bytes"] <= 0:
            err("header byte counts missing")
        for x in result["resources"]:
            if not (x["start_ms"] <= x["ttfb_ms"] <= x["end_ms"]):
                err("#%d: times out of order %s" % (x["id"], x))
    elif c == "har":
        har = json.load(open("har.json"))
        log_ = har["log"]
        if log_["version"] != "1.2" or len(log_["pages"]) != 1:
            err("HAR version/pages wrong")
        if len(log_["entries"]) != len(res):
            err("HAR has %d entries, want %d" % (len(log_["entries"]), len(res)))
        for e in log_["entries"]:
            for k in ("startedDateTime", "time", "request", "response", "timings", "cache"):
                if k not in e:
                    err("HAR entry lacks %s" % k)
            if not e["request"]["url"].startswith("http"):
                err("HAR url %r" % e["request"]["url"])
    elif c == "headers-sent":
        want = res[0]["request_headers"][0][1]
        if not reqs or reqs[0].get("ua") != want:
            err("user-agent at the server %r, want %r" % (reqs[0].get("ua") if reqs else None, want))
    elif c == "hosts-named":
        for e in reqs:
            r = res[e["id"]] if e["id"] >= 0 else None
            if not r or e["host"].split(":")[0] != plan["hosts"][r["host"]]["name"]:
                err("request %s with host %r" % (e["path"], e["host"]))
    elif c == "priorities":
        want = {"document": 0, "css": 1, "script": 1, "font": 2, "image": 4, "other": 5}
        for e in reqs:
            # spdy-transport reports SPDY/3's 3-bit priority as a fraction of 7? no: raw value
            p = e.get("priority")
            if p is None:
                continue
            t = res[e["id"]]["type"]
            if p != want[t] and abs(p - want[t] / 7.0) > 1e-6:
                err("#%d (%s) priority %r, want %d" % (e["id"], t, p, want[t]))
    elif c.startswith("dns="):
        check_dns(float(c[4:]))
    elif c.startswith("conns-spread<="):
        limit = float(c.split("<=")[1])
        per = {}
        for e in log:
            if e["ev"] == "conn":
                per.setdefault(e["port"], []).append(e["t"])
        for port, times in per.items():
            times.sort()
            if len(times) >= 2 and times[1] - times[0] > limit:
                err("port %d: second connection %.1f ms after the first, want <= %.0f" %
                    (port, times[1] - times[0], limit))
    elif c.startswith("plt>="):
        if result["plt_ms"] < float(c[5:]):
            err("plt_ms %.1f, want >= %s" % (result["plt_ms"], c[5:]))
    elif c.startswith("plt-delta="):
        base_file, lo, hi = c[10:].rsplit(":", 2)
        # the lowest of a few: a busy machine only ever adds time to a load
        base = min(json.loads(l)["plt_ms"] for l in open(base_file) if l.strip())
        delta = result["plt_ms"] - base
        if not float(lo) <= delta <= float(hi):
            err("plt_ms %.1f - %.1f (lowest in %s) = %.1f, want within [%s, %s]" %
                (result["plt_ms"], base, base_file, delta, lo, hi))
    else:
        err("unknown check " + c)


def check_dns(ms):
    settings = result["settings"]
    if settings.get("dns_rtt_ms") != ms:
        err("settings.dns_rtt_ms %r, want %g" % (settings.get("dns_rtt_ms"), ms))
    entries = {x["id"]: x for x in result["resources"]}
    single = result["mode"] == "single-domain"
    origin = plan["hosts"][res[0]["host"]]["name"]
    # the name each resource's connection is looked up under
    name_of = {r["id"]: origin if single else plan["hosts"][r["host"]]["name"] for r in res}
    names = sorted({name_of[r["id"]] for r in res if entries[r["id"]]["start_ms"] is not None})
    if ms == 0:  # no lookups at all
        names = []
    # -v: one lookup per name
    logged = re.findall(r"lookup of (\S+) \((\d+) ms\)", open("err").read())
    if sorted(n for n, _ in logged) != names or any(float(v) != ms for _, v in logged):
        err("lookups logged %s, want one of %g ms for each of %s" % (logged, ms, names))
    if not names:
        har = json.load(open("har.json"))
        if any(e["timings"]["dns"] != -1 for e in har["log"]["entries"]):
            err("HAR timings.dns set without --dns-rtt")
        return
    # the wait, from the loader's own times: requestable -> first request under the name
    for name in names:
        group = [r for r in res if name_of[r["id"]] == name]
        ready = min(entries[r["id"]]["discovered_ms"] + r["start_delay"] for r in group
                    if entries[r["id"]]["discovered_ms"] is not None)
        first = min(entries[r["id"]]["start_ms"] for r in group
                    if entries[r["id"]]["start_ms"] is not None and not entries[r["id"]]["pushed"])
        if first - ready < ms - 0.2:  # times are rounded to 0.1 ms
            err("%s: first request at %.1f ms, %.1f ms after its first resource was "
                "requestable, want >= %g (the lookup)" % (name, first, first - ready, ms))
    # the HAR: timings.dns on the first request under each name only
    har = json.load(open("har.json"))
    with_dns = {}
    for e in har["log"]["entries"]:
        d = e["timings"]["dns"]
        if d == -1:
            continue
        name = name_of[e["_id"]]
        if name in with_dns:
            err("%s: timings.dns on #%d and #%d, want the first request only" %
                (name, with_dns[name][0], e["_id"]))
        with_dns[name] = (e["_id"], d)
        starts = [entries[r["id"]]["start_ms"] for r in res if name_of[r["id"]] == name and
                  entries[r["id"]]["start_ms"] is not None and not entries[r["id"]]["pushed"]]
        if entries[e["_id"]]["start_ms"] != min(starts):
            err("%s: timings.dns on #%d, which is not the first request" % (name, e["_id"]))
        if not ms - 10 <= d <= ms + 100:
            err("%s: timings.dns %.1f, want about %g" % (name, d, ms))
    if sorted(with_dns) != names:
        err("HAR timings.dns for %s, want one entry for each of %s" % (sorted(with_dns), names))


for c in sys.argv[2:]:
    check(c)
for e in errors:
    print("check.py:", e)
sys.exit(1 if errors else 0)
